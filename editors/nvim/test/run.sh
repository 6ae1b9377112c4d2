#!/usr/bin/env bash
# Installs Neovim (once; see install-nvim.sh) and runs the headless e2e test, e2e.lua.
#
#   editors/nvim/test/run.sh                                   # server tests skipped
#   RELAY_NVIM_E2E=1 RELAY_BIN=target/release/relay editors/nvim/test/run.sh
#   editors/nvim/test/run.sh --fake                           # server tests against fake-relay
#
# RELAY_BIN is the relay binary, started as `$RELAY_BIN lsp` (default: `relay` on PATH).
# --fake sets RELAY_NVIM_E2E=1 and RELAY_BIN to test/fake-relay, a stand-in server that
# checks the harness and the plugin's commands until the real server exists.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [ "${1:-}" = "--fake" ]; then
  export RELAY_NVIM_E2E=1
  export RELAY_BIN="$here/fake-relay"
  shift
fi
if [ -n "${RELAY_BIN:-}" ] && [ -x "$RELAY_BIN" ]; then
  RELAY_BIN="$(cd "$(dirname "$RELAY_BIN")" && pwd)/$(basename "$RELAY_BIN")"
  export RELAY_BIN
fi

nvim="$("$here/install-nvim.sh" | tail -n 1)"

# A clean, throw-away home for Neovim: no user config, shada, swap files or logs of yours.
sandbox="$(mktemp -d)"
trap 'rm -rf "$sandbox"' EXIT
export XDG_CONFIG_HOME="$sandbox/config" XDG_DATA_HOME="$sandbox/data" \
  XDG_STATE_HOME="$sandbox/state" XDG_CACHE_HOME="$sandbox/cache" XDG_CONFIG_DIRS="" XDG_DATA_DIRS=""

status=0
"$nvim" --headless -u NONE -i NONE -l "$here/e2e.lua" "$@" || status=$?
if [ "$status" -ne 0 ] && [ -f "$XDG_STATE_HOME/nvim/lsp.log" ]; then
  echo "--- last lines of the LSP log ---"
  tail -n 40 "$XDG_STATE_HOME/nvim/lsp.log"
fi
exit "$status"
