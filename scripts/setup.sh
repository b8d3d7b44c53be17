#!/usr/bin/env bash
# Install what is missing (Debian packages for LLVM 14), then build the workspace in release mode.
# Used by scripts/demo.sh and scripts/test.sh; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v clang-14 >/dev/null 2>&1 || need+=(clang-14)
[ -x /usr/lib/llvm-14/bin/llvm-config ] || need+=(llvm-14-dev)
[ -e /usr/lib/llvm-14/lib/libPolly.a ] || need+=(libpolly-14-dev)
[ -e /usr/include/zlib.h ] || need+=(zlib1g-dev)
[ -e /usr/include/zstd.h ] || need+=(libzstd-dev)
command -v gdb >/dev/null 2>&1 || need+=(gdb)            # the tests check the fast path with it
command -v valgrind >/dev/null 2>&1 || need+=(valgrind)  # the tests check that the runtime frees what it keeps
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
command -v cargo >/dev/null 2>&1 || { echo "setup: cargo is missing (install Rust with rustup)" >&2; exit 1; }
export LLVM_SYS_140_PREFIX=/usr/lib/llvm-14
cargo build --release --workspace --quiet
