"""Workload profiled by regen.sh: a known hot function (hot), direct
recursion (fib), mutual recursion (even/odd), a lambda, a generator
expression and a few built-ins and stdlib calls."""

import json


def hot(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def even(n):
    return True if n == 0 else odd(n - 1)


def odd(n):
    return False if n == 0 else even(n - 1)


def main():
    for _ in range(40):
        hot(20000)
    fib(16)
    even(30)
    words = sorted(str(i) for i in range(2000))
    square = lambda x: x * x  # noqa: E731
    text = json.dumps({"words": words[:50], "n": square(3)})
    return len(json.loads(text)["words"])


if __name__ == "__main__":
    main()
