# create_project.tcl: make a Vivado project for one board from a config file
# that fpga/common/vivado.mk writes (part, board part, top, sources, XDC, IP
# scripts, repository root). Vivado batch mode:
#   vivado -mode batch -source create_project.tcl -tclargs CONFIG.tcl OUT_DIR
# Steps: find the board part (its interfaces place the PCIe, DDR4 and clock
# pins); read the clock estimate and build id (fpga/common/board_params.py, the
# one source of both); create the project in OUT_DIR; add the RTL, the XDC and
# the top's generics (BuildId, ClockKhz); run every ip/*.tcl (each creates the
# IP its file is named after), generate its instantiation template and compare
# the ports with the lint stub (fpga/common/compare_stub.py); generate the IP;
# write farnn_params.tcl (clock target, build id) for build.tcl. Any failure
# ends the script with an error: vivado.mk then discards OUT_DIR.

proc farnn_fail {msg} {
  puts "ERROR: \[farnn\] $msg"
  error "farnn: $msg"
}

if {[llength $argv] != 2} {
  farnn_fail "usage: vivado -mode batch -source create_project.tcl -tclargs CONFIG.tcl OUT_DIR"
}
set farnn_config [file normalize [lindex $argv 0]]
set farnn_out [file normalize [lindex $argv 1]]
source $farnn_config
foreach v {farnn_board farnn_part farnn_board_part farnn_top farnn_root farnn_syn_files farnn_xdc_files farnn_ip_tcl_files} {
  if {![info exists $v]} { farnn_fail "$farnn_config does not set $v" }
}

# ---- board part: its interfaces place the pins of the IP (board flow)
if {[info exists ::env(FARNN_BOARD_REPO)] && $::env(FARNN_BOARD_REPO) ne ""} {
  set_param board.repoPaths [list $::env(FARNN_BOARD_REPO)]
}
set farnn_board_parts [get_board_parts -quiet -latest_file_version $farnn_board_part]
if {[llength $farnn_board_parts] == 0} {
  farnn_fail "board part $farnn_board_part is not installed in this Vivado: install the board files\
 (Vivado Store > Boards, or the card's board-file archive) or point FARNN_BOARD_REPO at a folder holding them"
}
set farnn_board_part_found [lindex $farnn_board_parts 0]
puts "\[farnn\] board part $farnn_board_part_found, part $farnn_part, top $farnn_top"

# ---- clock estimate and build id: one source (docs/capacity.md, git)
if {[catch {exec python3 [file join $farnn_root fpga common board_params.py] --tcl} farnn_params_tcl]} {
  farnn_fail "fpga/common/board_params.py failed: $farnn_params_tcl"
}
eval $farnn_params_tcl
puts "\[farnn\] core clock $farnn_clock_mhz MHz (period $farnn_clock_period_ns ns, $farnn_clock_levels LUT levels\
 in docs/capacity.md); BuildId 0x$farnn_build_id"
if {$farnn_build_dirty} {
  puts "WARNING: \[farnn\] the working tree has uncommitted changes: BUILD_ID 0x$farnn_build_id names the\
 commit, not exactly the RTL in this bitstream"
}

# ---- project
create_project -force $farnn_top $farnn_out -part $farnn_part
set_property board_part $farnn_board_part_found [current_project]
set_property target_language Verilog [current_project]
add_files -fileset sources_1 $farnn_syn_files
set_property file_type SystemVerilog [get_files -of_objects [get_filesets sources_1] *.sv]
set_property top $farnn_top [get_filesets sources_1]
set_property generic "BuildId=$farnn_build_id_value ClockKhz=$farnn_clock_khz" [get_filesets sources_1]
add_files -fileset constrs_1 $farnn_xdc_files

# ---- IP: every script creates the IP its file is named after
foreach farnn_ip_tcl $farnn_ip_tcl_files {
  set farnn_ip [file rootname [file tail $farnn_ip_tcl]]
  source $farnn_ip_tcl
  if {[llength [get_ips -quiet $farnn_ip]] != 1} {
    farnn_fail "$farnn_ip_tcl did not create an IP named $farnn_ip"
  }
  set farnn_xci [get_files -of_objects [get_ips $farnn_ip] $farnn_ip.xci]
  generate_target {instantiation_template} $farnn_xci
  set farnn_veo [file join [file dirname $farnn_xci] $farnn_ip.veo]
  set farnn_stub [file join [file dirname $farnn_ip_tcl] stubs ${farnn_ip}_stub.sv]
  if {[catch {exec python3 [file join $farnn_root fpga common compare_stub.py] $farnn_veo $farnn_stub} farnn_msg]} {
    farnn_fail "the generated ports of $farnn_ip differ from its lint stub:\n$farnn_msg"
  }
}
generate_target all [get_ips]

# ---- what build.tcl needs
set farnn_fh [open [file join $farnn_out farnn_params.tcl] w]
puts $farnn_fh $farnn_params_tcl
puts $farnn_fh "set farnn_top $farnn_top"
close $farnn_fh
close_project
puts "\[farnn\] project written to $farnn_out"
