"""``computer.skills``: Python functions saved in the skills folder
(``<config dir>/open-interpreter/skills``, as the original's) and imported into the code's
session."""

import glob
import os
import re

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def skills_dir():
    """The skills folder: oi's config directory (as oi's core finds it) + ``skills``."""
    from .... import _oi

    return _oi.skills_dir()


class Skills:
    """Lists, searches, imports and saves skills."""

    def __init__(self, computer):
        self.computer = computer
        self._path = None

    @property
    def path(self):
        """The skills folder (settable)."""
        if self._path is None:
            self._path = skills_dir()
        return self._path

    @path.setter
    def path(self, value):
        self._path = os.fspath(value)

    def _files(self):
        return sorted(glob.glob(os.path.join(self.path, "*.py")))

    def list(self):
        """Lists the saved skills."""
        return [os.path.basename(f)[:-3] + "()" for f in self._files()]

    def run(self, skill):
        """Says how to run a skill."""
        print("To run a skill, run its name as a function name (it is already imported).")

    def search(self, query):
        """Lists the saved skills whose name or code mention `query`."""
        wanted = str(query).lower()
        found = []
        for f in self._files():
            with open(f, "r", encoding="utf-8") as file:
                code = file.read()
            if wanted in os.path.basename(f).lower() or wanted in code.lower():
                found.append(os.path.basename(f)[:-3] + "()")
        return found

    def import_skills(self):
        """Defines every saved skill (a Python function of the same name) in the code's Python session."""
        imported = []
        for f in self._files():
            with open(f, "r", encoding="utf-8") as file:
                code = file.read()
            output = self.computer.run("python", code)
            if "traceback" in str(output).lower():
                print(f"Skill at {f} might be broken— it produces a traceback when run.")
            else:
                imported.append(os.path.basename(f)[:-3])
        return imported

    def save(self, name, code):
        """Saves `code`, which defines the function `name`, as a skill for later sessions."""
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(
                f"a skill's name is a Python identifier (letters, digits, _; at most 64): {name!r}"
            )
        os.makedirs(self.path, exist_ok=True)
        path = os.path.join(self.path, name + ".py")
        with open(path, "w", encoding="utf-8") as file:
            file.write(str(code))
        return path
