#!/usr/bin/env bash
# CI entry of the ACP client scenarios (issue 8 "Real clients"): installs the pinned
# @agentclientprotocol/sdk (npm ci into this folder's git-ignored node_modules, only when the
# lock file changed), builds capbridge and the two sample providers, then drives
# `capbridge serve --stdio --model fake` through every scenario of run.mjs. Prints one
# PASS/FAIL line per scenario and exits non-zero on any failure.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

command -v node >/dev/null || { echo "acp-client: node is required" >&2; exit 1; }

stamp="$here/node_modules/.capbridge-lock.sha256"
want="$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$want" > "$stamp"
fi

(cd "$root" && cargo build -q -p capbridge -p notes-plugin -p aci-provider)

exec node "$here/run.mjs" --bin "$root/target/debug" "$@"
