#!/usr/bin/env bash
# verilator --lint-only -Wall on every RTL module as its own top, with the
# waivers of rtl/lint.vlt (each with its reason). Prints nothing when clean.
# The tops run in parallel, one per core; their reports print in file order.
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir=$(mktemp -d)
trap 'rm -rf "$out_dir"' EXIT
export out_dir
lint_top() {  # writes $out_dir/TOP.out when TOP is not clean
  local top=$1 out files
  mapfile -t files < <(grep -v -E '^\s*(//|#|$)' rtl/files.f)
  if ! out=$(verilator --lint-only -Wall --top-module "$top" rtl/lint.vlt "${files[@]}" 2>&1) || [ -n "$out" ]; then
    printf 'lint: %s\n%s\n' "$top" "$out" > "$out_dir/$top.out"
  fi
}
export -f lint_top
mapfile -t tops < <(grep -v -E '^\s*(//|#|$)' rtl/files.f | grep -v '_pkg\.sv$' | xargs -n1 basename | sed 's/\.sv$//')
printf '%s\n' "${tops[@]}" | xargs -P "$(nproc)" -I{} bash -c 'lint_top "$1"' _ {}
status=0
for top in "${tops[@]}"; do
  if [ -s "$out_dir/$top.out" ]; then cat "$out_dir/$top.out"; status=1; fi
done
# Board tops against their vendor-IP stubs (a 16-PE core; ctest -L board lints the full one).
fpga/common/lint_board.sh u250 --quick || status=1
exit $status
