"""``computer.terminal``: runs code in oi's persistent language sessions."""


class Terminal:
    """``run(language, code)`` as ``computer.run``."""

    def __init__(self, computer):
        self.computer = computer

    def run(self, language, code, stream=False, display=False):
        """Runs python or shell code and returns its output as a list of messages."""
        return self.computer.run(language, code, stream=stream, display=display)
