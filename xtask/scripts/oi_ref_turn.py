"""One library-API turn of Open Interpreter 0.4.3 against a model server (the reference for
`cargo xtask bench`). Usage: python oi_ref_turn.py BASE_URL MESSAGE
Prints `import_s=… chat_s=… messages=…`."""
import sys
import time

t0 = time.time()
from interpreter import interpreter  # noqa: E402

interpreter.offline = True
interpreter.auto_run = True
interpreter.conversation_history = False
interpreter.llm.model = "openai/gpt-4o"
interpreter.llm.api_base = sys.argv[1]
interpreter.llm.api_key = "x"
interpreter.llm.supports_functions = True
interpreter.llm.context_window = 8000
interpreter.llm.max_tokens = 1000
t1 = time.time()
messages = interpreter.chat(sys.argv[2], display=False)
t2 = time.time()
interpreter.computer.terminate()
print(f"import_s={t1 - t0:.4f} chat_s={t2 - t1:.4f} messages={len(messages)}")
