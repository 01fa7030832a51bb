#!/usr/bin/env tclsh
# check_tcl.tcl: the board flow's Tcl, checked without Vivado (tclsh 8.6).
#   1. Every Tcl file given (flow scripts, IP scripts, XDC) parses: `info
#      complete` on the whole file (braces, brackets and quotes balanced).
#   2. Dry runs of the flow with every Vivado command replaced by a mock that
#      records what it was asked to do:
#      - create_project.tcl with the board's config (as vivado.mk writes it):
#        runs board_params.py and compare_stub.py for real (the mock writes an
#        instantiation template from the lint stub), and must create exactly
#        the IP the ip/*.tcl files are named after, each with no CONFIG key set
#        twice, set the top's generics BuildId and ClockKhz to what
#        board_params.py computes, and set the core MMCM to the clock estimate;
#      - build.tcl must succeed when the core clock has the target period and
#        timing is met, and fail when the period differs, when setup or hold
#        slack is negative, or when synthesis fails;
#      - program.tcl must fail when no device matches and succeed when one does.
# Usage: tclsh check_tcl.tcl BOARD_DIR REPO_ROOT FILE.tcl...   (exit 0: all good)

if {[llength $argv] < 3} {
  puts stderr "usage: tclsh check_tcl.tcl BOARD_DIR REPO_ROOT FILE.tcl..."
  exit 2
}
lassign $argv board_dir repo_root
set files [lrange $argv 2 end]
set failures 0
proc fail {msg} {
  global failures
  puts "check_tcl: FAIL $msg"
  incr failures
}

# ------------------------------------------------------------ 1. parsing
foreach f $files {
  set fh [open $f]
  set text [read $fh]
  close $fh
  if {![info complete $text]} {
    fail "$f: incomplete Tcl (unbalanced braces, brackets or quotes)"
    continue
  }
}
if {$failures} { exit 1 }

# ------------------------------------------------------------ 2. mocks
set board_dir [file normalize $board_dir]
set repo_root [file normalize $repo_root]
set work [file join [pwd] check_tcl.work]
file delete -force $work
file mkdir $work

proc mock_reset {} {
  global mock
  array unset mock
  set mock(ips) {}
  set mock(props) {}
  set mock(log) {}
  set mock(period) 9.0
  set mock(wns) 0.1
  set mock(whs) 0.02
  set mock(synth_progress) "100%"
  set mock(impl_progress) "100%"
  set mock(devices) {xcu250_0}
}
mock_reset

proc mock_opts {args} {
  # {-name xdma -module_name xdma_0 ...} -> dict (flags without values get 1)
  set d {}
  set positional {}
  for {set i 0} {$i < [llength $args]} {incr i} {
    set a [lindex $args $i]
    if {[string match -* $a]} {
      set n [lindex $args [expr {$i + 1}]]
      if {$n eq "" || [string match -* $n] || $a in {-quiet -force -latest_file_version -update_hw_probes}} {
        if {$a eq "-update_hw_probes"} { incr i }
        dict set d $a 1
      } else {
        dict set d $a $n
        incr i
      }
    } else {
      lappend positional $a
    }
  }
  dict set d _pos $positional
  return $d
}

proc log {args} { global mock; lappend mock(log) $args }

# Vivado project commands
proc set_param {args} { log set_param {*}$args }
proc get_board_parts {args} {
  set o [mock_opts {*}$args]
  set pat [lindex [dict get $o _pos] 0]
  if {[string match $pat xilinx.com:au250:part0:1.3]} { return xilinx.com:au250:part0:1.3 }
  return {}
}
proc create_project {args} { global mock; set mock(project) $args }
proc open_project {args} { global mock; set mock(project) $args }
proc close_project {args} {}
proc current_project {args} { return project }
proc current_fileset {args} { return sources_1 }
proc get_filesets {args} { return [lindex $args end] }
proc add_files {args} { log add_files {*}$args }
proc get_files {args} {
  global mock
  set o [mock_opts {*}$args]
  if {[dict exists $o -of_objects]} {
    set ip [string range [dict get $o -of_objects] 3 end]
    return [file join $mock(out) ip $ip $ip.xci]
  }
  return files
}
proc create_ip {args} {
  global mock
  set o [mock_opts {*}$args]
  foreach k {-name -vendor -library -module_name} {
    if {![dict exists $o $k]} { error "create_ip without $k" }
  }
  lappend mock(ips) [dict get $o -module_name]
}
proc get_ips {args} {
  global mock
  set o [mock_opts {*}$args]
  set pos [dict get $o _pos]
  if {[llength $pos] == 0} { return [lmap i $mock(ips) {string cat ip: $i}] }
  set name [lindex $pos 0]
  if {$name in $mock(ips)} { return ip:$name }
  if {[dict exists $o -quiet]} { return {} }
  error "get_ips: no IP $name"
}
proc set_property {args} {
  global mock
  if {[lindex $args 0] eq "-dict"} {
    set pairs [lindex $args 1]
    set obj [lindex $args 2]
    set seen {}
    foreach {k v} $pairs {
      if {$k in $seen} { error "set_property -dict on $obj sets $k twice" }
      lappend seen $k
      lappend mock(props) [list $obj $k $v]
    }
  } else {
    lappend mock(props) [list [lindex $args 2] [lindex $args 0] [lindex $args 1]]
  }
}
proc prop {obj key} {
  global mock
  set v ""
  foreach p $mock(props) {
    if {[lindex $p 0] eq $obj && [lindex $p 1] eq $key} { set v [lindex $p 2] }
  }
  return $v
}
proc generate_target {what target} {
  global mock repo_root board_dir
  if {$what eq "instantiation_template"} {
    # a template as Vivado writes it, from the lint stub (the plumbing is what is tested)
    set ip [file rootname [file tail $target]]
    set stub [file join $board_dir ip stubs ${ip}_stub.sv]
    set veo [file join [file dirname $target] $ip.veo]
    file mkdir [file dirname $veo]
    exec python3 -c {
import sys
sys.path.insert(0, sys.argv[1])
import svports
name, ports = svports.parse_sv_ports(open(sys.argv[2]).read(), sys.argv[3])
with open(sys.argv[4], "w") as f:
    f.write("%s your_instance_name (\n" % name)
    for p, (d, w) in ports.items():
        rng = "" if w == 1 else "[%d : 0] " % (w - 1)
        f.write("  .%s(%s),  // %s wire %s%s\n" % (p, p, d, rng, p))
    f.write(");\n")
} [file join $repo_root fpga common] $stub $ip $veo
  }
  log generate_target $what $target
}

# runs and reports
proc reset_run {args} {}
proc get_runs {name} { return run:$name }
proc launch_runs {args} {
  global mock
  set run [lindex $args 0]
  if {$run eq "impl_1"} {
    file mkdir [file join $mock(rundir) impl_1]
    set fh [open [file join $mock(rundir) impl_1 $mock(top).bit] w]
    puts $fh bitstream
    close $fh
  }
}
proc wait_on_run {args} {}
proc open_run {args} {}
proc close_design {args} {}
proc get_pins {args} { return pin:[lindex $args end] }
proc get_nets {args} { return net:[lindex $args end] }
proc get_clocks {args} { return clk_out1_clk_core }
proc get_timing_paths {args} {
  set o [mock_opts {*}$args]
  if {[dict exists $o -hold]} { return path:hold }
  return path:setup
}
proc get_property {key obj} {
  global mock
  switch -- $key {
    PROGRESS { return [expr {$obj eq "run:synth_1" ? $mock(synth_progress) : $mock(impl_progress)}] }
    DIRECTORY { return [file join $mock(rundir) [string range $obj 4 end]] }
    PERIOD { return $mock(period) }
    NAME { return $obj }
    SLACK { return [expr {$obj eq "path:hold" ? $mock(whs) : $mock(wns)}] }
  }
  error "get_property $key of $obj is not mocked"
}
foreach r {report_utilization report_timing_summary report_clocks report_clock_interaction report_cdc} {
  proc $r {args} {}
}

# hardware manager
proc open_hw_manager {args} {}
proc close_hw_manager {args} {}
proc connect_hw_server {args} {}
proc get_hw_targets {args} { return target0 }
proc open_hw_target {args} {}
proc close_hw_target {args} {}
proc get_hw_devices {args} {
  global mock
  set pat [lindex [dict get [mock_opts {*}$args] _pos] 0]
  return [lsearch -all -inline -glob $mock(devices) $pat]
}
proc current_hw_device {args} {}
proc refresh_hw_device {args} {}
proc program_hw_devices {args} { global mock; set mock(programmed) $args }

proc unknown {args} { error "dry run: Vivado command '[lindex $args 0]' is not mocked in check_tcl.tcl" }

proc run_script {script arguments} {
  global argv mock
  set argv $arguments
  set rc [catch {uplevel #0 [list source $script]} msg]
  return [list $rc $msg]
}

# ------------------------------------------------------------ 2a. create_project.tcl
set common [file join $repo_root fpga common vivado]
set ip_tcl [lsort [glob -directory [file join $board_dir ip] *.tcl]]
set board [string range [file tail $board_dir] 0 end]
set out [file join $work project]
file mkdir $out
set mock(out) $out
set cfg [file join $work config.tcl]
set fh [open $cfg w]
puts $fh "set farnn_board $board"
puts $fh "set farnn_part xcu250-figd2104-2L-e"
puts $fh "set farnn_board_part {xilinx.com:au250:part0:*}"
puts $fh "set farnn_top fpga_$board"
puts $fh "set farnn_root {$repo_root}"
puts $fh "set farnn_syn_files [list [file join $board_dir rtl fpga_$board.sv]]"
puts $fh "set farnn_xdc_files [list [file join $repo_root constraints $board fpga_$board.xdc]]"
puts $fh "set farnn_ip_tcl_files [list $ip_tcl]"
close $fh

lassign [run_script [file join $common create_project.tcl] [list $cfg $out]] rc msg
if {$rc} {
  fail "create_project.tcl dry run: $msg"
} else {
  set params [exec python3 [file join $repo_root fpga common board_params.py] --tcl]
  eval $params
  set want_ips [lmap f $ip_tcl {file rootname [file tail $f]}]
  if {[lsort $mock(ips)] ne [lsort $want_ips]} {
    fail "create_project.tcl created IP {$mock(ips)}, the ip/*.tcl files name {$want_ips}"
  }
  foreach ip $want_ips {
    if {![file exists [file join $board_dir ip stubs ${ip}_stub.sv]]} {
      fail "IP $ip has no lint stub ip/stubs/${ip}_stub.sv"
    }
  }
  set generic [prop sources_1 generic]
  if {$generic ne "BuildId=$farnn_build_id_value ClockKhz=$farnn_clock_khz"} {
    fail "the top's generics are '$generic', expected BuildId=$farnn_build_id_value ClockKhz=$farnn_clock_khz"
  }
  if {"clk_core" in $mock(ips)} {
    set f [prop ip:clk_core CONFIG.CLKOUT1_REQUESTED_OUT_FREQ]
    if {$f ne [format %.3f $farnn_clock_mhz]} {
      fail "clk_core asks the MMCM for '$f' MHz, the estimate is [format %.3f $farnn_clock_mhz] MHz"
    }
  }
  if {![file exists [file join $out farnn_params.tcl]]} {
    fail "create_project.tcl wrote no farnn_params.tcl"
  }
  puts "check_tcl: create_project.tcl dry run: [llength $mock(ips)] IP ([join $mock(ips) {, }]),\
 generics '$generic'"
}

# ------------------------------------------------------------ 2b. build.tcl
proc build_case {name setup expect_ok expect_msg} {
  global mock common out
  set saved_ips $mock(ips)
  mock_reset
  set mock(ips) $saved_ips
  set mock(out) $out
  set mock(rundir) [file join $out runs]
  set mock(top) fpga_[file tail $::board_dir]
  file delete -force [file join $out $mock(top).bit]
  eval $setup
  lassign [run_script [file join $common build.tcl] [list $out 2]] rc msg
  set bit [file exists [file join $out $mock(top).bit]]
  if {$expect_ok && ($rc || !$bit)} {
    fail "build.tcl ($name): expected success, got: $msg"
  } elseif {!$expect_ok && !$rc} {
    fail "build.tcl ($name): expected a failure, it succeeded"
  } elseif {!$expect_ok && ![string match *$expect_msg* $msg]} {
    fail "build.tcl ($name): failed with '$msg', expected a message with '$expect_msg'"
  } elseif {!$expect_ok && $bit} {
    fail "build.tcl ($name): failed but left a bitstream"
  }
}
if {[file exists [file join $out farnn_params.tcl]]} {
  set fh [open [file join $out farnn_params.tcl]]
  set ptext [read $fh]
  close $fh
  eval $ptext
  build_case "timing met" [list set mock(period) $farnn_clock_period_ns] 1 ""
  build_case "period differs" [list set mock(period) [expr {$farnn_clock_period_ns * 0.9}]] 0 "period"
  build_case "setup missed" "set mock(period) $farnn_clock_period_ns; set mock(wns) -0.05" 0 "timing not met"
  build_case "hold missed" "set mock(period) $farnn_clock_period_ns; set mock(whs) -0.01" 0 "timing not met"
  build_case "synthesis failed" {set mock(synth_progress) "0%"} 0 "synthesis failed"
  puts "check_tcl: build.tcl dry runs: timing met -> bitstream; wrong period, negative setup or hold slack,\
 failed synthesis -> error, no bitstream"
}

# ------------------------------------------------------------ 2c. program.tcl
set bitf [file join $work fake.bit]
set fh [open $bitf w]; puts $fh x; close $fh
mock_reset
lassign [run_script [file join $common program.tcl] [list $bitf xcu250* localhost:3121]] rc msg
if {$rc || ![info exists mock(programmed)]} { fail "program.tcl with a matching device: $msg" }
mock_reset
set mock(devices) {xcvu9p_0}
lassign [run_script [file join $common program.tcl] [list $bitf xcu250* localhost:3121]] rc msg
if {!$rc || ![string match "*no xcu250\\* device*" $msg]} { fail "program.tcl without a matching device: $rc $msg" }
mock_reset
lassign [run_script [file join $common program.tcl] [list [file join $work none.bit] xcu250* localhost:3121]] rc msg
if {!$rc || ![string match "*no bitstream*" $msg]} { fail "program.tcl without a bitstream: $rc $msg" }
puts "check_tcl: program.tcl dry runs: device found -> programmed; none -> error; no bitstream -> error"

file delete -force $work
if {$failures} {
  puts "check_tcl: $failures failure(s)"
  exit 1
}
puts "check_tcl: [llength $files] Tcl files parse; dry runs of create_project, build and program pass"
exit 0
