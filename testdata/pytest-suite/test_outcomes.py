import pytest


def test_pass(session_resource):
    assert session_resource["ready"]


def test_fail_assert():
    expected = [1, 2, 3]
    assert [1, 2, 4] == expected


def test_fail_exception():
    {}["missing"]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_param(n):
    assert n != 2


def test_skip_inline():
    pytest.skip("not supported on this platform")


@pytest.mark.skipif(True, reason="always skipped by marker")
def test_skip_marker():
    pass


@pytest.mark.xfail(reason="known bug #123")
def test_xfail():
    assert False


@pytest.mark.xfail(reason="fixed but still marked")
def test_xpass():
    pass


@pytest.mark.xfail(reason="strict xfail that passes", strict=True)
def test_xpass_strict():
    pass


def test_fixture_error(broken_fixture):
    pass


def test_teardown_error(bad_teardown):
    assert bad_teardown == "value"


def test_fail_and_teardown_error(bad_teardown):
    assert bad_teardown == "other"


def test_fixture_skip(skipping_fixture):
    pass


def test_slow_fixture(slow_fixture, session_resource):
    assert slow_fixture == 42


class TestGroup:
    def test_method_pass(self):
        assert True

    def test_method_fail(self):
        assert 1 + 1 == 3, "arithmetic is broken"


@pytest.mark.parametrize("text", ["naïve", "日本語", "tab\there"])
def test_unicode_ids(text):
    assert text.isascii(), "non-ASCII text: " + text + " \x01\x1b[31m"
