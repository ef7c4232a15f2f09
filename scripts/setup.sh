#!/usr/bin/env bash
# Installs everything Magneton needs on a fresh Debian/Ubuntu machine:
# the C++ build dependencies from Debian's -dev packages and the Python ones
# from PyPI into a venv kept outside the checkout (torch is a multi-GB
# download, so every clone on this machine shares one venv).
#
#   MAGNETON_VENV   where the venv lives (default: ~/.cache/magneton/venv-pyXY)
#   MAGNETON_NO_APT set to 1 to skip apt-get (the packages are already there)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

apt_pkgs=(cmake ninja-build g++ pkg-config libsqlite3-dev sqlite3 nlohmann-json3-dev
          libcli11-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
          libeigen3-dev libunwind-dev libdtl-dev libpng-dev clang libclang-rt-14-dev python3-venv python3-dev
          chromium ccache)

missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ] && [ "${MAGNETON_NO_APT:-0}" != 1 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python 3.12 matches the GPU machine (and jax 0.11 needs it); fall back to python3.
py=${PYTHON:-}
if [ -z "$py" ]; then
  for cand in python3.12 "$HOME/.pyenv/versions/3.12"*/bin/python3.12 python3; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys' 2>/dev/null; then py=$cand; break; fi
  done
fi
pyver=$($py -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')
venv=${MAGNETON_VENV:-$HOME/.cache/magneton/venv-py$pyver}
stamp="$venv/.magneton-requirements"
if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating venv $venv"
  mkdir -p "$(dirname "$venv")"
  $py -m venv "$venv"
fi
if ! cmp -s "$here/python/requirements.txt" "$stamp"; then
  echo "setup: installing Python packages into $venv (torch is large; first time takes minutes)"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q -r "$here/python/requirements.txt"
  cp "$here/python/requirements.txt" "$stamp"
fi
echo "$venv"
