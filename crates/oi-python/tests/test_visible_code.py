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
