// ACP agents side by side: `troupe acp` and Zed's `@zed-industries/codex-acp` (Codex behind
// ACP), driven by the same client on the official SDK against the same mock-model. Measures
// start-up (spawn → initialize answered), session/new, and per prompt the time to the first
// update and to its stopReason. Usage: see bench/acp/run (it starts the mock and the homes).
//   node bench.mjs NAME REPS PROMPTS -- COMMAND ARGS…
import * as acp from "@agentclientprotocol/sdk";
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

const [name, reps, prompts] = process.argv.slice(2, 5);
const command = process.argv.slice(process.argv.indexOf("--") + 1);
const now = () => Number(process.hrtime.bigint()) / 1e6;

async function once() {
  const started = now();
  const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "ignore"] });
  let firstUpdate = null;
  const app = acp
    .client({ name: "troupe-bench" })
    .onNotification("session/update", () => {
      if (firstUpdate === null) firstUpdate = now();
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
  const turns = [];
  for (let i = 0; i < Number(prompts); i++) {
    firstUpdate = null;
    const sent = now();
    const answer = await agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: `run the commands (${i})` }],
    });
    turns.push({ first: (firstUpdate ?? now()) - sent, total: now() - sent, stop: answer.stopReason });
  }
  child.stdin.end();
  await new Promise((resolve) => child.on("exit", resolve));
  return { start: initialized - started, session: created - initialized, turns, wall: now() - started };
}

const runs = [];
for (let r = 0; r < Number(reps); r++) runs.push(await once());
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const flat = runs.flatMap((r) => r.turns);
console.log(
  JSON.stringify({
    agent: name,
    reps: Number(reps),
    prompts: Number(prompts),
    start_ms: median(runs.map((r) => r.start)),
    session_new_ms: median(runs.map((r) => r.session)),
    first_update_ms: median(flat.map((t) => t.first)),
    prompt_ms: median(flat.map((t) => t.total)),
    wall_ms: median(runs.map((r) => r.wall)),
    stop_reasons: [...new Set(flat.map((t) => t.stop))],
  }),
);
