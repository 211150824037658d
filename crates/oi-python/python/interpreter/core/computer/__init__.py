"""``interpreter.computer``: runs code in oi's persistent language sessions, with the
original's headless computer API (``ai``, ``files``, ``skills``, ``terminal``, ``os``)."""

from .computer import Computer, Language

__all__ = ["Computer", "Language"]
