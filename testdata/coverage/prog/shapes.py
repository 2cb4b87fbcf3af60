"""Helpers partly exercised by app.py."""


def classify(n):
    if n < 10:
        return "small"
    elif n < 100:
        return "medium"
    return "large"


def area(kind, size):
    if kind == "square":
        return size * size
    if kind == "circle":
        return 3.14159 * size * size
    raise ValueError(kind)


def unused():
    x = 1
    y = 2
    return x + y
