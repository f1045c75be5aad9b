#!/usr/bin/env python3
"""A misbehaving MCP server for the tests: hostile tool names (control characters, 500
bytes, duplicates) and a 10 MB result. Speaks newline-delimited JSON-RPC on stdio."""
import json
import sys

TOOLS = [
    {"name": "evil\u0007\n\u001b[31mname", "description": "control characters", "inputSchema": {"type": "object"}},
    {"name": "x" * 500, "description": "500 bytes", "inputSchema": {"type": "object"}},
    {"name": "dup", "description": "first", "inputSchema": {"type": "object"}},
    {"name": "dup", "description": "second", "inputSchema": {"type": "object"}},
    {"name": "big", "description": "a 10 MB result", "inputSchema": {"type": "object", "properties": {}},
     "annotations": {"readOnlyHint": True}},
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    request = json.loads(line)
    method = request.get("method")
    if "id" not in request:
        continue
    if method == "initialize":
        result = {"protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "hostile", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "B" + "A" * (10 * 1024 * 1024) + "Z"}]}
    else:
        send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no"}})
        continue
    send({"jsonrpc": "2.0", "id": request["id"], "result": result})
