"""``AsyncInterpreter`` and its ``Server``: Open Interpreter's chunk-in, chunk-out API and the
WebSocket/HTTP server, over oi's core and oi's own server (the same protocol, environment
variables and flags as ``oi-server``).

    ai = AsyncInterpreter()
    await ai.input({"role": "user", "type": "message", "start": True})
    await ai.input({"role": "user", "type": "message", "content": "hi"})
    await ai.input({"role": "user", "type": "message", "end": True})
    async for chunk in ai.output():   # or: chunk = await ai.output()
        ...

    ai.server.run(port=8000)          # blocks; inside a running event loop it returns a
                                      # coroutine that serves without blocking the loop
"""

import asyncio
import collections
import datetime
import json
import os

from .. import _oi
from . import names
from .core import OpenInterpreter

SERVER_OPTIONS = tuple(_oi.SERVER_OPTIONS)


def _settle(future, value, error, leftovers=None):
    """Resolves `future` in its loop's thread; a value whose future was cancelled meanwhile
    is kept in `leftovers` (an output chunk must not be lost)."""
    if future.done():
        if leftovers is not None and error is None:
            leftovers.append(value)
        return
    if error is not None:
        future.set_exception(ValueError(error))
    else:
        future.set_result(value)


async def _call(start, *args, leftovers=None):
    """Runs a callback-style core call (``start(*args, callback) -> Pending``) as a coroutine;
    cancelling the coroutine cancels the work."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def done(value, error):
        loop.call_soon_threadsafe(_settle, future, value, error, leftovers)

    pending = start(*args, done)
    try:
        return await future
    except asyncio.CancelledError:
        pending.cancel()
        raise


class _Output:
    """What ``ai.output()`` returns: await it for the next chunk, or iterate it with
    ``async for`` (it never ends; stop at ``{"role": "server", "type": "status", "content":
    "complete"}``)."""

    def __init__(self, interpreter):
        self._interpreter = interpreter

    def __await__(self):
        return self._interpreter._next_output().__await__()

    def __aiter__(self):
        return self

    async def __anext__(self):
        return await self._interpreter._next_output()


class AsyncInterpreter(OpenInterpreter):
    """An interpreter driven by LMC chunks (spec c.5), with a server: ``input()``,
    ``output()``, ``respond()`` and ``server.run()``. Every ``OpenInterpreter`` attribute and
    method works as well, on the same conversation."""

    _extra_attributes = frozenset(
        {"print", "require_acknowledge", "id", "context_mode", "server", "stop_event", "respond_thread"}
    )

    def __init__(self, *args, **kwargs):
        if args:
            raise TypeError("AsyncInterpreter() takes keyword arguments only")
        kwargs.setdefault("_workers", 2)
        super().__init__(**kwargs)
        object.__setattr__(self, "_async", self._core.async_core())
        object.__setattr__(self, "_leftovers", collections.deque())
        self.print = False
        self.require_acknowledge = os.getenv("INTERPRETER_REQUIRE_ACKNOWLEDGE", "False").lower() == "true"
        self.id = os.getenv("INTERPRETER_ID", datetime.datetime.now().timestamp())
        self.context_mode = False
        self.server = Server(self)

    async def input(self, chunk):
        """Takes one user chunk — a dict, or its JSON text: ``start`` interrupts a running turn
        and opens a message, ``content`` extends it, ``end`` starts the turn; a ``command``
        message ``stop`` stops the turn, ``go`` runs the code block waiting for approval."""
        if isinstance(chunk, (bytes, bytearray)):
            raise TypeError("input() takes a chunk dict or its JSON text, not bytes")
        if isinstance(chunk, str):
            try:
                chunk = json.loads(chunk)
            except ValueError as error:
                raise ValueError(f"input() got text that is not JSON: {error}") from None
        if not isinstance(chunk, dict):
            raise TypeError(f"input() takes a chunk dict, not {type(chunk).__name__}")
        if "end" in chunk:
            self._conversation.push()
        await _call(self._async.input, chunk)

    def output(self):
        """The next outgoing chunk: ``await ai.output()``, or ``async for chunk in
        ai.output()``. Chunks are the turn's framed LMC chunks (confirmations included),
        ``error`` chunks, and ``complete`` after each turn."""
        return _Output(self)

    async def _next_output(self):
        if self._leftovers:
            return self._leftovers.popleft()
        chunk = await _call(self._async.output, leftovers=self._leftovers)
        if self.print and chunk.get("content") is not None:
            print(chunk)
        return chunk

    def respond(self, run_code=None):
        """Answers the conversation as it is (blocking; usually in a thread), putting the
        chunks on the output. With `run_code` (default: ``auto_run``) the first code block
        runs; otherwise the turn ends at it, after its confirmation chunk."""
        if run_code is None:
            run_code = bool(self.auto_run)
        self._conversation.push()
        try:
            self._async.respond(bool(run_code))
        finally:
            self._conversation.pull()

    async def stop(self):
        """Stops the running turn (its code is killed)."""
        await _call(self._async.stop)

    def accumulate(self, chunk):
        """Not available: use ``await ai.input(chunk)``, which accumulates user chunks."""
        raise NotImplementedError("accumulate() is not available in oi: use `await ai.input(chunk)`")


def _env_port():
    text = os.getenv("INTERPRETER_PORT", "").strip()
    if not text:
        return Server.DEFAULT_PORT
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"INTERPRETER_PORT={text} is not a port number: use e.g. 8000") from None


class Server:
    """oi's WebSocket/HTTP server (the protocol of ``oi-server``) for an ``AsyncInterpreter``.

    ``host``/``port`` come from the arguments, then ``INTERPRETER_HOST``/``INTERPRETER_PORT``,
    then 127.0.0.1:8000. Each connection's session gets its own interpreter with the
    AsyncInterpreter's settings at the time ``run()`` is called."""

    DEFAULT_HOST = "127.0.0.1"
    DEFAULT_PORT = 8000

    def __init__(self, async_interpreter, host=None, port=None):
        self.async_interpreter = async_interpreter
        self.host = host or os.getenv("INTERPRETER_HOST", "").strip() or self.DEFAULT_HOST
        self.port = port or _env_port()
        self._handle = None
        self._stopping = False

    def run(self, host=None, port=None, retries=5, **options):
        """Serves until stopped. Outside a running event loop it blocks until CTRL-C (or
        ``stop()``); inside one it starts serving at once and returns a coroutine to await (or
        wrap in ``asyncio.create_task``) — cancelling that stops the server.

        `options` are oi-server's flags with underscores: ``sandbox="workspace"``,
        ``deny_network=True``, ``queue=True``, ``allow_network_auto_run=True``, …"""
        for key in options:
            if key not in SERVER_OPTIONS:
                raise TypeError(
                    f"run() got an unexpected option {key!r}" + names.hint(key, SERVER_OPTIONS)
                )
        if host:
            self.host = host
        if port:
            self.port = port
        handle = self._start(options)
        if _loop_running():
            return self._serve_until_stopped(handle)
        handle.wait()
        return None

    def _start(self, options):
        interpreter = self.async_interpreter
        self._stopping = False
        handle = interpreter._core.serve(str(self.host), int(self.port), dict(options))
        self._handle = handle
        if self._stopping:  # stop() came while the server was starting
            handle.stop()
        return handle

    async def _serve_until_stopped(self, handle):
        try:
            await _call(handle.when_stopped)
        except asyncio.CancelledError:
            handle.stop()
            raise

    def stop(self):
        """Stops the server started by ``run()`` (also while it is starting)."""
        self._stopping = True
        if self._handle is not None:
            self._handle.stop()

    @property
    def running(self):
        """Whether the server is serving."""
        return self._handle is not None and self._handle.running

    @property
    def app(self):
        """Not available: oi's server is not a FastAPI app (see docs/differences.md)."""
        raise AttributeError(
            "server.app is not available in oi: oi serves with its own server, not FastAPI; "
            "run it with server.run() and put your own routes in front of it"
        )


def _loop_running():
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
