"""``interpreter.computer``: runs code in oi's persistent language sessions, with the
original's headless computer API: ``ai``, ``files``, ``skills``, ``terminal``, ``os``; the
desktop tools (``mouse``, ``keyboard``, ``display``, ``mail``, …) raise a clear error."""

import inspect
import json
import sys

from .. import names
from . import refused
from .ai.ai import Ai
from .files.files import Files
from .os.os import Os
from .skills.skills import Skills
from .terminal.terminal import Terminal

# The original's order of the tools (its `_get_all_computer_tools_list`).
TOOL_ORDER = (
    "mouse", "keyboard", "display", "clipboard", "mail", "sms", "calendar", "contacts",
    "browser", "os", "vision", "skills", "docs", "ai", "files",
)
# The tools oi provides (the others are refused).
AVAILABLE = ("os", "skills", "ai", "files")


class Language:
    """A language oi can run: ``name`` and ``aliases`` (as the original's language classes)."""

    def __init__(self, name, aliases):
        self.name = name
        self.aliases = list(aliases)

    def __repr__(self):
        return f"Language({self.name!r})"

    def __eq__(self, other):
        return isinstance(other, Language) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


def _is_custom(item):
    """Whether `item` is a custom language (the original's interface: ``name`` and ``run``),
    rather than one of oi's (a name, or a ``Language`` from ``computer.languages``)."""
    return not isinstance(item, (str, Language)) and callable(getattr(item, "run", None))


def _language_name(item):
    if isinstance(item, str):
        return item
    name = getattr(item, "name", None)
    if isinstance(name, str):
        return name
    raise TypeError(
        f"computer.languages takes languages, their names, or custom language classes (with "
        f"`name`, `run`, `stop`, `terminate`), not {type(item).__name__}"
    )


class _Custom:
    """What oi calls for a custom language: the instance is made on first use, as the
    original does (``Class(computer)`` when its ``__init__`` takes an argument, else
    ``Class()``); an object that is not a class is used as it is."""

    def __init__(self, language, computer):
        self.language = language
        self.computer = computer
        self.instance = None if isinstance(language, type) else language

    def _get(self):
        if self.instance is None:
            init = getattr(self.language.__init__, "__code__", None)
            if init is not None and init.co_argcount > 1:
                self.instance = self.language(self.computer)
            else:
                self.instance = self.language()
        return self.instance

    def run(self, code):
        return self._get().run(code)

    def stop(self):
        if self.instance is not None and hasattr(self.instance, "stop"):
            self.instance.stop()

    def terminate(self):
        if self.instance is not None and hasattr(self.instance, "terminate"):
            self.instance.terminate()
        if isinstance(self.language, type):
            self.instance = None


def _show(output):
    """Prints console output (cleaned of escape sequences)."""
    import sys

    from ... import _oi

    if output.get("type") == "console" and output.get("format", "output") == "output":
        sys.stdout.write(_oi.Renderer.clean(str(output.get("content", ""))))


def _is_text(output):
    return (
        output.get("type") == "console"
        and output.get("format") == "output"
        and isinstance(output.get("content"), str)
    )


def _flush():
    import sys

    sys.stdout.flush()


class Computer:
    """The computer: ``run(language, code)``, ``terminate()``, ``languages``."""

    def __init__(self, core):
        object.__setattr__(self, "_core", core)
        object.__setattr__(self, "_custom", [])
        object.__setattr__(self, "terminal", Terminal(self))
        object.__setattr__(self, "ai", Ai(self))
        object.__setattr__(self, "files", Files(self))
        object.__setattr__(self, "skills", Skills(self))
        object.__setattr__(self, "os", Os(self))
        for tool, cls in refused.CLASSES.items():
            object.__setattr__(self, tool, cls(self))

    def _get_all_computer_tools_list(self):
        """The original's 15 tools, in its order (the desktop ones refuse every call)."""
        return [getattr(self, tool) for tool in TOOL_ORDER]

    def _get_all_computer_tools_signature_and_description(self, available_only=False):
        """``computer.<tool>.<method>(<params>) # <docstring>`` for each public method, as the
        original lists them; `available_only` leaves out the refused tools."""
        lines = []
        for tool in TOOL_ORDER:
            if available_only and tool not in AVAILABLE:
                continue
            for name, method in inspect.getmembers(getattr(self, tool), predicate=inspect.ismethod):
                if name.startswith("_"):
                    continue
                params = ", ".join(
                    p.name if p.default is p.empty else f"{p.name}={p.default!r}"
                    for p in inspect.signature(method).parameters.values()
                    if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                )
                doc = (method.__doc__ or "").strip()
                lines.append(f"computer.{tool}.{name}({params}) # {doc}")
        return lines

    @property
    def system_message(self):
        """The system message's "THE COMPUTER API" section (what exists in oi)."""
        tools = "\n".join(self._get_all_computer_tools_signature_and_description(True))
        return (
            "# THE COMPUTER API\n"
            "A python `computer` module is ALREADY IMPORTED, and can be used for many tasks:\n"
            f"```python\n{tools}\n```\n"
            "Do not import the computer module, or any of its sub-modules. They are already imported."
        )

    @property
    def languages(self):
        """The languages offered to the model: custom languages as given, then oi's own.
        Assign a list of these (or of names) to offer fewer:
        ``computer.languages = [l for l in computer.languages if l.name == "Python"]``. A
        custom language (a class with ``name``, ``run``, ``stop``, ``terminate``, as in the
        original's docs) runs the model's code in its ``run(code)``, a generator of LMC dicts;
        one named like a built-in language replaces it."""
        custom_names = {c.name.lower() for c in self._custom}
        built_in = [
            Language(name, aliases)
            for name, aliases in self._core.languages()
            if name.lower() not in custom_names
        ]
        return list(self._custom) + built_in

    @languages.setter
    def languages(self, value):
        if value is None:
            self._core.set_custom_languages([])
            object.__setattr__(self, "_custom", [])
            self._core.restrict_languages(None)
            return
        items = list(value)
        custom = [item for item in items if _is_custom(item)]
        names = [_language_name(item) for item in items if not _is_custom(item)]
        adapters = []
        for item in custom:
            name = getattr(item, "name", None)
            if not isinstance(name, str) or not name.strip():
                raise TypeError(f"a custom language needs a `name`: {item!r} has none")
            aliases = [a for a in getattr(item, "aliases", None) or [] if isinstance(a, str)]
            adapters.append((name, aliases, _Custom(item, self)))
        self._core.restrict_languages(names)
        self._core.set_custom_languages(adapters)
        object.__setattr__(self, "_custom", custom)

    @property
    def import_computer_api(self):
        """Whether the ``computer`` API is imported into the code's Python session (and
        described in the system message)."""
        return self._core.get("import_computer_api")

    @import_computer_api.setter
    def import_computer_api(self, value):
        self._core.set("import_computer_api", value)

    def run(self, language, code, stream=False, display=False):
        """Runs `code` in the persistent session of `language` and returns its output as a list
        of dicts, e.g. ``[{"type": "console", "format": "output", "content": "1\\n"}]``.
        With ``stream=True`` it returns a generator of the outputs as they come (the running
        line as ``active_line`` outputs too); closing it early (``break``) interrupts the
        code."""
        if stream:
            return self._stream(language, code, display)
        outputs = self._core.run(language, code)
        if display:
            for output in outputs:
                _show(output)
            _flush()
        return outputs

    def _stream(self, language, code, display):
        """The outputs as they come, console text a line at a time (a line's pieces, such as
        ``print("adding", i)`` writes, joined as a notebook kernel hands them over; a partial
        line goes on at the next other output or at the end)."""
        run = self._core.run_stream(language, code)
        finished = False
        pending = None
        try:
            while True:
                output = run.next()
                if output is None:
                    finished = True
                    break
                if _is_text(output):
                    if pending is None:
                        pending = dict(output)
                    else:
                        pending["content"] += output["content"]
                    if not pending["content"].endswith("\n"):
                        continue
                    output, pending = pending, None
                elif pending is not None:
                    held, pending = pending, None
                    yield self._shown(held, display)
                yield self._shown(output, display)
            if pending is not None:
                yield self._shown(pending, display)
        finally:
            if not finished:
                run.close()
                self._core.stop_code()

    @staticmethod
    def _shown(output, display):
        if display:
            _show(output)
            _flush()
        return output

    @property
    def mcp_servers(self):
        """The MCP servers whose tools are offered to the model beside ``execute`` (oi's own
        addition): a dict from a name to ``{"command": …, "args": […], "env": {…}}`` (a
        program oi starts) or ``{"url": …, "headers": {…}}`` (Streamable HTTP), the shape of a
        profile's ``mcp_servers:``. Assigning connects them (a server that cannot be used is
        one line on stderr); a tool call is approved like code and seen as a code chunk of
        format ``mcp`` (docs/protocol.md section 11). ``{}`` or ``None`` ends them."""
        return dict(getattr(self, "_mcp_servers", {}))

    @mcp_servers.setter
    def mcp_servers(self, value):
        servers = dict(value or {})
        for line in self._core.connect_mcp_servers(json.dumps(servers)):
            print(f"oi: {line}", file=sys.stderr)
        object.__setattr__(self, "_mcp_servers", servers)

    def terminate(self):
        """Ends every language session (and every process it started)."""
        self._core.terminate()

    def stop(self):
        """Interrupts the running code; the sessions stay."""
        self._core.stop_code()

    def exec(self, code):
        """Runs shell `code` (the original's ``computer.exec``)."""
        return self.run("shell", code)

    def screenshot(self, *args, **kwargs):
        """Not available in oi (headless)."""
        raise NotImplementedError("computer.screenshot is " + refused.NOT_HEADLESS)

    view = screenshot

    def __getattr__(self, name):
        raise AttributeError(
            f"'Computer' object has no attribute {name!r}" + names.hint(name, names.COMPUTER_NAMES)
        )

    def __setattr__(self, name, value):
        if hasattr(type(self), name):
            object.__setattr__(self, name, value)
        elif name in ("offline", "verbose", "debug", "emit_images", "save_skills"):
            object.__setattr__(self, name, value)
        elif name == "skills_path":
            self.skills.path = value
        elif name == "import_skills":
            if value:
                raise ValueError(
                    "computer.import_skills is not supported: call computer.skills.import_skills()"
                )
        else:
            raise AttributeError(
                f"'Computer' object has no attribute {name!r}" + names.hint(name, names.COMPUTER_NAMES)
            )
