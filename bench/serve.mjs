#!/usr/bin/env node
// Load benchmark of `lathe serve`: CLIENTS WebSocket clients on loopback watch one session while
// the model (lathe-mock) streams EVENTS text chunks, one every DELAY ms. Prints:
//   * the peak RSS of the `lathe serve` process (VmHWM from /proc, read before it is stopped);
//   * the latency of each event from the server recording it (params._meta.lathe.t_us, the
//     server's clock) to a client's message handler (this machine's clock: same host), median and
//     p99 over every (client, event) pair;
//   * whether every client got every event, in order (sequence numbers without a gap).
// The clients run in this one Node.js process, so at high rates its own event loop adds to the
// latency; the figure is an upper bound of what the server adds.
//
// Usage: node bench/serve.mjs [--clients 200] [--events 1000] [--delay 10] [--profile release]
// Needs `ws` from npm in .test-deps/npm (scripts/install-test-deps.sh) and built binaries
// (`cargo build --release -p lathe -p lathe-mock`, or --profile debug).
import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const option = (name, fallback) => {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? process.argv[index + 1] : fallback;
};
const CLIENTS = Number(option("clients", 200));
const EVENTS = Number(option("events", 1000));
const DELAY = Number(option("delay", 10));
const profile = option("profile", "release");
const target = process.env.CARGO_TARGET_DIR || join(root, "target");
const prefix = join(process.env.LATHE_TEST_DEPS || join(root, ".test-deps"), "npm");
const WebSocket = createRequire(join(prefix, "index.js"))("ws");

const firstLine = (child) =>
  new Promise((resolve) => createInterface({ input: child.stdout }).once("line", resolve));

const work = mkdtempSync(join(tmpdir(), "lathe-serve-bench-"));
const home = join(work, "home");
const workspace = join(work, "ws");
mkdirSync(home);
mkdirSync(workspace);
writeFileSync(join(home, "config.toml"), "[retry]\nmax_retries = 0\n");
const text = Array.from({ length: EVENTS }, (_, i) => `word${String(i).padStart(6, "0")} `).join("");
const script = join(work, "script.json");
writeFileSync(script, JSON.stringify({ turns: [{ text, text_chunks: EVENTS, chunk_delay_ms: DELAY }] }));

const mock = spawn(join(target, profile, "lathe-mock"), ["scripted", script], { stdio: ["ignore", "pipe", "inherit"] });
const mockUrl = (await firstLine(mock)).replace("listening on ", "").trim();
const env = { ...process.env, LATHE_HOME: home, HOME: work };
delete env.ANTHROPIC_API_KEY;
const serve = spawn(
  join(target, profile, "lathe"),
  ["--provider", "anthropic", "--base-url", mockUrl, "--sandbox", "off", "-C", workspace, "serve"],
  { stdio: ["ignore", "pipe", "inherit"], env },
);
const url = new URL(await firstLine(serve));
const token = new URLSearchParams(url.hash.slice(1)).get("token");
const wsUrl = `ws://${url.host}/acp`;

function client() {
  const ws = new WebSocket(wsUrl, ["lathe.acp", `bearer.${token}`], { perMessageDeflate: false });
  const state = { ws, latencies: [], lastSeq: 0, gaps: 0, chunks: 0, waiting: new Map(), nextId: 1, ended: null };
  state.ended = new Promise((resolve) => (state.endTurn = resolve));
  ws.on("message", (data) => {
    const now = (performance.timeOrigin + performance.now()) * 1000;
    const message = JSON.parse(data);
    const meta = message.params && message.params._meta && message.params._meta.lathe;
    if (meta && typeof meta.seq === "number") {
      if (meta.seq !== state.lastSeq + 1) state.gaps++;
      state.lastSeq = meta.seq;
      state.latencies.push(now - meta.t_us);
    }
    if (message.method === "session/update" && message.params.update.sessionUpdate === "agent_message_chunk") state.chunks++;
    if (message.method === "_lathe/turn_end") state.endTurn();
    if (!message.method && state.waiting.has(message.id)) {
      state.waiting.get(message.id)(message);
      state.waiting.delete(message.id);
    }
  });
  state.call = (method, params) =>
    new Promise((resolve) => {
      const id = state.nextId++;
      state.waiting.set(id, resolve);
      ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  state.open = new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  return state;
}

const init = { protocolVersion: 1, clientCapabilities: {} };
const steer = client();
await steer.open;
await steer.call("initialize", init);
const { result } = await steer.call("session/new", { cwd: workspace, mcpServers: [] });
const sessionId = result.sessionId;
const clients = [];
for (let i = 0; i < CLIENTS; i++) clients.push(client());
await Promise.all(clients.map((c) => c.open));
await Promise.all(clients.map((c) => c.call("initialize", init)));
await Promise.all(clients.map((c) => c.call("session/load", { sessionId, cwd: workspace, mcpServers: [] })));
for (const c of clients) c.latencies.length = 0;

const started = performance.now();
await steer.call("session/prompt", { sessionId, prompt: [{ type: "text", text: "talk" }] });
await Promise.all(clients.map((c) => c.ended));
const seconds = (performance.now() - started) / 1000;
const status = readFileSync(`/proc/${serve.pid}/status`, "utf8");
const peakKb = Number(/VmHWM:\s+(\d+)/.exec(status)[1]);

const all = clients.flatMap((c) => c.latencies).sort((a, b) => a - b);
const pick = (q) => all[Math.min(all.length - 1, Math.floor(q * all.length))] / 1000;
const complete = clients.filter((c) => c.chunks === EVENTS && c.gaps === 0).length;
console.log(`lathe serve (${profile}): ${CLIENTS} clients, ${EVENTS} events ${DELAY} ms apart, turn ${seconds.toFixed(1)} s`);
console.log(`peak RSS: ${(peakKb / 1024).toFixed(1)} MiB`);
console.log(`latency server -> client: median ${pick(0.5).toFixed(2)} ms, p99 ${pick(0.99).toFixed(2)} ms (${all.length} deliveries)`);
console.log(`clients with every event in order: ${complete}/${CLIENTS}`);

for (const c of [steer, ...clients]) c.ws.terminate();
serve.kill("SIGTERM");
mock.kill("SIGTERM");
process.exitCode = complete === CLIENTS ? 0 : 1;
