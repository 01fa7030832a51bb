#!/usr/bin/env python3
"""Generates everything about farnn_core's registers from their one source.

rtl/core/data/regmap.json describes every register of farnn_core's AXI4-Lite
slave (PCIe BAR0) and the layout of the descriptors the core fetches from its
ring in host memory. From it this script writes (paths under the output root):

  rtl/core/core_regs_pkg.sv       package core_regs_pkg: offsets, fields, constants,
                                  codes, descriptor layout and used-bit masks
  rtl/core/core_regs.sv           module core_regs: the AXI4-Lite register block
  sw/include/farnn/core_regs.hpp  the same map for the driver (C++20)
  docs/registers.md               the register and descriptor reference

Usage:
  gen_regmap.py [--regmap FILE] [--out-dir ROOT]          write the files under ROOT
  gen_regmap.py [--regmap FILE] [--out-dir ROOT] --check  compare instead of writing
FILE defaults to rtl/core/data/regmap.json and ROOT to the repository.
Exit status: 0 ok; 1 some generated file differs (--check); 2 the regmap is
invalid (each error names the register, field or code at fault) or bad usage.
Python 3 standard library only.
"""
import argparse
import json
import os
import re
import sys
import textwrap
from dataclasses import dataclass, field as dc_field

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_REGMAP = os.path.join(REPO, "rtl", "core", "data", "regmap.json")
GENERATOR = "tools/regmap/gen_regmap.py"

ADDR_BITS = 12  # AXI4-Lite byte address width of the block
LINE = 100      # longest generated code line (comments move above longer ones)
ACCESS_TYPES = ("rw", "ro", "w1p", "w1c", "const")
ACCESS_DOC = {
    "rw": "read/write; the hardware sees the value on `<port>_o`",
    "ro": "read-only; the value is the hardware input `<port>_i`, read as is",
    "w1p": "write 1 to pulse: a one-cycle pulse on `<port>_o`; reads 0",
    "w1c": "write 1 to clear; the hardware sets bits with `<port>_set_i` "
           "(a set wins over a clear in the same cycle); current value on `<port>_o`",
    "const": "read-only constant; no port",
}

UPPER = re.compile(r"^[A-Z][A-Z0-9_]*$")
LOWER = re.compile(r"^[a-z][a-z0-9_]*$")
CAMEL = re.compile(r"^[A-Z][A-Za-z0-9]*$")
PREFIX = re.compile(r"^[A-Z][A-Z0-9_]*_$")


class RegmapError(Exception):
    """An invalid regmap; the message names what is wrong and where."""


# ---------------------------------------------------------------------------
# The model, validated while it is built.

@dataclass
class Field:
    name: str
    lsb: int
    width: int
    access: str
    reset: int
    doc: str
    enum: str = None

    @property
    def msb(self):
        return self.lsb + self.width - 1


@dataclass
class Register:
    name: str
    offset: int
    width: int   # 32 or 64 bits
    count: int   # elements of an array, 1 otherwise
    stride: int  # bytes between elements
    doc: str
    group: str
    fields: list = dc_field(default_factory=list)

    @property
    def words(self):
        return self.width // 32

    @property
    def is_value(self):
        """A single field named `value`: its ports are named after the register."""
        return len(self.fields) == 1 and self.fields[0].name == "value"

    def has(self, access):
        return any(f.access == access for f in self.fields)

    def stem(self, f):
        """Port and constant stem of field f (lower case)."""
        return self.name.lower() if self.is_value else f"{self.name.lower()}_{f.name}"

    def word_offset(self, i, half):
        return self.offset + i * self.stride + 4 * half


@dataclass
class EnumValue:
    name: str
    value: int
    doc: str
    engine: bool


@dataclass
class Enum:
    name: str
    sv_prefix: str
    cpp_type: str
    width: int
    doc: str
    values: list


@dataclass
class DescField:
    name: str
    word: int
    lsb: int
    width: int
    doc: str
    ops: dict  # op name -> meaning for that op ("" = the field's doc)
    enum: str = None


@dataclass
class Regmap:
    name: str
    doc: str
    block_bytes: int
    groups: list  # (name, doc, [Register])
    enums: dict   # name -> Enum, in file order
    desc_words: int
    desc_doc: str
    desc_fields: list

    @property
    def registers(self):
        return [r for _, _, regs in self.groups for r in regs]

    @property
    def ops(self):
        return self.enums["op"].values


def keys(obj, where, required, optional=()):
    if not isinstance(obj, dict):
        raise RegmapError(f"{where}: expected an object")
    for k in obj:
        if k not in required and k not in optional:
            raise RegmapError(f"{where}: unknown key '{k}' (known: {', '.join(required + optional)})")
    for k in required:
        if k not in obj:
            raise RegmapError(f"{where}: missing key '{k}'")


def integer(v, where):
    """A JSON integer or a "0x..." string."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str) and re.fullmatch(r"0x[0-9a-fA-F_]+", v):
        return int(v[2:].replace("_", ""), 16)
    raise RegmapError(f"{where}: expected an integer or a \"0x...\" string, got {v!r}")


def text(v, where):
    if not isinstance(v, str):
        raise RegmapError(f"{where}: expected a string, got {v!r}")
    if "|" in v or "\n" in v:
        raise RegmapError(f"{where}: text must be one line without '|' (it goes into tables)")
    return v


def ident(v, pattern, where, what):
    if not isinstance(v, str) or not pattern.match(v):
        raise RegmapError(f"{where}: bad {what} {v!r} (expected {pattern.pattern})")
    return v


def unique(items, where, what):
    seen = set()
    for it in items:
        if it in seen:
            raise RegmapError(f"{where}: duplicate {what} {it}")
        seen.add(it)


def parse_enum(e, i):
    keys(e, f"enums[{i}]", ("name", "sv_prefix", "cpp_type", "width", "doc", "values"))
    en = ident(e["name"], LOWER, f"enums[{i}]", "enum name")
    where = f"enum {en}"
    width = integer(e["width"], f"{where}: width")
    if not 1 <= width <= 32:
        raise RegmapError(f"{where}: width {width} outside 1..32")
    values = []
    if not isinstance(e["values"], list) or not e["values"]:
        raise RegmapError(f"{where}: values must be a non-empty list")
    for j, v in enumerate(e["values"]):
        keys(v, f"{where}: values[{j}]", ("name", "value", "doc"), ("engine",))
        vn = ident(v["name"], UPPER, f"{where}: values[{j}]", "name")
        val = integer(v["value"], f"{where}.{vn}: value")
        if not 0 <= val < (1 << width):
            raise RegmapError(f"{where}.{vn}: value {val} too wide for {width} bits")
        engine = v.get("engine", False)
        if not isinstance(engine, bool):
            raise RegmapError(f"{where}.{vn}: engine must be true or false")
        values.append(EnumValue(vn, val, text(v["doc"], f"{where}.{vn}: doc"), engine))
    unique([v.name for v in values], where, "name")
    unique([v.value for v in values], where, "value")
    return Enum(en, ident(e["sv_prefix"], PREFIX, where, "sv_prefix"),
                ident(e["cpp_type"], CAMEL, where, "cpp_type"), width,
                text(e["doc"], f"{where}: doc"), values)


def check_enum_ref(enum_name, width, enums, where):
    if enum_name is None:
        return None
    if enum_name not in enums:
        raise RegmapError(f"{where}: unknown enum '{enum_name}' (known: {', '.join(enums)})")
    for v in enums[enum_name].values:
        if v.value >= (1 << width):
            raise RegmapError(f"{where}: enum {enum_name} value {v.name} = {v.value} "
                              f"does not fit the {width}-bit field")
    return enum_name


def parse_field(f, reg, j, enums):
    fid = f.get("name") if isinstance(f, dict) else j
    keys(f, f"field {reg.name}.{fid}", ("name", "lsb", "width", "access", "doc"),
         ("reset", "enum"))
    fn = ident(f["name"], LOWER, f"register {reg.name}: fields[{j}]", "field name")
    where = f"field {reg.name}.{fn}"
    lsb = integer(f["lsb"], f"{where}: lsb")
    width = integer(f["width"], f"{where}: width")
    if lsb < 0 or width < 1 or lsb + width > reg.width:
        raise RegmapError(f"{where}: bits [{lsb + width - 1}:{lsb}] outside the "
                          f"{reg.width}-bit register")
    access = f["access"]
    if access not in ACCESS_TYPES:
        raise RegmapError(f"{where}: unknown access type {access!r} (known: {', '.join(ACCESS_TYPES)})")
    if access in ("ro", "w1p"):
        if "reset" in f:
            raise RegmapError(f"{where}: {access} fields have no reset value")
        reset = 0
    elif access == "const" and "reset" not in f:
        raise RegmapError(f"{where}: a const field needs its value in 'reset'")
    else:
        reset = integer(f.get("reset", 0), f"{where}: reset")
    if not 0 <= reset < (1 << width):
        raise RegmapError(f"{where}: reset value {reset:#x} too wide for the {width}-bit field")
    enum = check_enum_ref(f.get("enum"), width, enums, where)
    return Field(fn, lsb, width, access, reset, text(f["doc"], f"{where}: doc"), enum)


def parse_register(r, group, block_bytes, enums, owner):
    rid = r.get("name") if isinstance(r, dict) else None
    keys(r, f"group {group}: register {rid}", ("name", "offset", "doc", "fields"),
         ("width", "count", "stride"))
    rn = ident(r["name"], UPPER, f"group {group}", "register name")
    where = f"register {rn}"
    offset = integer(r["offset"], f"{where}: offset")
    width = integer(r.get("width", 32), f"{where}: width")
    if width not in (32, 64):
        raise RegmapError(f"{where}: width {width} (a register is 32 or 64 bits)")
    count = integer(r.get("count", 1), f"{where}: count")
    if count < 1:
        raise RegmapError(f"{where}: count {count} < 1")
    if ("stride" in r) != ("count" in r):
        raise RegmapError(f"{where}: an array needs both count and stride")
    stride = integer(r.get("stride", 0), f"{where}: stride")
    align = width // 8
    if offset % align:
        raise RegmapError(f"{where}: offset {offset:#05x} not aligned to {align} bytes")
    if count > 1 and (stride < align or stride % align):
        raise RegmapError(f"{where}: stride {stride:#x} must be a multiple of {align} bytes, "
                          f"at least {align}")
    reg = Register(rn, offset, width, count, stride, text(r["doc"], f"{where}: doc"), group)
    # Every 32-bit word of every element must be inside the block and free.
    for i in range(count):
        for half in range(reg.words):
            a = reg.word_offset(i, half)
            me = f"{rn}[{i}]" if count > 1 else rn
            if a + 4 > block_bytes:
                raise RegmapError(f"{where}: {me} at {a:#05x} is outside the {block_bytes}-byte block")
            if a in owner:
                raise RegmapError(f"{where}: {me} at {a:#05x} overlaps register {owner[a]}")
            owner[a] = me
    if not isinstance(r["fields"], list) or not r["fields"]:
        raise RegmapError(f"{where}: fields must be a non-empty list")
    reg.fields = [parse_field(f, reg, j, enums) for j, f in enumerate(r["fields"])]
    unique([f.name for f in reg.fields], where, "field")
    used = {}
    for f in reg.fields:
        for b in range(f.lsb, f.lsb + f.width):
            if b in used:
                raise RegmapError(f"field {rn}.{f.name}: bit {b} overlaps field {rn}.{used[b]}")
            used[b] = f.name
    if width == 64 and not (reg.is_value and reg.fields[0].width == 64 and
                            reg.fields[0].access in ("rw", "ro")):
        raise RegmapError(f"{where}: a 64-bit register holds one 64-bit rw or ro field named value")
    return reg


def parse_descriptor(d, enums):
    keys(d, "descriptor", ("words", "doc", "fields"))
    words = integer(d["words"], "descriptor: words")
    if words < 1:
        raise RegmapError(f"descriptor: words {words} < 1")
    op_names = [v.name for v in enums["op"].values]
    fields, owner = [], {}
    if not isinstance(d["fields"], list):
        raise RegmapError("descriptor: fields must be a list")
    for j, f in enumerate(d["fields"]):
        fid = f.get("name") if isinstance(f, dict) else j
        keys(f, f"descriptor field {fid}", ("name", "word", "lsb", "width", "doc", "ops"), ("enum",))
        fn = ident(f["name"], LOWER, f"descriptor: fields[{j}]", "field name")
        where = f"descriptor field {fn}"
        word, lsb, width = (integer(f[k], f"{where}: {k}") for k in ("word", "lsb", "width"))
        fits = (lsb == 0 and width == 64) or (0 <= lsb and 1 <= width and lsb + width <= 32)
        if not fits or word < 0 or word + (width - 1) // 32 >= words:
            raise RegmapError(f"{where}: word {word} bits [{lsb + width - 1}:{lsb}] outside the "
                              f"{words}-word descriptor (a field stays inside one word, or is "
                              f"64 bits from bit 0)")
        for b in range(word * 32 + lsb, word * 32 + lsb + width):
            if b in owner:
                raise RegmapError(f"{where}: word {b // 32} bit {b % 32} overlaps field {owner[b]}")
            owner[b] = fn
        if not isinstance(f["ops"], dict) or not f["ops"]:
            raise RegmapError(f"{where}: ops must name at least one op")
        for op, meaning in f["ops"].items():
            if op not in op_names:
                raise RegmapError(f"{where}: unknown op {op!r} (known: {', '.join(op_names)})")
            text(meaning, f"{where}: ops.{op}")
        enum = check_enum_ref(f.get("enum"), width, enums, where)
        fields.append(DescField(fn, word, lsb, width, text(f["doc"], f"{where}: doc"),
                                dict(f["ops"]), enum))
    unique([f.name for f in fields], "descriptor", "field")
    return words, text(d["doc"], "descriptor: doc"), fields


def parse(raw):
    keys(raw, "regmap", ("name", "doc", "block_bytes", "groups", "enums", "descriptor"))
    block_bytes = integer(raw["block_bytes"], "block_bytes")
    if block_bytes != 1 << ADDR_BITS:
        raise RegmapError(f"block_bytes {block_bytes}: the block has a {ADDR_BITS}-bit address "
                          f"({1 << ADDR_BITS} bytes)")
    if not isinstance(raw["enums"], list):
        raise RegmapError("enums must be a list")
    enum_list = [parse_enum(e, i) for i, e in enumerate(raw["enums"])]
    unique([e.name for e in enum_list], "enums", "enum")
    unique([e.sv_prefix for e in enum_list], "enums", "sv_prefix")
    unique([e.cpp_type for e in enum_list], "enums", "cpp_type")
    enums = {e.name: e for e in enum_list}
    if "op" not in enums:
        raise RegmapError("enums: the descriptor ops need an enum named 'op'")
    if not isinstance(raw["groups"], list) or not raw["groups"]:
        raise RegmapError("groups must be a non-empty list")
    groups, owner = [], {}
    for i, g in enumerate(raw["groups"]):
        keys(g, f"groups[{i}]", ("name", "doc", "registers"))
        gname = text(g["name"], f"groups[{i}]: name")
        if not isinstance(g["registers"], list) or not g["registers"]:
            raise RegmapError(f"group {gname}: registers must be a non-empty list")
        regs = [parse_register(r, gname, block_bytes, enums, owner) for r in g["registers"]]
        groups.append((gname, text(g["doc"], f"group {gname}: doc"), regs))
    unique([r.name for _, _, regs in groups for r in regs], "regmap", "register")
    words, desc_doc, desc_fields = parse_descriptor(raw["descriptor"], enums)
    rm = Regmap(ident(raw["name"], LOWER, "regmap", "name"), text(raw["doc"], "doc"), block_bytes,
                groups, enums, words, desc_doc, desc_fields)
    unique([p for r in rm.registers for _, p, _, _ in ports(r)], "regmap", "port")
    return rm


def load(path):
    try:
        with open(path) as f:
            raw = json.load(f)
    except OSError as e:
        raise RegmapError(f"cannot read {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        raise RegmapError(f"{path}: invalid JSON: {e}")
    return parse(raw)


# ---------------------------------------------------------------------------
# Shared helpers of the generators.

def ports(reg):
    """(direction, port name, bits, field or None) of every core_regs port of reg."""
    out = []
    n = reg.count
    for f in reg.fields:
        s = reg.stem(f)
        if f.access in ("rw", "w1p"):
            out.append(("output", f"{s}_o", n * f.width, f))
        elif f.access == "ro":
            out.append(("input", f"{s}_i", n * f.width, f))
        elif f.access == "w1c":
            out.append(("input", f"{s}_set_i", n * f.width, f))
            out.append(("output", f"{s}_o", n * f.width, f))
    if reg.has("rw"):
        out.append(("output", f"{reg.name.lower()}_we_o", n, None))
    return out


def commented(code, comment, indent="  "):
    """code with a trailing // comment, or with the comment wrapped above it
    when the line would be longer than LINE."""
    if not comment:
        return code
    one = f"{code}  // {comment}"
    if len(one) <= LINE:
        return one
    return "\n".join([f"{indent}// {s}" for s in textwrap.wrap(comment, LINE - len(indent) - 3)] + [code])


def comment_block(text, indent=""):
    """A '// ---- text' section comment wrapped at LINE."""
    return "\n".join(f"{indent}// {s}" for s in textwrap.wrap("---- " + text, LINE - len(indent) - 3))


def camel(s):
    return "".join(p[:1].upper() + p[1:].lower() for p in s.split("_"))


def hexw(v, bits):
    """Hex literal body with '_' every 4 digits (Verilog style)."""
    digits = f"{v:0{(bits + 3) // 4}x}".upper()
    groups = []
    while digits:
        groups.insert(0, digits[-4:])
        digits = digits[:-4]
    return "_".join(groups)


def bits_range(lo, width):
    return f"[{lo}]" if width == 1 else f"[{lo + width - 1}:{lo}]"


def const_name(reg, f):
    return f"{reg.stem(f).upper()}_VALUE"


def used_bits(rm, op):
    """The descriptor's used-bit mask of op as a list of 32-bit words."""
    words = [0] * rm.desc_words
    for f in rm.desc_fields:
        if op in f.ops:
            for b in range(f.word * 32 + f.lsb, f.word * 32 + f.lsb + f.width):
                words[b // 32] |= 1 << (b % 32)
    return words


def source_name(regmap_path):
    p = os.path.abspath(regmap_path)
    return os.path.relpath(p, REPO) if p.startswith(REPO + os.sep) else p


def header(source):
    return f"Generated by {GENERATOR} from {source}; do not edit."


# ---------------------------------------------------------------------------
# rtl/core/core_regs_pkg.sv

def gen_pkg(rm, source):
    names = []  # every localparam, to refuse collisions

    def lp(typ, nm, value, comment=""):
        names.append(nm)
        return commented(f"  localparam {typ} {nm} = {value};", comment)

    L = [f"// {header(source)}", "//",
         "// core_regs_pkg: farnn_core's register map and descriptor layout for the RTL",
         "// (docs/registers.md is the reference). Byte offsets REG_* (12-bit; a 64-bit",
         "// register's high word at REG_*_HI), arrays' COUNT and STRIDE, field LSB and",
         "// WIDTH of multi-field registers, constant register values, the codes the core",
         "// reports, and for the descriptor each field's DESC_*_WORD/_LSB/_WIDTH and per",
         "// op the bits it uses (DESC_USED_<OP>, bit 32*word + lsb): every other bit",
         "// must be zero.",
         "package core_regs_pkg;", "",
         lp("int unsigned", "BLOCK_BYTES", rm.block_bytes, "the register block"), ""]
    for gname, _, regs in rm.groups:
        L.append(f"  // ---- {gname}")
        for r in regs:
            acc = "/".join(sorted({f.access for f in r.fields}))
            desc = f"{r.name} ({acc}" + (", 64-bit" if r.width == 64 else "") + ")"
            L.append(lp(f"logic [{ADDR_BITS - 1}:0]", f"REG_{r.name}",
                        f"{ADDR_BITS}'h{r.offset:03X}", desc))
            if r.width == 64:
                L.append(lp(f"logic [{ADDR_BITS - 1}:0]", f"REG_{r.name}_HI",
                            f"{ADDR_BITS}'h{r.offset + 4:03X}", "high word"))
            if r.count > 1:
                L.append(lp("int unsigned", f"{r.name}_COUNT", r.count, "elements"))
                L.append(lp(f"logic [{ADDR_BITS - 1}:0]", f"{r.name}_STRIDE",
                            f"{ADDR_BITS}'h{r.stride:03X}", "bytes between elements"))
            for f in r.fields:
                if not r.is_value:
                    up = f"{r.name}_{f.name.upper()}"
                    L.append(lp("int unsigned", f"{up}_LSB", f.lsb, f"{f.access}"))
                    L.append(lp("int unsigned", f"{up}_WIDTH", f.width))
                if f.access == "const":
                    L.append(lp(f"logic [{f.width - 1}:0]", const_name(r, f),
                                f"{f.width}'h{hexw(f.reset, f.width)}", "constant value"))
        L.append("")
    for e in rm.enums.values():
        L.append(comment_block(e.doc, "  "))
        for v in e.values:
            L.append(lp(f"logic [{e.width - 1}:0]", f"{e.sv_prefix}{v.name}",
                        f"{e.width}'d{v.value}", v.doc + (" (engine)" if v.engine else "")))
        L.append("")
    L.append("  // ---- Descriptor layout")
    L.append(lp("int unsigned", "DESC_WORDS", rm.desc_words, "32-bit words per descriptor"))
    L.append(lp("int unsigned", "DESC_BYTES", rm.desc_words * 4))
    for f in rm.desc_fields:
        up = f"DESC_{f.name.upper()}"
        L.append(lp("int unsigned", f"{up}_WORD", f.word, f.doc))
        L.append(lp("int unsigned", f"{up}_LSB", f.lsb))
        L.append(lp("int unsigned", f"{up}_WIDTH", f.width))
    bits = rm.desc_words * 32
    for op in rm.ops:
        words = used_bits(rm, op.name)
        nm = f"DESC_USED_{op.name}"
        names.append(nm)
        L.append(f"  // Bits {op.name} uses; words {rm.desc_words - 1} (left) down to 0.")
        L.append(f"  localparam logic [{bits - 1}:0] {nm} = {{")
        for k in range(rm.desc_words - 1, -1, -4):
            row = ", ".join(f"32'h{words[w]:08X}" for w in range(k, max(k - 4, -1), -1))
            L.append(f"    {row}" + ("," if k >= 4 else ""))
        L.append("  };")
    L += ["", "endpackage", ""]
    unique(names, "core_regs_pkg", "localparam")
    return "\n".join(L)


# ---------------------------------------------------------------------------
# rtl/core/core_regs.sv

def sel(sig, reg, i, w, lo=0, width=None):
    """Bits [lo +: width] of element i of a flat vector of count elements of w bits."""
    width = w if width is None else width
    if reg.count == 1:
        return sig if (lo == 0 and width == w) else f"{sig}{bits_range(lo, width)}"
    if w == 1:
        return f"{sig}[{i}]"
    start = f"{i}*{w}" + (f" + {lo}" if lo else "")
    return f"{sig}[{start} +: {width}]"


def addr_label(reg, i, half):
    base = f"core_regs_pkg::REG_{reg.name}" + ("_HI" if half else "")
    if i == 0:
        return base
    return f"{base} + {ADDR_BITS}'d{i} * core_regs_pkg::{reg.name}_STRIDE"


def word_label(reg, i, half):
    e = f"[{i}]" if reg.count > 1 else ""
    return f"{reg.name}{e}" + (" high word" if half else (" low word" if reg.width == 64 else ""))


def read_expr(reg, i, half, lines):
    """The 32-bit read value of one word of element i; appends side effects to lines."""
    if reg.width == 64:
        f = reg.fields[0]
        s = reg.stem(f)
        if f.access == "rw":
            return sel(f"{s}_q", reg, i, 64, 32 * half, 32)
        if half == 0:
            lines.append(f"if (rd_fire) {sel(f'{s}_hi_d', reg, i, 32)} = "
                         f"{sel(f'{s}_i', reg, i, 64, 32, 32)};  // shadow of the high half")
            return sel(f"{s}_i", reg, i, 64, 0, 32)
        return sel(f"{s}_hi_q", reg, i, 32)
    parts, pos = [], 32  # MSB first; zero runs merged
    for f in sorted(reg.fields, key=lambda f: -f.lsb):
        if f.msb + 1 < pos:
            parts.append(("0", pos - f.msb - 1))
        s = reg.stem(f)
        if f.access == "w1p":
            parts.append(("0", f.width))
        elif f.access == "const":
            parts.append((f"core_regs_pkg::{const_name(reg, f)}", f.width))
        else:
            sig = f"{s}_i" if f.access == "ro" else f"{s}_q"
            parts.append((sel(sig, reg, i, f.width), f.width))
        pos = f.lsb
    if pos > 0:
        parts.append(("0", pos))
    merged = []
    for p in parts:
        if p[0] == "0" and merged and merged[-1][0] == "0":
            merged[-1] = ("0", merged[-1][1] + p[1])
        else:
            merged.append(p)
    items = [f"{w}'d0" if e == "0" else e for e, w in merged]
    return items[0] if len(items) == 1 else "{" + ", ".join(items) + "}"


def write_lines(reg, i, half):
    """Statements performing a write of one word of element i."""
    out = []
    for f in reg.fields:
        s = reg.stem(f)
        if reg.width == 64:
            lo, width, dlo = 0, 32, 32 * half  # the half of the 64-bit value
        else:
            lo, width, dlo = f.lsb, f.width, 0
        data = "w_data_q" if width == 32 else f"w_data_q{bits_range(lo, width)}"
        mask = "wr_mask" if width == 32 else f"wr_mask{bits_range(lo, width)}"
        if f.access == "rw":
            q = sel(f"{s}_q", reg, i, f.width, dlo, width)
            d = sel(f"{s}_d", reg, i, f.width, dlo, width)
            out.append(f"{d} = ({q} & ~{mask}) | ({data} & {mask});")
        elif f.access == "w1p":
            out.append(f"{sel(f'{s}_d', reg, i, f.width)} = {data} & {mask};")
        elif f.access == "w1c":
            out.append(f"{sel(f'{s}_clr', reg, i, f.width)} = {data} & {mask};")
    if reg.has("rw"):
        out.append(f"{sel(reg.name.lower() + '_we_d', reg, i, 1)} = 1'b1;")
    return out


def decl(width):
    return "      " if width == 1 else f"[{width - 1}:0]".ljust(6)


def reset_value(f, count):
    if f.reset == 0:
        return "'0"
    lit = f"{f.width}'h{hexw(f.reset, f.width)}"
    return lit if count == 1 else f"{{{count}{{{lit}}}}}"


def gen_rtl(rm, source):
    regs = rm.registers
    rw = [(r, f) for r in regs for f in r.fields if f.access == "rw"]
    w1p = [(r, f) for r in regs for f in r.fields if f.access == "w1p"]
    w1c = [(r, f) for r in regs for f in r.fields if f.access == "w1c"]
    shadows = [(r, r.fields[0]) for r in regs if r.width == 64 and r.fields[0].access == "ro"]
    we_regs = [r for r in regs if r.has("rw")]

    L = [f"// {header(source)}", "//",
         f"// core_regs: the {rm.name} register block (docs/registers.md), an AXI4-Lite",
         f"// slave with 32-bit data and a {ADDR_BITS}-bit byte address.",
         "// - Writes: AW and W are each held in a one-entry buffer, accepted in any order",
         "//   or together; the write is performed once both are held and the previous B",
         "//   response has been taken, and its B response is valid the next cycle.",
         "//   Reads: AR is accepted while no R response is pending; R is valid the next",
         "//   cycle. Writes and reads proceed independently; one write and one read every",
         "//   2 cycles at most, no combinational path from any input to any ready/valid.",
         "// - Address bits [1:0] are ignored. An address naming no register gets SLVERR:",
         "//   a write has no effect, a read returns 0. Writes to ro and const registers",
         "//   are accepted (OKAY) and have no effect.",
         "// - WSTRB: a byte whose strobe is 0 is not written (rw, w1p and w1c fields).",
         "// - rw: value on <reg>[_<field>]_o; <reg>_we_o pulses for one cycle on every",
         "//   write of the register (either half of a 64-bit one, any WSTRB), in the first",
         "//   cycle its new value is on _o. ro: read from _i as is. w1p: writing 1 pulses",
         "//   _o for one cycle; reads 0. w1c: _set_i sets, writing 1 clears, a set wins over",
         "//   a clear in the same cycle; value on _o. const: the package value, no port.",
         "// - 64-bit registers span two words (low at REG_*, high at REG_*_HI) and have one",
         "//   64-bit port. Reading the low word of a 64-bit ro register also captures its",
         "//   high half in a shadow register that reads of the high word return, so low",
         "//   then high read one sample (the shadow is 0 until the first low read).",
         "// - Arrays (COUNT elements, STRIDE bytes apart) have flat ports: element i's value",
         "//   at [i*W +: W], its we pulse at [i].",
         "// - Reset: synchronous, active high; rw and w1c fields take their reset values.",
         "`default_nettype none", "", "module core_regs (",
         "  input  logic        clk_i,", "  input  logic        rst_i,",
         "  // AXI4-Lite slave (BAR0)"]
    A = ADDR_BITS
    axil = [("input", f"[{A - 1}:0]", "awaddr"), ("input", "[2:0]", "awprot"),
            ("input", "", "awvalid"), ("output", "", "awready"),
            ("input", "[31:0]", "wdata"), ("input", "[3:0]", "wstrb"),
            ("input", "", "wvalid"), ("output", "", "wready"),
            ("output", "[1:0]", "bresp"), ("output", "", "bvalid"), ("input", "", "bready"),
            ("input", f"[{A - 1}:0]", "araddr"), ("input", "[2:0]", "arprot"),
            ("input", "", "arvalid"), ("output", "", "arready"),
            ("output", "[31:0]", "rdata"), ("output", "[1:0]", "rresp"),
            ("output", "", "rvalid"), ("input", "", "rready")]
    port_lines = [f"  {d:<6} logic {w:<6} s_axil_{n}" for d, w, n in axil]
    for r in regs:
        p = ports(r)
        if not p:
            continue
        where = f"{r.offset:#05x}" + (f" + i*{r.stride:#x}, i < {r.count}" if r.count > 1 else "")
        port_lines.append(f"  // {r.name} ({where})")
        for d, pn, w, f in p:
            what = "we pulse" if f is None else f.access + ("" if r.is_value else " " + bits_range(f.lsb, f.width))
            port_lines.append(f"  {d:<6} logic {decl(w)} {pn}  // {what}")
    # Commas between ports, placed before any trailing comment.
    for k, line in enumerate(port_lines):
        if line.lstrip().startswith("//"):
            L.append(line)
            continue
        last = all(x.lstrip().startswith("//") for x in port_lines[k + 1:])
        code, sep, comment = line.partition("  //")
        L.append(code.rstrip() + ("" if last else ",") + (f"  //{comment}" if sep else ""))
    L += [");", "",
          "  localparam logic [1:0] RESP_OKAY   = 2'b00;",
          "  localparam logic [1:0] RESP_SLVERR = 2'b10;", "",
          "  // ---- Write channel: one-entry AW and W buffers, one B response",
          "  logic        aw_valid_q, aw_valid_d;",
          f"  logic [{A - 1}:2] aw_addr_q, aw_addr_d;  // word address",
          "  logic        w_valid_q, w_valid_d;",
          "  logic [31:0] w_data_q, w_data_d;",
          "  logic [3:0]  w_strb_q, w_strb_d;",
          "  logic        b_valid_q, b_valid_d;",
          "  logic [1:0]  b_resp_q, b_resp_d;",
          "  logic        wr_fire;  // the held write is performed this cycle",
          "  logic        wr_hit;   // its address names a register",
          f"  logic [{A - 1}:0] wr_addr;",
          "  logic [31:0] wr_mask;  // WSTRB as a bit mask", "",
          "  assign s_axil_awready = !aw_valid_q;",
          "  assign s_axil_wready  = !w_valid_q;",
          "  assign s_axil_bvalid  = b_valid_q;",
          "  assign s_axil_bresp   = b_resp_q;",
          "  assign wr_fire = aw_valid_q && w_valid_q && !b_valid_q;",
          "  assign wr_addr = {aw_addr_q, 2'b00};",
          "  assign wr_mask = {{8{w_strb_q[3]}}, {8{w_strb_q[2]}}, {8{w_strb_q[1]}}, {8{w_strb_q[0]}}};",
          "",
          "  always_comb begin",
          "    aw_valid_d = aw_valid_q;",
          "    aw_addr_d  = aw_addr_q;",
          "    w_valid_d  = w_valid_q;",
          "    w_data_d   = w_data_q;",
          "    w_strb_d   = w_strb_q;",
          "    b_valid_d  = b_valid_q && !s_axil_bready;",
          "    b_resp_d   = b_resp_q;",
          "    if (s_axil_awvalid && s_axil_awready) begin",
          "      aw_valid_d = 1'b1;",
          f"      aw_addr_d  = s_axil_awaddr[{A - 1}:2];",
          "    end",
          "    if (s_axil_wvalid && s_axil_wready) begin",
          "      w_valid_d = 1'b1;",
          "      w_data_d  = s_axil_wdata;",
          "      w_strb_d  = s_axil_wstrb;",
          "    end",
          "    if (wr_fire) begin",
          "      aw_valid_d = 1'b0;",
          "      w_valid_d  = 1'b0;",
          "      b_valid_d  = 1'b1;",
          "      b_resp_d   = wr_hit ? RESP_OKAY : RESP_SLVERR;",
          "    end",
          "  end", "",
          "  // ---- Read channel: one R response",
          "  logic        r_valid_q, r_valid_d;",
          "  logic [31:0] r_data_q, r_data_d;",
          "  logic [1:0]  r_resp_q, r_resp_d;",
          "  logic        rd_fire;  // an AR is accepted this cycle",
          "  logic        rd_hit;   // its address names a register",
          f"  logic [{A - 1}:0] rd_addr;",
          "  logic [31:0] rd_data;", "",
          "  assign s_axil_arready = !r_valid_q;",
          "  assign s_axil_rvalid  = r_valid_q;",
          "  assign s_axil_rdata   = r_data_q;",
          "  assign s_axil_rresp   = r_resp_q;",
          "  assign rd_fire = s_axil_arvalid && s_axil_arready;",
          f"  assign rd_addr = {{s_axil_araddr[{A - 1}:2], 2'b00}};", "",
          "  // ---- Register state"]

    # Every name the module declares, to refuse a register whose signals would
    # collide with another's or with the channel logic's.
    declared = [n for _, _, n in axil] + [p for r in regs for _, p, _, _ in ports(r)]
    declared += [f"{c}_{s}" for c in ("aw_valid", "aw_addr", "w_valid", "w_data", "w_strb", "b_valid",
                                      "b_resp", "r_valid", "r_data", "r_resp") for s in ("q", "d")]
    declared += ["wr_fire", "wr_hit", "wr_addr", "wr_mask", "rd_fire", "rd_hit", "rd_addr", "rd_data",
                 "unused_axil", "b_stalled_q", "r_stalled_q", "b_resp_held_q", "r_resp_held_q",
                 "r_data_held_q", "RESP_OKAY", "RESP_SLVERR"]

    def sig(nm, w, comment=""):
        declared.extend([f"{nm}_q", f"{nm}_d"])
        return commented(f"  logic {decl(w)} {nm}_q, {nm}_d;", comment)

    for r, f in rw:
        L.append(sig(f"{r.stem(f)}", r.count * f.width, f"{r.name}.{f.name} (rw)"))
    for r in we_regs:
        L.append(sig(f"{r.name.lower()}_we", r.count, f"{r.name} written"))
    for r, f in w1p:
        L.append(sig(f"{r.stem(f)}", r.count * f.width, f"{r.name}.{f.name} (w1p pulse)"))
    for r, f in w1c:
        L.append(sig(f"{r.stem(f)}", r.count * f.width, f"{r.name}.{f.name} (w1c)"))
        L.append(f"  logic {decl(r.count * f.width)} {r.stem(f)}_clr;  // cleared by this write")
        declared.append(f"{r.stem(f)}_clr")
    for r, f in shadows:
        L.append(sig(f"{r.stem(f)}_hi", r.count * 32, f"{r.name} high-half shadow"))
    L.append("")
    unique(declared, "core_regs", "signal")

    # Write decode.
    L += ["  // Next state: values hold, pulses end; a performed write updates its register.",
          "  always_comb begin"]
    for r, f in rw:
        L.append(f"    {r.stem(f)}_d = {r.stem(f)}_q;")
    for r in we_regs:
        L.append(f"    {r.name.lower()}_we_d = '0;")
    for r, f in w1p:
        L.append(f"    {r.stem(f)}_d = '0;")
    for r, f in w1c:
        L.append(f"    {r.stem(f)}_clr = '0;")
    L += ["    wr_hit = 1'b0;", "    if (wr_fire) begin", "      case (wr_addr)"]
    for r in regs:
        for i in range(r.count):
            for half in range(r.words):
                body = write_lines(r, i, half)
                label = addr_label(r, i, half)
                if not body:
                    L.append(commented(f"        {label}: wr_hit = 1'b1;", f"{word_label(r, i, half)}: no effect",
                                       "        "))
                    continue
                L.append(commented(f"        {label}: begin", word_label(r, i, half), "        "))
                L.append("          wr_hit = 1'b1;")
                L += [f"          {s}" for s in body]
                L.append("        end")
    L += ["        default: wr_hit = 1'b0;", "      endcase", "    end"]
    if w1c:
        L.append("    // w1c: a hardware set wins over a software clear in the same cycle.")
        for r, f in w1c:
            s = r.stem(f)
            L.append(f"    {s}_d = ({s}_q & ~{s}_clr) | {s}_set_i;")
    L += ["  end", ""]

    # Read mux.
    L += ["  // Read mux, sampled when AR is accepted.", "  always_comb begin"]
    for r, f in shadows:
        L.append(f"    {r.stem(f)}_hi_d = {r.stem(f)}_hi_q;")
    L += ["    rd_hit  = 1'b1;", "    rd_data = '0;", "    case (rd_addr)"]
    for r in regs:
        for i in range(r.count):
            for half in range(r.words):
                extra = []
                e = read_expr(r, i, half, extra)
                label = addr_label(r, i, half)
                if extra:
                    L.append(commented(f"      {label}: begin", word_label(r, i, half), "      "))
                    L.append(f"        rd_data = {e};")
                    L += [f"        {s}" for s in extra]
                    L.append("      end")
                else:
                    L.append(commented(f"      {label}: rd_data = {e};", word_label(r, i, half), "      "))
    L += ["      default: rd_hit = 1'b0;", "    endcase",
          "    r_valid_d = r_valid_q && !s_axil_rready;",
          "    r_data_d  = r_data_q;",
          "    r_resp_d  = r_resp_q;",
          "    if (rd_fire) begin",
          "      r_valid_d = 1'b1;",
          "      r_data_d  = rd_data;",
          "      r_resp_d  = rd_hit ? RESP_OKAY : RESP_SLVERR;",
          "    end", "  end", ""]

    # Flops.
    ctrl = ["aw_valid", "w_valid", "b_valid", "r_valid"]
    L += ["  always_ff @(posedge clk_i) begin", "    if (rst_i) begin"]
    L += [f"      {c}_q <= 1'b0;" for c in ctrl]
    for r, f in rw + w1c:
        L.append(f"      {r.stem(f)}_q <= {reset_value(f, r.count)};")
    for r in we_regs:
        L.append(f"      {r.name.lower()}_we_q <= '0;")
    for r, f in w1p:
        L.append(f"      {r.stem(f)}_q <= '0;")
    for r, f in shadows:
        L.append(f"      {r.stem(f)}_hi_q <= '0;")
    L.append("    end else begin")
    L += [f"      {c}_q <= {c}_d;" for c in ctrl]
    for r, f in rw + w1c + w1p:
        L.append(f"      {r.stem(f)}_q <= {r.stem(f)}_d;")
    for r in we_regs:
        L.append(f"      {r.name.lower()}_we_q <= {r.name.lower()}_we_d;")
    for r, f in shadows:
        L.append(f"      {r.stem(f)}_hi_q <= {r.stem(f)}_hi_d;")
    L += ["    end", "  end", "",
          "  // Datapath registers: meaningful only while their valid bit is set.",
          "  always_ff @(posedge clk_i) begin"]
    for c in ["aw_addr", "w_data", "w_strb", "b_resp", "r_data", "r_resp"]:
        L.append(f"    {c}_q <= {c}_d;")
    L += ["  end", "", "  // ---- Outputs"]
    for r, f in rw + w1p + w1c:
        L.append(f"  assign {r.stem(f)}_o = {r.stem(f)}_q;")
    for r in we_regs:
        L.append(f"  assign {r.name.lower()}_we_o = {r.name.lower()}_we_q;")
    L += ["",
          "  // Protection is not used; address bits [1:0] (a byte within a word) are ignored.",
          "  logic unused_axil;",
          f"  assign unused_axil = ^{{s_axil_awprot, s_axil_arprot, s_axil_awaddr[1:0], s_axil_araddr[1:0]}};",
          "",
          "`ifndef SYNTHESIS",
          "  // AXI: a response is held, unchanged, until it is taken.",
          "  logic       b_stalled_q, r_stalled_q;",
          "  logic [1:0] b_resp_held_q, r_resp_held_q;",
          "  logic [31:0] r_data_held_q;",
          "  always_ff @(posedge clk_i) begin",
          "    b_stalled_q   <= !rst_i && s_axil_bvalid && !s_axil_bready;",
          "    r_stalled_q   <= !rst_i && s_axil_rvalid && !s_axil_rready;",
          "    b_resp_held_q <= s_axil_bresp;",
          "    r_resp_held_q <= s_axil_rresp;",
          "    r_data_held_q <= s_axil_rdata;",
          "    if (!rst_i) begin",
          "      assert (!b_stalled_q || (s_axil_bvalid && s_axil_bresp == b_resp_held_q))",
          "      else $error(\"core_regs: B response changed while stalled\");",
          "      assert (!r_stalled_q || (s_axil_rvalid && s_axil_rresp == r_resp_held_q &&",
          "                                s_axil_rdata == r_data_held_q))",
          "      else $error(\"core_regs: R response changed while stalled\");",
          "    end",
          "  end",
          "`endif", "", "endmodule", "", "`default_nettype wire", ""]
    return "\n".join(L)


# ---------------------------------------------------------------------------
# sw/include/farnn/core_regs.hpp

def cpp_hex(v, bits):
    return f"0x{v:0{(bits + 3) // 4}X}" + ("ull" if bits > 32 else "u")


def cpp_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def cpp_type(width):
    return "bool" if width == 1 else "uint8_t" if width <= 8 else "uint16_t" if width <= 16 \
        else "uint32_t" if width <= 32 else "uint64_t"


def gen_hpp(rm, source):
    L = [f"// {header(source)}", "//",
         f"// {rm.name}'s register map and descriptor layout for the host (docs/registers.md",
         "// is the reference; rtl/core/core_regs_pkg.sv is the RTL's copy): BAR0 byte",
         "// offsets kReg*, array offsets kReg<Name>(i), field shifts, widths and in-place",
         "// masks of multi-field registers, constant register values, the codes the core",
         "// reports (with to_string and describe), a table of every register and field",
         "// (kRegisters), and the descriptor: field positions, the bits each op uses",
         "// (desc_used_bits) and struct Descriptor with encode()/decode().",
         "#pragma once", "",
         "// Laid out by the generator, not by clang-format.",
         "// clang-format off",
         "#include <array>", "#include <cstdint>", "#include <span>", "#include <stdexcept>",
         "#include <string>", "",
         "namespace farnn::core_regs {", "",
         f"inline constexpr uint32_t kBlockBytes = {rm.block_bytes};", "",
         "// ---- Register offsets (bytes into BAR0). A 64-bit register's high word is at",
         "// kReg<Name>Hi; read the low word first (it latches the high half of ro ones)."]
    for gname, _, regs in rm.groups:
        L.append(f"// {gname}")
        for r in regs:
            c = camel(r.name)
            if r.count == 1:
                L.append(f"inline constexpr uint32_t kReg{c} = {r.offset:#05x};")
                if r.width == 64:
                    L.append(f"inline constexpr uint32_t kReg{c}Hi = {r.offset + 4:#05x};")
            else:
                L.append(f"inline constexpr unsigned k{c}Count = {r.count};")
                L.append(f"inline constexpr uint32_t k{c}Stride = {r.stride:#x};")
                L.append(f"constexpr uint32_t kReg{c}(unsigned i) {{ return {r.offset:#05x} + i * k{c}Stride; }}")
                if r.width == 64:
                    L.append(f"constexpr uint32_t kReg{c}Hi(unsigned i) {{ return {r.offset + 4:#05x} + i * k{c}Stride; }}")
    L += ["", "// ---- Fields of multi-field registers: shift, width and in-place mask"]
    for r in rm.registers:
        if r.is_value:
            continue
        for f in r.fields:
            c = camel(r.name) + camel(f.name)
            L.append(f"inline constexpr unsigned k{c}Shift = {f.lsb};")
            L.append(f"inline constexpr unsigned k{c}Width = {f.width};")
            L.append(f"inline constexpr uint32_t k{c}Mask = {cpp_hex(((1 << f.width) - 1) << f.lsb, 32)};")
    L += ["", "// ---- Constant register values"]
    for r in rm.registers:
        for f in r.fields:
            if f.access == "const":
                L.append(f"inline constexpr uint32_t k{camel(const_name(r, f))} = {cpp_hex(f.reset, 32)};")
    for e in rm.enums.values():
        t = e.cpp_type
        L += ["", comment_block(e.doc),
              f"enum class {t} : {cpp_type(max(e.width, 2))} {{"]
        L += [commented(f"  k{camel(v.name)} = {v.value},", v.doc) for v in e.values]
        L += ["};", "",
              f"// \"{e.sv_prefix}<NAME>\" as in core_regs_pkg; \"unknown\" for other values.",
              f"constexpr const char* to_string({t} v) {{", "  switch (v) {"]
        L += [f"    case {t}::k{camel(v.name)}: return \"{e.sv_prefix}{v.name}\";" for v in e.values]
        L += ["  }", "  return \"unknown\";", "}", "",
              f"constexpr const char* describe({t} v) {{", "  switch (v) {"]
        L += [f"    case {t}::k{camel(v.name)}: return {cpp_str(v.doc)};" for v in e.values]
        L += ["  }", "  return \"unknown code\";", "}"]
    L += ["", "// ---- Register table: every register and field, in the source's order.",
          "enum class Access : uint8_t { kRw, kRo, kW1p, kW1c, kConst };", "",
          "constexpr const char* to_string(Access a) {", "  switch (a) {"]
    L += [f"    case Access::k{camel(a)}: return \"{a}\";" for a in ACCESS_TYPES]
    L += ["  }", "  return \"unknown\";", "}", "",
          "struct FieldInfo {",
          "  const char* name;",
          "  unsigned lsb;",
          "  unsigned width;",
          "  Access access;",
          "  uint64_t reset;  // rw and w1c: value after reset; const: the value; else 0",
          "};", "",
          "struct RegisterInfo {",
          "  const char* name;",
          "  uint32_t offset;  // element 0 (low word of a 64-bit register)",
          "  unsigned width;   // 32 or 64 bits",
          "  unsigned count;   // array elements (1: not an array)",
          "  uint32_t stride;  // bytes between elements",
          "  std::span<const FieldInfo> fields;",
          "  constexpr uint32_t offset_of(unsigned i) const { return offset + i * stride; }",
          "};", "", "namespace detail {"]
    for r in rm.registers:
        L.append(f"inline constexpr FieldInfo k{camel(r.name)}Fields[] = {{")
        for f in r.fields:
            L.append(f"    {{\"{f.name}\", {f.lsb}, {f.width}, Access::k{camel(f.access)}, "
                     f"{cpp_hex(f.reset, r.width) if f.reset else 0}}},")
        L.append("};")
    L += ["}  // namespace detail", "", "inline constexpr RegisterInfo kRegisters[] = {"]
    for r in rm.registers:
        L.append(f"    {{\"{r.name}\", {r.offset:#05x}, {r.width}, {r.count}, {r.stride:#x}, "
                 f"detail::k{camel(r.name)}Fields}},")
    L += ["};", "",
          "// ---- Descriptor: kDescWords little-endian words; 64-bit fields low word first.",
          f"inline constexpr unsigned kDescWords = {rm.desc_words};",
          f"inline constexpr unsigned kDescBytes = {rm.desc_words * 4};",
          "using DescWords = std::array<uint32_t, kDescWords>;", ""]
    for f in rm.desc_fields:
        c = camel(f.name)
        L.append(f"inline constexpr unsigned kDesc{c}Word = {f.word};")
        L.append(f"inline constexpr unsigned kDesc{c}Lsb = {f.lsb};")
        L.append(f"inline constexpr unsigned kDesc{c}Width = {f.width};")
    L += ["", "struct DescFieldInfo {", "  const char* name;", "  unsigned word;", "  unsigned lsb;",
          "  unsigned width;", "};", "", "inline constexpr DescFieldInfo kDescFields[] = {"]
    L += [f"    {{\"{f.name}\", {f.word}, {f.lsb}, {f.width}}}," for f in rm.desc_fields]
    L += ["};", "",
          "// The bits an op uses; every other bit of its descriptor must be 0. Unknown ops use none.",
          "constexpr DescWords desc_used_bits(Op op) {", "  switch (op) {"]
    for op in rm.ops:
        words = ", ".join(f"0x{w:08X}u" for w in used_bits(rm, op.name))
        L.append(f"    case Op::k{camel(op.name)}: return DescWords{{{words}}};")
    L += ["  }", "  return DescWords{};", "}", "",
          "namespace detail {",
          "// Puts v into a field; throws when it does not fit.",
          "inline void desc_put(DescWords& w, unsigned word, unsigned lsb, unsigned width, uint64_t v,",
          "                     const char* name) {",
          "  if (width < 64 && (v >> width) != 0) {",
          "    throw std::invalid_argument(std::string(\"Descriptor::encode: \") + name + \" = \" +",
          "                                std::to_string(v) + \" does not fit in \" + std::to_string(width) +",
          "                                \" bits\");",
          "  }",
          "  if (width == 64) {",
          "    w[word] = static_cast<uint32_t>(v);",
          "    w[word + 1] = static_cast<uint32_t>(v >> 32);",
          "  } else {",
          "    w[word] |= static_cast<uint32_t>(v) << lsb;",
          "  }",
          "}", "",
          "constexpr uint64_t desc_get(const DescWords& w, unsigned word, unsigned lsb, unsigned width) {",
          "  if (width == 64) return w[word] | (uint64_t{w[word + 1]} << 32);",
          "  const uint64_t mask = (uint64_t{1} << width) - 1;",
          "  return (w[word] >> lsb) & mask;",
          "}",
          "}  // namespace detail", "",
          "// One descriptor with a member per field (docs/registers.md: which ops use which).",
          "struct Descriptor {"]
    enum_types = {e.name: e.cpp_type for e in rm.enums.values()}
    for f in rm.desc_fields:
        t = enum_types[f.enum] if f.enum else cpp_type(f.width)
        pos = f"w{f.word}" + ("-" + str(f.word + 1) if f.width == 64 else f"[{f.lsb + f.width - 1}:{f.lsb}]")
        L.append(commented(f"  {t} {f.name}{{}};", f"{pos} {f.doc}"))
    L += ["",
          "  // The descriptor's words; throws std::invalid_argument naming a field whose value",
          "  // does not fit (unused fields are encoded too: leave them 0).",
          "  DescWords encode() const;",
          "  static Descriptor decode(const DescWords& w);",
          "  bool operator==(const Descriptor&) const = default;",
          "};", "",
          "inline DescWords Descriptor::encode() const {",
          "  DescWords w{};"]
    for f in rm.desc_fields:
        c = camel(f.name)
        L.append(f"  detail::desc_put(w, kDesc{c}Word, kDesc{c}Lsb, kDesc{c}Width, "
                 f"static_cast<uint64_t>({f.name}), \"{f.name}\");")
    L += ["  return w;", "}", "",
          "inline Descriptor Descriptor::decode(const DescWords& w) {", "  Descriptor d;"]
    for f in rm.desc_fields:
        c = camel(f.name)
        get = f"detail::desc_get(w, kDesc{c}Word, kDesc{c}Lsb, kDesc{c}Width)"
        if f.width == 1 and not f.enum:
            L.append(f"  d.{f.name} = {get} != 0;")
        else:
            t = enum_types[f.enum] if f.enum else cpp_type(f.width)
            L.append(f"  d.{f.name} = static_cast<{t}>({get});")
    L += ["  return d;", "}", "", "}  // namespace farnn::core_regs", "// clang-format on", ""]
    return "\n".join(L)


# ---------------------------------------------------------------------------
# docs/registers.md

def md_reset(reg):
    """The reset column: the value reads return after reset, or 'hw' for ro bits."""
    if all(f.access == "ro" for f in reg.fields):
        return "hw"
    v = sum(f.reset << f.lsb for f in reg.fields if f.access in ("rw", "w1c", "const"))
    return f"`{v:#0{reg.width // 4 + 2}x}`" + (" + hw" if reg.has("ro") else "")


def md_offset(reg):
    if reg.count == 1:
        return f"`{reg.offset:#05x}`"
    return f"`{reg.offset:#05x}` + i·`{reg.stride:#x}`"


def enum_title(e):
    return f"{e.name.replace('_', ' ').capitalize()} codes"


def gen_doc(rm, source):
    L = [f"<!-- {header(source)} -->", "",
         f"# {rm.name} registers and descriptors", "", rm.doc, "",
         "## Conventions", "",
         "- Registers are 32 bits, little-endian, accessed with 32-bit AXI4-Lite reads and "
         "writes. Address bits [1:0] are ignored. An address that names no register answers "
         "SLVERR: a write has no effect and a read returns 0. Writes to `ro` and `const` "
         "registers are accepted and have no effect.",
         "- WSTRB applies: a byte whose strobe is 0 is not written, for every writable field.",
         "- 64-bit registers take two words, the low half at the offset and the high half at "
         "offset + 4. A write of either half updates only that half. Read a 64-bit `ro` "
         "register low word first: that read latches the high half, which the next read of "
         "the high word returns, so the two reads form one sample.",
         "- Arrays: `<name>[i]` is at offset + i·stride for i below the count.",
         "- Reset values apply after the core's reset; `hw` means the value comes from the "
         "hardware.",
         "- Ports: the names of the hardware ports of `core_regs` (rtl/core/core_regs.sv) for "
         "the shell. A field of a register whose only field is `value` uses the register's "
         "name alone. Arrays have flat ports (element i at [i·W +: W]). Registers with an "
         "`rw` field also have `<reg>_we_o`, a one-cycle pulse on every write of the register "
         "(either half of a 64-bit one), in the first cycle its new value is on `_o`.", "",
         "| Access | Meaning |", "|---|---|"]
    L += [f"| `{a}` | {ACCESS_DOC[a]} |" for a in ACCESS_TYPES]
    L += ["", "## Address map", "", "| Offset | Register | Width | Access | Reset | Description |",
          "|---|---|---|---|---|---|"]
    for r in rm.registers:
        nm = r.name + (f"[0..{r.count - 1}]" if r.count > 1 else "")
        acc = ", ".join(dict.fromkeys(f.access for f in r.fields))
        L.append(f"| {md_offset(r)} | [{nm}](#{r.name.lower()}) | {r.width} | {acc} | "
                 f"{md_reset(r)} | {r.doc} |")
    L += ["", "## Registers", ""]
    for gname, gdoc, regs in rm.groups:
        L += [f"### {gname}", "", gdoc, ""]
        for r in regs:
            where = md_offset(r) + (f", i < {r.count}" if r.count > 1 else "")
            L += [f"#### {r.name}", "", f"Offset {where}; {r.width} bits. {r.doc}", "",
                  "| Bits | Field | Access | Reset | Description |", "|---|---|---|---|---|"]
            for f in sorted(r.fields, key=lambda f: -f.lsb):
                reset = "hw" if f.access == "ro" else "0" if f.access == "w1p" else f"`{f.reset:#x}`"
                enum = f" Values: [{enum_title(rm.enums[f.enum])}]" \
                       f"(#{enum_title(rm.enums[f.enum]).lower().replace(' ', '-')})." if f.enum else ""
                L.append(f"| {bits_range(f.lsb, f.width)} | {f.name} | {f.access} | {reset} | "
                         f"{f.doc}{enum} |")
            p = ports(r)
            L += ["", "Ports: " + (", ".join(f"`{d} {pn}" + (f" [{w - 1}:0]`" if w > 1 else "`")
                                             for d, pn, w, _ in p) if p else "none (constant)") + ".", ""]
    for e in rm.enums.values():
        L += [f"## {enum_title(e)}", "", e.doc, "",
              f"| Value | Name | Meaning |", "|---|---|---|"]
        for v in e.values:
            L.append(f"| {v.value} | `{e.sv_prefix}{v.name}` | {v.doc}" +
                     (" (engine code)" if v.engine else "") + " |")
        L.append("")
    L += ["## Descriptors", "", rm.desc_doc, "",
          f"Size: {rm.desc_words} words ({rm.desc_words * 4} bytes).", "",
          "### Layout", "", "| Word | Bits | Field | Used by | Description |", "|---|---|---|---|---|"]
    for f in rm.desc_fields:
        word = f"{f.word}-{f.word + 1}" if f.width == 64 else f"{f.word}"
        bits = "[63:0]" if f.width == 64 else bits_range(f.lsb, f.width)
        users = ", ".join(op.name for op in rm.ops if op.name in f.ops)
        per_op = " ".join(f"{op.name}: {f.ops[op.name]}" for op in rm.ops if f.ops.get(op.name))
        L.append(f"| {word} | {bits} | {f.name} | {users} | {f.doc}{' ' + per_op if per_op else ''} |")
    L += ["", "Words not listed are reserved (0) for every op.", "", "### Fields per op", ""]
    for op in rm.ops:
        L += [f"#### {op.name} ({op.value})", "", op.doc, "",
              "| Word | Bits | Field | Meaning |", "|---|---|---|---|"]
        for f in rm.desc_fields:
            if op.name in f.ops:
                word = f"{f.word}-{f.word + 1}" if f.width == 64 else f"{f.word}"
                bits = "[63:0]" if f.width == 64 else bits_range(f.lsb, f.width)
                L.append(f"| {word} | {bits} | {f.name} | {f.ops[op.name] or f.doc} |")
        used = used_bits(rm, op.name)
        L += ["", "Used bits (word: mask), every other bit must be 0: " +
              (", ".join(f"{w}: `{m:#010x}`" for w, m in enumerate(used) if m) or "none") + ".", ""]
    return "\n".join(L)


# ---------------------------------------------------------------------------

OUTPUTS = (
    ("rtl/core/core_regs_pkg.sv", gen_pkg),
    ("rtl/core/core_regs.sv", gen_rtl),
    ("sw/include/farnn/core_regs.hpp", gen_hpp),
    ("docs/registers.md", gen_doc),
)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--regmap", default=DEFAULT_REGMAP, help="the source (default: %(default)s)")
    ap.add_argument("--out-dir", default=REPO, help="root the generated paths are under (default: the repository)")
    ap.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 when stale")
    args = ap.parse_args(argv)
    try:
        rm = load(args.regmap)
        src = source_name(args.regmap)
        generated = [(rel, gen(rm, src)) for rel, gen in OUTPUTS]
    except RegmapError as e:
        print(f"gen_regmap.py: error: {e}", file=sys.stderr)
        return 2
    stale = 0
    for rel, content in generated:
        path = os.path.join(args.out_dir, rel)
        try:
            with open(path) as f:
                current = f.read()
        except OSError:
            current = None
        if current == content:
            continue
        if args.check:
            why = "missing" if current is None else "differs from a fresh generation"
            print(f"stale: {rel} {why}; run tools/regmap/gen_regmap.py", file=sys.stderr)
            stale += 1
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(content)
            print(f"wrote {rel}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
