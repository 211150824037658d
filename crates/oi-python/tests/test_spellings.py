"""The docs' other spellings of settings, and the coercions the original tolerates (issue 25)."""

from scripted import text

from interpreter import OpenInterpreter


def test_the_docs_spellings_of_settings_are_accepted(caplog):
    import logging

    agent = OpenInterpreter()
    agent.max_budget = 0.01  # docs/usage/python/budget-manager.mdx
    assert agent.llm.max_budget == 0.01 and agent.max_budget == 0.01
    agent.llm.max_output = 1000  # docs/settings/all-settings.mdx
    assert agent.max_output == 1000 and agent.llm.max_output == 1000
    with caplog.at_level(logging.INFO, logger="interpreter"):
        agent.anonymized_telemetry = False
    assert agent.disable_telemetry is True and agent.anonymized_telemetry is False
    assert "oi sends no telemetry" in caplog.text
    agent.llm.execution_instructions = False  # the talk-to-your-database notebook
    assert agent.llm.execution_instructions == ""
    made = OpenInterpreter(max_budget=0.5, anonymized_telemetry=True)
    assert made.llm.max_budget == 0.5 and made.disable_telemetry is False


def test_numbers_given_as_text_are_coerced_and_nonsense_still_refused():
    import pytest

    agent = OpenInterpreter()
    agent.llm.context_window = "8000"
    assert agent.llm.context_window == 8000
    agent.llm.max_tokens = 1000.0
    assert agent.llm.max_tokens == 1000
    agent.max_output = "2000"
    assert agent.max_output == 2000
    agent.llm.max_budget = "0.25"
    assert agent.llm.max_budget == 0.25
    with pytest.raises(ValueError, match="context_window"):
        agent.llm.context_window = "a lot"
    assert agent.llm.context_window == 8000


def test_execution_instructions_off_reach_no_prompt(oi):
    agent, model = oi([text("hi")])
    agent.llm.supports_functions = False
    agent.llm.execution_instructions = False
    agent.chat("hello", display=False)
    system = model.requests(1)[0]["body"]["messages"][0]["content"]
    assert "write a markdown code block" not in system
