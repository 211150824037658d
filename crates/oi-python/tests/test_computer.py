"""`interpreter.computer`: run(), terminate(), languages."""

import pytest
from scripted import code, text

from interpreter import OpenInterpreter


def test_run_returns_output_dicts():
    agent = OpenInterpreter()
    try:
        assert agent.computer.run("python", "print(1)") == [
            {"type": "console", "format": "output", "content": "1\n"}
        ]
        agent.computer.run("python", "x = 5")
        assert agent.computer.run("python", "print(x)")[0]["content"] == "5\n"
        assert agent.computer.run("shell", "echo hi") == [{"type": "console", "format": "output", "content": "hi\n"}]
        # Streamed: the running line too (as the original), then the output as it comes.
        streamed = list(agent.computer.run("python", "print(2)", stream=True))
        assert [c for c in streamed if c["format"] == "output"] == [
            {"type": "console", "format": "output", "content": "2\n"}
        ]
        assert {"type": "console", "format": "active_line", "content": 1} in streamed
        agent.computer.terminate()
        assert "NameError" in agent.computer.run("python", "print(x)")[0]["content"]
    finally:
        agent.computer.terminate()


def test_languages_are_listed_and_can_be_restricted(oi):
    agent, model = oi([code("shell", "echo no"), text("ok")], auto_run=True)
    names = [language.name for language in agent.computer.languages]
    assert {"Python", "Shell", "JavaScript", "Ruby", "R"} <= set(names)
    shell = [l for l in agent.computer.languages if l.name == "Shell"][0]
    assert "bash" in shell.aliases
    agent.computer.languages = [l for l in agent.computer.languages if l.name == "Python"]
    assert [l.name for l in agent.computer.languages] == ["Python"]
    new = agent.chat("run some shell", display=False)
    assert new[1]["content"] == "`shell` disabled or not supported."
    tools = model.requests(1)[0]["body"]["tools"]
    assert tools[0]["function"]["parameters"]["properties"]["language"]["enum"] == ["python"]
    assert agent.computer.run("shell", "echo x")[0]["content"] == "`shell` disabled or not supported."
    with pytest.raises(ValueError, match="oi cannot run cobol"):
        agent.computer.languages = ["python", "cobol"]
    agent.computer.languages = None
    assert len(agent.computer.languages) == len(names)
