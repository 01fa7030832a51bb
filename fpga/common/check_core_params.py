#!/usr/bin/env python3
"""The farnn_core parameters a board top builds agree with the capacity model.

Reads the board top (its parameter defaults and the parameter list of its
farnn_core instance) and compares the value each farnn_core parameter gets
with what fpga/common/board_params.py derives from docs/capacity.md for the
board (capacity.py's row for the board's device and design point; the rule is
in board_params.core_params). Also checks that BuildId and ClockKhz reach the
core from the top's parameters of the same name (the Vivado flow sets those
as generics) rather than from constants.

Usage: check_core_params.py --board u250 TOP.sv [--capacity docs/capacity.md]
Exit 0 when every value agrees; 1 with one line per disagreement.
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import board_params  # noqa: E402
import svports  # noqa: E402


def _split_top_level(text):
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [" ".join(p.split()) for p in parts]


def sv_int(text):
    """Value of a plain SV integer literal (1373, 32'd0, 32'h1A, 'h10), or None."""
    t = text.replace("_", "").strip()
    if re.fullmatch(r"\d+", t):
        return int(t)
    m = re.fullmatch(r"(\d*)'([sS]?)([dDhHbBoO])([0-9a-fA-F]+)", t)
    if m:
        return int(m.group(4), {"d": 10, "h": 16, "b": 2, "o": 8}[m.group(3).lower()])
    return None


def top_parameters(text, module):
    body = svports.strip_comments(text)
    m = re.search(r"\bmodule\s+%s\s*#\s*\(" % re.escape(module), body)
    if not m:
        raise ValueError("module %s has no parameter list" % module)
    end = svports.closing_paren(body, m.end() - 1)
    params = {}
    for decl in _split_top_level(body[m.end():end]):
        d = re.fullmatch(r"parameter\s+.*?\b([A-Za-z_]\w*)\s*=\s*(.+)", decl)
        if not d:
            raise ValueError("cannot read the parameter declaration %r" % decl)
        params[d.group(1)] = d.group(2).strip()
    return params


def instance_overrides(text, module):
    body = svports.strip_comments(text)
    m = re.search(r"\b%s\s*#\s*\(" % re.escape(module), body)
    if not m:
        raise ValueError("no %s instance with a parameter list" % module)
    end = svports.closing_paren(body, m.end() - 1)
    over = {}
    for item in _split_top_level(body[m.end():end]):
        o = re.fullmatch(r"\.\s*([A-Za-z_]\w*)\s*\((.*)\)", item)
        if not o:
            raise ValueError("cannot read the %s parameter override %r" % (module, item))
        over[o.group(1)] = o.group(2).strip()
    return over


def check(board, top_path, md_path):
    text = open(top_path).read()
    top = "fpga_" + board
    expected, row = board_params.core_params(board, md_path)
    params = top_parameters(text, top)
    over = instance_overrides(text, "farnn_core")
    errors = []
    for name, want in expected.items():
        if name not in over:
            errors.append("%s: farnn_core's %s is not set (its default is not the model's %d)" % (top_path, name, want))
            continue
        expr = over[name]
        if expr in params:
            value, how = sv_int(params[expr]), "%s's parameter %s = %s" % (top, expr, params[expr])
        else:
            value, how = sv_int(expr), "the constant %s" % expr
        if value is None:
            errors.append("%s: farnn_core's %s = %s is not a number this check can read" % (top_path, name, expr))
        elif value != want:
            errors.append("%s: farnn_core's %s is %d (%s); the capacity model's %s / %s row gives %d"
                          % (top_path, name, value, how, row["device"], row["config"], want))
    for name in ("BuildId", "ClockKhz"):
        if over.get(name) != name or name not in params:
            errors.append("%s: farnn_core's %s must come from the top's parameter %s (set by the Vivado flow), "
                          "found %r" % (top_path, name, name, over.get(name)))
    return expected, row, errors


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--board", required=True, choices=sorted(board_params.BOARDS))
    ap.add_argument("--capacity", default=board_params.CAPACITY_MD)
    ap.add_argument("top")
    a = ap.parse_args(argv)
    try:
        expected, row, errors = check(a.board, a.top, a.capacity)
    except (OSError, ValueError, board_params.InputError) as e:
        print("check_core_params: %s" % e, file=sys.stderr)
        return 1
    for e in errors:
        print("check_core_params: " + e)
    if errors:
        return 1
    print("check_core_params: %s builds farnn_core as the capacity model's %s / %s row: %s"
          % (os.path.basename(a.top), row["device"], row["config"],
             ", ".join("%s %d" % kv for kv in expected.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
