#!/usr/bin/env python3
"""The board checks catch what they are there to catch.

Each check runs on the real files (must pass) and on copies with one planted
mistake each (must fail, for the stated reason). The mutations:
  lint_board.sh       a connection narrowed to 32 bits; a port of an IP stub renamed
  check_xdc_ports     a misspelt port; a bit beyond a port's range; a board-flow
                      name that is no port; a new top port nobody constrains
  check_core_params   NumPe off by one; MaxHidden set by a constant; ClockKhz set by
                      a constant; capacity-model inputs that change the PE count
  board_params        a capacity document whose sentence disagrees with its inputs
  compare_stub        a generated template with a port of another width; with an
                      extra port
  check_tcl.tcl       an unbalanced brace; an IP script creating an IP not named
                      like its file; a clock hard-coded in clk_core.tcl; a CONFIG
                      key set twice
Usage: selftest_board_checks.py BOARD [--no-lint]   (exit 0: every case as expected)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
COMMON = os.path.join(ROOT, "fpga", "common")
sys.path.insert(0, COMMON)
import board_params  # noqa: E402
import svports  # noqa: E402

failures = 0


def run(cmd, cwd=None):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def expect(name, cmd, ok, needle=None, cwd=None):
    global failures
    rc, out = run(cmd, cwd)
    good = (rc == 0) == ok and (needle is None or re.search(needle, out))
    print("%s  %s" % ("ok  " if good else "FAIL", name))
    if not good:
        failures += 1
        print("      expected %s%s, got exit %d:\n      %s" % (
            "success" if ok else "failure", "" if needle is None else " matching /%s/" % needle, rc,
            "\n      ".join(out.strip().splitlines()[-8:])))


def mutate(src, dst, old, new, count=1):
    text = open(src).read()
    if text.count(old) < 1:
        raise SystemExit("selftest: %s does not contain %r (update the mutation)" % (src, old))
    open(dst, "w").write(text.replace(old, new, count))


def main(argv):
    board = argv[0] if argv else "u250"
    lint = "--no-lint" not in argv
    bdir = os.path.join(ROOT, "fpga", board)
    top = os.path.join(bdir, "rtl", "fpga_%s.sv" % board)
    xdc = os.path.join(ROOT, "constraints", board, "fpga_%s.xdc" % board)
    tmp = tempfile.mkdtemp(prefix="farnn-board-selftest-")
    try:
        py = sys.executable
        # ---- lint
        if lint:
            lint_sh = os.path.join(COMMON, "lint_board.sh")
            expect("lint: the board top is clean", [lint_sh, board, "--quick"], True)
            m = os.path.join(tmp, "narrow", "fpga_%s.sv" % board)
            os.makedirs(os.path.dirname(m))
            mutate(top, m, ".s_axib_awaddr  (pcie_awaddr)", ".s_axib_awaddr  (pcie_awaddr[31:0])")
            expect("lint: a connection narrowed to 32 bits", [lint_sh, board, "--quick", "--top", m], False, "WIDTH")
            m = os.path.join(tmp, "rename", "fpga_%s.sv" % board)
            os.makedirs(os.path.dirname(m))
            mutate(top, m, ".c0_ddr4_aresetn", ".c0_ddr4_areset_n")
            expect("lint: a port the DDR4 stub does not have", [lint_sh, board, "--quick", "--top", m], False,
                   "c0_ddr4_areset_n")
        # ---- XDC ports
        chk = [py, os.path.join(COMMON, "check_xdc_ports.py")]
        expect("xdc: the real constraints", chk + [top, xdc], True)
        m = os.path.join(tmp, "a.xdc")
        mutate(xdc, m, "[get_ports pcie_refclk_n]", "[get_ports pcie_refclk_m]")
        expect("xdc: a misspelt port", chk + [top, m], False, "pcie_refclk_m")
        mutate(xdc, m, "[get_ports {led[2]}]", "[get_ports {led[3]}]")
        expect("xdc: a bit beyond the port's range", chk + [top, m], False, r"no bit 3")
        mutate(xdc, m, "board-flow ports: clk_300_1_p", "board-flow ports: clk_300_2_p")
        expect("xdc: a board-flow name that is no port", chk + [top, m], False, "clk_300_2_p")
        t = os.path.join(tmp, "fpga_extra.sv")
        mutate(top, t, "  output wire  [2:0]  led\n", "  output wire  [2:0]  led,\n  output wire         uart_tx\n")
        expect("xdc: a new top port nobody constrains", chk + [t, xdc], False, "uart_tx")
        # ---- core parameters
        chk = [py, os.path.join(COMMON, "check_core_params.py"), "--board", board]
        expect("core params: the real top", chk + [top], True)
        t = os.path.join(tmp, "fpga_params.sv")
        top_text = open(top).read()
        num_pe = int(re.search(r"NumPe          = (\d+)", top_text).group(1))
        num_chains = int(re.search(r"NumChains      = (\d+)", top_text).group(1))
        mutate(top, t, "NumPe          = %d" % num_pe, "NumPe          = %d" % (num_pe - 1))
        expect("core params: NumPe off by one", chk + [t], False, "NumPe is %d" % (num_pe - 1))
        mutate(top, t, "NumChains      = %d" % num_chains, "NumChains      = 1")
        expect("core params: one chain where the model has chains", chk + [t], False, "NumChains is 1")
        mutate(top, t, ".MaxHidden      (MaxHidden)", ".MaxHidden      (32)")
        expect("core params: MaxHidden set by a constant", chk + [t], False, "MaxHidden is 32")
        mutate(top, t, ".ClockKhz       (ClockKhz)", ".ClockKhz       (32'd111111)")
        expect("core params: ClockKhz set by a constant", chk + [t], False, "ClockKhz must come")
        cap = os.path.join(ROOT, "docs", "capacity.md")
        md = os.path.join(tmp, "capacity.md")
        pe_lut = re.search(r'"per_pe": \{[^}]*?"LUT": (\d+)', open(cap).read()).group(1)
        mutate(cap, md, '"LUT": %s\n }' % pe_lut, '"LUT": %d\n }' % (int(pe_lut) + 36))
        expect("core params: capacity inputs that change the PE count", chk + ["--capacity", md, top], False,
               "NumPe is %d" % num_pe)
        # ---- board_params: the clock sentence against the inputs
        clock = board_params.CLOCK_SENTENCE.search(open(cap).read())
        mutate(cap, md, clock.group(0), "%s levels -> 125 MHz" % clock.group(1))
        expect("board_params: a stale clock sentence", [py, os.path.join(COMMON, "board_params.py"),
                                                        "--capacity", md, "--tcl"], False, "stale")
        # ---- compare_stub
        stub = os.path.join(bdir, "ip", "stubs", "xdma_0_stub.sv")
        _, ports = svports.parse_sv_ports(open(stub).read(), "xdma_0")

        def veo(path, ports):
            with open(path, "w") as f:
                f.write("xdma_0 your_instance_name (\n")
                for p, (d, w) in ports.items():
                    f.write("  .%s(%s),  // %s wire %s%s\n" % (p, p, d, "" if w == 1 else "[%d : 0] " % (w - 1), p))
                f.write(");\n")
        v = os.path.join(tmp, "xdma_0.veo")
        cmp_ = [py, os.path.join(COMMON, "compare_stub.py")]
        veo(v, ports)
        expect("compare_stub: the stub's own ports", cmp_ + [v, stub], True)
        p2 = dict(ports)
        p2["s_axib_awid"] = ("input", 5)
        veo(v, p2)
        expect("compare_stub: a port of another width", cmp_ + [v, stub], False, "s_axib_awid")
        p2 = dict(ports)
        p2["s_axil_awaddr"] = ("input", 32)
        veo(v, p2)
        expect("compare_stub: an extra port", cmp_ + [v, stub], False, "extra input s_axil_awaddr")
        # ---- Tcl: parse and dry runs, on a copy of the board folder
        def tcl_case(name, file, old, new, needle):  # noqa: E306
            b = os.path.join(tmp, "tcl", board)
            shutil.rmtree(os.path.join(tmp, "tcl"), ignore_errors=True)
            shutil.copytree(bdir, b)
            if file:
                mutate(os.path.join(bdir, file), os.path.join(b, file), old, new, -1)
            files = [os.path.join(COMMON, "vivado", f) for f in ("create_project.tcl", "build.tcl", "program.tcl")]
            files += sorted(os.path.join(b, "ip", f) for f in os.listdir(os.path.join(b, "ip")) if f.endswith(".tcl"))
            expect(name, ["tclsh", os.path.join(COMMON, "check_tcl.tcl"), b, ROOT] + files, file is None, needle,
                   cwd=tmp)
        tcl_case("tcl: the real scripts", None, None, None, None)
        tcl_case("tcl: an unbalanced brace", "ip/axi_cc_csr.tcl", "CONFIG.ADDR_WIDTH  {12}", "CONFIG.ADDR_WIDTH  {12",
                 "incomplete Tcl")
        tcl_case("tcl: an IP not named like its file", "ip/axi_pc_csr.tcl", "axi_pc_csr", "axi_pc_lite",
                 "did not create an IP named axi_pc_csr")
        tcl_case("tcl: a clock hard-coded in clk_core.tcl", "ip/clk_core.tcl", "[format %.3f $farnn_clock_mhz]",
                 "{125.000}", "asks the MMCM for '125.000'")
        tcl_case("tcl: a CONFIG key set twice", "ip/axi_cc_host.tcl", "CONFIG.ID_WIDTH    {4}",
                 "CONFIG.ID_WIDTH    {4} \\\n    CONFIG.DATA_WIDTH  {512}", "sets CONFIG.DATA_WIDTH twice")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("selftest: %s" % ("all cases as expected" if not failures else "%d case(s) FAILED" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
