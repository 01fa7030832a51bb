#!/usr/bin/env bash
# verilator --lint-only -Wall on every RTL module as its own top, with the
# waivers of rtl/lint.vlt (each with its reason). Prints nothing when clean.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(grep -v -E '^\s*(//|#|$)' rtl/files.f)
status=0
for f in "${files[@]}"; do
  case "$f" in *_pkg.sv) continue ;; esac
  top=$(basename "$f" .sv)
  if ! out=$(verilator --lint-only -Wall --top-module "$top" rtl/lint.vlt "${files[@]}" 2>&1); then
    echo "lint: $top"; echo "$out"; status=1
  elif [ -n "$out" ]; then
    echo "lint: $top"; echo "$out"; status=1
  fi
done
# Board tops against their vendor-IP stubs (a 16-PE core; ctest -L board lints the full one).
fpga/common/lint_board.sh u250 --quick || status=1
exit $status
