"""The ``interpreter`` and ``i`` commands (``pip install`` makes them): they run oi's CLI,
the ``oi`` program, with the arguments as given, so the original's flags
(``interpreter --version``, ``interpreter --server``, ``interpreter -y --model …``) work.

Which ``oi`` runs: ``$OI_BINARY`` if set, else the one bundled in the wheel
(``interpreter/_bin/oi``, put there when the wheel is built by ``cargo xtask python-tests``),
else ``oi`` on ``PATH``. The terminal interface is oi's own Rust program rather than a Python
re-implementation, so the commands behave exactly as ``oi`` does.
"""

import os
import shutil
import sys
from pathlib import Path

_MISSING = (
    "interpreter: oi's command-line program `oi` was not found: it is bundled in wheels "
    "built by `cargo xtask python-tests`; otherwise install it (`cargo install --path "
    "crates/oi-cli`) or set OI_BINARY to its path"
)


def find_oi():
    """The path of the ``oi`` program this command runs, or None."""
    named = os.environ.get("OI_BINARY")
    if named:
        return named
    bundled = Path(__file__).resolve().parents[1] / "_bin" / "oi"
    if bundled.is_file() and os.access(bundled, os.X_OK):
        return str(bundled)
    return shutil.which("oi")


def main(argv=None):
    """Runs ``oi`` with `argv` (default: this process's arguments) in place of this process."""
    args = list(sys.argv[1:] if argv is None else argv)
    program = find_oi()
    if program is None:
        print(_MISSING, file=sys.stderr)
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(program, [program, *args])
    except OSError as error:
        print(f"interpreter: could not run {program}: {error}", file=sys.stderr)
        return 126
    return 0  # not reached: execv replaces this process


if __name__ == "__main__":
    sys.exit(main())
