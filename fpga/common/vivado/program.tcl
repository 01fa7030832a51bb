# program.tcl: load a bitstream into the FPGA over JTAG (the card's USB JTAG
# port, through a hw_server). Volatile: a power cycle brings back what the
# card's flash holds. Vivado batch mode:
#   vivado -mode batch -source program.tcl -tclargs BITFILE PART_PATTERN HW_SERVER
# PART_PATTERN picks the device on the JTAG chain (e.g. xcu250*); HW_SERVER is
# host:port of a running hw_server (localhost:3121 starts one if needed).

proc farnn_fail {msg} {
  puts "ERROR: \[farnn\] $msg"
  error "farnn: $msg"
}

if {[llength $argv] != 3} {
  farnn_fail "usage: vivado -mode batch -source program.tcl -tclargs BITFILE PART_PATTERN HW_SERVER"
}
lassign $argv farnn_bit farnn_part_pattern farnn_hw_server
if {![file exists $farnn_bit]} {
  farnn_fail "no bitstream at $farnn_bit (make bitstream first)"
}

open_hw_manager
connect_hw_server -url $farnn_hw_server
set farnn_device ""
foreach farnn_target [get_hw_targets -quiet] {
  open_hw_target -quiet $farnn_target
  set farnn_devices [get_hw_devices -quiet $farnn_part_pattern]
  if {[llength $farnn_devices] > 0} {
    set farnn_device [lindex $farnn_devices 0]
    break
  }
  close_hw_target -quiet $farnn_target
}
if {$farnn_device eq ""} {
  farnn_fail "no $farnn_part_pattern device on any JTAG target of $farnn_hw_server (is the card's USB JTAG\
 cable connected and the card powered?)"
}
current_hw_device $farnn_device
refresh_hw_device -update_hw_probes false $farnn_device
set_property PROGRAM.FILE $farnn_bit $farnn_device
program_hw_devices $farnn_device
refresh_hw_device $farnn_device
puts "\[farnn\] programmed $farnn_device with $farnn_bit"
puts "\[farnn\] now rescan PCIe on the host (docs/bring-up.md, step 2)"
close_hw_manager
