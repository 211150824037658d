"""The headless computer API: `interpreter.computer.ai` through oi's core (the scripted model
answers), `files`, `skills`, `terminal`, `os`, the refused desktop tools, the package layout
the original's own tests import, and the API inside the code's session through a turn."""

import os
from unittest import mock

import pytest
from scripted import code, text

from interpreter import OpenInterpreter
from interpreter.core.computer.computer import Computer
from interpreter.core.computer.files.files import Files


def test_the_original_layout_and_tool_list():
    computer = Computer(mock.Mock())
    assert len(computer._get_all_computer_tools_list()) == 15
    listed = computer._get_all_computer_tools_signature_and_description()
    assert len(listed) > 64
    assert "computer.files.edit(path, original_text, replacement_text) # Edits a file" in "\n".join(listed)
    section = computer.system_message
    assert section.startswith("# THE COMPUTER API")
    assert "computer.ai.summarize(text)" in section
    assert "computer.mouse" not in section


def test_files_edit_and_search(tmp_path):
    files = Files(mock.Mock())
    note = tmp_path / "note.txt"
    note.write_text("a draft note\n")
    files.edit(str(note), "draft", "final")
    assert note.read_text() == "a final note\n"
    with pytest.raises(ValueError, match="Original text not found. Did you mean one of these?"):
        files.edit(str(note), "fnal", "x")
    assert files.search("FINAL", paths=[str(tmp_path)]) == [f"{note}:1: a final note"]


def test_ai_asks_the_configured_model_through_oi(oi):
    agent, model = oi([text("A short summary."), text("Four.")])
    assert agent.computer.ai.summarize("words " * 100) == "A short summary."
    assert agent.computer.ai.chat("2+2?") == "Four."
    sent = model.requests(2)
    assert "summarize it into a concise abstract paragraph" in str(sent[0]["body"]["messages"])
    assert sent[1]["body"]["messages"][0]["content"] == "You are a helpful AI assistant."
    assert "tools" not in sent[1]["body"] or not sent[1]["body"]["tools"]


def test_skills_save_list_search_and_import(tmp_path):
    agent = OpenInterpreter()
    try:
        agent.computer.skills.path = tmp_path
        path = agent.computer.skills.save("double", "def double(x):\n    return 2 * x\n")
        assert path == str(tmp_path / "double.py")
        with pytest.raises(ValueError, match="Python identifier"):
            agent.computer.skills.save("../evil", "x = 1")
        assert agent.computer.skills.list() == ["double()"]
        assert agent.computer.skills.search("2 *") == ["double()"]
        assert agent.computer.skills.search("nothing") == []
        assert agent.computer.skills.import_skills() == ["double"]
        assert agent.computer.run("python", "print(double(21))")[0]["content"] == "42\n"
    finally:
        agent.computer.terminate()


def test_terminal_os_and_refused_tools(capsys):
    agent = OpenInterpreter()
    try:
        assert agent.computer.terminal.run("shell", "echo hi")[0]["content"] == "hi\n"
        agent.computer.os.notify("done")
        assert "[notification] done" in capsys.readouterr().out
        for call in (
            lambda: agent.computer.display.screenshot(),
            lambda: agent.computer.keyboard.write("x"),
            lambda: agent.computer.mail.send("a", "b", "c"),
            lambda: agent.computer.os.get_selected_text(),
            lambda: agent.computer.screenshot(),
        ):
            with pytest.raises(NotImplementedError, match="not available in oi: headless"):
                call()
    finally:
        agent.computer.terminate()


def test_the_session_imports_the_api_and_summarizes_through_oi(oi):
    agent, model = oi(
        [
            code("python", "print('SUMMARY', computer.ai.summarize('long ' * 40))"),
            text("Short."),
            text("Done."),
        ],
        auto_run=True,
    )
    agent.computer.import_computer_api = True
    agent.chat("summarize", display=False)
    outputs = [m["content"] for m in agent.messages if m.get("type") == "console"]
    assert "SUMMARY Short.\n" in outputs
    sent = model.requests(3)
    assert "# THE COMPUTER API" in sent[0]["body"]["messages"][0]["content"]


def test_computer_run_imports_the_api_while_it_is_on(tmp_path):
    agent = OpenInterpreter()
    try:
        assert agent.computer.run("python", "print('computer' in globals())")[0]["content"] == "False\n"
        agent.computer.import_computer_api = True
        (tmp_path / "a.txt").write_text("needle here\n")
        out = agent.computer.run(
            "python", f"print(type(computer).__name__, computer.files.search('NEEDLE', paths=[{str(tmp_path)!r}]))"
        )
        assert out[0]["content"] == f"Computer ['{tmp_path}/a.txt:1: needle here']\n"
    finally:
        agent.computer.terminate()
