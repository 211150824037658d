"""Attacks through the Python API, each performed for real: a model (or its code) that tries to
read oi's keys, to control the user's terminal through what chat(display=True) prints, to
hide code at the approval question, or to delete the home directory through the approve-all
path of chat(display=False); a network client that tries to turn auto_run on."""

import json
import os
import pty
import select
import subprocess
import sys
import time
import urllib.error
import urllib.request

from conftest import python_env
from scripted import code, text

HOSTILE_TEXT = "Done.\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;pwned\x07\x1b[2J\x1b[1;1HYou are safe.\x9b31m"
HOSTILE_OUTPUT = "print('\\x1b]0;title\\x07\\x1b[2Kcleared\\r' + 'over\\x1b[31mred')"


def test_code_never_sees_the_model_keys(oi, monkeypatch):
    env_key = "sk-from-the-environment-0123456789"
    configured = "sk-configured-in-python-9876543210"
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    monkeypatch.setenv("INTERPRETER_API_KEY", "server-key-abcdefghijkl")
    monkeypatch.setenv("SOME_COPY", configured)
    agent, model = oi([code("shell", "env; echo END"), text("ok")], auto_run=True)
    agent.llm.api_key = configured
    output = agent.chat("show the environment", display=False)[1]["content"]
    assert "END" in output and "HOME=" in output
    for secret in (env_key, configured, "server-key-abcdefghijkl", "OPENAI_API_KEY", "INTERPRETER_API_KEY"):
        assert secret not in output
    # computer.run() goes through the same computer.
    direct = agent.computer.run("python", "import os; print(sorted(os.environ))")[0]["content"]
    assert "OPENAI_API_KEY" not in direct and "SOME_COPY" not in direct


def test_hard_deny_holds_on_the_run_everything_path(oi):
    home = os.environ["HOME"]
    marker = os.path.join(home, "keep-me")
    open(marker, "w").close()
    agent, model = oi([code("shell", "rm -rf ~"), code("shell", "rm -rf ~"), text("I could not.")])
    # display=False runs every block whatever auto_run says (as the original) — but not this.
    new = agent.chat("clean up my home", display=False)
    assert os.path.exists(marker)
    blocked = [m["content"] for m in new if m["type"] == "console"]
    assert blocked and all("blocked" in b.lower() or "refus" in b.lower() or "denied" in b.lower() for b in blocked), blocked


def rendered(model_url, home, tty):
    """What chat(display=True) prints for a hostile model and hostile output, on a pipe or a
    terminal (a pty)."""
    source = (
        "from interpreter import interpreter\n"
        "interpreter.auto_run = True\n"
        "interpreter.llm.supports_functions = True\n"
        "interpreter.chat('go')\n"
    )
    env = python_env(home, model_url, TERM="xterm")
    if not tty:
        done = subprocess.run([sys.executable, "-c", source], env=env, cwd=home, capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-c", source], env=env, cwd=home, stdin=follower, stdout=follower, stderr=subprocess.PIPE
    )
    os.close(follower)
    out = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.1)
        if ready:
            try:
                piece = os.read(leader, 65536)
            except OSError:
                break
            if not piece:
                break
            out += piece
        elif process.poll() is not None:
            break
    process.wait(10)
    os.close(leader)
    assert process.returncode == 0, process.stderr.read()
    return out


def test_display_lets_no_control_sequence_through(model, home):
    for tty in (False, True):
        server = model([code("python", HOSTILE_OUTPUT, before="Running it."), text(HOSTILE_TEXT)])
        out = rendered(server.url, home, tty)
        for attack in (b"\x1b]52", b"\x1b]0", b"\x1b[2J", b"\x1b[1;1H", b"\x1b[2K", b"\x1b[31m", b"\x07", b"\xc2\x9b", b"\r" if not tty else b"\x1b]"):
            assert attack not in out, (tty, attack, out)
        text_out = out.decode()
        assert "You are safe." in text_out and "cleared" in text_out and "red" in text_out
        if not tty:
            assert b"\x1b" not in out, "plain text on a pipe"


def test_code_hiding_behind_a_carriage_return_is_shown(model, home):
    hidden = "rm -rf ~/important \r# list files"
    server = model([code("shell", hidden), text("ok")])
    source = "from interpreter import interpreter\ninterpreter.llm.supports_functions = True\ninterpreter.chat('list')\n"
    done = subprocess.run(
        [sys.executable, "-c", source], env=python_env(home, server.url), cwd=home,
        input="n\n", capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "rm -rf ~/important ␍# list files" in done.stdout
    assert "Warning: this code contains control or invisible characters" in done.stdout
    assert "\r" not in done.stdout


def test_network_clients_cannot_turn_auto_run_on(model, monkeypatch):
    import socket

    from interpreter import AsyncInterpreter

    server = model("calculator")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    agent = AsyncInterpreter(conversation_history=False)
    agent.llm.api_base, agent.llm.api_key = server.url, "x"
    handle_thread = None
    try:
        import threading

        handle_thread = threading.Thread(target=agent.server.run, kwargs={"port": port}, daemon=True)
        handle_thread.start()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/heartbeat", timeout=1)
                break
            except OSError:
                time.sleep(0.02)
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/settings",
            data=json.dumps({"auto_run": True}).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        try:
            urllib.request.urlopen(request, timeout=5)
            raise AssertionError("auto_run was turned on over the network")
        except urllib.error.HTTPError as refused:
            assert refused.code == 403
    finally:
        agent.server.stop()
        if handle_thread is not None:
            handle_thread.join(10)


def test_server_flags_confine_the_sessions_code(model, tmp_path, monkeypatch):
    """`ai.server.run(sandbox="workspace", deny_network=True)`: a session's code cannot write
    outside the working directory nor open a TCP connection (here: to the model server)."""
    import asyncio
    import socket

    import websockets

    from interpreter import AsyncInterpreter

    import shutil
    import uuid

    from scripted import ROOT

    # Outside the workspace and the temp directories (which workspace mode lets code write).
    outside_dir = ROOT / "target" / f"oi-python-outside-{uuid.uuid4().hex}"
    outside_dir.mkdir(parents=True)
    outside = outside_dir / "escaped"
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    server = model("calculator")
    host, port = server.url.split("//")[1].split("/")[0].split(":")
    probe = (
        f"open({str(outside)!r}, 'w').write('x')\n"
    )
    connect = f"import socket; socket.create_connection(({host!r}, {port}), timeout=2)"
    replies = [code("python", probe), code("python", connect), text("done")]
    scripted = model(replies)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        serve_port = s.getsockname()[1]
    agent = AsyncInterpreter(conversation_history=False, auto_run=True)
    agent.llm.api_base, agent.llm.api_key, agent.llm.supports_functions = scripted.url, "x", True

    async def main():
        task = asyncio.create_task(agent.server.run(port=serve_port, sandbox="workspace", deny_network=True))
        async with websockets.connect(f"ws://127.0.0.1:{serve_port}/") as ws:
            for chunk in ({"start": True}, {"content": "try to escape"}, {"end": True}):
                await ws.send(json.dumps({"role": "user", "type": "message", **chunk}))
            outputs = []
            while (chunk := json.loads(await ws.recv())).get("content") != "complete":
                if chunk.get("format") == "output":
                    outputs.append(chunk["content"])
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        return "".join(outputs)

    try:
        out = asyncio.run(main())
        assert not outside.exists()
    finally:
        shutil.rmtree(outside_dir, ignore_errors=True)
    assert "PermissionError" in out or "Permission denied" in out or "denied" in out.lower(), out
    assert out.count("Traceback") == 2, out
