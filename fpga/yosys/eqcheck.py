#!/usr/bin/env python3
"""Post-synthesis equivalence check: RTL vs. its Yosys netlist, side by side.

The mapped netlist of a block (Yosys `synth_xilinx -family xcup`, written back
as Verilog) and the block's RTL are compiled into one Verilator simulation
with a generated testbench. Both copies get the same random stimulus (biased
per block: legal configurations, valid bits high often, FP operands near 1.0
as well as special values, random resets) and every output is compared twice
per cycle: after the inputs change (combinational outputs) and after the
clock edge. Primitives come from Yosys's own cells_sim.v (LUTs, FFs, CARRY4,
MUXF, LUT-RAM, SRL) and, where Yosys 0.23 has none (DSP48E2, RAMB18E2,
RAMB36E2, URAM288), from our models in sim_models/.

Both copies are compiled with SYNTHESIS defined (the RTL Yosys saw: no
simulation-only assertions) and with every X resolved to 0, as in hardware
with INIT values of 0 (FFs, RAMs).

Usage: eqcheck.py BLOCK --netlist-dir DIR [--cycles N] [--seed S] [--json OUT]
(the netlist directory is what synth.py writes for the block; blocks.py
defines the blocks and their stimulus profiles).
Exit status 0: equal; 1: mismatch; 2: the netlist uses primitives or pins
the models do not cover; 3: simulation build failed.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

import blocks
import flow

YOSYS_CELLS_SIM = "/usr/share/yosys/xilinx/cells_sim.v"
MODELS = os.path.join(flow.HERE, "sim_models")
sys.path.insert(0, MODELS)
import gen_bram_models  # noqa: E402  (our block RAM models, generated per run)

OWN_MODELS = {"DSP48E2": "DSP48E2.v", "RAMB36E2": "RAMB36E2.v", "RAMB18E2": "RAMB18E2.v",
              "URAM288": "URAM288.v"}
# DSP48E2 outputs our model produces.
DSP_MODELLED_OUTPUTS = {"P", "PCOUT", "ACOUT", "BCOUT"}
# Primitives whose Yosys model we trust as is.
YOSYS_MODELLED = (flow.LUT_TYPES | flow.FF_TYPES | flow.MUXF_TYPES | flow.CARRY_TYPES |
                  set(flow.LUTRAM_LUTS) | flow.SRL_TYPES | {"GND", "VCC"})


def yosys_share():
    """cells_sim.v of the installed Yosys (next to its binary)."""
    y = shutil.which("yosys")
    if y:
        p = os.path.join(os.path.dirname(os.path.realpath(y)), "..", "share", "yosys", "xilinx",
                         "cells_sim.v")
        if os.path.exists(p):
            return os.path.abspath(p)
    return YOSYS_CELLS_SIM


def check_primitives(mod):
    """Refuse netlists the simulation models cannot represent faithfully."""
    problems = []
    for n, c in mod["cells"].items():
        t = c["type"]
        if t in YOSYS_MODELLED:
            continue
        if t not in OWN_MODELS:
            problems.append("%s: primitive %s has no simulation model" % (n, t))
            continue
        conns = c["connections"]
        dirs = c.get("port_directions", {})
        if t == "DSP48E2":
            used = {p for p, d in dirs.items() if d == "output" and p in conns and
                    any(isinstance(b, int) for b in conns[p])}
            bad = used - DSP_MODELLED_OUTPUTS
            if bad:
                problems.append("%s: DSP48E2 outputs %s are not modelled" % (n, sorted(bad)))
            pr = c["parameters"]
            # A register the model clocks needs its clock enable connected.
            need = [("AREG", "CEA2"), ("BREG", "CEB2"), ("CREG", "CEC"), ("DREG", "CED"),
                    ("ADREG", "CEAD"), ("MREG", "CEM"), ("PREG", "CEP")]
            for reg, ce in need:
                if flow.pint(pr.get(reg, 1)) >= 1 and ce not in conns:
                    problems.append("%s: %s=%s with %s unconnected" % (n, reg, pr.get(reg, 1), ce))
        elif t == "URAM288":
            for p in ("CLK", "EN_A", "EN_B", "RDB_WR_A", "RDB_WR_B"):
                if p not in conns:
                    problems.append("%s: %s pin %s unconnected" % (n, t, p))
        else:
            for p in ("ENARDEN", "ENBWREN", "CLKARDCLK", "CLKBWRCLK"):
                if p not in conns:
                    problems.append("%s: %s pin %s unconnected" % (n, t, p))
    return problems


# ------------------------------------------------------------- testbench
FP_HELPERS = r"""
  // Random binary32 operands: mostly moderate normals (exercise the real
  // datapath), some fully random words, special values and extremes.
  function automatic logic [31:0] rnd_fp();
    int unsigned k;
    logic [31:0] v;
    k = $urandom_range(99);
    v = $urandom();
    if (k < 55) v[30:23] = 8'(127 + $signed($urandom_range(40)) - 20);
    else if (k < 65) v[30:23] = 8'(127 + $signed($urandom_range(6)) - 3);
    else if (k < 75) begin
      case ($urandom_range(9))
        0: v = 32'h0000_0000;
        1: v = 32'h8000_0000;
        2: v = 32'h7F80_0000;
        3: v = 32'hFF80_0000;
        4: v = 32'h7FC0_0000;
        5: v = {v[31], 8'h00, v[22:0]};           // subnormal
        6: v = {v[31], 8'h01, v[22:0]};           // smallest normals
        7: v = {v[31], 8'hFE, v[22:0]};           // largest normals
        8: v = {v[31], 8'hFF, v[22:0]};           // NaN / Inf
        default: v = {v[31], 8'(v[30:23] & 8'h07), v[22:0]};
      endcase
    end
    // else: fully random word
    return v;
  endfunction
  function automatic bit rnd_pct(int unsigned pct);
    return $urandom_range(99) < pct;
  endfunction
  function automatic int unsigned rnd_range(int unsigned lo, int unsigned hi);
    return lo + $urandom_range(hi - lo);
  endfunction
"""


def default_stimulus(name, width):
    if name.endswith("_valid_i"):
        return "rnd_pct(70)"
    if name.endswith("_ready_i"):
        return "rnd_pct(80)"
    if width == 32 and (re.search(r"data", name) or name in ("a_i", "b_i", "x_i")):
        return "rnd_fp()"
    words = (width + 31) // 32
    return "%d'({%s})" % (width, ", ".join(["$urandom()"] * words))


def gen_tb(top, params, ins, outs, prof, cycles):
    clk = prof.get("clock", "clk_i")
    rst = prof.get("reset", "rst_i")
    permille = prof.get("reset_permille", 4)
    stim = prof.get("inputs", {})
    L = ["`timescale 1ns/1ps", "module eq_tb;"]
    for n, w in ins:
        L.append("  logic [%d:0] in_%s = '0;" % (w - 1, n))
    for n, w in outs:
        L.append("  logic [%d:0] rtl_%s, syn_%s, prev_%s;" % (w - 1, n, n, n))
    pstr = ", ".join(".%s(%s)" % (k, v) for k, v in params.items())
    conn_r = ", ".join([".%s(in_%s)" % (n, n) for n, _ in ins] + [".%s(rtl_%s)" % (n, n) for n, _ in outs])
    conn_s = ", ".join([".%s(in_%s)" % (n, n) for n, _ in ins] + [".%s(syn_%s)" % (n, n) for n, _ in outs])
    L.append("  %s %s u_rtl (%s);" % (top, "#(%s)" % pstr if pstr else "", conn_r))
    L.append("  %s_syn u_syn (%s);" % (top, conn_s))
    L.append("  int unsigned cyc = 0;")
    L.append("  int unsigned errs = 0;")
    L.append("  longint unsigned checks = 0;")
    L.append("  int unsigned toggled = 0;")
    L.append("  int unsigned active = 0;")
    L.append("  int unsigned resets = 0;")
    L.append(FP_HELPERS)
    if prof.get("decls"):
        L.append(prof["decls"])
    cmp = []
    for n, w in outs:
        cmp.append('    if (rtl_%s !== syn_%s) begin errs++; if (errs <= 10) '
                   '$display("MISMATCH cycle %%0d %%s %s: rtl=%%h syn=%%h", cyc, where, rtl_%s, syn_%s); end'
                   % (n, n, n, n, n))
    L.append("  task automatic check(string where);")
    L.append("    checks++;")
    L.extend(cmp)
    L.append("  endtask")
    L.append("  initial begin")
    L.append("    for (cyc = 0; cyc < %d; cyc++) begin" % cycles)
    for n, w in ins:
        if n == clk:
            continue
        if n == rst:
            rexpr = prof.get("reset_expr", "$urandom_range(999) < %d" % permille)
            L.append("      in_%s = (cyc < 4 || (%s)) ? 1'b1 : 1'b0;" % (n, rexpr))
            L.append("      if (cyc >= 4 && in_%s) resets++;" % n)
            continue
        expr = stim.get(n, default_stimulus(n, w))
        L.append("      in_%s = %d'(%s);" % (n, w, expr))
    if prof.get("drive"):
        L.append(prof["drive"])
    L.append('      #1 check("before edge");')
    if prof.get("pre"):
        L.append(prof["pre"])
    L.append("      in_%s = 1'b1;" % clk)
    L.append('      #1 check("after edge");')
    tog = " || ".join("rtl_%s != prev_%s" % (n, n) for n, _ in outs) or "0"
    L.append("      if (cyc > 0 && (%s)) toggled++;" % tog)
    L.append("      if (%s) active++;" % prof.get("activity", "0"))
    if prof.get("post"):
        L.append(prof["post"])
    for n, _ in outs:
        L.append("      prev_%s = rtl_%s;" % (n, n))
    L.append("      in_%s = 1'b0;" % clk)
    L.append("      #1;")
    L.append("    end")
    extra = prof.get("report", "")
    L.append('    $display("EQRESULT cycles=%%0d checks=%%0d errs=%%0d toggled=%%0d active=%%0d resets=%%0d%s", '
             'cyc, checks, errs, toggled, active, resets%s);'
             % (extra[0] if extra else "", (", " + extra[1]) if extra else ""))
    L.append("    $finish;")
    L.append("  end")
    L.append("endmodule")
    return "\n".join(L) + "\n"


def run(block_name, netlist_dir, cycles=None, seed=1, workdir=None, keep=False, fast_build=False):
    b = blocks.BLOCKS[block_name]
    top, params = b["top"], b["params"]
    prof = b.get("eq", {})
    cycles = cycles or prof.get("cycles", 3000)
    mod = flow.load_netlist(netlist_dir, top)
    res = {"block": block_name, "cycles": cycles, "seed": seed}
    probs = check_primitives(mod)
    if probs:
        res.update(status="unmodelled", problems=probs[:20])
        return 2, res
    ports = mod["ports"]
    ins = [(n, len(p["bits"])) for n, p in ports.items() if p["direction"] == "input"]
    outs = [(n, len(p["bits"])) for n, p in ports.items() if p["direction"] == "output"]
    workdir = workdir or os.path.join(netlist_dir, "eq")
    if os.path.isdir(workdir):
        shutil.rmtree(workdir)
    os.makedirs(workdir)
    with open(os.path.join(workdir, "eq_tb.sv"), "w") as f:
        f.write(gen_tb(top, params, ins, outs, prof, cycles))
    used = {c["type"] for c in mod["cells"].values()}
    generated = gen_bram_models.write_models(workdir)
    models = [generated.get(t, os.path.join(MODELS, OWN_MODELS[t])) for t in sorted(used) if t in OWN_MODELS]
    # C++ optimisation: -O0 builds fastest (small blocks, few cycles); the
    # engine's long run wants -O1.
    opt = "OPT_FAST=-O0 OPT_SLOW=-O0 OPT_GLOBAL=-O0" if fast_build else \
        "OPT_FAST=-O1 OPT_SLOW=-O0 OPT_GLOBAL=-O1"
    defs = ["+define+SYNTHESIS"]
    cmd = (["verilator", "--binary", "--timing", "-Wno-fatal", "-Wno-lint", "-Wno-style",
            "-Wno-MULTIDRIVEN", "--x-assign", "0", "--x-initial", "0", "--converge-limit", "10000",
            "-O3", "--top-module", "eq_tb", "-j", "2", "--Mdir", "obj",
            "-MAKEFLAGS", opt] + defs +
           flow.rtl_files() + [yosys_share()] + models +
           [os.path.join(netlist_dir, "netlist.v"), "eq_tb.sv"])
    t0 = time.time()
    r = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, errors="replace")
    res["build_s"] = round(time.time() - t0, 1)
    if r.returncode:
        errs = "\n".join(l for l in (r.stdout + r.stderr).splitlines() if "%Error" in l or "error" in l)
        res.update(status="build-failed", log=errs[-3000:])
        with open(os.path.join(workdir, "build.log"), "w") as f:
            f.write(r.stdout + r.stderr)
        return 3, res
    t0 = time.time()
    r = subprocess.run(["./obj/Veq_tb", "+verilator+seed+%d" % seed, "+verilator+rand+reset+0"],
                       cwd=workdir, capture_output=True, text=True, errors="replace", timeout=3600)
    res["run_s"] = round(time.time() - t0, 1)
    out = r.stdout + r.stderr
    with open(os.path.join(workdir, "run.log"), "w") as f:
        f.write(out)
    m = re.search(r"EQRESULT (.*)", out)
    if not m:
        res.update(status="sim-failed", log=out[-3000:])
        return 1, res
    kv = dict(x.split("=", 1) for x in m.group(1).split())
    stats = {k: int(v) if re.fullmatch(r"-?\d+", v) else v for k, v in kv.items()}
    res.update(stats)
    res["mismatches"] = [l for l in out.splitlines() if l.startswith("MISMATCH")][:10]
    res["collisions"] = len([l for l in out.splitlines() if "BRAM-COLLISION" in l])
    ok = r.returncode == 0 and stats.get("errs", 1) == 0 and res["collisions"] == 0
    res["status"] = "equal" if ok else "MISMATCH"
    if ok and not keep:
        shutil.rmtree(os.path.join(workdir, "obj"), ignore_errors=True)
    return (0 if ok else 1), res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("block", choices=sorted(blocks.BLOCKS))
    ap.add_argument("--netlist-dir", required=True)
    ap.add_argument("--cycles", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--fast-build", action="store_true", help="compile the simulation with -O0")
    a = ap.parse_args()
    rc, res = run(a.block, a.netlist_dir, a.cycles, a.seed, keep=a.keep, fast_build=a.fast_build)
    print(json.dumps(res, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    sys.exit(rc)


if __name__ == "__main__":
    main()
