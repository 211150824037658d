"""The attribute names of the original's objects that oi keeps, and the nearest-name hint an
unknown one gets."""

from .. import _oi

# The original's attributes oi accepts and keeps, but does not act on (default value).
KEPT_ONLY = {
    "in_terminal_interface": False,
    "multi_line": True,
    "contribute_conversation": False,
    "speak_messages": False,
    "sync_computer": False,
    "highlight_active_line": True,
    "os": False,
}

# Every setting's dotted name, from oi's core (`Settings::names()` in Rust).
SETTING_NAMES = tuple(_oi.SETTING_NAMES)

# Settings read and written on `interpreter.computer` rather than the interpreter.
ON_COMPUTER = ("import_computer_api",)

# OpenInterpreter attribute -> oi setting (same name): every top-level setting but those the
# Python object keeps itself or puts on `computer`.
SETTINGS = tuple(
    name for name in SETTING_NAMES if "." not in name and name not in KEPT_ONLY and name not in ON_COMPUTER
)

# Llm attributes -> oi's `llm.` settings.
LLM = tuple(name[len("llm."):] for name in SETTING_NAMES if name.startswith("llm."))

# The original's `computer.*` tools (the desktop ones refuse every call in oi).
COMPUTER_TOOLS = (
    "ai",
    "browser",
    "calendar",
    "clipboard",
    "contacts",
    "display",
    "docs",
    "files",
    "keyboard",
    "mail",
    "mouse",
    "os",
    "skills",
    "sms",
    "vision",
)

# The methods and other attributes of each class (for hints).
METHODS = ("chat", "reset", "wait", "display_message", "get_oi_dir", "approve", "messages", "llm", "computer")
COMPUTER_NAMES = (
    "run", "terminate", "languages", "import_computer_api", "stop", "exec", "system_message",
) + COMPUTER_TOOLS + ("terminal",)


def hint(name, known):
    """`; did you mean 'x'?` for the known name nearest to `name`, or ``""``."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    if not close:
        tail = name.rsplit(".", 1)[-1]
        close = [k for k in known if k.rsplit(".", 1)[-1] == tail]
    return f"; did you mean {close[0]!r}?" if close else ""


def interpreter_names():
    """Every attribute name an OpenInterpreter answers to, with `llm.`/`computer.` ones."""
    names = list(SETTINGS) + list(KEPT_ONLY) + list(METHODS)
    names += ["llm." + n for n in LLM]
    names += ["computer." + n for n in COMPUTER_NAMES]
    return names
