"""``interpreter.llm``: the model settings, with the original's attribute names."""

from . import names
from .spellings import set_setting

# The docs' `llm.` spellings of the interpreter's settings.
ALIASES = {"max_output": "max_output"}


class Llm:
    """The language model's settings: ``model``, ``temperature``, ``api_base``, ``api_key``,
    ``api_version``, ``context_window``, ``max_tokens``, ``max_budget``,
    ``supports_functions``, ``supports_vision``, ``execution_instructions``."""

    def __init__(self, core):
        object.__setattr__(self, "_core", core)

    def __getattr__(self, name):
        if name in names.LLM:
            return self._core.get("llm." + name)
        if name in ALIASES:
            return self._core.get(ALIASES[name])
        if name == "spend":
            return self._core.spent()
        raise AttributeError(self._unknown(name))

    def __setattr__(self, name, value):
        if name in names.LLM:
            set_setting(self._core, "llm." + name, value)
        elif name in ALIASES:
            set_setting(self._core, ALIASES[name], value)
        elif name == "spend":
            raise AttributeError("llm.spend is read-only: what the model requests have cost")
        else:
            raise AttributeError(self._unknown(name))

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(names.LLM) | set(ALIASES) | {"spend"})

    def _unknown(self, name):
        if name in ("completions", "run", "load", "vision_renderer"):
            return (
                f"llm.{name} is not available in oi: the model is called by oi's own providers "
                "(OpenAI-compatible, Anthropic, Ollama, local); see docs/differences.md"
            )
        return f"'Llm' object has no attribute {name!r}" + names.hint(name, names.LLM)

    def update(self, settings):
        """Sets several attributes from a dict (or another interpreter's ``llm``)."""
        if isinstance(settings, Llm):
            settings = {name: getattr(settings, name) for name in names.LLM}
        if not isinstance(settings, dict):
            raise TypeError(f"llm settings must be a dict, not {type(settings).__name__}")
        for name, value in settings.items():
            setattr(self, name, value)

    def load(self):
        """Nothing to load: oi connects on the first request."""

    def __repr__(self):
        return "Llm(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in names.LLM if n != "api_key") + ")"
