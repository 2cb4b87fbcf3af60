def test_before():
    pass


def test_interrupted():
    raise KeyboardInterrupt


def test_after():
    pass


def test_after_too():
    pass
