#!/usr/bin/env bash
# Installs the Debian packages FARNN needs to build, simulate, lint and test.
# Called by every make target. Does nothing when everything is present; as root
# it installs what is missing; otherwise it prints the exact apt-get line to run.
set -euo pipefail

# Package list: one place. FARNN_EXTRA_PACKAGES adds more (e.g. for synthesis).
packages=(
  g++ make cmake ninja-build pkg-config python3
  verilator yosys tcl zlib1g-dev
  libeigen3-dev googletest libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev
)
# shellcheck disable=SC2206
packages+=(${FARNN_EXTRA_PACKAGES:-})

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "bootstrap: missing Debian packages: ${missing[*]}" >&2
  echo "bootstrap: run as root:  apt-get update && $cmd" >&2
  exit 1
fi
echo "bootstrap: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends ${missing[*]} >/dev/null
echo "bootstrap: done"
