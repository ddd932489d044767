"""The entry point of every Python end-to-end test file: unittest.main, with an exit status ctest
can tell apart. 0 only when every test ran and passed; 1 when any failed or errored, or none ran;
SKIP (77, the SKIP_RETURN_CODE tests/CMakeLists.txt gives these tests) when none failed but any
was skipped, so ctest shows the file as skipped rather than passed, and `make test` counts it.
One skipped test marks the whole file: a pass means everything in it ran. Each skip is printed
as a line `SKIP: <test>: <reason>`, which `make test`'s summary repeats."""
import sys
import unittest

SKIP = 77


def exit_status(result: unittest.TestResult) -> int:
    if not result.wasSuccessful() or (result.testsRun == 0 and not result.skipped):
        return 1
    return SKIP if result.skipped else 0


def main(verbosity: int = 2) -> None:
    result = unittest.main(module="__main__", argv=sys.argv[:1], verbosity=verbosity, exit=False).result
    for test, reason in result.skipped:
        print(f"SKIP: {test.id().removeprefix('__main__.')}: {reason}", flush=True)
    status = exit_status(result)
    if status == SKIP:
        print(f"{len(result.skipped)} of {result.testsRun} tests skipped: exit {SKIP}, ctest reports the file skipped", flush=True)
    sys.exit(status)
