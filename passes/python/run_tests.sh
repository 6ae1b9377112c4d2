#!/usr/bin/env bash
# The tests of relay_tools, the Python frontend: makes a virtual environment
# (in the cargo target directory, or $RELAY_TOOLS_VENV), installs maturin,
# pytest and numpy into it, builds and installs the package with
# `pip install passes/python`, runs its pytest suite, then the `relay`
# binary's end-to-end tests of relay.toml Python passes with that Python.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

target_dir() {
  cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
}

venv="${RELAY_TOOLS_VENV:-$(target_dir)/relay-tools-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
python="$venv/bin/python"
export PATH="$venv/bin:$PATH"  # the build backend runs `maturin` from PATH
"$python" -m pip install --quiet --disable-pip-version-check "maturin>=1.4,<2" pytest numpy
# No build isolation: the wheel is built by the maturin just installed, with
# the workspace's cargo target directory (no second download, no rebuild).
"$python" -m pip install --quiet --disable-pip-version-check --no-build-isolation --force-reinstall --no-deps "$here"
(cd "$here" && "$python" -m pytest -q tests)
RELAY_PYTHON="$python" cargo test --release -p relay-server --test python_passes
