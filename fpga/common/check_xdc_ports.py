#!/usr/bin/env python3
"""Every port an XDC names exists in the board top, and every port of the top
is accounted for.

For each `get_ports` in the XDC files (a name, `name[i]`, `name[*]`, a
wildcard, or a braced list of them) the port must exist in the top module's
header (an index must lie inside the port's range, a wildcard must match). A
constraint on a port that is not there is only a warning in Vivado and the
pin stays unplaced; this check makes it an error. In the other direction,
every port of the top must either be constrained here or be listed on a
`# board-flow ports: ...` comment line (ports an IP places through the board
part's interfaces), and every listed name must be a port.

Usage: check_xdc_ports.py TOP.sv XDC... (exit 0: consistent; 1: a mismatch)
"""
import fnmatch
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svports  # noqa: E402

GET_PORTS = re.compile(r"\[\s*get_ports\s+(?P<args>\{[^}]*\}|[^\]\s]+)\s*\]")
BOARD_FLOW = re.compile(r"^\s*#\s*board-flow ports:\s*(.*)$")


def xdc_port_refs(text):
    """(line number, pattern) for every port pattern named by get_ports."""
    refs = []
    for n, line in enumerate(text.splitlines(), 1):
        code = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
        for m in GET_PORTS.finditer(code):
            args = m.group("args")
            if args.startswith("-"):
                refs.append((n, None, args))
                continue
            for pat in args.strip("{}").split():
                refs.append((n, pat, None))
    return refs


def board_flow_names(text):
    names = []
    for n, line in enumerate(text.splitlines(), 1):
        m = BOARD_FLOW.match(line)
        if m:
            names += [(n, x) for x in m.group(1).split()]
    return names


def match(pattern, ports):
    """Ports (base names) a get_ports pattern hits; raises ValueError for a bad index."""
    m = re.fullmatch(r"([^\[\]]+)\[([^\]]+)\]", pattern)
    base, index = (m.group(1), m.group(2)) if m else (pattern, None)
    hits = [p for p in ports if fnmatch.fnmatchcase(p, base)]
    if index is not None and index != "*":
        if not index.isdigit():
            raise ValueError("index %r of %s is not a number or *" % (index, pattern))
        for p in hits:
            width = ports[p][1]
            if not isinstance(width, int) or width == 1 or int(index) >= width:
                raise ValueError("%s: port %s has %s bit(s), no bit %s" % (pattern, p, width, index))
    return hits


def check(top_path, xdc_paths):
    errors = []
    module, ports = svports.parse_sv_ports(open(top_path).read())
    covered = set()
    for xdc in xdc_paths:
        text = open(xdc).read()
        for n, pat, bad in xdc_port_refs(text):
            where = "%s:%d" % (xdc, n)
            if pat is None:
                errors.append("%s: get_ports %s: options are not supported here; name the ports" % (where, bad))
                continue
            try:
                hits = match(pat, ports)
            except ValueError as e:
                errors.append("%s: %s" % (where, e))
                continue
            if not hits:
                errors.append("%s: get_ports %s: %s has no such port" % (where, pat, module))
            covered.update(hits)
        for n, name in board_flow_names(text):
            if name not in ports:
                errors.append("%s:%d: board-flow port %s is not a port of %s" % (xdc, n, name, module))
            covered.add(name)
    for p in sorted(set(ports) - covered):
        errors.append("%s: port %s is neither constrained in %s nor listed as a board-flow port"
                      % (top_path, p, ", ".join(xdc_paths)))
    return module, ports, errors


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    try:
        module, ports, errors = check(argv[0], argv[1:])
    except (OSError, ValueError) as e:
        print("check_xdc_ports: %s" % e, file=sys.stderr)
        return 1
    for e in errors:
        print("check_xdc_ports: " + e)
    if errors:
        return 1
    print("check_xdc_ports: %d ports of %s, every XDC port reference resolves" % (len(ports), module))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
