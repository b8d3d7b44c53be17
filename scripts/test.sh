#!/usr/bin/env bash
# Every test: set up, build, then the unit tests and the end-to-end tests (real clang, the real
# pass, real binaries).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export LLVM_SYS_140_PREFIX=/usr/lib/llvm-14
cargo test --release --workspace
