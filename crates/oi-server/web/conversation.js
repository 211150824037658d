// oi's web page (issue 27): the conversation as it streams (messages, code and output panels,
// images and sandboxed HTML from display()) and the approval of code. Uses render.js; its
// state (`app`) and the socket (sendInput, sendMessage) are in app.js.
"use strict";

// ---- The conversation -----------------------------------------------------------------------

const log = () => $("log");

function atBottom() {
  const l = log();
  return l.scrollHeight - l.scrollTop - l.clientHeight < 80;
}

function append(node) {
  const stick = atBottom();
  log().append(node);
  if (stick) log().scrollTop = log().scrollHeight;
}

function addUser(text) {
  append(el("div", { class: "msg user", text }));
}

function addNotice(text, cls) {
  append(el("div", { class: cls || "notice", text }));
}

function outputPanel(title) {
  const pre = el("pre", { class: "out" });
  const more = el("button", { type: "button", class: "more", hidden: "" });
  const panel = el("div", { class: "panel output" }, el("div", { class: "head", text: title }), pre, more);
  const block = { kind: "console", panel, pre, more, text: "", full: false, pending: false };
  more.addEventListener("click", () => { block.full = true; more.hidden = true; paintOutput(block); });
  return block;
}

function paintOutput(block) {
  block.pending = false;
  const stick = atBottom();
  if (!block.full && block.text.length > OUTPUT_CAP) {
    block.pre.textContent = "…" + block.text.slice(-OUTPUT_CAP);
    block.more.hidden = false;
    block.more.textContent = "Show all (" + block.text.length + " characters)";
  } else {
    block.pre.textContent = block.text;
  }
  if (stick) log().scrollTop = log().scrollHeight;
}

function paintMarkdown(block) {
  block.pending = false;
  const stick = atBottom();
  block.el.replaceChildren(markdown(block.text));
  if (stick) log().scrollTop = log().scrollHeight;
}

function schedule(block, paint) {
  if (block.pending) return;
  block.pending = true;
  requestAnimationFrame(() => paint(block));
}

const IMAGE_FORMAT = /^base64(?:\.(png|jpeg|jpg|gif))?$/;

function richBlock(c) {
  return { kind: "rich", role: c.role, type: c.type, format: c.format || "", text: "" };
}

function paintRich(block) {
  if (block.type === "image") {
    const m = IMAGE_FORMAT.exec(block.format);
    const data = block.text.replace(/\s+/g, "");
    if (m && /^[A-Za-z0-9+/]+={0,2}$/.test(data)) {
      const mime = m[1] === "jpg" ? "jpeg" : m[1] || "png";
      const panel = outputPanel("image");
      panel.pre.replaceWith(el("img", { alt: "image output", src: "data:image/" + mime + ";base64," + data }));
      panel.more.remove();
      append(panel.panel);
    } else {
      addNotice("[an image in a format the page does not show: " + block.format + "]");
    }
  } else if (block.format === "html") {
    const panel = outputPanel("HTML output (sandboxed, scripts off)");
    const frame = el("iframe", { sandbox: "", title: "HTML output", referrerpolicy: "no-referrer" });
    frame.srcdoc = block.text;
    panel.pre.replaceWith(frame);
    panel.more.remove();
    append(panel.panel);
  } else {
    const panel = outputPanel((block.format || "rich") + " output (shown as text, not run)");
    panel.text = block.text;
    append(panel.panel);
    paintOutput(panel);
  }
}

function blockKey(c) {
  return c.role + "/" + c.type + (c.type === "console" ? "" : "/" + (c.format || ""));
}

function openBlock(c) {
  closeBlock();
  let block;
  if (c.role === "assistant" && c.type === "message") {
    block = { kind: "md", el: el("div", { class: "msg assistant" }), text: "" };
    append(block.el);
  } else if (c.role === "assistant" && c.type === "code") {
    block = codePanel(c.format, "", false);
    block.kind = "code";
    append(block.panel);
    app.lastCode = block;
  } else if (c.role === "computer" && c.type === "console") {
    block = outputPanel("output");
    if (app.lastCode) block.code = app.lastCode;
    append(block.panel);
  } else if (c.role === "user" && c.type === "message") {
    block = { kind: "user", text: "" };
  } else {
    block = richBlock(c);
  }
  block.key = blockKey(c);
  app.cur = block;
  return block;
}

function closeBlock() {
  const block = app.cur;
  app.cur = null;
  if (!block) return;
  if (block.kind === "md") paintMarkdown(block);
  else if (block.kind === "code") {
    paintCode(block.codeEl, block.text, block.lang, true, true);
    block.line.textContent = "";
  } else if (block.kind === "console") {
    paintOutput(block);
    if (block.code) block.code.line.textContent = "";
  } else if (block.kind === "user") addUser(block.text);
  else if (block.kind === "rich") paintRich(block);
}

function feed(c) {
  let block = app.cur;
  if (!block || block.key !== blockKey(c)) block = openBlock(c);
  const content = c.content;
  if (block.kind === "console") {
    if (c.format === "active_line") {
      if (block.code) block.code.line.textContent = typeof content === "number" ? "running line " + content : "";
      return;
    }
    if (content === null || content === undefined) return;
    block.text += typeof content === "string" ? content : JSON.stringify(content);
    schedule(block, paintOutput);
    return;
  }
  const text = typeof content === "string" ? content : JSON.stringify(content);
  block.text += text;
  if (block.kind === "md") schedule(block, paintMarkdown);
  else if (block.kind === "code") paintCode(block.codeEl, block.text, block.lang, false, true);
}

function handleChunk(c) {
  if (c.role === "server") {
    if (c.type === "status" && c.content === "complete") onComplete(c);
    else if (c.type === "error") { closeBlock(); addNotice(String(c.content), "error"); }
    return;
  }
  if (c.start) { openBlock(c); return; }
  if (c.end) { closeBlock(); return; }
  if (c.type === "confirmation") { closeBlock(); askApproval(c.content || {}); return; }
  if (!("content" in c)) return;
  feed(c);
}

// ---- Approval -------------------------------------------------------------------------------
//
// Only a person approves code. No approval control ever takes the focus by itself: the code's
// arrival leaves the focus where the user put it (typing in the message box goes on there), and
// no keyboard shortcut of the page approves (app.js: Enter sends, Escape stops). Run acts only
// on a real (trusted) click, and
// - not in its first ARM_MS (it is disabled until then): a click meant for something else, as
//   the log scrolls to the new block, does not land on Run. A click counts only when its
//   press, too, began on Run once it was armed: a press that began on the still-disabled Run
//   and was released after it armed is refused;
// - a click made with the keyboard (Enter or Space on the button: `detail` is 0) counts only
//   when the user gave Run its focus, with Tab / Shift+Tab or a pointer press on the armed Run;
//   a focus that came any other way (a script, a future bug) never turns the next key into an
//   approval. A press that the user took back (dragged off Run and released elsewhere, or
//   cancelled) gives nothing, and the gift ends when Run loses the focus.
//
// `go` approves whatever code waits on the server, not a named block. So a bar's Run sends `go`
// only while the bar is the last approval the page was asked for on the connection it still
// holds: every bar is retired when that connection closes, is taken over or is replaced, and on
// reconnecting the page loads the conversation again and asks only about the code that waits
// then (app.js: ready). Run under code A can never approve a code B that this tab never showed.

const ARM_MS = 600;
let lastTab = -Infinity;
// The last pointer press anywhere on the page: where it began, when, and whether it was real.
const press = { target: null, at: -Infinity, trusted: false };
// The Run button the user gave the focus to (see above), or null.
let givenTo = null;

const isRun = (node) => node instanceof Element && node.matches("button.run");
const inside = (outer, node) => !!outer && node instanceof Node && outer.contains(node);

document.addEventListener("keydown", (event) => { if (event.key === "Tab") lastTab = performance.now(); }, true);
document.addEventListener("pointerdown", (event) => {
  press.target = event.target;
  press.at = performance.now();
  press.trusted = event.isTrusted;
  const run = event.target instanceof Element ? event.target.closest("button.run") : null;
  givenTo = run && !run.disabled && event.isTrusted && run.armedAt <= press.at ? run : null;
}, true);
// Released somewhere else than on Run (the pointer was dragged off): the press is taken back.
// The point under the pointer, not the event's target, which a touch keeps on where it began.
document.addEventListener("pointerup", (event) => {
  const under = document.elementFromPoint(event.clientX, event.clientY);
  if (!inside(givenTo, under)) givenTo = null;
}, true);
document.addEventListener("pointercancel", () => { givenTo = null; }, true);
document.addEventListener("focusin", (event) => {
  const tabbed = isRun(event.target) && !event.target.disabled && performance.now() - lastTab < 100;
  if (tabbed) givenTo = event.target;
  else if (event.target !== givenTo) givenTo = null;
}, true);
document.addEventListener("focusout", (event) => { if (event.target === givenTo) givenTo = null; }, true);
window.addEventListener("blur", () => { givenTo = null; });

// Calls `act` when the user really activates `run` (the rules above); otherwise says how to.
function guardRun(run, act, note) {
  run.disabled = true;
  run.armedAt = Infinity;
  setTimeout(() => { run.armedAt = performance.now(); run.disabled = false; }, ARM_MS);
  run.addEventListener("click", (event) => {
    const byPointer = event.detail > 0;
    if (!event.isTrusted) {
      note.textContent = "To run this code, click Run (or reach it with Tab and press Enter).";
    } else if (byPointer && !(inside(run, press.target) && press.trusted && press.at >= run.armedAt)) {
      note.textContent = "Run was not ready when the press began: click it again to run this code.";
    } else if (!byPointer && !(givenTo === run && document.activeElement === run)) {
      note.textContent = "To run this code, click Run (or reach it with Tab and press Enter).";
    } else {
      act();
    }
  });
}

const STALE = "This approval is no longer current: the connection to the server changed. The page loads the conversation again when it reconnects and asks only about the code that waits then.";

// Whether `bar` may still answer: it is the last approval the page was asked for, on the
// connection the page holds now, and the conversation is not being loaded again.
function current(bar) {
  return app.approval === bar && bar.conn === app.conn && !app.loading;
}

function askApproval(request) {
  let block = app.lastCode;
  const code = typeof request.content === "string" ? request.content : "";
  if (!block || block.text !== code) {
    block = codePanel(request.format, code, true, true);
    append(block.panel);
    app.lastCode = block;
  }
  // Only the newest approval is current.
  retirePendingApprovals("Not run: the model asked about newer code below.");
  const bar = el("div", { class: "approval pending", tabindex: "-1" });
  bar.conn = app.conn;
  app.approval = bar;
  const pre = block.panel.querySelector("pre");
  let area = null;
  const done = (text) => {
    if (area) { area.remove(); area = null; pre.hidden = false; }
    bar.classList.remove("pending");
    bar.replaceChildren(el("span", { text }));
    if (app.approval === bar) app.approval = null;
  };
  bar.retire = (text) => { if (bar.classList.contains("pending")) done(text); };
  const answer = (word, text) => {
    if (!current(bar)) { done(STALE); return; }
    if (sendInput("command", word)) done(text);
  };
  const run = el("button", { type: "button", class: "primary run", text: "Run" });
  const decline = el("button", { type: "button", class: "decline", text: "Decline" });
  const edit = el("button", { type: "button", class: "edit", text: "Edit" });
  const note = el("span", { text: request.note || "This code waits for your approval." });
  guardRun(run, () => answer("go", "Approved."), note);
  decline.addEventListener("click", () => answer("stop", "Declined: the code was not run."));
  edit.addEventListener("click", () => {
    area = el("textarea", { class: "edit", "aria-label": "Edit the code", spellcheck: "false" });
    area.value = block.text;
    pre.hidden = true;
    block.panel.insertBefore(area, bar);
    const send = el("button", { type: "button", class: "primary", text: "Ask to run the edited code" });
    const cancel = el("button", { type: "button", text: "Cancel" });
    // Back to the buttons; the focus goes to the bar (never to Run), so Tab reaches Run next.
    cancel.addEventListener("click", () => { area.remove(); area = null; pre.hidden = false; bar.replaceChildren(run, decline, edit, note); bar.focus(); });
    send.addEventListener("click", () => {
      const fence = "```";
      const text = "Run this code instead of the block above:\n" + fence + block.lang + "\n" + area.value + "\n" + fence;
      if (!sendMessage(text)) return;
      done("Edited: the new code was sent to the model, which asks again before running it.");
    });
    bar.replaceChildren(send, cancel);
    area.focus();
  });
  bar.append(run, decline, edit, note);
  block.panel.append(bar);
  const hidden = hiddenChars(block.text);
  if (hidden.length && !block.panel.querySelector(".warn")) {
    const warning = "This code holds characters you would not see; they are shown as escapes: " + describeHidden(hidden) + ".";
    block.panel.insertBefore(el("div", { class: "warn", role: "alert", text: warning }), pre);
  }
  if (log().scrollHeight) log().scrollTop = log().scrollHeight;
}

// Retires every approval still waiting (its buttons go, `text` says why); true if one was.
function retirePendingApprovals(text) {
  const bars = [...document.querySelectorAll(".approval.pending")];
  for (const bar of bars) {
    if (bar.retire) bar.retire(text || "Not run: a new message was sent instead.");
    else { bar.classList.remove("pending"); bar.replaceChildren(el("span", { text: text || "Not run: a new message was sent instead." })); }
  }
  app.approval = null;
  return bars.length > 0;
}
