#!/usr/bin/env python3
"""Compares two runs of one `make bench` benchmark (its JSON files), figure by figure.

Usage: bench_compare.py [--tolerance PCT] [--all] OLD.json NEW.json
       bench_compare.py [--tolerance PCT] [--all] OLD_DIR NEW_DIR

Two folders: every OLD_DIR/*.json against the file of that name in NEW_DIR
(a file NEW_DIR lacks counts as a difference; `make bench` compares its
run with the one before it this way: build/bench-previous/ and build/bench/).

Both files must come from the same benchmark (their "benchmark" field). Lists
of records are matched by the fields that name a record (name, cell, hidden,
batch, phase, preset; a name seen twice gets #2, #3), not by position, so a
run that adds or reorders configurations still compares. Every number,
string and flag is compared:

- cycle counts (a field named `cycles`, `*_cycles` or `*cycles_per_step`,
  or one inside a `cycles` object; stalls and latencies given in cycles are
  not among them) are listed whenever they differ, as slower or faster;
- a flag that turns false (`bit_exact`), a value that changes kind (a
  number that becomes NaN, null, a string or a flag), a text that changes,
  and a record or field present in one run only are listed always;
- any other number (times, utilization, bytes) is listed when it moved by
  more than PCT percent (default 5; `--all`: every change).

Exit status: 0 when no cycle count grew, no flag turned false, no value
changed kind and NEW holds every record and field of OLD (NEW may hold
more: listed, not a failure); 1 otherwise (each cause listed); 2 when the
files cannot be compared (unreadable, not JSON, different benchmarks, an
empty OLD_DIR); with folders, the worst of the files'.
Python 3 standard library only.
"""
import json
import math
import os
import sys

NAME_FIELDS = ("name", "cell", "hidden", "batch", "phase", "preset")


def record_key(item, index):
    if isinstance(item, dict):
        named = [(f, item[f]) for f in NAME_FIELDS if f in item and not isinstance(item[f], (dict, list))]
        if named:
            return "[" + " ".join("%s=%s" % (f, v) for f, v in named) + "]"
    return "[%d]" % index


def flatten(node, path, parents, out):
    """Leaves of a JSON tree as {path: (value, keys from the root)}."""
    if isinstance(node, dict):
        for k, v in node.items():
            flatten(v, path + ("." if path else "") + k, parents + (k,), out)
    elif isinstance(node, list):
        seen = {}
        for i, v in enumerate(node):
            key = record_key(v, i)
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > 1:  # the same name fields again: #2, #3, ... inside the brackets
                key = "%s #%d]" % (key[:-1], seen[key])
            flatten(v, path + key, parents + (key,), out)
    else:
        out[path] = (node, parents)


def record_prefixes(path):
    return [path[:i + 1] for i, c in enumerate(path) if c == "]"]


def missing(here, there):
    """What `here` holds and `there` does not: the outermost record that
    `there` lacks, or the field where both hold the record."""
    held = set()
    for p in there:
        held.update(record_prefixes(p))
    out = set()
    for p in here:
        if p in there:
            continue
        lacking = [r for r in record_prefixes(p) if r not in held]
        out.add(lacking[0] if lacking else p)
    return out


def is_cycle_count(parents):
    if any(k == "stall_cycles" or "latency" in k for k in parents):
        return False
    last = parents[-1] if parents else ""
    return (last == "cycles" or last.endswith("_cycles") or last.endswith("cycles_per_step") or
            (len(parents) > 1 and parents[-2] == "cycles"))


def kind(v):
    if isinstance(v, bool):
        return "flag"
    if isinstance(v, (int, float)):
        return "number" if math.isfinite(v) else "non-finite number"
    return "null" if v is None else type(v).__name__


class Unusable(Exception):
    """A file that cannot be compared (exit status 2)."""


def load(path):
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        raise Unusable("cannot read %s: %s" % (path, e))
    if not isinstance(d, dict):
        raise Unusable("%s is not a benchmark's JSON (no object at the top)" % path)
    return d


def compare(old, new, tolerance, show_all):
    """Returns (lines, failed)."""
    a, b = {}, {}
    flatten(old, "", (), a)
    flatten(new, "", (), b)
    slower, faster, flags, turned_false, kinds, text, other = [], [], [], [], [], [], []
    gone = sorted(missing(a, b))
    added = sorted(missing(b, a))
    for p in sorted(set(a) & set(b)):
        (x, parents), (y, _) = a[p], b[p]
        kx, ky = kind(x), kind(y)
        if kx != ky:
            kinds.append("  %s: %r (%s) -> %r (%s)" % (p, x, kx, y, ky))
        elif x == y or (kx == "non-finite number" and repr(x) == repr(y)):
            continue
        elif kx == "number":
            change = "%s -> %s" % (x, y)
            if x != 0:
                change += " (%+.3g %%)" % (100.0 * (y - x) / abs(x))
            if is_cycle_count(parents):
                (slower if y > x else faster).append("  %s: %s" % (p, change))
            elif show_all or x == 0 or abs(y - x) > tolerance / 100.0 * abs(x):
                other.append("  %s: %s" % (p, change))
        elif kx == "flag":
            flags.append("  %s: %s -> %s" % (p, x, y))
            if x and not y:
                turned_false.append(p)
        else:
            text.append("  %s: %r -> %r" % (p, x, y))
    lines = []
    for title, items in (("slower (cycle counts that grew)", slower), ("faster (cycle counts that fell)", faster),
                         ("flags", flags), ("values that changed kind", kinds),
                         ("only in OLD (records or fields NEW lacks)", ["  " + p for p in gone]),
                         ("only in NEW (records or fields OLD lacks)", ["  " + p for p in added]),
                         ("text", text),
                         ("other changes" + ("" if show_all else " (beyond %g %%)" % tolerance), other)):
        if items:
            lines.append("%s:" % title)
            lines.extend(items)
    failed = bool(slower or turned_false or kinds or gone)
    lines.append("bench_compare: %d figures compared; %d cycle counts slower, %d faster; %d flags turned false; "
                 "%d values changed kind; %d only in OLD, %d only in NEW -> %s"
                 % (len(set(a) & set(b)), len(slower), len(faster), len(turned_false), len(kinds), len(gone),
                    len(added), "DIFFERS" if failed else "OK"))
    return lines, failed


def compare_files(old_path, new_path, tolerance, show_all):
    """Returns (exit status, lines)."""
    try:
        old, new = load(old_path), load(new_path)
    except Unusable as e:
        return 2, ["bench_compare.py: %s" % e]
    if old.get("benchmark") != new.get("benchmark"):
        return 2, ["bench_compare.py: %s is benchmark %r, %s is %r: not the same benchmark"
                   % (old_path, old.get("benchmark"), new_path, new.get("benchmark"))]
    lines, failed = compare(old, new, tolerance, show_all)
    return (1 if failed else 0), lines


def compare_dirs(old_dir, new_dir, tolerance, show_all):
    """Every OLD_DIR/*.json against the file of that name in NEW_DIR."""
    names = lambda d: sorted(f for f in os.listdir(d) if f.endswith(".json"))
    old_names, new_names = names(old_dir), names(new_dir)
    status, lines = 0, []
    for n in old_names:
        if n not in new_names:
            lines.append("== %s: only in %s (NEW lacks it)" % (n, old_dir))
            status = max(status, 1)
            continue
        rc, out = compare_files(os.path.join(old_dir, n), os.path.join(new_dir, n), tolerance, show_all)
        lines.append("== %s" % n)
        lines.extend(out)
        status = max(status, rc)
    for n in new_names:
        if n not in old_names:
            lines.append("== %s: only in %s (new)" % (n, new_dir))
    if not old_names:
        lines.append("bench_compare.py: no *.json in %s" % old_dir)
        status = 2
    return status, lines


def main(argv):
    tolerance, show_all, files = 5.0, False, []
    i = 0
    while i < len(argv):
        if argv[i] == "--tolerance":
            try:
                tolerance = float(argv[i + 1])
            except (IndexError, ValueError):
                print("bench_compare.py: --tolerance needs a number (percent)", file=sys.stderr)
                return 2
            if not tolerance >= 0:
                print("bench_compare.py: --tolerance must be >= 0", file=sys.stderr)
                return 2
            i += 2
        elif argv[i] == "--all":
            show_all = True
            i += 1
        else:
            files.append(argv[i])
            i += 1
    if len(files) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    dirs = [os.path.isdir(f) for f in files]
    if any(dirs) and not all(dirs):
        print("bench_compare.py: give two JSON files or two folders, not one of each", file=sys.stderr)
        return 2
    if all(dirs):
        rc, lines = compare_dirs(files[0], files[1], tolerance, show_all)
    else:
        rc, lines = compare_files(files[0], files[1], tolerance, show_all)
    print("\n".join(lines), file=sys.stderr if rc == 2 and not all(dirs) else sys.stdout)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
