#!/usr/bin/env bash
# Wall time of `troupe exec` (mock model, one answer, no tool call) without and with the
# server-everything MCP server configured: the difference is start → tools listed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$ROOT/target/debug/troupe
EV=$ROOT/tests/mcp_servers/node_modules/.bin/mcp-server-everything
$ROOT/target/debug/mock-model --port 18765 --tool-calls 0 >/dev/null 2>&1 &
MOCK=$!
trap 'kill $MOCK' EXIT
sleep 0.5
for variant in none everything; do
  H=$(mktemp -d)
  cat > $H/config.toml <<CFG
model = "m"
model_provider = "mock"
[model_providers.mock]
name = "Mock"
base_url = "http://127.0.0.1:18765/v1"
env_key = "K"
CFG
  if [ $variant = everything ]; then printf '[mcp_servers.everything]\ncommand = "%s"\n' "$EV" >> $H/config.toml; fi
  for i in 1 2 3; do
    s=$(date +%s%N)
    TROUPE_HOME=$H K=k $T exec --skip-git-repo-check "hi" >/dev/null 2>&1
    e=$(date +%s%N)
    echo "$variant run $i: $(( (e - s) / 1000000 )) ms"
  done
  rm -rf $H
done
