#!/usr/bin/env python3
"""The board Makefile's behaviour, checked without Vivado.

1. No Vivado: `make project`, `make bitstream`, `make program` and `make` (the
   default goal) in fpga/<board>/, with VIVADO naming a program that does not
   exist, must exit non-zero with exactly one line saying Vivado was not found,
   and create no build folder; `make clean` drives no tool and must succeed.
2. Nothing half-made: with VIVADO pointing at a stand-in that fails or succeeds
   on request (it writes what the real scripts would: the .xpr, the .bit, its
   log), a failed `make project` or `make bitstream` must leave only
   <step>-failed.log (no project/, impl/, *.tmp or bitstream), and a
   successful one must leave project/ or impl/ and <top>.bit, and no *.tmp.

Usage: check_make_flow.py BOARD     (exit 0: as required)
"""
import os
import stat
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

FAKE_VIVADO = r'''#!/usr/bin/env python3
# Stand-in for vivado: writes what the flow scripts would, fails on request (FAKE_FAIL=script name).
import os, sys
a = sys.argv[1:]
log = a[a.index("-log") + 1]
script = os.path.basename(a[a.index("-source") + 1])
targs = a[a.index("-tclargs") + 1:] if "-tclargs" in a else []
open(log, "w").write("fake vivado: %s %s\n" % (script, " ".join(targs)))
top = os.environ["FAKE_TOP"]
if script == "create_project.tcl":
    open(os.path.join(targs[1], top + ".xpr"), "w").write("project\n")
if os.environ.get("FAKE_FAIL") == script:
    open(os.path.join(os.getcwd(), "half-made.dcp"), "w").write("partial\n")
    sys.exit(1)
if script == "build.tcl":
    open(os.path.join(targs[0], top + ".bit"), "w").write("bitstream\n")
'''

failures = 0


def report(ok, name, detail=""):
    global failures
    print("%s  %s%s" % ("ok  " if ok else "FAIL", name, (": " + detail) if detail else ""))
    if not ok:
        failures += 1


def listing(d):
    return sorted(os.listdir(d)) if os.path.isdir(d) else None


def main(argv):
    board = argv[0] if argv else "u250"
    bdir = os.path.join(ROOT, "fpga", board)
    top = "fpga_" + board
    with tempfile.TemporaryDirectory(prefix="farnn-make-flow-") as tmp:
        build = os.path.join(tmp, "build")

        def make(goal, vivado, **env):
            cmd = ["make", "--no-print-directory", "VIVADO=" + vivado, "BUILD_DIR=" + build]
            if goal:
                cmd.append(goal)
            e = dict(os.environ, FAKE_TOP=top, FARNN_BUILD_ID="0badc0de", **env)
            p = subprocess.run(cmd, cwd=bdir, capture_output=True, text=True, env=e)
            return p.returncode, (p.stdout + p.stderr).strip().splitlines()

        # ---- 1. no Vivado
        for goal in ("project", "bitstream", "program", None):
            rc, lines = make(goal, "farnn-no-such-vivado")
            ok = rc != 0 and len(lines) == 1 and "Vivado not found" in lines[0] and not os.path.exists(build)
            report(ok, "no Vivado: make %s" % (goal or "(default goal)"),
                   "exit %d, %d line(s)%s" % (rc, len(lines), (": " + lines[0]) if lines else ""))
        rc, lines = make("clean", "farnn-no-such-vivado")
        report(rc == 0 and not os.path.exists(build), "no Vivado: make clean", "exit %d" % rc)

        # ---- 2. a stand-in Vivado
        fake = os.path.join(tmp, "vivado")
        open(fake, "w").write(FAKE_VIVADO)
        os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
        rc, lines = make("project", fake, FAKE_FAIL="create_project.tcl")
        report(rc != 0 and listing(build) == ["project-failed.log"], "failed make project leaves only its log",
               "exit %d, build folder %s" % (rc, listing(build)))
        rc, lines = make("project", fake)
        report(rc == 0 and listing(build) == ["project"] and os.path.exists(os.path.join(build, "project", top + ".xpr")),
               "make project renames the finished project into place", "exit %d, build folder %s" % (rc, listing(build)))
        for fail in ("create_project.tcl", "build.tcl"):
            rc, lines = make("bitstream", fake, FAKE_FAIL=fail)
            report(rc != 0 and listing(build) == ["bitstream-failed.log", "project"],
                   "make bitstream failing in %s leaves only its log" % fail,
                   "exit %d, build folder %s" % (rc, listing(build)))
        rc, lines = make("bitstream", fake)
        ok = rc == 0 and listing(build) == [top + ".bit", "impl", "project"] and \
            os.path.exists(os.path.join(build, "impl", top + ".bit"))
        report(ok, "make bitstream renames the build into place and copies the bitstream",
               "exit %d, build folder %s" % (rc, listing(build)))
        rc, lines = make("clean", fake)
        report(rc == 0 and not os.path.exists(build), "make clean removes the build folder", "exit %d" % rc)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
