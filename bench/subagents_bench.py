#!/usr/bin/env python3
"""Sub-agents: a root spawns N children in one response, each child runs one command
(`sleep 1`), the root waits for all of them. Troupe and Codex CLI 0.169
(`[features] multi_agent_v2 = true`) against the same mock (`mock-model --agents N`, which
plays the root and every child from each request's body; see tests/mock_model/src/
multi_agent.rs).

Usage: bench/subagents_bench.py --troupe BIN --mock BIN [--codex BIN] [--agents 8,32]
                                [--command 'sleep 1'] [--reps 3] [--raw DIR] [--timeout 180]

Per run: wall time (spawn of the CLI to its exit), peak RSS (GNU time %M: the largest single
process; both CLIs run every sub-agent inside their one process, the children's `sleep` is
~1 MB), and the spawn-to-first-request latency of the children: from the last byte of the
root's response that carried the spawn_agent calls to the arrival of each child's first
request (both stamped by the mock). "One agent" is the same CLI running the one command
itself, no sub-agent: the ideal of a perfectly parallel N-agent run. Prints a Markdown
section; exits 1 if a Troupe run failed.
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time

TROUPE_CONFIG = """model_provider = "mock"

[model_providers.mock]
base_url = "{url}"
env_key = "MOCK_MODEL_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[agents]
max_threads = {agents}
max_concurrent_commands = {agents}
"""

CODEX_CONFIG = """model = "gpt-5.5"
model_provider = "mock"
approval_policy = "never"
check_for_update_on_startup = false
web_search = "disabled"

[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false
multi_agent_v2 = true

[agents]
max_threads = {agents}

[model_providers.mock]
name = "Mock model"
base_url = "{url}"
wire_api = "responses"
env_key = "MOCK_MODEL_API_KEY"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000
"""


def start_mock(mock, log, args):
    proc = subprocess.Popen([mock, "--port", "0", "--answer", "done", "--log", log,
                             "--workers", "4", *args], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith("listening "):
        proc.kill()
        sys.exit(f"mock-model did not start: {line!r}")
    return proc, line.split()[1]


def log_lines(path, skip):
    """The mock's log lines of model requests after the first `skip` lines, as dicts."""
    with open(path) as f:
        lines = f.read().splitlines()[skip:]
    rows = []
    for line in lines:
        words = line.split()
        if len(words) < 4 or words[2] != "POST" or not words[3].rstrip("/").endswith("/responses"):
            continue  # e.g. a GET of the model list
        rows.append(dict(kv.split("=", 1) for kv in words if "=" in kv))
    return rows


def latencies(rows, agents):
    """(ms per child from the spawn response's last byte to its first request), checked:
    the run's first request is the root's, children's first requests are the other ones
    with no tool output yet, and each child sent exactly one request with one output."""
    if not rows or rows[0].get("last_byte_ns", "-") == "-":
        return None
    spawned = int(rows[0]["last_byte_ns"])
    firsts = [int(r["recv_ns"]) for r in rows[1:] if r.get("tool_outputs") == "0"]
    seconds = [r for r in rows if r.get("tool_outputs") == "1"]
    if len(firsts) != agents or len(seconds) != agents:
        return None
    return sorted((t - spawned) / 1e6 for t in firsts)


def run(cmd, env, cwd, timeout, base):
    timed = ["/usr/bin/time", "-o", base + ".time", "-f", "%e %M", "timeout", "-k", "5",
             str(timeout), *cmd]
    start = time.monotonic()
    with open(base + ".out", "w") as out, open(base + ".err", "w") as err:
        rc = subprocess.call(timed, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                             stderr=err)
    wall = time.monotonic() - start
    try:
        rss_kb = int(open(base + ".time").read().split()[-1])
    except (OSError, ValueError, IndexError):
        rss_kb = 0
    final = [l.strip() for l in open(base + ".out").read().splitlines() if l.strip()]
    return rc, wall, rss_kb, (final[-1] if final else "")


def command_of(tool, bins):
    prompt = "Split the work between sub-agents, then say done."
    if tool == "troupe":
        return [bins["troupe"], "exec", "--skip-git-repo-check", "-s", "danger-full-access", prompt]
    return [bins["codex"], "exec", "--skip-git-repo-check", "-s", "danger-full-access", prompt]


def scenario(bins, tools, agents, opts, raw):
    """Runs one scenario (agents = 0: one agent runs the command itself) and returns
    {tool: [run dicts]}."""
    name = f"agents-{agents}" if agents else "one-agent"
    log = os.path.join(raw, f"mock-{name}.log")
    open(log, "w").close()
    mock_args = ["--command", opts.command]
    mock_args += ["--agents", str(agents)] if agents else ["--tool-calls", "1"]
    mock, url = start_mock(bins["mock"], log, mock_args)
    homes = {}
    for tool in tools:
        home = os.path.join(raw, f"{tool}-home-{name}")
        os.makedirs(home, exist_ok=True)
        text = (TROUPE_CONFIG if tool == "troupe" else CODEX_CONFIG).format(
            url=url, agents=max(agents, 8))
        with open(os.path.join(home, "config.toml"), "w") as f:
            f.write(text)
        homes[tool] = home
    work = tempfile.mkdtemp(prefix="troupe-bench-agents.")
    results = {tool: [] for tool in tools}
    try:
        for rep in range(opts.reps + 1):  # rep 0: discarded warm-up
            order = tools if rep % 2 else list(reversed(tools))
            for tool in order:
                env = dict(os.environ, HOME=os.path.join(raw, "home"), MOCK_MODEL_API_KEY="x")
                env["TROUPE_HOME" if tool == "troupe" else "CODEX_HOME"] = homes[tool]
                before = sum(1 for _ in open(log))
                base = os.path.join(raw, "logs", f"{name}-{tool}-{rep}")
                rc, wall, rss, final = run(command_of(tool, bins), env, work, opts.timeout, base)
                rows = log_lines(log, before)
                lat = latencies(rows, agents) if agents else []
                ok = rc == 0 and final == "done" and lat is not None
                if not ok:
                    print(f"[subagents] FAILED: {name} {tool} rep {rep}: rc={rc} final={final[:60]!r} "
                          f"requests={len(rows)}; see {base}.{{out,err}}", file=sys.stderr)
                if rep > 0:
                    results[tool].append(dict(ok=ok, wall=wall, rss=rss / 1024, lat=lat or [],
                                              requests=len(rows)))
    finally:
        mock.kill()
        mock.wait()
        shutil.rmtree(work, ignore_errors=True)
    return results


def med(values):
    return statistics.median(values) if values else None


def fmt(values, dec, scale=1.0):
    if not values:
        return "—"
    v = [x * scale for x in values]
    f = f"{{:.{dec}f}}"
    return f"{f.format(statistics.median(v))} ({f.format(min(v))}–{f.format(max(v))})"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--troupe", required=True)
    p.add_argument("--mock", required=True)
    p.add_argument("--codex")
    p.add_argument("--agents", default="8,32")
    p.add_argument("--command", default="sleep 1")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--raw")
    p.add_argument("--timeout", type=int, default=180)
    opts = p.parse_args()
    raw = opts.raw or tempfile.mkdtemp(prefix="troupe-bench-subagents.")
    raw = os.path.join(raw, "subagents")
    os.makedirs(os.path.join(raw, "logs"), exist_ok=True)
    os.makedirs(os.path.join(raw, "home"), exist_ok=True)
    bins = {"troupe": os.path.abspath(opts.troupe), "mock": os.path.abspath(opts.mock)}
    tools = ["troupe"]
    if opts.codex:
        bins["codex"] = opts.codex
        tools.append("codex")
    counts = [int(n) for n in opts.agents.split(",") if n.strip()]
    single = scenario(bins, tools, 0, opts, raw)
    table = {n: scenario(bins, tools, n, opts, raw) for n in counts}

    print(f"Command per agent: `{opts.command}`; {opts.reps} reps after 1 discarded warm-up, "
          "alternating tools. Troupe with `[agents] max_threads` and `max_concurrent_commands` "
          "set to N (the default command budget, 4 × cores, would run 32 commands in waves); "
          "Codex with `[features] multi_agent_v2 = true` and `[agents] max_threads` = N (its "
          "default stops spawning after 3 children with `agent thread limit reached`).")
    print()
    print("| run | tool | wall s | wall / one agent | peak RSS MiB | spawn → child's first request, ms (median child; first–last) | ok |")
    print("|---|---|---|---|---|---|---|")
    failed = 0
    for tool in tools:
        runs = [r for r in single[tool] if r["ok"]]
        failed += sum(1 for r in single[tool] if not r["ok"]) if tool == "troupe" else 0
        print(f"| one agent, one command | {tool} | {fmt([r['wall'] for r in runs], 3)} | 1 | "
              f"{fmt([r['rss'] for r in runs], 1)} | — | {len(runs)}/{len(single[tool])} |")
    for n in counts:
        for tool in tools:
            runs = [r for r in table[n][tool] if r["ok"]]
            if tool == "troupe":
                failed += sum(1 for r in table[n][tool] if not r["ok"])
            one = med([r["wall"] for r in single[tool] if r["ok"]])
            wall = med([r["wall"] for r in runs])
            ratio = f"{wall / one:.2f}" if wall and one else "—"
            lat = [statistics.median(r["lat"]) for r in runs if r["lat"]]
            first = [r["lat"][0] for r in runs if r["lat"]]
            last = [r["lat"][-1] for r in runs if r["lat"]]
            span = (f"{med(lat):.1f} ({med(first):.1f}–{med(last):.1f})" if lat else "—")
            print(f"| {n} sub-agents | {tool} | {fmt([r['wall'] for r in runs], 3)} | {ratio} | "
                  f"{fmt([r['rss'] for r in runs], 1)} | {span} | {len(runs)}/{len(table[n][tool])} |")
    if "codex" in tools:
        print()
        print("| Troupe / Codex, medians | wall | peak RSS | spawn → first request |")
        print("|---|---|---|---|")
        for n in counts:
            def m(tool, key):
                runs = [r for r in table[n][tool] if r["ok"]]
                if key == "lat":
                    return med([statistics.median(r["lat"]) for r in runs if r["lat"]])
                return med([r[key] for r in runs])
            cells = []
            for key in ("wall", "rss", "lat"):
                t, c = m("troupe", key), m("codex", key)
                cells.append(f"{t / c:.3f}" if t is not None and c else "— (Codex failed)")
            print(f"| {n} sub-agents | " + " | ".join(cells) + " |")
    print()
    print(f"Raw logs: `{raw}`")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
