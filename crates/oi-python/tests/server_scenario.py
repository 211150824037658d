"""Runs the original's server example (docs_server_start.py: `AsyncInterpreter().server.run(
port=8000)`) and its WebSocket client example (docs_server_websocket_client.py) as they are,
against the scripted model, then stops the server with CTRL-C (SIGINT). Prints a JSON report.

Usage: python server_scenario.py WORKDIR EXPECTED_TEXT REPLIES_JSON

The examples use the fixed port 8000; the test runs this in a network namespace of its own
when it can, so nothing else on the machine is in the way.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import scripted  # noqa: E402


def wait_for_port(port, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.02)
    return False


def main():
    workdir, expected, replies = Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
    report = {}
    with scripted.ScriptedModel(replies, workdir / "model") as model:
        env = dict(os.environ, OPENAI_BASE_URL=model.url, OPENAI_API_KEY="sk-test", PYTHONUNBUFFERED="1")
        server = subprocess.Popen(
            [sys.executable, str(HERE / "examples" / "docs_server_start.py")],
            cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        report["listening"] = wait_for_port(8000, 20)
        client = subprocess.Popen(
            [sys.executable, str(HERE / "examples" / "docs_server_websocket_client.py")],
            cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        lines = []

        def read():
            for line in client.stdout:
                lines.append(line)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and expected not in "".join(
            line[len("Assistant: "):].rstrip("\n") for line in lines if line.startswith("Assistant: ")
        ):
            time.sleep(0.02)
        time.sleep(0.3)  # anything printed after the answer
        client.kill()
        client.wait()
        reader.join(2)
        report["client_stdout"] = "".join(lines)
        report["client_stderr"] = client.stderr.read()
        started = time.monotonic()
        server.send_signal(signal.SIGINT)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        report["server_stop_seconds"] = time.monotonic() - started
        report["server_returncode"] = server.returncode
        report["server_stdout"] = server.stdout.read()
        report["server_stderr"] = server.stderr.read()
        report["requests"] = model.requests(1)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
