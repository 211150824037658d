"""Token counts and prompt prices, as Open Interpreter's
``interpreter.terminal_interface.utils.count_tokens``, with oi's tokenizer and model table
underneath (no ``tiktoken`` or ``litellm`` needed).

Models without a tokenizer in oi are counted with GPT-4's, as the original does. A price oi
does not know counts as 0, as the original's ``token_cost`` (``%tokens`` in the ``oi`` command
says "unknown" instead).
"""

from ... import _oi

__all__ = ["count_tokens", "token_cost", "count_messages_tokens"]


def count_tokens(text="", model="gpt-4"):
    """The number of tokens in ``text`` for ``model``."""
    return _oi.count_tokens(str(text or ""), model or "gpt-4")


def token_cost(tokens=0, model="gpt-4"):
    """What ``tokens`` prompt tokens of ``model`` cost, in USD (0 when the price is unknown)."""
    cost = _oi.token_cost(int(tokens), model or "gpt-4")
    return 0 if cost is None else cost


def count_messages_tokens(messages=None, model=None):
    """``(tokens, prompt_cost)`` of a list of messages: strings, or dicts whose ``message``
    (and ``code``, ``output``) are counted, as the original."""
    tokens_used = 0
    for message in messages or []:
        if isinstance(message, str):
            tokens_used += count_tokens(message, model=model)
        elif isinstance(message, dict) and "message" in message:
            for key in ("message", "code", "output"):
                if key in message:
                    tokens_used += count_tokens(message[key], model=model)
    return (tokens_used, token_cost(tokens_used, model=model))
