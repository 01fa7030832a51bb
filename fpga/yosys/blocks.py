"""The blocks the Yosys estimate flow synthesizes, at documented parameters.

Each entry: top module, parameter overrides (-chparam), what memories are
meant to become (checked on the mapped netlist), how many DSP48E2 the block
must use (its multiplies), and the stimulus profile of its equivalence check.
`quick` blocks also run as CTest tests in `make test`.

Parameterizations follow the engine tests (tb/engine/CMakeLists.txt):
P4 = NumPe 4, WeightDepth 1024, MaxHidden 32, MaxBatch 4, Mul 2 / Add 3;
P16 = NumPe 16, WeightDepth 4096, MaxHidden 130, MaxBatch 4, Mul 3 / Add 4.
"""

P4 = {"NumPe": 4, "WeightDepth": 1024, "NumBanks": 2, "WeightLanes": 16, "MaxHidden": 32,
      "MaxBatch": 4, "MulLatency": 2, "AddLatency": 3}
P16 = {"NumPe": 16, "WeightDepth": 4096, "NumBanks": 2, "WeightLanes": 4, "MaxHidden": 130,
       "MaxBatch": 4, "MulLatency": 3, "AddLatency": 4}


def _pe(cfg, index):
    """A PE of the engine: its weight RAM holds every bank."""
    return {k: cfg[k] for k in ("NumPe", "MaxHidden", "MulLatency", "AddLatency")} | \
        {"WeightDepth": cfg["NumBanks"] * cfg["WeightDepth"], "PeIndex": index}


def _chain(cfg, lanes=None):
    """The engine's chain: banked weight RAMs, the weight bus at `lanes` words a cycle."""
    return {k: cfg[k] for k in ("NumPe", "MaxHidden", "MulLatency", "AddLatency")} | \
        {"WeightDepth": cfg["NumBanks"] * cfg["WeightDepth"],
         "Lanes": lanes or min(cfg["WeightLanes"], cfg["NumPe"])}


# Memory expectations: (regex on the memory's hierarchical name, allowed kinds)
# with kinds from {"bram", "uram", "lutram", "ff"}; every memory of the block
# must match one rule, and every rule must match at least one memory.
# (prim_ram_1r1w keeps its array in 32-bit lanes: <inst>.g_lane[k].mem)
LANE = r"\.g_lane\[\d+\]\.mem$"
PE_MEMS = [(r"(.*\.)?u_weights" + LANE, {"bram", "uram"}),   # weight RAM: WeightDepth >= 1024 words
           (r"(.*\.)?u_acc" + LANE, {"lutram", "bram"}),     # accumulators: AccDepth words
           (r"(.*\.)?u_results" + LANE, {"lutram", "bram"})]  # FW drain RAM: MaxRows words
ACT_MEMS = [(r"(.*\.)?u_rom\.rom$", {"bram"})]               # 4096 x 54 sigmoid table

# Stimulus of the PE alone: the token and result relays of a middle PE with a
# legal configuration (H <= MaxHidden, the row split of G*H over NumPe).
PE_EQ = {
    "decls": r"""
  int unsigned pe_h = 8;
""",
    "inputs": {
        "cfg_bw_i": "cyc % 1000 >= 600",
        "cfg_hidden_i": "pe_h",
        "cfg_rows_base_i": "(4 * pe_h) / 4",
        "cfg_rows_extra_i": "0",
        "tok_valid_i": "rnd_pct(40)",
        "tok_op_i": "$urandom_range(3)",
        "tok_pe_i": "$urandom_range(3)",
        "tok_addr_i": "$urandom_range(255)",
        "tok_data_i": "rnd_fp()",
        "res_valid_i": "rnd_pct(30)",
        "res_data_i": "rnd_fp()",
        "wld_valid_i": "rnd_pct(20)",
        "wld_addr_i": "$urandom_range(2047)",
        "wld_data_i": "rnd_fp()",
    },
    "drive": r"""
      if (cyc % 1000 == 0) pe_h = rnd_range(1, 32);
""",
    "activity": "rtl_res_valid_o",
}

CHAIN_EQ = {
    "decls": r"""
  int unsigned ch_h = 8;
""",
    "inputs": {
        "cfg_bw_i": "cyc % 2000 >= 1200",
        "cfg_hidden_i": "ch_h",
        "cfg_rows_base_i": "(4 * ch_h) / 4",
        "cfg_rows_extra_i": "0",
        "tok_valid_i": "rnd_pct(30)",
        "tok_op_i": "$urandom_range(3)",
        "tok_pe_i": "$urandom_range(3)",
        "tok_addr_i": "$urandom_range(255)",
        "tok_data_i": "rnd_fp()",
        "wrst_i": "$urandom_range(499) == 0",
        "wbus_valid_i": "rnd_pct(20)",
        "wbus_group_i": "$urandom_range(3)",
        "wbus_addr_i": "$urandom_range(2047)",
        "wbus_data_i": "{rnd_fp(), rnd_fp(), rnd_fp(), rnd_fp()}",
    },
    "drive": r"""
      if (cyc % 2000 == 0) ch_h = rnd_range(1, 32);
""",
    "activity": "rtl_res_valid_o",
    "cycles": 6000,
}

FP_EQ = {"activity": "rtl_out_valid_o && in_out_ready_i"}

BLOCKS = {
    # ------------------------------------------------------------- prim
    "prim_ram_1r1w": {
        "top": "prim_ram_1r1w", "params": {"Width": 32, "Depth": 1024}, "quick": True,
        "mems": [(r"(.*\.)?mem$", {"bram"})], "dsp": 0,
        "eq": {"inputs": {"waddr_i": "$urandom_range(15)", "raddr_i": "$urandom_range(15)"},
               "activity": "in_re_i"},
        "doc": "simple dual-port RAM, 1024 x 32 (the PE weight RAM shape)",
    },
    "prim_fifo": {
        "top": "prim_fifo", "params": {"Width": 32, "Depth": 64}, "quick": True,
        "mems": [(r"(.*\.)?mem$", {"lutram", "bram"})], "dsp": 0,
        "eq": {"inputs": {"in_valid_i": "rnd_pct(60)", "out_ready_i": "rnd_pct(55)"},
               "activity": "rtl_out_valid_o && in_out_ready_i"},
        "doc": "first-word-fall-through FIFO, 64 x 32 (engine stream FIFOs)",
    },
    "prim_delay": {
        "top": "prim_delay", "params": {"Width": 32, "Depth": 4}, "quick": True,
        "mems": [], "dsp": 0, "eq": {"activity": "1"},
        "doc": "delay line, 32 bits x 4 (operand alignment in the activation unit)",
    },
    # --------------------------------------------------------------- fp
    "fp_add_l3": {"top": "fp_add", "params": {"Latency": 3}, "quick": True, "mems": [], "dsp": 0,
                  "eq": FP_EQ, "doc": "FP32 adder, latency 3 (engine P4)"},
    "fp_add_l4": {"top": "fp_add", "params": {"Latency": 4}, "quick": False, "mems": [], "dsp": 0,
                  "eq": FP_EQ, "doc": "FP32 adder, latency 4 (engine P16)"},
    "fp_mul_l2": {"top": "fp_mul", "params": {"Latency": 2}, "quick": True, "mems": [], "dsp": 2,
                  "eq": FP_EQ, "doc": "FP32 multiplier, latency 2 (engine P4)"},
    "fp_mul_l3": {"top": "fp_mul", "params": {"Latency": 3}, "quick": False, "mems": [], "dsp": 2,
                  "eq": FP_EQ, "doc": "FP32 multiplier, latency 3 (engine P16)"},
    # -------------------------------------------------------------- act
    "fp_act": {"top": "fp_act", "params": {}, "quick": True, "mems": ACT_MEMS, "dsp": 1,
               "eq": {"inputs": {"x_i": "rnd_pct(50) ? rnd_fp() : {$urandom_range(1), 8'(120 + $urandom_range(14)), 23'($urandom())}"},
                      "activity": "rtl_out_valid_o && in_out_ready_i"},
               "doc": "sigmoid/tanh unit (table ROM + interpolation)"},
    # --------------------------------------------------------------- pe
    "pe": {"top": "pe", "params": _pe(P4, 1), "quick": True, "mems": PE_MEMS, "dsp": 2,
           "eq": PE_EQ, "doc": "one PE (index 1 of 4), engine P4 parameters"},
    "pe_parts": {"top": "pe", "params": _pe(P4, 1), "quick": False, "mems": PE_MEMS, "dsp": 2,
                 "eq": PE_EQ, "submodules": ["fp_add", "fp_mul"],
                 "doc": "the pe block with fp_add and fp_mul kept as hierarchy: what each part costs"},
    "pe_p16": {"top": "pe", "params": _pe(P16, 1), "quick": False, "mems": PE_MEMS, "dsp": 2,
               "eq": PE_EQ, "doc": "one PE (index 1 of 16), engine P16 parameters"},
    "pe_chain": {"top": "pe_chain", "params": _chain(P4), "quick": False, "mems": PE_MEMS,
                 "dsp": 2 * P4["NumPe"], "eq": CHAIN_EQ, "num_pe": P4["NumPe"],
                 "doc": "chain of 4 PEs, engine P4 parameters (weight bus 4 words, one group)"},
    "pe_chain_lanes1": {"top": "pe_chain", "params": _chain(P4, lanes=1), "quick": False, "mems": PE_MEMS,
                        "dsp": 2 * P4["NumPe"], "eq": CHAIN_EQ, "num_pe": P4["NumPe"],
                        "doc": "chain of 4 PEs, weight bus 1 word: 4 groups, 3 relay registers"},
}

# ------------------------------------------------------------------ engine
# Biased stimulus for the whole engine: under pure random inputs almost every
# command ends at once with an error code. Here a small command plan runs
# LOAD -> FORWARD -> BACKWARD -> FORWARD -> BACKWARD with one legal
# configuration (LSTM or GRU, H 1..8, B 1..MaxBatch, T 1..3), then picks a
# new one; one plan in eight uses random (mostly illegal) values instead.
# Streams are valid 85 % of the cycles with values in [-2, 2], outputs are
# ready 85 %, and a memory model answers every gate-store request (in order,
# after a random delay; read data random). Resets are rare (every 9000
# cycles) and restart the plan.
ENGINE_EQ = {
    "cycles": 30000,
    "reset_expr": "cyc % 9000 == 8999",
    "decls": r"""
  function automatic logic [31:0] rnd_small();
    return {1'($urandom_range(1)), 8'(118 + $urandom_range(9)), 23'($urandom())};
  endfunction
  int unsigned plan_step = 0, gap = 0;
  bit cmd_pending = 0, plan_bad = 0;
  logic [1:0] p_op = 0, p_cell = 0;
  logic [15:0] p_h = 1, p_b = 1, p_t = 1;
  int unsigned outstanding = 0, cmds_ok = 0, cmds_err = 0, waiting = 0;
  int unsigned w_cnt = 0, w_beats = 1;  // weight beats taken / in this LOAD's frame
  longint unsigned macs = 0;
  bit rsp_hold = 0, act_now = 0;
  logic [255:0] rsp_data = '0;
  task automatic new_plan();
    plan_bad = rnd_pct(12);
    p_cell = plan_bad ? 2'($urandom_range(3)) : 2'($urandom_range(1));
    p_h = plan_bad ? 16'($urandom_range(40)) : 16'(rnd_range(1, 8));
    p_b = plan_bad ? 16'($urandom_range(6)) : 16'(rnd_range(1, 4));
    p_t = plan_bad ? 16'($urandom_range(3)) : 16'(rnd_range(1, 3));
    plan_step = 0;
  endtask
""",
    "drive": r"""
      if (cyc == 0) new_plan();
      if (!cmd_pending && waiting == 0) begin
        if (gap > 0) gap--;
        else begin
          if (plan_step == 5) new_plan();
          p_op = (plan_step == 0) ? 2'd0 : ((plan_step % 2 == 1) ? 2'd1 : 2'd2);
          if (plan_bad && rnd_pct(30)) p_op = 2'($urandom_range(3));
          cmd_pending = 1;
        end
      end
      // LOADs (op 0) go to the load port, bank 0; the rest to the command port.
      in_cmd_valid_i = cmd_pending && (p_op != 0 || plan_bad);
      in_load_valid_i = cmd_pending && p_op == 0 && !plan_bad;
      in_load_cell_i = p_cell;
      in_load_hidden_i = p_h;
      in_load_bank_i = 8'(plan_bad ? $urandom_range(2) : 0);
      // The LOAD's frame at P4 (4 lanes used, 4 sub-beats a beat): R*H + H
      // sub-beats, `last` on the final beat (rarely misplaced).
      w_beats = (((4 * 32'(p_h) - (p_cell == 1 ? 32'(p_h) : 0) + 3) / 4) * 32'(p_h) + 32'(p_h) + 3) / 4;
      in_weight_last_i = (w_cnt + 1 == w_beats) ? !rnd_pct(3) : rnd_pct(1);
      in_cfg_lengths_i = plan_bad && rnd_pct(30) ? 64'($urandom()) : {4{p_t}};
      in_cfg_bank_i = 8'(plan_bad ? $urandom_range(2) : 0);
      in_cmd_op_i = p_op;
      in_cfg_cell_i = p_cell;
      in_cfg_hidden_i = p_h;
      in_cfg_batch_i = p_b;
      in_cfg_steps_i = p_t;
      in_cfg_store_base_i = 40'h1000;
      in_cfg_store_size_i = plan_bad && rnd_pct(50) ? 40'($urandom_range(4096)) : 40'h100_0000;
      in_mem_rsp_valid_i = rsp_hold || (outstanding > 0 && rnd_pct(70));
      if (!rsp_hold) rsp_data = {rnd_small(), rnd_small(), rnd_small(), rnd_small(),
                                 rnd_small(), rnd_small(), rnd_small(), rnd_small()};
      in_mem_rsp_data_i = rsp_data;
""",
    "inputs": {
        "cmd_valid_i": "0", "cmd_op_i": "0", "cfg_cell_i": "0", "cfg_hidden_i": "0",
        "cfg_batch_i": "0", "cfg_steps_i": "0", "cfg_store_base_i": "0", "cfg_store_size_i": "0",
        "cfg_watchdog_i": "32'd3000", "abort_i": "$urandom_range(1999) == 0",
        "load_valid_i": "0", "load_cell_i": "0", "load_hidden_i": "0", "load_bank_i": "0",
        "cfg_bank_i": "0", "load_watchdog_i": "32'd3000",
        "weight_last_i": "0", "cfg_lengths_i": "0", "state_in_last_i": "rnd_pct(5)", "xp_last_i": "rnd_pct(2)",
        "dh_last_i": "rnd_pct(3)",
        "weight_valid_i": "rnd_pct(85)",
        "weight_data_i": "{rnd_small(), rnd_small(), rnd_small(), rnd_small()}",
        "state_in_valid_i": "rnd_pct(85)", "state_in_data_i": "rnd_small()",
        "xp_valid_i": "rnd_pct(85)", "xp_data_i": "rnd_small()",
        "dh_valid_i": "rnd_pct(85)", "dh_data_i": "rnd_small()",
        "h_ready_i": "rnd_pct(85)", "delta_ready_i": "rnd_pct(85)",
        "state_out_ready_i": "rnd_pct(85)", "mem_req_ready_i": "rnd_pct(85)",
        "mem_rsp_valid_i": "0", "mem_rsp_data_i": "0",
    },
    "pre": r"""
      act_now = (in_weight_valid_i && rtl_weight_ready_o) || (in_state_in_valid_i && rtl_state_in_ready_o) ||
                (in_xp_valid_i && rtl_xp_ready_o) || (in_dh_valid_i && rtl_dh_ready_o) ||
                (rtl_h_valid_o && in_h_ready_i) || (rtl_delta_valid_o && in_delta_ready_i) ||
                (rtl_state_out_valid_o && in_state_out_ready_i) || (rtl_mem_req_valid_o && in_mem_req_ready_i);
      if (!in_rst_i) begin
        if (in_load_valid_i && rtl_load_ready_o) w_cnt = 0;
        if (in_weight_valid_i && rtl_weight_ready_o) w_cnt++;
        if ((in_cmd_valid_i && rtl_cmd_ready_o) || (in_load_valid_i && rtl_load_ready_o)) begin
          cmd_pending = 0;
          waiting = 1;
        end
        if (rtl_done_o || rtl_load_done_o) begin
          if ((rtl_done_o && rtl_status_o == 0) || (rtl_load_done_o && rtl_load_status_o == 0)) cmds_ok++;
          else cmds_err++;
          waiting = 0;
          plan_step++;
          gap = rnd_range(0, 20);
        end
        rsp_hold = in_mem_rsp_valid_i && !rtl_mem_rsp_ready_o;
        if (rtl_mem_req_valid_o && in_mem_req_ready_i) outstanding++;
        if (in_mem_rsp_valid_i && rtl_mem_rsp_ready_o) outstanding--;
      end else begin
        outstanding = 0; rsp_hold = 0; cmd_pending = 0; waiting = 0; gap = 0;
        new_plan();
      end
""",
    "post": r"""
      if (rtl_cnt_macs_o != prev_cnt_macs_o && !in_rst_i) macs++;
""",
    "activity": "act_now || rtl_cnt_macs_o != prev_cnt_macs_o",
    "report": (" cmds_ok=%0d cmds_err=%0d mac_cycles=%0d", "cmds_ok, cmds_err, macs"),
}

ACT_UNIT_EQ = {
    "decls": r"""
  logic [5:0] au_h = 8;
  bit au_bw = 0, au_gru = 0;
""",
    "drive": r"""
      if (cyc % 1500 == 0) begin
        au_h = 6'(rnd_range(1, 32));
        au_bw = rnd_pct(50);
        au_gru = rnd_pct(50);
      end
""",
    "inputs": {
        "cfg_bw_i": "au_bw", "cfg_gru_i": "au_gru", "cfg_hidden_i": "au_h",
        "start_i": "cyc % 1500 == 1", "desc_valid_i": "rnd_pct(90)",
        "res_valid_i": "rnd_pct(60)", "xp_valid_i": "rnd_pct(90)", "dh_valid_i": "rnd_pct(90)",
        "rec_valid_i": "rnd_pct(90)", "bias_we_i": "rnd_pct(20)", "state_we_i": "rnd_pct(20)",
        "res_data_i": "rnd_fp()", "bias_data_i": "rnd_fp()", "state_data_i": "rnd_fp()",
        "dh_data_i": "rnd_fp()",
        "xp_data_i": "{rnd_fp(), rnd_fp(), rnd_fp(), rnd_fp()}",
        "rec_data_i": "{rnd_fp(), rnd_fp(), rnd_fp(), rnd_fp(), rnd_fp(), rnd_fp(), rnd_fp(), rnd_fp()}",
    },
    "activity": "rtl_hout_push_o || rtl_dout_push_o || rtl_store_push_o || rtl_sout_push_o",
    "cycles": 6000,
}

ENGINE_MEMS = [(r"(.*\.)?u_weights" + LANE, {"bram", "uram"}),
               (r"(.*\.)?u_rom\.rom$", {"bram"}),
               (r".*", {"bram", "uram", "lutram", "ff"})]

BLOCKS.update({
    "act_unit": {"top": "act_unit", "params": {"MaxHidden": P4["MaxHidden"], "MaxBatch": P4["MaxBatch"],
                                              "MulLatency": P4["MulLatency"], "AddLatency": P4["AddLatency"]},
                 "quick": False, "optional": True,
                 "mems": ACT_MEMS + [(r".*", {"bram", "uram", "lutram", "ff"})],
                 "dsp": None, "eq": ACT_UNIT_EQ,
                 "doc": "activation unit alone (opt-in, --large; the default flow reports the "
                        "engine's act_unit in context)"},
    "engine": {"top": "engine", "params": dict(P4), "quick": False, "mems": ENGINE_MEMS, "dsp": None,
               "eq": ENGINE_EQ, "num_pe": P4["NumPe"], "chain_prefix": "u_chain.",
               "submodules": ["act_unit", "sequencer"],
               "doc": "recurrent engine P4 (4 PEs)"},
    "engine_p16": {"top": "engine", "params": dict(P16), "quick": False, "optional": True,
                   "mems": ENGINE_MEMS, "dsp": None, "eq": ENGINE_EQ, "num_pe": P16["NumPe"],
                   "submodules": ["act_unit", "sequencer"],
                   "chain_prefix": "u_chain.", "doc": "recurrent engine P16 (16 PEs), opt-in (--large)"},
})
