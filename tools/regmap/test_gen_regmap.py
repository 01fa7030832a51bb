#!/usr/bin/env python3
"""Tests of gen_regmap.py (CTest regmap_generator_errors).

- Every validation rule: a copy of rtl/core/data/regmap.json with one mistake
  is written to a temporary directory and the generator, run on it with
  --regmap, must exit 2 with a message naming the register, field or code at
  fault and the kind of mistake.
- --check: generated into a temporary root it passes; after a hand edit or a
  deletion of one generated file it exits 1 naming that file and the command
  that regenerates it.
- The engine's error codes in the regmap (marked "engine": true) have the
  names and numbers of rtl/engine/engine_pkg.sv, and none is missing.
Python 3 standard library only.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
GEN = os.path.join(HERE, "gen_regmap.py")
REGMAP = os.path.join(REPO, "rtl", "core", "data", "regmap.json")
ENGINE_PKG = os.path.join(REPO, "rtl", "engine", "engine_pkg.sv")
GENERATED = ("rtl/core/core_regs_pkg.sv", "rtl/core/core_regs.sv",
             "sw/include/farnn/core_regs.hpp", "docs/registers.md")


def run(*args):
    return subprocess.run([sys.executable, GEN, *args], capture_output=True, text=True)


def source():
    with open(REGMAP) as f:
        return json.load(f)


def reg(rm, name):
    return next(r for g in rm["groups"] for r in g["registers"] if r["name"] == name)


def field(rm, reg_name, field_name):
    return next(f for f in reg(rm, reg_name)["fields"] if f["name"] == field_name)


def desc_field(rm, name):
    return next(f for f in rm["descriptor"]["fields"] if f["name"] == name)


def enum(rm, name):
    return next(e for e in rm["enums"] if e["name"] == name)


def setv(obj, key, value):
    obj[key] = value


# (what, mutation of the parsed source, words the error message must contain)
BAD_MAPS = [
    ("overlapping offsets", lambda rm: setv(reg(rm, "SCRATCH"), "offset", "0x084"),
     ["SCRATCH", "overlaps", "STATUS"]),
    ("64-bit register's high word overlapping the next",
     lambda rm: setv(reg(rm, "RING_SIZE"), "offset", "0x104"), ["RING_SIZE", "overlaps", "RING_BASE"]),
    ("array elements overlapping another register",
     lambda rm: setv(reg(rm, "WIN_SIZE"), "stride", "0x08"), ["WIN_SIZE[3]", "overlaps", "WIN_BASE[1]"]),
    ("misaligned offset", lambda rm: setv(reg(rm, "SCRATCH"), "offset", "0x042"),
     ["SCRATCH", "not aligned"]),
    ("64-bit register off an 8-byte boundary", lambda rm: setv(reg(rm, "FAULT_ADDR"), "offset", "0x1A4"),
     ["FAULT_ADDR", "not aligned to 8"]),
    ("misaligned stride", lambda rm: setv(reg(rm, "STEP_DOORBELL"), "stride", 6),
     ["STEP_DOORBELL", "stride"]),
    ("register outside the block", lambda rm: setv(reg(rm, "CNT_NONFINITE"), "offset", "0x1000"),
     ["CNT_NONFINITE", "outside the 4096-byte block"]),
    ("overlapping fields", lambda rm: setv(field(rm, "CTRL", "abort"), "lsb", 0),
     ["CTRL.abort", "overlaps", "CTRL.soft_reset"]),
    ("field outside 32 bits", lambda rm: setv(field(rm, "CAPS0", "weight_lanes"), "lsb", 28),
     ["CAPS0.weight_lanes", "outside the 32-bit register"]),
    ("unknown access type", lambda rm: setv(field(rm, "CTRL", "enable"), "access", "wo"),
     ["CTRL.enable", "unknown access type"]),
    ("unknown field key", lambda rm: setv(field(rm, "CTRL", "enable"), "resett", 0),
     ["CTRL.enable", "unknown key 'resett'"]),
    ("unknown register key", lambda rm: setv(reg(rm, "SCRATCH"), "acess", "rw"),
     ["SCRATCH", "unknown key 'acess'"]),
    ("unknown top-level key", lambda rm: setv(rm, "version", 2), ["unknown key 'version'"]),
    ("unknown descriptor field key", lambda rm: setv(desc_field(rm, "bank"), "bits", 8),
     ["descriptor field bank", "unknown key 'bits'"]),
    ("reset value too wide", lambda rm: setv(field(rm, "CTRL", "enable"), "reset", 2),
     ["CTRL.enable", "too wide"]),
    ("const value too wide", lambda rm: setv(field(rm, "VERSION", "major"), "reset", "0x10000"),
     ["VERSION.major", "too wide"]),
    ("reset value on an ro field", lambda rm: setv(field(rm, "STATUS", "busy"), "reset", 0),
     ["STATUS.busy", "ro fields have no reset value"]),
    ("const field without its value", lambda rm: field(rm, "ID", "value").pop("reset"),
     ["ID.value", "const"]),
    ("duplicate register names", lambda rm: setv(reg(rm, "SCRATCH"), "name", "WATCHDOG"),
     ["duplicate register WATCHDOG"]),
    ("duplicate field names", lambda rm: setv(field(rm, "CTRL", "abort"), "name", "soft_reset"),
     ["CTRL", "duplicate field soft_reset"]),
    ("colliding port names", lambda rm: setv(field(rm, "CTRL", "enable"), "name", "we"),
     ["duplicate port ctrl_we_o"]),
    ("64-bit register with a multi-field layout",
     lambda rm: setv(field(rm, "RING_BASE", "value"), "width", 32), ["RING_BASE", "64-bit"]),
    ("duplicate enum value", lambda rm: setv(enum(rm, "error")["values"][21], "value", 20),
     ["enum error", "duplicate value 20"]),
    ("duplicate enum name", lambda rm: setv(enum(rm, "stream")["values"][2], "name", "DESC"),
     ["enum stream", "duplicate name DESC"]),
    ("enum value too wide", lambda rm: setv(enum(rm, "error")["values"][25], "value", 32),
     ["error.ALIGN", "too wide for 5 bits"]),
    ("enum not fitting its field", lambda rm: setv(field(rm, "STATUS", "unit"), "width", 3),
     ["STATUS.unit", "does not fit"]),
    ("overlapping descriptor fields", lambda rm: setv(desc_field(rm, "bank"), "lsb", 16),
     ["descriptor field bank", "overlaps field cell"]),
    ("descriptor field outside its word", lambda rm: setv(desc_field(rm, "len0"), "lsb", 8),
     ["descriptor field len0", "outside"]),
    ("descriptor field outside the descriptor", lambda rm: setv(desc_field(rm, "progress_addr"), "word", 31),
     ["descriptor field progress_addr", "outside the 32-word descriptor"]),
    ("descriptor field naming an unknown op",
     lambda rm: setv(desc_field(rm, "len0"), "ops", {"STORE": ""}), ["len0", "unknown op 'STORE'"]),
    ("duplicate descriptor fields", lambda rm: setv(desc_field(rm, "len0"), "name", "value"),
     ["descriptor", "duplicate field value"]),
]


class GeneratorErrors(unittest.TestCase):
    def test_each_mistake_is_refused_by_name(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "regmap.json")
            for what, mutate, words in BAD_MAPS:
                with self.subTest(what):
                    rm = source()
                    mutate(rm)
                    with open(path, "w") as f:
                        json.dump(rm, f)
                    r = run("--regmap", path, "--out-dir", os.path.join(tmp, "out"))
                    self.assertEqual(r.returncode, 2, f"{what}: exit {r.returncode}, stderr: {r.stderr}")
                    for w in words:
                        self.assertIn(w, r.stderr, f"{what}: message lacks {w!r}")
                    self.assertFalse(os.path.exists(os.path.join(tmp, "out")), f"{what}: files written")

    def test_invalid_json_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "regmap.json")
            with open(path, "w") as f:
                f.write('{"name": "x",}')
            r = run("--regmap", path, "--check")
            self.assertEqual(r.returncode, 2)
            self.assertIn("invalid JSON", r.stderr)

    def test_the_source_itself_is_valid(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = run("--out-dir", tmp)
            self.assertEqual(r.returncode, 0, r.stderr)


class StaleCheck(unittest.TestCase):
    def test_hand_edits_and_missing_files_are_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(run("--out-dir", tmp).returncode, 0)
            r = run("--out-dir", tmp, "--check")
            self.assertEqual(r.returncode, 0, r.stderr)
            for rel in GENERATED:
                with self.subTest(rel):
                    path = os.path.join(tmp, rel)
                    with open(path) as f:
                        good = f.read()
                    with open(path, "w") as f:
                        f.write(good.replace("\n", "\n ", 1))  # a one-character hand edit
                    r = run("--out-dir", tmp, "--check")
                    self.assertEqual(r.returncode, 1)
                    self.assertIn(f"stale: {rel}", r.stderr)
                    self.assertIn("run tools/regmap/gen_regmap.py", r.stderr)
                    self.assertEqual(r.stderr.count("stale:"), 1, r.stderr)
                    os.remove(path)
                    r = run("--out-dir", tmp, "--check")
                    self.assertEqual(r.returncode, 1)
                    self.assertIn(f"stale: {rel} missing", r.stderr)
                    with open(path, "w") as f:
                        f.write(good)
            self.assertEqual(run("--out-dir", tmp, "--check").returncode, 0)


class EngineCodes(unittest.TestCase):
    def test_engine_codes_match_engine_pkg(self):
        with open(ENGINE_PKG) as f:
            pkg = f.read()
        engine = {m[0]: int(m[1]) for m in re.findall(
            r"localparam\s+logic\s*\[[^\]]*\]\s+ERR_([A-Z0-9_]+)\s*=\s*\d+'d(\d+)\s*;", pkg)}
        self.assertTrue(engine, f"no ERR_* codes found in {ENGINE_PKG}")
        ours = {v["name"]: v["value"] for v in enum(source(), "error")["values"] if v.get("engine")}
        self.assertEqual(ours, engine, "the regmap's engine codes differ from rtl/engine/engine_pkg.sv")


if __name__ == "__main__":
    unittest.main(verbosity=1)
