// Drives `lathe acp` with the official ACP TypeScript client (@agentclientprotocol/sdk, its
// `client()` app, which replaced `ClientSideConnection` in 2.x) and prints what it saw as one JSON
// object on stdout. Run by crates/cli/tests/suite/acp.rs, which starts the model server, checks
// the files and processes, and asserts on this output.
//
// Environment: LATHE_BIN (the binary), LATHE_ARGS (JSON array of flags before `acp`), WORKSPACE
// (the session's cwd), ACP_SDK_PREFIX (the npm prefix holding the SDK), PIXEL_PNG_HEX (an image
// for the first prompt), ACP_MCP_SERVERS (the session's MCP servers, JSON), LATHE_HOME and HOME.
//
// Steps: a first `lathe acp`: initialize → session/new → prompt 1 (the model writes a file, which
// asks for permission: answered allow once) → session/set_mode bypass → prompt 2 (the model runs a
// long command; once it has written its pid, session/cancel) → stdin closed. A second `lathe acp`:
// initialize → session/load of that session (the transcript replayed). With ACP_FS=1 only prompt 1
// runs, on a connection that offers fs/read_text_file and fs/write_text_file and records what went
// through them.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const require = createRequire(join(process.env.ACP_SDK_PREFIX, "index.js"));
const acp = await import(pathToFileURL(require.resolve("@agentclientprotocol/sdk")).href);

const workspace = process.env.WORKSPACE;
const offerFs = process.env.ACP_FS === "1";

/** Starts `lathe acp`; returns the child and its stream. */
function startLathe() {
  const args = [...JSON.parse(process.env.LATHE_ARGS), "acp"];
  const child = spawn(process.env.LATHE_BIN, args, { stdio: ["pipe", "pipe", "inherit"] });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  return { child, stream, exited };
}

/** Ends the connection as an editor closing does: `lathe acp` sees the end of its stdin. */
function closeStdin(child) {
  child.stdin.end();
}

/** Resolves once `path` exists (polled: it is written by the command the model runs). */
async function fileAppears(path) {
  while (!existsSync(path)) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const output = { first: {}, second: {} };

// The first connection.
{
  const { child, stream, exited } = startLathe();
  const updates = [];
  const permissions = [];
  const fsCalls = [];
  let current = "none";
  const app = acp
    .client()
    .onNotification("session/update", ({ params }) => {
      updates.push({ phase: current, update: params.update });
    })
    .onRequest("session/request_permission", ({ params }) => {
      permissions.push({ phase: current, request: params });
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    });
  if (offerFs) {
    app
      .onRequest("fs/read_text_file", ({ params }) => {
        fsCalls.push({ method: "read", params });
        return { content: `client buffer of ${params.path}\n` };
      })
      .onRequest("fs/write_text_file", ({ params }) => {
        fsCalls.push({ method: "write", params });
        return {};
      });
  }
  await app.connectWith(stream, async (cx) => {
    output.first.initialize = await cx.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: offerFs, writeTextFile: offerFs } },
      clientInfo: { name: "acp-e2e", version: "1.0.0" },
    });
    const mcpServers = JSON.parse(process.env.ACP_MCP_SERVERS || "[]");
    const session = await cx.request("session/new", { cwd: workspace, mcpServers });
    output.first.newSession = session;
    const sessionId = session.sessionId;

    current = "prompt1";
    output.first.prompt1 = await cx.request("session/prompt", {
      sessionId,
      prompt: [
        { type: "text", text: "write the notes file" },
        { type: "image", mimeType: "image/png", data: Buffer.from(process.env.PIXEL_PNG_HEX, "hex").toString("base64") },
        { type: "resource", resource: { uri: "file:///spec.md", mimeType: "text/markdown", text: "the spec says hello" } },
      ],
    });

    if (offerFs) {
      return;
    }
    current = "mode";
    output.first.setMode = await cx.request("session/set_mode", { sessionId, modeId: "bypass" });

    current = "prompt2";
    const prompt2 = cx.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "run the long command" }],
    });
    await fileAppears(join(workspace, "sleeper.pid"));
    await cx.notify("session/cancel", { sessionId });
    output.first.prompt2 = await prompt2;
  });
  closeStdin(child);
  output.first.updates = updates;
  output.first.permissions = permissions;
  output.first.fsCalls = fsCalls;
  output.first.exit = await exited;
}

// The second connection: load the session.
if (!offerFs) {
  const { child, stream, exited } = startLathe();
  const updates = [];
  const app = acp.client().onNotification("session/update", ({ params }) => {
    updates.push(params);
  });
  await app.connectWith(stream, async (cx) => {
    await cx.request("initialize", { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const sessionId = output.first.newSession.sessionId;
    output.second.load = await cx.request("session/load", { sessionId, cwd: workspace, mcpServers: [] });
    // Updates sent before the answer are replayed history; the answer ends the replay.
    output.second.replayed = updates.slice();
  });
  closeStdin(child);
  output.second.exit = await exited;
}

process.stdout.write(JSON.stringify(output) + "\n");
