// The one ordered RTL file list (Verilator, Yosys, vendor flows read only this).
// Packages first, then leaf blocks, then the blocks that instantiate them.
// --- packages ---
rtl/act/act_pkg.sv
rtl/act/act_lut_data_pkg.sv
rtl/engine/engine_pkg.sv
// --- core packages ---
rtl/core/core_regs_pkg.sv
// --- prim ---
rtl/prim/prim_ram_1r1w.sv
rtl/prim/prim_delay.sv
rtl/prim/prim_delay_rst.sv
rtl/prim/prim_fifo.sv
rtl/prim/prim_rr_pick.sv
rtl/prim/prim_mul_serial.sv
rtl/prim/prim_lzc32.sv
rtl/prim/prim_reg_slice.sv
// --- fp ---
rtl/fp/fp_pipe_stage.sv
rtl/fp/fp_add.sv
rtl/fp/fp_mul.sv
// --- act ---
rtl/act/act_lut_rom.sv
rtl/act/fp_act_pipe.sv
rtl/act/fp_act.sv
// --- pe ---
rtl/pe/pe.sv
rtl/pe/chain_bcast.sv
rtl/pe/chain_join.sv
rtl/pe/pe_chain.sv
// --- engine ---
rtl/engine/df_add.sv
rtl/engine/df_mul.sv
rtl/engine/df_act.sv
rtl/engine/act_fw_lstm.sv
rtl/engine/act_fw_gru.sv
rtl/engine/act_bw_lstm.sv
rtl/engine/act_bw_gru.sv
rtl/engine/act_unit.sv
rtl/engine/stream_pack.sv
rtl/engine/stream_unpack.sv
rtl/engine/running_slots.sv
rtl/engine/store_prefetch.sv
rtl/engine/run_counters.sv
rtl/engine/loader.sv
rtl/engine/sequencer.sv
rtl/engine/engine.sv
// --- core: registers ---
rtl/core/core_regs.sv
// --- core: dma ---
rtl/core/axi_rd_mux.sv
rtl/core/axi_wr_mux.sv
rtl/core/dma_reader.sv
rtl/core/dma_writer.sv
rtl/core/unit_gather.sv
// --- core: shell ---
rtl/core/store_axi.sv
rtl/core/core_windows.sv
rtl/core/core_walker.sv
rtl/core/core_run.sv
rtl/core/core_dispatch.sv
rtl/core/farnn_core.sv
