"""The Python front end and MCP: `interpreter.computer.mcp_servers` names a server written with
the official Python MCP SDK (crates/oi-mcp/tests/py/calc_server.py); the scripted model calls
its tool as a provider function, and `chat()` gives the call as the LMC chunks
docs/protocol.md section 11 documents (a code chunk of format `mcp` holding
`{"tool": …, "arguments": …}`, then the console output), approved like code."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from scripted import text

CALC = Path(__file__).resolve().parents[2] / "oi-mcp" / "tests" / "py" / "calc_server.py"
CALL = '{"tool": "calc__add", "arguments": {"a": 2, "b": 40}}'


# The server runs under the machine's python3 (where `pip install mcp` put the SDK), not
# necessarily this test's venv.
SERVER_PYTHON = shutil.which("python3")


def _has_mcp():
    if SERVER_PYTHON is None:
        return False
    done = subprocess.run([SERVER_PYTHON, "-c", "import mcp"], capture_output=True)
    return done.returncode == 0


def _function_call():
    return {"function_call": {"name": "calc__add", "arguments": '{"a": 2, "b": 40}'}}


@pytest.fixture
def calc(oi):
    if not _has_mcp():
        why = "python3 lacks the mcp package (pip install mcp)"
        if os.environ.get("OI_TEST_REQUIRE_ALL") == "1":
            pytest.fail(f"OI_TEST_REQUIRE_ALL=1 but {why}")
        pytest.skip(why)

    def make(replies, **settings):
        agent, model = oi(replies, **settings)
        agent.computer.mcp_servers = {"calc": {"command": SERVER_PYTHON, "args": [str(CALC)]}}
        return agent, model

    return make


def test_a_tool_call_streams_as_the_documented_chunks(calc):
    agent, model = calc([_function_call(), text("The sum is 42.")], auto_run=True)
    chunks = list(agent.chat("add 2 and 40", display=False, stream=True))
    code = [c for c in chunks if c.get("type") == "code"]
    assert code[0] == {"role": "assistant", "type": "code", "format": "mcp", "start": True}
    assert "".join(c.get("content", "") for c in code) == CALL
    assert code[-1] == {"role": "assistant", "type": "code", "format": "mcp", "end": True}
    output = [
        c for c in chunks if c.get("type") == "console" and c.get("format") == "output"
    ]
    assert "".join(c["content"] for c in output) == "42\n"
    assert agent.messages[1:3] == [
        {"role": "assistant", "type": "code", "format": "mcp", "content": CALL},
        {"role": "computer", "type": "console", "format": "output", "content": "42\n"},
    ]
    # Offered beside execute with the server's schema; the result went back as the call's.
    first = model.requests(2)[0]["body"]
    names = [t["function"]["name"] for t in first["tools"]]
    assert names == ["execute", "calc__add", "calc__fail", "calc__env"]
    add = first["tools"][1]["function"]
    assert add["description"] == "Add two integers."
    assert add["parameters"]["required"] == ["a", "b"]
    second = model.requests(2)[1]["body"]["messages"]
    assert any(m.get("role") == "tool" and m.get("content") == "42" for m in second)


def test_a_tool_call_is_asked_about_like_code_with_its_arguments(calc):
    agent, model = calc([_function_call(), text("Fine.")])
    seen = []
    agent.approve = lambda code, language: seen.append((code, language)) or False
    new = agent.chat("add 2 and 40", display=False)
    assert seen == [(CALL, "mcp")]
    assert new[0] == {"role": "assistant", "type": "code", "format": "mcp", "content": CALL}
    assert new[-1]["content"] == "I have declined to run this code."
    assert not any(m.get("type") == "console" for m in new)
