"""Attributes with the original's names, read and written; constructor keywords; unknown names
raise AttributeError naming the nearest known one; wrong values are refused with the setting
named."""

import pytest

from interpreter import OpenInterpreter

DEFAULTS = {
    "auto_run": False,
    "loop": False,
    "max_output": 2800,
    "offline": False,
    "safe_mode": "off",
    "conversation_history": True,
    "custom_instructions": "",
    "verbose": False,
    "shrink_images": True,
}

CHANGES = {
    "auto_run": True,
    "loop": True,
    "max_output": 100,
    "offline": True,
    "safe_mode": "ask",
    "conversation_history": False,
    "custom_instructions": "Prefer Python.",
    "system_message": "You are a test.",
    "conversation_history_path": "/tmp/oi-conversations",
    "conversation_filename": "mine.json",
    "code_output_sender": "assistant",
}

LLM = {
    "model": "openai/local",
    "api_base": "http://127.0.0.1:1/v1",
    "api_key": "sk-abc",
    "api_version": "2024-02-01",
    "temperature": 0.7,
    "context_window": 16000,
    "max_tokens": 100,
    "supports_functions": False,
    "supports_vision": True,
    "max_budget": 0.01,
}


def test_defaults_are_the_originals():
    agent = OpenInterpreter()
    for name, value in DEFAULTS.items():
        assert getattr(agent, name) == value, name
    assert agent.system_message.startswith("You are Open Interpreter")
    assert agent.llm.model == "gpt-4o" and agent.llm.temperature == 0.0
    assert agent.llm.api_base is None and agent.llm.supports_functions is None
    assert agent.messages == []


def test_every_attribute_reads_back_what_was_written():
    agent = OpenInterpreter()
    for name, value in CHANGES.items():
        setattr(agent, name, value)
        assert getattr(agent, name) == value, name
    for name, value in LLM.items():
        setattr(agent.llm, name, value)
        assert getattr(agent.llm, name) == value, name


def test_constructor_keywords():
    agent = OpenInterpreter(auto_run=True, verbose=True, max_output=10, llm={"model": "openai/x"})
    assert agent.auto_run and agent.verbose and agent.max_output == 10
    assert agent.llm.model == "openai/x"
    messages = [{"role": "user", "type": "message", "content": "hi"}]
    assert OpenInterpreter(messages=messages).messages == messages


def test_attributes_the_original_has_but_oi_does_not_act_on_are_kept():
    agent = OpenInterpreter(in_terminal_interface=True)
    assert agent.in_terminal_interface is True
    agent.multi_line = False
    assert agent.multi_line is False
    with pytest.raises(ValueError, match="does not drive the mouse"):
        agent.os = True


@pytest.mark.parametrize(
    "name, nearest",
    [("auto_rum", "auto_run"), ("system_mesage", "system_message"), ("max_budgett", "llm.max_budget"), ("model", "llm.model")],
)
def test_unknown_attributes_name_the_nearest(name, nearest):
    agent = OpenInterpreter()
    with pytest.raises(AttributeError, match=f"did you mean '{nearest}'"):
        setattr(agent, name, 1)
    with pytest.raises(AttributeError, match=f"did you mean '{nearest}'"):
        getattr(agent, name)
    with pytest.raises(TypeError, match="did you mean"):
        OpenInterpreter(**{name: 1})


def test_unknown_llm_and_computer_attributes():
    agent = OpenInterpreter()
    with pytest.raises(AttributeError, match="did you mean 'temperature'"):
        agent.llm.temprature = 1
    with pytest.raises(AttributeError, match="not available in oi"):
        agent.llm.completions = lambda **kw: None
    with pytest.raises(AttributeError, match="did you mean 'terminate'"):
        agent.computer.terminat()
    with pytest.raises(NotImplementedError, match=r"computer\.mouse\.click is not available in oi: headless"):
        agent.computer.mouse.click("OK")


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("auto_run", "yes", r"`auto_run` cannot be \"yes\": invalid type: string \"yes\", expected a boolean"),
        ("max_output", -1, "`max_output` cannot be -1"),
        ("safe_mode", "sometimes", "`safe_mode` cannot be \"sometimes\": unknown variant"),
    ],
)
def test_wrong_values_are_refused_and_nothing_changes(name, value, message):
    agent = OpenInterpreter()
    before = getattr(agent, name)
    with pytest.raises(ValueError, match=message):
        setattr(agent, name, value)
    assert getattr(agent, name) == before


def test_wrong_llm_values():
    agent = OpenInterpreter()
    with pytest.raises(ValueError, match="`llm.temperature` cannot be"):
        agent.llm.temperature = "hot"
    with pytest.raises(TypeError, match=r"llm.context_window is a set"):
        agent.llm.context_window = {1, 2}
