#!/usr/bin/env bash
# Installs what the real-VS-Code end-to-end test needs, once, outside the repository, and prints
# the path of code-server's entry point (node .../out/node/entry.js) as the last line of stdout.
#
#   ENTRY=$(editors/vscode/test/e2e/install-code-server.sh)
#
# - Debian packages (apt-get, only those missing): chromium (the browser puppeteer-core drives),
#   ripgrep (VS Code's search binary; @vscode/ripgrep's own download is not reachable here) and
#   what code-server's native modules need to compile from source.
# - code-server from the npm registry into a cache directory. Its install scripts download
#   prebuilt binaries that cannot be had here, so it is installed with --ignore-scripts and the
#   steps those scripts would do are done by hand (see /work/shared/docs/real-vscode-here.md
#   for how this was found). Nothing is downloaded from outside the package registries.
#
# Environment:
#   RELAY_CODE_SERVER_PREFIX   install directory
#                              (default: ${XDG_CACHE_HOME:-~/.cache}/relay-editors/code-server-<version>)
#   CODE_SERVER_VERSION        default 4.100.3: the newest release that runs on Node 20
set -euo pipefail

version="${CODE_SERVER_VERSION:-4.100.3}"
prefix="${RELAY_CODE_SERVER_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/relay-editors/code-server-$version}"
entry="$prefix/node_modules/code-server/out/node/entry.js"
stamp="$prefix/.installed"

log() { echo "install-code-server: $*" >&2; }

# Debian packages --------------------------------------------------------------------------
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
if [ ! -f "$stamp" ]; then
  # Only needed to build code-server's native modules.
  for pkg in build-essential pkg-config python3 libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
  done
fi
if [ "${#need[@]}" -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    log "missing ${need[*]} and no apt-get to install them"
    exit 1
  fi
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  log "apt-get install ${need[*]}"
  if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2; then
    "${sudo[@]}" apt-get update -qq >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
  fi
fi

# code-server ------------------------------------------------------------------------------
if [ -f "$stamp" ] && node "$entry" --version >/dev/null 2>&1; then
  log "using code-server $version at $prefix"
  echo "$entry"
  exit 0
fi

# Build in a staging directory next to the cache and move it in place at the end, so an
# interrupted install never leaves a half-built cache behind.
mkdir -p "$(dirname "$prefix")"
stage="$(mktemp -d "$prefix.partial.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
export npm_config_unsafe_perm=true npm_config_yes=true npm_config_fund=false npm_config_audit=false \
  npm_config_update_notifier=false npm_config_loglevel=error

log "npm install code-server@$version (without its install scripts) into $stage"
echo '{"name": "relay-code-server-cache", "private": true}' >"$stage/package.json"
(cd "$stage" && npm install --ignore-scripts --no-save "code-server@$version" >&2)

vscode="$stage/node_modules/code-server/lib/vscode"
log "installing VS Code's own dependencies"
(cd "$vscode" && npm install --omit=dev --ignore-scripts >&2)
log "compiling VS Code's native modules"
(cd "$vscode" && npm rebuild kerberos native-watchdog node-pty @parcel/watcher @vscode/deviceid @vscode/spdlog >&2)
mkdir -p "$vscode/node_modules/@vscode/ripgrep/bin"
cp "$(command -v rg)" "$vscode/node_modules/@vscode/ripgrep/bin/rg"
# The links code-server's postinstall makes.
ln -sfn node_modules "$vscode/node_modules.asar"
ln -sfn code-linux.sh "$vscode/bin/remote-cli/code-server"
ln -sfn browser-linux.sh "$vscode/bin/helpers/browser.sh"
log "installing the built-in extensions' dependencies"
(cd "$vscode/extensions" && npm install --omit=dev >&2)
log "compiling argon2"
(cd "$stage" && npm rebuild argon2 --build-from-source >&2)

if ! node "$stage/node_modules/code-server/out/node/entry.js" --version >&2; then
  log "the installed code-server does not start"
  exit 1
fi
touch "$stage/.installed"
rm -rf "$prefix"
mv "$stage" "$prefix"
trap - EXIT
log "installed code-server $version at $prefix"
echo "$entry"
