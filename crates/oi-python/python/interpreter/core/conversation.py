"""``interpreter.messages``: a plain Python list kept in step with the core's conversation.

The list is what users read, mutate and assign, as in the original. Before a turn, changes
made to it in Python are sent to the core; after (and while) a turn runs, what the core added
is copied back into the same list object. Changes are found by comparing JSON texts, so
edits inside a message dict count too.
"""

import json


def _dumps(items):
    try:
        return json.dumps(items)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"interpreter.messages must hold only dicts of strings, numbers, booleans and None: {error}"
        ) from None


class Conversation:
    """The conversation of one interpreter."""

    def __init__(self, core):
        self.core = core
        self.items = []
        self.local = "[]"
        self.remote = "[]"

    def push(self):
        """Sends the list to the core if it changed in Python since the last sync."""
        local = _dumps(self.items)
        if local != self.local:
            self.core.set_messages_json(local)
            self.local = local
            self.remote = self.core.messages_json()

    def pull(self):
        """Copies the core's conversation into the list if it changed there."""
        remote = self.core.messages_json()
        if remote != self.remote:
            self.items[:] = json.loads(remote)
            self.remote = remote
            self.local = _dumps(self.items)

    def current(self):
        """The list, up to date both ways."""
        self.push()
        self.pull()
        return self.items

    def replace(self, items):
        """Makes `items` (a list, kept as it is) the conversation; a bad message raises and
        changes nothing."""
        if not isinstance(items, list):
            raise TypeError(
                f"interpreter.messages must be a list of message dicts, not {type(items).__name__}"
            )
        local = _dumps(items)
        self.core.set_messages_json(local)
        self.items = items
        self.local = local
        self.remote = self.core.messages_json()

