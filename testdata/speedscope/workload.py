"""Workload recorded by regen.sh under py-spy: two named worker threads
with different hot functions while the main thread works too."""

import threading


def crunch(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def worker_a():
    for _ in range(30):
        crunch(60000)


def worker_b():
    for _ in range(8):
        fib(21)


def main():
    threads = [
        threading.Thread(target=worker_a, name="worker-a"),
        threading.Thread(target=worker_b, name="worker-b"),
    ]
    for t in threads:
        t.start()
    sorted(str(i) for i in range(300000))
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
