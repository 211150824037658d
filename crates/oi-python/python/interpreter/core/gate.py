"""Turns on one interpreter run one at a time, whichever Python threads start them.

A ``chat()`` waits (CTRL-C still works) while another thread's turn runs. A streamed turn
whose generator sits unread — nobody is inside its ``next()`` — does not block the next
``chat()``: it is stopped, and its generator ends.
"""

import threading


class Slot:
    """The turn holding the gate."""

    def __init__(self, gate, streaming):
        self.gate = gate
        self.streaming = streaming
        self.driving = False
        self.turn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.gate.leave(self)
        return False


class Gate:
    """One turn at a time."""

    def __init__(self):
        self._busy = threading.Lock()
        self._owner_lock = threading.Lock()
        self._owner = None

    def turn(self, streaming):
        """Waits for the gate and returns the slot (a context manager)."""
        while not self._busy.acquire(timeout=0.05):
            self._supersede_idle_stream()
        slot = Slot(self, streaming)
        with self._owner_lock:
            self._owner = slot
        return slot

    def _supersede_idle_stream(self):
        with self._owner_lock:
            owner = self._owner
            if owner is None or not owner.streaming or owner.driving:
                return
            self._owner = None
        if owner.turn is not None:
            owner.turn.stop()
        self._busy.release()

    def leave(self, slot):
        """Releases the gate if `slot` still holds it."""
        with self._owner_lock:
            if self._owner is not slot:
                return
            self._owner = None
        self._busy.release()
