"""Workload recorded by regen-two-threads.sh under py-spy 0.4.1 --idle: the main
thread and one named worker, each with its own hot function; both sleep a
little, so idle samples (and, as py-spy writes them, empty stacks) occur."""

import threading
import time


def spin(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def worker():
    for _ in range(20):
        spin(200000)
        time.sleep(0.02)


def main():
    t = threading.Thread(target=worker, name="worker")
    t.start()
    for _ in range(20):
        sorted(str(i) for i in range(100000))
        time.sleep(0.02)
    t.join()

# Freed during interpreter finalization, when the main thread runs no
# Python frame: py-spy --idle records those samples with empty stacks.
KEEP = [str(i) for i in range(1_500_000)]


if __name__ == "__main__":
    main()
