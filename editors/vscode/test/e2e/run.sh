#!/usr/bin/env bash
# The real-VS-Code end-to-end test: the built extension (.vsix) installed into code-server
# (VS Code 1.100 in the browser), driven headless through Debian's chromium with puppeteer-core,
# against the real language server. See e2e.mjs for what it checks.
#
#   RELAY_BIN=/path/to/relay editors/vscode/test/e2e/run.sh
#
# Needs: `npm ci` and `npm run package` done in editors/vscode (puppeteer-core is a dev
# dependency; the .vsix is the package). install-code-server.sh installs chromium and
# code-server once (cached outside the repository); nothing downloads a browser or an editor
# build at run time.
#
# Environment:
#   RELAY_BIN            the relay binary (required)
#   RELAY_VSIX           the extension package (default: the newest editors/vscode/*.vsix)
#   RELAY_E2E_ARTIFACTS  where screenshots and code-server logs go
#                        (default: a new directory under ${TMPDIR:-/tmp}; printed at the end)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
extension="$(cd "$here/../.." && pwd)"

if [ -z "${RELAY_BIN:-}" ] || [ ! -x "$RELAY_BIN" ]; then
  echo "vscode-e2e: RELAY_BIN must be the relay binary (got '${RELAY_BIN:-}')" >&2
  exit 2
fi
relay="$(cd "$(dirname "$RELAY_BIN")" && pwd)/$(basename "$RELAY_BIN")"

vsix="${RELAY_VSIX:-$(ls -t "$extension"/*.vsix 2>/dev/null | head -n 1 || true)}"
if [ -z "$vsix" ] || [ ! -f "$vsix" ]; then
  echo "vscode-e2e: no .vsix in $extension: run \`npm run package\` there first" >&2
  exit 2
fi

t0=$SECONDS
entry="$("$here/install-code-server.sh" | tail -n 1)"
echo "vscode-e2e: code-server and chromium ready in $((SECONDS - t0))s"

artifacts="${RELAY_E2E_ARTIFACTS:-$(mktemp -d "${TMPDIR:-/tmp}/relay-vscode-e2e.XXXXXX")}"
cd "$extension"
exec node "$here/e2e.mjs" --code-server "$entry" --vsix "$vsix" --relay "$relay" --artifacts "$artifacts" "$@"
