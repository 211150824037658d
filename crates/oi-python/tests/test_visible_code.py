"""What the person approves is what runs (issue 34, item 6), through the Python package's
display: code hiding its payload as Unicode TAG characters is shown with escapes and a warning
that counts and names them before the question, and declining does not run it."""

import os
import subprocess
import sys

from conftest import python_env
from scripted import code, text

HIDDEN = "import os;os.system('touch pwned')"
PAYLOAD = "exec(''.join(chr(ord(c)-0xE0000) for c in '" + "".join(chr(0xE0000 + ord(c)) for c in HIDDEN) + "'))"
SHOWN = "exec(''.join(chr(ord(c)-0xE0000) for c in '" + "".join("<U+%04X>" % (0xE0000 + ord(c)) for c in HIDDEN) + "'))"


def test_a_tag_payload_is_shown_as_escapes_with_a_warning(model, home):
    server = model([code("python", PAYLOAD), text("ok")])
    source = "from interpreter import interpreter\ninterpreter.llm.supports_functions = True\ninterpreter.chat('tidy up')\n"
    done = subprocess.run(
        [sys.executable, "-c", source], env=python_env(home, server.url), cwd=home,
        input="n\n", capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    shown = out.find(SHOWN)
    warning = out.find(
        "Warning: this code contains control or invisible characters, 34 in all "
        "(U+E0069 TAG LATIN SMALL LETTER I, U+E006D TAG LATIN SMALL LETTER M, "
        "U+E0070 TAG LATIN SMALL LETTER P, and 18 other kinds), shown above as escapes"
    )
    question = out.find("Would you like to run this code? (y/n)")
    assert 0 <= shown < warning < question, out
    assert chr(0xE0069) not in out
    assert not os.path.exists(os.path.join(home, "pwned"))


def test_code_repaired_by_oi_is_shown_before_the_question(model, home):
    """A reply whose python block is JSON (`{"language": …, "code": "\\u0069mport …"}`) runs the
    decoded code: the display shows that code, not only the JSON that streamed (review of
    issue 34)."""
    decoded = "import os; open('repaired-ran', 'w')"
    escaped = "".join("\\u%04x" % ord(c) for c in decoded)
    body = '{"language": "python", "code": "' + escaped + '"}'
    server = model([text("```python\n" + body + "\n```"), text("ok")])
    source = (
        "from interpreter import interpreter\n"
        "interpreter.llm.supports_functions = False\n"
        "interpreter.chat('tidy up')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", source], env=python_env(home, server.url), cwd=home,
        input="n\n", capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    title = out.find("The code that will run (as repaired by oi):")
    shown = out.find(decoded)
    question = out.find("Would you like to run this code? (y/n)")
    assert 0 <= title < shown < question, out
    assert not os.path.exists(os.path.join(home, "repaired-ran"))


def test_keys_typed_before_the_question_do_not_answer_it(model, home):
    """`y` + Enter typed on a terminal while the reply still streams is dropped before the
    question is shown (as in `oi`): only an answer typed after it counts (review of issue 34)."""
    import pty
    import select
    import time

    server = model([code("shell", "touch typed-ahead", stall_after=[2, 3]), text("ok")])
    source = (
        "from interpreter import interpreter\n"
        "interpreter.llm.supports_functions = True\n"
        "interpreter.chat('go')\n"
    )
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", source], env=python_env(home, server.url), cwd=home,
        stdin=slave, stdout=slave, stderr=slave, close_fds=True,
    )
    os.close(slave)
    seen = bytearray()

    def read_for(seconds):
        end = time.time() + seconds
        while time.time() < end:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    seen.extend(os.read(master, 4096))
                except OSError:
                    return

    try:
        read_for(1.0)
        assert b"Would you like" not in seen, seen
        os.write(master, b"y\n")  # typed ahead, while the reply stalls
        deadline = time.time() + 30
        while b"Would you like to run this code?" not in seen and time.time() < deadline:
            read_for(0.2)
        assert b"Would you like to run this code?" in seen, seen
        read_for(1.0)
        assert not os.path.exists(os.path.join(home, "typed-ahead")), seen
        os.write(master, b"n\n")
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert not os.path.exists(os.path.join(home, "typed-ahead")), seen
