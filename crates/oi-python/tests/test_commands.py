"""The `interpreter` and `i` commands `pip install` makes (issue 25): they run oi's CLI."""


def _command(name):
    """The console script `pip install` made in this venv."""
    import sys
    from pathlib import Path

    path = Path(sys.executable).parent / name
    assert path.exists(), f"pip install made no `{name}` command in {path.parent}"
    return str(path)


def test_the_interpreter_and_i_commands_run_ois_cli():
    import subprocess

    for name in ("interpreter", "i"):
        done = subprocess.run([_command(name), "--version"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "Open Interpreter 0.4.3 compatible" in done.stdout


def test_interpreter_server_serves(home, tmp_path):
    import socket
    import subprocess
    import time
    import urllib.request

    from conftest import python_env

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [_command("interpreter"), "--server", "--port", str(port)],
        env=python_env(home),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stderr.readline()
        while line and "Server will run at" not in line:
            line = server.stderr.readline()
        assert f":{port}" in line, f"the server did not say where it runs: {line!r}"
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/heartbeat", timeout=5) as reply:
                    assert reply.status == 200
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
    finally:
        server.terminate()
        server.wait(timeout=20)
