#!/usr/bin/env python3
"""rtl/files.f must name every synthesizable RTL file, and only existing ones.

rtl/files.f is the one ordered file list that Verilator, Yosys and the vendor
flows read. This check fails when
  - a .sv / .v file under rtl/ is missing from it (a block Yosys would not
    see: synthesis would fail late, or silently use a stale definition);
  - it names a file that does not exist, or names one twice;
  - a package (*_pkg.sv) comes after a file that is not a package
    (packages first: rtl/files.f's header).
A file that is deliberately kept out of the list (simulation-only helpers)
carries the marker `farnn: not-synthesizable` in its first 20 lines.

Usage: check_files_f.py [REPO_ROOT]   (exit 0 = consistent)
"""
import os
import sys

MARKER = "farnn: not-synthesizable"


def main(argv):
    root = os.path.abspath(argv[1]) if len(argv) > 1 else \
        os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    ff = os.path.join(root, "rtl", "files.f")
    errors = []
    listed = []
    with open(ff) as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if not s or s.startswith("//") or s.startswith("#"):
                continue
            listed.append((n, s))
    seen = set()
    past_packages = False
    for n, rel in listed:
        p = os.path.normpath(os.path.join(root, rel))
        if not os.path.isfile(p):
            errors.append("rtl/files.f:%d names %s, which does not exist" % (n, rel))
        if p in seen:
            errors.append("rtl/files.f:%d names %s a second time" % (n, rel))
        seen.add(p)
        if rel.endswith("_pkg.sv"):
            if past_packages:
                errors.append("rtl/files.f:%d: package %s after a non-package file" % (n, rel))
        else:
            past_packages = True
    for dirpath, _, names in os.walk(os.path.join(root, "rtl")):
        for name in sorted(names):
            if not name.endswith((".sv", ".v")):
                continue
            p = os.path.normpath(os.path.join(dirpath, name))
            if p in seen:
                continue
            with open(p, errors="replace") as f:
                head = "".join(f.readline() for _ in range(20))
            if MARKER in head:
                continue
            errors.append("%s is not in rtl/files.f (Yosys and Verilator read only that list)"
                          % os.path.relpath(p, root))
    for e in errors:
        print("check_files_f: " + e)
    if not errors:
        print("check_files_f: rtl/files.f lists all %d RTL files" % len(listed))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
