"""AsyncInterpreter: input()/output() (spec c.5), respond(), and oi's server started in the
Python process — from a running event loop (the pattern of spec f.6) and blocking — with a
websockets client and the official openai client."""

import asyncio
import json
import socket
import threading
import time
import urllib.request

import pytest
from scripted import code, text



def is_complete(chunk):
    """Whether `chunk` is the server's `complete` status (other keys, such as an id, may come
    with it)."""
    return (chunk.get("role"), chunk.get("type"), chunk.get("content")) == ("server", "status", "complete")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def ai(model, monkeypatch):
    """``ai(replies, **settings)``: an AsyncInterpreter on a scripted model."""
    from interpreter import AsyncInterpreter

    made = []

    def make(replies, **settings):
        server = model(replies)
        interpreter = AsyncInterpreter(conversation_history=False, **settings)
        interpreter.llm.api_base = server.url
        interpreter.llm.api_key = "x"
        interpreter.llm.supports_functions = True
        made.append(interpreter)
        return interpreter, server

    yield make
    for interpreter in made:
        interpreter.server.stop()
        interpreter.computer.terminate()


async def send_message(ai, content):
    await ai.input({"role": "user", "type": "message", "start": True})
    await ai.input({"role": "user", "type": "message", "content": content})
    await ai.input({"role": "user", "type": "message", "end": True})


async def until_complete(ai):
    chunks = []
    async for chunk in ai.output():
        if is_complete(chunk):
            return chunks
        chunks.append(chunk)


def test_deep_import_paths():
    from interpreter import AsyncInterpreter as top
    from interpreter.core.async_core import AsyncInterpreter, Server
    from interpreter.core.core import OpenInterpreter

    assert top is AsyncInterpreter and issubclass(AsyncInterpreter, OpenInterpreter)
    assert Server.DEFAULT_PORT == 8000


def test_input_output_and_go(ai):
    agent, model = ai("calculator")

    async def main():
        await send_message(agent, "compute 6*7")
        first = await until_complete(agent)
        assert first[-1]["type"] == "confirmation"
        assert first[-1]["content"] == {"type": "code", "format": "python", "content": "print(6*7)"}
        # The JSON text of a chunk works too; `go` runs the block that waits.
        for chunk in ({"start": True}, {"content": "go"}, {"end": True}):
            await agent.input(json.dumps({"role": "user", "type": "command", **chunk}))
        second = await until_complete(agent)
        outputs = "".join(c.get("content", "") for c in second if c.get("format") == "output")
        assert outputs == "42\n"
        reply = "".join(c.get("content", "") for c in second if c.get("type") == "message" and "content" in c)
        assert reply == "The result is 42."

    asyncio.run(main())
    assert agent.messages[-1] == {"role": "assistant", "type": "message", "content": "The result is 42."}


def test_await_output_and_cancelled_waits_lose_nothing(ai):
    agent, model = ai([text("hello there")])

    async def main():
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(agent.output(), 0.05)  # nothing yet: cancelled
        await send_message(agent, "hi")
        chunks = []
        while True:
            chunk = await agent.output()
            if is_complete(chunk):
                break
            chunks.append(chunk)
        return chunks

    chunks = asyncio.run(main())
    assert chunks == [
        {"role": "assistant", "type": "message", "start": True},
        {"role": "assistant", "type": "message", "content": "hello there"},
        {"role": "assistant", "type": "message", "end": True},
    ]


def test_bad_chunks_say_what_was_wrong(ai):
    agent, model = ai([])

    async def main():
        with pytest.raises(TypeError, match="takes a chunk dict"):
            await agent.input(["not", "a", "chunk"])
        with pytest.raises(ValueError, match="not JSON"):
            await agent.input("{oops")
        with pytest.raises(ValueError, match="unknown command"):
            for chunk in ({"start": True}, {"content": "jump"}, {"end": True}):
                await agent.input({"role": "user", "type": "command", **chunk})

    asyncio.run(main())


def test_respond_answers_the_conversation_as_it_is(ai):
    agent, model = ai([code("python", "print(2**10)"), text("1024 it is.")])
    agent.messages = [{"role": "user", "type": "message", "content": "two to the tenth?"}]

    async def main():
        worker = threading.Thread(target=agent.respond, kwargs={"run_code": True})
        worker.start()
        chunks = await until_complete(agent)
        worker.join(30)
        return chunks

    chunks = asyncio.run(main())
    assert "".join(c.get("content", "") for c in chunks if c.get("format") == "output") == "1024\n"
    assert agent.messages[-1]["content"] == "1024 it is."


def test_server_from_a_running_loop_with_websockets_and_openai(ai, monkeypatch):
    """Spec f.6: `asyncio.create_task(ai.server.run())`, then clients connect to
    ws://{ai.server.host}:{ai.server.port}/ — the loop is never blocked."""
    import openai
    import websockets

    port = free_port()
    monkeypatch.setenv("INTERPRETER_PORT", str(port))
    agent, model = ai("calculator", auto_run=True)
    assert (agent.server.host, agent.server.port) == ("127.0.0.1", port)

    async def main():
        task = asyncio.create_task(agent.server.run())
        beats = []

        async def heartbeat():
            while True:
                beats.append(time.monotonic())
                await asyncio.sleep(0.01)

        beating = asyncio.create_task(heartbeat())
        async with websockets.connect(f"ws://{agent.server.host}:{agent.server.port}/") as ws:
            await ws.send(json.dumps({"role": "user", "type": "message", "start": True}))
            await ws.send(json.dumps({"role": "user", "type": "message", "content": "compute 239023*79043"}))
            await ws.send(json.dumps({"role": "user", "type": "message", "end": True}))
            received = []
            while not is_complete(chunk := json.loads(await ws.recv())):
                received.append(chunk)
        client = openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/openai", api_key="unused")
        completion = await client.chat.completions.create(
            model="oi", messages=[{"role": "user", "content": "compute 6*7"}]
        )
        beating.cancel()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return received, completion.choices[0].message.content, beats

    received, answer, beats = asyncio.run(main())
    outputs = "".join(c.get("content", "") for c in received if c.get("format") == "output")
    assert outputs == "18893094989\n"
    assert "42" in answer
    assert len(beats) > 5, "the event loop was blocked while serving"
    # Cancelling the task stopped the server.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and agent.server.running:
        time.sleep(0.01)
    assert not agent.server.running
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_blocking_server_run_and_stop(ai):
    agent, model = ai("calculator")
    port = free_port()
    failures = []

    def serve():
        try:
            agent.server.run(port=port)
        except BaseException as error:  # pragma: no cover - reported below
            failures.append(error)

    worker = threading.Thread(target=serve)
    worker.start()
    deadline = time.monotonic() + 10
    body = None
    while time.monotonic() < deadline and body is None:
        try:
            body = urllib.request.urlopen(f"http://127.0.0.1:{port}/heartbeat", timeout=1).read()
        except OSError:
            time.sleep(0.02)
    assert json.loads(body) == {"status": "alive"}
    agent.server.stop()
    worker.join(10)
    assert not worker.is_alive() and not failures


def test_server_options_and_refusals(ai, monkeypatch):
    agent, model = ai("calculator")
    with pytest.raises(TypeError, match="did you mean 'sandbox'"):
        agent.server.run(port=free_port(), sandbx="workspace")
    with pytest.raises(ValueError, match='sandbox must be "off", "workspace" or "readonly"'):
        agent.server.run(port=free_port(), sandbox="everything")
    with pytest.raises(TypeError, match="max_sessions must be a whole number"):
        agent.server.run(port=free_port(), max_sessions="many")
    monkeypatch.delenv("INTERPRETER_API_KEY", raising=False)
    with pytest.raises(OSError, match="INTERPRETER_API_KEY"):
        agent.server.run(host="0.0.0.0", port=free_port())
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    with pytest.raises(OSError, match="cannot listen"):
        agent.server.run(port=taken.getsockname()[1])
    taken.close()
    with pytest.raises(AttributeError, match=r"server.app is not available in oi.*not FastAPI"):
        agent.server.app


def test_server_port_from_the_environment_must_be_a_number(monkeypatch):
    from interpreter import AsyncInterpreter

    monkeypatch.setenv("INTERPRETER_PORT", "eighty")
    with pytest.raises(ValueError, match="INTERPRETER_PORT=eighty is not a port number"):
        AsyncInterpreter()
