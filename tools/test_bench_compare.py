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


def write(path, doc):
    with open(path, "w") as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc))


def changed(edit, base=BASE):
    """A copy of `base` with `edit` applied to it."""
    doc = copy.deepcopy(base)
    edit(doc)
    return doc


class BenchCompare(unittest.TestCase):
    def run_paths(self, paths, args=()):
        r = subprocess.run([sys.executable, TOOL] + list(args) + paths, capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    def expect(self, old, new, rc, *texts, args=()):
        """Runs the tool on OLD and NEW (documents or raw text); checks its exit
        status and that each text is in its output."""
        with tempfile.TemporaryDirectory() as d:
            paths = [os.path.join(d, "old.json"), os.path.join(d, "new.json")]
            write(paths[0], old)
            write(paths[1], new)
            got, out = self.run_paths(paths, args)
        self.assertEqual(got, rc, out)
        for t in texts:
            self.assertIn(t, out)
        return out

    def test_same_run(self):
        self.expect(BASE, BASE, 0, "0 cycle counts slower, 0 faster", "-> OK")

    def test_clock_change_moves_times_not_cycles(self):
        def clock(doc):
            doc["clock_mhz"] = 222.2
            for c in doc["configs"]:
                for ph in ("forward", "backward"):
                    c[ph]["projected_seconds"] *= 250.0 / 222.2
        self.expect(BASE, changed(clock), 0, "configs[cell=gru hidden=8 batch=1].forward.projected_seconds",
                    "clock_mhz: 250.0 -> 222.2")

    def test_small_changes_hidden_below_tolerance(self):
        new = changed(lambda d: d["configs"][0]["forward"].update(mac_utilization=0.51))  # +2 %
        self.assertNotIn("mac_utilization", self.expect(BASE, new, 0))
        self.expect(BASE, new, 0, "configs[cell=lstm hidden=8 batch=1].forward.mac_utilization: 0.5 -> 0.51",
                    args=["--all"])
        self.expect(BASE, new, 0, "mac_utilization", args=["--tolerance", "1"])

    def test_one_cycle_slower_fails(self):
        def slower(doc):
            doc["configs"][1]["backward"]["cycles"] += 1
        self.expect(BASE, changed(slower), 1, "slower",
                    "configs[cell=lstm hidden=8 batch=4].backward.cycles: 26146 -> 26147", "1 cycle counts slower")

    def test_cycles_per_step_and_load_count(self):
        for phase, field in (("forward", "cycles_per_step"), ("load", "cycles")):
            def slower(doc):
                doc["configs"][2][phase][field] += 1
            self.expect(BASE, changed(slower), 1, "configs[cell=gru hidden=8 batch=1].%s.%s" % (phase, field))

    def test_stalls_and_latencies_are_not_cycle_counts(self):
        def stalls(doc):
            doc["configs"][0]["forward"]["stall_cycles"]["input"] = 30
            doc["card_latency_cycles"] = 70
        old = changed(lambda d: d.update(card_latency_cycles=63))
        self.expect(old, changed(stalls), 0, "stall_cycles.input: 3 -> 30", "card_latency_cycles: 63 -> 70")

    def test_faster_passes_and_is_listed(self):
        def faster(doc):
            doc["configs"][0]["forward"]["cycles"] -= 1
        self.expect(BASE, changed(faster), 0, "faster",
                    "configs[cell=lstm hidden=8 batch=1].forward.cycles: 10580 -> 10579")

    def test_lost_bit_exactness_fails(self):
        new = changed(lambda d: d["configs"][2].update(bit_exact=False))
        self.expect(BASE, new, 1, "configs[cell=gru hidden=8 batch=1].bit_exact: True -> False")

    def test_records_matched_by_name_not_position(self):
        self.expect(BASE, changed(lambda d: d["configs"].reverse()), 0)

    def test_value_changing_kind_fails(self):
        for value in (float("nan"), None, "10580", True):
            new = changed(lambda d: d["configs"][0]["forward"].update(cycles=value))
            self.expect(BASE, new, 1, "values that changed kind",
                        "configs[cell=lstm hidden=8 batch=1].forward.cycles: 10580 (number)")
        new = changed(lambda d: d["configs"][0]["forward"].update(mac_utilization=float("nan")))
        # not a cycle count: still listed
        self.expect(BASE, new, 1, "forward.mac_utilization: 0.5 (number) -> nan (non-finite number)")
        new = changed(lambda d: d["configs"][0].update(bit_exact=1))
        self.expect(BASE, new, 1, "bit_exact: True (flag) -> 1 (number)")
        self.expect(new, new, 0)  # NaN against NaN is no change

    def test_dropped_and_added_records_and_fields(self):
        new = changed(lambda d: d["configs"].pop(1))
        self.expect(BASE, new, 1,
                    "only in OLD (records or fields NEW lacks):\n  configs[cell=lstm hidden=8 batch=4]\n",
                    "1 only in OLD, 0 only in NEW")
        self.expect(new, BASE, 0,  # NEW measures more: listed, not a failure
                    "only in NEW (records or fields OLD lacks):\n  configs[cell=lstm hidden=8 batch=4]\n")
        new = changed(lambda d: d["configs"][0]["load"].pop("words_per_cycle"))
        self.expect(BASE, new, 1, "  configs[cell=lstm hidden=8 batch=1].load.words_per_cycle\n")

    def test_records_named_twice(self):
        twice = changed(lambda d: d["configs"].append(config("lstm", 8, 1, 10580, 9712)))
        self.expect(BASE, twice, 0,
                    "only in NEW (records or fields OLD lacks):\n  configs[cell=lstm hidden=8 batch=1 #2]\n")

        def slower(doc):
            doc["configs"][3]["backward"]["cycles"] += 1
        self.expect(twice, changed(slower, twice), 1,
                    "configs[cell=lstm hidden=8 batch=1 #2].backward.cycles: 9712 -> 9713")

    def test_unusable_inputs(self):
        self.expect(BASE, changed(lambda d: d.update(benchmark="core")), 2, "not the same benchmark")
        self.expect(BASE, '{"benchmark": "engine", "configs": [', 2, "cannot read")
        self.expect(BASE, "[1, 2]", 2, "no object at the top")
        self.expect(BASE, BASE, 2, "--tolerance needs a number", args=["--tolerance", "x"])

    def run_dirs(self, old_files, new_files, make_new_dir=True):
        with tempfile.TemporaryDirectory() as d:
            dirs = []
            for side, files in (("old", old_files), ("new", new_files)):
                sub = os.path.join(d, side)
                os.mkdir(sub)
                for name, doc in files.items():
                    write(os.path.join(sub, name), doc)
                dirs.append(sub)
            if not make_new_dir:
                dirs[1] = os.path.join(dirs[1], "x.json")
                write(dirs[1], BASE)
            return self.run_paths(dirs)

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
