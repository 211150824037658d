"""Open Interpreter's ``interpreter.terminal_interface`` import path: oi's terminal is the ``oi``
command (``interpreter`` and ``i`` run it); only the helpers programs import live here."""
