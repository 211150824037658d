"""The original's README and docs examples, verbatim, each in a fresh Python process of this
venv, against the scripted model server (set as OpenAI's endpoint through OPENAI_BASE_URL)."""

import ast
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import example, python_env, run_python
from scripted import code, text

IMPORT = "from interpreter import interpreter\n"


def shape(chunks):
    """(role, type, format, part) per chunk, consecutive content of one kind collapsed."""
    out = []
    for chunk in chunks:
        part = "start" if chunk.get("start") else "end" if chunk.get("end") else "content"
        key = (chunk["role"], chunk.get("type"), chunk.get("format"), part)
        if part == "content" and out and out[-1] == key:
            continue
        out.append(key)
    return out


def test_readme_library_chat_then_interactive_chat(model, home):
    """README "Python": one turn, then `interpreter.chat()` — the interactive chat — over
    input(): a message, the approval question answered "y", the code's output, CTRL-D."""
    server = model(
        [
            text("I cannot reach the internet from here, but I can plot data you give me."),
            code("python", "print(6*7)"),
            text("The result is 42."),
        ]
    )
    done = run_python(
        example("readme_library_chat.py"),
        python_env(home, server.url),
        cwd=home,
        stdin="compute 6*7\ny\n",
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "I cannot reach the internet from here" in out
    assert "Open Interpreter will require approval before running code." in out
    assert "```python\nprint(6*7)\n```" in out
    assert "Would you like to run this code? (y/n)" in out
    assert "```output\n42\n```" in out
    assert "The result is 42." in out
    assert "Exiting..." in out
    assert "\x1b" not in out, "plain text when stdout is not a terminal"
    requests = server.requests(3)
    assert len(requests) == 3
    last = requests[2]["body"]["messages"]
    assert any(m.get("role") == "tool" and "42" in str(m.get("content")) for m in last)


def test_readme_streaming(model, home):
    """README: `for chunk in interpreter.chat(message, display=False, stream=True): print(chunk)`
    prints the LMC chunks with start/end flags, the confirmation chunk included (auto_run is
    off), and reading on runs the code."""
    server = model([code("shell", "uname -s", before="Let me check."), text("We are on Linux.")])
    done = run_python(IMPORT + example("readme_streaming.py"), python_env(home, server.url), cwd=home)
    assert done.returncode == 0, done.stderr
    chunks = [ast.literal_eval(line) for line in done.stdout.splitlines()]
    assert shape(chunks)[:7] == [
        ("assistant", "message", None, "start"),
        ("assistant", "message", None, "content"),
        ("assistant", "message", None, "end"),
        ("assistant", "code", "shell", "start"),
        ("assistant", "code", "shell", "content"),
        ("assistant", "code", "shell", "end"),
        ("computer", "confirmation", "execution", "content"),
    ]
    assert chunks[6] == {
        "role": "computer",
        "type": "confirmation",
        "format": "execution",
        "content": {"type": "code", "format": "shell", "content": "uname -s"},
    }
    assert chunks[7] == {"role": "computer", "type": "console", "start": True}
    console_end = chunks.index({"role": "computer", "type": "console", "end": True})
    output = "".join(
        c["content"] for c in chunks[7:console_end] if c.get("format") == "output"
    )
    assert output == "Linux\n"
    assert shape(chunks)[-3:] == [
        ("assistant", "message", None, "start"),
        ("assistant", "message", None, "content"),
        ("assistant", "message", None, "end"),
    ]
    assert "".join(c.get("content", "") for c in chunks[console_end + 1 :] if c.get("type") == "message") == "We are on Linux."
    # The key order is the wire's: role, type, format, content.
    assert done.stdout.splitlines()[4] == "{'role': 'assistant', 'type': 'code', 'format': 'shell', 'content': 'uname -s'}"


def test_readme_save_and_restore(model, home):
    """README "Save and Restore Chats": `messages = interpreter.chat(...)`, `interpreter.messages
    = []`, `interpreter.messages = messages` — the restored messages reach the model."""
    server = model([text("Nice to meet you, Killian."), text("Your name is Killian.")])
    source = (
        IMPORT
        + example("readme_save_restore.py")
        + "\nimport json\nprint(json.dumps(messages))\ninterpreter.chat('What is my name?', display=False)\n"
    )
    done = run_python(source, python_env(home, server.url), cwd=home)
    assert done.returncode == 0, done.stderr
    saved = json.loads(done.stdout.splitlines()[-1])
    # chat() returns the messages the turn added after the input, as the original does.
    assert saved == [{"role": "assistant", "type": "message", "content": "Nice to meet you, Killian."}]
    second = server.requests(2)[1]["body"]["messages"]
    assert [m["role"] for m in second] == ["system", "assistant", "user"]
    assert second[1]["content"] == "Nice to meet you, Killian."
    assert second[2]["content"] == "What is my name?"


def test_readme_customize_system_message(model, home):
    """README "Customize System Message": `interpreter.system_message += ...` is printed and
    sent to the model."""
    server = model([text("Understood.")])
    source = IMPORT + example("readme_system_message.py") + "interpreter.chat('hi', display=False)\n"
    done = run_python(source, python_env(home, server.url), cwd=home)
    assert done.returncode == 0, done.stderr
    addition = "Run shell commands with -y so the user doesn't have to confirm them."
    assert addition in done.stdout
    assert done.stdout.startswith("You are Open Interpreter")
    system = server.requests(1)[0]["body"]["messages"][0]
    assert system["role"] == "system" and addition in system["content"]


def test_docs_multiple_instances_talk_to_each_other(model, home):
    """docs "Multiple instances": two OpenInterpreter()s with their own system messages talk
    to each other in `while True` — until the scripted model runs out of replies, which
    ends the script with TurnError."""
    server = model([text(f"Reply {i}.") for i in range(1, 5)])
    source = example("docs_multiple_instances_create.py") + "\n" + example("docs_multiple_instances_talk.py")
    done = run_python(source, python_env(home, server.url), cwd=home)
    assert done.returncode == 1
    assert "TurnError" in done.stderr and "ran out of replies" in done.stderr
    for i in range(1, 5):
        assert f"Reply {i}." in done.stdout
    requests = server.requests(5)[:5]  # (the failing fifth is retried)
    systems = [r["body"]["messages"][0]["content"] for r in requests]
    assert systems[0::2] == ["This is a separate instance."] * 3
    assert systems[1::2] == ["This is yet another instance."] * 2
    # Each agent gets the other's reply as the user: chat(list) replaced its history.
    assert [m["role"] for m in requests[1]["body"]["messages"][1:]] == ["user"]
    assert requests[1]["body"]["messages"][1]["content"] == "Reply 1."


def _port_free(port):
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _namespace_prefix():
    """A command prefix that runs in a network namespace of its own (loopback up), or None."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if os.geteuid() != 0 or not unshare or not ip:
        return None
    probe = subprocess.run([unshare, "--net", ip, "link", "set", "lo", "up"], capture_output=True)
    if probe.returncode != 0:
        return None
    return [unshare, "--net", "sh", "-c", f'"{ip}" link set lo up && exec "$0" "$@"']


def test_docs_server_and_websocket_client(tmp_path):
    """docs/server/usage.mdx: `AsyncInterpreter().server.run(port=8000)` in one process, the
    example WebSocket client in another — the multi-part message (text and an image path) gets
    the model's answer; CTRL-C stops the server cleanly."""
    from scripted import xtask_program

    if xtask_program() is None:
        pytest.skip("no xtask program: run `cargo xtask python-tests`")
    prefix = _namespace_prefix()
    if prefix is None and not _port_free(8000):
        pytest.skip("port 8000 is taken and no private network namespace can be made")
    answer = "I see no image at path/to/image.jpg."
    scenario = Path(__file__).parent / "server_scenario.py"
    home = tmp_path / "home"
    home.mkdir()
    command = (prefix or []) + [sys.executable, str(scenario), str(tmp_path), answer, json.dumps([text(answer, chunked=5)])]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=python_env(home))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["listening"], report["server_stderr"]
    said = "".join(
        line[len("Assistant: "):] for line in report["client_stdout"].splitlines() if line.startswith("Assistant: ")
    )
    assert answer in said, report
    assert "Error:" not in report["client_stdout"], report
    assert "Server will run at http://127.0.0.1:8000" in report["server_stderr"]
    assert report["server_returncode"] == 0, report["server_stderr"]
    assert report["server_stop_seconds"] < 5
    sent = report["requests"][0]["body"]["messages"]
    users = [json.dumps(m) for m in sent if m["role"] == "user"]
    assert any("Analyze this image:" in m for m in users), sent
    # A network client's image path is never read by the server (docs/security.md, S2): the
    # model is told the image was not sent.
    assert "was not sent" in users[-1] and "path/to/image.jpg" in users[-1], sent
