"""Port lists of SystemVerilog module headers and of Vivado instantiation
templates, for the board checkers (standard library only).

parse_sv_ports(text, module)  -> {name: (direction, width)} from an ANSI-style
    module header (`input logic [15:0] a,` / `inout wire [71:0] b`); width is an
    int when the range is numeric, else the range text.
parse_veo_ports(text)         -> the same from a Vivado .veo template
    (`.name(name),  // input wire [3 : 0] name`).
"""
import re

_COMMENT_LINE = re.compile(r"//[^\n]*")
_COMMENT_BLOCK = re.compile(r"/\*.*?\*/", re.S)
_DECL = re.compile(r"^\s*(input|output|inout)\s+(?:(?:wire|logic|reg|var)\s+)?(?:signed\s+)?"
                   r"(\[[^\]]+\])?\s*([A-Za-z_]\w*)\s*$")
_VEO = re.compile(r"^\s*\.\s*([A-Za-z_]\w*)\s*\([^)]*\)\s*,?\s*//\s*(input|output|inout)\s+wire\s*"
                  r"(\[[^\]]+\])?\s*([A-Za-z_]\w*)")


def _width(rng):
    if rng is None:
        return 1
    m = re.fullmatch(r"\[\s*(\d+)\s*:\s*(\d+)\s*\]", rng)
    if m:
        return abs(int(m.group(1)) - int(m.group(2))) + 1
    return re.sub(r"\s+", "", rng)


def closing_paren(text, start):
    """Index of the parenthesis closing the one at `start`."""
    depth = 0
    for k in range(start, len(text)):
        if text[k] == "(":
            depth += 1
        elif text[k] == ")":
            depth -= 1
            if depth == 0:
                return k
    raise ValueError("unbalanced parentheses")


def strip_comments(text):
    return _COMMENT_LINE.sub("", _COMMENT_BLOCK.sub("", text))


def parse_sv_ports(text, module=None):
    """Ports of `module` (the first module when None) of an ANSI header."""
    body = strip_comments(text)
    pat = r"\bmodule\s+(%s)\b" % (re.escape(module) if module else r"[A-Za-z_]\w*")
    m = re.search(pat, body)
    if not m:
        raise ValueError("no module %s" % (module or ""))
    i = m.end()
    # skip a parameter list #( ... )
    j = i
    while j < len(body) and body[j].isspace():
        j += 1
    if body.startswith("#", j):
        j = closing_paren(body, body.index("(", j)) + 1
    start = body.index("(", j)
    k = closing_paren(body, start)
    ports = {}
    for chunk in body[start + 1:k].split(","):
        chunk = " ".join(chunk.split())
        if not chunk:
            continue
        d = _DECL.match(chunk)
        if not d:
            raise ValueError("cannot read the port declaration %r of module %s" % (chunk, m.group(1)))
        ports[d.group(3)] = (d.group(1), _width(d.group(2)))
    return m.group(1), ports


def parse_veo_ports(text):
    ports = {}
    for line in text.splitlines():
        m = _VEO.match(line)
        if m:
            ports[m.group(1)] = (m.group(2), _width(m.group(3)))
    if not ports:
        raise ValueError("no port lines found (is this a Vivado .veo instantiation template?)")
    return ports


def diff_ports(want, got):
    """Lines describing how `got` differs from `want` (empty when equal)."""
    out = []
    for n in sorted(set(want) - set(got)):
        out.append("missing %s %s (width %s)" % (want[n][0], n, want[n][1]))
    for n in sorted(set(got) - set(want)):
        out.append("extra %s %s (width %s)" % (got[n][0], n, got[n][1]))
    for n in sorted(set(want) & set(got)):
        if want[n] != got[n]:
            out.append("%s: %s width %s, expected %s width %s" % (n, got[n][0], got[n][1], want[n][0], want[n][1]))
    return out
