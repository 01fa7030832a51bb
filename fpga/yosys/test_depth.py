#!/usr/bin/env python3
"""The logic-depth rules of flow.depth_analysis on small hand-built netlists:
LUTs count a level each, carry cells none, and a DSP48E2 without MREG and
PREG counts flow.DSP_LEVELS on every path through it (a registered one ends
and starts paths). Exit status 0 when every case measures what the rule says.
"""
import sys

import flow


class Net:
    """Builds a Yosys-JSON-like module: cells with typed ports and bit nets."""

    def __init__(self):
        self.cells, self.bit = {}, 100

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

    def dsp(self, name, a, regs):
        p = self.new()
        self.cell(name, "DSP48E2", {"A": a, "B": a, "CLK": 1}, {"P": p}, regs)
        return p

    def module(self):
        return {"cells": self.cells, "ports": {}, "netnames": {}}


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


def main():
    k = flow.DSP_LEVELS
    cases = [
        ("combinational DSP between LUTs", chain(regs()), 1 + k + 1),
        ("combinational DSP, 3 LUTs before, 2 after", chain(regs(), 3, 2), 3 + k + 2),
        ("DSP with PREG: the path ends and starts at it", chain(regs(p=1), 3, 2), 3),
        ("DSP with MREG: the path ends and starts at it", chain(regs(m=1), 2, 4), 4),
        ("DSP with AREG and BREG only: registered inputs start at its output", chain(regs(a=1, b=1), 3, 2),
         max(3, k + 2)),
    ]
    bad = 0
    for name, build, want in cases:
        got = depth(build)
        ok = got == want
        bad += not ok
        print("%-72s %2d levels (want %2d) %s" % (name, got, want, "ok" if ok else "WRONG"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
