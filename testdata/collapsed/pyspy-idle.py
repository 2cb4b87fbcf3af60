# Busy and idle in turn, so py-spy --idle records both kinds of stacks.
import time


def spin(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def nap():
    time.sleep(0.05)


def main():
    end = time.time() + 1.5
    while time.time() < end:
        spin(200000)
        nap()


main()
