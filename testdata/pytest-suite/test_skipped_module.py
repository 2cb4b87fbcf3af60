import pytest

pytest.importorskip("flameox_optional_dependency")


def test_needs_optional():
    pass
