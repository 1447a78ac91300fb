// Drives `capbridge serve --stdio --model fake` with the official ACP TypeScript client
// (@agentclientprotocol/sdk, pinned in package.json) through the issue 8 "Real clients"
// scenarios. Each scenario prints PASS or FAIL with the reason; the exit status is non-zero
// when any scenario fails.
//
// The providers are the workspace samples (notes-plugin over MCP, aci-provider over ACI),
// started as separate processes on Unix sockets in a private temporary directory and described
// by a temporary host registry, the same way `capbridge demo` does it.
//
// Every line the agent writes on stdout is checked: exactly one JSON-RPC 2.0 message, no
// extra fields, at most 65,536 characters (UTF-16 units).
//
// Usage: node run.mjs [--bin DIR] [--only NAME[,NAME…]]

import { spawn, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync, readFileSync, existsSync, mkdirSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "../..");
const args = process.argv.slice(2);
const argValue = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const BIN = resolve(argValue("--bin") ?? join(ROOT, "target/debug"));
const ONLY = argValue("--only")?.split(",");
const MAX_LINE = 65536;
/** Hang guard for one request; scenarios assert outcomes, not times. */
const GUARD_MS = 30_000;

// ---------------------------------------------------------------------------------------------
// Fixture: providers + host registry
// ---------------------------------------------------------------------------------------------

const sha256 = (path) => createHash("sha256").update(readFileSync(path)).digest("hex");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(path, child, name) {
  for (let i = 0; i < 400; i++) {
    if (existsSync(path)) return;
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}) before serving ${path}`);
    await sleep(50);
  }
  throw new Error(`${name} did not create ${path}`);
}

async function startFixture() {
  const dir = mkdtempSync(join(tmpdir(), "capbridge-acp-client-"));
  chmodSync(dir, 0o700);
  const uid = process.getuid();
  const capbridge = join(BIN, "capbridge");
  const notesBin = join(BIN, "notes-plugin");
  const aciBin = join(BIN, "aci-provider");
  for (const b of [capbridge, notesBin, aciBin]) {
    if (!existsSync(b)) throw new Error(`missing ${b} (cargo build -p capbridge -p notes-plugin -p aci-provider)`);
  }
  const notesSock = join(dir, "notes.sock");
  const aciSock = join(dir, "aci.sock");
  const aciData = join(dir, "aci-data");
  mkdirSync(aciData);
  const notesArgv = [notesBin, "--socket", notesSock, "--data", join(dir, "notes.json")];
  const callers = join(dir, "aci-callers.json");
  // The ACI provider checks its caller (capbridge, same UID on this host) against its own
  // registry; see cli/src/demo.rs.
  writeFileSync(callers, JSON.stringify({
    version: 1,
    packages: [{
      uid, package: "org.agentos.app", signingCertSha256: sha256(capbridge), versionCode: 1,
      label: "capbridge", permissions: ["ai.aci.permission.CALL"],
    }],
  }));
  const aciArgv = [aciBin, "--socket", aciSock, "--data", aciData, "--registry", callers];
  const children = [];
  for (const [name, argv, sock] of [["notes-plugin", notesArgv, notesSock], ["aci-provider", aciArgv, aciSock]]) {
    const child = spawn(argv[0], argv.slice(1), { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
    child.stderr.on("data", () => {});
    children.push(child);
    await waitFor(sock, child, name);
  }
  const registryDir = join(dir, "registry");
  mkdirSync(registryDir);
  writeFileSync(join(registryDir, "registry.json"), JSON.stringify({
    version: 1,
    packages: [
      {
        uid, package: "com.example.notes", signingCertSha256: sha256(notesBin), versionCode: 1,
        label: "Notes (sample MCP plugin)",
        exports: { mcp: { pluginDir: join(ROOT, "samples/notes-plugin/agent-plugin"), socket: notesSock } },
        launch: notesArgv,
      },
      {
        uid, package: "com.example.aciprovider", signingCertSha256: sha256(aciBin), versionCode: 1,
        label: "ACI sample provider",
        exports: { aci: { actions: ["ai.aci.core.ACTION_BIND"], socket: aciSock } },
        launch: aciArgv,
      },
    ],
  }, null, 2));
  writeFileSync(join(registryDir, "plugin-state.json"), JSON.stringify({
    version: 1,
    plugins: [{ package: "com.example.notes", signingCertSha256: sha256(notesBin), enabled: true }],
  }));
  // The catalog as capbridge sees it, to pick real tool names.
  let tools = [];
  try {
    const out = execFileSync(capbridge, ["catalog", "--registry", registryDir, "--json"], {
      encoding: "utf8", timeout: 60_000, stdio: ["ignore", "pipe", "pipe"],
    });
    const parsed = JSON.parse(out);
    tools = parsed.tools ?? [];
    for (const p of parsed.plugins ?? []) {
      if (p.reason) console.log(`note: catalog: ${p.package ?? p.plugin ?? "?"} ${p.status ?? ""} (${p.reason})`);
    }
  } catch (e) {
    console.log(`note: capbridge catalog --json failed: ${String(e.message).split("\n")[0]}`);
  }
  const cleanup = () => {
    for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  return { dir, registryDir, capbridge, tools, cleanup };
}

// ---------------------------------------------------------------------------------------------
// One agent process + SDK client, with stdout line checks
// ---------------------------------------------------------------------------------------------

const lineProblems = []; // every bad stdout line, over all agent processes
let linesChecked = 0;

const ALLOWED = {
  request: ["jsonrpc", "id", "method", "params"],
  notification: ["jsonrpc", "method", "params"],
  result: ["jsonrpc", "id", "result"],
  error: ["jsonrpc", "id", "error"],
};

/** Returns a problem description, or null when `line` is one clean JSON-RPC 2.0 message. */
export function checkLine(line) {
  if (line.length > MAX_LINE) return `line of ${line.length} chars (> ${MAX_LINE})`;
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return "not JSON";
  }
  if (m === null || typeof m !== "object" || Array.isArray(m)) return "not one JSON object";
  if (m.jsonrpc !== "2.0") return "jsonrpc is not \"2.0\"";
  let kind;
  if ("method" in m) kind = "id" in m ? "request" : "notification";
  else if ("result" in m) kind = "result";
  else if ("error" in m) kind = "error";
  else return "neither request, notification nor response";
  const extra = Object.keys(m).filter((k) => !ALLOWED[kind].includes(k));
  if (extra.length) return `extra fields ${JSON.stringify(extra)} in a ${kind}`;
  if ("id" in m && !(typeof m.id === "string" || Number.isInteger(m.id) || (m.id === null && kind === "error"))) {
    return "bad id";
  }
  if (typeof m.method !== "undefined" && typeof m.method !== "string") return "method is not a string";
  if ("params" in m && (m.params === null || typeof m.params !== "object")) return "params is not structured";
  if (kind === "error") {
    const e = m.error;
    if (!e || typeof e !== "object" || !Number.isInteger(e.code) || typeof e.message !== "string") {
      return "malformed error object";
    }
    const extraE = Object.keys(e).filter((k) => !["code", "message", "data"].includes(k));
    if (extraE.length) return `extra fields ${JSON.stringify(extraE)} in error`;
  }
  return null;
}

class Agent {
  constructor(fixture, { consent = "allow", dataDir } = {}) {
    this.updates = []; // every session/update params, in order
    this.waiters = [];
    this.permissionRequests = [];
    this.stderr = "";
    this.rawLines = [];
    const argv = ["serve", "--stdio", "--model", "fake", "--consent", consent, "--registry", fixture.registryDir];
    // Always a private state directory (the default is the user's XDG state).
    argv.push("--data", dataDir ?? mkdtempSync(join(fixture.dir, "data-")));
    this.child = spawn(fixture.capbridge, argv, { detached: true, stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? "warn" } });
    this.child.stderr.on("data", (d) => {
      this.stderr = (this.stderr + d.toString()).slice(-4000);
    });
    this.exited = new Promise((r) => this.child.on("exit", (code, sig) => r({ code, sig })));
    let pending = "";
    const input = new ReadableStream({
      start: (controller) => {
        this.child.stdout.on("data", (chunk) => {
          pending += chunk.toString("utf8");
          let nl;
          while ((nl = pending.indexOf("\n")) >= 0) {
            const line = pending.slice(0, nl);
            pending = pending.slice(nl + 1);
            linesChecked++;
            this.rawLines.push(line);
            const problem = checkLine(line);
            if (problem) lineProblems.push(`${problem}: ${line.slice(0, 300)}`);
          }
          controller.enqueue(new Uint8Array(chunk));
        });
        this.child.stdout.on("end", () => {
          if (pending.length) lineProblems.push(`unterminated last line: ${pending.slice(0, 300)}`);
          try { controller.close(); } catch { /* already closed */ }
        });
      },
    });
    const output = Writable.toWeb(this.child.stdin);
    const stream = acp.ndJsonStream(output, input);
    const app = acp.client({ name: "capbridge-compat" })
      .onNotification(acp.methods.client.session.update, (ctx) => {
        this.updates.push(ctx.params);
        for (const w of this.waiters.splice(0)) w();
      })
      .onRequest(acp.methods.client.session.requestPermission, (ctx) => {
        this.permissionRequests.push(ctx.params);
        const opts = ctx.params.options ?? [];
        const pick = opts.find((o) => o.kind === "allow_once") ?? opts.find((o) => o.kind?.startsWith("allow")) ?? opts[0];
        return { outcome: { outcome: "selected", optionId: pick.optionId } };
      });
    this.conn = app.connect(stream);
    this.cx = this.conn.agent;
  }

  request(method, params) {
    return withGuard(this.cx.request(method, params), `${method}`);
  }

  notify(method, params) {
    return this.cx.notify(method, params);
  }

  async initialize() {
    return this.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "capbridge-compat", version: "1" },
    });
  }

  async newSession(meta) {
    const params = { cwd: "/", mcpServers: [] };
    if (meta !== undefined) params._meta = meta;
    return this.request("session/new", params);
  }

  prompt(sessionId, text) {
    return this.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
  }

  updatesFor(sessionId, from = 0) {
    return this.updates.slice(from).filter((u) => u.sessionId === sessionId).map((u) => u.update);
  }

  /** Resolves once `pred(updates)` holds for this session's updates since `from`. */
  async waitUpdates(sessionId, from, pred) {
    const deadline = Date.now() + GUARD_MS;
    while (!pred(this.updatesFor(sessionId, from))) {
      if (Date.now() > deadline) throw new Error("timed out waiting for session/update");
      await new Promise((r) => {
        this.waiters.push(r);
        setTimeout(r, 200);
      });
    }
  }

  async stop() {
    try { this.conn.close(); } catch { /* closed */ }
    try { this.child.stdin.end(); } catch { /* closed */ }
    const t = setTimeout(() => this.child.kill("SIGKILL"), 5000);
    await this.exited;
    clearTimeout(t);
  }
}

function withGuard(promise, what) {
  let timer;
  const guard = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${GUARD_MS} ms`)), GUARD_MS);
  });
  return Promise.race([promise, guard]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------------------------
// Helpers for assertions
// ---------------------------------------------------------------------------------------------

class Fail extends Error {}
function check(cond, msg) {
  if (!cond) throw new Fail(msg);
}
const show = (v) => {
  const s = JSON.stringify(v);
  return s && s.length > 600 ? `${s.slice(0, 600)}…` : s;
};
const textOf = (updates, kind = "agent_message_chunk") =>
  updates.filter((u) => u.sessionUpdate === kind && u.content?.type === "text").map((u) => u.content.text).join("");
const directive = (d, prefix = "") => `${prefix}${JSON.stringify({ fake: d })}`;
async function expectError(promise) {
  try {
    const r = await promise;
    return { ok: r };
  } catch (e) {
    if (e instanceof acp.RequestError || (e && typeof e.code === "number")) return { error: e };
    throw e;
  }
}
/** Final status per toolCallId, and whether it went through in_progress. */
function toolCalls(updates) {
  const calls = new Map();
  for (const u of updates) {
    if (u.sessionUpdate !== "tool_call" && u.sessionUpdate !== "tool_call_update") continue;
    const c = calls.get(u.toolCallId) ?? { id: u.toolCallId, statuses: [], title: undefined, content: [] };
    if (u.title) c.title = u.title;
    if (u.status) c.statuses.push(u.status);
    if (Array.isArray(u.content)) c.content.push(...u.content);
    calls.set(u.toolCallId, c);
  }
  return [...calls.values()].map((c) => ({
    ...c,
    final: c.statuses[c.statuses.length - 1],
    text: c.content.map((x) => x.content?.text ?? x.text ?? "").join(""),
  }));
}

// ---------------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------------

const scenarios = [];
const scenario = (name, fn, opts = {}) => scenarios.push({ name, fn, opts });

scenario("initialize", async ({ agent }) => {
  const r = await agent.initialize();
  check(r.protocolVersion === 1, `protocolVersion ${show(r.protocolVersion)}`);
  const ext = r._meta?.["org.agentos"]?.extensions;
  for (const k of ["toolScope", "sessionSetup", "sessionAutoSelect"]) {
    check(ext?.[k]?.version === 1, `_meta."org.agentos".extensions.${k} is ${show(ext?.[k])}`);
  }
  check(r.agentCapabilities?.loadSession === true, `agentCapabilities.loadSession ${show(r.agentCapabilities)}`);
  return `protocolVersion 1, extensions ${Object.keys(ext).join(", ")}`;
});

scenario("streamed prompt", async ({ agent }) => {
  await agent.initialize();
  const { sessionId } = await agent.newSession();
  check(/^ses_[0-9A-HJKMNP-TV-Z]{26}$/.test(sessionId), `sessionId ${sessionId}`);
  const from = agent.updates.length;
  const r = await agent.prompt(sessionId, directive({ text: "abcd", chunks: 30, chunkChars: 4 }, "stream please "));
  check(r.stopReason === "end_turn", `stopReason ${show(r)}`);
  check(/^tsk_/.test(r._meta?.["org.agentos"]?.taskId ?? ""), `no _meta."org.agentos".taskId in ${show(r)}`);
  const ups = agent.updatesFor(sessionId, from);
  const text = textOf(ups);
  check(text === "abcd".repeat(30), `streamed text ${show(text)}`);
  const chunks = ups.filter((u) => u.sessionUpdate === "agent_message_chunk").length;
  return `${chunks} agent_message_chunk update(s), 120 chars, end_turn`;
});

function toolNames(fixture) {
  const mcp = fixture.tools.find((t) => t.source === "mcp" && /(^|_)add(_note)?$/.test(t.tool ?? ""))
    ?? fixture.tools.find((t) => t.source === "mcp");
  // `capbridge catalog` may not list ACI providers; then the fake model resolves
  // `package/capability` against the tools the runtime offers (docs/fake-model.md).
  const aci = fixture.tools.find((t) => t.source === "aci" && /device|system/i.test(t.tool ?? ""))
    ?? fixture.tools.find((t) => t.source === "aci")
    ?? { name: "com.example.aciprovider/device_info", tool: "device_info", plugin: "aci.com.example.aciprovider", source: "aci", viaSlash: true };
  check(mcp, `catalog has no MCP tool: ${show(fixture.tools.map((t) => t.name))}`);
  return { mcp, aci };
}

/** Arguments satisfying a tool's input schema: every required property with a plain value. */
function argsFor(tool) {
  const schema = tool.inputSchema ?? {};
  const out = {};
  for (const k of schema.required ?? []) {
    const t = schema.properties?.[k]?.type;
    out[k] = t === "number" || t === "integer" ? 1 : t === "boolean" ? true : t === "array" ? [] : t === "object" ? {} : "compat";
  }
  return out;
}

const isTool = (title, t) => (t.viaSlash ? title?.endsWith(`__${t.tool}`) : title === t.name);

async function mcpAndAci(agent, fixture) {
  const { mcp, aci } = toolNames(fixture);
  await agent.initialize();
  const { sessionId } = await agent.newSession();
  const from = agent.updates.length;
  const args = argsFor(mcp);
  const r = await agent.prompt(sessionId, directive({ tools: [{ name: mcp.name, arguments: args }, { name: aci.name, arguments: {} }] }));
  const ups = agent.updatesFor(sessionId, from);
  const calls = toolCalls(ups);
  check(r.stopReason === "end_turn", `stopReason ${show(r)}`);
  check(calls.length === 2, `expected 2 tool calls, got ${show(calls)}`);
  for (const c of calls) {
    check(c.statuses[0] === "pending", `tool_call ${c.title} did not start pending: ${show(c.statuses)}`);
    check(c.statuses.includes("in_progress"), `${c.title} never in_progress: ${show(c.statuses)} ${show(c.text)}`);
    check(c.final === "completed", `${c.title} ended ${c.final}: ${show(c.text)}`);
  }
  check(calls.some((c) => isTool(c.title, mcp)) && calls.some((c) => isTool(c.title, aci)), `titles ${show(calls.map((c) => c.title))} (want ${mcp.name} and ${aci.name})`);
  check(textOf(ups) === "done: 2 tool results", `final text ${show(textOf(ups))}`);
  return { calls, sessionId };
}

scenario("tool call across MCP and ACI (consent allow)", async ({ agent, fixture }) => {
  const { calls } = await mcpAndAci(agent, fixture);
  return `${calls.map((c) => `${c.title}: ${c.statuses.join("→")}`).join("; ")}`;
});

// CNS-09/CNS-10: the caller can never approve a call. With `--consent ask` and no user surface
// (no controlling terminal here), every call that needs consent is denied; if the agent sends
// `session/request_permission`, this client answers "allow", which must change nothing.
scenario("consent ask without a user: the client cannot approve (CNS-09)", async ({ fixture }) => {
  const agent = new Agent(fixture, { consent: "ask" });
  try {
    const { mcp, aci } = toolNames(fixture);
    await agent.initialize();
    const { sessionId } = await agent.newSession();
    const from = agent.updates.length;
    const r = await agent.prompt(sessionId, directive({ tools: [{ name: mcp.name, arguments: argsFor(mcp) }, { name: aci.name, arguments: {} }] }));
    const calls = toolCalls(agent.updatesFor(sessionId, from));
    check(r.stopReason === "end_turn", `stopReason ${show(r)}`);
    check(calls.length === 2, `expected 2 tool calls, got ${show(calls)}`);
    for (const c of calls) {
      check(c.final === "failed", `${c.title} ended ${c.final}: ${show(c.text)}`);
      check(!c.statuses.includes("in_progress"), `${c.title} was dispatched: ${show(c.statuses)}`);
      check(c.text === "[agentos:tool_denied] The user declined this tool call.", `${c.title} text ${show(c.text)}`);
    }
    return `${calls.map((c) => `${c.title}: ${c.statuses.join("→")}`).join("; ")}; ${agent.permissionRequests.length} permission request(s) answered allow, ignored`;
  } finally {
    await agent.stop();
  }
}, { ownAgent: true });

scenario("out-of-catalog tool", async ({ agent }) => {
  await agent.initialize();
  const { sessionId } = await agent.newSession();
  const from = agent.updates.length;
  const r = await agent.prompt(sessionId, directive({ tools: [{ name: "mcp__no_such_plugin__main__nothing", arguments: {} }] }));
  const ups = agent.updatesFor(sessionId, from);
  const calls = toolCalls(ups);
  check(r.stopReason === "end_turn", `stopReason ${show(r)}`);
  check(calls.length === 1, `tool calls ${show(calls)}`);
  const c = calls[0];
  check(c.final === "failed", `final status ${c.final}`);
  check(!c.statuses.includes("in_progress"), `went in_progress: ${show(c.statuses)}`);
  check(/^\[agentos:tool_not_in_catalog\]/.test(c.text), `failure text ${show(c.text)}`);
  check(textOf(ups) === "done: 1 tool results", `final text ${show(textOf(ups))}`);
  return `${c.statuses.join("→")}, ${c.text.slice(0, 60)}`;
});

scenario("toolScope limits a session", async ({ agent, fixture }) => {
  const { mcp, aci } = toolNames(fixture);
  await agent.initialize();
  const scope = [{ plugin: mcp.plugin, tool: mcp.tool }];
  const { sessionId } = await agent.newSession({ "org.agentos": { toolScope: scope } });
  // toolLoop asks for the first tool offered: only the scoped one may be offered.
  let from = agent.updates.length;
  let r = await agent.prompt(sessionId, directive({ toolLoop: 1, tools: [] }));
  let calls = toolCalls(agent.updatesFor(sessionId, from));
  check(calls.length === 1 && calls[0].title === mcp.name, `first offered tool ${show(calls.map((c) => c.title))}, scope ${show(scope)}`);
  // The out-of-scope ACI tool, called by name, fails like a missing tool, without dispatch.
  from = agent.updates.length;
  r = await agent.prompt(sessionId, directive({ tools: [{ name: aci.name, arguments: {} }] }));
  calls = toolCalls(agent.updatesFor(sessionId, from));
  check(r.stopReason === "end_turn", `stopReason ${show(r)}`);
  check(calls.length === 1 && calls[0].final === "failed" && !calls[0].statuses.includes("in_progress"), `out-of-scope call ${show(calls)}`);
  check(/^\[agentos:tool_not_in_catalog\]/.test(calls[0].text), `failure text ${show(calls[0].text)}`);
  return `offered ${mcp.name} only; ${aci.name} → ${calls[0].text.slice(0, 50)}`;
});

scenario("empty toolScope = no plugin tools", async ({ agent }) => {
  await agent.initialize();
  const { sessionId } = await agent.newSession({ "org.agentos": { toolScope: [] } });
  const from = agent.updates.length;
  // toolLoop asks for the first offered tool: with [] no plugin tool and no read_skill may be
  // offered (CAT-33, CAT-38); a built-in outside toolScope (CAT-39) may be.
  const r = await agent.prompt(sessionId, directive({ toolLoop: 1 }));
  const ups = agent.updatesFor(sessionId, from);
  const calls = toolCalls(ups);
  check(r.stopReason === "end_turn", `stopReason ${show(r)}`);
  if (calls.length === 0) {
    check(textOf(ups) === "no tools offered", `reply ${show(textOf(ups))}`);
    return "the model was offered no tools";
  }
  const t = calls[0].title ?? "";
  check(!t.startsWith("mcp__") && t !== "read_skill", `a plugin tool or read_skill was offered: ${t}`);
  return `no plugin tools; first offered tool is the built-in ${t}`;
});

scenario("bad toolScope shapes", async ({ agent }) => {
  await agent.initialize();
  const long = "x".repeat(129);
  const shapes = {
    "not an array": "com.example.notes/add",
    "object": { plugin: "a", tool: "b" },
    "element not an object": ["a"],
    "missing tool": [{ plugin: "a" }],
    "non-string plugin": [{ plugin: 1, tool: "b" }],
    "empty string": [{ plugin: "", tool: "b" }],
    "129-char tool": [{ plugin: "a", tool: long }],
    "33 entries": Array.from({ length: 33 }, (_, i) => ({ plugin: "a", tool: `t${i}` })),
  };
  const before = await agent.request("session/list", {}).catch(() => null);
  const bad = [];
  for (const [label, toolScope] of Object.entries(shapes)) {
    const res = await expectError(agent.newSession({ "org.agentos": { toolScope } }));
    if (res.ok) bad.push(`${label}: created ${res.ok.sessionId}`);
    else if (res.error.code !== -32602 || res.error.data?.agentosCode !== "invalid_params") {
      bad.push(`${label}: ${res.error.code} ${show(res.error.data)}`);
    } else if (res.error.message.includes(long) || res.error.message.includes("com.example.notes")) {
      bad.push(`${label}: the error echoes the value (ACP-63)`);
    }
  }
  if (before) {
    const after = await agent.request("session/list", {});
    check((after.sessions ?? []).length === (before.sessions ?? []).length, `sessions were created: ${show(after)}`);
  }
  // 32 entries of 128 chars are fine.
  const ok = await agent.newSession({ "org.agentos": { toolScope: Array.from({ length: 32 }, (_, i) => ({ plugin: "p".repeat(128), tool: `t${i}` })) } });
  check(bad.length === 0, bad.join("; "));
  check(ok.sessionId, "32 × 128 chars rejected");
  return `${Object.keys(shapes).length} shapes → -32602 invalid_params; 32 entries × 128 chars accepted`;
});

scenario("cancel", async ({ agent }) => {
  await agent.initialize();
  const { sessionId } = await agent.newSession();
  const from = agent.updates.length;
  const turn = agent.prompt(sessionId, directive({ awaitAbort: true, text: "wait" }));
  await agent.waitUpdates(sessionId, from, (ups) => textOf(ups).includes("wait"));
  const t0 = Date.now();
  await agent.notify("session/cancel", { sessionId });
  const r = await turn;
  const ms = Date.now() - t0;
  check(r.stopReason === "cancelled", `stopReason ${show(r)}`);
  check(ms <= 1500, `cancelled after ${ms} ms (ACP: within a second)`);
  const from2 = agent.updates.length;
  const r2 = await agent.prompt(sessionId, "still there?");
  check(r2.stopReason === "end_turn" && textOf(agent.updatesFor(sessionId, from2)) === "echo: still there?", `session unusable after cancel: ${show(r2)}`);
  return `cancelled ${ms} ms after session/cancel; the session answers again`;
});

scenario("load with history replay", async ({ fixture }) => {
  const dataDir = mkdtempSync(join(fixture.dir, "data-"));
  const a = new Agent(fixture, { dataDir });
  let sessionId;
  try {
    await a.initialize();
    ({ sessionId } = await a.newSession());
    await a.prompt(sessionId, "first question");
    await a.prompt(sessionId, directive({ text: "second answer" }));
    // Same process.
    const from = a.updates.length;
    const loaded = await a.request("session/load", { sessionId, cwd: "/", mcpServers: [] });
    check(loaded !== undefined, "no load response");
    const replay = a.updatesFor(sessionId, from);
    const agentText = textOf(replay);
    const userText = textOf(replay, "user_message_chunk");
    check(agentText.includes("echo: first question") && agentText.includes("second answer"), `replayed agent text ${show(agentText)}`);
    check(userText.includes("first question"), `replayed user text ${show(userText)}`);
  } finally {
    await a.stop();
  }
  // A new process over the same data directory.
  const b = new Agent(fixture, { dataDir });
  try {
    await b.initialize();
    await b.request("session/load", { sessionId, cwd: "/", mcpServers: [] });
    const agentText = textOf(b.updatesFor(sessionId));
    check(agentText.includes("echo: first question") && agentText.includes("second answer"), `after restart: replayed ${show(agentText)}`);
    // Another caller's or an unknown id: session_not_found.
    const res = await expectError(b.request("session/load", { sessionId: "ses_00000000000000000000000000", cwd: "/", mcpServers: [] }));
    check(res.error?.code === -32002, `unknown id: ${show(res.ok ?? res.error?.data)}`);
  } finally {
    await b.stop();
  }
  return "history replayed before the response, in-process and after a restart";
}, { ownAgent: true });

scenario("model failure is a JSON-RPC error", async ({ agent }) => {
  await agent.initialize();
  const { sessionId } = await agent.newSession();
  const cases = [
    ["model_rate_limited", true],
    ["model_auth_failed", false],
    ["model_unavailable", true],
    ["model_protocol", false],
    ["model_stream_interrupted", true],
  ];
  const seen = [];
  for (const [code, retryable] of cases) {
    const res = await expectError(agent.prompt(sessionId, directive({ fail: code })));
    check(res.error, `${code}: the prompt succeeded: ${show(res.ok)}`);
    const e = res.error;
    check(e.code === -32051, `${code}: JSON-RPC code ${e.code}`);
    check(e.data?.agentosCode === code, `${code}: data ${show(e.data)}`);
    check(e.data?.retryable === retryable, `${code}: retryable ${show(e.data?.retryable)}`);
    check(e.message.startsWith(`${code}:`), `${code}: message ${show(e.message)}`);
    if (code === "model_rate_limited") {
      check(e.data?.details?.retryAfterSeconds === 2, `retryAfterSeconds: ${show(e.data?.details)}`);
    }
    seen.push(code);
  }
  const r = await agent.prompt(sessionId, "after the errors");
  check(r.stopReason === "end_turn", "session unusable after model errors");
  return `-32051 with ${seen.join(", ")}`;
});

scenario("max_tokens", async ({ agent }) => {
  await agent.initialize();
  const { sessionId } = await agent.newSession();
  const r = await agent.prompt(sessionId, directive({ maxTokens: true, text: "cut" }));
  check(r.stopReason === "max_tokens", `stopReason ${show(r)}`);
  return "stopReason max_tokens";
});

scenario("refusal", async ({ agent }) => {
  await agent.initialize();
  const { sessionId } = await agent.newSession();
  const r = await agent.prompt(sessionId, directive({ refuse: true }));
  check(r.stopReason === "refusal", `stopReason ${show(r)}`);
  return "stopReason refusal";
});

scenario("max_turn_requests", async ({ agent, fixture }) => {
  const tool = fixture.tools.find((t) => t.source === "mcp" && t.tool === "list") ?? toolNames(fixture).mcp;
  await agent.initialize();
  const { sessionId } = await agent.newSession();
  const from = agent.updates.length;
  const r = await agent.prompt(sessionId, directive({ toolLoop: 50, tools: [{ name: tool.name, arguments: {} }] }));
  const calls = toolCalls(agent.updatesFor(sessionId, from));
  check(r.stopReason === "max_turn_requests", `stopReason ${show(r)} after ${calls.length} tool calls`);
  check(calls.length === 12, `${calls.length} tool rounds (SPEC: 12)`);
  return `stopReason max_turn_requests after ${calls.length} rounds of ${tool.name}`;
});

scenario("stdout: one JSON-RPC 2.0 message per line, no extra fields, ≤ 65,536 chars", async ({ agent }) => {
  await agent.initialize();
  const { sessionId } = await agent.newSession();
  // A long reply (well over 65,536 characters in total, with characters JSON must escape).
  const r = await agent.prompt(sessionId, directive({ text: "\"\\<\u2028é😀", chunks: 200, chunkChars: 700 }));
  check(r.stopReason === "end_turn", `stopReason ${show(r)}`);
  check(lineProblems.length === 0, `${lineProblems.length} bad line(s): ${lineProblems.slice(0, 3).join(" | ")}`);
  return `${linesChecked} lines checked so far, all clean`;
}, { last: true });

// ---------------------------------------------------------------------------------------------

async function main() {
  const fixture = await startFixture();
  const count = (src) => fixture.tools.filter((t) => t.source === src).length;
  console.log(`catalog: ${fixture.tools.length} tools (${count("mcp")} MCP, ${count("aci")} ACI)`);
  let failed = 0;
  const results = [];
  const ordered = [...scenarios.filter((s) => !s.opts.last), ...scenarios.filter((s) => s.opts.last)];
  try {
    for (const s of ordered) {
      if (ONLY && !ONLY.some((o) => s.name.includes(o))) continue;
      const agent = s.opts.ownAgent ? null : new Agent(fixture);
      let line;
      try {
        const detail = await s.fn({ agent, fixture });
        line = `PASS  ${s.name}${detail ? ` — ${detail}` : ""}`;
      } catch (e) {
        failed++;
        const why = e instanceof Fail ? e.message : `${e?.constructor?.name ?? "Error"}: ${e?.message ?? e} ${e?.data ? show(e.data) : ""}`;
        const tail = (agent?.stderr ?? "").trim().split("\n").slice(-3).join(" | ");
        line = `FAIL  ${s.name} — ${why}${tail ? `\n        agent stderr: ${tail.slice(0, 500)}` : ""}`;
      } finally {
        if (agent) await agent.stop();
      }
      console.log(line);
      results.push(line);
    }
  } finally {
    fixture.cleanup();
  }
  const total = results.length;
  console.log(`${total - failed}/${total} scenarios passed`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.log(`FAIL  harness — ${e?.stack ?? e}`);
  process.exit(1);
});
