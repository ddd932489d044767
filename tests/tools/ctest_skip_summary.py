#!/usr/bin/env python3
"""Prints how many tests ctest skipped, and why, from its JUnit file (ctest --output-junit FILE):
`make test` runs it after ctest, so CI's log says "N tests skipped" plainly instead of leaving
them among the passes. A skip is a test that ended with its SKIP_RETURN_CODE (the Python e2e
files when any of their tests skipped, tests/e2e/unittest_main.py; shell tests without root or a
browser) or matched its SKIP_REGULAR_EXPRESSION (a GoogleTest case calling GTEST_SKIP). Tests
ctest could not start are failures, not skips, and are not counted here.

    ctest_skip_summary.py JUNIT_XML"""
import re
import sys
import xml.etree.ElementTree as ElementTree

SKIP_MESSAGES = ("SKIP_RETURN_CODE", "SKIP_REGULAR_EXPRESSION")
REASON_LINE = re.compile(r"^\s*(skip|skipped)\s*:\s*(.*)$", re.IGNORECASE)
GTEST_SKIPPED = re.compile(r": Skipped$")
MAX_REASONS = 6


def skip_reasons(output: str) -> list:
    """The lines of a skipped test's output that say why: `SKIP: ...`/`skipped: ...` lines, the
    message GoogleTest prints under `file:line: Skipped`, else the last line printed."""
    lines = [line.rstrip() for line in output.splitlines()]
    reasons = [m.group(2) for m in map(REASON_LINE.match, lines) if m and m.group(2)]
    for i, line in enumerate(lines):
        if GTEST_SKIPPED.search(line):
            message = []
            for following in lines[i + 1:]:
                if following.startswith("[  SKIPPED ]"):
                    break
                if following.strip():
                    message.append(following.strip())
            reasons.append(" ".join(message) or "GTEST_SKIP() without a message")
    if not reasons:
        printed = [line for line in lines if line.strip()]
        reasons = [printed[-1].strip() if printed else "no output"]
    return reasons


def skipped_tests(junit_text: str) -> list:
    """(test name, reasons) of every test the JUnit document records as skipped, in its order."""
    skipped = []
    for case in ElementTree.fromstring(junit_text).iter("testcase"):
        marker = case.find("skipped")
        if marker is None or not marker.get("message", "").startswith(SKIP_MESSAGES):
            continue
        skipped.append((case.get("name"), skip_reasons(case.findtext("system-out") or "")))
    return skipped


def summary(skipped: list) -> str:
    lines = [f"{len(skipped)} test{'' if len(skipped) == 1 else 's'} skipped"
             + (" (not run, so not passed):" if skipped else "")]
    for name, reasons in skipped:
        shown = reasons[:MAX_REASONS] + ([f"... {len(reasons) - MAX_REASONS} more"] if len(reasons) > MAX_REASONS else [])
        lines.append(f"  {name}: {shown[0]}")
        lines.extend(f"  {' ' * len(name)}  {reason}" for reason in shown[1:])
    return "\n".join(lines)


def main(argv: list) -> int:
    if len(argv) != 2:
        print("usage: ctest_skip_summary.py JUNIT_XML", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            skipped = skipped_tests(f.read())
    except (OSError, ElementTree.ParseError) as e:
        print(f"ctest_skip_summary.py: {argv[1]}: {e}", file=sys.stderr)
        return 2
    print(summary(skipped))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
