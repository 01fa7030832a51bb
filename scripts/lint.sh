#!/usr/bin/env bash
# verilator --lint-only -Wall on every RTL module as its own top, with the
# waivers of rtl/lint.vlt (each with its reason). Prints nothing when clean.
# The tops run in parallel, one per core; their reports print in file order.
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir=$(mktemp -d)
trap 'rm -rf "$out_dir"' EXIT
export out_dir
mapfile -t files < <(grep -v -E '^\s*(//|#|$)' rtl/files.f)
# The activation tables (act_lut_data_pkg, ~100 KB) take ~3 s to parse, more
# than the rest of the RTL together: only tops that reach them get them. The
# set: the package, the files that use it, and (to a fixed point) the modules
# that instantiate a module of the set (packages other than the tables never need
# them). A top outside it is linted without the set.
lut_files=" rtl/act/act_lut_data_pkg.sv $(grep -l 'act_lut_data_pkg::' "${files[@]}" | tr '\n' ' ')"
while :; do
  names=$(for f in $lut_files; do basename "$f" .sv; done | grep -v '_pkg$' | paste -sd'|')
  grown=$lut_files
  for f in "${files[@]}"; do
    [[ $grown == *" $f "* || $f == *_pkg.sv ]] ||
      ! grep -qE "^\s*($names)\s*(#|\w+\s*(\(|$))" "$f" || grown+="$f "
  done
  [ "$grown" = "$lut_files" ] && break
  lut_files=$grown
done
export lut_files
lint_top() {  # writes $out_dir/TOP.out when TOP is not clean
  local top=$1 out f use=()
  mapfile -t files < <(grep -v -E '^\s*(//|#|$)' rtl/files.f)
  for f in "${files[@]}"; do
    if [[ $lut_files != *"/$top.sv "* && $lut_files == *" $f "* ]]; then continue; fi
    use+=("$f")
  done
  if ! out=$(verilator --lint-only -Wall --top-module "$top" rtl/lint.vlt "${use[@]}" 2>&1) || [ -n "$out" ]; then
    printf 'lint: %s\n%s\n' "$top" "$out" > "$out_dir/$top.out"
  fi
}
export -f lint_top
mapfile -t tops < <(printf '%s\n' "${files[@]}" | grep -v '_pkg\.sv$' | xargs -n1 basename | sed 's/\.sv$//')
printf '%s\n' "${tops[@]}" | xargs -P "$(nproc)" -I{} bash -c 'lint_top "$1"' _ {}
status=0
for top in "${tops[@]}"; do
  if [ -s "$out_dir/$top.out" ]; then cat "$out_dir/$top.out"; status=1; fi
done
# Board tops against their vendor-IP stubs (a 16-PE core; ctest -L board lints the full one).
fpga/common/lint_board.sh u250 --quick || status=1
exit $status
