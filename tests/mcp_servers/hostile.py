#!/usr/bin/env python3
"""A misbehaving MCP server for the tests: hostile tool names (control characters, 500
bytes, duplicates) and a 10 MB result. Speaks newline-delimited JSON-RPC on stdio.

With `--slow LOG`, it offers only `slow`, a tool that answers after 60 s, and appends to LOG
`started <id>` when a call arrives and `cancelled <id>: <reason>` when the client sends
`notifications/cancelled` for it."""
import json
import sys
import threading
import time

SLOW_LOG = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--slow" else None

TOOLS = [
    {"name": "evil\u0007\n\u001b[31mname", "description": "control characters", "inputSchema": {"type": "object"}},
    {"name": "x" * 500, "description": "500 bytes", "inputSchema": {"type": "object"}},
    {"name": "dup", "description": "first", "inputSchema": {"type": "object"}},
    {"name": "dup", "description": "second", "inputSchema": {"type": "object"}},
    {"name": "big", "description": "a 10 MB result", "inputSchema": {"type": "object", "properties": {}},
     "annotations": {"readOnlyHint": True}},
]


LOCK = threading.Lock()


def send(message):
    with LOCK:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def log(line):
    with open(SLOW_LOG, "a") as f:
        f.write(line + "\n")


def answer_slowly(request_id):
    time.sleep(60)
    send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": "slow done"}]}})


if SLOW_LOG:
    TOOLS = [{"name": "slow", "description": "answers after a minute", "inputSchema": {"type": "object", "properties": {}},
              "annotations": {"readOnlyHint": True}}]


for line in sys.stdin:
    request = json.loads(line)
    method = request.get("method")
    if "id" not in request:
        if SLOW_LOG and method == "notifications/cancelled":
            params = request.get("params", {})
            log(f"cancelled {params.get('requestId')}: {params.get('reason')}")
        continue
    if method == "initialize":
        result = {"protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "hostile", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call" and SLOW_LOG:
        log(f"started {request['id']}")
        threading.Thread(target=answer_slowly, args=(request["id"],), daemon=True).start()
        continue
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "B" + "A" * (10 * 1024 * 1024) + "Z"}]}
    else:
        send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no"}})
        continue
    send({"jsonrpc": "2.0", "id": request["id"], "result": result})
