"""``interpreter.computer``: runs code in oi's persistent language sessions."""

from . import names


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


def _language_name(item):
    if isinstance(item, str):
        return item
    name = getattr(item, "name", None)
    if isinstance(name, str):
        return name
    raise TypeError(
        f"computer.languages takes languages (or their names), not {type(item).__name__}: "
        "custom language classes are not supported by oi"
    )


class Computer:
    """The computer: ``run(language, code)``, ``terminate()``, ``languages``."""

    def __init__(self, core):
        object.__setattr__(self, "_core", core)

    @property
    def languages(self):
        """The languages offered to the model. Assign a list of these (or of names) to offer
        fewer: ``computer.languages = [l for l in computer.languages if l.name == "Python"]``."""
        return [Language(name, aliases) for name, aliases in self._core.languages()]

    @languages.setter
    def languages(self, value):
        if value is None:
            self._core.restrict_languages(None)
            return
        self._core.restrict_languages([_language_name(item) for item in value])

    @property
    def import_computer_api(self):
        """Whether the truncation note points at ``computer`` helpers (kept for
        compatibility; oi offers no computer API to the code)."""
        return self._core.get("import_computer_api")

    @import_computer_api.setter
    def import_computer_api(self, value):
        self._core.set("import_computer_api", value)

    def run(self, language, code, stream=False, display=False):
        """Runs `code` in the persistent session of `language` and returns its output as a list
        of dicts, e.g. ``[{"type": "console", "format": "output", "content": "1\\n"}]``.
        With ``stream=True`` the same outputs are returned as an iterator."""
        outputs = self._core.run(language, code)
        if display:
            import sys

            from .. import _oi

            for output in outputs:
                if output.get("type") == "console":
                    sys.stdout.write(_oi.Renderer.clean(str(output.get("content", ""))))
            sys.stdout.flush()
        return iter(outputs) if stream else outputs

    def terminate(self):
        """Ends every language session (and every process it started)."""
        self._core.terminate()

    def stop(self):
        """Interrupts the running code; the sessions stay."""
        self._core.stop_code()

    def __getattr__(self, name):
        if name in names.COMPUTER_TOOLS:
            raise AttributeError(
                f"computer.{name} is not available in oi: oi runs the model's code but offers "
                "none of the computer.* tools (display, mouse, keyboard, files, …); see "
                "docs/differences.md"
            )
        raise AttributeError(
            f"'Computer' object has no attribute {name!r}" + names.hint(name, names.COMPUTER_NAMES)
        )

    def __setattr__(self, name, value):
        if hasattr(type(self), name):
            object.__setattr__(self, name, value)
        elif name in ("offline", "verbose", "debug", "emit_images", "save_skills"):
            object.__setattr__(self, name, value)
        elif name in ("skills_path", "import_skills"):
            if value:
                raise ValueError(f"computer.{name} is not supported: oi has no skills library")
        else:
            raise AttributeError(
                f"'Computer' object has no attribute {name!r}" + names.hint(name, names.COMPUTER_NAMES)
            )
