"""``computer.files``: ``edit`` as the original's, ``search`` over text files (the original's
``aifs`` is used only when it is installed)."""

import difflib
import os

try:  # optional, as in the original; oi's own search needs nothing
    import aifs
except ImportError:
    aifs = None


class Files:
    """Edits and searches files."""

    def __init__(self, computer):
        self.computer = computer

    def search(self, *args, **kwargs):
        """Searches the text files under `paths` (default: the working directory) for `query` and returns the matching lines."""
        if aifs is not None:
            return aifs.search(*args, **kwargs)
        return search_text(*args, **kwargs)

    def edit(self, path, original_text, replacement_text):
        """Edits a file on the filesystem, replacing the original text with the replacement text."""
        with open(path, "r") as file:
            filedata = file.read()
        if original_text not in filedata:
            matches = get_close_matches_in_text(original_text, filedata)
            if matches:
                raise ValueError(
                    "Original text not found. Did you mean one of these? " + ", ".join(matches)
                )
        filedata = filedata.replace(original_text, replacement_text)
        with open(path, "w") as file:
            file.write(filedata)


def get_close_matches_in_text(original_text, filedata, n=3):
    """The `n` phrases of `filedata` closest to `original_text`."""
    words = filedata.split()
    size = len(original_text.split())
    scored = []
    for i in range(len(words) - size + 1):
        phrase = " ".join(words[i : i + size])
        scored.append((difflib.SequenceMatcher(None, original_text, phrase).ratio(), phrase))
    scored.sort(reverse=True)
    return [phrase for _, phrase in scored[:n]]


def search_text(query, paths=None, max_results=100):
    """Lines of the text files under `paths` that contain `query` (any case), as
    ``"path:line: text"``."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    wanted = str(query).lower()
    found = []
    for root in paths or ["."]:
        root = os.fspath(root)
        if os.path.isfile(root):
            names = [root]
        else:
            names = (os.path.join(d, f) for d, _, files in os.walk(root) for f in sorted(files))
        for name in names:
            try:
                with open(name, "r", encoding="utf-8") as file:
                    for number, line in enumerate(file, 1):
                        if wanted in line.lower():
                            found.append("%s:%d: %s" % (name, number, line.rstrip("\n")[:300]))
                            if len(found) >= max_results:
                                return found
            except (OSError, UnicodeDecodeError):
                continue
    return found
