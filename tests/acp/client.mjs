// An editor on the official ACP SDK driving `troupe acp`, for tests/troupe/acp.rs.
// `node client.mjs SCENARIO`; the environment names the binary (TROUPE_EXE), its home
// (TROUPE_HOME) and the work dir (ACP_CWD). Prints one JSON object with what it saw.
import * as acp from "@agentclientprotocol/sdk";
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const scenario = process.argv[2];
const cwd = process.env.ACP_CWD;
const extraArgs = JSON.parse(process.env.ACP_ARGS || "[]");
// The MCP servers the editor gives its first session ("turn").
const mcpServers = JSON.parse(process.env.ACP_MCP_SERVERS || "[]");

/// Starts `troupe acp` with an SDK client; `answers` are the permission options to pick, in
/// order; `buffers` the editor's unsaved texts by path (with the fs capability when given).
/// `terminal`: the client offers ACP's `terminal/*` methods; `terminalOutput`: it also opts
/// into display-only terminals (`_meta.terminal_output`, Zed's extension).
function connect({ answers = [], buffers = null, terminal = false, terminalOutput = false } = {}) {
  const child = spawn(process.env.TROUPE_EXE, ["acp", ...extraArgs], {
    stdio: ["pipe", "pipe", "inherit"],
    env: process.env,
  });
  const seen = { updates: [], permissions: [], writes: [], reads: [], terminalRequests: [] };
  const waiters = [];
  const app = acp
    .client({ name: "troupe-test" })
    .onNotification("session/update", ({ params }) => {
      seen.updates.push(params);
      for (const waiter of [...waiters]) {
        if (waiter.test(params)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(params);
        }
      }
    })
    .onRequest("session/request_permission", ({ params }) => {
      seen.permissions.push(params);
      const optionId = answers.shift() ?? "reject_once";
      return { outcome: { outcome: "selected", optionId } };
    })
    .onRequest("fs/read_text_file", ({ params }) => {
      seen.reads.push(params.path);
      if (buffers && params.path in buffers) return { content: buffers[params.path] };
      return { content: readFileSync(params.path, "utf8") };
    })
    .onRequest("fs/write_text_file", ({ params }) => {
      seen.writes.push({ path: params.path, content: params.content });
      return {};
    });
  // An editor that offers terminals answers these; Troupe must never ask (it would hand the
  // command to the editor to execute outside Troupe's sandbox).
  for (const method of [
    "terminal/create",
    "terminal/output",
    "terminal/wait_for_exit",
    "terminal/kill",
    "terminal/release",
  ]) {
    app.onRequest(method, ({ params }) => {
      seen.terminalRequests.push({ method, params });
      throw acp.RequestError.methodNotFound(method);
    });
  }
  const connection = app.connect(
    acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)),
  );
  const agent = connection.agent;
  const until = (test) =>
    new Promise((resolve) => {
      const found = seen.updates.find(test);
      if (found) resolve(found);
      else waiters.push({ test, resolve });
    });
  const initialize = () =>
    agent.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {
        fs: { readTextFile: buffers !== null, writeTextFile: buffers !== null },
        terminal,
        ...(terminalOutput ? { _meta: { terminal_output: true } } : {}),
      },
    });
  const close = async () => {
    child.stdin.end();
    await new Promise((resolve) => child.on("exit", resolve));
  };
  return { agent, seen, until, initialize, close, child };
}

const text = (t) => [{ type: "text", text: t }];

async function run() {
  switch (scenario) {
    case "turn": {
      const c = connect();
      const init = await c.initialize();
      const session = await c.agent.request("session/new", { cwd, mcpServers });
      const prompt = await c.agent.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: text("run three commands and patch"),
      });
      await c.close();
      return { init, session, prompt, ...c.seen };
    }
    case "permissions": {
      const c = connect({ answers: ["allow_once", "reject_once"] });
      await c.initialize();
      const session = await c.agent.request("session/new", { cwd, mcpServers: [] });
      const prompt = await c.agent.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: text("touch two files"),
      });
      await c.close();
      return { prompt, ...c.seen };
    }
    case "cancel": {
      const c = connect();
      await c.initialize();
      const session = await c.agent.request("session/new", { cwd, mcpServers: [] });
      const prompt = c.agent.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: text("sleep"),
      });
      await c.until((u) => u.update.sessionUpdate === "tool_call" && u.update.status === "in_progress");
      // The command has started once it wrote its pid.
      const pidFile = join(cwd, "pid");
      while (!existsSync(pidFile) || readFileSync(pidFile, "utf8").trim() === "") {
        await new Promise((r) => setTimeout(r, 50));
      }
      await c.agent.notify("session/cancel", { sessionId: session.sessionId });
      const answer = await prompt;
      const pid = Number(readFileSync(pidFile, "utf8").trim());
      // Dead before the server stops (closing stdin would end every turn anyway).
      let deadBeforeClose = false;
      for (let i = 0; i < 100 && !deadBeforeClose; i++) {
        try {
          process.kill(pid, 0);
          await new Promise((r) => setTimeout(r, 50));
        } catch {
          deadBeforeClose = true;
        }
      }
      await c.close();
      return { prompt: answer, pid, deadBeforeClose, ...c.seen };
    }
    case "load": {
      const first = connect();
      await first.initialize();
      const session = await first.agent.request("session/new", { cwd, mcpServers: [] });
      await first.agent.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: text("the first question"),
      });
      await first.close();
      const second = connect();
      const init = await second.initialize();
      const loaded = await second.agent.request("session/load", {
        sessionId: session.sessionId,
        cwd,
        mcpServers: [],
      });
      const replayed = second.seen.updates.map((u) => ({ ...u }));
      const prompt = await second.agent.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: text("the second question"),
      });
      await second.close();
      return { init, sessionId: session.sessionId, loaded, replayed, prompt, ...second.seen };
    }
    case "two-sessions": {
      const c = connect();
      await c.initialize();
      const a = await c.agent.request("session/new", { cwd, mcpServers: [] });
      const b = await c.agent.request("session/new", { cwd, mcpServers: [] });
      const [pa, pb] = await Promise.all([
        c.agent.request("session/prompt", { sessionId: a.sessionId, prompt: text("to a") }),
        c.agent.request("session/prompt", { sessionId: b.sessionId, prompt: text("to b") }),
      ]);
      await c.close();
      return { a: a.sessionId, b: b.sessionId, pa, pb, ...c.seen };
    }
    case "fs": {
      const notes = join(cwd, "notes.txt");
      const c = connect({ buffers: { [notes]: "buffer line\n" } });
      await c.initialize();
      const session = await c.agent.request("session/new", { cwd, mcpServers: [] });
      const prompt = await c.agent.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: text("patch the notes"),
      });
      await c.close();
      return { prompt, ...c.seen };
    }
    case "terminal": {
      const c = connect({
        terminal: true,
        terminalOutput: process.env.ACP_TERMINAL_OUTPUT === "1",
      });
      await c.initialize();
      const session = await c.agent.request("session/new", { cwd, mcpServers: [] });
      const prompt = await c.agent.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: text("build and read"),
      });
      await c.close();
      return { prompt, ...c.seen };
    }
    case "modes": {
      const c = connect();
      await c.initialize();
      const session = await c.agent.request("session/new", { cwd, mcpServers: [] });
      const set = await c.agent.request("session/set_mode", {
        sessionId: session.sessionId,
        modeId: "plan",
      });
      let refused = null;
      try {
        await c.agent.request("session/set_mode", { sessionId: session.sessionId, modeId: "yolo" });
      } catch (err) {
        refused = { code: err.code, message: err.message };
      }
      await c.close();
      return { session, set, refused, ...c.seen };
    }
    default:
      throw new Error(`unknown scenario ${scenario}`);
  }
}

run().then(
  (out) => {
    process.stdout.write(JSON.stringify(out) + "\n");
    process.exit(0);
  },
  (err) => {
    process.stderr.write(`client failed: ${err?.stack ?? JSON.stringify(err)}\n`);
    process.exit(1);
  },
);
