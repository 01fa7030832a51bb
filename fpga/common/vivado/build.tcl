# build.tcl: synthesis, implementation and bitstream of a project that
# create_project.tcl made. Vivado batch mode:
#   vivado -mode batch -source build.tcl -tclargs PROJECT_DIR JOBS
# Fails (and writes no bitstream) when a run fails, when the core clock's
# period is not the `make synth` estimate recorded in farnn_params.tcl, or when
# the routed design misses timing (setup or hold). On success PROJECT_DIR holds
# <top>.bit and reports/ (timing summary, clocks, utilization, CDC).

proc farnn_fail {msg} {
  puts "ERROR: \[farnn\] $msg"
  error "farnn: $msg"
}

if {[llength $argv] != 2} {
  farnn_fail "usage: vivado -mode batch -source build.tcl -tclargs PROJECT_DIR JOBS"
}
set farnn_dir [file normalize [lindex $argv 0]]
set farnn_jobs [lindex $argv 1]
source [file join $farnn_dir farnn_params.tcl]
set farnn_reports [file join $farnn_dir reports]
file mkdir $farnn_reports

open_project [file join $farnn_dir $farnn_top.xpr]

# ---- synthesis, then the timing target: the core MMCM output must run at the estimate
reset_run synth_1
launch_runs synth_1 -jobs $farnn_jobs
wait_on_run synth_1
if {[get_property PROGRESS [get_runs synth_1]] ne "100%"} {
  farnn_fail "synthesis failed (see [get_property DIRECTORY [get_runs synth_1]]/runme.log)"
}
open_run synth_1
set farnn_core_clocks [get_clocks -quiet -of_objects [get_pins -quiet u_clk_core/clk_out1]]
if {[llength $farnn_core_clocks] == 0} {
  set farnn_core_clocks [get_clocks -quiet -of_objects [get_nets -quiet core_clk]]
}
if {[llength $farnn_core_clocks] != 1} {
  farnn_fail "no single clock on u_clk_core/clk_out1 or the net core_clk (found: $farnn_core_clocks)"
}
set farnn_period [get_property PERIOD $farnn_core_clocks]
if {abs($farnn_period - $farnn_clock_period_ns) > 0.005 * $farnn_clock_period_ns} {
  farnn_fail "the core clock's period is $farnn_period ns, the make-synth estimate is $farnn_clock_period_ns ns\
 (clk_core.tcl sets the MMCM from it: regenerate the project)"
}
puts "\[farnn\] core clock [get_property NAME $farnn_core_clocks]: $farnn_period ns (target $farnn_clock_period_ns ns)"
report_utilization -file [file join $farnn_reports utilization_synth.rpt]
close_design

# ---- implementation and bitstream
launch_runs impl_1 -to_step write_bitstream -jobs $farnn_jobs
wait_on_run impl_1
if {[get_property PROGRESS [get_runs impl_1]] ne "100%"} {
  farnn_fail "implementation failed (see [get_property DIRECTORY [get_runs impl_1]]/runme.log)"
}
open_run impl_1
report_timing_summary -max_paths 20 -file [file join $farnn_reports timing_summary.rpt]
report_clocks -file [file join $farnn_reports clocks.rpt]
report_clock_interaction -file [file join $farnn_reports clock_interaction.rpt]
report_cdc -file [file join $farnn_reports cdc.rpt]
report_utilization -hierarchical -file [file join $farnn_reports utilization.rpt]
set farnn_wns [get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -setup]]
set farnn_whs [get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -hold]]
if {$farnn_wns eq "" || $farnn_whs eq ""} {
  farnn_fail "no timed paths found: the constraints are missing"
}
if {$farnn_wns < 0 || $farnn_whs < 0} {
  farnn_fail "timing not met: WNS $farnn_wns ns, WHS $farnn_whs ns (reports/timing_summary.rpt)"
}
set farnn_bit [file join [get_property DIRECTORY [get_runs impl_1]] $farnn_top.bit]
if {![file exists $farnn_bit]} {
  farnn_fail "implementation finished without $farnn_bit"
}
file copy -force $farnn_bit [file join $farnn_dir $farnn_top.bit]
close_project
puts "\[farnn\] timing met (WNS $farnn_wns ns, WHS $farnn_whs ns); bitstream $farnn_top.bit, BuildId 0x$farnn_build_id"
