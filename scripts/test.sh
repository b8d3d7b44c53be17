#!/usr/bin/env bash
# Every test: set up, build, then the unit tests and the end-to-end tests (real clang, the real
# pass, real binaries).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export LLVM_SYS_140_PREFIX=/usr/lib/llvm-14
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo test --release --workspace --no-fail-fast 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# One closing line with the totals over every test binary.
awk '/^test result:/ { p += $4; f += $6 } END { printf "%d passed, %d failed\n", p, f }' "$log"
exit "$status"
