#!/usr/bin/env python3
"""Markdown tables of the benchmarks (`make bench` JSON) for docs/performance.md.

Usage: bench_tables.py build/bench/engine_p4.json [build/bench/core_p4.json
                      build/bench/device.json build/bench/train.json
                      build/bench/engine_scale.json ...]

The training benchmark (train.json): one row per (cell, H, B) with PyTorch's
step, the CPU path's step and its split, the speed-up, and the projected
hybrid step with its device part and the projected MAC utilization.

The core benchmark (core_p4.json): one row per (layer, phase) with the cycles
from doorbell to completion word, the engine alone, what the shell adds, MAC
utilization, stalls, and bytes on the host and card.

The device benchmark (device.json): one row per (layer, phase) with the core's
busy cycles, their time at the benchmark's clock, the MAC utilization and the
MMIO accesses on each preset (one figure where the presets agree: a link's
timing moves cycles, and with them whether the driver clears an interrupt),
bytes, and the link share on each preset (a benchmark whose presets disagree
on bytes is refused).

Per parameterization: one row per (cell, H, B) with FW/BW cycles and MAC
utilization (rows with B = 1 and H >= 8*NumPe in bold: the target points),
FW dependency stalls, the LOAD's cycles and words per cycle against the
lanes it writes, and FW+BW time at the benchmark's clock.

The device-scale model (engine_scale.json): the design-point table, one row
per (point, cell, H, B) with FW and BW cycles a step, MAC utilization and µs
a step at its clock; batch 1 for every point and H, and batch 4 and 16 at
H = 256 and 1024 for the first point. `--points a,b,...` (before the JSON
files) keeps those points, in that order. Python 3 standard library only.
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
        % (p["num_pe"], ("one chain" if chains == 1 else "%d chains of %d" % (chains, p["num_pe"] // chains)) +
           (", a reduction adder per PE" if p.get("red_adder") else ""),
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
    r0 = d["results"][0]
    lines = [
        "Design point: %s, projected as %d PEs in %d chains; %s; T = %d, I = H, threads: %d."
        % (d["design_point"], r0["hybrid"]["num_pe"], r0["hybrid"]["num_chains"], d["baseline"], r0["steps"],
           r0["threads"]),
        "",
        "| cell | H | B | PyTorch ms | FARNN CPU ms (compute + device wait) | speed-up "
        "| hybrid ms (device, overlapped) | no overlap ms | speed-up | FW / BW util. |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in d["results"]:
        cpu, hyb, t = r["cpu"], r["hybrid"], r.get("torch_cpu")
        sp = r.get("speedup_vs_torch", {})
        lines.append("| %s | %d | %d | %s | %.2f (%.2f + %.2f) | %s | %.2f (%.2f, %.2f) | %.2f | %s "
                     "| %.1f%% / %.1f%% |" % (
            r["cell"].upper(), r["hidden"], r["batch"], "%.2f" % t["step_ms"] if t else "—", cpu["step_ms"],
            cpu["host_compute_ms"], cpu["device_wait_ms"], "%.2fx" % sp["cpu"] if sp else "—", hyb["step_ms"],
            hyb["device_ms"], hyb["overlapped_ms"], hyb["no_overlap_ms"], "%.2fx" % sp["hybrid"] if sp else "—",
            100 * hyb["mac_utilization"]["forward"],
            100 * hyb["mac_utilization"]["backward"]))
    return "\n".join(lines)


def layer_name(r):
    return "%s H%d B%d T%d" % (r["cell"].upper(), r["hidden"], r["batch"], r["steps"])


def core_table(d):
    lines = [
        "| layer | phase | cycles | engine alone | shell adds | MAC util. | stalls in / out / gate store "
        "| host bytes read / written | card bytes read / written |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in d["configs"]:
        for phase in ("load", "forward", "backward"):
            x = c[phase]
            st, by = x["stall_cycles"], x["bytes"]
            util = "—" if phase == "load" else "%.1f %%" % (100 * x["mac_utilization"])
            lines.append("| %s | %s | %d | %d | %d | %s | %d / %d / %d | %d / %d | %d / %d |" % (
                layer_name(c), phase, x["cycles"], x["engine_alone_cycles"], x["shell_overhead_cycles"], util,
                st["input"], st["output"], st["gate_store"], by["host_read"], by["host_write"],
                by["card_read"], by["card_write"]))
    return "\n".join(lines)


def device_table(d):
    presets = list(d["presets"])
    names = [p.replace("gen", "Gen").replace("x", " x") for p in presets]
    rows = {}
    for r in d["results"]:
        rows.setdefault((r["cell"], r["hidden"], r["batch"], r["steps"], r["phase"]), {})[r["preset"]] = r
    per = " (%s)" % " / ".join(names) if len(presets) > 1 else ""
    lines = [
        "| layer | phase | cycles%s | µs%s | MAC util.%s | host bytes read / written | card bytes read / written "
        "| MMIO reads / writes%s | " % (per, per, per, per) + " | ".join(
            ("link share read / write, %s" if i == 0 else "%s") % n for i, n in enumerate(names)) + " |",
        "|---|---|---|---|---|---|---|---|" + "---|" * len(presets),
    ]
    for key, by in rows.items():
        r = by[presets[0]]
        # The link's rate may bind a burst on one preset and not the other,
        # so cycles (and time, utilization, MMIO accesses) are given per
        # preset; what moved over the link may not differ.
        for p in presets[1:]:
            o = by[p]
            if (o["host_bytes"], o["card_bytes"]) != (r["host_bytes"], r["card_bytes"]):
                raise SystemExit("bench_tables: %s %s differs between %s and %s in bytes"
                                 % (layer_name(r), r["phase"], presets[0], p))

        def each(fmt, f):
            vals = [fmt % f(by[p]) for p in presets]
            return vals[0] if len(set(vals)) == 1 else " / ".join(vals)

        util = "—" if r["phase"] == "load" else each("%.1f %%", lambda x: 100 * x["mac_utilization"])

        def share(x):
            e = x["link_efficiency"]
            f = "%.1f %%" if max(e["read"], e["write"]) >= 0.01 else "%.2f %%"
            return (f + " / " + f) % (100 * e["read"], 100 * e["write"])
        lines.append("| %s | %s | %s | %s | %s | %d / %d | %d / %d | %s | %s |" % (
            layer_name(r), r["phase"], each("%d", lambda x: x["cycles"]), each("%.1f", lambda x: x["projected_us"]),
            util, r["host_bytes"]["read"], r["host_bytes"]["write"], r["card_bytes"]["read"],
            r["card_bytes"]["write"], each("%d / %d", lambda x: (x["mmio"]["reads"], x["mmio"]["writes"])),
            " | ".join(share(by[p]) for p in presets)))
    return "\n".join(lines)


def scale_table(d, names=None):
    lines = [
        "Clock %.1f MHz (%s), T = %d, gate store %d cycles, MulLatency %d, AddLatency %d:"
        % (d["clock_mhz"], d["clock_source"], d["steps"], d["gate_store_latency"], d["mul_latency"],
           d["add_latency"]),
        "",
        "| point | NumPe (chains) | cell | H | B | FW cycles/step | FW util | FW µs/step "
        "| BW cycles/step | BW util | BW µs/step |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    points = d["points"]
    if names:
        by = {pt["name"]: pt for pt in points}
        missing = [n for n in names if n not in by]
        if missing:
            raise SystemExit("bench_tables.py: no point %s in the engine_scale JSON" % ", ".join(missing))
        points = [by[n] for n in names]
    for i, pt in enumerate(points):
        for r in pt["rows"]:
            if r["batch"] != 1 and not (i == 0 and r["hidden"] in (256, 1024)):
                continue
            fw, bw = r["forward"], r["backward"]
            lines.append("| %s | %d (%d) | %s | %d | %d | %.0f | %.1f%% | %.1f | %.0f | %.1f%% | %.1f |" % (
                pt["name"], pt["num_pe"], pt["num_chains"], r["cell"].upper(), r["hidden"], r["batch"],
                fw["cycles_per_step"], 100 * fw["mac_utilization"], fw["us_per_step"],
                bw["cycles_per_step"], 100 * bw["mac_utilization"], bw["us_per_step"]))
    return "\n".join(lines)


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    names = None
    if argv[0] == "--points":
        if len(argv) < 3:
            print(__doc__)
            return 2
        names, argv = argv[1].split(","), argv[2:]
    out = []
    for a in argv:
        d = json.load(open(a))
        kind = d.get("benchmark", "")
        if kind == "core":
            out.append(core_table(d))
        elif kind == "device":
            out.append(device_table(d))
        elif kind == "engine_scale":
            out.append(scale_table(d, names))
        elif kind.startswith("training step"):
            out.append(train_table(d))
        else:
            out.append(table(a))
    print("\n\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
