"""Turns driven from several Python threads: the GIL is released while a turn runs, turns on
one interpreter run one at a time, an abandoned stream does not block the next turn."""

import threading
import time

from scripted import text


def test_turns_from_several_threads_on_one_interpreter_run_one_at_a_time(oi):
    agent, model = oi("calculator", auto_run=True)
    results, errors = {}, []

    def ask(i):
        try:
            results[i] = agent.chat(f"compute {i}*1000+{i}", display=False)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(1, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    for i in range(1, 5):
        assert results[i][-1]["content"] == f"The result is {i * 1001}."
    # Each turn is whole in the history: its question, its code, its output, its answer.
    messages = agent.messages
    assert len(messages) == 16
    for start in range(0, 16, 4):
        question, code, output, answer = messages[start : start + 4]
        assert question["role"] == "user" and code["type"] == "code"
        n = int(question["content"].split()[1].split("*")[0])
        assert output["content"] == f"{n * 1001}\n" and answer["content"] == f"The result is {n * 1001}."


def test_other_threads_run_while_a_turn_waits(oi):
    agent, model = oi([text("Slow reply", chunked=2, stall_after=[3, 1]), text("next")])
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    ticker = threading.Thread(target=tick)
    ticker.start()
    try:
        agent.chat("wait", display=False)
    finally:
        done.set()
        ticker.join()
    assert len(ticks) > 50, "the GIL was held while the turn waited for the model"


def test_an_abandoned_stream_does_not_block_the_next_turn(oi):
    agent, model = oi([text("one two three", chunked=3), text("fresh")])
    stream = agent.chat("first", display=False, stream=True)
    next(stream)
    next(stream)  # left open, nobody reading
    finished = []
    worker = threading.Thread(target=lambda: finished.append(agent.chat("second", display=False)))
    worker.start()
    worker.join(30)
    assert finished and finished[0][-1]["content"] == "fresh"
    assert list(stream) == []  # the old stream was stopped


def test_instances_in_threads_run_in_parallel(model):
    from interpreter import OpenInterpreter

    server = model("calculator")
    agents = []
    for _ in range(3):
        agent = OpenInterpreter(auto_run=True, conversation_history=False)
        agent.llm.api_base, agent.llm.api_key, agent.llm.supports_functions = server.url, "x", True
        agent.computer.run("python", "pass")  # sessions started
        agents.append(agent)
    try:
        results = [None] * 3
        threads = [
            threading.Thread(target=lambda i=i: results.__setitem__(i, agents[i].chat("compute 7*6", display=False)))
            for i in range(3)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert all(r and r[-1]["content"] == "The result is 42." for r in results)
    finally:
        for agent in agents:
            agent.computer.terminate()
