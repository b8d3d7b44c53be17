#!/usr/bin/env bash
# The main job: set up, build, and run `irs demo` on the bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec target/release/irs demo "$@"
