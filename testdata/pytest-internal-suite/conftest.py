def pytest_collection_modifyitems(items):
    raise ValueError("a broken conftest hook")
