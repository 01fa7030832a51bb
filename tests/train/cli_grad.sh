#!/usr/bin/env bash
# farnn grad on one PyTorch reference case, then farnn compare at 1e-5.
# Usage: cli_grad.sh <farnn binary> <case dir>
set -euo pipefail
farnn=$1 dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2046
"$farnn" grad --weights "$dir/W.safetensors" --input "$dir/x.npy" --grad-output "$dir/dy.npy" \
  $(cat "$dir/args") --out "$tmp/out.safetensors"
"$farnn" compare "$tmp/out.safetensors" "$dir/expected.safetensors" --rtol 1e-5
