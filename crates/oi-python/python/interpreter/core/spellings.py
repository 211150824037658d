"""The original's other spellings of settings (from its docs and notebooks), and the type
coercions its attributes tolerate, so documented code runs on oi.

- ``interpreter.max_budget`` is ``interpreter.llm.max_budget``.
- ``interpreter.llm.max_output`` is ``interpreter.max_output`` (characters of code output).
- ``interpreter.anonymized_telemetry = False`` is ``disable_telemetry = True``; oi sends no
  telemetry either way, which the ``interpreter`` logger says.
- ``interpreter.llm.execution_instructions = False`` (or ``None``) turns them off, as an empty
  string does: the original tests the value's truth.
- A number given as text (``"8000"``, ``"0.01"``) or an integral float (``8000.0``) where oi
  wants a number is converted, as the original passes such values on to arithmetic.
"""

import logging

log = logging.getLogger("interpreter")


def _number(value):
    """`value` as an int or float if it is text holding a number or an integral float, else
    None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            return float(text)
        except ValueError:
            return None
    return None


def set_setting(core, name, value):
    """Sets oi's setting `name`, converting `value` as the original tolerates: a refused value
    that reads as a number is tried as that number; the first error stands otherwise."""
    if name == "llm.execution_instructions" and (value is False or value is None):
        value = ""
    try:
        core.set(name, value)
    except ValueError:
        number = _number(value)
        if number is None:
            raise
        try:
            core.set(name, number)
        except ValueError:
            pass
        else:
            log.info("interpreter: %s = %r taken as %r", name, value, number)
            return
        if isinstance(number, int):
            try:
                core.set(name, float(number))
                return
            except ValueError:
                pass
        raise


def telemetry_note(value):
    """Logs that telemetry settings change nothing in oi."""
    log.info(
        "interpreter: anonymized_telemetry = %r accepted: oi sends no telemetry "
        "(it is disable_telemetry = %r)",
        value,
        not value,
    )
