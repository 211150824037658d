"""The attribute names of the original's objects that oi keeps, and the nearest-name hint an
unknown one gets."""

# OpenInterpreter attribute -> oi setting (same name unless noted).
SETTINGS = (
    "auto_run",
    "max_output",
    "loop",
    "loop_message",
    "loop_breakers",
    "system_message",
    "custom_instructions",
    "user_message_template",
    "always_apply_user_message_template",
    "code_output_template",
    "empty_code_output_template",
    "code_output_sender",
    "offline",
    "verbose",
    "debug",
    "safe_mode",
    "shrink_images",
    "conversation_history",
    "conversation_history_path",
    "conversation_filename",
    "plain_text_display",
    "disable_telemetry",
    # oi's approval rules (not in the original)
    "approval_policy",
    "allow",
    "deny",
    "hard_deny",
)

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

# Llm attributes -> oi's `llm.` settings.
LLM = (
    "model",
    "temperature",
    "supports_functions",
    "supports_vision",
    "execution_instructions",
    "context_window",
    "max_tokens",
    "api_base",
    "api_key",
    "api_version",
    "max_budget",
)

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
