"""Adaptations of Open Interpreter 0.4.3's own tests (fetched at 36ec0712 by `cargo xtask
original-tests`) to run against oi's Python package. Copied beside them as tests/conftest.py;
tests/original/README.md lists every adaptation and why.

1. A scripted model instead of a real one: the calculator of `xtask scripted-server` (it
   answers "compute 2+2"-style requests with Python code, then states the result), reached
   through OPENAI_BASE_URL, and a temporary HOME.
2. The tests that need a real model's intelligence, or something oi does not have, are
   marked xfail (strict: one that starts passing fails the run, so this list stays true) with
   the reason; they are listed in docs/differences.md.
"""

import os
import sys
import tempfile

import pytest

# The model server, the temporary HOME and the time limit are crates/oi-python/tests'
# (scripted.py), shared with oi's own Python tests.
sys.path.insert(0, os.environ.get("OI_SCRIPTED_PY", ""))
import scripted  # noqa: E402  (crates/oi-python/tests/scripted.py)

_HOME = scripted.isolate(
    "oi-original-tests-home-",
    ("ANTHROPIC_API_KEY", "INTERPRETER_API_KEY", "INTERPRETER_REQUIRE_ACKNOWLEDGE"),
)

_MODEL = None


def pytest_configure(config):
    global _MODEL
    if scripted.xtask_program() is None:
        raise pytest.UsageError("no xtask program: run `cargo xtask original-tests`")
    _MODEL = scripted.ScriptedModel("calculator", tempfile.mkdtemp(prefix="oi-original-model-"))
    os.environ["OPENAI_BASE_URL"] = _MODEL.url
    os.environ["OPENAI_API_KEY"] = "sk-scripted"


def pytest_unconfigure(config):
    # The original's server tests start the server in a multiprocessing child and end it
    # only when they pass: a failing one would leave it holding port 8000 after the run.
    import multiprocessing

    for child in multiprocessing.active_children():
        child.terminate()
        child.join(5)
    if _MODEL is not None:
        _MODEL.stop()


# Test files that cannot even be imported on oi, and why (listed in docs/differences.md):
# none since issue 25 built the computer API's modules.
NOT_COLLECTED = {}
collect_ignore = list(NOT_COLLECTED)


# test id (relative to tests/) -> why it cannot pass on oi with a scripted model.
EXPECTED_FAILURES = {
    "tests/test_interpreter.py::test_hallucinations": "oi's Python shows a cell's last "
    "expression as a line (`22\\n`, as the Python REPL); the original's Jupyter kernel sends "
    "`22` without the newline, and the test compares its first output chunk exactly (which "
    "is `22` alone now and then, by timing). The repairs themselves "
    "(executeexecute, functions.execute, the JSON forms) work: "
    "crates/oi-python/tests/test_original_api.py",
    "tests/test_interpreter.py::test_math": "needs a real model: it must round the result to "
    "2 decimal places as told (with the seed, 379.0879... where the test wants 379.09); the "
    "calculator prints the full value",
    "tests/test_interpreter.py::test_server": "needs a real model: it tells the model a word "
    "('crunk', 'barloney') and asks for it back; the scripted calculator only computes",
    "tests/test_interpreter.py::test_hello_world": "needs a real model: the reply must be "
    "exactly 'Hello, World!' (the scripted calculator greets instead)",
    "tests/test_interpreter.py::test_write_to_file": "needs a real model: it must write "
    "code that creates file.txt from an English request",
}


# Expected failures that pass now and then, by timing (not strict).
SOMETIMES = {"tests/test_interpreter.py::test_hallucinations"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        reason = EXPECTED_FAILURES.get(item.nodeid)
        if reason:
            strict = item.nodeid not in SOMETIMES
            item.add_marker(pytest.mark.xfail(reason=reason, strict=strict))


@pytest.fixture(autouse=True)
def _repeatable_random():
    # test_math draws its numbers with `random`: the same numbers every run.
    import random

    random.seed(25)
    yield


@pytest.fixture(autouse=True)
def _time_limit():
    # No test may hang the run (scripted.time_limit).
    yield from scripted.time_limit()
