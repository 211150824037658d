"""The classes behind ``interpreter``: ``core.OpenInterpreter`` and ``async_core.AsyncInterpreter``
(the deep import paths existing code uses)."""
