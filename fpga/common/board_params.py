#!/usr/bin/env python3
"""What a board build takes from the rest of the repository, computed in one place.

  clock      the core clock `make synth` estimates: the logic depth recorded in
             docs/capacity.md (its machine-readable inputs), turned into MHz by
             fpga/yosys/capacity.py's own formula, and cross-checked against the
             "N levels -> F MHz" sentence of the same document. The Vivado flow
             sets the core MMCM to this frequency, takes its period as the timing
             target and passes it to farnn_core as ClockKhz.
  build id   `git rev-parse --short=8 HEAD` read as a hexadecimal number, for
             farnn_core's BuildId (BUILD_ID register, shown by `farnn info`).
             FARNN_BUILD_ID (8 hex digits) overrides it, e.g. for a source tree
             without git.
  core       the farnn_core parameters of a board: the capacity model's row for
             the board's device and design point, turned into parameters by the
             rule in core_params() below. check_core_params.py compares them with
             the values in the board top.

Usage:
  board_params.py [--capacity docs/capacity.md] --tcl     Tcl `set` lines (read by the Vivado flow)
  board_params.py [--capacity docs/capacity.md] --json    everything, as JSON
  board_params.py [--capacity ...] --board u250 --core     the board's farnn_core parameters
Standard library only. Exit status 0 on success, 1 on an inconsistent input.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CAPACITY_MD = os.path.join(ROOT, "docs", "capacity.md")
sys.path.insert(0, os.path.join(ROOT, "fpga", "yosys"))
import capacity  # noqa: E402  (fpga/yosys/capacity.py: the model and its clock formula)

# Per board: which capacity-model row the board builds, and the parameters the
# model does not decide (each with its reason; docs/bring-up.md repeats them).
BOARDS = {
    "u250": {
        "device": "Alveo U250",
        # URAM: as many PEs as the BRAM point (the LUTs bind both), with an
        # UltraRAM of 4096 words a PE for the weights (WeightUram): twice the
        # layer (LSTM H <= 1024, GRU H <= 1136 against 512).
        "config": "URAM",
        "fixed": {
            "WeightLanes": 16,       # one 512-bit beat of the host master per weight-stream beat
            "MaxBatch": 4,           # the configuration the model's fixed cost was measured at (P4)
            "MulLatency": 2,         # the operator pipelines the clock estimate
            "AddLatency": 3,         #   was measured with (P4); other cuts change the clock
            "StoreAddrWidth": 34,    # DDR4 C0: one 16 GiB RDIMM, the MIG's 34-bit AXI address
        },
    },
}


class InputError(Exception):
    pass


# ---------------------------------------------------------------- clock

# The clock sentence `make synth` writes into docs/capacity.md.
CLOCK_SENTENCE = re.compile(r"(\d+) levels -> (\d+(?:\.\d+)?) MHz")


def clock_estimate(md_path=CAPACITY_MD):
    """The make-synth clock: levels from the document's inputs, MHz from
    capacity.fmax_from_levels, cross-checked with the document's sentence."""
    md = open(md_path).read()
    inputs = capacity.extract_inputs(md)
    levels = int(inputs["levels"])
    mhz = capacity.fmax_from_levels(levels)
    m = CLOCK_SENTENCE.search(md)
    if not m:
        raise InputError("%s has no 'N levels -> F MHz' sentence (regenerate it with `make synth`)" % md_path)
    doc_levels, doc_mhz = int(m.group(1)), float(m.group(2))
    if doc_levels != levels or abs(doc_mhz - round(mhz, 1)) > 0.05:
        raise InputError("%s says %d levels -> %g MHz, its inputs give %d levels -> %.3f MHz: the document is "
                         "stale (run `make synth`)" % (md_path, doc_levels, doc_mhz, levels, mhz))
    khz = int(math.floor(mhz * 1000.0))        # never claim more than the estimate
    return {"levels": levels, "mhz": round(mhz, 6), "khz": khz, "period_ns": round(1000.0 / mhz, 6)}


# ---------------------------------------------------------------- build id

def build_id(root=ROOT):
    env = os.environ.get("FARNN_BUILD_ID")
    if env:
        if not re.fullmatch(r"[0-9a-fA-F]{1,8}", env):
            raise InputError("FARNN_BUILD_ID=%r is not 1..8 hexadecimal digits" % env)
        return {"hex": env.lower().rjust(8, "0"), "value": int(env, 16), "dirty": False, "source": "FARNN_BUILD_ID"}
    try:
        sha = subprocess.run(["git", "-C", root, "rev-parse", "--short=8", "HEAD"], check=True,
                             capture_output=True, text=True).stdout.strip()
        status = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                                check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise InputError("cannot read the commit for BuildId (%s); build from a git checkout or set "
                         "FARNN_BUILD_ID=<8 hex digits>" % e)
    sha = sha[:8]
    return {"hex": sha.rjust(8, "0"), "value": int(sha, 16), "dirty": bool(status.strip()), "source": "git"}


# ---------------------------------------------------------------- core parameters

def capacity_row(board, md_path=CAPACITY_MD):
    b = BOARDS[board]
    inputs = capacity.extract_inputs(open(md_path).read())
    rows, _ = capacity.model(inputs)
    for r in rows:
        if r["device"] == b["device"] and r["config"] == b["config"]:
            return r
    raise InputError("the capacity model has no row for %s / %s" % (b["device"], b["config"]))


def engine_max_hidden(gates, num_pe, weight_depth, max_hidden):
    """Largest H the engine accepts for a cell of `gates` gate rows per unit:
    H <= MaxHidden and ceil(G*H/P)*H <= WeightDepth (words per bank)."""
    best = 0
    for h in range(1, max_hidden + 1):
        if math.ceil(gates * h / num_pe) * h <= weight_depth:
            best = h
    return best


def core_params(board, md_path=CAPACITY_MD):
    """farnn_core parameters for `board`, from the capacity model's row:
      NumPe       = the row's PEs;
      NumChains   = the row's chains (of capacity.CHAIN_LEN PEs each);
      MaxHidden   = the larger of the row's LSTM and GRU limits (the engine is
                    built for the largest layer the RAM can hold);
      WeightUram  = 1 where the row gives a PE an UltraRAM (the weight RAM
                    marked (* ram_style = "ultra" *)), else 0;
      NumBanks    = 1: the model shares each PE's RAM out as one weight store
                    (its max H assumes all of it for one layer; a second bank
                    would halve the words per bank and the max H with them);
      WeightDepth = the words left for weights per PE at MaxHidden: the row's
                    URAM (4096 words each) and RAMB18 (512 words each) minus
                    the RAMB18 the accumulator RAM takes at that H (the model's
                    acc_b18), so that the engine admits exactly the model's
                    LSTM and GRU limits (checked);
    and the board's fixed choices (BOARDS)."""
    r = capacity_row(board, md_path)
    max_hidden = max(r["h_lstm"], r["h_gru"])
    b18_weights = r["b18_per_pe"] - capacity.acc_b18(max_hidden)
    depth = r["uram_per_pe"] * capacity.WORDS_PER_URAM + b18_weights * capacity.WORDS_PER_BRAM18
    p = {"NumPe": r["pes"], "NumChains": r["chains"], "WeightDepth": depth,
         "WeightUram": 1 if r["uram_per_pe"] > 0 else 0, "NumBanks": 1, "MaxHidden": max_hidden}
    p.update(BOARDS[board]["fixed"])
    got = (engine_max_hidden(4, p["NumPe"], depth, max_hidden), engine_max_hidden(3, p["NumPe"], depth, max_hidden))
    if got != (r["h_lstm"], r["h_gru"]):
        raise InputError("the derived parameters admit LSTM H <= %d, GRU H <= %d; the capacity model says %d, %d"
                         % (got[0], got[1], r["h_lstm"], r["h_gru"]))
    return p, r


# ---------------------------------------------------------------- main

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--capacity", default=CAPACITY_MD, help="docs/capacity.md to read")
    ap.add_argument("--board", default="u250", choices=sorted(BOARDS))
    fmt = ap.add_mutually_exclusive_group(required=True)
    fmt.add_argument("--tcl", action="store_true", help="Tcl set lines for the Vivado flow")
    fmt.add_argument("--json", action="store_true", help="clock, build id and core parameters as JSON")
    fmt.add_argument("--core", action="store_true", help="the board's farnn_core parameters")
    a = ap.parse_args(argv)
    try:
        clk = clock_estimate(a.capacity)
        if a.core:
            p, _ = core_params(a.board, a.capacity)
            for k, v in p.items():
                print("%s=%d" % (k, v))
            return 0
        bid = build_id()
        if a.json:
            p, r = core_params(a.board, a.capacity)
            print(json.dumps({"clock": clk, "build_id": bid, "core": p,
                              "capacity_row": {k: r[k] for k in ("device", "config", "pes", "b18_per_pe",
                                                                 "uram_per_pe", "h_lstm", "h_gru")}},
                             indent=1, sort_keys=True))
            return 0
        print("# generated by fpga/common/board_params.py from %s and git" % os.path.relpath(a.capacity, ROOT))
        print("set farnn_clock_levels %d" % clk["levels"])
        print("set farnn_clock_mhz %.6f" % clk["mhz"])
        print("set farnn_clock_khz %d" % clk["khz"])
        print("set farnn_clock_period_ns %.6f" % clk["period_ns"])
        print("set farnn_build_id %s" % bid["hex"])
        print("set farnn_build_id_value %d" % bid["value"])
        print("set farnn_build_dirty %d" % (1 if bid["dirty"] else 0))
        return 0
    except (InputError, KeyError, ValueError) as e:
        print("board_params: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
