// Lathe's web UI: one page, no dependencies. It speaks the Agent Client Protocol (JSON-RPC 2.0)
// over the WebSocket at /acp, as `lathe serve` documents. The access token comes from the URL's
// fragment (#token=…, never sent to a server) and is kept in memory only: it goes out as the
// WebSocket subprotocol `bearer.TOKEN`, never in a cookie or a query string. Every logged event
// carries a sequence number (params._meta.lathe.seq); after a reconnect the page asks for what
// came after the last one it saw, so nothing is missed or shown twice.
"use strict";

const hash = new URLSearchParams(location.hash.slice(1));
const token = hash.get("token") || "";
let sessionId = hash.get("session");
let ws = null;
let nextId = 1;
const waiting = new Map();
let lastSeq = 0;
let workspace = "";
let role = "watch";
let retry = 0;
let turnsRunning = 0;
const cards = new Map();
let current = null; // the block the next message chunk goes to

const $ = (id) => document.getElementById(id);

function esc(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

// Inline Markdown on text that is escaped first: code spans, bold, italics, http(s) links.
function inline(text) {
  return text
    .split("`")
    .map((part, index) => {
      const safe = esc(part);
      if (index % 2 === 1) return `<code>${safe}</code>`;
      return safe
        .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
        .replace(/(^|[^*])\*([^*]+)\*/g, "$1<em>$2</em>")
        .replace(/\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g, '<a href="$2" rel="noopener noreferrer" target="_blank">$1</a>');
    })
    .join("");
}

// A small, safe Markdown renderer: fenced code, headings, lists, paragraphs.
function markdown(source) {
  let html = "";
  let code = null;
  let list = null;
  let paragraph = [];
  const flush = () => {
    if (paragraph.length) html += `<p>${paragraph.map(inline).join("<br>")}</p>`;
    paragraph = [];
    if (list) html += `</${list}>`;
    list = null;
  };
  for (const line of source.split("\n")) {
    if (code !== null) {
      if (/^```/.test(line)) {
        html += `<pre><code>${esc(code.join("\n"))}</code></pre>`;
        code = null;
      } else code.push(line);
      continue;
    }
    let match;
    if (/^```/.test(line)) {
      flush();
      code = [];
    } else if ((match = /^(#{1,6})\s+(.*)$/.exec(line))) {
      flush();
      html += `<h${match[1].length}>${inline(match[2])}</h${match[1].length}>`;
    } else if ((match = /^\s*(?:[-*]|(\d+)\.)\s+(.*)$/.exec(line))) {
      const kind = match[1] ? "ol" : "ul";
      if (paragraph.length || (list && list !== kind)) flush();
      if (!list) html += `<${kind}>`;
      list = kind;
      html += `<li>${inline(match[2])}</li>`;
    } else if (line.trim() === "") {
      flush();
    } else {
      if (list) flush();
      paragraph.push(line);
    }
  }
  if (code !== null) html += `<pre><code>${esc(code.join("\n"))}</code></pre>`;
  flush();
  return html;
}

// Line diff (longest common subsequence) of two texts, as rows of [sign, line].
function diffLines(before, after) {
  const a = before.split("\n");
  const b = after.split("\n");
  if (a.length * b.length > 4e6) return [...a.map((l) => ["-", l]), ...b.map((l) => ["+", l])];
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const rows = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      rows.push([" ", a[i]]);
      i++;
      j++;
    } else if (j < b.length && (i >= a.length || lcs[i][j + 1] >= lcs[i + 1][j])) rows.push(["+", b[j++]]);
    else rows.push(["-", a[i++]]);
  }
  return rows;
}

function renderContent(items) {
  return (items || [])
    .map((item) => {
      if (item.type === "diff") {
        const rows = diffLines(item.oldText || "", item.newText || "")
          .map(([sign, line]) => {
            const kind = sign === "+" ? "add" : sign === "-" ? "del" : "same";
            return `<div class="${kind}">${esc(sign + " " + line)}</div>`;
          })
          .join("");
        return `<div class="diff"><div class="path">${esc(item.path)}</div>${rows}</div>`;
      }
      if (item.type === "content" && item.content && item.content.type === "text") return esc(item.content.text);
      return "";
    })
    .join("\n");
}

function scrollDown() {
  const box = $("transcript");
  box.scrollTop = box.scrollHeight;
}

function block(kind, html) {
  const div = document.createElement("div");
  div.className = `msg ${kind}`;
  div.innerHTML = html;
  $("transcript").appendChild(div);
  return div;
}

function render(target) {
  const who = target.who ? `<div class="who">${esc(target.who)}</div>` : "";
  target.div.innerHTML = target.kind === "user" ? who + `<p>${esc(target.text)}</p>` : markdown(target.text);
}

function chunk(kind, text, meta) {
  if (kind === "user" && turnsRunning > 0 && current && current.kind !== "user") {
    // Sent while a turn runs: queued for the next request; the running answer goes on above it.
    const queued = { kind, div: block("user queued", ""), text, who: meta && meta.client };
    render(queued);
    scrollDown();
    return;
  }
  if (!current || current.kind !== kind) {
    current = { kind, div: block(kind, ""), text: "", who: kind === "user" && meta ? meta.client : undefined };
  }
  current.text += text;
  render(current);
  scrollDown();
}

function toolCard(id) {
  let card = cards.get(id);
  if (!card) {
    const div = document.createElement("div");
    div.className = "tool";
    div.dataset.call = id;
    div.innerHTML = '<div class="head"><span class="title"></span><span class="status"></span></div><div class="body"></div>';
    $("transcript").appendChild(div);
    card = { div };
    cards.set(id, card);
    current = null;
  }
  return card;
}

function updateCard(fields) {
  const card = toolCard(fields.toolCallId);
  if (fields.title) card.div.querySelector(".title").textContent = fields.title;
  if (fields.status) {
    const status = card.div.querySelector(".status");
    status.textContent = fields.status.replace("_", " ");
    status.className = `status ${fields.status}`;
  }
  if (fields.content) card.div.querySelector(".body").innerHTML = renderContent(fields.content);
  scrollDown();
}

function setBusy() {
  $("busy").hidden = turnsRunning <= 0;
  $("cancel").disabled = turnsRunning <= 0 || role !== "steer";
}

function apply(update, meta) {
  switch (update.sessionUpdate) {
    case "user_message_chunk":
      if (update.content.type === "text") chunk("user", update.content.text, update._meta && update._meta.lathe);
      if (update._meta && update._meta.lathe && update._meta.lathe.client) turnsRunning++;
      setBusy();
      break;
    case "agent_message_chunk":
      if (update.content.type === "text") chunk("agent", update.content.text);
      break;
    case "agent_thought_chunk":
      if (update.content.type === "text") chunk("thought", update.content.text);
      break;
    case "tool_call":
    case "tool_call_update":
      updateCard(update);
      break;
    case "plan": {
      const items = update.entries.map((e) => `<li>[${esc(e.status)}] ${esc(e.content)}</li>`).join("");
      block("plan", `<ul>${items}</ul>`);
      current = null;
      break;
    }
    case "current_mode_update":
      $("mode").textContent = update.currentModeId;
      break;
    case "usage_update": {
      $("context").textContent = `${update.used}/${update.size}`;
      if (update.cost) $("cost").textContent = `$${Number(update.cost.amount).toFixed(4)}`;
      const stats = update._meta && update._meta.lathe && update._meta.lathe.stats;
      if (stats) $("tokens").textContent = `${stats.input_tokens} in, ${stats.output_tokens} out`;
      break;
    }
    default:
      break;
  }
  void meta;
}

function notification(method, params) {
  const meta = (params && params._meta && params._meta.lathe) || {};
  if (typeof meta.seq === "number") {
    if (params.sessionId !== sessionId || meta.seq <= lastSeq) return;
    lastSeq = meta.seq;
  }
  if (method === "session/update") apply(params.update, meta);
  else if (method === "_lathe/status") {
    $("model").textContent = params.model;
    $("mode").textContent = params.mode;
  } else if (method === "_lathe/turn_end") {
    // The turn's open permission prompts ended with it.
    document.querySelectorAll(".permission").forEach((card) => card.remove());
    turnsRunning = Math.max(0, turnsRunning - 1);
    setBusy();
    const why = params.response ? params.response.stopReason : `error: ${params.error}`;
    const div = document.createElement("div");
    div.className = "turn-end";
    div.textContent = `turn ended (${why})`;
    $("transcript").appendChild(div);
    current = null;
  } else if (method === "_lathe/session_ended") {
    notice("The session ended.");
  } else if (method === "_lathe/ask_closed") {
    const card = document.querySelector(`.permission[data-ask="${CSS.escape(String(params.id))}"]`);
    if (card) card.remove();
  }
}

// session/request_permission: a card with the options; a denial may carry feedback.
function askPermission(id, params) {
  const div = document.createElement("div");
  div.className = "permission";
  div.dataset.ask = String(id);
  const call = params.toolCall || {};
  const known = cards.get(call.toolCallId);
  const title = call.title || (known && known.div.querySelector(".title").textContent) || call.toolCallId;
  div.innerHTML = `<div><strong>Permission:</strong> ${esc(title)}</div><div class="tool"><div class="body">${renderContent(call.content)}</div></div><div class="buttons"></div>`;
  const buttons = div.querySelector(".buttons");
  let feedback = null;
  for (const option of params.options || []) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = option.name;
    button.dataset.option = option.optionId;
    button.addEventListener("click", () => {
      const text = feedback && option.kind.startsWith("reject") ? feedback.value : "";
      const result = { outcome: { outcome: "selected", optionId: option.optionId } };
      if (text) result._meta = { lathe: { feedback: text } };
      send({ jsonrpc: "2.0", id, result });
      div.remove();
    });
    if (option.kind.startsWith("reject") && !feedback) {
      feedback = document.createElement("input");
      feedback.placeholder = "feedback for the model (with Deny)";
      buttons.appendChild(feedback);
    }
    buttons.appendChild(button);
  }
  $("transcript").appendChild(div);
  current = null;
  scrollDown();
}

function send(message) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
}

function rpc(method, params) {
  const id = nextId++;
  send({ jsonrpc: "2.0", id, method, params });
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}

function notice(text) {
  $("notice").textContent = text;
  $("notice").hidden = !text;
}

function remember() {
  const fragment = new URLSearchParams({ token });
  if (sessionId) fragment.set("session", sessionId);
  history.replaceState(null, "", `#${fragment}`);
}

async function listSessions() {
  const { sessions } = await rpc("_lathe/sessions", {});
  const list = $("sessions");
  list.replaceChildren();
  for (const s of sessions) {
    const li = document.createElement("li");
    li.dataset.session = s.id;
    if (s.id === sessionId) li.className = "current";
    const started = s.started_ms ? new Date(s.started_ms).toLocaleString() : "";
    li.innerHTML = `${esc((s.first_prompt || s.id).slice(0, 60))}<small>${esc(started)}${s.open ? " · open" : ""}</small>`;
    li.addEventListener("click", () => openSession(s.id));
    list.appendChild(li);
  }
}

function clearTranscript() {
  $("transcript").replaceChildren();
  cards.clear();
  current = null;
  lastSeq = 0;
  turnsRunning = 0;
  setBusy();
}

async function openSession(id) {
  if (id !== sessionId) clearTranscript();
  sessionId = id;
  remember();
  try {
    const load = (after) =>
      rpc("session/load", { sessionId: id, cwd: workspace, mcpServers: [], _meta: { lathe: { after } } });
    const loaded = await load(lastSeq);
    const seq = loaded && loaded._meta && loaded._meta.lathe ? loaded._meta.lathe.seq : undefined;
    if (typeof seq === "number" && seq < lastSeq) {
      // The session was opened again since (its log numbered afresh): show it from the start.
      clearTranscript();
      await load(0);
    }
    notice("");
  } catch (error) {
    notice(`Cannot open the session: ${error.message}`);
  }
  listSessions().catch(() => {});
}

async function newSession() {
  clearTranscript();
  const result = await rpc("session/new", { cwd: workspace, mcpServers: [] });
  sessionId = result.sessionId;
  remember();
  listSessions().catch(() => {});
}

async function submit(event) {
  event.preventDefault();
  const text = $("prompt").value;
  if (!text.trim() || role !== "steer") return;
  $("prompt").value = "";
  if (!sessionId) await newSession();
  rpc("session/prompt", { sessionId, prompt: [{ type: "text", text }] }).catch((error) => notice(error.message));
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  ws = new WebSocket(`${scheme}://${location.host}/acp`, ["lathe.acp", `bearer.${token}`]);
  ws.onopen = async () => {
    retry = 0;
    $("connection").textContent = "online";
    $("connection").className = "pill online";
    const init = await rpc("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const lathe = (init._meta && init._meta.lathe) || {};
    workspace = lathe.workspace;
    role = lathe.role;
    $("role").textContent = role;
    document.body.dataset.role = role;
    $("composer").hidden = role !== "steer";
    $("new-session").hidden = role !== "steer";
    setBusy();
    if (sessionId) await openSession(sessionId);
    else await listSessions();
    document.body.dataset.ready = "1";
  };
  ws.onmessage = (event) => {
    let message;
    try {
      message = JSON.parse(event.data);
    } catch {
      return;
    }
    if (message.method && message.id !== undefined) {
      // A prompt of another session this connection watched before is not shown in this one.
      if (message.method === "session/request_permission" && message.params.sessionId === sessionId) {
        askPermission(message.id, message.params);
      }
    } else if (message.method) notification(message.method, message.params);
    else if (waiting.has(message.id)) {
      const { resolve, reject } = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.error) reject(new Error(message.error.message));
      else resolve(message.result);
    }
  };
  ws.onclose = () => {
    $("connection").textContent = "offline";
    $("connection").className = "pill";
    delete document.body.dataset.ready;
    for (const { reject } of waiting.values()) reject(new Error("disconnected"));
    waiting.clear();
    document.querySelectorAll(".permission").forEach((card) => card.remove());
    retry++;
    setTimeout(connect, Math.min(5000, 200 * retry));
  };
}

document.addEventListener("DOMContentLoaded", () => {
  if (!token) {
    notice("No access token: open the URL `lathe serve` printed (it ends with #token=…).");
    return;
  }
  $("composer").addEventListener("submit", submit);
  $("prompt").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) submit(event);
  });
  $("cancel").addEventListener("click", () => send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } }));
  $("new-session").addEventListener("click", () => newSession().catch((error) => notice(error.message)));
  connect();
});
