# oi's headless `computer` API inside the code's Python session (import_computer_api).
# The driver runs this file once and calls make_computer(emit, cmd, user, skills_path). The
# door (api_door.rs) sends one text request to oi (computer.ai.*, reading or saving skills) as
# an event on the output pipe and reads oi's answer, a JSON line, from the private command
# pipe. Files and the terminal run here, inside the sandboxed session.
import difflib
import json
import os
import subprocess
import sys

NOT_HEADLESS = "not available in oi: headless (oi runs code; it does not drive the screen, mouse, keyboard or desktop apps)"


class _Tool:
    def __init__(self, computer):
        self.computer = computer


class Ai(_Tool):
    def chat(self, text, base64=None):
        """Asks the language model `text` and returns its answer."""
        if base64 is not None:
            raise NotImplementedError("computer.ai.chat(base64=...) is not available in oi: text only")
        return self.computer._door({"op": "ai.chat", "text": str(text)})

    def query(self, text, query, custom_reduce_query=None):
        """Asks `query` of a long `text`, chunk by chunk, and returns the combined answer."""
        return self.computer._door({"op": "ai.query", "text": str(text), "query": str(query)})

    def summarize(self, text):
        """Summarizes a long text into a concise paragraph."""
        return self.computer._door({"op": "ai.summarize", "text": str(text)})


def _close_matches(original_text, filedata, n=3):
    words = filedata.split()
    size = len(original_text.split())
    scored = []
    for i in range(len(words) - size + 1):
        phrase = " ".join(words[i : i + size])
        scored.append((difflib.SequenceMatcher(None, original_text, phrase).ratio(), phrase))
    scored.sort(reverse=True)
    return [phrase for _, phrase in scored[:n]]


class Files(_Tool):
    def search(self, query, paths=None, max_results=100):
        """Searches the text files under `paths` (default: the working directory) for `query` and returns the matching lines."""
        return search_text(query, paths, max_results)

    def edit(self, path, original_text, replacement_text):
        """Edits a file on the filesystem, replacing the original text with the replacement text."""
        with open(path, "r") as file:
            filedata = file.read()
        if original_text not in filedata:
            matches = _close_matches(original_text, filedata)
            raise ValueError(
                "Original text not found. Did you mean one of these? " + ", ".join(matches)
            )
        with open(path, "w") as file:
            file.write(filedata.replace(original_text, replacement_text))


def search_text(query, paths=None, max_results=100):
    """Lines of text files under `paths` that contain `query` (case-insensitive), as
    "path:line: text"."""
    if isinstance(paths, str):
        paths = [paths]
    wanted = str(query).lower()
    found = []
    for root in paths or ["."]:
        files = [root] if os.path.isfile(root) else (
            os.path.join(d, f) for d, _, names in os.walk(root) for f in sorted(names)
        )
        for name in files:
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


class Skills(_Tool):
    """Saved skills. The sandbox hides oi's config directory (its profiles hold keys), so the
    session reads and saves them through oi."""

    def __init__(self, computer, path):
        super().__init__(computer)
        self.path = path

    def _all(self):
        return json.loads(self.computer._door({"op": "skills.read"}))

    def list(self):
        """Lists the saved skills."""
        return [name + "()" for name in self._all()]

    def search(self, query):
        """Lists the saved skills whose name or code mention `query`."""
        wanted = str(query).lower()
        return [
            name + "()"
            for name, code in self._all().items()
            if wanted in name.lower() or wanted in code.lower()
        ]

    def import_skills(self):
        """Defines every saved skill (a Python function of the same name) in this session."""
        imported = []
        for name, code in self._all().items():
            try:
                exec(compile(code, os.path.join(self.path, name + ".py"), "exec"), self.computer._user)
                imported.append(name)
            except Exception as exc:
                print("Skill %s might be broken: %s" % (name, exc))
        return imported

    def save(self, name, code):
        """Saves `code`, which defines the function `name`, as a skill for later sessions."""
        return self.computer._door({"op": "skills.save", "query": str(name), "code": str(code)})

    def run(self, skill):
        print("To run a skill, run its name as a function name (it is already imported).")


class Terminal(_Tool):
    def run(self, language, code, stream=False, display=False):
        """Runs python or shell code and returns its output as a list of messages."""
        name = str(language).lower()
        if name in ("python", "py"):
            args = [sys.executable, "-c", code]
        elif name in ("shell", "bash", "sh", "zsh"):
            args = ["bash", "-c", code]
        else:
            raise ValueError("computer.terminal.run runs python or shell here, not %r" % (language,))
        done = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        output = done.stdout.decode("utf-8", "replace")
        if display:
            print(output, end="")
        return [{"role": "computer", "type": "console", "format": "output", "content": output}]


class Os(_Tool):
    def notify(self, text):
        """Shows a notification to the user."""
        print("[notification] %s" % (text,))

    def get_selected_text(self):
        raise NotImplementedError("computer.os.get_selected_text is " + NOT_HEADLESS)


class _Refused:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise NotImplementedError("computer.%s is %s" % (self._name, NOT_HEADLESS))


REFUSED = ("mouse", "keyboard", "display", "clipboard", "mail", "sms", "calendar", "contacts", "browser", "vision", "docs")


class Computer:
    _oi_api = True

    def __init__(self, door, user, skills_path):
        self._door = door
        self._user = user
        self.ai = Ai(self)
        self.files = Files(self)
        self.skills = Skills(self, skills_path)
        self.terminal = Terminal(self)
        self.os = Os(self)
        for name in REFUSED:
            setattr(self, name, _Refused(name))

    def run(self, language, code, **kwargs):
        return self.terminal.run(language, code, **kwargs)

    def exec(self, code):
        return self.terminal.run("shell", code)

    def screenshot(self, *args, **kwargs):
        raise NotImplementedError("computer.screenshot is " + NOT_HEADLESS)

    view = screenshot


def make_computer(emit, cmd, user, skills_path):
    def door(request):
        emit({"ev": "api", "data": json.dumps(request)})
        while True:
            line = cmd.readline()
            if not line:
                raise RuntimeError("oi closed the session")
            try:
                answer = json.loads(line)
            except ValueError:
                continue
            if isinstance(answer, dict) and answer.get("api") is True:
                break
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer.get("ok", "")

    return Computer(door, user, skills_path)
