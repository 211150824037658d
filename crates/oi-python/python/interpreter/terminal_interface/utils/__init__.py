"""Helpers importable from ``interpreter.terminal_interface.utils``, as in Open Interpreter."""
