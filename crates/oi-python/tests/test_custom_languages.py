"""Custom languages as in the original's docs (a class with `name`, `run`, `stop`,
`terminate`; the E2B example), run by oi from the respond loop (issue 25)."""

from scripted import text


class _Recorder:
    """A custom language as in the original's docs (the E2B example), recording its calls."""

    name = "python"
    calls = []

    def __init__(self, computer):
        _Recorder.calls.append(("init", computer is not None))

    def run(self, code):
        _Recorder.calls.append(("run", code))
        yield {"type": "console", "format": "output", "content": "remote: "}
        yield {"type": "console", "format": "output", "content": code.upper() + "\n"}

    def stop(self):
        _Recorder.calls.append(("stop",))

    def terminate(self):
        _Recorder.calls.append(("terminate",))


def test_a_custom_language_named_like_a_built_in_replaces_it_in_the_respond_loop(oi):
    from scripted import code

    _Recorder.calls.clear()
    agent, model = oi([code("python", "print('hi')"), text("Done.")], auto_run=True)
    agent.computer.languages = [_Recorder]
    assert agent.computer.languages[0] is _Recorder
    new = agent.chat("run it", display=False)
    assert {"role": "computer", "type": "console", "format": "output",
            "content": "remote: PRINT('HI')\n"} in new
    assert ("run", "print('hi')") in _Recorder.calls and _Recorder.calls[0] == ("init", True)
    # The model was told about the language and saw its output.
    second = model.requests(2)[1]["body"]["messages"]
    assert any("PRINT('HI')" in str(m.get("content")) for m in second)
    # computer.run goes to it too; terminate() reaches the object.
    assert agent.computer.run("python", "x") == [
        {"type": "console", "format": "output", "content": "remote: X\n"}
    ]
    agent.computer.terminate()
    assert ("terminate",) in _Recorder.calls


def test_a_custom_language_beside_the_built_ins(oi):
    class Shouty:
        name = "shout"

        def run(self, code):
            yield {"type": "console", "format": "output", "content": code + "!"}

        def stop(self):
            pass

        def terminate(self):
            pass

    agent, _ = oi([])
    agent.computer.languages = [Shouty] + [l for l in agent.computer.languages if l.name == "Python"]
    names = [l.name for l in agent.computer.languages]
    assert names == ["shout", "Python"]
    assert agent.computer.run("shout", "hey")[0]["content"] == "hey!"
    assert agent.computer.run("python", "print(2)")[0]["content"] == "2\n"
