"""``OpenInterpreter``: Open Interpreter's synchronous Python API over oi's core.

Settings are attributes with the original's names (``interpreter.auto_run``,
``interpreter.llm.model``, …), read and written through the compiled core, which checks each
value. ``messages`` is a plain list, kept in step with the core's conversation. A turn runs in
Rust with the GIL released; CTRL-C stops it (the model request and the code's process group)
and raises ``KeyboardInterrupt``, and the interpreter stays usable.
"""

import os
import sys

from .. import _oi
from . import names
from .computer import Computer
from .conversation import Conversation
from .gate import Gate
from .llm import Llm
from .spellings import set_setting, telemetry_note

TurnError = _oi.TurnError

_NO_DISPLAY = (
    "`interpreter.chat()` requires a display. Set `display=True` or pass a message into "
    "`interpreter.chat(message)`."
)

_SETTING_NAMES = frozenset(names.SETTINGS)


def _setting(name):
    """A property reading and writing oi's setting `name`."""

    def get(self):
        return self._core.get(name)

    def put(self, value):
        set_setting(self._core, name, value)

    return property(get, put, doc=f"The `{name}` setting (same meaning as the original's).")


def _write(text):
    if text:
        sys.stdout.write(text)
        sys.stdout.flush()


def _discard_typeahead():
    """Drops keys typed before the approval question is shown, when standard input is a
    terminal (as the `oi` program does): a `y` typed while the reply streamed must not answer a
    question about code the person has not seen. Piped input is left alone."""
    try:
        import termios

        if sys.stdin.isatty():
            termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
    except (ImportError, OSError, ValueError, AttributeError):
        pass


def _decision(answer, code):
    """(decision, edited code) from what an approval callback returned."""
    if answer is True:
        return "approve", None
    if answer is False or answer is None:
        return "decline", None
    if isinstance(answer, str):
        return ("approve", None) if answer == code else ("edit", answer)
    raise TypeError(
        "interpreter.approve must return True (run), False (do not run) or a string (run this "
        f"code instead), not {type(answer).__name__} ({answer!r})"
    )


class OpenInterpreter:
    """An interpreter: settings, a conversation, a model and a computer.

    ``OpenInterpreter(auto_run=True, verbose=True)`` takes every attribute as a keyword.
    Independent instances have independent conversations, settings and code sessions.
    """

    _extra_attributes = frozenset()

    def __init__(self, **settings):
        workers = settings.pop("_workers", 1)
        object.__setattr__(self, "_core", _oi.Core(workers))
        object.__setattr__(self, "_conversation", Conversation(self._core))
        object.__setattr__(self, "_kept", dict(names.KEPT_ONLY))
        object.__setattr__(self, "_gate", Gate())
        object.__setattr__(self, "_thread", None)
        object.__setattr__(self, "_last_new", [])
        object.__setattr__(self, "llm", Llm(self._core))
        object.__setattr__(self, "computer", Computer(self._core))
        object.__setattr__(self, "approve", None)
        llm = settings.pop("llm", None)
        computer = settings.pop("computer", None)
        for key in ("import_computer_api", "skills_path", "import_skills"):
            if key in settings:
                setattr(self.computer, key, settings.pop(key))
        for key, value in settings.items():
            if not self._known(key):
                raise TypeError(
                    f"{type(self).__name__}() got an unexpected keyword argument {key!r}"
                    + names.hint(key, names.interpreter_names())
                )
            setattr(self, key, value)
        if llm is not None:
            self.llm.update(llm)
        if computer is not None:
            raise TypeError(
                "OpenInterpreter(computer=...) is not supported: oi runs code with its own "
                "computer (set interpreter.computer.languages to restrict it)"
            )
        _live.add(self)

    @property
    def messages(self):
        """The conversation: a list of LMC message dicts. Assign a list to replace it
        (``interpreter.messages = []`` starts over); changes to the list are seen by the next
        turn."""
        return self._conversation.current()

    @messages.setter
    def messages(self, value):
        self._conversation.replace(value)

    def _known(self, name):
        return (
            name in self._kept
            or name in self._extra_attributes
            or name in ("messages", "approve")
            or isinstance(getattr(type(self), name, None), property)
        )

    def __setattr__(self, name, value):
        if name.startswith("_") or hasattr(type(self), name) or name in self._extra_attributes:
            object.__setattr__(self, name, value)
        elif name in self._kept:
            if name == "os" and value:
                raise ValueError(
                    "interpreter.os = True is not supported: oi does not drive the mouse, "
                    "keyboard and screen (see docs/differences.md)"
                )
            self._kept[name] = value
        elif name in ("llm", "computer", "approve"):
            object.__setattr__(self, name, value)
        else:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}"
                + names.hint(name, names.interpreter_names())
            )

    def __getattr__(self, name):
        kept = self.__dict__.get("_kept", {})
        if name in kept:
            return kept[name]
        raise AttributeError(
            f"{type(self).__name__!r} object has no attribute {name!r}"
            + names.hint(name, names.interpreter_names())
        )

    def chat(self, message=None, display=True, stream=False, blocking=True):
        """Says `message` and runs the turn: the model answers, writes code, the code runs, and
        so on until the model stops writing code.

        - `message`: a string, a message dict (``role`` defaults to ``user``), or a list of
          message dicts, which replaces the conversation. No message (with `display`) starts an
          interactive chat on the terminal.
        - `display`: print the turn (plain text when stdout is not a terminal). With
          ``auto_run`` off, ask before running code (``input()``).
        - `stream`: return a generator of LMC chunks with ``start``/``end`` flags, exactly as
          the server sends them. With ``auto_run`` off the confirmation chunk comes before each
          code block runs: reading on runs it, closing the generator stops the turn.
        - `blocking=False`: run in a thread and return ``None``; ``wait()`` gives the result.

        Returns the messages the turn added (after the input). Set ``interpreter.approve`` to a
        callable ``(code, language) -> True | False | str`` to decide about each code block
        yourself (a string runs that code instead).
        """
        if not blocking:
            return self._chat_in_background(message, display, stream)
        if stream:
            return self._stream(message, display)
        if message is None:
            if not display:
                raise Exception(_NO_DISPLAY)
            self._terminal_chat()
            return None
        if not display and self.approve is None:
            return self._quiet_turn(message)
        for _ in self._stream(message, display):
            pass
        return self._last_new

    def _quiet_turn(self, message):
        """The whole turn in one call into Rust, every code block run (`display=False`)."""
        with self._gate.turn(streaming=False) as slot:
            turn = self._start(message)
            slot.turn = turn
            try:
                new = turn.finish()
            finally:
                self._conversation.pull()
        object.__setattr__(self, "_last_new", new)
        return new

    def _start(self, message):
        """Syncs the conversation and starts a turn on `message`."""
        if isinstance(message, list):
            self._conversation.replace(message)
            turn = self._core.respond_saving()
        else:
            self._conversation.push()
            turn = self._core.chat(message)
        return turn

    def _respond_and_store(self):
        """Runs a turn on the conversation as it is, as the original's ``_respond_and_store``
        (which its server uses): code at the end of ``messages`` runs first (repaired as
        the model's code is), then the model answers; yields LMC chunks with
        ``start``/``end`` flags and stores the messages. Code runs without asking, as in the
        original's core; closing the generator stops the turn."""

        def start():
            self._conversation.push()
            return self._core.respond()

        return self._stream(None, False, start)

    def _stream(self, message, display, start=None):
        """The turn as a generator of chunks (see `chat`); `start` starts another kind of
        turn than a chat on `message`."""
        if message is None and start is None:
            raise Exception(_NO_DISPLAY)
        renderer = _oi.Renderer(self._color()) if display else None
        with self._gate.turn(streaming=True) as slot:
            turn = start() if start is not None else self._start(message)
            slot.turn = turn
            try:
                while True:
                    slot.driving = True
                    event = turn.next()
                    slot.driving = False
                    if event is None:
                        break
                    kind, payload = event
                    if kind == "chunk":
                        if renderer is not None:
                            _write(renderer.render(payload))
                        yield payload
                        continue
                    yield payload["confirmation"]
                    slot.driving = True
                    decision, code = self._decide(payload, renderer)
                    turn.decide(decision, code)
            finally:
                slot.driving = False
                turn.stop()
                self._conversation.pull()
                object.__setattr__(self, "_last_new", turn.new_messages())

    def _decide(self, request, renderer):
        """What to do with a code block waiting for approval."""
        code, language = request["code"], request["language"]
        if self.approve is not None:
            return _decision(self.approve(code, language), code)
        if renderer is None:
            return "approve", None
        _discard_typeahead()
        answer = input(renderer.question(code))
        return ("approve", None) if answer.strip().lower() == "y" else ("decline", None)

    def _color(self):
        if self.plain_text_display:
            return False
        try:
            return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
        except (AttributeError, ValueError):
            return False

    def _terminal_chat(self):
        """The interactive chat: a plain-text loop over ``input()`` until CTRL-D (or CTRL-C at
        the prompt). CTRL-C during a turn stops it and returns to the prompt."""
        if not self.auto_run:
            print(
                "Open Interpreter will require approval before running code.\n\n"
                "Set interpreter.auto_run = True to bypass this.\n"
            )
        while True:
            try:
                line = input("> ")
            except (EOFError, KeyboardInterrupt):
                print("\nExiting...")
                return
            if not line.strip():
                continue
            try:
                for _ in self._stream(line, True):
                    pass
            except KeyboardInterrupt:
                print("\nStopped.")

    def _chat_in_background(self, message, display, stream):
        import threading

        def run():
            try:
                result = self.chat(message, display=display, stream=False)
                object.__setattr__(self, "_last_new", result or [])
            except BaseException as error:  # kept for wait() to raise
                object.__setattr__(self, "_background_error", error)

        object.__setattr__(self, "_background_error", None)
        thread = threading.Thread(target=run, name="oi-chat", daemon=True)
        object.__setattr__(self, "_thread", thread)
        thread.start()
        return None

    def wait(self):
        """Waits for a ``chat(blocking=False)`` turn and returns the messages it added."""
        thread = self._thread
        if thread is not None:
            while thread.is_alive():
                thread.join(0.05)
            error = self.__dict__.get("_background_error")
            if error is not None:
                object.__setattr__(self, "_background_error", None)
                raise error
        return self._last_new

    def reset(self):
        """Ends every code session and clears the conversation (settings stay)."""
        self._core.reset()
        self._conversation.replace([])

    def display_message(self, markdown):
        """Prints `markdown` (as plain text)."""
        _write(_oi.Renderer.clean(str(markdown)) + "\n")

    def get_oi_dir(self):
        """Open Interpreter's configuration directory."""
        path = self._core.get("conversation_history_path")
        if path:
            return os.path.dirname(path)
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
        if sys.platform == "darwin":
            base = os.path.join(os.path.expanduser("~"), "Library", "Application Support")
        return os.path.join(base, "open-interpreter")

    def local_setup(self):
        """Not available: oi has no local-model wizard (see docs/differences.md)."""
        raise NotImplementedError(
            "local_setup() is not available in oi: set interpreter.llm.model = 'local' for the "
            "embedded model, or interpreter.llm.api_base to a local OpenAI-compatible server"
        )

    def _close(self):
        """At exit: no more callbacks into Python; every code session ended."""
        try:
            self._core.close()
        except Exception:
            pass


# Settings with the original's names.
for _name in names.SETTINGS:
    setattr(OpenInterpreter, _name, _setting(_name))
del _name


def _max_budget_get(self):
    return self.llm.max_budget


def _max_budget_put(self, value):
    self.llm.max_budget = value


def _telemetry_get(self):
    return not self.disable_telemetry


def _telemetry_put(self, value):
    telemetry_note(value)
    self.disable_telemetry = not value


# The docs' other spellings (see spellings.py).
OpenInterpreter.max_budget = property(
    _max_budget_get, _max_budget_put, doc="The docs' spelling of `llm.max_budget` (USD)."
)
OpenInterpreter.anonymized_telemetry = property(
    _telemetry_get, _telemetry_put, doc="The docs' spelling of `not disable_telemetry`."
)


class _Live:
    """The interpreters alive, to end their code sessions when Python exits."""

    def __init__(self):
        import weakref

        self.objects = weakref.WeakSet()
        self.registered = False

    def add(self, interpreter):
        self.objects.add(interpreter)
        if not self.registered:
            import atexit

            atexit.register(self.close_all)
            self.registered = True

    def close_all(self):
        for interpreter in list(self.objects):
            interpreter._close()


_live = _Live()
