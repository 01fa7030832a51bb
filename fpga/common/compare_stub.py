#!/usr/bin/env python3
"""Compare the ports of a generated IP with its lint stub.

The board tops lint against black-box stubs of the vendor IP (fpga/<board>/
ip/stubs/<ip>_stub.sv). The Vivado flow (create_project.tcl) runs this script
on every IP it generates, with the IP's instantiation template (<ip>.veo), and
stops when a port is missing, extra, or of another direction or width, so that
the lint stubs never drift from what the Tcl configures.

Usage: compare_stub.py IP.veo IP_stub.sv      (exit 0: the same ports)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svports  # noqa: E402


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    veo, stub = argv
    try:
        generated = svports.parse_veo_ports(open(veo).read())
        module = os.path.basename(stub)[:-len("_stub.sv")] if stub.endswith("_stub.sv") else None
        _, declared = svports.parse_sv_ports(open(stub).read(), module)
    except (OSError, ValueError) as e:
        print("compare_stub: %s" % e, file=sys.stderr)
        return 1
    problems = svports.diff_ports(declared, generated)
    if problems:
        print("compare_stub: %s differs from %s:" % (veo, stub))
        for p in problems:
            print("  " + p)
        return 1
    print("compare_stub: %s: %d ports as in %s" % (os.path.basename(veo), len(generated), os.path.basename(stub)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
