"""The project's scripted OpenAI-compatible model server, for the Python API's tests.

``ScriptedModel(replies)`` starts ``xtask scripted-server --port 0 --script FILE --requests
FILE`` (the program named by ``OI_XTASK``; ``cargo xtask python-tests`` sets it), reads the
address it prints, and gives the requests it received. A reply is a dict:
``{"text": "Hi"}``, ``{"tool_call": {"language": "python", "code": "print(1)"}}`` (with an
optional ``"text"`` before it), ``{"status": 500, "body": "..."}``; ``"chunked": N`` streams
it in pieces of N characters, ``"stall_after": [EVENTS, SECONDS]`` stalls the stream. The
string ``"calculator"`` instead of a list runs the built-in calculator.

Both pytest suites that run on oi's package (``crates/oi-python/tests`` and the original's
tests adapted by ``tests/original/conftest.py``) share this module: the model server, the
temporary HOME (:func:`isolate`) and the limit on each test's time (:func:`time_limit`).
"""

import json
import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


# No test may hang a suite: each gets this long, then fails with a traceback (the core's
# waits run Python's signal handlers, so the alarm gets through them too).
TEST_SECONDS = 120


def isolate(prefix, drop=()):
    """Points HOME and XDG_CONFIG_HOME at a fresh temporary folder (conversations saved by
    the tests go there, never to the user's) and removes the variables ``drop`` from the
    environment; returns the folder."""
    home = tempfile.mkdtemp(prefix=prefix)
    os.environ["HOME"] = home
    os.environ["XDG_CONFIG_HOME"] = os.path.join(home, ".config")
    for key in drop:
        os.environ.pop(key, None)
    return home


def time_limit(seconds=TEST_SECONDS):
    """The body of an autouse fixture (``yield from scripted.time_limit()``): the test fails
    with a TimeoutError after ``seconds``."""

    def expired(signum, frame):
        raise TimeoutError(f"the test took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def xtask_program():
    """The xtask program, or None."""
    named = os.environ.get("OI_XTASK")
    if named and Path(named).exists():
        return named
    for profile in ("debug", "release"):
        candidate = ROOT / "target" / profile / "xtask"
        if candidate.exists():
            return str(candidate)
    return None


def text(content, **options):
    """A text reply."""
    return {"text": content, **options}


def code(language, source, before=None, **options):
    """A reply that calls the `execute` tool (the model "writes" code)."""
    reply = {"tool_call": {"language": language, "code": source}, **options}
    if before is not None:
        reply["text"] = before
    return reply


class ScriptedModel:
    """A running scripted model server."""

    def __init__(self, replies, directory=None):
        program = xtask_program()
        if program is None:
            raise RuntimeError(
                "no xtask program: run the tests with `cargo xtask python-tests` (or set OI_XTASK)"
            )
        self.dir = Path(directory or tempfile.mkdtemp(prefix="oi-model-"))
        self.dir.mkdir(parents=True, exist_ok=True)
        self.script = self.dir / "script.json"
        self.requests_file = self.dir / "requests.json"
        self.script.write_text(json.dumps(replies))
        self.process = subprocess.Popen(
            [
                program,
                "scripted-server",
                "--port",
                "0",
                "--script",
                str(self.script),
                "--requests",
                str(self.requests_file),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        line = self.process.stdout.readline()
        found = re.search(r"(http://\S+/v1)", line)
        if not found:
            self.stop()
            raise RuntimeError(f"the scripted model server did not start: {line!r}")
        self.url = found.group(1)

    def requests(self, at_least=0, timeout=5.0):
        """The requests received so far: dicts with `path` and `body` (waits for `at_least`)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                received = json.loads(self.requests_file.read_text())
            except (OSError, ValueError):
                received = []
            if len(received) >= at_least or time.monotonic() > deadline:
                return received
            time.sleep(0.01)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False
