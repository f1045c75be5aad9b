#!/usr/bin/env python3
"""Resume of a long rollout, Troupe vs Codex (scenario 8): time to the token-ready state
and peak RSS of `exec resume <id> "prompt"` over a rollout of ~N history items.

Usage: bench/resume_bench.py --troupe BIN --mock BIN [--codex BIN] [--items 10000]
                             [--reps 5] --raw DIR

How (details in bench/README.md, "Resume"):
1. Template: each tool runs a real `exec` against the mock (2 tool calls, each printing 200
   bytes, then "done"), so its rollout is in the tool's own current format.
2. Long rollout: the template's first call cycle (the lines from its first function call up
   to its second) is repeated with fresh call ids until the rollout holds ~N `response_item`
   lines; the thread gets a new id and goes into a fresh home (config only).
3. Runs: one discarded warm-up per tool, then REPS runs alternating the tools, each
   `/usr/bin/time -v TOOL exec ... resume ID "one more"`. Token-ready = from spawn to the
   moment the mock has received the first `/responses` request (its log's recv_ns: the whole
   history loaded and the request sent). Every run resumes the same file (restored before
   each run). A run counts only if it exits 0, prints `done`, made exactly one request, and
   that request carried at least N input items and every tool output of the rollout.
Prints a Markdown table on stdout; raw files go to DIR/resume/.
"""
import argparse, glob, json, os, re, shutil, statistics, subprocess, sys, time

from threads_bench import uuid7

PROMPT = "Run the commands, then say done."
COMMAND = "printf '%200s' '' | tr ' ' x"  # 200 bytes of output per call


def start_mock(mock_bin, log, tool_calls=2, command=COMMAND):
    """Starts mock-model (auto mode) logging to `log`: (process, base URL)."""
    proc = subprocess.Popen([mock_bin, "--port", "0", "--tool-calls", str(tool_calls), "--command", command,
                             "--log", log], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().split()
    if len(line) != 2 or line[0] != "listening":
        proc.kill()
        sys.exit("resume_bench: mock-model did not start")
    return proc, line[1]


class Tool:
    """One agent CLI: its home, config and command lines."""

    def __init__(self, name, binary, raw, url):
        self.name, self.binary = name, binary
        self.dir = os.path.join(raw, name)
        self.home_var = "TROUPE_HOME" if name == "troupe" else "CODEX_HOME"
        self.config = troupe_config(url) if name == "troupe" else codex_config(url)

    def make_home(self, sub):
        home = os.path.join(self.dir, sub)
        os.makedirs(home)
        with open(os.path.join(home, "config.toml"), "w") as f:
            f.write(self.config)
        return home

    def env(self, home):
        return dict(os.environ, HOME=os.path.join(self.dir, "user-home"), MOCK_MODEL_API_KEY="x",
                    **{self.home_var: home})

    def exec_args(self, *rest):
        return [self.binary, "exec", "--skip-git-repo-check", "-s", "danger-full-access", *rest]


def troupe_config(url):
    # A window the long history fits in: Troupe estimates the history's size itself and would
    # otherwise compact it after the first request (Codex trusts the mock's tiny token usage
    # and never does), so both tools do the same work: load, send everything, answer.
    return (f'model_provider = "mock"\nmodel_context_window = 100000000\n'
            f'model_auto_compact_token_limit = 90000000\n\n[model_providers.mock]\nbase_url = "{url}"\n'
            f'env_key = "MOCK_MODEL_API_KEY"\nrequest_max_retries = 0\nstream_max_retries = 0\n')


def codex_config(url):
    # As bench/run: offline (no update check, no web search, no analytics), a catalog model.
    return (f'model = "gpt-5.5"\nmodel_provider = "mock"\napproval_policy = "never"\n'
            f'check_for_update_on_startup = false\nweb_search = "disabled"\n\n[analytics]\nenabled = false\n\n'
            f'[feedback]\nenabled = false\n\n[features]\nplugins = false\n\n[model_providers.mock]\n'
            f'name = "Mock model"\nbase_url = "{url}"\nwire_api = "responses"\n'
            f'env_key = "MOCK_MODEL_API_KEY"\nrequest_max_retries = 0\nstream_max_retries = 0\n'
            f'stream_idle_timeout_ms = 60000\n')


def rollout_in(home):
    files = glob.glob(os.path.join(home, "sessions", "**", "rollout-*.jsonl"), recursive=True)
    if len(files) != 1:
        sys.exit(f"resume_bench: expected one rollout under {home}, found {files}")
    return files[0]


def thread_id(meta):
    payload = meta["payload"]
    return payload.get("thread_id") or payload.get("id")


def renumber(block, call_id, k):
    """Copy k of a call cycle: a fresh call id (also inside ids such as `fc_<call id>`) and
    unique item ids."""
    out = []
    for line in block:
        line = line.replace(call_id, f"bench_{k}")
        entry = json.loads(line)
        payload = entry["payload"]
        if entry["type"] == "response_item" and isinstance(payload.get("id"), str) \
                and f"bench_{k}" not in payload["id"]:
            payload["id"] += f"_{k}"
            line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
        out.append(line)
    return out


def grow(template_path, items):
    """The template's lines with its first call cycle repeated: (new id, text, stats)."""
    lines = open(template_path).read().splitlines()
    parsed = [json.loads(l) for l in lines]
    calls = [i for i, p in enumerate(parsed)
             if p["type"] == "response_item" and p["payload"].get("type") == "function_call"]
    if len(calls) < 2:
        sys.exit(f"resume_bench: template {template_path} has {len(calls)} function calls, need 2")
    first, second = calls[0], calls[1]
    call_id = parsed[first]["payload"]["call_id"]
    block = lines[first:second]
    if sum(
            1 for p in parsed[first:second] if p["payload"].get("type") == "function_call_output") != 1:
        sys.exit("resume_bench: the first call cycle does not hold exactly one call and its output")
    is_item = [p["type"] == "response_item" for p in parsed]
    fixed = sum(is_item[:first]) + sum(is_item[second:])
    per_block = sum(is_item[first:second])
    copies = max(1, (items - fixed) // per_block)
    old_id = thread_id(parsed[0])
    new_id = uuid7()
    body = [line for k in range(copies) for line in renumber(block, call_id, k)]
    text = "\n".join(lines[:first] + body + lines[second:]) + "\n"
    text = text.replace(old_id, new_id)
    stats = {"items": fixed + copies * per_block, "outputs": copies + 1, "old_id": old_id}
    return new_id, text, stats


def install(tool, template_path, items):
    new_id, text, stats = grow(template_path, items)
    home = tool.make_home("resume-home")
    rel = os.path.relpath(template_path, tool.template_home).replace(stats["old_id"], new_id)
    path = os.path.join(home, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    stats.update(path=path, text=text, kib=len(text.encode()) // 1024)
    return home, new_id, stats


def log_lines(log):
    with open(log) as f:
        return f.read().splitlines()


def field(line, key):
    m = re.search(rf"(?:^| ){key}=(\S+)", line)
    return m.group(1) if m else None


def run(tool, home, tid, rep, log, work, stats):
    base = os.path.join(tool.dir, f"run-{rep}")
    # Every run resumes the same rollout: undo what the previous run appended.
    with open(stats["path"], "w") as f:
        f.write(stats["text"])
    before = len(log_lines(log))
    start = time.time_ns()
    with open(base + ".out", "w") as out, open(base + ".err", "w") as err:
        rc = subprocess.call(["/usr/bin/time", "-v", "-o", base + ".time",
                              *tool.exec_args("resume", tid, "one more")],
                             env=tool.env(home), cwd=work, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    end = time.time_ns()
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(base + ".time").read())
    requests = [l for l in log_lines(log)[before:] if " POST " in l and "/responses " in l]
    first = min(requests, key=lambda l: int(field(l, "recv_ns"))) if requests else None
    final = open(base + ".out").read().strip().splitlines()
    row = {"tool": tool.name, "rep": rep, "rc": rc, "wall_ms": (end - start) / 1e6,
           "rss_mib": int(rss.group(1)) / 1024 if rss else None,
           "ready_ms": (int(field(first, "recv_ns")) - start) / 1e6 if first else None,
           "input_items": int(field(first, "input_items")) if first else 0,
           "tool_outputs": int(field(first, "tool_outputs")) if first else 0,
           "requests": len(requests), "final": final[-1] if final else ""}
    row["ok"] = (rc == 0 and row["final"] == "done" and row["requests"] == 1
                 and row["input_items"] >= stats["items"] and row["tool_outputs"] >= stats["outputs"])
    if not row["ok"]:
        print(f"resume_bench: FAILED {row}; see {base}.*", file=sys.stderr)
    return row


def summary(rows, key):
    vals = sorted(r[key] for r in rows if r["ok"])
    if not vals:
        return None, "all runs failed"
    med = statistics.median(vals)
    bad = sum(1 for r in rows if not r["ok"])
    return med, f"{med:.0f} ({vals[0]:.0f}–{vals[-1]:.0f})" + (f" [{bad} failed]" if bad else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--troupe", required=True)
    ap.add_argument("--mock", required=True)
    ap.add_argument("--codex")
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--raw", required=True)
    args = ap.parse_args()
    args.troupe, args.mock = os.path.abspath(args.troupe), os.path.abspath(args.mock)
    raw = os.path.abspath(os.path.join(args.raw, "resume"))
    work = os.path.join(raw, "work")
    os.makedirs(work)
    log = os.path.join(raw, "mock.log")
    mock, url = start_mock(args.mock, log)
    try:
        tools = [Tool("troupe", args.troupe, raw, url)]
        if args.codex:
            tools.append(Tool("codex", args.codex, raw, url))
        setups = {}
        for tool in tools:
            os.makedirs(os.path.join(tool.dir, "user-home"))
            tool.template_home = tool.make_home("template-home")
            rc = subprocess.call(tool.exec_args(PROMPT), env=tool.env(tool.template_home), cwd=work,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=open(os.path.join(tool.dir, "template.err"), "w"))
            if rc != 0:
                sys.exit(f"resume_bench: {tool.name} template run failed (rc {rc})")
            setups[tool.name] = install(tool, rollout_in(tool.template_home), args.items)
        rows = []
        for rep in range(args.reps + 1):
            order = tools if rep % 2 else tools[::-1]
            for tool in order:
                home, tid, stats = setups[tool.name]
                row = run(tool, home, tid, rep, log, work, stats)
                if rep > 0:
                    rows.append(row)
    finally:
        mock.kill()
        mock.wait()

    print(f"| `exec resume ID` of a ~{args.items:,}-item rollout | " + " | ".join(
        t.name.capitalize() for t in tools) + (" | Troupe/Codex |" if len(tools) > 1 else " |"))
    print("|---" * (len(tools) + (2 if len(tools) > 1 else 1)) + "|")
    for label, key in [("rollout: response items, tool outputs, size", None),
                       ("token-ready: spawn → mock has the first request, ms", "ready_ms"),
                       ("wall: whole run (answer \"done\", exit), ms", "wall_ms"),
                       ("peak RSS, MiB", "rss_mib")]:
        if key is None:
            cells = [f"{setups[t.name][2]['items']:,} items, {setups[t.name][2]['outputs']:,} outputs, "
                     f"{setups[t.name][2]['kib'] / 1024:.1f} MiB" for t in tools]
            print(f"| {label} | " + " | ".join(cells) + (" | — |" if len(tools) > 1 else " |"))
            continue
        stats = [summary([r for r in rows if r["tool"] == t.name], key) for t in tools]
        ratio = ""
        if len(tools) > 1:
            a, b = stats[0][0], stats[1][0]
            ratio = f" {a / b:.3f} |" if a and b else " — |"
        print(f"| {label} | " + " | ".join(s[1] for s in stats) + " |" + ratio)
    seen = {t.name: sorted({r["input_items"] for r in rows if r["tool"] == t.name}) for t in tools}
    print()
    print("Input items the mock received in the first request of each run: " +
          "; ".join(f"{name} {', '.join(map(str, v))}" for name, v in seen.items()) + ".")
    # Troupe is under test; a Codex failure is only reported (as in bench/run).
    if any(not r["ok"] for r in rows if r["tool"] == "troupe"):
        sys.exit(1)


if __name__ == "__main__":
    main()
