"""A Python workload for the Memray bench captures: N rounds of nested
calls that allocate objects of several sizes, keep some (a growing heap),
free the rest, and run a few rounds on a second thread.

    python -m memray run --no-compress --trace-python-allocators -o OUT memray_workload.py N
"""
import sys
import threading

kept = []


def small(i):
    return [i, str(i), (i, i + 1)]


def medium(i):
    return {"k%d" % j: j for j in range(i % 16)}


def big(i):
    return bytearray(1024 + (i % 7) * 512)


def level3(i):
    a = small(i)
    b = medium(i)
    if i % 10 == 0:
        kept.append(big(i))
    return len(a) + len(b)


def level2(i):
    return level3(i) + len(small(i + 1))


def level1(n):
    total = 0
    for i in range(n):
        total += level2(i)
        if i % 1000 == 999:
            del kept[: len(kept) // 2]
    return total


def main(n):
    t = threading.Thread(target=level1, args=(n // 8,), name="bench-worker")
    t.start()
    level1(n)
    t.join()


main(int(sys.argv[1]))
