// oi's web page (issue 27): turning untrusted text into DOM. Everything the model, the code or
// the server sends is untrusted: nodes are made with createElement and given text with
// textContent (never innerHTML), and links keep only http(s) and mailto URLs. Loaded after
// visible_table.js (OI_VISIBLE) and before conversation.js and app.js, which use these functions.
"use strict";

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
const HASH_RE = /(#[^\n]*)|("""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\[\s\S]|[^"\\\n])*"|'(?:\\[\s\S]|[^'\\\n])*')|(\b\d+(?:\.\d+)?\b)|([A-Za-z_]\w*)/g;
// Shell: `#` starts a comment only at the start of a word (`ls notes#; touch X` runs touch).
const SHELL_RE = /((?<=^|[\s;&|()<>])#[^\n]*)|('[^']*'|"(?:\\[\s\S]|[^"\\])*")|(\b\d+(?:\.\d+)?\b)|([A-Za-z_]\w*)/g;
const SLASH_RE = /(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_$][\w$]*)/g;

// `code` as text with keywords, strings, numbers and (when `comments`) comments coloured.
// Code that oi runs is highlighted without comments: a highlighter made of regular
// expressions cannot be sure where a comment starts (a JavaScript regex literal `/\/*/`,
// Ruby's `?#`, Python's nested f-strings, a shell word with `#` inside), and dim text coloured
// as a comment is what a reader skips; there a comment keeps the code's own colour.
function highlight(code, lang, comments = true) {
  const frag = document.createDocumentFragment();
  const family = FAMILY[String(lang || "").toLowerCase()];
  if (!family) { frag.append(code); return frag; }
  const words = new Set(KEYWORDS[family].split(" "));
  const re = new RegExp(family === "js" ? SLASH_RE : family === "shell" ? SHELL_RE : HASH_RE);
  let last = 0;
  let m;
  while ((m = re.exec(code))) {
    if (m[4] && !words.has(m[4])) continue;
    if (m[1] && !comments) continue;
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

// ---- Characters that do not show themselves ------------------------------------------------
//
// Code is shown with every character that is not plainly visible written as an escape (␍, ␛,
// <U+202E>), by oi's rule (oi_core::visible, generated into visible_table.js as OI_VISIBLE):
// default-ignorables, format, control, private-use, surrogate and unassigned code points,
// every space but U+0020, and a combining mark that does not follow a character shown as
// itself (other than a space, tab or newline). A payload in Unicode tag characters, a bidi
// override that reorders the line, zero-width letters: all show as escapes.

// The rule's tables; should visible_table.js not have loaded, everything but printable ASCII
// is escaped.
const ASCII_ONLY = {
  escaped: [0x0, 0x8, 0xb, 0x1f, 0x7f, 0x10ffff],
  marks: [],
  escape: (cp) => "<U+" + cp.toString(16).toUpperCase().padStart(4, "0") + ">",
};
const visible = () => (typeof OI_VISIBLE === "object" ? OI_VISIBLE : ASCII_ONLY);

// Whether `cp` is in `ranges` (flat [first, last, first, last, …], sorted).
function within(ranges, cp) {
  let lo = 0;
  let hi = ranges.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < ranges[2 * mid]) hi = mid - 1;
    else if (cp > ranges[2 * mid + 1]) lo = mid + 1;
    else return true;
  }
  return false;
}

// The characters of `code` shown as escapes: [{ at, len, cp }] (UTF-16 offsets), in order;
// the walk of OI_VISIBLE.show, with offsets, so that escapes can go into highlighted code.
function hiddenChars(code) {
  const rule = visible();
  const hidden = [];
  let afterVisible = false;
  let at = 0;
  for (const ch of code) {
    const cp = ch.codePointAt(0);
    const escaped = within(rule.escaped, cp) || (within(rule.marks, cp) && !afterVisible);
    afterVisible = !escaped && ch !== " " && ch !== "\t" && ch !== "\n";
    if (escaped) hidden.push({ at, len: ch.length, cp });
    at += ch.length;
  }
  return hidden;
}

// `code` as text, with its hidden characters as escapes (`span.esc`).
function shownText(code) {
  const frag = document.createDocumentFragment();
  let last = 0;
  for (const h of hiddenChars(code)) {
    frag.append(code.slice(last, h.at), el("span", { class: "esc", text: visible().escape(h.cp) }));
    last = h.at + h.len;
  }
  frag.append(code.slice(last));
  return frag;
}

// Replaces the hidden characters in the text under `root` (which spells `code`, perhaps cut
// into highlighted spans) with escapes.
function escapeHidden(root, code) {
  const hidden = hiddenChars(code);
  if (!hidden.length) return;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walker.nextNode()) nodes.push(walker.currentNode);
  let offset = 0;
  let k = 0;
  for (const node of nodes) {
    const start = offset;
    offset += node.data.length;
    if (k >= hidden.length || hidden[k].at >= offset) continue;
    let last = 0;
    const frag = document.createDocumentFragment();
    while (k < hidden.length && hidden[k].at < offset) {
      const h = hidden[k];
      frag.append(node.data.slice(last, h.at - start), el("span", { class: "esc", text: visible().escape(h.cp) }));
      last = h.at - start + h.len;
      k += 1;
    }
    frag.append(node.data.slice(last));
    node.replaceWith(frag);
  }
}

// What `hidden` holds, in words: "3 Unicode tag characters (U+E0068 …), 1 bidi control (U+202E)".
const HIDDEN_KINDS = [
  [0xe0000, 0xe007f, "Unicode tag character"],
  [0x202a, 0x202e, "bidi control"], [0x2066, 0x2069, "bidi control"], [0x200e, 0x200f, "bidi control"], [0x061c, 0x061c, "bidi control"],
  [0x200b, 0x200d, "zero-width character"], [0x2060, 0x2064, "zero-width character"], [0xfeff, 0xfeff, "zero-width character"],
  [0x00, 0x1f, "control character"], [0x7f, 0x9f, "control character"],
];

function describeHidden(hidden) {
  const kinds = new Map();
  for (const h of hidden) {
    const kind = HIDDEN_KINDS.find(([lo, hi]) => h.cp >= lo && h.cp <= hi);
    const name = kind ? kind[2] : within(visible().marks, h.cp) ? "stray combining mark" : "invisible or blank character";
    const seen = kinds.get(name) || { count: 0, first: visible().escape(h.cp) };
    seen.count += 1;
    kinds.set(name, seen);
  }
  return [...kinds].map(([name, { count, first }]) =>
    count + " " + name + (count > 1 ? "s" : "") + " (" + first + (count > 1 ? " …" : "") + ")").join(", ");
}

// ---- Code panels (a fenced block in Markdown, or code the model runs) ----------------------

// Shows `code` in `codeEl`: highlighted (`lang`), or as plain text while it streams; its hidden
// characters as escapes either way.
// `runs`: the code is code oi runs (highlighted without comments, see highlight).
function paintCode(codeEl, code, lang, highlighted, runs) {
  if (!highlighted) { codeEl.replaceChildren(shownText(code)); return; }
  codeEl.replaceChildren(highlight(code, lang, !runs));
  escapeHidden(codeEl, code);
}

function codePanel(lang, code, highlighted, runs) {
  const codeEl = el("code");
  const line = el("span", { class: "line" });
  const panel = el("div", { class: "panel code" },
    el("div", { class: "head" }, el("span", { class: "lang", text: lang || "code" }), line),
    el("pre", {}, codeEl));
  paintCode(codeEl, code, lang, highlighted, runs);
  return { panel, codeEl, line, lang: lang || "", text: code };
}
