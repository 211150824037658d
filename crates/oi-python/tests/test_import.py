"""Importing the package is quick and light: `python -c "from interpreter import interpreter"`
well under 100 ms (the original: seconds), no thread or process started, little memory."""

import statistics
import subprocess
import sys
import time

IMPORT = "from interpreter import interpreter"


PEAK = (
    "\nfor line in open('/proc/self/status'):\n"
    "    if line.startswith('VmHWM:'):\n"
    "        print(int(line.split()[1]) / 1024)\n"
)


def measure(source):
    """(wall seconds, peak RSS in MiB) of `python -c source`. The peak is the process's own
    (VmHWM after exec): the rusage of a forked child would count the test runner's pages."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", source + PEAK], capture_output=True, text=True)
    wall = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    return wall, float(done.stdout.split()[-1])


def test_import_is_quick_and_light():
    runs = [measure(IMPORT) for _ in range(7)]
    bare = [measure("pass") for _ in range(7)]
    wall = statistics.median(w for w, _ in runs)
    rss = statistics.median(m for _, m in runs)
    baseline = statistics.median(w for w, _ in bare)
    print(f"import: {wall * 1000:.1f} ms (python alone {baseline * 1000:.1f} ms), {rss:.1f} MiB")
    assert wall < 0.100, f"`{IMPORT}` took {wall * 1000:.0f} ms"
    assert rss < 48, f"`{IMPORT}` used {rss:.1f} MiB"


def test_import_starts_no_thread_and_no_process():
    source = (
        f"{IMPORT}\n"
        "import os, threading\n"
        "print(len(os.listdir('/proc/self/task')), threading.active_count())\n"
        "import subprocess\n"
        "print(subprocess.run(['ps', '--ppid', str(os.getpid()), '-o', 'pid='], capture_output=True, text=True).stdout.split())\n"
    )
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    tasks, children = done.stdout.splitlines()
    assert tasks == "1 1"
    children = eval(children)  # the ps process itself only
    assert len(children) <= 1
