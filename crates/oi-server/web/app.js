// oi's web page (issue 27). Everything the model, the code or the server sends is untrusted:
// the DOM is built with createElement and textContent only (never innerHTML), links keep
// only http(s) and mailto URLs, images only base64 PNG/JPEG/GIF data URLs, and HTML output
// goes into an iframe with srcdoc and an empty sandbox (no scripts). The server's CSP
// (web.rs) forbids inline script on top of that.
"use strict";

const $ = (id) => document.getElementById(id);
const OUTPUT_CAP = 8000;
const SEEN_MAX = 4096;

const app = {
  key: sessionStorage.getItem("oi-key") || "",
  session: "default",
  ws: null,
  authed: false,
  attempts: 0,
  retryTimer: 0,
  inputs: 0,
  waitingFor: 0,
  leftover: false,
  wasRunning: false,
  seen: new Set(),
  cur: null,
  lastCode: null,
  started: false,
  settings: null,
};

// ---- DOM helpers --------------------------------------------------------------------------

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props || {})) {
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name === "on") for (const [ev, fn] of Object.entries(value)) node.addEventListener(ev, fn);
    else node.setAttribute(name, value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function safeHref(url) {
  try {
    const parsed = new URL(String(url).trim(), location.href);
    if (["http:", "https:", "mailto:"].includes(parsed.protocol)) return parsed.href;
  } catch (e) { /* not a URL */ }
  return null;
}

function link(url, content) {
  const href = safeHref(url);
  if (!href) return el("span", { class: "blocked-link", title: "link removed: only http(s) and mailto links are kept" }, content);
  return el("a", { href, rel: "noopener noreferrer nofollow", target: "_blank" }, content);
}

// ---- Syntax highlighting ------------------------------------------------------------------

const KEYWORDS = {
  python: "and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield",
  js: "async await break case catch class const continue default delete do else export extends false finally for function if import in instanceof let new null return super switch this throw true try typeof undefined var void while yield",
  shell: "if then else elif fi for while do done case esac function in echo export local return cd exit set unset source sudo",
  ruby: "begin class def do else elsif end ensure false for if in module next nil not or puts require rescue return self then true unless until when while yield",
  r: "if else repeat while function for in next break TRUE FALSE NULL Inf NaN NA library return",
};
const FAMILY = {
  python: "python", py: "python", js: "js", javascript: "js", node: "js", ts: "js", typescript: "js",
  json: "js", java: "js", c: "js", cpp: "js", rust: "js", go: "js", sh: "shell", bash: "shell",
  shell: "shell", zsh: "shell", powershell: "shell", ruby: "ruby", rb: "ruby", r: "r",
};
const HASH_RE = /(#[^\n]*)|("""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|(\b\d+(?:\.\d+)?\b)|([A-Za-z_]\w*)/g;
const SLASH_RE = /(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_$][\w$]*)/g;

function highlight(code, lang) {
  const frag = document.createDocumentFragment();
  const family = FAMILY[String(lang || "").toLowerCase()];
  if (!family) { frag.append(code); return frag; }
  const words = new Set(KEYWORDS[family].split(" "));
  const re = new RegExp(family === "js" ? SLASH_RE : HASH_RE);
  let last = 0;
  let m;
  while ((m = re.exec(code))) {
    if (m[4] && !words.has(m[4])) continue;
    if (m.index > last) frag.append(code.slice(last, m.index));
    const cls = m[1] ? "tok-com" : m[2] ? "tok-str" : m[3] ? "tok-num" : "tok-kw";
    frag.append(el("span", { class: cls, text: m[0] }));
    last = re.lastIndex;
  }
  frag.append(code.slice(last));
  return frag;
}

// ---- Markdown (a small renderer that emits elements) ----------------------------------------

function withBreaks(text) {
  const frag = document.createDocumentFragment();
  text.split("\n").forEach((part, i) => {
    if (i) frag.append(el("br"));
    frag.append(part);
  });
  return frag;
}

function inline(text) {
  const out = document.createDocumentFragment();
  let buf = "";
  const flush = () => { if (buf) { out.append(withBreaks(buf)); buf = ""; } };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const rest = text.slice(i);
    const prev = i ? text[i - 1] : " ";
    let m = null;
    let node = null;
    if (c === "\\" && /[\\`*_{}[\]()#+\-.!~|<>]/.test(text[i + 1] || "")) {
      buf += text[i + 1]; i += 2; continue;
    }
    if (c === "`" && (m = /^(`+)([\s\S]*?[^`])\1(?!`)/.exec(rest))) {
      node = el("code", { text: m[2] });
    } else if (c === "!" && (m = /^!\[([^\]]*)\]\(\s*<?([^\s)>]*)>?(?:\s+"[^"]*")?\s*\)/.exec(rest))) {
      node = link(m[2], "image: " + (m[1] || m[2]));
    } else if (c === "[" && (m = /^\[((?:[^[\]]|\[[^\]]*\])*)\]\(\s*<?([^\s)>]*)>?(?:\s+"[^"]*")?\s*\)/.exec(rest))) {
      node = link(m[2], inline(m[1]));
    } else if ((c === "*" || (c === "_" && !/\w/.test(prev))) && (m = (c === "_" ? /^__(?=\S)([\s\S]*?\S)__(?!\w)/ : /^\*\*(?=\S)([\s\S]*?\S)\*\*/).exec(rest))) {
      node = el("strong", {}, inline(m[1]));
    } else if ((c === "*" || (c === "_" && !/\w/.test(prev))) && (m = /^([*_])(?=[^\s*_])([\s\S]*?[^\s\\])\1(?!\w)/.exec(rest))) {
      node = el("em", {}, inline(m[2]));
    } else if (c === "~" && (m = /^~~(?=\S)([\s\S]*?\S)~~/.exec(rest))) {
      node = el("del", {}, inline(m[1]));
    } else if (c === "<" && (m = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/.exec(rest))) {
      node = link(m[1], m[1]);
    } else if (c === "h" && !/\w/.test(prev) && (m = /^https?:\/\/[^\s<>()]*[^\s<>().,;:!?'"*_]/.exec(rest))) {
      node = link(m[0], m[0]);
    }
    if (node) { flush(); out.append(node); i += m[0].length; continue; }
    buf += c;
    i += 1;
  }
  flush();
  return out;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const LIST = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function cells(line) {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
  return s.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

function startsBlock(lines, i) {
  const line = lines[i];
  return FENCE.test(line) || /^#{1,6}\s/.test(line) || /^\s*>/.test(line) || LIST.test(line)
    || (line.includes("|") && TABLE_SEP.test(lines[i + 1] || "") && (lines[i + 1] || "").includes("-"));
}

function markdown(text) {
  const frag = document.createDocumentFragment();
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if ((m = FENCE.exec(line))) {
      const fence = m[1];
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) { body.push(lines[i]); i += 1; }
      i += 1;
      frag.append(codePanel(m[2], body.join("\n"), true).panel);
    } else if (/^\s*$/.test(line)) {
      i += 1;
    } else if ((m = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line))) {
      frag.append(el("h" + m[1].length, {}, inline(m[2])));
      i += 1;
    } else if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      frag.append(el("hr"));
      i += 1;
    } else if (/^\s*>/.test(line)) {
      const quoted = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) { quoted.push(lines[i].replace(/^\s*>\s?/, "")); i += 1; }
      frag.append(el("blockquote", {}, markdown(quoted.join("\n"))));
    } else if (line.includes("|") && i + 1 < lines.length && lines[i + 1].includes("-") && TABLE_SEP.test(lines[i + 1])) {
      const head = cells(line);
      const aligns = cells(lines[i + 1]).map((c) => (c.endsWith(":") ? (c.startsWith(":") ? "center" : "right") : "left"));
      i += 2;
      const rows = [];
      while (i < lines.length && lines[i].includes("|") && !/^\s*$/.test(lines[i])) { rows.push(cells(lines[i])); i += 1; }
      const cell = (tag, content, k) => el(tag, { class: "align-" + (aligns[k] || "left") }, inline(content || ""));
      frag.append(el("table", {},
        el("thead", {}, el("tr", {}, ...head.map((h, k) => cell("th", h, k)))),
        el("tbody", {}, ...rows.map((r) => el("tr", {}, ...head.map((_, k) => cell("td", r[k], k)))))));
    } else if ((m = LIST.exec(line))) {
      const ordered = /\d/.test(m[2]);
      const indent = m[1].length;
      const list = el(ordered ? "ol" : "ul");
      if (ordered && parseInt(m[2], 10) !== 1) list.setAttribute("start", String(parseInt(m[2], 10)));
      let item = null;
      while (i < lines.length) {
        const lm = LIST.exec(lines[i]);
        if (lm && lm[1].length <= indent + 1) {
          item = { text: [lm[3]] };
          list.append(el("li"));
          list.lastChild.item = item;
        } else if (item && !/^\s*$/.test(lines[i]) && (/^\s+/.test(lines[i]) || !startsBlock(lines, i))) {
          item.text.push(lines[i].replace(/^\s{0,4}/, ""));
        } else break;
        i += 1;
      }
      for (const li of list.children) li.append(li.item.text.length > 1 ? markdown(li.item.text.join("\n")) : inline(li.item.text[0]));
      frag.append(list);
    } else {
      const para = [];
      while (i < lines.length && !/^\s*$/.test(lines[i]) && (para.length === 0 || !startsBlock(lines, i))) { para.push(lines[i]); i += 1; }
      frag.append(el("p", {}, inline(para.join("\n"))));
    }
  }
  return frag;
}

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

function codePanel(lang, code, highlighted) {
  const codeEl = el("code");
  const line = el("span", { class: "line" });
  const panel = el("div", { class: "panel code" },
    el("div", { class: "head" }, el("span", { class: "lang", text: lang || "code" }), line),
    el("pre", {}, codeEl));
  if (highlighted) codeEl.append(highlight(code, lang)); else codeEl.textContent = code;
  return { panel, codeEl, line, lang: lang || "", text: code };
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
    block.codeEl.replaceChildren(highlight(block.text, block.lang));
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
  else if (block.kind === "code") block.codeEl.textContent = block.text;
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

function askApproval(request) {
  let block = app.lastCode;
  const code = typeof request.content === "string" ? request.content : "";
  if (!block || block.text !== code) {
    block = codePanel(request.format, code, true);
    append(block.panel);
    app.lastCode = block;
  }
  const bar = el("div", { class: "approval pending" });
  const done = (text) => { bar.classList.remove("pending"); bar.replaceChildren(el("span", { text })); };
  const run = el("button", { type: "button", class: "primary run", text: "Run" });
  const decline = el("button", { type: "button", class: "decline", text: "Decline" });
  const edit = el("button", { type: "button", class: "edit", text: "Edit" });
  run.addEventListener("click", () => { if (sendInput("command", "go")) done("Approved."); });
  decline.addEventListener("click", () => { if (sendInput("command", "stop")) done("Declined: the code was not run."); });
  edit.addEventListener("click", () => {
    const area = el("textarea", { class: "edit", "aria-label": "Edit the code", spellcheck: "false" });
    area.value = block.text;
    const pre = block.panel.querySelector("pre");
    pre.hidden = true;
    block.panel.insertBefore(area, bar);
    const send = el("button", { type: "button", class: "primary", text: "Ask to run the edited code" });
    const cancel = el("button", { type: "button", text: "Cancel" });
    cancel.addEventListener("click", () => { area.remove(); pre.hidden = false; bar.replaceChildren(run, decline, edit, note); run.focus(); });
    send.addEventListener("click", () => {
      const fence = "```";
      const text = "Run this code instead of the block above:\n" + fence + block.lang + "\n" + area.value + "\n" + fence;
      if (!sendMessage(text)) return;
      area.remove();
      pre.hidden = false;
      done("Edited: the new code was sent to the model, which asks again before running it.");
    });
    bar.replaceChildren(send, cancel);
    area.focus();
  });
  const note = el("span", { text: "This code waits for your approval." });
  bar.append(run, decline, edit, note);
  block.panel.append(bar);
  if (log().scrollHeight) log().scrollTop = log().scrollHeight;
  run.focus();
}

function retirePendingApprovals() {
  for (const bar of document.querySelectorAll(".approval.pending")) {
    bar.classList.remove("pending");
    bar.replaceChildren(el("span", { text: "Not run: a new message was sent instead." }));
  }
}

// ---- The connection -------------------------------------------------------------------------

function setStatus(text, bad) {
  $("status").textContent = text;
  $("status").classList.toggle("bad", !!bad);
}

function banner(text, bad, action, onAction) {
  const b = $("banner");
  b.hidden = !text;
  b.classList.toggle("bad", !!bad);
  $("banner-text").textContent = text || "";
  const button = $("banner-action");
  button.hidden = !action;
  button.textContent = action || "";
  button.onclick = onAction || null;
}

function running() {
  return app.waitingFor > 0 || app.leftover;
}

function setRunning() {
  const on = running();
  $("stop").hidden = !on;
  if (on) app.wasRunning = true;
}

function sendFrame(value) {
  if (!app.ws || app.ws.readyState !== WebSocket.OPEN || !app.authed) return false;
  app.ws.send(JSON.stringify(value));
  return true;
}

function sendInput(type, content) {
  if (!app.ws || app.ws.readyState !== WebSocket.OPEN || !app.authed) {
    banner("Not connected: nothing was sent. The page reconnects by itself.", true, "Reconnect now", connect);
    return false;
  }
  sendFrame({ role: "user", type, start: true });
  sendFrame({ role: "user", type, content });
  sendFrame({ role: "user", type, end: true });
  app.inputs += 1;
  app.waitingFor = app.inputs;
  setRunning();
  return true;
}

function sendMessage(text) {
  if (!sendInput("message", text)) return false;
  retirePendingApprovals();
  closeBlock();
  addUser(text);
  log().scrollTop = log().scrollHeight;
  return true;
}

function onComplete(c) {
  closeBlock();
  if (typeof c.input === "number") {
    if (c.input >= app.waitingFor) app.waitingFor = 0;
    app.leftover = false;
  } else {
    app.leftover = false;
  }
  setRunning();
  if (!running()) app.wasRunning = false;
  refreshSessions();
}

function wsUrl() {
  const path = app.session === "default" ? "/" : "/sessions/" + encodeURIComponent(app.session);
  return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + path + "?input_numbers=true";
}

function connect() {
  clearTimeout(app.retryTimer);
  if (app.ws) { const old = app.ws; app.ws = null; old.close(); }
  const sock = new WebSocket(wsUrl());
  app.ws = sock;
  app.authed = false;
  setStatus("connecting…");
  sock.onopen = () => {
    if (sock !== app.ws) return;
    if (app.key) sock.send(JSON.stringify({ auth: app.key }));
    else ready();
  };
  sock.onmessage = (event) => {
    if (sock !== app.ws) return;
    let c;
    try { c = JSON.parse(event.data); } catch (e) { return; }
    if (!c || typeof c !== "object") return;
    if ("auth" in c && !("role" in c)) { if (c.auth === true) ready(); return; }
    if (typeof c.id === "string") {
      sock.send(JSON.stringify({ ack: c.id }));
      if (app.seen.has(c.id)) return;
      app.seen.add(c.id);
      if (app.seen.size > SEEN_MAX) app.seen.delete(app.seen.values().next().value);
    }
    handleChunk(c);
  };
  sock.onclose = (event) => {
    if (sock !== app.ws) return;
    app.ws = null;
    app.authed = false;
    closed(event);
  };
}

function ready() {
  const again = app.attempts > 0;
  app.authed = true;
  app.attempts = 0;
  app.inputs = 0;
  app.waitingFor = 0;
  app.leftover = app.wasRunning;
  setRunning();
  setStatus("connected");
  if (again) { banner("Reconnected."); setTimeout(() => { if ($("banner-text").textContent === "Reconnected.") banner(""); }, 3000); }
  else banner("");
}

function closed(event) {
  closeBlock();
  app.waitingFor = 0;
  $("stop").hidden = true;
  if (event.code === 1008) {
    setStatus("key refused", true);
    askKey(app.key ? "That key was wrong: the server refused it." : "This server needs its key.");
    return;
  }
  if (event.code === 4000) {
    setStatus("taken over", true);
    banner("Another window or client took over this session.", true, "Take it back", connect);
    return;
  }
  if (event.code === 4001) {
    setStatus("session ended", true);
    banner("The session " + app.session + " ended (deleted or expired); you are back on the default session.", true);
    switchTo("default", true);
    return;
  }
  app.attempts += 1;
  const delay = Math.min(15000, 500 * 2 ** Math.min(app.attempts, 5));
  setStatus("offline", true);
  banner("Connection lost. Reconnecting in " + Math.round(delay / 1000) + " s…", true, "Reconnect now", connect);
  app.retryTimer = setTimeout(connect, delay);
}

// ---- HTTP, the key --------------------------------------------------------------------------

async function api(method, path, body) {
  const headers = {};
  if (app.key) headers["X-API-KEY"] = app.key;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, { method, headers, cache: "no-store", body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    return { ok: false, status: 0, data: { error: "the server cannot be reached" } };
  }
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (response.status === 403 && data && data.error === "Authentication failed") {
    askKey(app.key ? "That key was wrong: the server refused it." : "This server needs its key.");
  }
  return { ok: response.ok, status: response.status, data: data || {} };
}

function askKey(message) {
  const dialog = $("key-dialog");
  const wrong = /wrong/.test(message);
  $("key-title").textContent = wrong ? "Wrong key" : "This server needs its key";
  $("key-message").textContent = message + " Enter the server's key (INTERPRETER_API_KEY); it is kept for this tab only.";
  $("key-message").classList.toggle("bad", wrong);
  setStatus(wrong ? "wrong key" : "key needed", true);
  banner(wrong ? "The key was wrong." : "This server needs its key.", true, "Enter the key", () => askKey(message));
  if (!dialog.open) dialog.showModal();
  $("key-input").focus();
}

async function submitKey(event) {
  event.preventDefault();
  app.key = $("key-input").value;
  sessionStorage.setItem("oi-key", app.key);
  const check = await api("GET", "/sessions");
  if (check.status === 403) return;
  $("key-dialog").close();
  $("key-input").value = "";
  banner("");
  app.started = false;
  start();
}

// ---- Sessions -------------------------------------------------------------------------------

function sessionFromHash() {
  const m = /^#session=([A-Za-z0-9_-]{1,64})$/.exec(location.hash);
  return m ? m[1] : "default";
}

function renderSessions(list) {
  const ul = $("session-list");
  const ids = list.map((s) => s.id);
  if (!ids.includes("default")) list.unshift({ id: "default", messages: 0 });
  if (!ids.includes(app.session) && app.session !== "default") list.push({ id: app.session, messages: 0 });
  ul.replaceChildren(...list.map((s) => {
    const open = el("button", { type: "button", class: "open", "aria-current": s.id === app.session ? "true" : "false" },
      s.id, el("small", { text: " · " + (s.messages || 0) + " messages" }));
    open.addEventListener("click", () => switchTo(s.id));
    const isDefault = s.id === "default";
    const del = el("button", { type: "button", class: "delete", text: isDefault ? "Clear" : "×",
      "aria-label": isDefault ? "Clear the default session" : "Delete session " + s.id });
    del.addEventListener("click", () => deleteSession(s.id));
    return el("li", { class: s.id === app.session ? "current" : "" }, open, del);
  }));
  $("session-name").textContent = app.session;
}

async function refreshSessions() {
  const r = await api("GET", "/sessions");
  if (r.ok && Array.isArray(r.data.sessions)) renderSessions(r.data.sessions);
}

function resetConversation() {
  app.cur = null;
  app.lastCode = null;
  app.seen.clear();
  app.waitingFor = 0;
  app.leftover = false;
  app.wasRunning = false;
  log().replaceChildren();
  setRunning();
}

function renderHistory(messages) {
  for (const m of messages) {
    if (!m || typeof m !== "object") continue;
    if (m.role === "user" && m.type === "message") { addUser(String(m.content)); continue; }
    if (m.role === "user") { addNotice("[" + m.type + ": " + String(m.content).slice(0, 200) + "]"); continue; }
    handleChunk({ role: m.role, type: m.type, format: m.format, start: true });
    handleChunk({ role: m.role, type: m.type, format: m.format, content: m.content });
    handleChunk({ role: m.role, type: m.type, format: m.format, end: true });
  }
  log().scrollTop = log().scrollHeight;
}

async function loadHistory() {
  const path = "/sessions/" + encodeURIComponent(app.session);
  let r = await api("GET", path + "/messages");
  if (r.status === 404 && app.session !== "default") {
    // Not live in this server (it restarted, or the session was deleted or reaped): open it
    // again behind the key (a socket alone may not create a session on a server with a key;
    // with a store, this brings the saved conversation back).
    const made = await api("POST", path);
    if (made.ok) r = await api("GET", path + "/messages");
  }
  if (r.ok && Array.isArray(r.data.messages)) renderHistory(r.data.messages);
}

async function switchTo(id, quiet) {
  if (app.ws) { const old = app.ws; app.ws = null; old.close(); }
  clearTimeout(app.retryTimer);
  app.session = id;
  history.replaceState(null, "", id === "default" ? location.pathname : "#session=" + id);
  resetConversation();
  if (!quiet) banner("");
  $("sessions").classList.remove("shown");
  $("menu").setAttribute("aria-expanded", "false");
  await loadHistory();
  connect();
  refreshSessions();
}

async function newSession() {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  const id = "web-" + Array.from(bytes, (b) => b.toString(36).padStart(2, "0")).join("").slice(0, 10);
  const r = await api("POST", "/sessions/" + id);
  if (!r.ok) { banner("Could not create a session: " + (r.data.error || r.status), true); return; }
  switchTo(id);
}

async function deleteSession(id) {
  if (id === app.session && app.ws) { const old = app.ws; app.ws = null; old.close(); }
  const r = await api("DELETE", "/sessions/" + encodeURIComponent(id));
  if (!r.ok) banner("Could not delete " + id + ": " + (r.data.error || r.status), true);
  if (id === app.session) switchTo("default");
  else refreshSessions();
}

// ---- Settings -------------------------------------------------------------------------------

async function loadSettings() {
  const r = await api("GET", "/settings");
  if (!r.ok) return;
  app.settings = r.data;
  $("set-model").value = (r.data.llm && r.data.llm.model) || "";
  $("set-auto-run").checked = !!r.data.auto_run;
  $("set-instructions").value = r.data.custom_instructions || "";
  $("set-max-output").value = r.data.max_output === undefined || r.data.max_output === null ? "" : String(r.data.max_output);
}

async function saveSettings(event) {
  event.preventDefault();
  const old = app.settings || {};
  const patch = {};
  const model = $("set-model").value.trim();
  if (model && model !== (old.llm && old.llm.model)) patch.llm = { model };
  if ($("set-auto-run").checked !== !!old.auto_run) patch.auto_run = $("set-auto-run").checked;
  if ($("set-instructions").value !== (old.custom_instructions || "")) patch.custom_instructions = $("set-instructions").value;
  const max = $("set-max-output").value.trim();
  const result = $("settings-result");
  if (max !== (old.max_output === undefined || old.max_output === null ? "" : String(old.max_output))) {
    if (!/^\d+$/.test(max)) { result.textContent = "Max output must be a whole number."; result.className = "bad"; return; }
    patch.max_output = parseInt(max, 10);
  }
  if (!Object.keys(patch).length) { result.textContent = "Nothing changed."; result.className = "ok"; return; }
  const r = await api("POST", "/settings", patch);
  if (r.ok && r.data.status === "partial") {
    const refused = Object.entries(r.data.refused || {}).map(([k, why]) => k + ": " + why).join("; ");
    result.textContent = "Saved " + (r.data.applied || []).join(", ") + ". The server refused " + refused;
    result.className = "bad";
  } else if (r.ok) {
    result.textContent = "Saved.";
    result.className = "ok";
  } else {
    result.textContent = "The server refused: " + (r.data.error || "HTTP " + r.status);
    result.className = "bad";
  }
  loadSettings();
}

// ---- Start ----------------------------------------------------------------------------------

async function start() {
  if (app.started) return;
  app.started = true;
  app.session = sessionFromHash();
  const r = await api("GET", "/sessions");
  if (!r.ok) {
    app.started = false;
    if (r.status !== 403) {
      setStatus("offline", true);
      banner("The server cannot be reached (" + (r.data.error || "HTTP " + r.status) + "). Retrying…", true);
      app.retryTimer = setTimeout(start, 3000);
    }
    return;
  }
  renderSessions(r.data.sessions || []);
  resetConversation();
  await loadHistory();
  connect();
  loadSettings();
}

function wire() {
  const input = $("input");
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("composer").requestSubmit();
    } else if (event.key === "Escape" && running()) {
      sendInput("command", "stop");
    }
  });
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value;
    if (!text.trim()) return;
    if (sendMessage(text)) input.value = "";
  });
  $("stop").addEventListener("click", () => sendInput("command", "stop"));
  $("new-session").addEventListener("click", newSession);
  $("menu").addEventListener("click", () => {
    const shown = $("sessions").classList.toggle("shown");
    $("menu").setAttribute("aria-expanded", String(shown));
  });
  $("settings-toggle").addEventListener("click", () => {
    const panel = $("settings");
    panel.hidden = !panel.hidden;
    $("settings-toggle").setAttribute("aria-expanded", String(!panel.hidden));
    if (!panel.hidden) { loadSettings(); $("set-model").focus(); }
  });
  $("settings-form").addEventListener("submit", saveSettings);
  $("forget-key").addEventListener("click", () => { sessionStorage.removeItem("oi-key"); app.key = ""; location.reload(); });
  $("key-form").addEventListener("submit", submitKey);
  window.addEventListener("hashchange", () => { if (sessionFromHash() !== app.session) switchTo(sessionFromHash()); });
  start();
  input.focus();
}

wire();
