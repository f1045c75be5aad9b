#!/usr/bin/env python3
"""Thread persistence figures: `troupe list` over 1,000 threads and `exec resume --last` among
them (the plain resume of a 10,000-item rollout, next to Codex, is resume_bench.py).

Usage: bench/threads_bench.py [TARGET_DIR]   (default: target/release)
Needs the release `troupe` and `mock-model` binaries and GNU time (/usr/bin/time).
Prints wall time and peak RSS of each run. The rollouts are generated in Troupe's format.
"""
import json, os, re, subprocess, sys, tempfile, time, uuid

TARGET = sys.argv[1] if len(sys.argv) > 1 else "target/release"
TROUPE = os.path.abspath(os.path.join(TARGET, "troupe"))
MOCK = os.path.abspath(os.path.join(TARGET, "mock-model"))


def uuid7():
    ms = int(time.time() * 1000)
    rand = uuid.uuid4().int & ((1 << 74) - 1)
    value = (ms << 80) | (0x7 << 76) | ((rand >> 62) << 64) | (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


def line(kind, payload, ts="2026-01-01T00:00:00.000Z"):
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload}, separators=(",", ":"))


def write_rollout(home, cwd, items, title):
    tid = uuid7()
    d = os.path.join(home, "sessions", "2026", "01", "01")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"rollout-2026-01-01T00-00-00-{tid}.jsonl")
    out = [line("session_meta", {"version": 1, "thread_id": tid, "cwd": cwd, "model": "mock-model",
                                 "model_provider": "mock", "cli_version": "0.1.0",
                                 "created_at": "2026-01-01T00:00:00.000Z"})]
    out.append(line("event", {"type": "turn_started", "turn_id": 1}))
    out.append(line("response_item", {"type": "message", "role": "user",
                                      "content": [{"type": "input_text", "text": title}]}))
    n = 1
    i = 0
    while n < items:
        cid = f"call_{i}"
        out.append(line("response_item", {"type": "function_call", "call_id": cid, "name": "shell",
                                          "arguments": json.dumps({"command": ["sh", "-c", f"echo {i}"]})}))
        out.append(line("response_item", {"type": "function_call_output", "call_id": cid,
                                          "output": json.dumps({"output": "x" * 200, "metadata": {"exit_code": 0}})}))
        n += 2
        i += 1
    out.append(line("event", {"type": "turn_complete", "turn_id": 1, "last_agent_message": None,
                              "usage": {"input_tokens": 1, "cached_input_tokens": 0, "output_tokens": 1,
                                        "reasoning_output_tokens": 0, "total_tokens": 2}}))
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return tid, path


def timed(args, env, cwd):
    start = time.time()
    proc = subprocess.run(["/usr/bin/time", "-v"] + args, env=env, cwd=cwd,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.time() - start
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    if proc.returncode != 0:
        sys.exit(f"{args} failed: {proc.stderr[-2000:]}")
    return wall, int(rss.group(1)) // 1024 if rss else -1, proc.stdout


def main():
    mock = subprocess.Popen([MOCK, "--tool-calls", "0"], stdout=subprocess.PIPE, text=True)
    url = mock.stdout.readline().split()[1]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            home = os.path.join(tmp, "home")
            work = os.path.join(tmp, "work")
            os.makedirs(work)
            os.makedirs(home)
            with open(os.path.join(home, "config.toml"), "w") as f:
                f.write(f'model = "mock-model"\nmodel_provider = "mock"\n[model_providers.mock]\n'
                        f'name = "Mock"\nbase_url = "{url}"\nenv_key = "BENCH_KEY"\n')
            env = dict(os.environ, TROUPE_HOME=home, BENCH_KEY="x")
            write_rollout(home, work, 10_000, "big thread")
            for k in range(999):
                write_rollout(home, work, 20, f"thread {k}")
            wall, rss, out = timed([TROUPE, "list"], env, work)
            print(f"list 1,000 threads, index built from files: {wall * 1000:.0f} ms, peak RSS {rss} MiB, {len(out.splitlines())} lines")
            for run in range(3):
                wall, rss, out = timed([TROUPE, "list"], env, work)
                print(f"list 1,000 threads, warm index, run {run + 1}: {wall * 1000:.0f} ms, peak RSS {rss} MiB")
            wall, rss, out = timed([TROUPE, "list", "--json"], env, work)
            print(f"list --json 1,000 threads, warm index: {wall * 1000:.0f} ms, peak RSS {rss} MiB")
            for run in range(3):
                wall, rss, _ = timed([TROUPE, "exec", "--skip-git-repo-check", "-s", "danger-full-access",
                                      "resume", "--last", "one more"], env, work)
                print(f"exec resume --last among 1,000 threads (the 10,000-item one), run {run + 1}: "
                      f"{wall * 1000:.0f} ms, peak RSS {rss} MiB")
    finally:
        mock.kill()
        mock.wait()


if __name__ == "__main__":
    main()
