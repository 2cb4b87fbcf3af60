"""Inputs that push every bound of the flameox plugin."""

import pytest

LONG_ID = "x" * 5000


@pytest.mark.parametrize("v", [1], ids=[LONG_ID])
def test_long_nodeid(v):
    assert v == 2


def test_huge_longrepr():
    # 200 KB of failure text with control characters, a lone surrogate and
    # four-byte characters: the plugin must still write one bounded line.
    chunk = "\x01\x1f\"\\\n\U0001F600é" * 2000
    raise AssertionError(chunk * 10 + "\udc80")


def test_huge_skip_reason():
    pytest.skip("why " * 5000)
