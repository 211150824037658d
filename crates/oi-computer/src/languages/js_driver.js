// oi node driver: runs code blocks sent as JSON lines on stdin in one persistent global
// scope and reports events on stdout framed by "\x1eOI<nonce>{json}\n".
(() => {
  const vm = require("vm");
  const fs = require("fs");
  const util = require("util");
  const readline = require("readline");
  const PREFIX = "\x1eOI" + (process.env.OI_NONCE || "");
  delete process.env.OI_NONCE;
  globalThis.require = require;
  globalThis.module = module;
  globalThis.exports = exports;

  const emit = (event) => {
    fs.writeSync(1, PREFIX + JSON.stringify(event) + "\n");
  };
  // Idle SIGINT must not kill the session; vm's breakOnSigint interrupts running code.
  process.on("SIGINT", () => {});

  // Top-level (column 0) let/const become var so that blocks can be re-run.
  const hoist = (code) => code.replace(/^(let|const)(\s)/gm, "var$2");

  const show = (value) => {
    if (value !== undefined) {
      process.stdout.write(util.inspect(value, { colors: false }) + "\n");
    }
  };

  const report = (error) => {
    let text;
    if (error && error.stack) {
      text = String(error.stack).split("\n").filter((l) => !/\(node:|at node:|js_driver|\[eval\]|at runNext/.test(l)).join("\n");
    } else {
      text = "Uncaught " + util.inspect(error);
    }
    process.stderr.write(text + "\n");
  };

  process.on("uncaughtException", report);
  process.on("unhandledRejection", report);

  const queue = [];
  let busy = false;
  const runNext = async () => {
    if (busy || queue.length === 0) return;
    busy = true;
    const { id, code } = queue.shift();
    emit({ ev: "start", id });
    try {
      let script;
      try {
        script = new vm.Script(hoist(code), { filename: "cell" + id });
      } catch (error) {
        if (!(error instanceof SyntaxError) || !/\bawait\b/.test(code)) throw error;
        // Top-level await: run the block as an async function (its declarations stay local).
        try {
          script = new vm.Script("(async () => {\n" + code + "\n})()", { filename: "cell" + id, lineOffset: -1 });
        } catch (_) {
          throw error;
        }
      }
      let value = script.runInThisContext({ breakOnSigint: true });
      if (value && typeof value.then === "function") {
        value = await value;
      }
      show(value);
    } catch (error) {
      report(error);
    }
    await new Promise((resolve) => setImmediate(resolve));
    emit({ ev: "done", id });
    busy = false;
    runNext();
  };

  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  rl.on("line", (line) => {
    try {
      const command = JSON.parse(line);
      queue.push({ id: Number(command.id) || 0, code: String(command.code || "") });
      runNext();
    } catch (error) {
      // not a command
    }
  });
  rl.on("close", () => process.exit(0));
})();
