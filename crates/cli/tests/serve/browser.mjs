// Drives `lathe serve`'s web UI in Debian's chromium (headless, through playwright-core, both
// installed by scripts/install-test-deps.sh) and prints what the page showed as one JSON object.
// Run by crates/cli/tests/suite/serve.rs, which starts the model server and `lathe serve`, and
// checks the files, the requests the model server received and this output.
//
// Environment: SERVE_URL (the steer URL `lathe serve` printed, with #token=…), NPM_PREFIX (where
// playwright-core is), SHOTS (a directory for screenshots), LATHE_HOME (to see the ledger), MOCK_URL.
//
// Steps: open the URL → type a prompt → a permission card: Allow once → while the next answer
// streams, type a second message (queued) → the turns end; screenshot → reload: same transcript →
// a second tab; the first closed; the second prompts again → the first reopened: same transcript
// as the second → a page of another origin tries fetch and WebSocket with the token.

import { createServer } from "node:http";
import { mkdtempSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(join(process.env.NPM_PREFIX, "index.js"));
const { chromium } = require("playwright-core");

const url = process.env.SERVE_URL;
const shots = process.env.SHOTS;
const out = { screenshots: [] };

// A fresh profile in a new user data directory.
const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "lathe-chromium-")), {
  executablePath: "/usr/bin/chromium",
  viewport: { width: 1200, height: 900 },
  headless: true,
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});

const transcript = (page) => page.locator("#transcript").innerText();
const shot = async (page, name) => {
  const path = join(shots, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  out.screenshots.push(path);
};
const ready = (page) => page.waitForSelector("body[data-ready='1']", { timeout: 20000 });
const turnsEnded = (page, count) =>
  page.waitForFunction((n) => document.querySelectorAll(".turn-end").length >= n, count, { timeout: 30000 });

// 1. Open the token URL; prompt; allow the write.
const a = await context.newPage();
a.on("console", (message) => process.stderr.write(`[page a] ${message.text()}\n`));
await a.goto(url);
await ready(a);
out.role = await a.locator("#role").innerText();
await a.fill("#prompt", "write the notes file");
await a.click("#send");
const allow = a.locator(".permission button[data-option='allow_once']");
await allow.waitFor({ timeout: 20000 });
out.permissionText = await a.locator(".permission").innerText();
out.diffBeforeAllow = await a.locator(".permission .diff").innerText();
await shot(a, "1-permission");
await allow.click();
// 2. While the answer after the write streams, a second message (queued to the next request).
await a.waitForFunction(() => document.querySelector("#transcript").innerText.includes("Wrote"), null, { timeout: 20000 });
out.streamingWhenSteered = await a.evaluate(() => !document.querySelector("#busy").hidden);
await a.fill("#prompt", "also add a README");
await a.click("#send");
await turnsEnded(a, 2);
out.model = await a.locator("#model").innerText();
out.tokens = await a.locator("#tokens").innerText();
out.cost = await a.locator("#cost").innerText();
out.diffAfter = await a.locator(".tool .diff").first().innerText();
out.toolStatus = await a.locator(".tool .status").first().innerText();
out.strong = await a.locator(".msg.agent strong").first().innerText();
out.first = await transcript(a);
out.url = a.url();
await shot(a, "2-turns");

// 3. Reload: the same transcript.
await a.reload();
await ready(a);
await turnsEnded(a, 2);
out.reloaded = await transcript(a);
out.sessions = await a.locator("#sessions li").count();

// 4. A second tab; the first closed; events happen; the first reopened.
const b = await context.newPage();
await b.goto(out.url);
await ready(b);
await turnsEnded(b, 2);
await a.close();
await b.fill("#prompt", "list the files");
await b.click("#send");
await turnsEnded(b, 3);
out.second = await transcript(b);
const a2 = await context.newPage();
await a2.goto(out.url);
await ready(a2);
await turnsEnded(a2, 3);
out.reopened = await transcript(a2);
await shot(a2, "3-reopened");

// 5. Another origin (another port of this machine) tries the API and the WebSocket, token and all.
const ledger = () => {
  const files = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const stat = statSync(path);
      if (stat.isDirectory()) walk(path);
      else files.push(`${path}:${stat.size}`);
    }
  };
  walk(process.env.LATHE_HOME);
  return files.sort().join("\n");
};
const requests = async () => (await (await fetch(`${process.env.MOCK_URL}/_mock/requests`)).json()).length;
const before = { ledger: ledger(), requests: await requests() };
const token = new URLSearchParams(new URL(url).hash.slice(1)).get("token");
const session = new URLSearchParams(new URL(out.url).hash.slice(1)).get("session");
const target = new URL(url).origin;
const evilPage = `<!doctype html><script>
window.results = {};
(async () => {
  try { const r = await fetch("${target}/api/sessions", { headers: { Authorization: "Bearer ${token}" } }); results.fetch = r.status; }
  catch (e) { results.fetch = "refused: " + e.name; }
  try { await fetch("${target}/acp", { method: "POST", mode: "no-cors", body: "{}" }); results.post = "sent (opaque)"; }
  catch (e) { results.post = "refused: " + e.name; }
  await new Promise((done) => {
    const ws = new WebSocket("${target.replace("http", "ws")}/acp", ["lathe.acp", "bearer.${token}"]);
    ws.onopen = () => {
      results.ws = "open";
      ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/prompt",
        params: { sessionId: "${session}", prompt: [{ type: "text", text: "evil" }] } }));
      setTimeout(done, 1000);
    };
    ws.onerror = () => { results.ws = "refused"; };
    ws.onclose = () => done();
  });
  window.done = true;
})();
</script>`;
const evil = createServer((_, response) => response.writeHead(200, { "content-type": "text/html" }).end(evilPage));
await new Promise((done) => evil.listen(0, "127.0.0.1", done));
const e = await context.newPage();
const statuses = [];
e.on("response", (response) => statuses.push(`${response.request().method()} ${response.url()} ${response.status()}`));
await e.goto(`http://127.0.0.1:${evil.address().port}/`);
await e.waitForFunction(() => window.done === true, null, { timeout: 20000 });
out.evil = await e.evaluate(() => window.results);
out.evilResponses = statuses;
await new Promise((done) => setTimeout(done, 500));
out.evilChanged = { ledger: ledger() !== before.ledger, requests: (await requests()) - before.requests };
await shot(a2, "4-after-attack");
evil.close();

await context.close();
console.log(JSON.stringify(out));
