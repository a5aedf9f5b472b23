//! Deferred MCP tools and MCP servers that start in the background, through `lathe -p` against
//! `lathe-mock`, with a real stdio MCP server generated here (an .mjs on the official TypeScript
//! SDK installed by scripts/install-test-deps.sh) that offers many tools, can start slowly or
//! never, and logs what it did with wall-clock times.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::support::*;

/// The generated server: `GEN_TOOLS` tools `tool_01`… (each "value times N") plus
/// `convert_temperature`; waits `GEN_DELAY_MS` before it reads its first message (so
/// `initialize` is answered that much later); never starts while `GEN_HANG_FILE` exists; appends
/// `{"event", "unix_ms"}` lines to `GEN_LOG` (`pid <pid>`, `listening`, `tools/list`,
/// `tools/call <name>`).
const SERVER: &str = r#"
import { Server } from "SDK/server/index.js";
import { StdioServerTransport } from "SDK/server/stdio.js";
import { ListToolsRequestSchema, CallToolRequestSchema } from "SDK/types.js";
import { appendFileSync, existsSync } from "node:fs";

const count = Number(process.env.GEN_TOOLS || "50");
const delay = Number(process.env.GEN_DELAY_MS || "0");
const note = (event) => {
  if (process.env.GEN_LOG) appendFileSync(process.env.GEN_LOG, JSON.stringify({ event, unix_ms: Date.now() }) + "\n");
};
const tools = [];
for (let i = 1; i <= count; i++) {
  tools.push({
    name: `tool_${String(i).padStart(2, "0")}`,
    description: `Multiplies a value by ${i}.\nA generated tool for Lathe's tests.`,
    inputSchema: {
      type: "object",
      properties: {
        value: { type: "number", description: `The value to multiply by ${i}` },
        label: { type: "string", description: "A label echoed back with the product, to make this schema longer" },
      },
      required: ["value"],
    },
    annotations: { readOnlyHint: true },
  });
}
tools.push({
  name: "convert_temperature",
  description: "Converts a temperature from Celsius to Fahrenheit",
  inputSchema: { type: "object", properties: { celsius: { type: "number" } }, required: ["celsius"] },
  annotations: { readOnlyHint: true },
});

const server = new Server({ name: "gen", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => {
  note("tools/list");
  return { tools };
});
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const { name, arguments: args } = request.params;
  note(`tools/call ${name}`);
  if (name === "convert_temperature") {
    return { content: [{ type: "text", text: `${args.celsius} °C is ${args.celsius * 9 / 5 + 32} °F` }] };
  }
  const factor = Number(name.slice(5));
  return { content: [{ type: "text", text: `${name}: ${args.value} times ${factor} is ${args.value * factor}` }] };
});

note(`pid ${process.pid}`);
const start = () => {
  if (process.env.GEN_HANG_FILE && existsSync(process.env.GEN_HANG_FILE)) {
    setInterval(() => {}, 60000);
    return;
  }
  note("listening");
  server.connect(new StdioServerTransport());
};
setTimeout(start, delay);
"#;

/// Writes the generated server under `env.root` and returns its `.mcp.json` entry.
fn generated(env: &Env, vars: Value) -> Value {
    let sdk = npm_prefix().join("node_modules/@modelcontextprotocol/sdk/dist/esm");
    assert!(
        sdk.is_dir(),
        "the MCP SDK is not installed at {}: run scripts/install-test-deps.sh",
        sdk.display()
    );
    let path = env.root.join("gen-server.mjs");
    std::fs::write(&path, SERVER.replace("SDK/", &format!("{}/", sdk.display()))).expect("server script");
    json!({"command": "node", "args": [path.display().to_string()], "env": vars})
}

fn mcp_file(env: &Env, servers: Value) -> String {
    env.write_json("mcp.json", &json!({"mcpServers": servers})).display().to_string()
}

/// The `{"event", "unix_ms"}` lines the generated server logged.
fn server_log(path: &Path) -> Vec<(String, f64)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .map(|line| {
            (line["event"].as_str().unwrap_or_default().to_string(), line["unix_ms"].as_f64().unwrap_or(0.0))
        })
        .collect()
}

/// The request's tools with the wire's cache marker taken out (it sits on the last tool, so it
/// moves when a tool is appended; the definitions themselves are what must not change).
fn tool_defs(body: &Value) -> Vec<Value> {
    let mut tools = body["tools"].as_array().cloned().unwrap_or_default();
    for tool in &mut tools {
        if let Some(map) = tool.as_object_mut() {
            map.remove("cache_control");
        }
    }
    tools
}

fn system_text(body: &Value) -> String {
    body["system"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn session_files(home: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in std::fs::read_dir(home.join("sessions")).into_iter().flatten().flatten() {
        for file in std::fs::read_dir(dir.path()).into_iter().flatten().flatten() {
            if file.path().extension().is_some_and(|ext| ext == "jsonl") {
                files.push(file.path());
            }
        }
    }
    files
}

#[tokio::test]
async fn many_mcp_tools_are_listed_by_name_and_tool_search_appends_the_match_at_the_end() {
    let env = env();
    let log = env.root.join("gen.log");
    let config =
        mcp_file(&env, json!({"gen": generated(&env, json!({"GEN_LOG": log.display().to_string()}))}));
    let server = scripted(json!([
        call("c1", "tool_search", json!({"query": "temperature celsius"})),
        call("c2", "mcp__gen__convert_temperature", json!({"celsius": 100})),
        {"text": "100 °C is 212 °F"}
    ]))
    .await;
    let out = output(lathe(
        &env,
        &server.url(),
        &["-p", "convert 100 C", "--mcp-config", &config, "--output-format", "stream-json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(warnings(&json_lines(&out)), Vec::<String>::new());
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let (first, second, third) = (&requests[0].body, &requests[1].body, &requests[2].body);

    // The first request lists the 51 tools by name, one line each, and sends none of their schemas.
    let names = offered_tools(first);
    assert!(!names.iter().any(|name| name.starts_with("mcp__gen__")), "{names:?}");
    assert_eq!(names.last().map(String::as_str), Some("tool_search"), "{names:?}");
    let system = system_text(first);
    let listed: Vec<&str> = system.lines().filter(|line| line.starts_with("mcp__gen__")).collect();
    assert_eq!(listed.len(), 51, "{system}");
    assert!(listed.contains(&"mcp__gen__tool_07 — Multiplies a value by 7."), "{listed:?}");
    assert!(
        listed.contains(&"mcp__gen__convert_temperature — Converts a temperature from Celsius to Fahrenheit")
    );
    assert!(!first["tools"].to_string().contains("The value to multiply"), "no generated schema is sent");

    // The search loads the match: the next request appends its full schema after the same tools,
    // under the same system prompt.
    assert!(tool_result_text(second).contains("Loaded 1 tool"), "{}", tool_result_text(second));
    assert_eq!(first["system"], second["system"]);
    let (before, after) = (tool_defs(first), tool_defs(second));
    assert_eq!(after.len(), before.len() + 1);
    assert_eq!(after[..before.len()], before[..], "the tools offered before are unchanged");
    let loaded = &after[before.len()];
    assert_eq!(loaded["name"], "mcp__gen__convert_temperature");
    assert_eq!(loaded["description"], "Converts a temperature from Celsius to Fahrenheit");
    assert_eq!(loaded["input_schema"]["properties"]["celsius"]["type"], "number");

    // The loaded tool's call reaches the server, and its answer the model.
    assert!(tool_result_text(third).contains("100 °C is 212 °F"), "{}", tool_result_text(third));
    assert_eq!(tool_defs(third), after);
    assert_eq!(third["system"], first["system"]);
    assert!(server_log(&log).iter().any(|(event, _)| event == "tools/call convert_temperature"));

    // The ledger records the load, and a continued session offers the tool again, in place.
    let files = session_files(&env.home);
    let ledger = std::fs::read_to_string(&files[0]).expect("session file");
    assert!(ledger.contains("\"meta\":\"tools_loaded\"") && ledger.contains("mcp__gen__convert_temperature"));
    let again = scripted(json!([{"text": "still here"}])).await;
    let out = output(lathe(&env, &again.url(), &["-p", "more", "--continue", "--mcp-config", &config])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let resumed = &again.requests()[0].body;
    assert_eq!(tool_defs(resumed), after);
    assert_eq!(resumed["system"], first["system"]);
}

#[tokio::test]
async fn a_deferred_tool_called_before_it_is_loaded_is_not_run_and_select_loads_it() {
    let env = env();
    let log = env.root.join("gen.log");
    let config =
        mcp_file(&env, json!({"gen": generated(&env, json!({"GEN_LOG": log.display().to_string()}))}));
    let server = scripted(json!([
        call("c1", "mcp__gen__tool_03", json!({"value": 5})),
        call("c2", "tool_search", json!({"query": "select:mcp__gen__tool_03,mcp__gen__nope"})),
        call("c3", "mcp__gen__tool_03", json!({"value": 5})),
        {"text": "15"}
    ]))
    .await;
    let out = output(lathe(&env, &server.url(), &["-p", "five times three", "--mcp-config", &config])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let refused = tool_result_text(&requests[1].body);
    assert!(
        refused.contains("`mcp__gen__tool_03` is a deferred tool whose schema is not loaded")
            && refused.contains("select:mcp__gen__tool_03"),
        "{refused}"
    );
    let selected = tool_result_text(&requests[2].body);
    assert!(
        selected.contains("Loaded 1 tool") && selected.contains("Not deferred tools: mcp__gen__nope"),
        "{selected}"
    );
    assert_eq!(offered_tools(&requests[2].body).last().map(String::as_str), Some("mcp__gen__tool_03"));
    assert!(tool_result_text(&requests[3].body).contains("tool_03: 5 times 3 is 15"));
    let calls: Vec<String> = server_log(&log)
        .into_iter()
        .map(|(event, _)| event)
        .filter(|e| e.starts_with("tools/call"))
        .collect();
    assert_eq!(calls, ["tools/call tool_03"], "the call before the load never reached the server");
}

#[tokio::test]
async fn without_a_search_every_request_has_the_same_system_prompt_and_tools() {
    let env = env();
    std::fs::write(env.workspace.join("notes.txt"), "alpha\n").expect("file");
    let config = mcp_file(&env, json!({"gen": generated(&env, json!({}))}));
    let server = scripted(json!([
        call("c1", "glob", json!({"pattern": "*.txt"})),
        call("c2", "read_file", json!({"path": "notes.txt"})),
        {"text": "alpha"}
    ]))
    .await;
    let out = output(lathe(&env, &server.url(), &["-p", "read", "--mcp-config", &config])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(system_text(&requests[0].body).contains("mcp__gen__tool_50 — "));
    for request in &requests[1..] {
        assert_eq!(request.body["system"].to_string(), requests[0].body["system"].to_string());
        assert_eq!(request.body["tools"].to_string(), requests[0].body["tools"].to_string());
    }
}

#[tokio::test]
async fn a_few_mcp_tools_are_offered_in_full_without_tool_search() {
    let env = env();
    let config = mcp_file(&env, json!({"gen": generated(&env, json!({"GEN_TOOLS": "3"}))}));
    let server = scripted(json!([{"text": "ok"}])).await;
    let out = output(lathe(&env, &server.url(), &["-p", "hi", "--mcp-config", &config])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = &server.requests()[0].body;
    let names = offered_tools(body);
    assert!(names.contains(&"mcp__gen__tool_03".to_string()) && !names.contains(&"tool_search".to_string()));
    assert!(!system_text(body).contains("# Deferred tools"));
}

#[tokio::test]
async fn a_slow_server_known_from_its_last_start_does_not_delay_the_first_request_and_its_calls_wait() {
    let env = env();
    let log = env.root.join("slow.log");
    let hang = env.root.join("hang");
    let vars = json!({"GEN_TOOLS": "3", "GEN_DELAY_MS": "2000", "GEN_LOG": log.display().to_string(),
                      "GEN_HANG_FILE": hang.display().to_string()});
    let config = mcp_file(&env, json!({"slow": generated(&env, vars)}));

    // Its first start ever: Lathe waits for its tool list, so the first request offers its tools.
    let server = scripted(json!([{"text": "first"}])).await;
    let out = output(lathe(&env, &server.url(), &["-p", "hi", "--mcp-config", &config])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first = &server.requests()[0];
    assert!(offered_tools(&first.body).contains(&"mcp__slow__tool_02".to_string()));
    let listening =
        |log: &[(String, f64)]| log.iter().filter(|(e, _)| e == "listening").map(|(_, t)| *t).next_back();
    let started = listening(&server_log(&log)).expect("the server started");
    assert!(first.received_unix_ms > started, "the first start is waited for");
    assert!(std::fs::read_dir(env.home.join("mcp-cache")).expect("cache dir").count() == 1);

    // Next session: its tools are offered from the list remembered, the first request goes out
    // while the server is still starting, and the call made then waits for it and works.
    let server =
        scripted(json!([call("c1", "mcp__slow__tool_02", json!({"value": 21})), {"text": "42"}])).await;
    let out = output(lathe(
        &env,
        &server.url(),
        &["-p", "double 21", "--mcp-config", &config, "--output-format", "stream-json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    let events = server_log(&log);
    let started = listening(&events).expect("the server started again");
    assert!(
        requests[0].received_unix_ms < started,
        "the first request ({}) came after the server was ready ({started})",
        requests[0].received_unix_ms
    );
    assert!(offered_tools(&requests[0].body).contains(&"mcp__slow__tool_02".to_string()));
    assert!(
        tool_result_text(&requests[1].body).contains("tool_02: 21 times 2 is 42"),
        "{}",
        requests[1].body
    );
    assert_eq!(events.iter().filter(|(e, _)| e == "tools/call tool_02").count(), 1);
    assert_eq!(warnings(&json_lines(&out)), Vec::<String>::new());

    // A server that never becomes ready: the call fails after its start-up limit, in words.
    std::fs::write(&hang, "").expect("hang file");
    env.config("[mcp]\nstartup_timeout_ms = 1500");
    let server =
        scripted(json!([call("c1", "mcp__slow__tool_02", json!({"value": 1})), {"text": "it failed"}])).await;
    let out = output(lathe(
        &env,
        &server.url(),
        &["-p", "double 1", "--mcp-config", &config, "--output-format", "stream-json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = tool_result_text(&server.requests()[1].body);
    assert!(
        result.contains("MCP server `slow` failed to start")
            && result.contains("did not finish starting within 1500 ms"),
        "{result}"
    );
    let results = tool_results(&json_lines(&out));
    assert_eq!(results[0]["status"], "failed", "{results:?}");
    let warned = warnings(&json_lines(&out));
    assert!(warned.iter().any(|w| w.contains("`slow` failed to start")), "{warned:?}");

    // A session that ends while the server is still starting stops it (the shell call waits
    // until this start of the server has logged its pid).
    let pids = |log: &Path| -> Vec<String> {
        server_log(log)
            .iter()
            .filter_map(|(event, _)| event.strip_prefix("pid ").map(str::to_string))
            .collect()
    };
    let before = pids(&log).len();
    let wait = format!(
        "for i in $(seq 300); do [ $(grep -c '\"pid ' {}) -gt {before} ] && exit 0; sleep 0.1; done; exit 1",
        log.display()
    );
    let server = scripted(json!([call("c1", "shell", json!({"command": wait})), {"text": "bye"}])).await;
    let out = output(lathe(&env, &server.url(), &["-p", "bye", "--yolo", "--mcp-config", &config])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        tool_result_text(&server.requests()[1].body).contains("exit code: 0"),
        "{}",
        server.requests()[1].body
    );
    let pid = pids(&log).pop().expect("pid");
    assert_eq!(pids(&log).len(), before + 1);
    for _ in 0..250 {
        if process_gone(&pid) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(process_gone(&pid), "the MCP server {pid} outlived the session");
}
