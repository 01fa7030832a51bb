#!/usr/bin/env python3
"""Tests of bench_compare.py (CTest `bench_compare`): a run against itself,
a clock change, a cycle count one higher and one lower, stalls and
latencies that are not cycle counts, a bit-exact flag lost, a value that
changes kind (NaN, null, a flag for a number), a configuration or field
dropped or added, records named twice, files that cannot be compared, and
two folders of runs (what `make bench` compares).
Each test builds its two JSON files from one engine-benchmark-shaped record
set, so the mutation it makes is the only difference."""
import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "bench_compare.py")


def config(cell, hidden, batch, fw, bw):
    phase = lambda c: {"cycles": c, "cycles_per_step": c / 100.0, "mac_utilization": 0.5,
                       "projected_seconds": c / 250e6, "stall_cycles": {"input": 3, "output": 1}}
    return {"cell": cell, "hidden": hidden, "batch": batch, "bit_exact": True, "steps": 100,
            "forward": phase(fw), "backward": phase(bw), "load": {"cycles": 90, "words_per_cycle": 3.2}}


BASE = {"benchmark": "engine", "clock_mhz": 250.0,
        "configs": [config("lstm", 8, 1, 10580, 9712), config("lstm", 8, 4, 25772, 26146),
                    config("gru", 8, 1, 9770, 8102)]}


class BenchCompare(unittest.TestCase):
    def run_tool(self, old, new, *args):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for name, doc in (("old.json", old), ("new.json", new)):
                p = os.path.join(d, name)
                with open(p, "w") as f:
                    f.write(doc if isinstance(doc, str) else json.dumps(doc))
                paths.append(p)
            r = subprocess.run([sys.executable, TOOL] + list(args) + paths, capture_output=True, text=True)
            return r.returncode, r.stdout + r.stderr

    def test_same_run(self):
        rc, out = self.run_tool(BASE, BASE)
        self.assertEqual(rc, 0, out)
        self.assertIn("0 cycle counts slower, 0 faster", out)
        self.assertIn("-> OK", out)

    def test_clock_change_moves_times_not_cycles(self):
        new = copy.deepcopy(BASE)
        new["clock_mhz"] = 222.2
        for c in new["configs"]:
            for ph in ("forward", "backward"):
                c[ph]["projected_seconds"] *= 250.0 / 222.2
        rc, out = self.run_tool(BASE, new)
        self.assertEqual(rc, 0, out)
        self.assertIn("configs[cell=gru hidden=8 batch=1].forward.projected_seconds", out)
        self.assertIn("clock_mhz: 250.0 -> 222.2", out)

    def test_small_changes_hidden_below_tolerance(self):
        new = copy.deepcopy(BASE)
        new["configs"][0]["forward"]["mac_utilization"] = 0.51  # +2 %
        rc, out = self.run_tool(BASE, new)
        self.assertEqual(rc, 0, out)
        self.assertNotIn("mac_utilization", out)
        rc, out = self.run_tool(BASE, new, "--all")
        self.assertIn("configs[cell=lstm hidden=8 batch=1].forward.mac_utilization: 0.5 -> 0.51", out)
        rc, out = self.run_tool(BASE, new, "--tolerance", "1")
        self.assertIn("mac_utilization", out)

    def test_one_cycle_slower_fails(self):
        new = copy.deepcopy(BASE)
        new["configs"][1]["backward"]["cycles"] += 1
        rc, out = self.run_tool(BASE, new)
        self.assertEqual(rc, 1, out)
        self.assertIn("slower", out)
        self.assertIn("configs[cell=lstm hidden=8 batch=4].backward.cycles: 26146 -> 26147", out)
        self.assertIn("1 cycle counts slower", out)

    def test_cycles_per_step_and_load_count(self):
        for phase, field in (("forward", "cycles_per_step"), ("load", "cycles")):
            new = copy.deepcopy(BASE)
            new["configs"][2][phase][field] += 1
            rc, out = self.run_tool(BASE, new)
            self.assertEqual(rc, 1, "%s.%s: %s" % (phase, field, out))
            self.assertIn("configs[cell=gru hidden=8 batch=1].%s.%s" % (phase, field), out)

    def test_stalls_and_latencies_are_not_cycle_counts(self):
        new = copy.deepcopy(BASE)
        new["configs"][0]["forward"]["stall_cycles"]["input"] = 30
        new["card_latency_cycles"] = 70
        old = copy.deepcopy(BASE)
        old["card_latency_cycles"] = 63
        rc, out = self.run_tool(old, new)
        self.assertEqual(rc, 0, out)
        self.assertIn("stall_cycles.input: 3 -> 30", out)
        self.assertIn("card_latency_cycles: 63 -> 70", out)

    def test_faster_passes_and_is_listed(self):
        new = copy.deepcopy(BASE)
        new["configs"][0]["forward"]["cycles"] -= 1
        rc, out = self.run_tool(BASE, new)
        self.assertEqual(rc, 0, out)
        self.assertIn("faster", out)
        self.assertIn("configs[cell=lstm hidden=8 batch=1].forward.cycles: 10580 -> 10579", out)

    def test_lost_bit_exactness_fails(self):
        new = copy.deepcopy(BASE)
        new["configs"][2]["bit_exact"] = False
        rc, out = self.run_tool(BASE, new)
        self.assertEqual(rc, 1, out)
        self.assertIn("configs[cell=gru hidden=8 batch=1].bit_exact: True -> False", out)

    def test_records_matched_by_name_not_position(self):
        new = copy.deepcopy(BASE)
        new["configs"].reverse()
        rc, out = self.run_tool(BASE, new)
        self.assertEqual(rc, 0, out)

    def test_value_changing_kind_fails(self):
        for value in (float("nan"), None, "10580", True):
            new = copy.deepcopy(BASE)
            new["configs"][0]["forward"]["cycles"] = value
            rc, out = self.run_tool(BASE, new)
            self.assertEqual(rc, 1, "%r: %s" % (value, out))
            self.assertIn("values that changed kind", out)
            self.assertIn("configs[cell=lstm hidden=8 batch=1].forward.cycles: 10580 (number)", out)
        new = copy.deepcopy(BASE)
        new["configs"][0]["forward"]["mac_utilization"] = float("nan")  # not a cycle count: still listed
        rc, out = self.run_tool(BASE, new)
        self.assertEqual(rc, 1, out)
        self.assertIn("forward.mac_utilization: 0.5 (number) -> nan (non-finite number)", out)
        new = copy.deepcopy(BASE)
        new["configs"][0]["bit_exact"] = 1
        rc, out = self.run_tool(BASE, new)
        self.assertEqual(rc, 1, out)
        self.assertIn("bit_exact: True (flag) -> 1 (number)", out)
        rc, out = self.run_tool(new, new)  # NaN against NaN is no change
        self.assertEqual(rc, 0, out)

    def test_dropped_and_added_records_and_fields(self):
        new = copy.deepcopy(BASE)
        del new["configs"][1]
        rc, out = self.run_tool(BASE, new)
        self.assertEqual(rc, 1, out)
        self.assertIn("only in OLD (records or fields NEW lacks):\n  configs[cell=lstm hidden=8 batch=4]\n", out)
        self.assertIn("1 only in OLD, 0 only in NEW", out)
        rc, out = self.run_tool(new, BASE)  # NEW measures more: listed, not a failure
        self.assertEqual(rc, 0, out)
        self.assertIn("only in NEW (records or fields OLD lacks):\n  configs[cell=lstm hidden=8 batch=4]\n", out)
        new = copy.deepcopy(BASE)
        del new["configs"][0]["load"]["words_per_cycle"]
        rc, out = self.run_tool(BASE, new)
        self.assertEqual(rc, 1, out)
        self.assertIn("  configs[cell=lstm hidden=8 batch=1].load.words_per_cycle\n", out)

    def test_records_named_twice(self):
        twice = copy.deepcopy(BASE)
        twice["configs"].append(config("lstm", 8, 1, 10580, 9712))
        rc, out = self.run_tool(BASE, twice)
        self.assertEqual(rc, 0, out)
        self.assertIn("only in NEW (records or fields OLD lacks):\n  configs[cell=lstm hidden=8 batch=1 #2]\n", out)
        slower = copy.deepcopy(twice)
        slower["configs"][3]["backward"]["cycles"] += 1
        rc, out = self.run_tool(twice, slower)
        self.assertEqual(rc, 1, out)
        self.assertIn("configs[cell=lstm hidden=8 batch=1 #2].backward.cycles: 9712 -> 9713", out)

    def test_unusable_inputs(self):
        other = copy.deepcopy(BASE)
        other["benchmark"] = "core"
        rc, out = self.run_tool(BASE, other)
        self.assertEqual(rc, 2, out)
        self.assertIn("not the same benchmark", out)
        rc, out = self.run_tool(BASE, '{"benchmark": "engine", "configs": [')
        self.assertEqual(rc, 2, out)
        self.assertIn("cannot read", out)
        rc, out = self.run_tool(BASE, "[1, 2]")
        self.assertEqual(rc, 2, out)
        self.assertIn("no object at the top", out)
        rc, out = self.run_tool(BASE, BASE, "--tolerance", "x")
        self.assertEqual(rc, 2, out)
        self.assertIn("--tolerance needs a number", out)

    def run_dirs(self, old_files, new_files, make_new_dir=True):
        with tempfile.TemporaryDirectory() as d:
            dirs = []
            for side, files in (("old", old_files), ("new", new_files)):
                sub = os.path.join(d, side)
                os.mkdir(sub)
                for name, doc in files.items():
                    with open(os.path.join(sub, name), "w") as f:
                        f.write(json.dumps(doc))
                dirs.append(sub)
            if not make_new_dir:
                dirs[1] = os.path.join(dirs[1], "x.json")
                with open(dirs[1], "w") as f:
                    f.write(json.dumps(BASE))
            r = subprocess.run([sys.executable, TOOL] + dirs, capture_output=True, text=True)
            return r.returncode, r.stdout + r.stderr

    def test_folders(self):
        scale = {"benchmark": "engine_scale", "points": [{"name": "p64", "cycles_per_step": 343.0}]}
        runs = {"engine_p4.json": BASE, "engine_scale.json": scale}
        rc, out = self.run_dirs(runs, runs)
        self.assertEqual(rc, 0, out)
        self.assertIn("== engine_p4.json\n", out)
        self.assertIn("== engine_scale.json\n", out)
        slower = copy.deepcopy(scale)
        slower["points"][0]["cycles_per_step"] = 344.0
        rc, out = self.run_dirs(runs, {"engine_p4.json": BASE, "engine_scale.json": slower})
        self.assertEqual(rc, 1, out)
        self.assertIn("points[name=p64].cycles_per_step: 343.0 -> 344.0", out)
        rc, out = self.run_dirs(runs, {"engine_p4.json": BASE})
        self.assertEqual(rc, 1, out)
        self.assertIn("== engine_scale.json: only in", out)
        rc, out = self.run_dirs({"engine_p4.json": BASE}, runs)  # a new benchmark: listed only
        self.assertEqual(rc, 0, out)
        self.assertIn("== engine_scale.json: only in", out)
        rc, out = self.run_dirs({}, runs)
        self.assertEqual(rc, 2, out)
        self.assertIn("no *.json in", out)
        rc, out = self.run_dirs(runs, runs, make_new_dir=False)
        self.assertEqual(rc, 2, out)
        self.assertIn("two JSON files or two folders", out)


if __name__ == "__main__":
    unittest.main()
