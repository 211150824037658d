"""CTRL-C: a KeyboardInterrupt during chat() stops the turn — the running code's process group
and the model request — raises in the caller, and leaves the interpreter usable. Each test
runs a real Python process and sends it SIGINT, as a terminal's CTRL-C does."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from conftest import python_env
from scripted import code, text


def processes_with(needle):
    """PIDs whose command line contains `needle`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if needle.encode() in cmdline:
            found.append(int(entry.name))
    return found


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


class Script:
    """A Python process of this venv running `source`, its output collected by a thread."""

    def __init__(self, source, env, cwd, stdin=False):
        self.process = subprocess.Popen(
            [sys.executable, "-c", source],
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line)

    def read(self):
        return "".join(self.lines)

    def wait_for_output(self, needle, seconds=20):
        wait_for(lambda: needle in self.read() or self.process.poll() is not None, seconds, repr(needle))
        self.reader.join(0.1) if self.process.poll() is not None else None
        assert needle in self.read(), (self.read(), self.process.stderr.read() if self.process.poll() is not None else "")

    def finish(self, seconds=30):
        self.process.wait(seconds)
        self.reader.join(5)
        return self.process.returncode, self.read(), self.process.stderr.read()


PRELUDE = """
import json, time
from interpreter import interpreter
interpreter.auto_run = True
interpreter.llm.supports_functions = True
"""


def test_ctrl_c_during_sleeping_code_kills_it_and_the_session_goes_on(model, home):
    marker = home / "started"
    sleeper = "sleep 31.4159"
    server = model([code("shell", f"touch {marker}; {sleeper}; echo never"), text("Still here.")])
    source = PRELUDE + """
try:
    interpreter.chat("sleep a while", display=False)
    print("finished without interruption", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
print(json.dumps(interpreter.chat("are you there?", display=False)), flush=True)
"""
    script = Script(source, python_env(home, server.url), home)
    wait_for(marker.exists, 20, "the code to start")
    wait_for(lambda: processes_with(sleeper), 5, "the sleep process")
    started = time.monotonic()
    script.process.send_signal(signal.SIGINT)
    script.wait_for_output("interrupted", 10)
    stopped_in = time.monotonic() - started
    wait_for(lambda: not processes_with(sleeper), 3, "the sleep process to be gone")
    code_, out, err = script.finish()
    assert code_ == 0, err
    assert stopped_in < 2, f"KeyboardInterrupt took {stopped_in:.2f} s"
    last = json.loads(out.strip().splitlines()[-1])
    assert last[-1]["content"] == "Still here."
    assert "never" not in out


def test_ctrl_c_in_python_code_leaves_its_session_and_state(model, home):
    marker = home / "started"
    server = model(
        [
            code("python", f"kept = 41\nopen({str(marker)!r}, 'w').close()\nimport time\ntime.sleep(31.4159)"),
            code("python", "print(kept + 1)"),
            text("done"),
        ]
    )
    source = PRELUDE + """
try:
    interpreter.chat("sleep", display=False)
except KeyboardInterrupt:
    print("interrupted", flush=True)
print(json.dumps(interpreter.chat("print it", display=False)), flush=True)
"""
    script = Script(source, python_env(home, server.url), home)
    wait_for(marker.exists, 20, "the code to start")
    script.process.send_signal(signal.SIGINT)
    script.wait_for_output("interrupted", 10)
    code_, out, err = script.finish()
    assert code_ == 0, err
    last = json.loads(out.strip().splitlines()[-1])
    assert last[1]["content"] == "42\n"


def test_ctrl_c_while_the_model_is_streaming_cancels_the_request(model, home):
    server = model([text("Thinking about it for a long time", chunked=4, stall_after=[2, 60]), text("Back.")])
    source = PRELUDE + """
started = time.monotonic()
try:
    for chunk in interpreter.chat("think", display=False, stream=True):
        print("chunk", json.dumps(chunk), flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
print(json.dumps(interpreter.chat("hello?", display=False)), flush=True)
"""
    script = Script(source, python_env(home, server.url), home)
    script.wait_for_output('"content": "Thin"', 20)
    started = time.monotonic()
    script.process.send_signal(signal.SIGINT)
    script.wait_for_output("interrupted", 10)
    assert time.monotonic() - started < 2
    code_, out, err = script.finish()
    assert code_ == 0, err
    assert json.loads(out.strip().splitlines()[-1])[-1]["content"] == "Back."
    # The interrupted reply stays as far as it came, as in the original.
    second = server.requests(2)[1]["body"]["messages"]
    assert second[2] == {"role": "assistant", "content": "Thin"}


def test_ctrl_c_in_the_interactive_chat_returns_to_the_prompt(model, home):
    marker = home / "started"
    sleeper = "sleep 27.1828"
    server = model([code("shell", f"touch {marker}; {sleeper}"), text("Back at the prompt.")])
    source = "from interpreter import interpreter\ninterpreter.auto_run = True\ninterpreter.chat()\n"
    script = Script(source, python_env(home, server.url), home, stdin=True)
    script.process.stdin.write("sleep\n")
    script.process.stdin.flush()
    wait_for(marker.exists, 20, "the code to start")
    script.process.send_signal(signal.SIGINT)
    script.wait_for_output("Stopped.", 10)
    wait_for(lambda: not processes_with(sleeper), 3, "the sleep process to be gone")
    script.process.stdin.write("are you there?\n")
    script.process.stdin.close()
    code_, out, err = script.finish()
    assert code_ == 0, err
    assert "Back at the prompt." in out and out.rstrip().endswith("Exiting...")
