"""Common helpers of the FARNN Yosys estimate flow (stdlib only).

- the ordered RTL file list rtl/files.f (the only list Yosys reads);
- running Yosys 0.23 `synth_xilinx -family xcup` on one block, with the
  intermediate checks (latches, multiplies left for LUTs, memories);
- netlist analysis of the mapped design (write_json): resources per
  primitive class, register-to-register logic depth in LUT levels, and the
  slowest path in the delays ABC maps with (the budget of its area recovery).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
FILES_F = os.path.join(ROOT, "rtl", "files.f")


def rtl_files(files_f=FILES_F):
    """The ordered file list: absolute paths, comments and blank lines skipped."""
    out = []
    base = os.path.dirname(os.path.dirname(os.path.abspath(files_f)))
    with open(files_f) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("//") or line.startswith("#"):
                continue
            out.append(os.path.join(base, line))
    return out


def defines():
    return {"SYNTHESIS": None}


# ----------------------------------------------------------------- Yosys run
def yosys_script(top, params, workdir, keep=(), uram=False):
    """Yosys commands for one block. Synthesis runs in two halves around the
    DSP mapping so that the multiplies Yosys could not put on DSPs (they go to
    LUTs as $mul) and any latch ($dlatch, inferred by `proc`) are recorded
    before they disappear into generic logic."""
    # The sources by their path in the repository (Yosys runs from ROOT):
    # the names Yosys gives cells carry the source path, and ABC's mapping
    # moves with the names, so absolute paths would make the figures depend
    # on where the clone lives.
    files = [os.path.relpath(f, ROOT) for f in rtl_files()]
    # String defines go through a `define file read first: a -D value with
    # quotes does not survive Yosys's script tokenizer.
    vh = os.path.join(workdir, "farnn_defines.vh")
    with open(vh, "w") as f:
        for k, v in defines().items():
            f.write("`define %s%s\n" % (k, "" if v is None else " " + v))
    files = [vh] + files
    defs = ""
    chp = " ".join("-set %s %s" % (k, v) for k, v in params.items())
    s = []
    s.append("read_verilog -sv -noassert %s %s" % (defs, " ".join(files)))
    if params:
        s.append("chparam %s %s" % (chp, top))
    s.append("hierarchy -check -top %s" % top)
    # Some tops come out of chparam + hierarchy under their derived name
    # ($paramod$<hash>\sequencer); synth_xilinx -top needs the plain one (a
    # no-op for a top that kept it).
    s.append("rename -top %s" % top)
    if keep:
        # Submodules reported on their own (in context): kept as hierarchy
        # through synthesis, counted per module, flattened afterwards.
        s.append("setattr -mod -set keep_hierarchy 1 %s" % " ".join("*%s" % m for m in keep))
    # -abc9: carry chains go to ABC as boxes. With the default ABC flow,
    # Yosys 0.23 hands CARRY4 outputs to ABC as free inputs, and ABC may
    # rebuild a carry chain's S input from logic that depends on the chain's
    # own carry out: a structural combinational loop (seen in fp_add's
    # magnitude compare; its netlist does not settle in simulation).
    opts = "-family xcup -flatten -noiopad -noclkbuf -abc9 -top %s" % top
    # -uram lets memory mapping use UltraRAM (URAM288) for arrays marked
    # (* ram_style = "ultra" *); only the blocks that ask for it, so the
    # others map as they always did.
    if uram:
        opts += " -uram"
    # ABC's wire delay into a LUT input (ABC_WIRE_PS, below): the clock
    # estimate counts LUT levels, so ABC maps with a level costing what it
    # costs there and carries almost free.
    s.append("scratchpad -set synth_xilinx.abc9.W %d" % ABC_WIRE_PS)
    # ABC's `&mfs` pass (don't-care resynthesis after `&if`) bounds a node's
    # level only between boxes (carry chains), so it may add LUT levels in
    # front of a carry chain that `&if` had mapped within its delay: on the
    # flat engine it took two PEs' adder alignment from 6 levels to 8 for
    # under 1 % of the LUTs (docs/decisions.md, "`&mfs` off").
    s.append("scratchpad -set abc9.nomfs 1")
    # ABC's script: Yosys' "flow3" (map, then restructure for delay with
    # &syn2, &dch and &synch2, mapping after each and keeping the best with
    # &save / &load) without its closing &mfs (above). On the flat engine it
    # kept 7 levels for 4.6 % fewer LUTs than the default script (&dch, one
    # &if) and a shorter delay in ABC's own figures (docs/decisions.md,
    # "ABC's script"). Each mapping `&if` runs with -q: no preprocessing.
    # Its preprocessing ends in an area-oriented mapping that ignores the
    # delay the passes before it reached, and the area recovery after it
    # keeps what that mapping gives: the flat core at 7 levels where every
    # delay-oriented pass had 6 (docs/decisions.md, "ABC without
    # preprocessing"). Its `&synch2` runs with -r (no choice whose support
    # is redundant): without it, a choice could hang a carry box's input on
    # a node in the box's own fan-out, and ABC stopped with "Boxes are not in
    # a topological order" (the flat core with the FORWARD state loader;
    # docs/decisions.md, "`&synch2 -r`").
    s.append('scratchpad -set abc9.script "%s"' % ABC_SCRIPT)
    s.append("synth_xilinx %s -run begin:coarse" % opts)
    s.append("tee -q -o %s stat" % os.path.join(workdir, "stat_premap.txt"))
    s.append("tee -q -o %s dump t:$mul" % os.path.join(workdir, "softmul.il"))
    s.append("synth_xilinx %s -run coarse:map_memory" % opts)
    s.append("tee -q -o %s select -list t:$mem_v2" % os.path.join(workdir, "memories.txt"))
    s.append("synth_xilinx %s -run map_memory:" % opts)
    s.append("tee -q -o %s stat -tech xilinx" % os.path.join(workdir, "stat.txt"))
    if keep:
        # The modules as ABC mapped them, one by one (abc_delay per module).
        s.append("write_json %s" % os.path.join(workdir, "netlist_hier.json"))
        s.append("setattr -mod -unset keep_hierarchy")
        s.append("flatten")
    s.append("hierarchy -top %s -purge_lib" % top)
    s.append("write_json %s" % os.path.join(workdir, "netlist.json"))
    s.append("rename %s %s_syn" % (top, top))
    s.append("write_verilog -noattr %s" % os.path.join(workdir, "netlist.v"))
    return s


def run_yosys(top, params, workdir, keep=(), uram=False):
    workdir = os.path.abspath(workdir)  # Yosys runs from ROOT
    os.makedirs(workdir, exist_ok=True)
    # A per-module netlist from an earlier run that kept hierarchy would be
    # read as this run's (abc_budgets).
    hier = os.path.join(workdir, "netlist_hier.json")
    if os.path.exists(hier):
        os.remove(hier)
    script = yosys_script(top, params, workdir, keep, uram)
    ys = os.path.join(workdir, "synth.ys")
    with open(ys, "w") as f:
        f.write("\n".join(script) + "\n")
    t0 = time.time()
    r = subprocess.run(["yosys", "-q", "-l", os.path.join(workdir, "yosys.log"), "-s", ys],
                       cwd=ROOT, capture_output=True, text=True)
    dt = time.time() - t0
    if r.returncode != 0:
        tail = (r.stdout + r.stderr)[-3000:]
        raise RuntimeError("yosys failed on %s (%s):\n%s" % (top, workdir, tail))
    return dt


def parse_premap(workdir):
    """Cells left after DSP mapping: soft multiplies and latches."""
    txt = open(os.path.join(workdir, "stat_premap.txt")).read()
    counts = {}
    for m in re.finditer(r"^\s+(\$\S+)\s+(\d+)\s*$", txt, re.M):
        counts[m.group(1)] = counts.get(m.group(1), 0) + int(m.group(2))
    mems = []
    p = os.path.join(workdir, "memories.txt")
    if os.path.exists(p):
        for line in open(p):
            line = line.strip()
            if "/" in line:
                mems.append(line.split("/", 1)[1])
    return counts, mems


# ------------------------------------------------------------ netlist model
LUT_TYPES = {"LUT1", "LUT2", "LUT3", "LUT4", "LUT5", "LUT6", "LUT6_2", "INV"}
# LUTs a LUT-RAM / SRL primitive occupies.
LUTRAM_LUTS = {"RAM16X1S": 1, "RAM32X1S": 1, "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4,
               "RAM512X1S": 8, "RAM16X1D": 2, "RAM32X1D": 2, "RAM64X1D": 2, "RAM128X1D": 4,
               "RAM256X1D": 8, "RAM32M": 4, "RAM32M16": 8, "RAM64M": 4, "RAM64M8": 8,
               "RAM32X16DR8": 8, "RAM64X8SW": 8}
SRL_TYPES = {"SRL16", "SRL16E", "SRLC16", "SRLC16E", "SRLC32E"}
FF_TYPES = {"FDRE", "FDSE", "FDCE", "FDPE", "FDRE_1", "FDSE_1", "FDCE_1", "FDPE_1"}
LATCH_TYPES = {"LDCE", "LDPE", "LDCPE", "$dlatch", "$adlatch", "$dlatchsr", "$_DLATCH_P_",
               "$_DLATCH_N_"}
MUXF_TYPES = {"MUXF7", "MUXF8", "MUXF9"}
CARRY_TYPES = {"CARRY4", "CARRY8"}
BRAM_TYPES = {"RAMB18E2": 0.5, "RAMB36E2": 1.0}
URAM_TYPES = {"URAM288", "URAM288_BASE"}
DSP_TYPES = {"DSP48E2"}
CLOCK_PORTS = ("C", "CLK", "WCLK", "CLKARDCLK", "CLKBWRCLK")


def bit_drivers(cells):
    """{net bit: (cell, output port, bit index)}."""
    driver = {}
    for n, c in cells.items():
        for p, bits in c["connections"].items():
            if c.get("port_directions", {}).get(p) == "output":
                for i, b in enumerate(bits):
                    if isinstance(b, int):
                        driver[b] = (n, p, i)
    return driver


def public_names(mod):
    """{net bit: the first public (RTL) net name that holds it}."""
    names = {}
    for nn, nv in mod["netnames"].items():
        if not nn.startswith("$"):
            for b in nv["bits"]:
                if isinstance(b, int):
                    names.setdefault(b, nn)
    return names


def load_netlist(workdir, top):
    d = json.load(open(os.path.join(workdir, "netlist.json")))
    return d["modules"][top]


def pint(v):
    """A Yosys JSON parameter value (binary string or int) as int."""
    if isinstance(v, int):
        return v
    v = v.strip()
    if set(v) <= set("01xz") and v:
        return int(v.replace("x", "0").replace("z", "0"), 2)
    try:
        return int(v)
    except ValueError:
        return v


def resources(mod):
    """Resource counts of a mapped module."""
    r = {"LUT": 0, "LUT_logic": 0, "LUT_mem": 0, "SRL": 0, "FF": 0, "CARRY4": 0,
         "CARRY8_eq": 0, "MUXF": 0, "DSP48E2": 0, "RAMB36": 0.0, "RAMB36E2": 0, "RAMB18E2": 0,
         "URAM": 0, "LATCH": 0, "other": {}}
    cells = mod["cells"]
    for name, c in cells.items():
        t = c["type"]
        if t in LUT_TYPES:
            r["LUT_logic"] += 1
        elif t in LUTRAM_LUTS:
            r["LUT_mem"] += LUTRAM_LUTS[t]
        elif t in SRL_TYPES:
            r["SRL"] += 1
        elif t in FF_TYPES:
            r["FF"] += 1
        elif t in CARRY_TYPES:
            r["CARRY4" if t == "CARRY4" else "CARRY8_eq"] += 1 if t == "CARRY4" else 0
        elif t in MUXF_TYPES:
            r["MUXF"] += 1
        elif t in DSP_TYPES:
            r["DSP48E2"] += 1
        elif t in BRAM_TYPES:
            r[t] += 1
            r["RAMB36"] += BRAM_TYPES[t]
        elif t in URAM_TYPES:
            r["URAM"] += 1
        elif t in LATCH_TYPES:
            r["LATCH"] += 1
        elif t in ("GND", "VCC"):
            pass
        else:
            r["other"][t] = r["other"].get(t, 0) + 1
    r["LUT"] = r["LUT_logic"] + r["LUT_mem"] + r["SRL"]
    r["CARRY8_eq"] = carry8_equivalent(mod)
    return r


def module_stats(workdir):
    """Per-module resources from the `stat -tech xilinx` text (hierarchical
    runs): {module base name: resources}; CARRY8 estimated as CARRY4 / 2."""
    txt = open(os.path.join(workdir, "stat.txt")).read()
    out = {}
    for m in re.finditer(r"^=== (\S+) ===\s*$(.*?)(?=^=== |\Z)", txt, re.M | re.S):
        name = m.group(1).split("\\")[-1]
        cells = {"cells": {}, "connections": {}}
        fake = {"cells": {}}
        k = 0
        for t, n in re.findall(r"^\s+(\S+)\s+(\d+)\s*$", m.group(2), re.M):
            for _ in range(int(n)):
                fake["cells"]["c%d" % k] = {"type": t, "connections": {}}
                k += 1
        r = resources(fake)
        r["CARRY8_eq"] = (r["CARRY4"] + 1) // 2
        out[name] = r
    return out


def carry8_equivalent(mod):
    """Yosys 0.23 maps every carry chain to CARRY4 (also for UltraScale+); a
    CARRY8 holds two of them, so a chain of n CARRY4 is ceil(n/2) CARRY8."""
    cells = {n: c for n, c in mod["cells"].items() if c["type"] == "CARRY4"}
    co_bit = {}
    for n, c in cells.items():
        co = c["connections"].get("CO", [])
        if co:
            co_bit[co[-1]] = n
    nxt = {}
    has_prev = set()
    for n, c in cells.items():
        ci = c["connections"].get("CI", [None])[0]
        if ci in co_bit:
            nxt[co_bit[ci]] = n
            has_prev.add(n)
    total = 0
    for n in cells:
        if n in has_prev:
            continue
        length, k = 0, n
        while k is not None:
            length += 1
            k = nxt.get(k)
        total += (length + 1) // 2
    return total


# -------------------------------------------------------------- logic depth
# Timing arcs. A cell input that is not the source of an arc ends a path; a
# cell output that is not the sink of an arc starts one. Costs are in LUT
# levels; `ext` is the Vivado-style count (every LUT, MUXF and CARRY8 on the
# path counts one; a CARRY4 half a CARRY8).
def cell_arcs(c):
    """[(input ports, output ports, lut_cost, ext_cost)] of a cell."""
    t = c["type"]
    dirs = c.get("port_directions", {})
    ins = [p for p, d in dirs.items() if d == "input"]
    outs = [p for p, d in dirs.items() if d == "output"]
    if t in LUT_TYPES:
        return [(ins, outs, 1, 1)]
    if t in MUXF_TYPES:
        return [(ins, outs, 0, 1)]
    if t in CARRY_TYPES:
        return [(ins, outs, 0, 0.5 if t == "CARRY4" else 1)]
    if t in LUTRAM_LUTS:
        # Asynchronous read: the read address to the data out is one LUT.
        # Write data, write enable and write address end paths (the RAM is
        # written on the clock). Single-port RAMs share the address: it is
        # both a write endpoint and a read arc.
        rd = [p for p in ins if p.startswith("ADDR") or re.match(r"^(A|DPRA|RADR)\d*$", p)]
        if t.startswith("RAM32M") or t.startswith("RAM64M"):
            last = "ADDRH" if t in ("RAM32M16", "RAM64M8") else "ADDRD"
            rd = [p for p in ins if p.startswith("ADDR") and p != last]
        return [(rd, outs, 1, 1)]
    if t in SRL_TYPES:
        # Q = shift register[A]: the address is a LUT input.
        rd = [p for p in ins if re.match(r"^A\d*$", p)]
        return [(rd, [p for p in outs if p.startswith("Q")], 1, 1)]
    if t in DSP_TYPES:
        return dsp_arcs(c, ins, outs)
    # FFs, block RAM, URAM: sequential.
    return []


# A DSP48E2 with neither its multiplier register (MREG) nor its output
# register (PREG) is combinational from its unregistered inputs to its
# outputs. DS923 (Virtex UltraScale+ data sheet, DSP48 switching
# characteristics) gives 410 MHz (-2) for a multiply without pipeline
# registers (MREG, ADREG): 2.44 ns register to register inside the slice, 5
# levels of our 0.5 ns a level. Such a DSP costs those 5 levels on every path
# through it, and its internally registered inputs (AREG, BREG, ...) start a
# path at 5 levels at its outputs. A DSP with MREG or PREG ends and starts
# paths, as block RAM does.
DSP_LEVELS = 5
DSP_INPUT_REG = {"A": "AREG", "ACIN": "AREG", "B": "BREG", "BCIN": "BREG", "C": "CREG", "D": "DREG",
                 "CARRYIN": "CARRYINREG", "OPMODE": "OPMODEREG", "ALUMODE": "ALUMODEREG",
                 "INMODE": "INMODEREG", "CARRYINSEL": "CARRYINSELREG"}
DSP_INTERNAL = "<registered inside>"


def dsp_arcs(c, ins, outs):
    pr = c.get("parameters", {})
    if pint(pr.get("MREG", 1)) or pint(pr.get("PREG", 1)):
        return []
    data = [p for p in ins if p != "CLK" and not p.startswith("CE") and not p.startswith("RST")]
    comb = [p for p in data if p not in DSP_INPUT_REG or not pint(pr.get(DSP_INPUT_REG[p], 0))]
    arcs = [(comb, outs, DSP_LEVELS, DSP_LEVELS)]
    if len(comb) < len(data):
        arcs.append(([DSP_INTERNAL], outs, DSP_LEVELS, DSP_LEVELS))
    return arcs


def carry_inputs(c, port, idx):
    """Inputs (port, bit index) that carry-cell output bit port[idx] depends
    on: CO[i] and O[i] see S[0..i], DI[0..i] (O[i]: DI[0..i-1]), CI, CYINIT."""
    conns = c["connections"]
    out = [("CI", 0), ("CYINIT", 0), ("CI_TOP", 0)]
    top = idx if port == "CO" else idx - 1
    out += [("S", k) for k in range(idx + 1)]
    out += [("DI", k) for k in range(top + 1)]
    return [(p, k) for p, k in out if p in conns and k < len(conns[p])]


def depth_analysis(mod, start_bits=None, end_filter=None):
    """Longest register-to-register path in LUT levels.

    Returns dict with reg_to_reg (worst), in_to_reg, reg_to_out, in_to_out,
    the unregistered DSP48E2s, and comb_loops (bits found on a structural
    combinational loop; the flow fails on any). With start_bits, only paths
    starting at those net bits count (used for the PE-chain links); with
    end_filter(cell name, cell), only the endpoints it accepts."""
    cells = mod["cells"]
    ports = mod["ports"]
    driver = bit_drivers(cells)
    arcs_of = {n: cell_arcs(c) for n, c in cells.items()}  # cell -> list of arcs
    top_in = set()
    for pn, p in ports.items():
        if p["direction"] == "input":
            top_in.update(b for b in p["bits"] if isinstance(b, int))
    # Arrival of a bit: per origin ("reg", "in"), the deepest path
    # (lut levels, ext levels, origin, path) or None (constant, or no path
    # from that origin). The origins are kept apart: a register path behind
    # a deeper path from an input is still a register-to-register path.
    memo = {}
    busy = set()
    loops = set()
    import sys
    sys.setrecursionlimit(200000)
    none = {"reg": None, "in": None}

    def better(cur, cand):
        return cand if cur is None or cand[:2] > cur[:2] else cur

    def arrival(bit):
        if not isinstance(bit, int):
            return none
        if bit in memo:
            return memo[bit]
        if bit in busy:
            loops.add(bit)
            return none
        busy.add(bit)
        res = dict(none)
        if start_bits is not None:
            if bit in start_bits:
                res["reg"] = (0, 0.0, "reg", (bit,))
        elif bit in top_in:
            res["in"] = (0, 0.0, "in", (bit,))
        if bit in driver:
            n, p, idx = driver[bit]
            c = cells[n]
            comb = False
            for ins, outs, lc, ec in arcs_of[n]:
                if p not in outs:
                    continue
                comb = True
                if ins == [DSP_INTERNAL]:
                    if start_bits is not None:
                        continue  # only the given start bits start paths
                    res["reg"] = better(res["reg"], (lc, ec, "reg", (n,)))
                    continue
                if c["type"] in CARRY_TYPES:
                    srcs = [c["connections"][ip][k] for ip, k in carry_inputs(c, p, idx)]
                else:
                    srcs = [b for ip in ins for b in c["connections"].get(ip, [])]
                for b in srcs:
                    for k, a in arrival(b).items():
                        if a is not None:
                            res[k] = better(res[k], (a[0] + lc, a[1] + ec, a[2], a[3] + (n,)))
            if not comb and start_bits is None:
                # output of a sequential cell (or of an arc-less cell)
                res["reg"] = better(res["reg"], (0, 0.0, "reg", (n,)))
        busy.discard(bit)
        memo[bit] = res
        return res

    worst = {"reg": None, "in": None}
    worst_out = {"reg": None, "in": None}
    through_dsp = None
    for n, c in cells.items():
        if end_filter is not None and not end_filter(n, c):
            continue
        arc_ins = set()
        for ins, outs, lc, ec in arcs_of[n]:
            arc_ins.update(ins)
        for p, bits in c["connections"].items():
            if c.get("port_directions", {}).get(p) != "input" or p in arc_ins:
                continue
            if p in CLOCK_PORTS:
                continue
            for b in bits:
                for k, a in arrival(b).items():
                    if a is not None and (worst[k] is None or a[:2] > worst[k][0][:2]):
                        worst[k] = (a, n, p)
    for pn, p in ports.items():
        if p["direction"] != "output":
            continue
        for b in p["bits"]:
            for k, a in arrival(b).items():
                if a is not None and (worst_out[k] is None or a[:2] > worst_out[k][0][:2]):
                    worst_out[k] = (a, "port", pn)
    # Paths through unregistered DSPs: worst arrival at its inputs plus the
    # worst path from its P output to an endpoint (computed from a second
    # pass with P as start bits would be costly; use the forward levels of
    # P's fanout cone).
    dsp_info = []
    for n, c in cells.items():
        if c["type"] not in DSP_TYPES:
            continue
        pr = c["parameters"]
        regs = {k: pint(pr.get(k, 1)) for k in ("AREG", "BREG", "MREG", "PREG")}
        if regs["MREG"] == 0 and regs["PREG"] == 0:
            best_in = 0
            for ip in ("A", "B", "C", "D", "PCIN"):
                for b in c["connections"].get(ip, []):
                    for a in arrival(b).values():
                        if a is not None:
                            best_in = max(best_in, a[0])
            dsp_info.append({"cell": n, "regs": regs, "lut_levels_before": best_in})

    names = public_names(mod)

    def cell_net(x):
        """A public net name the cell drives (its place in the RTL), if any."""
        if x not in cells:
            return names.get(x, "?") if isinstance(x, int) else "?"
        for p, bits in cells[x]["connections"].items():
            if cells[x].get("port_directions", {}).get(p) == "output":
                for b in bits:
                    if b in names:
                        return names[b]
        return ""

    def fmt(w):
        if w is None:
            return None
        a, n, p = w
        path = [cells[x]["type"] if x in cells else "bit" for x in a[3]]
        where = [cell_net(x) for x in a[3]]
        return {"lut_levels": a[0], "ext_levels": a[1], "end": "%s.%s" % (n, p),
                "end_type": cells[n]["type"] if n in cells else "port",
                "start": a[3][0] if not isinstance(a[3][0], int) else "bit %d" % a[3][0],
                "path_types": path, "path_nets": where,
                "end_net": next((names[b] for b in cells[n]["connections"].get("Q", []) if b in names), "")
                if n in cells else p}

    res = {
        "reg_to_reg": fmt(worst["reg"]),
        "in_to_reg": fmt(worst["in"]),
        "reg_to_out": fmt(worst_out["reg"]),
        "in_to_out": fmt(worst_out["in"]),
        "unregistered_dsps": dsp_info,
        "comb_loops": len(loops),
    }
    return res


# ---------------------------------------------------- ABC's delay budget
# ABC9 maps each block for delay in Yosys 0.23's xc7 timing (the xcup family
# has none of its own), then recovers area on every path up to the slowest
# one: that path's delay is the budget the LUT levels of all the others may
# grow into. The figures below are Yosys' own (share/yosys/xilinx/cells_sim.v
# specify blocks): a LUT's delay by input pin, the fastest pin on the latest
# input as ABC assigns them, the CARRY4 arcs, MUXF7/MUXF8; plus the wire into
# every LUT input, which the flow sets (`&if -W 20000` in the log) where
# synth_xilinx's default is 300 ps: at 300 ps a LUT level cost ABC 427-942 ps
# against 114 ps for four bits of carry (CI -> CO[3]), so its area recovery
# traded carries for LUT levels, which the clock estimate (0.5 ns a level,
# carries free) counts (docs/decisions.md, "ABC's wire delay set to the clock
# rule"). At 1,000 ps a 64-bit carry chain (16 CARRY4, about 1.8 ns) still
# cost ABC more than a LUT level (1.1-1.6 ns), and it set the budget of
# blocks where a few LUT levels lead into one (the engine: 7 levels, the
# flat core: 9); at 20,000 ps a level costs about eleven such chains, close
# to the rule's "carries free", and ABC maps each block at the fewest levels
# it reaches anywhere in it (the engine 6, the flat core 7: docs/decisions.md,
# "The core's depth, measured flat").
# DSP48E2, LUT-RAM (RAM32M16, RAM64M8), SRLs, block RAM and flip-flops carry
# no timing for ABC: they end and start paths at 0 ps.
ABC_WIRE_PS = 20000

# The ABC9 script (see yosys_script(): Yosys 0.23's "flow3" less its final
# &mfs, every mapping &if without preprocessing, -q, and &synch2 with -r).
ABC_SCRIPT = ("+&scorr; &sweep; &if {C} {W} {D} -q; &save; &st; &syn2; &if {C} {W} {D} -q {R} -v; &save; &load; "
              "&st; &if {C} -g -K 6; &dch -f; &if {C} {W} {D} -q {R} -v; &save; &load; "
              "&st; &if {C} -g -K 6; &synch2 -r; &if {C} {W} {D} -q {R} -v; &save; &load")
ABC_LUT_PIN_PS = [127, 238, 407, 472, 631, 642]  # fastest pin first (I_{k-1} .. I0 of a LUTk)
ABC_MUXF_PS = {"MUXF7": {"I0": 217, "I1": 223, "S": 296}, "MUXF8": {"I0": 104, "I1": 94, "S": 273}}
ABC_FF_SETUP_PS = {"D": 0, "CE": 109, "R": 404, "S": 404}


def carry4_arcs_ps():
    """{(in port, bit, out port, bit): ps} of CARRY4, from Yosys' cells_sim.v."""
    path = os.path.join(os.path.dirname(shutil.which("yosys") or "/usr/bin/yosys"), "..", "share",
                        "yosys", "xilinx", "cells_sim.v")
    body = re.search(r"module CARRY4\b.*?specify(.*?)endspecify", open(path).read(), re.S).group(1)
    arcs = {}
    for ip, ib, op, ob, ps in re.findall(r"\((\w+)(?:\[(\d)\])?\s*=>\s*(\w+)\[(\d)\]\)\s*=\s*(\d+)", body):
        arcs[(ip, int(ib or 0), op, int(ob))] = int(ps)
    return arcs


def abc_delay(mod, carry_ps=None):
    """The slowest path in ABC's delays (see above) of one module as ABC maps
    it (a submodule kept as hierarchy is mapped on its own: its instance ends
    and starts paths, as the module's ports do): {"ps", "lut_levels", "end",
    "end_net", "path_types", "path_nets"}, or None."""
    carry_ps = carry4_arcs_ps() if carry_ps is None else carry_ps
    cells = mod["cells"]
    driver = bit_drivers(cells)
    timed = LUT_TYPES | set(ABC_MUXF_PS) | {"CARRY4"}
    memo = {}  # bit -> (ps, lut levels, previous bit, cell)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 200000))

    def arrival(bit):
        if not isinstance(bit, int):
            return None
        if bit in memo:
            return memo[bit]
        memo[bit] = (0, 0, None, None)  # a loop ends here
        res = (0, 0, None, None)
        n, p, idx = driver.get(bit, (None, None, None))
        c = cells[n] if n is not None else None
        if c is not None and c["type"] in LUT_TYPES:
            ins = [b for q, bits in c["connections"].items()
                   if c["port_directions"].get(q) == "input" for b in bits if isinstance(b, int)]
            late = sorted((arrival(b), b) for b in ins)
            for rank, (a, b) in enumerate(late):
                pin = ABC_LUT_PIN_PS[len(late) - 1 - rank]
                if a[0] + ABC_WIRE_PS + pin >= res[0]:
                    res = (a[0] + ABC_WIRE_PS + pin, a[1] + 1, b, n)
        elif c is not None and c["type"] in ABC_MUXF_PS:
            for q, ps in ABC_MUXF_PS[c["type"]].items():
                for b in c["connections"].get(q, []):
                    a = arrival(b)
                    if a is not None and a[0] + ps >= res[0]:
                        res = (a[0] + ps, a[1], b, n)
        elif c is not None and c["type"] == "CARRY4":
            for (ip, ib, op, ob), ps in carry_ps.items():
                src = c["connections"].get(ip, [])
                if op != p or ob != idx or ib >= len(src):
                    continue
                a = arrival(src[ib])
                if a is not None and a[0] + ps >= res[0]:
                    res = (a[0] + ps, a[1], src[ib], n)
        memo[bit] = res
        return res

    # Endpoints: the inputs of untimed cells and the module's outputs.
    ends = [(b, n, p) for n, c in cells.items() if c["type"] not in timed
            for p, bits in c["connections"].items()
            if c.get("port_directions", {}).get(p) == "input" and p not in CLOCK_PORTS for b in bits]
    ends += [(b, "port", pn) for pn, pv in mod["ports"].items() if pv["direction"] == "output" for b in pv["bits"]]
    worst = None
    for b, n, p in ends:
        a = arrival(b)
        if a is None or a[3] is None:
            continue
        ps = a[0] + (ABC_FF_SETUP_PS.get(p, 0) if n in cells and cells[n]["type"] in FF_TYPES else 0)
        if worst is None or ps > worst[0]:
            worst = (ps, a, b, n, p)
    if worst is None:
        return None
    ps, a, b, n, p = worst
    names = public_names(mod)
    types, nets = [], []
    while isinstance(b, int) and memo.get(b, (0, 0, None, None))[3] is not None:
        types.append(cells[memo[b][3]]["type"])
        nets.append(names.get(b, ""))
        b = memo[b][2]
    types.append("start")
    nets.append(names.get(b, "?"))
    end_net = p if n == "port" else next((names[q] for q in cells[n]["connections"].get("Q", []) if q in names), "")
    return {"ps": ps, "lut_levels": a[1], "end": "%s.%s" % (n, p), "end_net": end_net,
            "path_types": types[::-1], "path_nets": nets[::-1]}


def abc_budgets(workdir, top):
    """abc_delay of every module ABC mapped on its own: the top of the flat
    netlist, or each module of netlist_hier.json (written where the block
    keeps submodules as hierarchy); {module: abc_delay}."""
    hier = os.path.join(workdir, "netlist_hier.json")
    if not os.path.exists(hier):
        return {top: abc_delay(load_netlist(workdir, top))}
    mods = json.load(open(hier))["modules"]
    carry_ps = carry4_arcs_ps()
    return {n: abc_delay(m, carry_ps) for n, m in sorted(mods.items())
            if m.get("cells") and not m.get("attributes", {}).get("blackbox")
            and not m.get("attributes", {}).get("whitebox") and "ports" in m}


def module_name(name):
    """The RTL name of a Yosys module: \\m, $paramod$<hash>\\m, $paramod\\m\\P=v..."""
    parts = name.split("\\")
    return parts[1] if name.startswith("$paramod\\") else parts[-1]


def abc_reported_delays(workdir):
    """ABC's own delay (ps) of the mapping each ABC run keeps, per run in
    yosys.log: [(module, ps)]. The script maps several times (`&if` after
    each restructuring, `&save` keeping the best); the delay reported is
    that of the `&if` whose final edge count is the kept mapping's (the
    `&ps -l` line, "Mapping (K=...)"), or the smallest final delay when the
    log does not say."""
    p = os.path.join(workdir, "yosys.log")
    if not os.path.exists(p):
        return []
    out, module, runs, in_run = [], "?", [], False
    for line in open(p, errors="replace"):
        m = re.match(r"Extracted \d+ AND gates and \d+ wires from module `(\S+)'", line)
        if m:
            module, runs, in_run = module_name(m.group(1)), [], False
            continue
        m = re.match(r"ABC: [PFAE]:\s+Del =\s+([\d.]+)\.(?:.*Edge =\s+(\d+)\.)?", line)
        if m:
            run = (float(m.group(1)), int(m.group(2)) if m.group(2) else None)
            if in_run:
                runs[-1] = run
            else:
                runs.append(run)
            in_run = True
            continue
        in_run = False
        if line.startswith("ABC: Mapping (K=") and runs:
            m = re.search(r"edge =\s+(\d+)", line)
            kept = [d for d, e in runs if m and e == int(m.group(1))]
            out.append((module, int(min(kept or [d for d, _ in runs]))))
            runs = []
    return out


def bits_of_wires(mod, pattern):
    """Net bits of every wire whose name matches the regex."""
    rx = re.compile(pattern)
    out = set()
    for name, n in mod["netnames"].items():
        if rx.match(name):
            out.update(b for b in n["bits"] if isinstance(b, int))
    return out


def cells_matching(mod, prefix):
    return {n: c for n, c in mod["cells"].items() if n.startswith(prefix)}
