"""Fixtures for the Python API's tests: a scripted model server per test, a temporary HOME,
and a way to run a script in a fresh Python process of this venv."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import scripted  # noqa: E402

# Conversations saved by in-process tests go to a temporary home, never the user's.
_HOME = scripted.isolate(
    "oi-python-tests-home-",
    ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "INTERPRETER_API_KEY",
     "INTERPRETER_HOST", "INTERPRETER_PORT", "INTERPRETER_REQUIRE_ACKNOWLEDGE"),
)

EXAMPLES = Path(__file__).parent / "examples"

# The CTRL-C tests stand for a user at a terminal, where SIGINT is never ignored. Started as a
# script's background job (`cargo xtask python-tests &`), this process inherited it ignored,
# and an ignored signal stays ignored in every program it starts: handled here, it is back at
# its default in each of them.
signal.signal(signal.SIGINT, signal.default_int_handler)

@pytest.fixture(autouse=True)
def time_limit():
    # No test may hang the suite (scripted.time_limit).
    yield from scripted.time_limit()


@pytest.fixture
def model(tmp_path):
    """Starts scripted model servers: ``model(replies)`` returns a running ``ScriptedModel``;
    all are stopped after the test."""
    if scripted.xtask_program() is None:
        pytest.skip("no xtask program: run `cargo xtask python-tests`")
    started = []

    def start(replies):
        server = scripted.ScriptedModel(replies, tmp_path / f"model{len(started)}")
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def oi(model):
    """``oi(replies, **settings)``: a fresh OpenInterpreter talking to a scripted model (tool
    calls on, conversations not saved) and that model."""
    from interpreter import OpenInterpreter

    made = []

    def make(replies, **settings):
        server = model(replies)
        interpreter = OpenInterpreter(**settings)
        interpreter.llm.api_base = server.url
        interpreter.llm.api_key = "x"
        interpreter.llm.supports_functions = True
        if "conversation_history" not in settings:
            interpreter.conversation_history = False
        made.append(interpreter)
        return interpreter, server

    yield make
    for interpreter in made:
        interpreter.computer.terminate()


@pytest.fixture
def home(tmp_path):
    """A temporary HOME for a subprocess."""
    path = tmp_path / "home"
    path.mkdir()
    return path


def python_env(home, model_url=None, **extra):
    """The environment of a subprocess: this environment, HOME in `home`, the model server as
    OpenAI's endpoint."""
    env = dict(os.environ)
    env["HOME"] = str(home)
    env["XDG_CONFIG_HOME"] = str(Path(home) / ".config")
    env["PYTHONUNBUFFERED"] = "1"
    if model_url:
        env["OPENAI_BASE_URL"] = model_url
        env["OPENAI_API_KEY"] = "sk-test"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_python(source, env, cwd, stdin="", timeout=60):
    """Runs `source` in a fresh Python of this venv; returns the CompletedProcess."""
    return subprocess.run(
        [sys.executable, "-c", source],
        input=stdin,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def example(name):
    """The verbatim text of an example from the original's README or docs."""
    return (EXAMPLES / name).read_text()
