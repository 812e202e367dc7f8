"""What the shape scans (scripts/*.py run by scripts/test.sh) share: each finding on a line of
its own, their count on standard error, and exit status 1 when there is any."""

import sys


def report(found, what):
    """Prints `found` (lines), then `N what` on standard error, and exits 1 when N > 0."""
    for line in found:
        print(line)
    print(f"{len(found)} {what}", file=sys.stderr)
    sys.exit(1 if found else 0)
