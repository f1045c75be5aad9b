#!/usr/bin/env python3
"""What the RSS of `troupe acp` with N sessions open is made of.

    bench/acp/rss_breakdown.py TROUPE_BIN MOCK_BIN [SESSIONS]   (PROMPT=1: run a turn first)

Starts MOCK_BIN and `TROUPE_BIN acp` in fresh temporary homes, opens SESSIONS sessions over
raw JSON-RPC lines, waits 2 s, then prints /proc/PID/smaps_rollup, the thread names, the
mappings with the most resident memory, and the largest anonymous mappings.
"""
import collections, json, os, re, shutil, subprocess, sys, tempfile, time

troupe, mock = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
sessions = int(sys.argv[3]) if len(sys.argv) > 3 else 10
home, cwd = tempfile.mkdtemp(prefix="acp-rss-home-"), tempfile.mkdtemp(prefix="acp-rss-cwd-")
model = subprocess.Popen([mock, "--port", "0", "--tool-calls", "5", "--command", "true"],
                         stdout=subprocess.PIPE, text=True)
url = model.stdout.readline().split()[1]
with open(f"{home}/config.toml", "w") as config:
    config.write(f'''model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
[model_providers.mock]
name = "Mock"
base_url = "{url}"
env_key = "MOCK_MODEL_API_KEY"
request_max_retries = 0
stream_max_retries = 0
''')
env = dict(os.environ, TROUPE_HOME=home, HOME=cwd, MOCK_MODEL_API_KEY="x")
agent = subprocess.Popen([troupe, "acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env=env, cwd=cwd, text=True)
next_id = 0


def request(method, params):
    global next_id
    next_id += 1
    agent.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method,
                                  "params": params}) + "\n")
    agent.stdin.flush()
    while True:
        message = json.loads(agent.stdout.readline())
        if message.get("id") == next_id and "method" not in message:
            return message


request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
first = request("session/new", {"cwd": cwd, "mcpServers": []})["result"]["sessionId"]
if os.environ.get("PROMPT"):
    request("session/prompt", {"sessionId": first, "prompt": [{"type": "text", "text": "go"}]})
for _ in range(sessions - 1):
    request("session/new", {"cwd": cwd, "mcpServers": []})
time.sleep(2)
pid = agent.pid
print(open(f"/proc/{pid}/smaps_rollup").read())
tasks = os.listdir(f"/proc/{pid}/task")
print("threads:", sorted(open(f"/proc/{pid}/task/{t}/comm").read().strip() for t in tasks))
by_name, anonymous, current = collections.Counter(), [], None
for line in open(f"/proc/{pid}/smaps"):
    if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
        fields = line.split(None, 5)
        start, end = (int(x, 16) for x in fields[0].split("-"))
        current = (fields[5].strip() if len(fields) > 5 else "[anon]", (end - start) // 1024)
    elif line.startswith("Rss:"):
        rss = int(line.split()[1])
        by_name[current[0]] += rss
        if current[0] == "[anon]":
            anonymous.append((rss, current[1]))
for name, kib in by_name.most_common(8):
    print(f"{kib:8d} kB  {name}")
print("largest anonymous mappings (resident kB, size kB):", sorted(anonymous, reverse=True)[:6])
agent.stdin.close()
agent.wait(timeout=20)
model.kill()
print("thread index created:", os.path.exists(f"{home}/state"))
shutil.rmtree(home, ignore_errors=True)
shutil.rmtree(cwd, ignore_errors=True)
