# oi python driver: runs code blocks sent as JSON lines on the original stdin, in one
# persistent namespace, and reports events on stdout framed by "\x1eOI<nonce>{json}\n".
import ast
import base64
import builtins
import io
import json
import linecache
import os
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


def _display(value):
    if value is None:
        return
    builtins._ = value
    png = getattr(value, "_repr_png_", None)
    if callable(png) and not isinstance(value, type):
        try:
            data = png()
            if data:
                if isinstance(data, str):
                    data = data.encode()
                if not data.startswith(b"\x89PNG"):
                    data = base64.b64decode(data)
                _emit({"ev": "rich", "kind": "image", "format": "base64.png", "data": base64.b64encode(data).decode()})
                return
        except Exception:
            pass
    html = getattr(value, "_repr_html_", None)
    if callable(html) and not isinstance(value, type):
        try:
            data = html()
            if data:
                _emit({"ev": "rich", "kind": "code", "format": "html", "data": str(data)})
                return
        except Exception:
            pass
    print(repr(value))


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


_user = {"__name__": "__main__", "__builtins__": builtins}
_driver_globals = globals()
_HIDE = "@@@HIDE_TRACEBACK@@@"


def _print_exception(exc):
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_globals is _driver_globals:
        tb = tb.tb_next
    text = "".join(traceback.format_exception(type(exc), exc, tb))
    if _HIDE in text:
        # spec a.6: the traceback is replaced by the text after the last marker
        text = "Stopping execution.\n\n" + text.split(_HIDE)[-1].strip() + "\n"
    sys.stderr.write(text)


def _run(run, code):
    filename = "<cell %d>" % run
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    try:
        tree = ast.parse(code, filename, "exec")
    except (SyntaxError, ValueError, OverflowError) as exc:
        sys.stderr.write("".join(traceback.format_exception_only(type(exc), exc)))
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
    except BaseException as exc:  # includes KeyboardInterrupt from stop()
        _State.running = False
        _print_exception(exc)
    finally:
        _State.running = False


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
        run = int(command.get("id", 0))
        try:
            _State.run = run
            _State.last_line = 0
            _State.lines = 0
            _emit({"ev": "start", "id": run})
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
