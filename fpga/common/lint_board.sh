#!/usr/bin/env bash
# verilator --lint-only -Wall on a board top (fpga/<board>/rtl/fpga_<board>.sv)
# with the RTL of rtl/files.f and black-box stubs of the vendor IP
# (fpga/<board>/ip/stubs/) and library cells (fpga/common/stubs/). Waivers:
# rtl/lint.vlt and fpga/<board>/lint.vlt, each with its reason.
# Usage: lint_board.sh BOARD [--quick]
#   --quick  lint the board top with a 16-PE core (seconds instead of minutes):
#            every board-level connection is the same, farnn_core's ports do
#            not depend on NumPe. Without it the board's own parameters are
#            linted (the U250's 1387 PEs take about 3 minutes).
# Prints nothing and exits 0 when clean.
set -euo pipefail
board=${1:?usage: lint_board.sh BOARD [--quick]}
cd "$(dirname "$0")/../.."
top=fpga_${board}
dir=fpga/${board}
mapfile -t rtl < <(grep -v -E '^\s*(//|#|$)' rtl/files.f)
mapfile -t stubs < <(ls fpga/common/stubs/*_stub.sv "${dir}"/ip/stubs/*_stub.sv)
mapfile -t board_rtl < <(ls "${dir}"/rtl/*.sv)
params=()
if [ "${2:-}" = "--quick" ]; then params=(-GNumPe=16); fi
if ! out=$(verilator --lint-only -Wall --top-module "$top" "${params[@]}" rtl/lint.vlt "${dir}/lint.vlt" \
             "${rtl[@]}" "${stubs[@]}" "${board_rtl[@]}" 2>&1) || [ -n "$out" ]; then
  echo "lint: $top"; echo "$out"; exit 1
fi
