// oi's web page (issue 27): the socket, the key, sessions, settings and start-up. Everything
// the model, the code or the server sends is untrusted: the DOM is built with createElement
// and textContent only (never innerHTML; render.js), links keep only http(s) and mailto URLs,
// images only base64 PNG/JPEG/GIF data URLs, and HTML output goes into an iframe with srcdoc
// and an empty sandbox (no scripts; conversation.js). The server's CSP (web.rs) forbids
// inline script on top of that. Loaded last: render.js and conversation.js come first.
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
  // The connection's number (each connect() makes a new one), the approval bar that is
  // current (conversation.js), chunks held while /messages loads (null otherwise), and the
  // last log entry to skip (the log is not whole: /messages shows it).
  conn: 0,
  approval: null,
  loading: null,
  skip: 0,
  replayEnd: 0,
  started: false,
  settings: null,
};

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
  if (!(c.seq <= app.replayEnd)) refreshSessions();
}

function wsUrl() {
  const path = app.session === "default" ? "/" : "/sessions/" + encodeURIComponent(app.session);
  return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + path + "?input_numbers=true&replay=all";
}

// Every approval bar belongs to one connection: when it goes, they all go (see
// conversation.js, Approval).
function retireForConnection() {
  app.loading = null;
  retirePendingApprovals(STALE);
}

// Each connection first gets the session's log (docs/protocol.md, the log): the page is
// rebuilt from it by the code that renders live chunks, so it shows what it showed live
// (approvals waiting with Run, running code with Stop, the user's view of output). When the
// log does not hold the whole session (a restart), /messages shows it instead.
function onReplay(h, sock) {
  resetConversation();
  app.skip = h.whole ? 0 : h.last;
  app.replayEnd = h.last;
  if (h.whole) return;
  app.loading = [];
  fetchHistory().then((messages) => {
    if (sock !== app.ws || !app.loading) return;
    if (messages) renderHistory(messages);
    const held = app.loading;
    app.loading = null;
    for (const c of held) handleChunk(c);
  });
}

// An input the session was sent, from the log: shown as the page showed it when sent.
function replayInput(c) {
  if (c.type === "command") {
    retirePendingApprovals(c.content === "go" ? "Approved." : "Declined: the code was not run.");
  } else {
    retirePendingApprovals();
    closeBlock();
    if (c.type === "message") addUser(String(c.content));
    else addNotice("[" + c.type + ": " + String(c.content).slice(0, 200) + "]");
  }
  if (c.content !== "stop") app.leftover = true;
  setRunning();
}

function connect() {
  clearTimeout(app.retryTimer);
  if (app.ws) { const old = app.ws; app.ws = null; old.close(); }
  retireForConnection();
  const sock = new WebSocket(wsUrl());
  app.conn += 1;
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
    if (c.role === "server" && c.type === "replay") { onReplay(c, sock); return; }
    if (c.seq <= app.skip) return;
    if (typeof c.id === "string") {
      sock.send(JSON.stringify({ ack: c.id }));
      if (app.seen.has(c.id)) return;
      app.seen.add(c.id);
      if (app.seen.size > SEEN_MAX) app.seen.delete(app.seen.values().next().value);
    }
    if (app.loading) app.loading.push(c);
    else if (c.role === "user") replayInput(c);
    else handleChunk(c);
  };
  sock.onclose = (event) => {
    if (sock !== app.ws) return;
    app.ws = null;
    app.authed = false;
    retireForConnection();
    closed(event);
  };
}

async function ready() {
  const sock = app.ws;
  const again = app.attempts > 0;
  app.attempts = 0;
  app.inputs = 0;
  app.waitingFor = 0;
  app.leftover = app.wasRunning;
  app.authed = true;
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
  app.approval = null;
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

// The session's conversation from the server (a list of messages), or null.
async function fetchHistory() {
  const path = "/sessions/" + encodeURIComponent(app.session);
  let r = await api("GET", path + "/messages");
  if (r.status === 404 && app.session !== "default") {
    // Not live in this server (it restarted, or the session was deleted or reaped): open it
    // again behind the key (a socket alone may not create a session on a server with a key;
    // with a store, this brings the saved conversation back).
    const made = await api("POST", path);
    if (made.ok) r = await api("GET", path + "/messages");
  }
  return r.ok && Array.isArray(r.data.messages) ? r.data.messages : null;
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
  await fetchHistory(); // opens a session this server does not hold (a socket alone may not)
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
  await fetchHistory();
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
