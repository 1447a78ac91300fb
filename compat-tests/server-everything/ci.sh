#!/usr/bin/env bash
# Real-peer suite for per-session MCP servers (SPEC SMS-*, issue 6): installs the pinned
# @modelcontextprotocol/server-everything (package-lock.json) into ./node_modules, then runs
# mcp-adapter's sms_server_everything test, which starts it in Streamable HTTP mode on a free
# 127.0.0.1 port. Idempotent and quiet; exits non-zero on any failure, including a server
# that cannot be installed or started (the test fails, it never skips, when run from here).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

command -v node >/dev/null 2>&1 || { echo "server-everything: node is not installed" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "server-everything: npm is not installed" >&2; exit 1; }

cd "$here"
pinned="$(node -p 'require("./package.json").dependencies["@modelcontextprotocol/server-everything"]')"
installed="$(node -p 'try { require("./node_modules/@modelcontextprotocol/server-everything/package.json").version } catch (e) { "" }')"
if [ "$installed" != "$pinned" ]; then
  if ! npm ci --no-audit --no-fund --loglevel=error >/tmp/server-everything-npm.log 2>&1; then
    echo "server-everything: npm ci failed (see /tmp/server-everything-npm.log)" >&2
    exit 1
  fi
fi
entry="$here/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
[ -f "$entry" ] || { echo "server-everything: $entry is missing after install" >&2; exit 1; }

cd "$root"
SERVER_EVERYTHING_ENTRY="$entry" cargo test -p mcp-adapter --test sms_server_everything --quiet \
  -- --include-ignored
