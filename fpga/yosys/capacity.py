#!/usr/bin/env python3
"""Capacity model: how many PEs, how large a layer, how many FLOP/s per device.

Reads the synthesis report (report.json of synth.py): the cost of one PE
(the PE chain's total divided by NumPe) and the fixed cost of the engine
(engine minus its chain: sequencer, activation unit, FIFOs, buffers) and of
the shell around it (farnn_core minus its engine, synthesized in context:
registers, dispatcher, run unit, DMA movers, gate-store adapter and the
logic between them). For
each target (Xilinx VU9P, VU13P; Alveo U250 and U280 user regions) it
computes
  - how many PEs fit, in chains of CHAIN_LEN PEs whose tails meet in the
    join tree (one node per chain beyond the first, its cost measured on
    chain_join), and which resource binds (LUT, FF, DSP48E2, or the block
    RAM / UltraRAM the weight RAMs need, one block per PE at least);
  - the per-PE weight RAM the remaining BRAM36 / URAM allow (uniform over
    the chain) and the largest LSTM (G = 4) and GRU (G = 3) hidden size H
    whose U stays on chip: ceil(G*H/P) * H <= words per PE;
  - peak FP32 throughput, 2 flops per MAC per PE per cycle, at the clock
    the measured logic depth suggests (the worst path of the engine, the PE
    chain and the shell's parts: they share one clock).
It writes docs/capacity.md, with its inputs embedded, so that
`capacity.py --check docs/capacity.md` can tell whether the document is what
the tool produces from those inputs (a CTest test runs that check).

Usage: capacity.py REPORT.json [--out docs/capacity.md]
       capacity.py --check docs/capacity.md
"""
import json
import math
import os
import sys

import blocks
import flow

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_OUT = os.path.join(ROOT, "docs", "capacity.md")

# Device resources. LUT, FF, DSP48E2, BRAM36 (36 Kb blocks), URAM (288 Kb).
# `shell` is what the platform keeps (static region) or, for a bare device,
# the margin we leave for the PCIe/DMA and DDR IP (the platform's part of a
# shell; farnn_core's own logic is in the fixed part); see SOURCES.
DEVICES = [
    {"name": "VU9P", "kind": "device",
     "total": {"LUT": 1182240, "FF": 2364480, "DSP": 6840, "BRAM36": 2160, "URAM": 960},
     "shell_frac": 0.10,
     "shell_note": "10 % of every resource for the PCIe/DMA and DDR IP (XDMA, MIG)"},
    {"name": "VU13P", "kind": "device",
     "total": {"LUT": 1728000, "FF": 3456000, "DSP": 12288, "BRAM36": 2688, "URAM": 1280},
     "shell_frac": 0.10,
     "shell_note": "10 % of every resource for the PCIe/DMA and DDR IP (XDMA, MIG)"},
    {"name": "Alveo U250", "kind": "alveo",
     "total": {"LUT": 1728000, "FF": 3456000, "DSP": 12288, "BRAM36": 2688, "URAM": 1280},
     "user": {"LUT": 1379740, "FF": 2814332, "DSP": 11508, "BRAM36": 2000, "URAM": 1280},
     "shell_note": "dynamic region of xilinx_u250_xdma_201830_2 (sum of the four SLRs)"},
    {"name": "Alveo U280", "kind": "alveo",
     "total": {"LUT": 1303680, "FF": 2607360, "DSP": 9024, "BRAM36": 2016, "URAM": 960},
     "user": {"LUT": 1303680 - 107629, "FF": 2607360 - 136086, "DSP": 9024 - 4,
              "BRAM36": 2016 - 196, "URAM": 960},
     "shell_note": "device minus the static region of xilinx_u280_gen3x16_xdma_1_202211_1 "
                   "(107,629 LUT, 136,086 FF, 195.5 BRAM36, 4 DSP)"},
]

SOURCES = """\
- VU9P, VU13P: Xilinx DS890, *UltraScale Architecture and Product Data Sheet:
  Overview*, Virtex UltraScale+ device table (CLB LUTs, CLB flip-flops,
  DSP slices, Block RAM 36 Kb blocks = Mb / 36 Kb, UltraRAM 288 Kb blocks).
  XCU250 (Alveo U250) has the VU13P resources, XCU280 (Alveo U280) those
  listed for it in DS890 (VU37P-class die with HBM).
- Alveo U250 user region: `platforminfo` resource availability of
  xilinx_u250_xdma_201830_2, per SLR (345,171 / 344,533 / 344,878 / 345,158
  LUT; 2,877 DSP, 500 BRAM36, 320 URAM each), as tabulated by the ThunderGP
  project (Xtra-Computing/ThunderGP, libfpga/generator/devices/
  xilinx_u250_xdma_201830_2.h). For the VU9P-class U200 the same source and
  Xilinx UG1393 (*Resource Availability* example of xilinx_u200_xdma_201830)
  give 869K of 1,182K LUT: a shell of ~25 % on the die with the PCIe block.
- Alveo U280 static region: resources "not available to the user" of the
  xilinx_u280_gen3x16_xdma_1_202211_1 platform (LUT 107,629, FF 136,086,
  BRAM36 195.5, DSP 4, URAM 0), as a published platform table lists them.
  An assumption until a U280 is measured: neither the table's tool nor
  `platforminfo` on that platform was run here. Device totals as DS890.
"""

# Assumptions of the model.
UTIL_LOGIC = 0.80      # LUT and FF: at most 80 % of what is left (routability, timing)
UTIL_HARD = 0.95       # DSP, BRAM, URAM: at most 95 %
WORDS_PER_BRAM18 = 512   # 512 x 36 (32-bit words); a BRAM36 is two
WORDS_PER_URAM = 4096    # 4K x 72 at native width (the current RTL's 32-bit RAM)
ACC_LUTRAM_WORDS = 64    # accumulator RAM kept in LUT-RAM up to this depth
RAM_STEP_LOSS = 0.02     # BRAM point: give up at most 2 % of the PEs for one more RAMB18 each
CHAIN_LEN = 16           # PEs per chain at device scale (the NumPe 256 engine's chains of 16)
NS_PER_LEVEL = 0.5       # LUT + local route, UltraScale+ -2/-3
NS_FIXED = 1.0           # clock-to-out + setup + skew/jitter
FMAX_CAP = 600.0         # MHz: block RAM / DSP Fmax region without output registers


def words_needed(g, h, p):
    return math.ceil(g * h / p) * h


def max_hidden(g, p, words):
    h = 0
    while words_needed(g, h + 1, p) <= words:
        h += 1
    return h


def fmax_from_levels(levels):
    return min(FMAX_CAP, 1000.0 / (NS_FIXED + NS_PER_LEVEL * levels))


def usable(dev, fixed):
    base = dev.get("user")
    if base is None:
        base = {k: v * (1 - dev["shell_frac"]) for k, v in dev["total"].items()}
    u = {}
    for k, v in base.items():
        frac = UTIL_LOGIC if k in ("LUT", "FF") else UTIL_HARD
        u[k] = math.floor(v * frac - fixed.get(k, 0))
    return base, u


def acc_b18(h):
    """RAMB18 a PE's accumulator RAM (32 bits x max(H, rows) words) needs: none
    up to ACC_LUTRAM_WORDS words (LUT-RAM, inside the measured PE cost), else
    one RAMB18 per 512 words."""
    return 0 if h <= ACC_LUTRAM_WORDS else math.ceil(h / 512)


def fit(g, p, b18_pe, uram_pe):
    """Largest H of cell type g (G gate rows per unit) a chain of p PEs holds
    when each PE has b18_pe RAMB18 and uram_pe URAM for weights and
    accumulators."""
    best = 0
    h = 1
    while True:
        words = math.ceil(g * h / p) * h
        rest = b18_pe - acc_b18(h)
        if rest < 0:
            break
        cap = uram_pe * WORDS_PER_URAM + rest * WORDS_PER_BRAM18
        if words > cap:
            break
        best = h
        h += 1
    return best


def chained(p):
    """The PEs of a build of at most p PEs in whole chains of CHAIN_LEN."""
    return p // CHAIN_LEN * CHAIN_LEN


def logic_limit(avail, per_pe, per_chain):
    """Most PEs, in whole chains, whose cost p * per_pe + (p / CHAIN_LEN - 1) *
    per_chain (a join node per chain beyond the first) fits `avail`."""
    return chained(int((avail + per_chain) // (per_pe + per_chain / CHAIN_LEN)))


def model(inputs):
    pe, fixed, ch = inputs["per_pe"], inputs["fixed"], inputs["per_chain"]
    levels = inputs["levels"]
    f_est = fmax_from_levels(levels)
    rows = []
    for dev in DEVICES:
        base, u = usable(dev, fixed)
        logic = {k: logic_limit(u[k], pe[k], ch[k]) for k in ("LUT", "FF", "DSP")}
        b18 = 2 * u["BRAM36"]
        for cfg in ("BRAM", "URAM"):
            lim = dict(logic)
            if cfg == "BRAM":
                lim["RAM"] = chained(b18)         # at least one RAMB18 per PE
            else:
                lim["RAM"] = chained(u["URAM"])   # one URAM per PE
            p = int(min(lim.values()))
            bind = min(lim, key=lambda k: lim[k])
            if p <= 0:
                continue
            uram_pe = 1 if cfg == "URAM" else 0
            b18_pe = b18 // p
            # Just past a RAMB18 step, a few PEs fewer give every PE one more
            # RAMB18 (a larger resident layer): take it.
            if cfg == "BRAM" and chained(b18 // (b18_pe + 1)) >= p * (1 - RAM_STEP_LOSS):
                p, bind = chained(b18 // (b18_pe + 1)), "RAM"
                b18_pe = b18 // p
            rows.append({
                "device": dev["name"], "config": cfg, "base": {k: int(v) for k, v in base.items()},
                "usable": u, "limits": {k: int(v) for k, v in lim.items()}, "pes": p,
                "chains": p // CHAIN_LEN, "binds": bind,
                "b18_per_pe": b18_pe, "uram_per_pe": uram_pe,
                "h_lstm": fit(4, p, b18_pe, uram_pe), "h_gru": fit(3, p, b18_pe, uram_pe),
                "gflops_est": round(2 * p * f_est / 1000.0, 1),
            })
    return rows, f_est


def render(inputs):
    rows, f_est = model(inputs)
    pe, fixed, ch = inputs["per_pe"], inputs["fixed"], inputs["per_chain"]
    L = []
    L.append("# Capacity model")
    L.append("")
    L.append("Generated by `fpga/yosys/capacity.py` from the synthesis report of `make synth`")
    L.append("(Yosys 0.23 estimates, see the \"Synthesis estimates\" section of")
    L.append("`performance.md`). Do not edit by hand: `make synth` rewrites this file, and")
    L.append("the CTest test `capacity_doc_current` fails when it no longer matches what the")
    L.append("tool computes from the inputs embedded at the end.")
    L.append("")
    L.append("## Inputs")
    L.append("")
    L.append("| cost | LUT | FF | DSP48E2 | BRAM36 | URAM |")
    L.append("|---|---:|---:|---:|---:|---:|")
    L.append("| per PE (%s), weight RAM excluded | %d | %d | %d | %s | 0 |" %
             (inputs["per_pe_source"], pe["LUT"], pe["FF"], pe["DSP"], pe.get("BRAM36_other", 0)))
    L.append("| per chain beyond the first (%s) | %d | %d | %d | 0 | 0 |" %
             (inputs["per_chain_source"], ch["LUT"], ch["FF"], ch["DSP"]))
    L.append("| fixed (%s) | %d | %d | %d | %s | %d |" %
             (inputs["fixed_source"], fixed["LUT"], fixed["FF"], fixed["DSP"], fixed["BRAM36"],
              fixed.get("URAM", 0)))
    L.append("")
    L.append("Worst register-to-register logic depth: %d LUT levels (%s)." %
             (inputs["levels"], inputs["levels_source"]))
    L.append("")
    L.append("## Assumptions")
    L.append("")
    L.append("- User region: the Alveo platform's dynamic region; for a bare VU9P/VU13P,")
    L.append("  the device minus 10 % of every resource for the PCIe/DMA and DDR IP. Then at most")
    L.append("  %d %% of the remaining LUT and FF (routability and timing closure) and" % (UTIL_LOGIC * 100))
    L.append("  %d %% of DSP, BRAM and URAM, minus the fixed part (the engine's beside" % (UTIL_HARD * 100))
    if "in context" in inputs["fixed_source"]:
        L.append("  its chain, and the farnn_core shell's: its parts and its own logic beside")
        L.append("  them, the counters, fault and interrupt logic and the register slices at")
        L.append("  the parts' boundaries; performance.md, \"The shell (farnn_core)\").")
    else:
        L.append("  its chain, and the farnn_core shell's parts'). Not counted: `farnn_core`'s")
        L.append("  own logic beside its parts (counters, fault and interrupt logic, the")
        L.append("  register slices at the parts' boundaries).")
    L.append("- The PEs come in chains of %d (`NumChains` = PEs / %d): each chain beyond" % (CHAIN_LEN, CHAIN_LEN))
    L.append("  the first adds a node of the join tree (an adder and registers for the")
    L.append("  four result lanes) as measured. The broadcast tree's registers (a")
    L.append("  token word per node, a node per four below it) are not counted.")
    L.append("- Each PE needs %d DSP48E2 and its LUT and FF as measured; RAM is uniform" % pe["DSP"])
    L.append("  over the chain (one `WeightDepth`): the remaining block RAM is shared out")
    L.append("  as whole RAMB18 per PE (%d words of 32 bits each), a URAM holds %d words" %
             (WORDS_PER_BRAM18, WORDS_PER_URAM))
    L.append("  (4K x 72 at native width; packing two words per row would double it).")
    L.append("- The accumulator RAM (32 bits x max(H, rows) words) is LUT-RAM up to %d" % ACC_LUTRAM_WORDS)
    L.append("  words (inside the measured PE cost) and takes one RAMB18 per 512 words above,")
    L.append("  from the PE's share; the result RAM (rows words) stays small.")
    L.append("- A layer fits when `ceil(G*H/P) * H <= words per PE` (G = 4 LSTM, 3 GRU),")
    L.append("  as the chain stores rows k = p (mod P) in PE p; the engine's `MaxHidden` and")
    L.append("  the accumulator/result RAMs (which grow with H; LUT-RAM at the measured size)")
    L.append("  must be built for that H.")
    L.append("- Peak throughput: 2 flops per MAC, one MAC per PE per cycle. Clock estimate")
    L.append("  from the logic depth with a rule of thumb of ours (not a vendor figure): %.1f ns" % NS_FIXED)
    L.append("  (clock-to-out, setup, skew) + %.1f ns per LUT level (LUT + local routing)" % NS_PER_LEVEL)
    L.append("  on UltraScale+ -2/-3, capped at %d MHz (block RAM and DSP without their" % FMAX_CAP)
    L.append("  output registers). A DSP48E2 that Yosys leaves without its multiplier and")
    L.append("  output registers counts %d levels on every path through it (2.44 ns: the" % flow.DSP_LEVELS)
    L.append("  Virtex UltraScale+ data sheet DS923 gives 410 MHz at -2 for a multiply")
    L.append("  without pipeline registers). %d levels -> %.1f MHz." % (inputs["levels"], f_est))
    L.append("")
    L.append("## Result")
    L.append("")
    L.append("Two design points per target: **BRAM** = as many PEs as the logic allows,")
    L.append("weights and accumulators in block RAM shared out evenly (or up to %d %% fewer" %
             round(RAM_STEP_LOSS * 100))
    L.append("where that gives every PE one more RAMB18: binds RAM); **URAM** = one")
    L.append("UltraRAM per PE for its weights (fewer PEs where URAMs are fewer than the")
    L.append("logic allows, but 4K words each) plus the block RAM shared out.")
    L.append("")
    L.append("| target | config | PEs | chains | binds | RAM per PE | max H LSTM | max H GRU | "
             "peak GFLOP/s @%.0f MHz |" % f_est)
    L.append("|---|---|---:|---:|---|---|---:|---:|---:|")
    for r in rows:
        ram = []
        if r["uram_per_pe"]:
            ram.append("%d URAM" % r["uram_per_pe"])
        if r["b18_per_pe"]:
            ram.append("%d RAMB18" % r["b18_per_pe"])
        L.append("| %s | %s | %d | %d | %s | %s | %d | %d | %.1f |" %
                 (r["device"], r["config"], r["pes"], r["chains"], r["binds"], " + ".join(ram) or "-",
                  r["h_lstm"], r["h_gru"], r["gflops_est"]))
    L.append("")
    L.append("User resources (LUT / FF / DSP48E2 / BRAM36 / URAM) and the PE limit each")
    L.append("resource sets (LUT / FF / DSP / RAM blocks) after the utilization ceilings and")
    L.append("the fixed part:")
    L.append("")
    seen = set()
    for r in rows:
        b, l = r["base"], r["limits"]
        if r["device"] not in seen:
            seen.add(r["device"])
            L.append("- %s: %d / %d / %d / %d / %d" % (r["device"], b["LUT"], b["FF"], b["DSP"],
                                                    b["BRAM36"], b["URAM"]))
        L.append("  - %s: %d / %d / %d / %d" % (r["config"], l["LUT"], l["FF"], l["DSP"], l["RAM"]))
    L.append("")
    L.append("## Sources")
    L.append("")
    L.append(SOURCES.rstrip())
    L.append("")
    for d in DEVICES:
        L.append("- %s user region: %s." % (d["name"], d["shell_note"]))
    L.append("")
    L.append("## Inputs (machine-readable)")
    L.append("")
    L.append("```json")
    L.append(json.dumps(inputs, indent=1, sort_keys=True))
    L.append("```")
    return "\n".join(L) + "\n"


def inputs_from_report(report):
    s = report["summary"]
    by = {b["block"]: b for b in report["blocks"]}
    if "pe_chain_per_pe" in s:
        per, src = s["pe_chain_per_pe"], "PE chain total / %d" % s["pe_chain_num_pe"]
    else:
        per, src = s["pe_block"], "pe block"
    n = s.get("pe_chain_num_pe", 1)
    weight_bram = 1.0  # one RAMB36 per PE at WeightDepth 1024 (checked by the flow)
    pe = {"LUT": math.ceil(per["LUT"]), "FF": math.ceil(per["FF"]), "DSP": math.ceil(per["DSP48E2"]),
          "BRAM36_other": round(max(0.0, per["RAMB36"] - weight_bram), 2)}
    # The fixed part: the engine minus its chain, plus the shell: farnn_core
    # minus its engine, synthesized in context (its parts and its own logic
    # beside them) where the run has it, else the parts' blocks at their
    # counts when every part was synthesized (its own logic left out).
    fx = dict(s["engine_fixed"])
    fsrc = "engine P4 minus its PE chain"
    sp = s.get("shell_parts")
    res = ("LUT", "FF", "DSP48E2", "RAMB36", "URAM")
    if "shell" in s:
        fx = {k: fx[k] + s["shell"]["total"][k] for k in res}
        fsrc += ", plus the shell (farnn_core at P4 minus its engine, in context)"
    elif sp and not sp["missing"]:
        fx = {k: fx[k] + sp["total"][k] for k in res}
        fsrc += ", plus the shell's parts (farnn_core at P4; its own logic beside them not counted)"
    fixed = {"LUT": math.ceil(fx["LUT"]), "FF": math.ceil(fx["FF"]), "DSP": math.ceil(fx["DSP48E2"]),
             "BRAM36": math.ceil(fx["RAMB36"]), "URAM": math.ceil(fx["URAM"])}
    # A join node: chain_join at JOIN_CHAINS chains holds JOIN_CHAINS - 1.
    jr = by.get("chain_join")
    if not jr or jr.get("status") != "ok":
        raise SystemExit("capacity: the report has no chain_join block (the cost of a chain)")
    n_join = blocks.JOIN_CHAINS - 1
    jres = jr["resources"]
    per_chain = {"LUT": math.ceil(jres["LUT"] / n_join), "FF": math.ceil(jres["FF"] / n_join),
                 "DSP": math.ceil(jres["DSP48E2"] / n_join)}
    csrc = "chain_join of %d chains, %d lanes, / %d" % (blocks.JOIN_CHAINS, blocks.JOIN_LANES, n_join)
    # The engine and the shell share one clock: its estimate is the worst
    # path over the engine, the PE chain, the chained structure a board
    # builds (chains, broadcast and join trees), every shell part
    # synthesized and the assembled core mapped flat (farnn_core_flat; the
    # hierarchical farnn_core maps its parts one by one, for their figures
    # in context, and its depth across their boundaries is not counted).
    levels, lsrc, seen = 0, "", []
    clocked = ("engine", "pe_chain", "pe_chain_p16", "chain_join") + tuple(blocks.SHELL_PARTS) + \
        ("farnn_core_flat",)
    for name in clocked:
        if name in by and by[name].get("depth", {}).get("reg_to_reg"):
            seen.append(name)
            lv = by[name]["depth"]["reg_to_reg"]["lut_levels"]
            if lv > levels:
                levels, lsrc = lv, name
    lsrc = "%s, Yosys netlist; worst of %s" % (lsrc, ", ".join(seen))
    return {"per_pe": pe, "per_pe_source": src, "per_chain": per_chain, "per_chain_source": csrc, "fixed": fixed,
            "fixed_source": fsrc, "levels": levels,
            "levels_source": lsrc}


def extract_inputs(md):
    start = md.index("## Inputs (machine-readable)")
    a = md.index("```json", start) + len("```json")
    b = md.index("```", a)
    return json.loads(md[a:b])


def main(argv):
    if len(argv) >= 2 and argv[0] == "--check":
        md = open(argv[1]).read()
        want = render(extract_inputs(md))
        if md != want:
            print("capacity: %s is stale: run `make synth` (or fpga/yosys/capacity.py on the report)" % argv[1])
            return 1
        print("capacity: %s is current" % argv[1])
        return 0
    if not argv:
        print(__doc__)
        return 2
    report = json.load(open(argv[0]))
    out = DEFAULT_OUT
    if len(argv) >= 3 and argv[1] == "--out":
        out = argv[2]
    md = render(inputs_from_report(report))
    with open(out, "w") as f:
        f.write(md)
    print("capacity: wrote %s" % out)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
