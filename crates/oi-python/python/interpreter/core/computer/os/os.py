"""``computer.os`` where headless: ``notify`` prints; the selected text needs a desktop."""

from ..refused import NOT_HEADLESS


class Os:
    """The operating system's user-facing helpers."""

    def __init__(self, computer):
        self.computer = computer

    def get_selected_text(self):
        """Not available in oi (headless)."""
        raise NotImplementedError("computer.os.get_selected_text is " + NOT_HEADLESS)

    def notify(self, text):
        """Shows a notification to the user."""
        print(f"[notification] {text}")
