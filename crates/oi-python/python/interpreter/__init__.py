"""Open Interpreter's Python API, with oi's core underneath.

    from interpreter import interpreter

    interpreter.chat("Plot AAPL and META's normalized stock prices")  # one turn
    interpreter.chat()                                                # an interactive chat

``interpreter`` is a ready :class:`OpenInterpreter`; make more with ``OpenInterpreter()``.
``AsyncInterpreter`` (chunks in, chunks out) and its ``Server`` load on first use, so importing
this package takes milliseconds: no runtime, no model client and no code session starts
before they are needed.
"""

from .core.core import OpenInterpreter, TurnError

interpreter = OpenInterpreter()
computer = interpreter.computer

__all__ = [
    "AsyncInterpreter",
    "OpenInterpreter",
    "Server",
    "TurnError",
    "computer",
    "interpreter",
]


def __getattr__(name):
    # The async face imports asyncio (tens of milliseconds): only when asked for.
    if name in ("AsyncInterpreter", "Server"):
        from .core import async_core

        return getattr(async_core, name)
    raise AttributeError(f"module 'interpreter' has no attribute {name!r}")
