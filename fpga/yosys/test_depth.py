#!/usr/bin/env python3
"""The logic-depth rules of flow.depth_analysis on small hand-built netlists:
LUTs count a level each, carry cells none, and a DSP48E2 without MREG and
PREG counts flow.DSP_LEVELS on every path through it (a registered one ends
and starts paths), a register path counted even where a path from an input
is deeper; and the delays of flow.abc_delay (ABC's budget): the flow's
wire delay (flow.ABC_WIRE_PS) and a pin delay a LUT, the latest input on
the fastest pin, CARRY4 and MUXF arcs, untimed cells (DSP, submodule instances) ending and starting paths,
and the FF setup figures; and that Yosys reads the RTL by its path in the
repository (the mapping must not depend on where the clone lives). Exit
status 0 when every case measures what the rule says.
"""
import os
import sys
import tempfile

import flow


class Net:
    """Builds a Yosys-JSON-like module: cells with typed ports and bit nets."""

    def __init__(self):
        self.cells, self.ports, self.bit = {}, {}, 100

    def new(self):
        self.bit += 1
        return self.bit

    def cell(self, name, ctype, ins, outs, params=None):
        conns, dirs = {}, {}
        for p, b in ins.items():
            conns[p], dirs[p] = [b], "input"
        for p, b in outs.items():
            conns[p], dirs[p] = [b], "output"
        self.cells[name] = {"type": ctype, "connections": conns, "port_directions": dirs,
                            "parameters": params or {}}

    def ff(self, name, d):
        q = self.new()
        self.cell(name, "FDRE", {"D": d, "C": 1}, {"Q": q})
        return q

    def lut(self, name, a):
        y = self.new()
        self.cell(name, "LUT2", {"I0": a, "I1": a}, {"O": y})
        return y

    def lutn(self, name, ins):
        """A LUT of len(ins) distinct inputs."""
        y = self.new()
        self.cell(name, "LUT%d" % len(ins), {"I%d" % i: b for i, b in enumerate(ins)}, {"O": y})
        return y

    def dsp(self, name, a, regs):
        p = self.new()
        self.cell(name, "DSP48E2", {"A": a, "B": a, "CLK": 1}, {"P": p}, regs)
        return p

    def module(self):
        return {"cells": self.cells, "ports": self.ports, "netnames": {}}

    def input(self, name):
        """A top input port of one bit."""
        b = self.new()
        self.ports[name] = {"direction": "input", "bits": [b]}
        return b


def regs(a=0, b=0, m=0, p=0):
    return {"AREG": a, "BREG": b, "MREG": m, "PREG": p}


def depth(build):
    n = Net()
    build(n)
    w = flow.depth_analysis(n.module())["reg_to_reg"]
    return w["lut_levels"] if w else 0


def chain(dsp_regs, before=1, after=1):
    """FF -> `before` LUTs -> DSP -> `after` LUTs -> FF."""
    def build(n):
        x = n.ff("src", n.new())
        for i in range(before):
            x = n.lut("b%d" % i, x)
        x = n.dsp("dsp", x, dsp_regs)
        for i in range(after):
            x = n.lut("a%d" % i, x)
        n.ff("dst", x)
    return build


def carry_ci_to_co3(n, ci):
    """A CARRY4 whose CI is `ci`; returns its CO[3] bit."""
    co = [n.new() for _ in range(4)]
    n.cells["carry"] = {"type": "CARRY4", "parameters": {},
                        "connections": {"CI": [ci], "CO": co, "S": [0, 0, 0, 0], "DI": [0, 0, 0, 0]},
                        "port_directions": {"CI": "input", "S": "input", "DI": "input", "CO": "output"}}
    return co[3]


def abc_cases():
    """(name, build, ps the slowest path should take)."""
    w, pin = flow.ABC_WIRE_PS, flow.ABC_LUT_PIN_PS
    carry = flow.carry4_arcs_ps()

    def one_lut(n):
        n.ff("dst", n.lutn("l", [n.ff("a", n.new()), n.ff("b", n.new())]))

    def two_luts(n):  # the late input of the second LUT takes its fastest pin
        x = n.lutn("l0", [n.ff("a", n.new())])
        n.ff("dst", n.lutn("l1", [x, n.ff("b", n.new())]))

    def through_dsp(n):  # ABC sees no timing in a DSP48E2: two paths of one LUT
        x = n.dsp("dsp", n.lutn("l0", [n.ff("a", n.new())]), regs())
        n.ff("dst", n.lutn("l1", [x]))

    def through_instance(n):  # a submodule instance (mapped on its own) likewise
        y = n.new()
        n.cell("u_sub", "sub", {"i": n.lutn("l0", [n.ff("a", n.new())])}, {"o": y})
        n.ff("dst", n.lutn("l1", [y]))

    def carry_chain(n):
        n.ff("dst", carry_ci_to_co3(n, n.lutn("l0", [n.ff("a", n.new())])))

    def through_muxf7(n):  # a LUT into a MUXF7's select
        y = n.new()
        n.cell("mux", "MUXF7", {"I0": n.ff("a", n.new()), "I1": n.ff("b", n.new()),
                                "S": n.lutn("l0", [n.ff("c", n.new())])}, {"O": y})
        n.ff("dst", y)

    def to_reset(n):  # a reset input's setup counts
        x = n.lutn("l0", [n.ff("a", n.new())])
        n.cell("dst", "FDRE", {"D": n.new(), "R": x, "C": 1}, {"Q": n.new()})

    return [
        ("ABC: one LUT2, inputs on its two pins", one_lut, w + pin[1]),
        ("ABC: two LUTs, the late input on the fastest pin", two_luts, 2 * (w + pin[0])),
        ("ABC: an unregistered DSP48E2 ends and starts paths", through_dsp, w + pin[0]),
        ("ABC: a submodule instance ends and starts paths", through_instance, w + pin[0]),
        ("ABC: LUT, CARRY4 CI -> CO[3]", carry_chain, w + pin[0] + carry[("CI", 0, "CO", 3)]),
        ("ABC: LUT into a MUXF7 select", through_muxf7, w + pin[0] + flow.ABC_MUXF_PS["MUXF7"]["S"]),
        ("ABC: LUT into a reset, its setup added", to_reset, w + pin[0] + flow.ABC_FF_SETUP_PS["R"]),
    ]


def reg_behind_input(n):
    """FF -> LUT -> FF, where the LUT's other input comes from a top input
    through 3 LUTs: the input path (4 levels) is deeper at every net the
    register path (1 level) passes; the register path is still reported."""
    x = n.input("in")
    for i in range(3):
        x = n.lut("i%d" % i, x)
    n.ff("dst", n.lutn("join", [x, n.ff("src", n.new())]))


def main():
    k = flow.DSP_LEVELS
    cases = [
        ("combinational DSP between LUTs", chain(regs()), 1 + k + 1),
        ("combinational DSP, 3 LUTs before, 2 after", chain(regs(), 3, 2), 3 + k + 2),
        ("DSP with PREG: the path ends and starts at it", chain(regs(p=1), 3, 2), 3),
        ("DSP with MREG: the path ends and starts at it", chain(regs(m=1), 2, 4), 4),
        ("DSP with AREG and BREG only: registered inputs start at its output", chain(regs(a=1, b=1), 3, 2),
         max(3, k + 2)),
        ("a register path behind a deeper path from an input", reg_behind_input, 1),
    ]
    bad = 0
    for name, build, want in cases:
        got = depth(build)
        ok = got == want
        bad += not ok
        print("%-72s %2d levels (want %2d) %s" % (name, got, want, "ok" if ok else "WRONG"))
    with tempfile.TemporaryDirectory() as d:  # ABC's own figures, labelled by module
        with open(os.path.join(d, "yosys.log"), "w") as f:
            f.write("Extracted 526 AND gates and 2068 wires from module `$paramod$89\\fp_mul' to a netlist\n"
                    "ABC: P:  Del = 4090.00.  Ar =    1053.0.\nABC: A:  Del = 4089.00.  Ar =     391.0.\n"
                    "ABC: Mapping (K=6)  :  lut =    134\nABC: Mapping (K=6)  :  lut =    134\n"
                    "Extracted 1647 AND gates and 5537 wires from module `pe' to a netlist\n"
                    "ABC: A:  Del = 2966.00.  Ar =     826.0.\nABC: Mapping (K=8)  :  lut =    277\n")
        got, want = flow.abc_reported_delays(d), [("fp_mul", 4089), ("pe", 2966)]
        bad += got != want
        print("%-72s %s %s" % ("ABC's own delay per run, from the log", got, "ok" if got == want else "WRONG"))
    with tempfile.TemporaryDirectory() as d:  # several &if runs: the one &save kept (its edge count)
        with open(os.path.join(d, "yosys.log"), "w") as f:
            f.write("Extracted 900 AND gates and 3000 wires from module `fp_add' to a netlist\n"
                    "ABC: P:  Del = 7563.00.  Ar =    2968.0.  Edge =     2352.\n"
                    "ABC: A:  Del = 7431.00.  Ar =    1454.0.  Edge =     1693.\n"
                    "ABC: E:  Del = 7431.00.  Ar =    1454.0.  Edge =     1692.\n"
                    "ABC: + &save\n"
                    "ABC: A:  Del = 7520.00.  Ar =    1601.0.  Edge =     1859.\n"
                    "ABC: + &save\n"
                    "ABC: A:  Del = 7656.00.  Ar =    1513.0.  Edge =     1793.\n"
                    "ABC: + &load\n"
                    "ABC: Mapping (K=8)  :  lut =    430  edge =    1859  lev =    6\n")
        got, want = flow.abc_reported_delays(d), [("fp_add", 7520)]
        bad += got != want
        print("%-72s %s %s" % ("ABC's delay of the kept mapping among several", got, "ok" if got == want else "WRONG"))
    with tempfile.TemporaryDirectory() as d:  # sources named relative to the repository
        read = [w for w in flow.yosys_script("pe", {}, d)[0].split() if w.endswith(".sv")]
        want = [os.path.relpath(f, flow.ROOT) for f in flow.rtl_files()]
        ok = read == want and read and not any(os.path.isabs(w) or w.startswith("..") for w in read) and \
            all(os.path.exists(os.path.join(flow.ROOT, w)) for w in read)
        bad += not ok
        print("%-72s %d files %s" % ("Yosys reads the RTL by its path in the repository", len(read),
                                     "ok" if ok else "WRONG"))
    for name, build, want in abc_cases():
        n = Net()
        build(n)
        got = flow.abc_delay(n.module())["ps"]
        ok = got == want
        bad += not ok
        print("%-72s %4d ps (want %4d) %s" % (name, got, want, "ok" if ok else "WRONG"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
