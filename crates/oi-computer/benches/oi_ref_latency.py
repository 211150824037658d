"""Latency of `print(1)` in Open Interpreter 0.4.3's Python (Jupyter kernel) language.

Run with the interpreter of a venv that has `open-interpreter==0.4.3` installed:

    python3 -m venv target/oi-ref
    target/oi-ref/bin/pip install open-interpreter==0.4.3
    target/oi-ref/bin/python crates/oi-computer/benches/oi_ref_latency.py [WARM_RUNS]

Each invocation is one cold start: it times the import, the first
`interpreter.computer.run("python", "print(1)")` (which starts the kernel), then the median
of WARM_RUNS further calls (default 50). Run it several times for several cold starts.
"""
import statistics
import sys
import time

warm_runs = int(sys.argv[1]) if len(sys.argv) > 1 else 50

t0 = time.perf_counter()
from interpreter import interpreter  # noqa: E402

t1 = time.perf_counter()
first = interpreter.computer.run("python", "print(1)")
t2 = time.perf_counter()
assert "1" in str(first), first

samples = []
for _ in range(warm_runs):
    start = time.perf_counter()
    out = interpreter.computer.run("python", "print(1)")
    samples.append(time.perf_counter() - start)
    assert "1" in str(out), out

interpreter.computer.terminate()
print(
    "import_ms=%.1f cold_first_run_ms=%.1f warm_median_ms=%.2f warm_min_ms=%.2f warm_runs=%d"
    % (
        (t1 - t0) * 1e3,
        (t2 - t1) * 1e3,
        statistics.median(samples) * 1e3,
        min(samples) * 1e3,
        warm_runs,
    )
)
