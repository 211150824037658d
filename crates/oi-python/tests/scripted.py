"""The project's scripted OpenAI-compatible model server, for the Python API's tests.

``ScriptedModel(replies)`` starts ``xtask scripted-server --port 0 --script FILE --requests
FILE`` (the program named by ``OI_XTASK``; ``cargo xtask python-tests`` sets it), reads the
address it prints, and gives the requests it received. A reply is a dict:
``{"text": "Hi"}``, ``{"tool_call": {"language": "python", "code": "print(1)"}}`` (with an
optional ``"text"`` before it), ``{"status": 500, "body": "..."}``; ``"chunked": N`` streams
it in pieces of N characters, ``"stall_after": [EVENTS, SECONDS]`` stalls the stream. The
string ``"calculator"`` instead of a list runs the built-in calculator.
"""

import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


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
