#!/usr/bin/env bash
# The whole test suite: formatting, lints, rustdoc without warnings, every
# Rust test (doctests included; the TVM conformance tests read ../shared/tvm
# and say loudly when it is absent), and the editor tests (VS Code grammar,
# package and a real VS Code, headless Neovim against the real server), and
# the Python frontend's tests (passes/python/run_tests.sh: builds relay_tools
# into a virtual environment, runs pytest and the relay.toml Python-pass
# end-to-end tests).
# Works with CARGO_TARGET_DIR set: the binary is found through `cargo metadata`.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

# Where cargo puts its output (honours CARGO_TARGET_DIR and .cargo/config).
target_dir() {
  cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
}

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

step "cargo test (release)"
cargo test --workspace --release

step "Python frontend (relay_tools): pytest and Python-pass end-to-end tests"
bash passes/python/run_tests.sh

if [ -x editors/run-tests.sh ] || [ -f editors/run-tests.sh ]; then
  step "editor tests"
  cargo build --release -p relay-server
  RELAY_NVIM_E2E=1 RELAY_BIN="$(target_dir)/release/relay" bash editors/run-tests.sh
fi
