import time

import pytest


@pytest.fixture(scope="session")
def session_resource():
    time.sleep(0.02)
    return {"ready": True}


@pytest.fixture
def slow_fixture():
    time.sleep(0.05)
    return 42


@pytest.fixture
def broken_fixture():
    raise RuntimeError("fixture could not connect to the test database")


@pytest.fixture
def bad_teardown():
    yield "value"
    raise OSError("teardown could not remove the scratch directory")


@pytest.fixture
def skipping_fixture():
    pytest.skip("fixture needs a GPU")
