"""A small program with branches, partial branches and unexecuted code.

regen.sh runs it under coverage.py; the fixture's expected numbers come
from coverage.py's own reports, never from this file.
"""

import sys

from shapes import area, classify


def parity(n):
    if n % 2 == 0:
        return "even"
    return "odd"


def never_called():  # pragma: no cover
    return "excluded"


def loop(limit):
    total = 0
    for i in range(limit):
        if i > 100:
            break
        total += i
    else:
        total = -total
    return total


def test_shapes():
    assert classify(3) == "small"
    assert area("square", 2) == 4


def test_parity():
    assert parity(4) == "even"


def main(argv):
    test_shapes()
    test_parity()
    print(loop(5))
    if len(argv) > 5:
        print("many arguments")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
