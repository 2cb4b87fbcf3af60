"""flameox pytest event plugin: a bounded, versioned JSONL event stream.

Load it with ``-p flameox_pytest``. It records only when the environment
variable FLAMEOX_PYTEST_EVENTS names the output file; the schema is
documented in docs/pytest-events.md (format "flameox-pytest-events",
version 1). Every line, newline included, is at most LINE_BYTES bytes:
each text field has its own bound, so the sum of bounds stays below it.

Only the controlling process writes. Under pytest-xdist, workers attach
their fixture timings to the reports they send, and the controller writes
the events it receives with the worker's identity.
"""

import hashlib
import json
import os
import platform
import sys
import time

import pytest

FORMAT = "flameox-pytest-events"
VERSION = 1
ENV = "FLAMEOX_PYTEST_EVENTS"

LINE_BYTES = 65536  # one event line, newline included
TEXT_BYTES = 16384  # longrepr and internal-error text
MESSAGE_BYTES = 1024  # crash messages, skip and xfail reasons, worker errors
IDENT_BYTES = 4096  # node ids, paths, fixture names
SHORT_BYTES = 256  # versions, platform, outcome words
MAX_ARGS = 64
ARG_BYTES = 512

_SHORT_ESCAPES = frozenset('"\\\n\r\t\b\f')


def _cost(ch):
    """Bytes ch takes in json.dumps(ensure_ascii=False) output, UTF-8 encoded."""
    if ch in _SHORT_ESCAPES:
        return 2
    o = ord(ch)
    if o < 0x20:
        return 6
    if o < 0x80:
        return 1
    if o < 0x800:
        return 2
    if o < 0x10000:
        return 3
    return 4


def _clean(s):
    # Lone surrogates (undecodable file names, surrogateescape'd bytes) have
    # no UTF-8 form; keep them visible as backslash escapes.
    return s.encode("utf-8", "backslashreplace").decode("utf-8")


def _bound(s, limit):
    """Return (text, truncated): the longest prefix of s whose JSON string
    body is at most limit bytes."""
    if s is None:
        return None, False
    if not isinstance(s, str):
        s = str(s)
    # Every character costs at least one byte, so a longer prefix cannot fit.
    head = _clean(s[:limit])
    n = 0
    for i, ch in enumerate(head):
        n += _cost(ch)
        if n > limit:
            return head[:i], True
    return head, len(s) > limit


def _text(s, limit):
    return _bound(s, limit)[0]


def _ident(s):
    """Bound an identity (node id, path) without losing uniqueness: a
    too-long identity keeps a prefix and the SHA-256 of the whole."""
    if s is None:
        return None
    s = _clean(str(s))
    head, cut = _bound(s, IDENT_BYTES)
    if not cut:
        return head
    digest = hashlib.sha256(s.encode("utf-8")).hexdigest()
    return _text(s, IDENT_BYTES - 80) + "...[sha256:" + digest + "]"


class _Writer:
    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        self.seq = 0

    def emit(self, event, **fields):
        rec = {"event": event, "seq": self.seq, "time": time.time()}
        rec.update(fields)
        data = (json.dumps(rec, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n").encode("utf-8")
        if len(data) > LINE_BYTES:
            # Unreachable while every field above is bounded; a line the
            # reader would reject must never be written.
            raise RuntimeError("flameox_pytest: %s event of %d bytes exceeds %d" % (event, len(data), LINE_BYTES))
        self.seq += 1
        view = memoryview(data)
        # One write per line: a killed run leaves complete lines and at most
        # one unterminated tail, which the reader reports as truncation.
        while view:
            view = view[os.write(self.fd, view):]

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _worker(report):
    wid = getattr(report, "worker_id", None)
    if wid is None:
        node = getattr(report, "node", None)
        gateway = getattr(node, "gateway", None)
        wid = getattr(gateway, "id", None)
    return _ident(wid)


def _failure_text(report):
    """(message, longrepr, truncated) of a failed or skipped report."""
    longrepr = report.longrepr
    if longrepr is None:
        return None, None, False
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        # A skip: (path, lineno, reason).
        return _text(longrepr[2], MESSAGE_BYTES), None, False
    message = None
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        message = _text(crash.message, MESSAGE_BYTES)
    try:
        full = report.longreprtext
    except Exception as exc:  # an unprintable exception must not end the run
        full = "<longrepr not printable: %r>" % (exc,)
    text, cut = _bound(full, TEXT_BYTES)
    return message, text, cut


class _FixtureTimer:
    """Times fixture setups and attaches them to the report of the phase in
    which they ran (xdist carries report attributes to the controller)."""

    def __init__(self):
        self.pending = []

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        __tracebackhide__ = True  # keep this wrapper out of fixture-error tracebacks
        start = time.perf_counter()
        outcome = "failed"
        try:
            result = yield
            outcome = "passed"
            return result
        except pytest.skip.Exception:
            outcome = "skipped"
            raise
        finally:
            self.pending.append([fixturedef.argname, fixturedef.scope, time.perf_counter() - start, outcome])

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        report.flameox_fixtures, self.pending = self.pending, []
        return report


class _Recorder:
    def __init__(self, config, writer):
        self.config = config
        self.w = writer
        self.deselected = 0
        self.items_written = False

    def start(self):
        args = [_text(a, ARG_BYTES) for a in self.config.invocation_params.args[:MAX_ARGS]]
        try:
            from importlib.metadata import version

            xdist = version("pytest-xdist")
        except Exception:
            xdist = None
        self.w.emit(
            "run_start",
            format=FORMAT,
            version=VERSION,
            pid=os.getpid(),
            pytest=_text(pytest.__version__, SHORT_BYTES),
            python=_text(platform.python_version(), SHORT_BYTES),
            platform=_text(sys.platform, SHORT_BYTES),
            xdist=_text(xdist, SHORT_BYTES),
            args=args,
            args_omitted=max(0, len(self.config.invocation_params.args) - MAX_ARGS),
            rootdir=_ident(str(self.config.rootpath)),
            invocation_dir=_ident(str(self.config.invocation_params.dir)),
            limits={
                "line_bytes": LINE_BYTES,
                "text_bytes": TEXT_BYTES,
                "message_bytes": MESSAGE_BYTES,
                "ident_bytes": IDENT_BYTES,
            },
        )

    def pytest_sessionstart(self, session):
        self.w.emit("session_start")

    def pytest_collectreport(self, report):
        message, longrepr, cut = _failure_text(report) if not report.passed else (None, None, False)
        self.w.emit(
            "collect_report",
            nodeid=_ident(report.nodeid),
            outcome=_text(report.outcome, SHORT_BYTES),
            message=message,
            longrepr=longrepr,
            longrepr_truncated=cut,
        )

    def pytest_deselected(self, items):
        self.deselected += len(items)

    def _items(self, ids, worker, deselected):
        for nodeid in ids:
            self.w.emit("collect_item", nodeid=_ident(nodeid))
        self.w.emit("collection_finish", count=len(ids), deselected=deselected, worker=_ident(worker))

    def pytest_collection_finish(self, session):
        self._items([item.nodeid for item in session.items], None, self.deselected)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids):
        # Every worker collects the same items (xdist checks it); list them
        # once and record each worker's count.
        worker = _ident(node.gateway.id)
        if self.items_written:
            self.w.emit("collection_finish", count=len(ids), deselected=None, worker=worker)
            return
        self.items_written = True
        self._items(ids, worker, None)

    def pytest_runtest_logstart(self, nodeid, location):
        self.w.emit("test_start", nodeid=_ident(nodeid))

    def pytest_runtest_logreport(self, report):
        nodeid = _ident(report.nodeid)
        worker = _worker(report)
        if report.when not in ("setup", "call", "teardown"):
            # xdist's stand-in report for the item a crashed worker was running.
            self.w.emit("test_crash", nodeid=nodeid, worker=worker, message=_text(report.longreprtext, MESSAGE_BYTES))
            return
        for name, scope, duration, outcome in getattr(report, "flameox_fixtures", None) or ():
            self.w.emit(
                "fixture_setup",
                nodeid=nodeid,
                fixture=_ident(name),
                scope=_ident(scope),
                duration=float(duration),
                outcome=outcome,
                worker=worker,
            )
        message, longrepr, cut = (None, None, False) if report.passed else _failure_text(report)
        wasxfail = getattr(report, "wasxfail", None)
        fspath, lineno, _ = report.location
        self.w.emit(
            "test_report",
            nodeid=nodeid,
            when=report.when,
            outcome=_text(report.outcome, SHORT_BYTES),
            duration=float(report.duration),
            file=_ident(fspath),
            line=lineno if isinstance(lineno, int) else -1,
            worker=worker,
            wasxfail=None if wasxfail is None else _text(wasxfail, MESSAGE_BYTES),
            message=message,
            longrepr=longrepr,
            longrepr_truncated=cut,
        )

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodeready(self, node):
        info = getattr(node, "workerinfo", {}) or {}
        python = info.get("version_info")
        self.w.emit(
            "worker_ready",
            worker=_ident(node.gateway.id),
            python=_text(".".join(str(p) for p in python[:3]), SHORT_BYTES) if python else None,
        )

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        self.w.emit(
            "worker_down",
            worker=_ident(node.gateway.id),
            crashed=error is not None,
            error=None if error is None else _text(error, MESSAGE_BYTES),
        )

    def pytest_keyboard_interrupt(self, excinfo):
        self.w.emit("interrupt", exception=_ident(excinfo.typename), message=_text(str(excinfo.value), MESSAGE_BYTES))

    def pytest_internalerror(self, excrepr, excinfo):
        text, cut = _bound(str(excrepr), TEXT_BYTES)
        self.w.emit("internal_error", text=text, text_truncated=cut)

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self, session, exitstatus):
        try:
            return (yield)
        finally:
            # Read after every other plugin ran: they may change it.
            self.w.emit(
                "session_finish",
                exit_status=int(session.exitstatus),
                tests_collected=int(session.testscollected),
                tests_failed=int(session.testsfailed),
            )

    def pytest_unconfigure(self, config):
        self.w.emit("run_finish")
        self.w.close()


def pytest_configure(config):
    config.pluginmanager.register(_FixtureTimer(), "flameox_pytest_fixtures")
    if hasattr(config, "workerinput"):
        return  # an xdist worker: the controller writes
    path = os.environ.pop(ENV, None)
    # Removed from the environment so that a pytest run started by a test
    # cannot reopen (and truncate) this stream.
    if not path:
        return
    try:
        writer = _Writer(path)
    except OSError as exc:
        raise pytest.UsageError("flameox_pytest: cannot open %s=%s: %s" % (ENV, path, exc))
    recorder = _Recorder(config, writer)
    config.pluginmanager.register(recorder, "flameox_pytest_recorder")
    recorder.start()
