"""Two turns through Open Interpreter's Python API — oi's `interpreter` package or the
original's, whichever this Python imports — against a model server (for `cargo xtask bench`).

Usage: python py_turns.py BASE_URL MESSAGE
Prints `import_s=… chat_s=… warm_s=… messages=…`: the import, the first turn (code sessions
start) and the second, warm turn, each timed inside the process.
"""

import sys
import time

t0 = time.perf_counter()
from interpreter import interpreter  # noqa: E402

t1 = time.perf_counter()
interpreter.offline = True
interpreter.auto_run = True
interpreter.conversation_history = False
interpreter.llm.model = "openai/gpt-4o"
interpreter.llm.api_base = sys.argv[1]
interpreter.llm.api_key = "x"
interpreter.llm.supports_functions = True
interpreter.llm.context_window = 8000
interpreter.llm.max_tokens = 1000
t2 = time.perf_counter()
messages = interpreter.chat(sys.argv[2], display=False)
t3 = time.perf_counter()
interpreter.chat(sys.argv[2], display=False)
t4 = time.perf_counter()
interpreter.computer.terminate()
print(f"import_s={t1 - t0:.4f} chat_s={t3 - t2:.4f} warm_s={t4 - t3:.4f} messages={len(messages)}")
