#!/usr/bin/env bash
# CI entry of the kernel-Binder VM run (issue 3 item 5): installs what it needs with apt
# (qemu-system-x86, busybox-static, a Debian 6.1 kernel with binder_linux.ko), builds the test
# binaries, boots them under qemu and exits non-zero on any failure. See run.sh.
set -euo pipefail
exec bash "$(dirname "$0")/run.sh" "$@"
