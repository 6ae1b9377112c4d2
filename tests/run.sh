#!/usr/bin/env bash
# The whole test suite: formatting, lints, every Rust test (the TVM
# conformance tests read ../shared/tvm and say loudly when it is absent), and
# the editor tests (VS Code grammar and package, headless Neovim).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo test (release)"
cargo test --workspace --release

if [ -x editors/run-tests.sh ] || [ -f editors/run-tests.sh ]; then
  step "editor tests"
  cargo build --release -p relay-server
  RELAY_NVIM_E2E=1 RELAY_BIN="$PWD/target/release/relay" bash editors/run-tests.sh
fi
