"""``computer.ai``: the configured model asked through oi's core (its settings, its key, its
spend and ``max_budget``), as the original's ``chat``, ``query`` and ``summarize``."""


class Ai:
    """Asks the configured language model (text only)."""

    def __init__(self, computer):
        self.computer = computer

    def _ask(self, op, text, query=""):
        return self.computer._core.computer_api(op, str(text), str(query))

    def chat(self, text, base64=None):
        """Asks the language model `text` and returns its answer."""
        if base64 is not None:
            raise NotImplementedError("computer.ai.chat(base64=...) is not available in oi: text only")
        return self._ask("ai.chat", text)

    def query(self, text, query, custom_reduce_query=None):
        """Asks `query` of a long `text`, chunk by chunk, and returns the combined answer."""
        return self._ask("ai.query", text, query)

    def summarize(self, text):
        """Summarizes a long text into a concise paragraph."""
        return self._ask("ai.summarize", text)
