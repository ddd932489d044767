"""Side-by-side rounds for peer comparisons (fidelity, serving overhead, Triton beside serve).

Every round runs each side once, in an order rotated by one place per round, so each side leads as
often as the others and machine noise, warm caches and frequency changes hit them alike (a fixed
order would hand one side the same position every round). Each round is printed as it ends, and
ratios are summarised as their median and range over the rounds: one round proves nothing on a
shared machine.
"""
import statistics
import sys

DEFAULT_ROUNDS = 5


def rotated(sides, round_index):
    """The order of `sides` in round `round_index` (0-based): rotated left by round_index places."""
    shift = round_index % len(sides)
    return list(sides[shift:]) + list(sides[:shift])


def run_rounds(sides, rounds, measure, describe=str, label=""):
    """Runs measure(side) for each side in rotated order, `rounds` times. Returns one {side: figures}
    per round; prints each round (its order and describe(figures) per side) to stderr as it ends."""
    results = []
    for round_index in range(rounds):
        order = rotated(sides, round_index)
        figures = {side: measure(side) for side in order}
        results.append(figures)
        shown = ", ".join(f"{side}: {describe(figures[side])}" for side in sides)
        print(f"{label}round {round_index + 1}/{rounds} ({' → '.join(map(str, order))}): {shown}",
              file=sys.stderr, flush=True)
    return results


def spread(values, digits=3):
    """'median (min–max)' of the values."""
    values = list(values)
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"
