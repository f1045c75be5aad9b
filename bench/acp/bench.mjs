// ACP agents side by side: `troupe acp` and Zed's `@zed-industries/codex-acp` (Codex behind
// ACP), driven by the same client on the official SDK against the same mock-model (auto mode:
// N shell calls of `true`, then `done`). Per rep, one agent process:
//   1. start-up: spawn → `initialize` answered;
//   2. a turn in a fresh session: `session/prompt` sent → the last `session/update` of that
//      session before the answer (and → the answer); the turn must hold exactly CALLS
//      command tool calls, all completed, and end `end_turn`;
//   3. memory: SESSIONS sessions open at once (the turn's included), then the RSS of the
//      agent's process tree (every process under it, /proc VmRSS summed) once it settles.
// Prints one JSON line. Usage (bench/acp/run starts the mock and the homes):
//   node bench.mjs NAME REPS CALLS SESSIONS -- COMMAND ARGS…
import * as acp from "@agentclientprotocol/sdk";
import { spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { Readable, Writable } from "node:stream";

const [name, reps, calls, sessions] = process.argv.slice(2, 6).map((v, i) => (i ? Number(v) : v));
const command = process.argv.slice(process.argv.indexOf("--") + 1);
const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/// KiB of resident memory of `pid` and every process below it.
function treeRssKib(pid) {
  const children = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  let total = 0;
  let processes = 0;
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift();
    try {
      const status = readFileSync(`/proc/${p}/status`, "utf8");
      const rss = /VmRSS:\s+(\d+) kB/.exec(status);
      if (rss) total += Number(rss[1]);
      processes += 1;
    } catch {
      continue;
    }
    queue.push(...(children.get(p) ?? []));
  }
  return { kib: total, processes };
}

/// The tree's RSS once two samples 200 ms apart differ by less than 1% (at most 5 s).
async function settledRss(pid) {
  let last = treeRssKib(pid);
  for (let i = 0; i < 25; i++) {
    await sleep(200);
    const next = treeRssKib(pid);
    if (Math.abs(next.kib - last.kib) <= last.kib * 0.01) return next;
    last = next;
  }
  return last;
}

async function once() {
  const started = now();
  const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const lastUpdate = new Map();
  const toolCalls = new Map();
  const app = acp
    .client({ name: "troupe-bench" })
    .onNotification("session/update", ({ params }) => {
      lastUpdate.set(params.sessionId, now());
      const u = params.update;
      if (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") {
        const calls = toolCalls.get(params.sessionId) ?? new Map();
        const call = calls.get(u.toolCallId) ?? {};
        calls.set(u.toolCallId, { ...call, ...(u.kind ? { kind: u.kind } : {}), ...(u.status ? { status: u.status } : {}) });
        toolCalls.set(params.sessionId, calls);
      }
    })
    .onRequest("session/request_permission", ({ params }) => ({
      outcome: { outcome: "selected", optionId: params.options[0].optionId },
    }));
  const { agent } = app.connect(
    acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)),
  );
  await agent.request("initialize", { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const initialized = now();
  const { sessionId } = await agent.request("session/new", { cwd: process.cwd(), mcpServers: [] });
  const created = now();
  const sent = now();
  const answer = await agent.request("session/prompt", {
    sessionId,
    prompt: [{ type: "text", text: "run the commands" }],
  });
  const answered = now();
  const seen = [...(toolCalls.get(sessionId) ?? new Map()).values()];
  const ok =
    answer.stopReason === "end_turn" &&
    seen.length === calls &&
    seen.every((c) => c.kind === "execute" && c.status === "completed");
  for (let i = 1; i < sessions; i++) {
    await agent.request("session/new", { cwd: process.cwd(), mcpServers: [] });
  }
  const rss = await settledRss(child.pid);
  // An agent that does not exit when its stdin closes (codex-acp) is stopped after 5 s.
  child.stdin.end();
  const stopper = setTimeout(() => child.kill("SIGTERM"), 5000);
  await exited;
  clearTimeout(stopper);
  return {
    ok,
    stop: answer.stopReason,
    tool_calls: seen.length,
    start: initialized - started,
    session: created - initialized,
    last_update: (lastUpdate.get(sessionId) ?? answered) - sent,
    answer: answered - sent,
    rss_kib: rss.kib,
    processes: rss.processes,
  };
}

const runs = [];
for (let r = 0; r < reps; r++) runs.push(await once());
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const good = runs.filter((r) => r.ok);
const round = (x) => Math.round(x * 10) / 10;
console.log(
  JSON.stringify({
    agent: name,
    reps,
    calls,
    sessions,
    ok: good.length,
    failed: runs.length - good.length,
    failures: runs.filter((r) => !r.ok).map((r) => ({ stop: r.stop, tool_calls: r.tool_calls })),
    start_ms: round(median(good.map((r) => r.start))),
    session_new_ms: round(median(good.map((r) => r.session))),
    prompt_to_last_update_ms: round(median(good.map((r) => r.last_update))),
    prompt_to_answer_ms: round(median(good.map((r) => r.answer))),
    last_update_range_ms: [round(Math.min(...good.map((r) => r.last_update))), round(Math.max(...good.map((r) => r.last_update)))],
    rss_kib: median(good.map((r) => r.rss_kib)),
    rss_range_kib: [Math.min(...good.map((r) => r.rss_kib)), Math.max(...good.map((r) => r.rss_kib))],
    processes: median(good.map((r) => r.processes)),
  }),
);
process.exit(good.length === runs.length ? 0 : 1);
