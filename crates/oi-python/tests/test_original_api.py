"""Names the original's own tests import and call (issue 25): the token counter module and
``_respond_and_store()``."""

from scripted import text

from interpreter import OpenInterpreter
from interpreter.terminal_interface.utils.count_tokens import (
    count_messages_tokens,
    count_tokens,
    token_cost,
)


def test_count_tokens_uses_a_real_tokenizer():
    # "hello world" is two tokens for GPT-4's and GPT-4o's tokenizers.
    assert count_tokens("hello world", model="gpt-4") == 2
    assert count_tokens("hello world", model="openai/gpt-4o") == 2
    assert count_tokens("", model="gpt-4") == 0
    # A model oi has no tokenizer for is counted with GPT-4's, as the original does.
    assert count_tokens("hello world", model="some-local-model") == 2
    long = "The quick brown fox jumps over the lazy dog. " * 50
    assert 400 <= count_tokens(long) <= 600


def test_count_messages_tokens_adds_up_as_the_originals_token_counter_test():
    agent = OpenInterpreter()
    model = agent.llm.model
    system = count_tokens(text=agent.system_message, model=model)
    prompt = "How many tokens is this?"
    messages = [{"role": "system", "message": agent.system_message}]
    assert count_messages_tokens(messages=messages, model=model)[0] == system
    messages.append({"role": "user", "message": prompt, "code": "print(1)", "output": "1"})
    tokens, cost = count_messages_tokens(messages=messages, model=model)
    assert tokens == system + count_tokens(prompt, model) + count_tokens("print(1)", model) + 1
    assert cost > 0


def test_token_cost_prices_from_the_model_table_and_zero_when_unknown():
    # gpt-4o: $2.50 per million prompt tokens in oi's model table.
    assert token_cost(1_000_000, model="gpt-4o") > 0
    assert token_cost(0, model="gpt-4o") == 0
    assert token_cost(1000, model="no-such-model-xyz") == 0


def test_respond_and_store_runs_the_trailing_code_then_the_model(oi):
    # The original's test_hallucinations: code the model left at the end runs, repaired.
    agent, model = oi([text("It is 22.")])
    agent.messages = [
        {"role": "assistant", "type": "code", "format": "python", "content": "10+12executeexecute\n"}
    ]
    chunks = list(agent._respond_and_store())
    outputs = [c["content"] for c in chunks if c.get("format") == "output" and "content" in c]
    assert "".join(outputs).strip() == "22"
    assert chunks[-1].get("end") or chunks[-1].get("type") is not None
    # Stored: the output and the model's answer are in the conversation now.
    assert agent.messages[-1] == {"role": "assistant", "type": "message", "content": "It is 22."}
    assert any(m.get("format") == "output" and m["content"].strip() == "22" for m in agent.messages)
    assert model.requests(1)


def test_respond_and_store_repairs_the_json_hallucinations(oi):
    agent, _ = oi([text("ok"), text("ok")])
    for code, want in (
        ('functions.execute({"language": "python", "code": "10+12"})', "22"),
        ("{language: \"python\", code: \"print('hello')\" }", "hello"),
    ):
        agent.messages = [{"role": "assistant", "type": "code", "format": "python", "content": code}]
        out = ""
        for chunk in agent._respond_and_store():
            if chunk.get("format") == "output" and "content" in chunk:
                out += chunk["content"]
        assert out.strip() == want



def test_computer_run_streams_and_breaking_out_interrupts_the_code(tmp_path):
    # The original's test_break_execution, against a file in a temporary directory.
    import time

    agent = OpenInterpreter()
    target = tmp_path / "numbers.txt"
    code = (
        "import time\n"
        f"with open({str(target)!r}, 'a') as f:\n"
        "    for i in [1, 2, 3, 4, 5]:\n"
        "        print('adding', i, flush=True)\n"
        "        f.write(str(i) + '\\n'); f.flush()\n"
        "        time.sleep(0.5)\n"
    )
    seen = []
    try:
        for chunk in agent.computer.run("python", code, stream=True):
            if chunk.get("format") == "output":
                seen.append(chunk["content"])
                if "adding 1" in chunk["content"]:
                    # Output comes while the code still runs, not all at its end.
                    assert "2" not in target.read_text()
                if "adding 3" in chunk["content"]:
                    break
        time.sleep(1.5)
        assert "adding 1" in "".join(seen)
        content = target.read_text()
        assert "2" in content and "4" not in content and "5" not in content
        # The session is still usable after the interruption.
        assert agent.computer.run("python", "print(40 + 2)")[-1]["content"].strip() == "42"
    finally:
        agent.computer.terminate()


_SPEND_SCRIPT = r"""
import re, subprocess, sys
from interpreter import OpenInterpreter
xtask, script, address = sys.argv[1], sys.argv[2], sys.argv[3]
server = subprocess.Popen(
    [xtask, "scripted-server", "--host", address, "--port", "0", "--script", script],
    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
)
try:
    port = re.search(r":(\d+)/v1", server.stdout.readline()).group(1)
    agent = OpenInterpreter(conversation_history=False)
    agent.llm.model = "gpt-4o"
    agent.llm.api_base = f"http://{address}:{port}/v1"
    agent.llm.api_key = "x"
    agent.max_budget = 1.0
    assert agent.llm.spend == 0.0
    agent.chat("hello", display=False)
    spent = agent.llm.spend
    # About 1000 prompt tokens at $2.50/M and 200 reply tokens at $10/M: well under a cent.
    assert 0 < spent < 0.02, spent
    agent.reset()
    assert agent.llm.spend == spent  # kept across reset(), as max_budget's count
    try:
        agent.llm.spend = 0
        raise SystemExit("llm.spend could be set")
    except AttributeError as error:
        assert "read-only" in str(error), error
    print("spent", spent)
finally:
    server.terminate()
    server.wait(10)
"""


def test_llm_spend_counts_what_the_model_requests_cost(tmp_path):
    # A priced model (gpt-4o) behind a non-loopback address, with max_budget set: oi counts
    # each request (from the tokenizer, as this server reports no usage) and says so. The
    # address is a documentation address (192.0.2.1) given to the loopback interface of a network
    # namespace of the test's own, so no traffic leaves it.
    import os
    import shutil
    import subprocess
    import sys

    import pytest
    import scripted
    from conftest import python_env

    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    setup = (
        f'"{ip}" link set lo up && "{ip}" addr add 192.0.2.1/32 dev lo && exec "$0" "$@"'
    )
    usable = (
        os.geteuid() == 0
        and unshare
        and ip
        and subprocess.run([unshare, "--net", "sh", "-c", setup, "true"], capture_output=True).returncode == 0
    )
    if not usable or scripted.xtask_program() is None:
        reason = "skipped: no network namespace of its own can be made here (needs root, unshare, ip) or no xtask program"
        if os.environ.get("OI_TEST_REQUIRE_ALL") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    script = tmp_path / "script.json"
    script.write_text('[{"text": "' + "word " * 200 + '"}]')
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(
        [unshare, "--net", "sh", "-c", setup, sys.executable, "-c", _SPEND_SCRIPT,
         scripted.xtask_program(), str(script), "192.0.2.1"],
        capture_output=True, text=True, timeout=120, env=python_env(home),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "spent" in done.stdout
