"""Tiny workload profiled by regen.sh for the fuzz seeds: recursion, a
plain call and a built-in, in a file of a few hundred bytes."""


def leaf(n):
    return len(str(n))


def walk(n):
    return leaf(n) if n == 0 else walk(n - 1) + leaf(n)


walk(3)
