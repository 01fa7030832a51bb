#!/usr/bin/env bash
# verilator --lint-only -Wall on a board top (fpga/<board>/rtl/fpga_<board>.sv)
# with the RTL of rtl/files.f and black-box stubs of the vendor IP
# (fpga/<board>/ip/stubs/) and library cells (fpga/common/stubs/). Waivers:
# rtl/lint.vlt and fpga/<board>/lint.vlt, each with its reason.
# Usage: lint_board.sh BOARD [--quick] [--top FILE]
#   --quick     lint with a 16-PE core in one chain (seconds instead of
#               minutes): every board-level connection is the same, as
#               farnn_core's ports do not depend on NumPe or NumChains. Without
#               it the board's own parameters are linted (the U250's PEs and
#               chains as the capacity model gives them).
#   --top FILE  lint FILE in place of the board top (the checks' self-test).
# Prints nothing and exits 0 when clean.
set -euo pipefail
board=${1:?usage: lint_board.sh BOARD [--quick] [--top FILE]}
shift
cd "$(dirname "$0")/../.."
top_module=fpga_${board}
dir=fpga/${board}
top_file=${dir}/rtl/${top_module}.sv
params=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) params=(-GNumPe=16 -GNumChains=1) ;;
    --top) top_file=${2:?--top needs a file}; shift ;;
    *) echo "lint_board.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
mapfile -t rtl < <(grep -v -E '^\s*(//|#|$)' rtl/files.f)
mapfile -t stubs < <(ls fpga/common/stubs/*_stub.sv "${dir}"/ip/stubs/*_stub.sv)
if ! out=$(verilator --lint-only -Wall --top-module "$top_module" "${params[@]}" rtl/lint.vlt "${dir}/lint.vlt" \
             "${rtl[@]}" "${stubs[@]}" "$top_file" 2>&1) || [ -n "$out" ]; then
  echo "lint: $top_module ($top_file)"; echo "$out"; exit 1
fi
