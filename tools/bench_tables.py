#!/usr/bin/env python3
"""Markdown tables of the benchmarks (`make bench` JSON) for docs/performance.md.

Usage: bench_tables.py build/bench/engine_p4.json [build/bench/train.json ...]

The training benchmark (train.json): one row per (cell, H, B) with PyTorch's
step, the CPU path's step and its split, the speed-up, and the projected
hybrid step with its device part and the projected MAC utilization.

Per parameterization: one row per (cell, H, B) with FW/BW cycles and MAC
utilization (rows with B = 1 and H >= 8*NumPe in bold: the target points),
FW dependency stalls, the LOAD's cycles and words per cycle against the
lanes it writes, and FW+BW time at the benchmark's clock. Python 3 standard
library only.
"""
import json
import sys


def table(path):
    d = json.load(open(path))
    p = d["params"]
    mhz = d["clock_mhz"]
    chains = p.get("num_chains", 1)
    lines = [
        "**NumPe = %d** (%s), WeightDepth %d x %d banks, WeightLanes %d, MaxHidden %d, MaxBatch %d, "
        "MulLatency %d, AddLatency %d; T = %d; clock %.0f MHz (%s)"
        % (p["num_pe"], "one chain" if chains == 1 else "%d chains of %d" % (chains, p["num_pe"] // chains),
           p["weight_depth"], p.get("num_banks", 1), p.get("weight_lanes", 1), p["max_hidden"],
           p["max_batch"], p["mul_latency"], p["add_latency"], d["steps"], mhz, d.get("clock_source", "")),
        "",
        "| cell | H | H/NumPe | B | FW cycles | FW util | BW cycles | BW util | FW dependency stalls "
        "| LOAD cycles | LOAD words/cycle (lanes) | FW+BW time |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in d["configs"]:
        h, b = c["hidden"], c["batch"]
        target = b == 1 and h >= 8 * p["num_pe"]
        fw, bw, ld = c["forward"], c["backward"], c["load"]

        def util(x):
            s = "%.1f%%" % (100 * x["mac_utilization"])
            return "**%s**" % s if target else s

        cell = c["cell"].upper()
        us = (fw["cycles"] + bw["cycles"]) / mhz
        lines.append("| %s | %s | %.3g | %d | %d | %s | %d | %s | %d | %d | %.2f (%d) | %.0f µs |" % (
            "**%s**" % cell if target else cell, "**%d**" % h if target else str(h), h / p["num_pe"], b,
            fw["cycles"], util(fw), bw["cycles"], util(bw), fw["stall_cycles"]["dependency"], ld["cycles"],
            ld["words_per_cycle"], ld["lanes"], us))
    return "\n".join(lines)


def train_table(d):
    lines = [
        "Design point: %s; %s; T = %d, I = H, threads: %d."
        % (d["design_point"], d["baseline"], d["results"][0]["steps"], d["results"][0]["threads"]),
        "",
        "| cell | H | B | PyTorch ms | FARNN CPU ms (compute + device wait) | speed-up | hybrid ms (device) "
        "| speed-up | FW / BW util. |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in d["results"]:
        cpu, hyb, t = r["cpu"], r["hybrid"], r.get("torch_cpu")
        sp = r.get("speedup_vs_torch", {})
        lines.append("| %s | %d | %d | %s | %.2f (%.2f + %.2f) | %s | %.2f (%.2f) | %s | %.1f%% / %.1f%% |" % (
            r["cell"].upper(), r["hidden"], r["batch"], "%.2f" % t["step_ms"] if t else "—", cpu["step_ms"],
            cpu["host_compute_ms"], cpu["device_wait_ms"], "%.2fx" % sp["cpu"] if sp else "—", hyb["step_ms"],
            hyb["device_ms"], "%.2fx" % sp["hybrid"] if sp else "—", 100 * hyb["mac_utilization"]["forward"],
            100 * hyb["mac_utilization"]["backward"]))
    return "\n".join(lines)


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    out = []
    for a in argv:
        d = json.load(open(a))
        out.append(train_table(d) if "results" in d else table(a))
    print("\n\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
