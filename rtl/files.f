// The one ordered RTL file list (Verilator, Yosys, vendor flows read only this).
// Packages first, then leaf blocks, then the blocks that instantiate them.
// --- packages ---
rtl/act/act_pkg.sv
// --- prim ---
rtl/prim/prim_ram_1r1w.sv
rtl/prim/prim_delay.sv
rtl/prim/prim_fifo.sv
// --- fp ---
rtl/fp/fp_pipe_stage.sv
rtl/fp/fp_add.sv
rtl/fp/fp_mul.sv
// --- act ---
rtl/act/act_lut_rom.sv
rtl/act/fp_act.sv
// --- pe ---
// --- engine ---
