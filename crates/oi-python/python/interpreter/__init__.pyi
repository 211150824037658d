"""Open Interpreter's Python API, with oi's core underneath."""

from .core.async_core import AsyncInterpreter as AsyncInterpreter
from .core.async_core import Server as Server
from .core.computer import Computer
from .core.core import OpenInterpreter as OpenInterpreter
from .core.core import TurnError as TurnError

interpreter: OpenInterpreter
"""A ready interpreter: ``from interpreter import interpreter``."""
computer: Computer
"""``interpreter.computer``."""
