#!/usr/bin/env python3
"""Training-step benchmark of `make bench`: FARNN against PyTorch in one run.

1. The design point of the projected card: the capacity model
   (fpga/yosys/capacity.py on the inputs embedded in docs/capacity.md) gives
   the PE count of --target/--config (default VU9P with one UltraRAM per PE,
   the only VU9P point that holds H = 1024) and the clock estimate of
   `make synth`.
2. bench_train (C++) measures the CPU path (model:// + CPU backend) and
   projects the hybrid step at that design point.
3. The same training step in PyTorch on this machine, with the same thread
   count: torch.nn.LSTM / GRU (input size H), a Linear(H, 1) head, MSE loss,
   SGD; the figure is the wall time per step after one warm-up step. Debian's
   PyTorch runs its GEMMs on whatever libblas.so.3 points at; the JSON names
   the library.
4. One JSON with both and the ratios (PyTorch time / FARNN time: > 1 means
   FARNN is faster), and a table on stdout.

Usage: bench_train.py --bench PATH --json OUT [--quick] [--threads N]
                      [--target NAME --config BRAM|URAM] [--allow-no-torch]
                      [--backend cpu|cuda]
--backend cuda: the measured path on the CUDA backend (a GPU machine).
--quick: a few seconds (H 16/32, B 1/2, T 8) for the smoke test.
--allow-no-torch: without PyTorch, record the baseline as skipped (smoke test
  only; `make bench` installs python3-torch and requires it).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "fpga", "yosys"))
import capacity  # noqa: E402


def design_point(target, config):
    md = open(os.path.join(ROOT, "docs", "capacity.md")).read()
    rows, f_est = capacity.model(capacity.extract_inputs(md))
    for r in rows:
        if r["device"] == target and r["config"] == config:
            return r["pes"], f_est, "%s %s design point of docs/capacity.md (%d PEs), %.1f MHz make-synth estimate" % (
                target, config, r["pes"], f_est)
    known = ", ".join("%s/%s" % (r["device"], r["config"]) for r in rows)
    sys.exit("bench_train: no design point %s/%s in docs/capacity.md (known: %s)" % (target, config, known))


def torch_step_ms(torch, cell, hidden, batch, steps, min_time):
    torch.manual_seed(1)
    rnn = (torch.nn.LSTM if cell == "lstm" else torch.nn.GRU)(hidden, hidden)
    head = torch.nn.Linear(hidden, 1)
    params = list(rnn.parameters()) + list(head.parameters())
    opt = torch.optim.SGD(params, lr=0.01)
    x = torch.randn(steps, batch, hidden)
    y = torch.randn(steps, batch, 1)
    loss_fn = torch.nn.MSELoss()

    def step():
        opt.zero_grad()
        out, _ = rnn(x)
        loss_fn(head(out), y).backward()
        opt.step()

    step()  # warm-up
    n, t0 = 0, time.perf_counter()
    while n < 1 or time.perf_counter() - t0 < min_time:
        step()
        n += 1
    return 1e3 * (time.perf_counter() - t0) / n, n


def blas_library(torch):
    """The BLAS library PyTorch's GEMMs run on (Debian's build links libblas.so.3,
    which the alternatives system points at the reference BLAS or OpenBLAS)."""
    torch.mm(torch.ones(64, 64), torch.ones(64, 64))
    for line in open("/proc/self/maps"):
        path = line.split()[-1] if len(line.split()) >= 6 else ""
        name = os.path.basename(path)
        if name.startswith(("libblas", "libopenblas", "libmkl_rt")):
            return os.path.realpath(path)
    return "built in (%s)" % torch.__config__.show().split("BLAS_INFO=")[-1].split(",")[0]


def check_result(r):
    """The C++ figures must hang together; a broken benchmark fails here."""
    cpu, hyb = r["cpu"], r["hybrid"]
    what = "%s H=%d B=%d" % (r["cell"], r["hidden"], r["batch"])
    if not (cpu["step_ms"] > 0 and 0 <= cpu["device_wait_ms"] <= cpu["step_ms"]):
        sys.exit("bench_train: %s: inconsistent CPU timing %s" % (what, cpu))
    for d in ("forward", "backward"):
        if not 0 < hyb["mac_utilization"][d] <= 1:
            sys.exit("bench_train: %s: %s MAC utilization %s outside (0, 1]" % (what, d, hyb["mac_utilization"][d]))
    dev_ms = sum(hyb["us"].values()) / 1e3
    eps = 1e-9 * max(1.0, hyb["no_overlap_ms"])
    if abs(dev_ms - hyb["device_ms"]) > 1e-9 * max(1.0, dev_ms) or \
            abs(hyb["no_overlap_ms"] - hyb["device_ms"] - hyb["host_compute_ms"]) > eps or \
            not -eps <= hyb["overlapped_ms"] <= hyb["device_ms"] + eps or \
            abs(hyb["exposed_device_ms"] + hyb["overlapped_ms"] - hyb["device_ms"]) > eps or \
            not hyb["step_ms"] <= hyb["no_overlap_ms"] + eps:
        sys.exit("bench_train: %s: hybrid breakdown does not add up: %s" % (what, hyb))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", required=True, help="the bench_train binary")
    ap.add_argument("--json", required=True, help="output file")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--target", default="VU9P")
    ap.add_argument("--config", default="URAM", choices=["BRAM", "URAM"])
    ap.add_argument("--allow-no-torch", action="store_true")
    ap.add_argument("--backend", default="cpu", help="compute backend of the measured path (cuda on a GPU machine)")
    a = ap.parse_args()
    if a.threads < 1:
        sys.exit("bench_train: --threads must be >= 1")

    pes, clock, source = design_point(a.target, a.config)
    size = ["--hidden", "16,32", "--batch", "1,2", "--steps", "8", "--min-time", "0"] if a.quick else []
    min_time = 0.0 if a.quick else 1.0
    fd, tmp = tempfile.mkstemp(suffix=".json", dir=os.path.dirname(os.path.abspath(a.json)))
    os.close(fd)
    try:
        subprocess.run([a.bench, "--pes", str(pes), "--clock-mhz", "%.6f" % clock, "--threads", str(a.threads),
                        "--design-point", source, "--backend", a.backend, "--json", tmp] + size, check=True)
        doc = json.load(open(tmp))
    except subprocess.CalledProcessError as e:
        sys.exit("bench_train: %s exited with %d" % (a.bench, e.returncode))
    finally:
        os.unlink(tmp)

    os.environ["OPENBLAS_NUM_THREADS"] = str(a.threads)  # before torch loads its BLAS
    try:
        import torch
        torch.set_num_threads(a.threads)
        blas = blas_library(torch)
        baseline = "PyTorch %s, torch.set_num_threads(%d), BLAS %s" % (torch.__version__, a.threads, blas)
    except ImportError:
        if not a.allow_no_torch:
            sys.exit("bench_train: PyTorch is not installed (Debian package python3-torch; `make bench` installs it)")
        torch, baseline = None, "skipped: PyTorch is not installed"
    doc["baseline"] = baseline

    print("\n%-5s %5s %3s | %10s %10s %9s | %10s %9s" % ("cell", "H", "B", "torch ms", "farnn cpu", "speedup",
                                                         "hybrid ms", "speedup"))
    for r in doc["results"]:
        check_result(r)
        if torch is None:
            r["torch_cpu"] = None
            continue
        ms, n = torch_step_ms(torch, r["cell"], r["hidden"], r["batch"], r["steps"], min_time)
        r["torch_cpu"] = {"step_ms": ms, "steps_measured": n}
        r["speedup_vs_torch"] = {"cpu": ms / r["cpu"]["step_ms"], "hybrid": ms / r["hybrid"]["step_ms"]}
        print("%-5s %5d %3d | %10.2f %10.2f %8.2fx | %10.2f %8.2fx" % (
            r["cell"], r["hidden"], r["batch"], ms, r["cpu"]["step_ms"], r["speedup_vs_torch"]["cpu"],
            r["hybrid"]["step_ms"], r["speedup_vs_torch"]["hybrid"]), flush=True)

    out_tmp = a.json + ".tmp"
    with open(out_tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(out_tmp, a.json)
    print("bench_train: wrote %s" % a.json)


if __name__ == "__main__":
    main()
