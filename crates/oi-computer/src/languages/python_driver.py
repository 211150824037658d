# oi python driver: runs code blocks sent as JSON lines on the original stdin, in one
# persistent namespace, and reports events on stdout framed by "\x1eOI<nonce>{json}\n".
import ast
import base64
import builtins
import io
import json
import linecache
import os
import re
import signal
import sys
import time
import traceback

_NONCE = os.environ.pop("OI_NONCE", "")
_PREFIX = ("\x1eOI" + _NONCE).encode()
os.environ.setdefault("MPLBACKEND", "Agg")

# Commands come on a private copy of fd 0; user code and its children read EOF from fd 0.
_cmd = os.fdopen(os.dup(0), "rb", buffering=0)
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)
sys.stdin = open(os.devnull, "r")
os.dup2(1, 2)  # one ordered stream (normally already the same pipe)
sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", buffering=0, closefd=False), encoding="utf-8", errors="replace", write_through=True)
sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", buffering=0, closefd=False), encoding="utf-8", errors="backslashreplace", write_through=True)
_real_out = sys.stdout
_real_err = sys.stderr


class _State:
    running = False
    run = 0
    last_line = 0
    lines = 0
    line_time = 0.0


def _flush():
    for stream in (sys.stdout, sys.stderr, _real_out, _real_err):
        try:
            stream.flush()
        except Exception:
            pass


def _emit(event):
    _flush()
    data = _PREFIX + json.dumps(event).encode() + b"\n"
    while data:
        try:
            written = os.write(1, data)
        except InterruptedError:
            continue
        data = data[written:]


def _active_line(run, line):
    if run != _State.run or line == _State.last_line:
        return
    _State.last_line = line
    _State.lines += 1
    if _State.lines > 1000:
        now = time.monotonic()
        if now - _State.line_time < 0.05:
            return
        _State.line_time = now
    _emit({"ev": "line", "n": line})


builtins._oi_active_line_ = _active_line


def _on_sigint(signum, frame):
    if _State.running:
        raise KeyboardInterrupt


signal.signal(signal.SIGINT, _on_sigint)


class _Instrument(ast.NodeTransformer):
    def __init__(self, run):
        self.run = run

    def _mark(self, stmt):
        call = ast.Expr(ast.Call(ast.Name("_oi_active_line_", ast.Load()),
                                 [ast.Constant(self.run), ast.Constant(stmt.lineno)], []))
        return ast.copy_location(call, stmt)

    def _body(self, stmts):
        out = []
        for stmt in stmts:
            stmt = self.visit(stmt)
            if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
                out.append(stmt)
                continue
            out.append(self._mark(stmt))
            out.append(stmt)
        return out

    def generic_visit(self, node):
        for field in ("body", "orelse", "finalbody"):
            value = getattr(node, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(node, field, self._body(value))
        for field in ("handlers", "cases"):
            for child in getattr(node, field, None) or []:
                child.body = self._body(child.body)
        return node


def _rich(kind, fmt, data):
    _emit({"ev": "rich", "kind": kind, "format": fmt, "data": data})


def _image_data(data):
    """base64 text of image data given as bytes or base64 text."""
    if isinstance(data, str):
        return data.strip()
    return base64.b64encode(bytes(data)).decode()


def _show_bundle(bundle):
    """Shows the richest entry of a MIME bundle, as Jupyter front ends do; False if none fits."""
    if isinstance(bundle, tuple):
        bundle = bundle[0]
    if not isinstance(bundle, dict):
        return False
    for mime, fmt in (("image/png", "base64.png"), ("image/jpeg", "base64.jpeg")):
        if bundle.get(mime):
            _rich("image", fmt, _image_data(bundle[mime]))
            return True
    if bundle.get("text/html"):
        _rich("code", "html", str(bundle["text/html"]))
        return True
    if bundle.get("application/javascript"):
        _rich("code", "javascript", str(bundle["application/javascript"]))
        return True
    for mime in ("text/markdown", "text/plain", "image/svg+xml", "text/latex"):
        if bundle.get(mime):
            print(str(bundle[mime]))
            return True
    return False


def _call_repr(value, name):
    method = getattr(value, name, None)
    if not callable(method) or isinstance(value, type):
        return None
    try:
        return method()
    except Exception:
        return None


def _png_bytes(png):
    if isinstance(png, tuple):
        png = png[0]
    if isinstance(png, str):
        png = png.encode()
    if png.startswith(b"\x89PNG"):
        return png
    try:
        return base64.b64decode(png)
    except Exception:
        return b""


def _show(value):
    """Shows `value` the way a notebook does: images, HTML, then text."""
    if value is None:
        return
    if _show_bundle(_call_repr(value, "_repr_mimebundle_")):
        return
    png = _call_repr(value, "_repr_png_")
    if png and _png_bytes(png):
        _rich("image", "base64.png", base64.b64encode(_png_bytes(png)).decode())
        return
    jpeg = _call_repr(value, "_repr_jpeg_")
    if jpeg:
        _rich("image", "base64.jpeg", _image_data(jpeg[0] if isinstance(jpeg, tuple) else jpeg))
        return
    if type(value).__module__.startswith("matplotlib.figure") and hasattr(value, "savefig"):
        buf = io.BytesIO()
        value.savefig(buf, format="png", bbox_inches="tight")
        _rich("image", "base64.png", base64.b64encode(buf.getvalue()).decode())
        return
    html = _call_repr(value, "_repr_html_")
    if html:
        _rich("code", "html", str(html))
        return
    markdown = _call_repr(value, "_repr_markdown_")
    if markdown:
        print(markdown)
        return
    print(repr(value))


def _display(value):
    """Shows the value of a cell's last expression and keeps it as `_`."""
    if value is None:
        return
    builtins._ = value
    _show(value)


def display(*objs, raw=False, **_ignored):
    """IPython's display(): shows each object as a notebook would (images, HTML, text)."""
    for obj in objs:
        if raw and isinstance(obj, dict):
            _show_bundle(obj)
        else:
            _show(obj)


def _figures():
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    try:
        for num in plt.get_fignums():
            fig = plt.figure(num)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", bbox_inches="tight")
            _emit({"ev": "rich", "kind": "image", "format": "base64.png", "data": base64.b64encode(buf.getvalue()).decode()})
        plt.close("all")
    except Exception:
        traceback.print_exc()


# --- What models trained on notebooks write, run the way IPython runs it ------------------
# `!cmd`, `x = !cmd`, line magics (`%pip`, `%cd`, `%env`, `%time`, `%timeit`, `%matplotlib`,
# ...), automagic `pip install x` / `cd dir`, and cell magics (`%%writefile`, `%%bash`, ...).
# A cell that parses as Python is never rewritten; otherwise each such line becomes one call
# on the same line, so line numbers (and active lines) stay exact. oi's approval rules read
# these lines the same way (oi-core's policy/ipython.rs): keep the two in step.

class _UsageError(Exception):
    """A magic used wrongly: shown as one line, no traceback (IPython's UsageError)."""


_MAGIC_LINE = re.compile(r"^(\s*)([!%])(.*)$")
_ASSIGN_LINE = re.compile(r"^(\s*)([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*)\s*=\s*([!%])(.*)$")
_AUTOMAGIC = re.compile(r"^(\s*)(pip|cd)\s+([^\s=(\[,:+*/%<>!&|^~@'\"].*)$")


def _line_starts(lines):
    """Indexes of the lines that start a statement: not inside a string, brackets or a
    backslash continuation. IPython-only lines are not scanned (they are shell text)."""
    starts = []
    quote = None
    depth = 0
    cont = False
    for i, line in enumerate(lines):
        if quote is None and depth == 0 and not cont:
            starts.append(i)
            if _MAGIC_LINE.match(line) or _ASSIGN_LINE.match(line) or _AUTOMAGIC.match(line):
                cont = line.rstrip().endswith("\\")
                continue
        cont = False
        j, n = 0, len(line)
        while j < n:
            c = line[j]
            if quote is not None:
                if c == "\\":
                    j += 2
                    continue
                if line.startswith(quote, j):
                    j += len(quote)
                    quote = None
                    continue
                j += 1
                continue
            if c == "#":
                break
            if c in "'\"":
                quote = c * 3 if line.startswith(c * 3, j) else c
                j += len(quote)
                continue
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth = max(0, depth - 1)
            j += 1
        if quote in ("'", '"') and not line.rstrip().endswith("\\"):
            quote = None
        if quote is None and line.rstrip().endswith("\\"):
            cont = True
    return starts


def _notebook_lines(code):
    """`code` with each IPython-only statement line replaced by a call on the same line."""
    lines = code.split("\n")
    out = list(lines)
    skip = set()
    for i in _line_starts(lines):
        if i in skip:
            continue
        line = lines[i]
        # IPython joins a magic's backslash continuations; their lines stay blank.
        j = i
        while lines[j].rstrip().endswith("\\") and j + 1 < len(lines) and (
                _MAGIC_LINE.match(line) or _ASSIGN_LINE.match(line)):
            line = line.rstrip()[:-1] + " " + lines[j + 1].strip()
            j += 1
            skip.add(j)
            out[j] = ""
        call = _call_for(line)
        if call is not None:
            out[i] = call
    return "\n".join(out)


def _call_for(line):
    """The Python call for one IPython-only line, or None."""
    m = _ASSIGN_LINE.match(line)
    if m:
        indent, target, sigil, rest = m.groups()
        if sigil == "!":
            return "%s%s = _oi_getoutput_(%r)" % (indent, target, rest)
        if rest.startswith("%"):
            return None
        name, _, args = rest.strip().partition(" ")
        return "%s%s = _oi_magic_(%r, %r)" % (indent, target, name, args.strip())
    m = _MAGIC_LINE.match(line)
    if m:
        indent, sigil, rest = m.groups()
        if sigil == "!":
            if rest.startswith("!"):  # `!!cmd` returns the output
                return "%s_oi_getoutput_(%r)" % (indent, rest[1:])
            return "%s_oi_system_(%r)" % (indent, rest)
        if rest.startswith("%"):
            return None  # a cell magic not on the first line: a SyntaxError, as in IPython
        name, _, args = rest.strip().partition(" ")
        if not name:
            return None
        return "%s_oi_magic_(%r, %r)" % (indent, name, args.strip())
    m = _AUTOMAGIC.match(line)
    if m:
        indent, name, args = m.groups()
        return "%s_oi_magic_(%r, %r)" % (indent, name, args.strip())
    return None


_VARIABLE = re.compile(r"\$\$|\$([A-Za-z_]\w*)|\{\{|\}\}|\{([^{}]+)\}")


def _caller_namespaces(depth):
    frame = sys._getframe(depth + 1)
    return frame.f_globals, frame.f_locals


def _expand(text, depth=1):
    """IPython's variable expansion: `{expr}` and `$name` from the caller's namespace, `$$`
    and doubled braces for literal ones; left as it is when anything fails."""
    if "$" not in text and "{" not in text:
        return text
    glob, loc = _caller_namespaces(depth + 1)

    def value(m):
        token = m.group(0)
        if token in ("$$", "{{", "}}"):
            return token[0]
        if m.group(1):
            name = m.group(1)
            if name in loc:
                return str(loc[name])
            return str(glob[name])
        return str(eval(m.group(2), glob, loc))

    try:
        return _VARIABLE.sub(value, text)
    except Exception:
        return text


def _shell(command):
    """Runs `command` with /bin/sh, its output streaming to the session; the exit status."""
    import subprocess
    _flush()
    status = subprocess.call(command, shell=True)
    _user["_exit_code"] = status
    return status


def _oi_system_(command):
    _shell(_expand(command))


class _SList(list):
    """The lines a shell command printed (IPython's SList, in short)."""

    @property
    def s(self):
        return " ".join(self)

    @property
    def n(self):
        return "\n".join(self)

    l = property(lambda self: list(self))


def _getoutput(command):
    import subprocess
    _flush()
    done = subprocess.run(command, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    _user["_exit_code"] = done.returncode
    return _SList(done.stdout.decode("utf-8", "replace").splitlines())


def _oi_getoutput_(command):
    return _getoutput(_expand(command))


def _format_time(seconds):
    """A duration as IPython writes it (3 significant digits, ns to s)."""
    import math
    if seconds >= 60.0:
        minutes, rest = divmod(seconds, 60.0)
        return "%dmin %.0fs" % (minutes, rest)
    units = ["s", "ms", "\u00b5s", "ns"]
    order = min(-int(math.floor(math.log10(seconds)) // 3), 3) if seconds > 0 else 3
    return "%.3g %s" % (seconds * (1, 1e3, 1e6, 1e9)[order], units[order])


def _compile_statement(code, depth):
    glob, loc = _caller_namespaces(depth + 1)
    try:
        return compile(code, "<timed>", "eval"), glob, loc, True
    except SyntaxError:
        return compile(code, "<timed>", "exec"), glob, loc, False


def _magic_time(args, depth):
    code, glob, loc, is_expr = _compile_statement(args, depth + 1)
    before, start = os.times(), time.perf_counter()
    try:
        value = eval(code, glob, loc) if is_expr else exec(code, glob, loc)
    finally:
        wall, after = time.perf_counter() - start, os.times()
        user, system = after.user - before.user, after.system - before.system
        print("CPU times: user %s, sys: %s, total: %s" % (
            _format_time(user), _format_time(system), _format_time(user + system)))
        print("Wall time: %s" % _format_time(wall))
    return value


def _timeit_options(args):
    number, repeat, quiet = 0, 7, False
    words = args.split()
    while words and words[0].startswith("-") and len(words[0]) > 1 and words[0][1].isalpha():
        flag = words.pop(0)
        if flag in ("-n", "-r") and words:
            count = words.pop(0)
            if not count.isdigit():
                raise _UsageError("%%timeit: %s takes a number, not %r" % (flag, count))
            if flag == "-n":
                number = int(count)
            else:
                repeat = int(count)
        elif flag == "-q":
            quiet = True
        elif flag == "-o":
            pass
        else:
            raise _UsageError("%%timeit: unknown option %s (oi knows -n N, -r R, -q, -o)" % flag)
    return " ".join(words), number, repeat, quiet


def _magic_timeit(args, depth, namespace=None):
    import statistics
    import timeit
    statement, number, repeat, quiet = _timeit_options(args)
    if not statement.strip():
        raise _UsageError("%timeit needs a statement, for example %timeit sum(range(100))")
    if namespace is None:
        glob, loc = _caller_namespaces(depth + 1)
        namespace = dict(glob)
        namespace.update(loc)
    timer = timeit.Timer(statement, globals=namespace)
    if number == 0:
        number = 1
        while timer.timeit(number) < 0.2 and number < 10 ** 9:
            number *= 10
    times = [t / number for t in timer.repeat(repeat, number)]
    mean = statistics.mean(times)
    dev = statistics.pstdev(times) if len(times) > 1 else 0.0
    if not quiet:
        print("%s \u00b1 %s per loop (mean \u00b1 std. dev. of %d run%s, %d loop%s each)" % (
            _format_time(mean), _format_time(dev), repeat, "" if repeat == 1 else "s",
            number, "" if number == 1 else "s"))
    return None


_PREVIOUS_DIRS = []


def _magic_cd(args):
    target = args.strip().strip("'\"")
    if target in ("", "~"):
        target = os.path.expanduser("~")
    elif target == "-":
        if not _PREVIOUS_DIRS:
            raise _UsageError("%cd -: there is no previous directory")
        target = _PREVIOUS_DIRS[-1]
    target = os.path.expanduser(target)
    here = os.getcwd()
    try:
        os.chdir(target)
    except OSError as exc:
        raise _UsageError("%s: %s" % (exc.strerror, target))
    _PREVIOUS_DIRS.append(here)
    print(os.getcwd())


def _magic_env(args):
    args = args.strip()
    if not args:
        return dict(os.environ)
    if "=" in args or " " in args:
        name, _, value = args.partition("=") if "=" in args else args.partition(" ")
        name, value = name.strip(), value.strip()
        os.environ[name] = value
        print("env: %s=%s" % (name, value))
        return None
    return os.environ.get(args)


def _magic_pip(args, program=None):
    import importlib
    import shlex
    import site
    command = [sys.executable, "-m", "pip"] if program is None else [program]
    _shell(" ".join(shlex.quote(w) for w in command) + " " + args)
    importlib.invalidate_caches()
    user_site = site.getusersitepackages()
    if os.path.isdir(user_site) and user_site not in sys.path:
        site.addsitedir(user_site)


def _magic_run(args):
    import shlex
    words = shlex.split(args)
    interactive = bool(words) and words[0] == "-i"
    if interactive:
        words = words[1:]
    if not words:
        raise _UsageError("%run needs a file, for example %run script.py")
    path = os.path.expanduser(words[0])
    if not os.path.exists(path) and os.path.exists(path + ".py"):
        path += ".py"
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as exc:
        raise _UsageError("%%run: %s: %s" % (exc.strerror, path))
    namespace = _user if interactive else {"__name__": "__main__", "__builtins__": builtins}
    namespace["__file__"] = path
    saved_argv = sys.argv
    sys.argv = [path] + words[1:]
    try:
        exec(compile(source, path, "exec"), namespace)
    finally:
        sys.argv = saved_argv
    if not interactive:
        _user.update({k: v for k, v in namespace.items() if not k.startswith("__")})


def _magic_who(args):
    names = sorted(k for k, v in _user.items()
                   if not k.startswith("_") and k not in ("display", "get_ipython")
                   and type(v).__name__ != "module")
    print("\t".join(names) if names else "Interactive namespace is empty.")


_ALIASES = {
    "ls": "ls -F", "ll": "ls -F -l", "cat": "cat", "cp": "cp", "mv": "mv", "rm": "rm",
    "mkdir": "mkdir", "rmdir": "rmdir", "man": "man", "clear": "clear",
}

_QUIET = ("inline", "agg", "")

_LINE_MAGICS = ("pip", "conda", "cd", "pwd", "env", "time", "timeit", "matplotlib", "run",
                "system", "sx", "who") + tuple(_ALIASES)


def _oi_magic_(name, args, depth=1):
    """Runs the line magic `%name args`; its value is what IPython's would be."""
    if name not in ("time", "timeit"):
        args = _expand(args, depth)
    if name == "pip":
        return _magic_pip(args)
    if name == "conda":
        return _magic_pip(args, program="conda")
    if name == "cd":
        return _magic_cd(args)
    if name == "pwd":
        return os.getcwd()
    if name == "env":
        return _magic_env(args)
    if name == "time":
        return _magic_time(args, depth)
    if name == "timeit":
        return _magic_timeit(args, depth)
    if name == "matplotlib":
        backend = args.strip().lower()
        if backend not in _QUIET:
            print("oi shows matplotlib figures as images after each run; the %s backend is not used." % backend)
        return None
    if name == "run":
        return _magic_run(args)
    if name in ("system", "sx"):
        return _getoutput(args)
    if name == "who":
        return _magic_who(args)
    if name in _ALIASES:
        _shell(_ALIASES[name] + (" " + args if args else ""))
        return None
    raise _UsageError(
        "%%%s is not a magic oi's Python session knows: use !command for shell commands, or %s."
        % (name, ", ".join("%" + m for m in _LINE_MAGICS if m not in _ALIASES)))


_CELL_MAGICS = ("writefile", "bash", "sh", "script", "time", "timeit", "capture", "html",
                "markdown", "javascript", "js")


def _cell_magic(code):
    """(name, args, body with the magic line blanked) when the cell starts with `%%name`."""
    stripped = code.lstrip("\n")
    if not stripped.startswith("%%"):
        return None
    skipped = len(code) - len(stripped)
    first, _, rest = stripped.partition("\n")
    name, _, args = first[2:].strip().partition(" ")
    body = "\n" * (code[:skipped].count("\n") + 1) + rest
    return name, args.strip(), body


def _run_cell_magic(run, filename, name, args, body):
    _State.running = True
    try:
        if name in ("time", "capture"):
            _State.running = False
            if name == "time":
                before, start = os.times(), time.perf_counter()
                _execute(run, filename, body)
                wall, after = time.perf_counter() - start, os.times()
                user, system = after.user - before.user, after.system - before.system
                print("CPU times: user %s, sys: %s, total: %s" % (
                    _format_time(user), _format_time(system), _format_time(user + system)))
                print("Wall time: %s" % _format_time(wall))
            else:
                _capture(run, filename, args, body)
            return
        text = body.strip("\n") + "\n"
        if name == "writefile":
            _writefile(_expand(args), text)
        elif name in ("bash", "sh") or (name == "script" and args.split()[:1] in (["bash"], ["sh"])):
            import subprocess
            program = name if name != "script" else args.split()[0]
            _flush()
            _user["_exit_code"] = subprocess.call([program, "-c", text])
        elif name == "script":
            import subprocess
            if not args:
                raise _UsageError("%%script needs a program, for example %%script bash")
            _flush()
            _user["_exit_code"] = subprocess.run(args.split(), input=text.encode()).returncode
        elif name == "timeit":
            statement = ";".join(line.strip() for line in text.splitlines() if line.strip())
            _magic_timeit(args + " " + statement, 0, namespace=_user)
        elif name == "html":
            _rich("code", "html", text)
        elif name in ("javascript", "js"):
            _rich("code", "javascript", text)
        elif name == "markdown":
            print(text, end="")
        else:
            raise _UsageError(
                "%%%%%s is not a cell magic oi's Python session knows: use one of %s." % (
                    name, ", ".join("%%" + m for m in _CELL_MAGICS)))
    except _UsageError as exc:
        sys.stderr.write("%s\n" % exc)
    except BaseException as exc:
        _print_exception(exc)
    finally:
        _State.running = False


def _writefile(args, text):
    append = False
    words = args.split()
    if words and words[0] in ("-a", "--append"):
        append = True
        words = words[1:]
    if not words:
        raise _UsageError("%%writefile needs a file name, for example %%writefile script.py")
    path = os.path.expanduser(" ".join(words).strip("'\""))
    exists = os.path.exists(path)
    print("%s %s" % ("Appending to" if append else ("Overwriting" if exists else "Writing"), path))
    with open(path, "a" if append else "w") as f:
        f.write(text)


class _Captured:
    """What a %%capture cell printed (`.stdout`, `.stderr`, `.show()`)."""

    def __init__(self, stdout, stderr):
        self.stdout, self.stderr = stdout, stderr

    def show(self):
        sys.stdout.write(self.stdout)
        sys.stderr.write(self.stderr)

    def __str__(self):
        return self.stdout


def _capture(run, filename, args, body):
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        _execute(run, filename, body)
    finally:
        sys.stdout, sys.stderr = saved
    name = args.split()[0] if args.split() and not args.startswith("-") else None
    if name:
        _user[name] = _Captured(out.getvalue(), err.getvalue())


class _Shell:
    """What `get_ipython()` gives: enough of IPython's shell for code that calls it."""

    def system(self, command):
        _shell(_expand(command))

    def getoutput(self, command):
        return _getoutput(_expand(command))

    def run_line_magic(self, name, line):
        return _oi_magic_(name, line, depth=2)

    def run_cell_magic(self, name, line, cell):
        _run_cell_magic(_State.run, "<cell %d>" % _State.run, name, line, "\n" + cell)

    def magic(self, line):
        name, _, args = line.lstrip("%").partition(" ")
        return _oi_magic_(name, args, depth=2)

    user_ns = property(lambda self: _user)


_SHELL = _Shell()


def get_ipython():
    """IPython's get_ipython() in oi's session."""
    return _SHELL


# IPython.display without IPython: the names notebook code imports, showing through
# display(). With IPython installed, its display() is pointed at this one instead.
class _Rich:
    _mime = "text/plain"

    def __init__(self, data=None, url=None, filename=None, **_ignored):
        if data is None and (filename or url):
            path = filename or url
            if os.path.exists(path):
                with open(path, "rb") as f:
                    data = f.read()
        if isinstance(data, bytes) and self._mime.startswith("text"):
            data = data.decode("utf-8", "replace")
        self.data = data

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {self._mime: self.data}

    def __repr__(self):
        return "<%s object>" % type(self).__name__


class HTML(_Rich):
    _mime = "text/html"


class Markdown(_Rich):
    _mime = "text/markdown"


class Javascript(_Rich):
    _mime = "application/javascript"


class SVG(_Rich):
    _mime = "image/svg+xml"


class Latex(_Rich):
    _mime = "text/latex"


class JSON(_Rich):
    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/plain": json.dumps(self.data, indent=2)}


class Image(_Rich):
    def __init__(self, data=None, url=None, filename=None, format=None, **_ignored):
        super().__init__(data, url, filename)
        name = (filename or url or "").lower()
        jpeg = (format or "").lower() in ("jpeg", "jpg") or name.endswith((".jpg", ".jpeg"))
        if isinstance(self.data, bytes) and self.data.startswith(b"\xff\xd8"):
            jpeg = True
        self._mime = "image/jpeg" if jpeg else "image/png"


def clear_output(wait=False):
    """Nothing to clear: output is a stream."""


def _shim_module(name):
    module = type(sys)(name)
    for attr in ("display", "HTML", "Markdown", "Javascript", "SVG", "Latex", "JSON", "Image",
                 "clear_output", "get_ipython"):
        setattr(module, attr, globals()[attr])
    module.__path__ = []
    return module


class _NotebookImports:
    """A meta-path finder: `IPython` and `IPython.display` when IPython is not installed (it
    is consulted last), and IPython's own display() pointed at the session's when it is."""

    _SHIMS = ("IPython", "IPython.display", "IPython.core", "IPython.core.display")

    def find_spec(self, fullname, path=None, target=None):
        # No import may happen here: it would ask this finder again.
        if not fullname.startswith("IPython"):
            return None
        if fullname == "IPython.core.display_functions" and self in sys.meta_path[:1]:
            return self._patched(fullname)
        if fullname in self._SHIMS and self not in sys.meta_path[:1]:
            return _importlib_machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def _patched(self, fullname):
        sys.meta_path.remove(self)
        try:
            spec = _importlib_util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        real_exec = spec.loader.exec_module

        def exec_module(module):
            real_exec(module)
            module.display = display

        spec.loader.exec_module = exec_module
        return spec

    def create_module(self, spec):
        return _shim_module(spec.name)

    def exec_module(self, module):
        pass


import importlib.machinery as _importlib_machinery  # noqa: E402 (loaded at start anyway)
import importlib.util as _importlib_util  # noqa: E402


def _install_ipython_shims():
    first = _NotebookImports()
    last = _NotebookImports()
    sys.meta_path.insert(0, first)
    sys.meta_path.append(last)


_user = {"__name__": "__main__", "__builtins__": builtins}
_user["display"] = display
_user["get_ipython"] = get_ipython
builtins._oi_system_ = _oi_system_
builtins._oi_getoutput_ = _oi_getoutput_
builtins._oi_magic_ = _oi_magic_
_install_ipython_shims()
_driver_globals = globals()
_HIDE = "@@@HIDE_TRACEBACK@@@"


def _user_frames(tb):
    """The traceback's frames without the driver's own (its run loop and magics)."""
    while tb is not None:
        if tb.tb_frame.f_globals is not _driver_globals:
            yield tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next


def _print_exception(exc):
    report = traceback.TracebackException(type(exc), exc, exc.__traceback__)
    report.stack = traceback.StackSummary.extract(_user_frames(exc.__traceback__))
    text = "".join(report.format())
    if _HIDE in text:
        # spec a.6: the traceback is replaced by the text after the last marker
        text = "Stopping execution.\n\n" + text.split(_HIDE)[-1].strip() + "\n"
    sys.stderr.write(text)


def _syntax_error(exc, source):
    """Reports a syntax error, showing the line as the user wrote it."""
    if isinstance(exc, SyntaxError) and exc.lineno:
        lines = source.splitlines()
        if 0 < exc.lineno <= len(lines):
            exc.text = lines[exc.lineno - 1]
    sys.stderr.write("".join(traceback.format_exception_only(type(exc), exc)))


def _parse(filename, source):
    """The cell's syntax tree; IPython-only lines (`!cmd`, `%magic`) become calls on the same
    lines when the cell is not Python as it stands. None (reported) when it cannot be read."""
    try:
        return ast.parse(source, filename, "exec")
    except (SyntaxError, ValueError, OverflowError) as exc:
        rewritten = _notebook_lines(source)
        if rewritten == source:
            _syntax_error(exc, source)
            return None
        try:
            return ast.parse(rewritten, filename, "exec")
        except (SyntaxError, ValueError, OverflowError) as again:
            _syntax_error(again, source)
            return None


def _execute(run, filename, source):
    """Runs `source` in the user namespace, with active lines; shows the value of a last
    expression."""
    tree = _parse(filename, source)
    if tree is None:
        return
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body.pop()
    tree = _Instrument(run).visit(tree)
    if last is not None:
        tree.body.append(_Instrument(run)._mark(last))
    ast.fix_missing_locations(tree)
    try:
        _State.running = True
        exec(compile(tree, filename, "exec"), _user)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), filename, "eval"), _user)
            _State.running = False
            _display(value)
    except SystemExit as exc:
        _State.running = False
        if exc.code not in (None, 0):
            print("SystemExit: %s" % (exc.code,), file=sys.stderr)
    except _UsageError as exc:
        _State.running = False
        sys.stderr.write("%s\n" % exc)
    except BaseException as exc:  # includes KeyboardInterrupt from stop()
        _State.running = False
        _print_exception(exc)
    finally:
        _State.running = False


def _run(run, code):
    filename = "<cell %d>" % run
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    cell = _cell_magic(code)
    if cell is not None:
        _run_cell_magic(run, filename, *cell)
        return
    _execute(run, filename, code)


def _install_api(source, skills):
    """Imports oi's `computer` API (python_computer_api.py) into the namespace once (a
    `computer` of the code's own is left alone), and as the module `computer`."""
    if "computer" in _user:
        return
    space = {"__name__": "oi_computer_api", "__builtins__": builtins}
    exec(compile(source, "<oi computer api>", "exec"), space)
    _user["computer"] = sys.modules["computer"] = space["make_computer"](_emit, _cmd, _user, skills or "")


def _main():
    while True:
        try:
            line = _cmd.readline()
        except KeyboardInterrupt:
            continue
        if not line:
            return
        try:
            command = json.loads(line)
        except ValueError:
            continue
        if not isinstance(command, dict) or "api" in command and "id" not in command:
            continue  # a computer API answer that came after its call gave up
        run = int(command.get("id", 0))
        try:
            _State.run = run
            _State.last_line = 0
            _State.lines = 0
            _emit({"ev": "start", "id": run})
            if command.get("api"):
                try:
                    _install_api(command["api"], command.get("skills"))
                except Exception as exc:
                    print("oi: the computer API could not be imported: %s" % (exc,), file=sys.stderr)
            _run(run, command.get("code", ""))
            _figures()
        except KeyboardInterrupt:
            pass
        finally:
            while True:
                try:
                    _emit({"ev": "done", "id": run})
                    break
                except KeyboardInterrupt:
                    continue


_main()
