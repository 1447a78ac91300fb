#!/usr/bin/env bash
# The whole test suite of capbridge: every crate's tests, then every compat suite.
# Each compat suite is a folder compat-tests/<name>/ with an executable ci.sh that
# installs what it needs (idempotent, quiet, pinned) and exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo test --workspace"
cargo test --workspace --all-targets --quiet
cargo test --workspace --doc --quiet

failed=0
for suite in compat-tests/*/ci.sh; do
  [ -e "$suite" ] || continue
  echo "== $suite"
  if ! bash "$suite"; then
    echo "FAILED: $suite"
    failed=$((failed + 1))
  fi
done
[ "$failed" -eq 0 ] || { echo "$failed compat suite(s) failed"; exit 1; }
echo "all tests passed"
