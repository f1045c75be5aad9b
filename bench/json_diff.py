#!/usr/bin/env python3
"""Side by side: the `exec --json` event streams of Codex CLI 0.169 and Troupe for the same
3-call scenario (a command, a patch that creates a file, a command reading it, then a final
answer), each against its own scripted mock model on loopback, diffed by event type and field
names (ids, times and values aside).

    bench/json_diff.py [--troupe PATH] [--codex PATH] [--keep DIR]

TROUPE_BIN / CODEX_BIN are honoured like bench/run. Prints both normalized streams and a
table of differences; exits 0 (the remaining differences are documented in
docs/codex-parity.md, not failures).
"""

import argparse
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CODEX = "/work/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"

PATCH = "*** Begin Patch\n*** Add File: notes.txt\n+hello from the patch\n*** End Patch\n"


def script():
    """The model's answers, one per request (Responses output items)."""
    return [
        {"type": "function_call", "call_id": "call_1", "name": "exec_command",
         "arguments": json.dumps({"cmd": "echo one"})},
        {"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch", "input": PATCH},
        {"type": "function_call", "call_id": "call_3", "name": "exec_command",
         "arguments": json.dumps({"cmd": "cat notes.txt"})},
        {"type": "message", "role": "assistant", "id": "msg_4",
         "content": [{"type": "output_text", "text": "done"}]},
    ]


def sse(event):
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"


def start_mock():
    """A Responses mock on a free loopback port; returns (server, port, requests)."""
    items = script()
    requests = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(404)
            self.end_headers()

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            requests.append(json.loads(body or b"null"))
            i = len(requests) - 1
            item = items[i] if i < len(items) else items[-1]
            rid = f"resp_{i}"
            out = sse({"type": "response.created", "response": {"id": rid}})
            out += sse({"type": "response.output_item.done", "output_index": 0, "item": item})
            out += sse({"type": "response.completed", "response": {"id": rid, "usage": {
                "input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0}}}})
            data = out.encode()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1], requests


def run_codex(codex, scratch):
    server, port, _ = start_mock()
    home = os.path.join(scratch, "codex-home")
    work = os.path.join(scratch, "codex-work")
    os.makedirs(home)
    os.makedirs(work)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(f"""model = "gpt-5.5"
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
[model_providers.mock]
name = "Mock model"
base_url = "http://127.0.0.1:{port}/v1"
wire_api = "responses"
env_key = "MOCK_MODEL_API_KEY"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000
""")
    env = dict(os.environ, CODEX_HOME=home, MOCK_MODEL_API_KEY="x", HOME=scratch,
               RUST_BACKTRACE="0")
    out = subprocess.run(
        [codex, "exec", "--json", "--skip-git-repo-check", "-s", "danger-full-access", "go"],
        cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    server.shutdown()
    return out


def run_troupe(troupe, scratch):
    server, port, _ = start_mock()
    home = os.path.join(scratch, "troupe-home")
    work = os.path.join(scratch, "troupe-work")
    os.makedirs(home)
    os.makedirs(work)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(f"""model = "gpt-5.5"
model_provider = "mock"
shell_tool_type = "exec_command"
[model_providers.mock]
name = "Mock model"
base_url = "http://127.0.0.1:{port}/v1"
env_key = "MOCK_MODEL_API_KEY"
request_max_retries = 0
stream_max_retries = 0
""")
    env = dict(os.environ, TROUPE_HOME=home, MOCK_MODEL_API_KEY="x")
    out = subprocess.run(
        [troupe, "exec", "--json", "--skip-git-repo-check", "-s", "danger-full-access", "go"],
        cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    server.shutdown()
    return out


def shape(value, prefix=""):
    """The field paths of a JSON value (objects by key, arrays by their elements)."""
    paths = []
    if isinstance(value, dict):
        for key in sorted(value):
            path = f"{prefix}.{key}" if prefix else key
            paths.append(path)
            paths.extend(shape(value[key], path))
    elif isinstance(value, list):
        for element in value:
            for path in shape(element, prefix + "[]"):
                if path not in paths:
                    paths.append(path)
    return paths


def label(event):
    kind = event.get("type", "?")
    item = event.get("item")
    if isinstance(item, dict):
        kind += f" {item.get('type', '?')}"
        if item.get("type") == "command_execution":
            kind += f" ({item.get('status', '?')})"
    return kind


IGNORED_VALUES = {"id", "thread_id"}


def leaves(value, prefix=""):
    """Leaf values by field path (ids aside), for the value comparison."""
    found = {}
    if isinstance(value, dict):
        for key, inner in value.items():
            if key in IGNORED_VALUES:
                continue
            found.update(leaves(inner, f"{prefix}.{key}" if prefix else key))
    elif isinstance(value, list):
        for n, inner in enumerate(value):
            found.update(leaves(inner, f"{prefix}[{n}]"))
    else:
        found[prefix] = value
    return found


def values(stdout, work):
    """Per event, its leaf values with the work directory written as <WORK>."""
    out = []
    for line in stdout.decode(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        out.append({k: (v.replace(work, "<WORK>") if isinstance(v, str) else v)
                    for k, v in leaves(event).items()})
    return out


def normalized(stdout):
    events = []
    for line in stdout.decode(errors="replace").splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            events.append(("<not JSON>", [line[:80]]))
            continue
        events.append((label(event), shape(event)))
    return events


def diff(codex_events, troupe_events):
    """Aligns the two streams by event label (in order) and lists what differs."""
    import difflib
    rows = []
    a = [e[0] for e in codex_events]
    b = [e[0] for e in troupe_events]
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            for (name, fa), (_, fb) in zip(codex_events[i1:i2], troupe_events[j1:j2]):
                only_codex = [p for p in fa if p not in fb]
                only_troupe = [p for p in fb if p not in fa]
                if only_codex or only_troupe:
                    rows.append((name, "fields differ",
                                 "only Codex: " + ", ".join(only_codex) if only_codex else "",
                                 "only Troupe: " + ", ".join(only_troupe) if only_troupe else ""))
        else:
            for name, _ in codex_events[i1:i2]:
                rows.append((name, "only in Codex", "", ""))
            for name, _ in troupe_events[j1:j2]:
                rows.append((name, "only in Troupe", "", ""))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--troupe", default=os.environ.get("TROUPE_BIN",
                                                           os.path.join(ROOT, "target/debug/troupe")))
    parser.add_argument("--codex", default=os.environ.get("CODEX_BIN", DEFAULT_CODEX))
    parser.add_argument("--keep", help="keep the homes, work dirs and raw streams here")
    args = parser.parse_args()
    # Codex skips its helper binaries under /tmp: keep its home elsewhere.
    scratch = args.keep or tempfile.mkdtemp(prefix="json-diff-", dir=ROOT)
    os.makedirs(scratch, exist_ok=True)
    try:
        codex = run_codex(args.codex, scratch)
        troupe = run_troupe(args.troupe, scratch)
        for name, out in (("codex", codex), ("troupe", troupe)):
            with open(os.path.join(scratch, f"{name}.jsonl"), "wb") as f:
                f.write(out.stdout)
            if out.returncode != 0:
                print(f"{name} exited {out.returncode}:\n{out.stderr.decode(errors='replace')[-2000:]}",
                      file=sys.stderr)
        codex_events = normalized(codex.stdout)
        troupe_events = normalized(troupe.stdout)
        for name, events in (("Codex 0.169", codex_events), ("Troupe", troupe_events)):
            print(f"## {name}: {len(events)} events")
            for kind, paths in events:
                print(f"- {kind}: {', '.join(paths)}")
            print()
        rows = diff(codex_events, troupe_events)
        print("## Differences (event type and field names; ids, times and values aside)")
        if not rows:
            print("none")
        for name, what, a, b in rows:
            print(f"- {name}: {what}" + "".join(f"; {x}" for x in (a, b) if x))
        print()
        print("## Values that differ (same position in both streams; ids aside)")
        codex_values = values(codex.stdout, os.path.join(scratch, "codex-work"))
        troupe_values = values(troupe.stdout, os.path.join(scratch, "troupe-work"))
        differing = 0
        for n, (a, b) in enumerate(zip(codex_values, troupe_values)):
            for key in sorted(set(a) | set(b)):
                if a.get(key) != b.get(key):
                    differing += 1
                    print(f"- event {n} `{key}`: Codex {json.dumps(a.get(key))}, "
                          f"Troupe {json.dumps(b.get(key))}")
        if not differing:
            print("none")
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
