#!/usr/bin/env python3
"""MCP and hooks, Troupe vs Codex: MCP server start → tools listed, per-call overhead of an
MCP tool, five servers starting in parallel, and the cost of one no-op hook per tool call.

Usage: bench/mcp_bench.py --troupe BIN [--codex BIN] --everything BIN [--reps 5]
                          [--calls 20] --raw DIR [--smoke]

How (details in bench/README.md, "MCP and hooks"):
- A mock model in this process (threaded HTTP, Responses SSE), stateless: while the request
  holds fewer than N tool outputs it answers with one tool call, then with "done". The call
  is the one the request offers: `mcp__everything__echo` (Troupe's function tool) or `echo`
  in the `mcp__everything` namespace (Codex 0.169's namespace tool); for the hook scenarios
  `shell` (Troupe) or `exec_command` (Codex) running `true`.
- Each run is `TOOL exec --skip-git-repo-check -s danger-full-access PROMPT`. Start-up cost is
  time to first request (TTFR): from spawn to the mock receiving the first `/responses`
  request (every configured server started and its tools listed, since they are in it).
  Per-call cost is (wall of N calls − wall of 0 calls) / N with the same configuration.
- `five-delayed`: five stdio servers (a small Python MCP server written to DIR) whose
  `initialize` answers after 0.2, 0.4, 0.6, 0.8 and 1.0 s: parallel start costs about the
  slowest (1.0 s), sequential the sum (3.0 s).
- Codex runs with model `mock-model` (not in its catalog: fallback metadata, MCP tools offered
  directly in a namespace instead of behind `tool_search`), approval `never`, and
  `--dangerously-bypass-hook-trust` for the hook scenario.
One discarded warm-up per tool and scenario, then REPS runs alternating the tools. A run
counts only if it exits 0, prints "done" last and made N + 1 requests.
Prints a Markdown section on stdout; raw files go to DIR/mcp/.
"""
import argparse, http.server, json, os, shutil, statistics, subprocess, sys, threading, time

PROMPT = "Use the tools, then say done."
ANSWER = "done"

DELAYED_SERVER = r'''
import json, sys, time
delay = float(sys.argv[1])
def send(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    r = json.loads(line)
    if "id" not in r:
        continue
    m = r.get("method")
    if m == "initialize":
        time.sleep(delay)
        send({"jsonrpc": "2.0", "id": r["id"], "result": {"protocolVersion": r["params"]["protocolVersion"],
              "capabilities": {"tools": {}}, "serverInfo": {"name": "delayed", "version": "1"}}})
    elif m == "tools/list":
        send({"jsonrpc": "2.0", "id": r["id"], "result": {"tools": [{"name": "ping", "description": "pong",
              "inputSchema": {"type": "object", "properties": {}}}]}})
    else:
        send({"jsonrpc": "2.0", "id": r["id"], "result": {"content": [{"type": "text", "text": "pong"}]}})
'''


class Mock:
    """The mock model: `calls` tool calls per conversation; records request arrival times."""

    def __init__(self):
        self.calls = 0
        self.arrivals = []
        self.lock = threading.Lock()
        mock = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                arrived = time.time()
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                with mock.lock:
                    mock.arrivals.append(arrived)
                done = sum(1 for i in body.get("input", []) if i.get("type") == "function_call_output")
                item = mock.item(body, done)
                events = [
                    {"type": "response.created", "response": {"id": "r"}},
                    {"type": "response.output_item.done", "output_index": 0, "item": item},
                    {"type": "response.completed", "response": {"id": "r", "usage": {
                        "input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                        "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens_details": {"reasoning_tokens": 0}}}},
                ]
                data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                data = b'{"object":"list","data":[]}'
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def item(self, body, done):
        if done >= self.calls:
            return {"type": "message", "role": "assistant", "id": "m",
                    "content": [{"type": "output_text", "text": ANSWER, "annotations": []}]}
        call = {"type": "function_call", "id": f"fc{done}", "call_id": f"call_{done}"}
        names = {t.get("name") for t in body.get("tools", [])}
        if "mcp__everything__echo" in names:
            call.update(name="mcp__everything__echo", arguments=json.dumps({"message": f"m{done}"}))
        elif "mcp__everything" in names:
            call.update(name="echo", namespace="mcp__everything", arguments=json.dumps({"message": f"m{done}"}))
        elif "shell" in names:
            call.update(name="shell", arguments=json.dumps({"command": ["sh", "-c", "true"]}))
        else:
            call.update(name="exec_command", arguments=json.dumps({"cmd": "true"}))
        return call


def troupe_config(url, extra):
    return (f'model = "mock-model"\nmodel_provider = "mock"\n\n[model_providers.mock]\nname = "Mock"\n'
            f'base_url = "{url}"\nenv_key = "MOCK_MODEL_API_KEY"\nrequest_max_retries = 0\n'
            f'stream_max_retries = 0\n{extra}')


def codex_config(url, extra):
    return (f'model = "mock-model"\nmodel_provider = "mock"\napproval_policy = "never"\n'
            f'check_for_update_on_startup = false\nweb_search = "disabled"\n\n[analytics]\nenabled = false\n\n'
            f'[feedback]\nenabled = false\n\n[features]\nplugins = false\n\n[model_providers.mock]\n'
            f'name = "Mock model"\nbase_url = "{url}"\nwire_api = "responses"\nenv_key = "MOCK_MODEL_API_KEY"\n'
            f'request_max_retries = 0\nstream_max_retries = 0\nstream_idle_timeout_ms = 60000\n{extra}')


def server_toml(sid, command, args):
    return (f'\n[mcp_servers.{sid}]\ncommand = {json.dumps(command)}\nargs = {json.dumps(args)}\n'
            f'startup_timeout_sec = 60\ndefault_tools_approval_mode = "approve"\n')


HOOK_TOML = '\n[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = "command"\ncommand = "true"\n'


def scenarios(args, raw):
    delayed = os.path.join(raw, "delayed_server.py")
    with open(delayed, "w") as f:
        f.write(DELAYED_SERVER)
    everything = server_toml("everything", args.everything, [])
    delays = [0.04, 0.08, 0.12, 0.16, 0.2] if args.smoke else [0.2, 0.4, 0.6, 0.8, 1.0]
    five = "".join(server_toml(f"delayed{i}", "python3", [delayed, str(d)]) for i, d in enumerate(delays))
    n = args.calls
    return delays, [
        ("none", "", 0),
        ("everything", everything, 0),
        (f"everything-{n}", everything, n),
        ("five-delayed", five, 0),
        (f"shell-{n}", "", n),
        (f"shell-{n}-hook", HOOK_TOML, n),
    ]


def run_one(tool, binary, mock, raw, name, extra, calls, rep):
    home = os.path.join(raw, f"{tool}-{name}-{rep}")
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(os.path.join(home, "home"))
    config = troupe_config(mock.url, extra) if tool == "troupe" else codex_config(mock.url, extra)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(config)
    env = dict(os.environ, HOME=os.path.join(home, "home"), MOCK_MODEL_API_KEY="x")
    env["TROUPE_HOME" if tool == "troupe" else "CODEX_HOME"] = home
    cmd = [binary, "exec", "--skip-git-repo-check", "-s", "danger-full-access"]
    if tool == "codex" and "hooks" in extra:
        cmd.append("--dangerously-bypass-hook-trust")
    cmd.append(PROMPT)
    mock.calls = calls
    with mock.lock:
        mock.arrivals = []
    t0 = time.time()
    proc = subprocess.run(cmd, env=env, cwd=home, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=300)
    wall = time.time() - t0
    with mock.lock:
        arrivals = list(mock.arrivals)
    with open(os.path.join(home, "stderr.txt"), "w") as f:
        f.write(proc.stderr)
    last = [l for l in proc.stdout.splitlines() if l.strip()][-1:] or [""]
    ok = proc.returncode == 0 and last[0].strip() == ANSWER and len(arrivals) == calls + 1
    if not ok:
        print(f"mcp_bench: FAILED {tool} {name} rep {rep}: rc={proc.returncode} requests={len(arrivals)} "
              f"last={last[0][:60]!r}; see {home}", file=sys.stderr)
    ttfr = (arrivals[0] - t0) if arrivals else None
    return ok, wall, ttfr


def med(values):
    return statistics.median(values) if values else None


def fmt(value, scale=1000, digits=0):
    return "—" if value is None else f"{value * scale:.{digits}f}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--troupe", required=True)
    p.add_argument("--codex")
    p.add_argument("--everything", required=True)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--raw", required=True)
    p.add_argument("--smoke", action="store_true")
    args = p.parse_args()
    raw = os.path.join(args.raw, "mcp")
    os.makedirs(raw, exist_ok=True)
    tools = [("troupe", args.troupe)] + ([("codex", args.codex)] if args.codex else [])
    delays, cases = scenarios(args, raw)
    mock = Mock()
    results = {}  # (tool, scenario) -> (walls, ttfrs)
    failed = 0
    for name, extra, calls in cases:
        for rep in range(args.reps + 1):
            order = tools if rep % 2 else list(reversed(tools))
            for tool, binary in order:
                ok, wall, ttfr = run_one(tool, binary, mock, raw, name, extra, calls, rep)
                if not ok:
                    failed += tool == "troupe"
                    continue
                if rep > 0:  # rep 0 is the warm-up
                    walls, ttfrs = results.setdefault((tool, name), ([], []))
                    walls.append(wall)
                    ttfrs.append(ttfr)
    n = args.calls

    def stat(tool, name, which):
        values = results.get((tool, name), ([], []))[which]
        return med(values)

    def delta(tool, a, b, which, per=1):
        x, y = stat(tool, a, which), stat(tool, b, which)
        return None if x is None or y is None else (x - y) / per

    rows = [
        ("time to first request, no MCP server (ms)", lambda t: stat(t, "none", 1)),
        ("MCP server start → tools listed: TTFR(server-everything) − TTFR(none) (ms)",
         lambda t: delta(t, "everything", "none", 1)),
        (f"per MCP call: (wall(everything-{n}) − wall(everything)) / {n} (ms)",
         lambda t: delta(t, f"everything-{n}", "everything", 0, n)),
        (f"five servers, initialize after {', '.join(f'{d:g}' for d in delays)} s: "
         f"TTFR(five-delayed) − TTFR(none) (ms; slowest {max(delays) * 1000:.0f}, sum {sum(delays) * 1000:.0f})",
         lambda t: delta(t, "five-delayed", "none", 1)),
        (f"per shell call, no hook: (wall(shell-{n}) − wall(none)) / {n} (ms)",
         lambda t: delta(t, f"shell-{n}", "none", 0, n)),
        (f"one no-op PreToolUse hook, per call: (wall(shell-{n}-hook) − wall(shell-{n})) / {n} (ms)",
         lambda t: delta(t, f"shell-{n}-hook", f"shell-{n}", 0, n)),
    ]
    codex = args.codex is not None
    print()
    print(f"## MCP and hooks, median of {args.reps} (after a warm-up)")
    print()
    print("Mock model in the harness (Python, loopback), `server-everything` from tests/mcp_servers;")
    print("see bench/README.md, \"MCP and hooks\". TTFR = spawn → first model request.")
    print()
    print("| measure | Troupe | Codex | Troupe/Codex |")
    print("|---|---|---|---|")
    for label, f in rows:
        t = f("troupe")
        c = f("codex") if codex else None
        ratio = "—" if t is None or c is None or c <= 0 else f"{t / c:.2f}"
        print(f"| {label} | {fmt(t, digits=1)} | {fmt(c, digits=1) if codex else 'skipped'} | {ratio} |")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
