"""`chat()`: what it takes, what it returns, streaming, approval (callback, input(), reading on,
closing the generator), display, errors."""

import json
import os

import pytest
from conftest import python_env, run_python
from scripted import code, text

import interpreter as package
from interpreter import OpenInterpreter, TurnError


def test_chat_returns_the_new_messages_and_keeps_the_history(oi):
    agent, model = oi([code("python", "print(34 / 24)"), text("The result is about 1.42.")])
    new = agent.chat("What's 34/24?", display=False)
    assert new == [
        {"role": "assistant", "type": "code", "format": "python", "content": "print(34 / 24)"},
        {"role": "computer", "type": "console", "format": "output", "content": "1.4166666666666667\n"},
        {"role": "assistant", "type": "message", "content": "The result is about 1.42."},
    ]
    assert agent.messages == [{"role": "user", "type": "message", "content": "What's 34/24?"}] + new


def test_chat_takes_a_dict_and_a_list(oi):
    agent, model = oi([text("one"), text("two"), text("three")])
    agent.chat({"type": "message", "content": "a dict"}, display=False)
    assert agent.messages[0] == {"role": "user", "type": "message", "content": "a dict"}
    history = [
        {"role": "user", "type": "message", "content": "earlier"},
        {"role": "assistant", "type": "message", "content": "noted"},
        {"role": "user", "type": "message", "content": "a list"},
    ]
    new = agent.chat(history, display=False)
    assert new == [{"role": "assistant", "type": "message", "content": "two"}]
    # The list replaced the history, and is the history (the original keeps the list object).
    assert agent.messages is history
    assert history[-1] == {"role": "assistant", "type": "message", "content": "two"}
    sent = model.requests(2)[1]["body"]["messages"]
    assert [m["content"] for m in sent[1:]] == ["earlier", "noted", "a list"]


def test_messages_edited_in_place_reach_the_model(oi):
    agent, model = oi([text("first"), text("second")])
    agent.chat("hello", display=False)
    agent.messages[-1]["content"] = "edited reply"
    agent.messages.append({"role": "user", "type": "message", "content": "appended"})
    agent.chat("and now?", display=False)
    sent = [m["content"] for m in model.requests(2)[1]["body"]["messages"][1:]]
    assert sent == ["hello", "edited reply", "appended", "and now?"]


def test_bad_input_says_what_was_wrong(oi):
    agent, model = oi([])
    with pytest.raises(TypeError, match="takes a string, a message dict or a list"):
        agent.chat(42, display=False)
    with pytest.raises(ValueError, match=r"not a valid LMC message.*unknown variant `robot`"):
        agent.chat({"role": "robot", "type": "message", "content": "hi"}, display=False)
    with pytest.raises(ValueError, match=r"messages\[1\] is not a valid LMC message"):
        agent.messages = [{"role": "user", "type": "message", "content": "ok"}, {"role": "user", "message": "old format"}]
    with pytest.raises(TypeError, match="must be a list"):
        agent.messages = "hello"
    with pytest.raises(ValueError, match="only dicts of strings"):
        agent.messages = [{"role": "user", "type": "message", "content": b"bytes"}]
    with pytest.raises(Exception, match="requires a display"):
        agent.chat(display=False)
    assert agent.messages == []


def test_model_errors_raise_turn_error_and_the_session_goes_on(oi):
    agent, model = oi([{"status": 401, "body": '{"error": {"message": "bad key"}}'}, text("fine now")])
    with pytest.raises(TurnError, match="bad key") as raised:
        agent.chat("hello", display=False)
    assert (raised.value.kind, raised.value.status) == ("authentication", 401)
    assert agent.chat("again", display=False)[-1]["content"] == "fine now"


def test_a_turn_error_names_its_kind(oi):
    too_long = '{"error": {"message": "This model\'s maximum context length is 8192 tokens", "code": "context_length_exceeded"}}'
    # (A 429 is retried, so it would take the next reply too: oi-llm's tests cover it.)
    agent, model = oi([
        {"status": 400, "body": too_long},
        {"status": 400, "body": '{"error": {"message": "bad temperature"}}'},
    ])
    for kind, status in (("context_window", 400), ("upstream", 400)):
        with pytest.raises(TurnError) as raised:
            agent.chat("hello", display=False)
        assert (raised.value.kind, raised.value.status) == (kind, status), str(raised.value)


def merged(chunks):
    """Consecutive console output pieces joined (how the code's output is cut varies)."""
    out = []
    for chunk in chunks:
        if out and chunk.get("format") == "output" == out[-1].get("format") and "content" in chunk:
            out[-1] = dict(out[-1], content=out[-1]["content"] + chunk["content"])
        else:
            out.append(chunk)
    return out


def test_stream_yields_exactly_what_the_server_sends(oi):
    agent, model = oi([code("python", "print(1)"), text("Done.")])
    chunks = merged(agent.chat("go", display=False, stream=True))
    assert chunks == [
        {"role": "assistant", "type": "code", "format": "python", "start": True},
        {"role": "assistant", "type": "code", "format": "python", "content": "print(1)"},
        {"role": "assistant", "type": "code", "format": "python", "end": True},
        {
            "role": "computer",
            "type": "confirmation",
            "format": "execution",
            "content": {"type": "code", "format": "python", "content": "print(1)"},
        },
        {"role": "computer", "type": "console", "start": True},
        {"role": "computer", "type": "console", "format": "active_line", "content": 1},
        {"role": "computer", "type": "console", "format": "output", "content": "1\n"},
        {"role": "computer", "type": "console", "format": "active_line", "content": None},
        {"role": "computer", "type": "console", "end": True},
        {"role": "assistant", "type": "message", "start": True},
        {"role": "assistant", "type": "message", "content": "Done."},
        {"role": "assistant", "type": "message", "end": True},
    ]


def test_stream_with_auto_run_has_no_confirmation(oi):
    agent, model = oi([code("python", "print(1)"), text("Done.")], auto_run=True)
    kinds = [c["type"] for c in agent.chat("go", display=False, stream=True)]
    assert "confirmation" not in kinds and "console" in kinds


def test_closing_the_stream_at_the_confirmation_does_not_run_the_code(oi, tmp_path):
    marker = tmp_path / "ran"
    agent, model = oi([code("python", f"open({str(marker)!r}, 'w').write('x')"), text("Hi again.")])
    for chunk in agent.chat("write it", display=False, stream=True):
        if chunk["type"] == "confirmation":
            break
    assert not marker.exists()
    # The code message stays last (not run, not declined), and the session goes on.
    assert agent.messages[-1]["type"] == "code"
    assert agent.chat("hello", display=False)[-1]["content"] == "Hi again."
    assert not marker.exists()


def test_approve_callback_runs_declines_and_edits(oi, tmp_path):
    agent, model = oi(
        [
            code("python", "print('as written')"),
            text("ran"),
            code("python", "print('declined')"),
            code("python", "print('original')"),
            text("edited ran"),
        ]
    )
    seen = []
    agent.approve = lambda code, language: seen.append((code, language)) or True
    assert agent.chat("one", display=False)[1]["content"] == "as written\n"
    agent.approve = lambda code, language: False
    new = agent.chat("two", display=False)
    assert new[-2]["type"] == "code" and new[-1] == agent.messages[-1] == {
        "role": "user",
        "type": "message",
        "content": "I have declined to run this code.",
    }
    agent.approve = lambda code, language: "print('edited')"
    new = agent.chat("three", display=False)
    assert new[0]["content"] == "print('edited')" and new[1]["content"] == "edited\n"
    assert seen == [("print('as written')", "python")]
    agent.approve = lambda code, language: 3
    model2 = oi([code("python", "print(1)")])[1]
    agent.llm.api_base = model2.url
    with pytest.raises(TypeError, match="must return True"):
        agent.chat("four", display=False)


def test_display_asks_with_input_and_a_no_declines(model, home):
    server = model([code("shell", f"touch {home}/ran"), text("ok")])
    source = "from interpreter import interpreter\ninterpreter.chat('touch a file')\n"
    done = run_python(source, python_env(home, server.url), cwd=home, stdin="n\n")
    assert done.returncode == 0, done.stderr
    assert "Would you like to run this code? (y/n)" in done.stdout
    assert not (home / "ran").exists()
    # A declined block ends the turn: no second request (given time to arrive).
    assert len(server.requests(at_least=2, timeout=0.5)) == 1


def test_blocking_false_and_wait(oi):
    agent, model = oi([text("in the background")])
    assert agent.chat("hi", display=False, blocking=False) is None
    assert agent.wait() == [{"role": "assistant", "type": "message", "content": "in the background"}]


def test_conversations_are_saved_like_the_original(oi, tmp_path):
    agent, model = oi([text("saved")], conversation_history=True)
    agent.conversation_history_path = str(tmp_path / "conversations")
    agent.chat("keep this", display=False)
    files = os.listdir(tmp_path / "conversations")
    assert len(files) == 1 and files[0].startswith("keep__")
    assert json.loads((tmp_path / "conversations" / files[0]).read_text())[-1]["content"] == "saved"


def test_reset_clears_the_conversation_and_ends_sessions(oi):
    agent, model = oi([code("python", "x = 41"), text("set"), code("python", "print(x + 1)"), text("?")])
    agent.chat("set x", display=False)
    agent.reset()
    assert agent.messages == []
    new = agent.chat("print x", display=False)
    assert "NameError" in new[1]["content"]


def test_the_package_singleton_and_independent_instances():
    assert isinstance(package.interpreter, OpenInterpreter)
    assert package.computer is package.interpreter.computer
    a, b = OpenInterpreter(), OpenInterpreter()
    a.system_message = "A"
    assert b.system_message != "A"
    a.messages = [{"role": "user", "type": "message", "content": "only a"}]
    assert b.messages == []


def test_verbose_turns_on_the_log_of_the_model_requests(model, home):
    server = model([text("hello"), text("hello again")])
    quiet = "from interpreter import interpreter\ninterpreter.chat('hi', display=False)\n"
    done = run_python(quiet, python_env(home, server.url), cwd=home)
    assert done.returncode == 0, done.stderr
    assert "sending the model request" not in done.stderr
    loud = (
        "from interpreter import interpreter\n"
        "interpreter.verbose = True\n"
        "interpreter.chat('hi', display=False)\n"
    )
    done = run_python(loud, python_env(home, server.url), cwd=home)
    assert done.returncode == 0, done.stderr
    assert "sending the model request" in done.stderr, done.stderr
