import os

import pytest


@pytest.mark.parametrize("n", range(6))
def test_ok(n):
    assert n >= 0


def test_worker_crash():
    # Ends the xdist worker process abruptly, as a segfault would.
    os._exit(3)


def test_fail_after():
    assert False, "a real failure next to the crash"
