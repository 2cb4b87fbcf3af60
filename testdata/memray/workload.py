"""A small Python workload for memray captures: allocations in nested
functions, some kept until exit (leaks), some freed after a peak, one
thread of its own, and a large buffer that goes through mmap."""
import threading

kept = []


def leaf(n):
    return [bytearray(256) for _ in range(n)]


def middle(n):
    out = leaf(n)
    out.extend(leaf(n // 2))
    return out


def peak():
    # Freed before exit: part of the high watermark, not of the leaks.
    big = [bytes(4096) for _ in range(500)]
    buf = bytearray(4 << 20)  # large enough for mmap
    return len(big) + len(buf)


def recurse(depth):
    if depth == 0:
        return [str(i) * 10 for i in range(200)]
    return recurse(depth - 1)


def worker():
    kept.append(middle(300))


def main():
    kept.append(middle(400))
    peak()
    kept.append(recurse(5))
    t = threading.Thread(target=worker, name="flameox-worker")
    t.start()
    t.join()
    kept.append(bytearray(1 << 16))


main()
