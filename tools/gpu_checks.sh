#!/usr/bin/env bash
# The checks that need an NVIDIA GPU, for a GPU machine that lacks this
# project's build dependencies (Eigen, GoogleTest, Verilator): it runs test
# and benchmark binaries built on the development machine (`make build` with
# the CUDA toolkit, so CMake built the CUDA backend and bench_cudnn) from this
# checkout's build/ folder, and needs only the NVIDIA driver, the CUDA 13
# runtime libraries (cudart, cuBLAS, cuDNN: the toolkit's, or PyTorch's
# nvidia-* wheels) and python3 with torch for the CPU baseline.
#   1. the backend suite and the PyTorch cross-checks with the cuda backend:
#      every cuda case must run (a skip is a failure here);
#   2. bench_train with --backend cuda (the measured path on the GPU, the
#      hybrid projection, PyTorch on the CPU beside it);
#   3. bench_cudnn (cuDNN's LSTM/GRU step, STANDARD and PERSIST_STATIC).
# Usage: tools/gpu_checks.sh OUTDIR   (logs and JSON land in OUTDIR)
# The binaries it runs (about 25 MB, what a copy of the checkout must carry):
#   build/tests/train/test_trainer build/tests/train/test_grad_torch
#   build/tools/bench_train/bench_train build/tools/bench_cudnn/bench_cudnn
set -uo pipefail
out=${1:?usage: tools/gpu_checks.sh OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
mkdir -p "$out"
fail=0
# CUDA's libraries: the toolkit's, then those of PyTorch's wheels if any
# (CUDA 13's nvidia/cu13/lib: cudart, cuBLAS; nvidia/cudnn/lib from
# nvidia-cudnn-cu13).
libs=/usr/local/cuda/lib64
for sub in cu13/lib cudnn/lib; do
  d=$(python3 -c "import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], '$sub'))" 2>/dev/null)
  [ -n "$d" ] && [ -d "$d" ] && libs=$libs:$d
done
export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi -L | tee "$out/gpu.txt" || { echo "gpu_checks: no GPU answers nvidia-smi"; exit 1; }
export FARNN_GRAD_REF=$root/tests/train/grad_ref FARNN_TRAIN_REF=$root/tests/train/train_ref

# 1. Tests: the cuda cases must run and pass.
for t in "test_trainer --gtest_filter=Backends/*:Cases/TrainTorch.*" "test_grad_torch"; do
  set -- $t
  log=$out/$1.log
  "$build/tests/train/$1" "${@:2}" 2>&1 | tee "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "gpu_checks: $1 failed"; fail=1; }
  if grep -q "CUDA backend not run" "$log"; then echo "gpu_checks: $1 skipped the cuda backend"; fail=1; fi
done
grep -q "OK \] Backends/BackendTest.LargeCallsEqualTheCpuBackend/cuda" "$out/test_trainer.log" ||
  { echo "gpu_checks: the cuda backend's cases did not pass"; fail=1; }

# 2. The training-step benchmark on the CUDA backend, PyTorch (CPU) beside it.
python3 "$root/tools/bench_train/bench_train.py" --bench "$build/tools/bench_train/bench_train" \
  --backend cuda --threads "$(nproc)" --json "$out/train_cuda.json" || { echo "gpu_checks: bench_train failed"; fail=1; }

# 3. cuDNN's step.
"$build/tools/bench_cudnn/bench_cudnn" --json "$out/cudnn.json" || { echo "gpu_checks: bench_cudnn failed"; fail=1; }
[ $fail -eq 0 ] && echo "gpu_checks: all passed" || echo "gpu_checks: FAILED"
exit $fail
