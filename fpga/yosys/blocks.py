"""The blocks the Yosys estimate flow synthesizes, at documented parameters.

Each entry: top module, parameter overrides (-chparam), what memories are
meant to become (checked on the mapped netlist), how many DSP48E2 the block
must use (its multiplies), and the stimulus profile of its equivalence check.
`quick` blocks also run as CTest tests in `make test`; `slow` blocks (minutes
each; 2 for the engine-sized ones, 1 for the rest) start first, the larger
rank first, when synth.py runs blocks side by side.

Parameterizations follow the engine tests (tb/engine/CMakeLists.txt):
P4 = NumPe 4, WeightDepth 1024, MaxHidden 32, MaxBatch 4, Mul 2 / Add 3;
P16 = NumPe 16, WeightDepth 4096, MaxHidden 130, MaxBatch 4, Mul 3 / Add 4.
Their chains are the RTL default (one chain) unless a block names NumChains
(pe_chain_p16: 4 chains of 4, as the P16 test build; the P4 test builds,
engine and core, have 2 chains of 2, the P4 blocks here one chain of 4: the
per-PE cost without a join, whose cost chain_join measures).
"""

P4 = {"NumPe": 4, "WeightDepth": 1024, "NumBanks": 2, "WeightLanes": 16, "MaxHidden": 32,
      "MaxBatch": 4, "MulLatency": 2, "AddLatency": 3}
P16 = {"NumPe": 16, "WeightDepth": 4096, "NumBanks": 2, "WeightLanes": 4, "MaxHidden": 130,
       "MaxBatch": 4, "MulLatency": 3, "AddLatency": 4}


def _pe(cfg, index):
    """A PE of the engine: its weight RAM holds every bank; 4 result lanes (NumPe a multiple of 4)."""
    return {k: cfg[k] for k in ("NumPe", "MaxHidden", "MulLatency", "AddLatency")} | \
        {"WeightDepth": cfg["NumBanks"] * cfg["WeightDepth"], "PeIndex": index, "ResLanes": 4}


def _chain(cfg, lanes=None):
    """The engine's chain: banked weight RAMs, the weight bus at `lanes` words a
    cycle, 4 result lanes (the engine's default where NumPe is a multiple of 4)."""
    return {k: cfg[k] for k in ("NumPe", "MaxHidden", "MulLatency", "AddLatency")} | \
        {"WeightDepth": cfg["NumBanks"] * cfg["WeightDepth"],
         "Lanes": lanes or min(cfg["WeightLanes"], cfg["NumPe"]), "ResLanes": 4}


# Memory expectations: (regex on the memory's hierarchical name, allowed kinds)
# with kinds from {"bram", "uram", "lutram", "ff"}; every memory of the block
# must match one rule, and every rule must match at least one memory.
# (prim_ram_1r1w keeps its array in 32-bit lanes, each in the branch of its
# RAM style: <inst>.g_lane[k].g_infer.mem, or .g_ultra.mem with Ultra = 1)
LANE = r"\.g_lane\[\d+\]\.g_(infer|ultra)\.mem$"
PE_MEMS = [(r"(.*\.)?u_weights" + LANE, {"bram", "uram"}),   # weight RAM: WeightDepth >= 1024 words
           (r"(.*\.)?u_acc" + LANE, {"lutram", "bram"}),     # accumulators: AccDepth words
           (r"(.*\.)?u_results" + LANE, {"lutram", "bram"})]  # FW drain RAM: MaxRows words
ACT_MEMS = [(r"(.*\.)?u_lut\.(even|odd)_rom$", {"bram"})]   # sigmoid table: 2 banks, 2048 x 27 each

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
        "tok_kind_i": "rnd_pct(40) ? 3'(1 << $urandom_range(2)) : 3'd0",
        "tok_pe_i": "$urandom_range(3)",
        "tok_addr_i": "$urandom_range(255)",
        "tok_data_i": "rnd_fp()",
        "res_valid_i": "rnd_pct(30) ? 4'($urandom_range(15)) : 4'd0",
        "res_data_i": "{rnd_fp(), rnd_fp(), rnd_fp(), rnd_fp()}",
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

# The join tree as the engine drives it: forward, at most one chain tail
# valid a cycle (the chains drain in turns), its 4 result lanes at once;
# backward, every tail's lane 0 valid in the same cycle (aligned partial
# sums). The mode flips every 500 cycles.
JOIN_CHAINS = 16  # the NumPe 256 engine's chains
JOIN_LANES = 4    # its result lanes
JOIN_EQ = {
    "inputs": {
        "bw_i": "cyc % 1000 >= 500",
        "data_i": "{" + ", ".join(["rnd_fp()"] * (JOIN_CHAINS * JOIN_LANES)) + "}",
    },
    "drive": r"""
      if (in_bw_i) in_valid_i = rnd_pct(70) ? {%d{%d'(1)}} : '0;
      else         in_valid_i = rnd_pct(70) ? %d'(%d'($urandom_range(%d)) << (%d * $urandom_range(%d))) : '0;
""" % (JOIN_CHAINS, JOIN_LANES, JOIN_CHAINS * JOIN_LANES, JOIN_CHAINS * JOIN_LANES, (1 << JOIN_LANES) - 1,
       JOIN_LANES, JOIN_CHAINS - 1),
    "activity": "rtl_valid_o",
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
    # The weight RAM of the capacity model's URAM design points (one UltraRAM
    # of 4096 words a PE). Addresses drawn from 16 so that reads meet writes
    # of the same word: the URAM's port order must give the old word.
    "prim_ram_uram": {
        "top": "prim_ram_1r1w", "params": {"Width": 32, "Depth": 4096, "Ultra": 1}, "quick": True,
        "uram": True, "mems": [(r"(.*\.)?mem$", {"uram"})], "dsp": 0,
        "eq": {"inputs": {"waddr_i": "$urandom_range(15)", "raddr_i": "$urandom_range(15)"},
               "activity": "in_re_i"},
        "doc": "simple dual-port RAM, 4096 x 32 marked for UltraRAM (the URAM design point's weight RAM)",
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
    "fp_add_l7": {"top": "fp_add", "params": {"Latency": 7}, "quick": False, "mems": [], "dsp": 0,
                  "eq": FP_EQ, "doc": "FP32 adder, latency 7 (every cut registered)"},
    "fp_mul_l2": {"top": "fp_mul", "params": {"Latency": 2}, "quick": True, "mems": [], "dsp": 2,
                  "eq": FP_EQ, "doc": "FP32 multiplier, latency 2 (engine P4)"},
    "fp_mul_l3": {"top": "fp_mul", "params": {"Latency": 3}, "quick": False, "mems": [], "dsp": 2,
                  "eq": FP_EQ, "doc": "FP32 multiplier, latency 3 (engine P16)"},
    "fp_mul_l5": {"top": "fp_mul", "params": {"Latency": 5}, "quick": False, "mems": [], "dsp": 2,
                  "eq": FP_EQ, "doc": "FP32 multiplier, latency 5 (every cut registered)"},
    # -------------------------------------------------------------- act
    "fp_act": {"top": "fp_act", "params": {}, "quick": True, "mems": ACT_MEMS, "dsp": 1,
               "eq": {"inputs": {"x_i": "rnd_pct(50) ? rnd_fp() : {$urandom_range(1), 8'(100 + $urandom_range(34)), 23'($urandom())}"},
                      "activity": "rtl_out_valid_o && in_out_ready_i"},
               "doc": "sigmoid/tanh unit (table ROM + interpolation)"},
    "fp_act_x2": {"top": "fp_act", "params": {"NumLanes": 2}, "quick": True, "mems": ACT_MEMS, "dsp": 2,
                  "eq": {"inputs": {"x_i": "{" + ", ".join(["rnd_pct(50) ? rnd_fp() : {1'($urandom_range(1)), "
                                                           "8'(100 + $urandom_range(34)), 23'($urandom())}"] * 2) + "}"},
                         "activity": "|(rtl_out_valid_o & in_out_ready_i)"},
                  "doc": "two sigmoid/tanh lanes sharing one dual-port table"},
    # --------------------------------------------------------------- pe
    "pe": {"top": "pe", "params": _pe(P4, 1), "quick": True, "mems": PE_MEMS, "dsp": 2,
           "eq": PE_EQ, "doc": "one PE (index 1 of 4), engine P4 parameters"},
    "pe_parts": {"top": "pe", "params": _pe(P4, 1), "quick": False, "mems": PE_MEMS, "dsp": 2,
                 "eq": PE_EQ, "submodules": ["fp_add", "fp_mul"],
                 "doc": "the pe block with fp_add and fp_mul kept as hierarchy: what each part costs"},
    "pe_red": {"top": "pe", "params": _pe(P4, 1) | {"RedAdder": 1}, "quick": False,
               "mems": PE_MEMS + [(r"(.*\.)?u_acc_red" + LANE, {"lutram", "bram"})], "dsp": 2, "eq": PE_EQ,
               "doc": "the pe block with RedAdder 1: the backward reduction's own adder and accumulator copy"},
    "pe_uram": {"top": "pe", "params": _pe(P4, 1) | {"WeightDepth": 4096, "WeightUram": 1}, "quick": False,
                "uram": True, "mems": [(r"(.*\.)?u_weights" + LANE, {"uram"})] + PE_MEMS[1:], "dsp": 2,
                "eq": PE_EQ, "doc": "the pe block with the URAM design point's weight RAM (4096 words, one UltraRAM)"},
    "pe_p16": {"top": "pe", "params": _pe(P16, 1), "quick": False, "mems": PE_MEMS, "dsp": 2,
               "eq": PE_EQ, "doc": "one PE (index 1 of 16), engine P16 parameters"},
    "pe_deep": {"top": "pe", "params": _pe(P4 | {"MulLatency": 5, "AddLatency": 7}, 1), "quick": False,
                "mems": PE_MEMS, "dsp": 2, "eq": PE_EQ,
                "doc": "the pe block at the operators' deepest cuts (Mul 5 / Add 7): every path <= 6 levels"},
    "pe_chain": {"top": "pe_chain", "params": _chain(P4), "quick": False, "mems": PE_MEMS,
                 "dsp": 2 * P4["NumPe"], "eq": CHAIN_EQ, "num_pe": P4["NumPe"],
                 "doc": "chain of 4 PEs, engine P4 parameters (weight bus 4 words, one group)"},
    "pe_chain_p16": {"top": "pe_chain", "params": _chain(P16) | {"NumChains": 4, "RowLanes": 4}, "quick": False,
                     "slow": 1,
                     "mems": PE_MEMS, "dsp": 2 * P16["NumPe"],
                     "eq": CHAIN_EQ | {"inputs": CHAIN_EQ["inputs"] | {
                         "tok_pe_i": "$urandom_range(15)", "tok_mask_i": "$urandom_range(15)",
                         "tok_data_i": "{rnd_fp(), rnd_fp(), rnd_fp(), rnd_fp()}"}},
                     "num_pe": P16["NumPe"],
                     "doc": "16 PEs in 4 chains of 4 with the broadcast and join trees, ROW tokens of 4 rows, "
                            "engine P16 parameters (weight bus 4 words)"},
    "chain_join": {"top": "chain_join", "params": {"NumChains": JOIN_CHAINS, "AddLatency": 4, "Lanes": JOIN_LANES},
                   "quick": False,
                   "slow": 1,
                   "mems": [], "dsp": 0, "eq": JOIN_EQ,
                   "doc": "join tree of 16 chain tails (the NumPe 256 engine's): 15 FP adders (BW), "
                          "4 result lanes registered a node (FW)"},
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
# Streams are valid 85 % of the cycles with values in [-2, 2] and `last` on
# the command's final word (misplaced 3 % of the time there, and 0.1 % of
# the other words, so most commands run to the end), outputs are
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
  int unsigned s_cnt = 0, x_cnt = 0, d_cnt = 0;  // state / Xp / dh words taken by this command
  int unsigned n_state = 1, n_xp = 1, n_dh = 1;  // and in its frames
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
      // The command's input frames (all lengths T): state B*H words (FORWARD
      // LSTM: (h, c) pairs), Xp T*B*H units, dh T*B*H.
      n_state = 32'(p_b) * 32'(p_h) * ((p_op == 1 && p_cell == 0) ? 2 : 1);
      n_xp = 32'(p_t) * 32'(p_b) * 32'(p_h);  // a unit a beat (XpWords 4)
      n_dh = 32'(p_t) * 32'(p_b) * 32'(p_h);
      in_state_in_last_i = (s_cnt + 1 == n_state) ? !rnd_pct(3) : ($urandom_range(999) == 0);
      in_xp_last_i = (x_cnt + 1 == n_xp) ? !rnd_pct(3) : ($urandom_range(999) == 0);
      in_dh_last_i = (d_cnt + 1 == n_dh) ? !rnd_pct(3) : ($urandom_range(999) == 0);
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
        "xp_valid_i": "rnd_pct(85)", "xp_data_i": "{rnd_small(), rnd_small(), rnd_small(), rnd_small()}",
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
        if (in_cmd_valid_i && rtl_cmd_ready_o) begin
          s_cnt = 0; x_cnt = 0; d_cnt = 0;
        end
        if (in_state_in_valid_i && rtl_state_in_ready_o) s_cnt++;
        if (in_xp_valid_i && rtl_xp_ready_o) x_cnt++;
        if (in_dh_valid_i && rtl_dh_ready_o) d_cnt++;
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

# Stimulus of the sequencer alone (the engine P4's): FORWARD and BACKWARD
# commands of random shapes (a BACKWARD after the FORWARD of its shape, so
# that it finds the FORWARD's records), one in eight with a field out of
# range or another bank, the bank loaded with matching weights (now and then
# not, or busy); the datapath's answers (units done up to the command's
# count, pops, drain flags, progress, MAC counts, stream words) are random,
# and the watchdog or an abort ends a run they starve.
SEQ_EQ = {
    "cycles": 20000,
    "reset_expr": "cyc % 9000 == 8999",
    "decls": r"""
  logic [1:0] q_op = 2, q_cell = 0;
  logic [15:0] q_h = 8, q_b = 1, q_t = 2;
  logic [63:0] q_len = {4{16'd2}};
  logic [7:0] q_bank = 0;
  logic [39:0] q_base = 40'h1000, q_size = 40'h100_0000;
  bit q_pending = 0, q_waiting = 0;
  int unsigned q_gap = 0, cmds_ok = 0, cmds_err = 0;
  task automatic new_cmd();
    if (q_op == 2 || rnd_pct(30)) begin  // a new shape, its FORWARD first
      q_op = 1;
      q_cell = 2'($urandom_range(1));
      q_h = 16'(rnd_range(1, 12));
      q_b = 16'(rnd_range(1, 4));
      q_t = 16'(rnd_range(1, 3));
      for (int i = 0; i < 4; i++) q_len[i*16 +: 16] = 16'(rnd_range(1, q_t));
    end else q_op = 2;
    q_bank = 0; q_base = 40'h1000; q_size = 40'h100_0000;
    if (rnd_pct(12)) begin
      case ($urandom_range(8))
        0: q_op = 2'($urandom_range(3));
        1: q_cell = 2'($urandom_range(3));
        2: q_h = 16'($urandom_range(40));
        3: q_b = 16'($urandom_range(6));
        4: q_t = 16'($urandom_range(6));
        5: q_len = {$urandom(), $urandom()};
        6: q_bank = 8'($urandom_range(2));
        7: q_base = 40'($urandom());
        default: q_size = 40'($urandom_range(4096));
      endcase
    end
  endtask
""",
    "drive": r"""
      if (!q_pending && !q_waiting) begin
        if (q_gap > 0) q_gap--;
        else begin
          new_cmd();
          q_pending = 1;
        end
      end
      in_cmd_valid_i = q_pending;
      in_cmd_op_i = q_op;
      in_cfg_cell_i = q_cell;
      in_cfg_hidden_i = q_h;
      in_cfg_batch_i = q_b;
      in_cfg_steps_i = q_t;
      in_cfg_lengths_i = q_len;
      in_cfg_bank_i = q_bank;
      in_cfg_store_base_i = q_base;
      in_cfg_store_size_i = q_size;
      in_bank_valid_i = rnd_pct(98) ? 2'b11 : 2'b10;
      in_bank_cell_i = {2{q_cell}};
      in_bank_hidden_i = {2{q_h}};
      // The input frames as the engine's buffers present them: a word is
      // taken while the stream is open (or skipped) and the buffer has room;
      // `last` comes with the word the sequencer counts as its last (the RTL
      // copy's count), one word in 2,000 early or late.
      in_state_last_i = (u_rtl.left_q == 1) != ($urandom_range(1999) == 0);
      in_xp_word_i = in_xp_valid_i && (rtl_xp_open_o || rtl_xp_skip_o) && rnd_pct(85);
      in_xp_unit_i = in_xp_word_i;
      in_xp_last_i = rtl_xp_skip_o ? rnd_pct(20) : (u_rtl.xp_one_q != ($urandom_range(1999) == 0));
      in_dh_word_i = in_dh_valid_i && (rtl_dh_open_o || rtl_dh_skip_o) && rnd_pct(85);
      in_dh_last_i = rtl_dh_skip_o ? rnd_pct(20) : (u_rtl.dh_one_q != ($urandom_range(1999) == 0));
      // The activation unit finishes units at random, never more than the
      // command has.
      in_unit_done_i = rnd_pct(60) && u_rtl.units_q < u_rtl.uend_q;
""",
    "inputs": {
        "cfg_watchdog_i": "32'd2000", "abort_i": "$urandom_range(19999) == 0",
        "load_busy_i": "rnd_pct(3)", "nonfinite_i": "rnd_pct(2)",
        "drain_idle_i": "rnd_pct(70)", "progress_i": "rnd_pct(90)",
    },
    "pre": r"""
      if (!in_rst_i) begin
        if (in_cmd_valid_i && rtl_cmd_ready_o) begin
          q_pending = 0;
          q_waiting = 1;
        end
        if (rtl_done_o) begin
          if (rtl_status_o == 0) cmds_ok++;
          else cmds_err++;
          q_waiting = 0;
          q_gap = rnd_range(0, 20);
        end
      end else begin
        q_pending = 0;
        q_waiting = 0;
        q_gap = 0;
      end
""",
    "activity": "rtl_busy_o",
    "report": (" cmds_ok=%0d cmds_err=%0d", "cmds_ok, cmds_err"),
}

# The parameters the engine P4 block passes its sequencer, by engine.sv's
# rules: one chain (RowLanes is engine_pkg::row_lanes of it: 1), four result
# lanes where NumPe is a multiple of 4, Xp a unit a beat, the FIFO 2 *
# MaxHidden rounded up to a power of two, the MAC adder.
SEQ_P4 = {k: P4[k] for k in ("NumPe", "WeightDepth", "NumBanks", "MaxHidden", "MaxBatch", "MulLatency",
                             "AddLatency")} | \
    {"NumChains": 1, "MemAddrWidth": 40, "FifoDepth": 1 << (2 * P4["MaxHidden"] - 1).bit_length(),
     "RowLanes": 1, "ResLanes": 4 if P4["NumPe"] % 4 == 0 else 1, "XpWords": 4, "RedAdder": 0}

ENGINE_MEMS = [(r"(.*\.)?u_weights" + LANE, {"bram", "uram"}),
               (r"(.*\.)?u_lut\.(even|odd)_rom$", {"bram"}),
               (r".*", {"bram", "uram", "lutram", "ff"})]

BLOCKS.update({
    "act_unit": {"top": "act_unit", "params": {"MaxHidden": P4["MaxHidden"], "MaxBatch": P4["MaxBatch"],
                                              "MulLatency": P4["MulLatency"], "AddLatency": P4["AddLatency"]},
                 "quick": False, "optional": True,
                 "mems": ACT_MEMS + [(r".*", {"bram", "uram", "lutram", "ff"})],
                 "dsp": None, "eq": ACT_UNIT_EQ,
                 "doc": "activation unit alone (opt-in, --large)"},
    "sequencer": {"top": "sequencer", "params": SEQ_P4, "quick": False, "optional": True, "mems": [],
                  "dsp": None, "eq": SEQ_EQ,
                  "doc": "the engine P4's sequencer alone (its own ABC run): its depth and ABC budget "
                         "in minutes, opt-in (--large)"},
    "engine": {"top": "engine", "params": dict(P4), "quick": False, "slow": 2, "mems": ENGINE_MEMS,
               "dsp": None,
               "eq": ENGINE_EQ, "num_pe": P4["NumPe"], "chain_prefix": "u_chain.",
               # Flat, one ABC run: a path that crosses the sequencer, the
               # activation unit and the engine's glue is mapped whole (kept
               # as hierarchy, each module was mapped with its inputs at time
               # 0 and such paths came out 1-2 levels deeper; decisions.md,
               # "ABC's wire delay set to the clock rule").
               "doc": "recurrent engine P4 (4 PEs)"},
    "engine_p16": {"top": "engine", "params": dict(P16), "quick": False, "slow": 2, "optional": True,
                   "mems": ENGINE_MEMS, "dsp": None, "eq": ENGINE_EQ, "num_pe": P16["NumPe"],
                   "submodules": ["act_unit", "sequencer"],
                   "chain_prefix": "u_chain.", "doc": "recurrent engine P16 (16 PEs), opt-in (--large)"},
    "engine_rows": {"top": "engine", "params": P4 | {"NumPe": 8, "RedAdder": 1, "RowLanes": 4}, "quick": False,
                    "slow": 2, "optional": True, "mems": ENGINE_MEMS, "dsp": None, "eq": ENGINE_EQ, "num_pe": 8,
                    "submodules": ["act_unit", "sequencer"], "chain_prefix": "u_chain.",
                    "doc": "engine with P4's parameters but 8 PEs (one chain, 2 groups of 4), RedAdder and "
                           "4-row tokens: the sequencer's batch-1 row order with more than one group a "
                           "chain, opt-in (--large)"},
})


# ------------------------------------------------------------------- shell
# farnn_core (rtl/core/farnn_core.sv): the FPGA shell around the engine --
# registers (core_regs), ring dispatcher (core_dispatch, with core_windows),
# run unit (core_run, with two core_walkers), five DMA readers and four
# writers on the host master (axi_rd_mux / axi_wr_mux), the gate-store
# adapter (store_axi) on the card master.
#
# The whole core (`farnn_core`, engine P4 inside) is in every run: its depth
# decides the clock with the blocks', because paths that leave one part
# combinationally and end in another are measured only there (Yosys takes
# ~14 min on it). Its equivalence check is opt-in (--large): the netlist
# simulation takes 10-14 min to build, and every part in it has its own
# check. The run also synthesizes the shell's parts on their own (9 blocks,
# ~4.5 min with their equivalence checks), at the parameters farnn_core
# gives them, and the report's "shell parts total" adds them up at their
# counts in farnn_core (SHELL_PARTS); `farnn_core` gives the figures in
# context ("shell (farnn_core minus engine)", each part and each DMA mover
# on its own).
import json as _json
import os as _os

_REGMAP = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "..", "..", "rtl", "core", "data",
                        "regmap.json")


def _regmap():
    with open(_REGMAP) as f:
        return _json.load(f)


def _reg_offsets():
    """Every 32-bit register word of the map (arrays expanded, 64-bit ones as two words)."""
    out = []
    for g in _regmap()["groups"]:
        for r in g["registers"]:
            base = int(r["offset"], 0)
            stride = r.get("stride", 0)
            stride = int(stride, 0) if isinstance(stride, str) else int(stride)
            words = 2 if max(f["lsb"] + f["width"] for f in r["fields"]) > 32 else 1
            for i in range(int(r.get("count", 1))):
                for w in range(words):
                    out.append(base + i * stride + 4 * w)
    return sorted(set(out))


_REG_OFFS = _reg_offsets()
# AXI-Lite helpers: a register word of the map (85 %) or any address.
AXIL_DECLS = r"""
  logic [11:0] reg_offs [%d] = '{%s};
  function automatic logic [11:0] rnd_reg();
    return rnd_pct(85) ? reg_offs[$urandom_range(%d)] : 12'($urandom());
  endfunction
""" % (len(_REG_OFFS), ", ".join("12'h%03x" % o for o in _REG_OFFS), len(_REG_OFFS) - 1)

# Legal-looking descriptor fields (expressions over gen_desc's locals); a
# descriptor keeps only the bits its op uses (core_regs_pkg::DESC_USED_*).
# Memory map of the stimulus: ring at 0x8000 (8 slots), small integers
# (lengths 1..3, polled words, signal/progress targets) at 0x1000-0x2FFF,
# weight images from 0x10000, per-step and state streams from 0x100000;
# window 0 covers [0, 4 GiB) read/write.
_DESC_FIELDS = {
    "op": "op",
    "irq": "rnd_pct(30)",
    "cell": "dcell",
    "bank": "bank",
    "hidden": "h",
    "batch": "rnd_range(1, 4)",
    "steps": "rnd_pct(95) ? 3 : rnd_range(1, 2)",
    "progress_every": "rnd_pct(30) ? rnd_range(1, 2) : 0",
    "watchdog": "rnd_pct(50) ? 0 : 4000",
    "addr0": "(op == core_regs_pkg::OP_LOAD) ? 64'h1_0000 + 64'(64 * $urandom_range(255)) : "
             "(op == core_regs_pkg::OP_WAIT && rnd_pct(50)) ? 64'h0 : 64'h1000 + 64'(4 * $urandom_range(2047))",
    # The LOAD frame at P4 (4 PEs, 16 lanes: 4 sub-beats a beat): ceil(G*H/4)*H + H sub-beats.
    "len0": "rnd_pct(90) ? 64 * ((((4 * h - (dcell == 1 ? h : 0) + 3) / 4) * h + h + 3) / 4) : 64 * rnd_range(1, 16)",
    "value": "rnd_pct(95) ? $urandom_range(3) : $urandom()",
    "gate_select": "$urandom_range(3)",
    "gate_enable": "rnd_pct(20)",
    "gate_poll": "rnd_pct(50)",
    "in_addr": "64'h10_0000 + 64'(4 * $urandom_range(65535))",
    "in_stride": "rnd_pct(70) ? 0 : 4 * rnd_range(1, 1024)",
    "out_addr": "64'h20_0000 + 64'(4 * $urandom_range(65535))",
    "out_stride": "rnd_pct(70) ? 0 : 4 * rnd_range(1, 1024)",
    "state_in_addr": "64'h30_0000 + 64'(4 * $urandom_range(65535))",
    "state_out_addr": "64'h38_0000 + 64'(4 * $urandom_range(65535))",
    "store_base": "64'(32 * $urandom_range(65535))",
    "store_size": "rnd_pct(90) ? 64'h10_0000 : 64'($urandom_range(4096))",
    "gate_addr": "64'h1000 + 64'(4 * $urandom_range(2047))",
    "progress_addr": "64'h2000 + 64'(4 * $urandom_range(1023))",
}


def _desc_assigns():
    L = []
    for f in _regmap()["descriptor"]["fields"]:
        L.append("    d[%d +: %d] = %d'(%s);" % (f["word"] * 32 + f["lsb"], f["width"], f["width"],
                                                _DESC_FIELDS[f["name"]]))
    return "\n".join(L)


# gen_desc(): a random descriptor, mostly legal: NOP, SIGNAL, WAIT (10 %
# each), LOAD (27 %, frame length right 90 % of the time), FORWARD (30 %) and
# BACKWARD (10 %) on the last LOAD's layer (90 %), 3 % an unknown op; 3 %
# get random bits flipped. After a reset (need_load) the first is a LOAD.
DESC_DECLS = r"""
  logic [1:0] ld_cell = 0;
  logic [15:0] ld_h = 1;
  logic [7:0] ld_bank = 0;
  bit need_load = 1;  // the next descriptor is a LOAD (the engine's banks were reset)
  function automatic logic [31:0] rnd_small();
    return {1'($urandom_range(1)), 8'(118 + $urandom_range(9)), 23'($urandom())};
  endfunction
  function automatic logic [1023:0] gen_desc();
    logic [1023:0] d, used;
    logic [7:0] op;
    logic [1:0] dcell;
    logic [15:0] h;
    logic [7:0] bank;
    int unsigned k;
    k = $urandom_range(99);
    op = (k < 10) ? core_regs_pkg::OP_NOP : (k < 20) ? core_regs_pkg::OP_SIGNAL :
         (k < 30) ? core_regs_pkg::OP_WAIT : (k < 57) ? core_regs_pkg::OP_LOAD :
         (k < 87) ? core_regs_pkg::OP_FORWARD : (k < 97) ? core_regs_pkg::OP_BACKWARD : 8'($urandom_range(6, 255));
    if (need_load) op = core_regs_pkg::OP_LOAD;
    need_load = 0;
    if (op == core_regs_pkg::OP_LOAD || rnd_pct(10)) begin
      dcell = 2'($urandom_range(1));
      h = 16'(rnd_range(1, 8));
      bank = 8'($urandom_range(1));
    end else begin
      dcell = ld_cell;
      h = ld_h;
      bank = ld_bank;
    end
    if (op == core_regs_pkg::OP_LOAD) begin
      ld_cell = dcell;
      ld_h = h;
      ld_bank = bank;
    end
    d = '0;
%s
    case (op)
      core_regs_pkg::OP_NOP:      used = core_regs_pkg::DESC_USED_NOP;
      core_regs_pkg::OP_LOAD:     used = core_regs_pkg::DESC_USED_LOAD;
      core_regs_pkg::OP_FORWARD:  used = core_regs_pkg::DESC_USED_FORWARD;
      core_regs_pkg::OP_BACKWARD: used = core_regs_pkg::DESC_USED_BACKWARD;
      core_regs_pkg::OP_WAIT:     used = core_regs_pkg::DESC_USED_WAIT;
      core_regs_pkg::OP_SIGNAL:   used = core_regs_pkg::DESC_USED_SIGNAL;
      default:                    used = '1;
    endcase
    d = d & used;
    if (rnd_pct(3)) d[32 * $urandom_range(31) +: 32] ^= $urandom();
    return d;
  endfunction
""" % _desc_assigns()

# ---------------------------------------------------------------- movers
# DMA reader: an AXI4 read slave answers every AR in order, RLAST on each
# burst's last beat, 0.05 % of the beats SLVERR; commands of 1..MaxItems
# items at random (aligned) addresses, crossing 4 KiB boundaries; the
# consumer is slow half the time (the beat FIFO fills and the credit rule
# holds bursts back); rare aborts, a reset every 4000 cycles.
def _reader_eq(p, max_items):
    al = 4 if p.get("WordAligned") else p["OutWords"] * 4
    return {
        "cycles": 12000,
        "reset_expr": "cyc % 4000 == 3999",
        "decls": r"""
  int unsigned rq[$];  // ARLEN of the bursts outstanding, oldest first
  int unsigned rbeat = 0, bursts = 0, items = 0;
""",
        "inputs": {
            "abort_i": "$urandom_range(2999) == 0",
            "cmd_valid_i": "rnd_pct(30)",
            "cmd_addr_i": "{32'($urandom_range(3)), $urandom() & ~32'(%d)}" % (al - 1),
            "cmd_bytes_i": "32'(rnd_range(1, %d) * %d)" % (max_items, al),
            "cmd_last_i": "rnd_pct(50)",
            "out_ready_i": "(cyc % 3000 < 1500) ? rnd_pct(15) : rnd_pct(90)",
            "m_axi_arready": "rnd_pct(70)",
            "m_axi_rid": str(p["Id"]),
            "m_axi_rresp": "($urandom_range(1999) == 0) ? 2'd2 : 2'd0",
        },
        "drive": r"""
      in_m_axi_rvalid = rq.size() > 0 && rnd_pct(75);
      in_m_axi_rlast = rq.size() > 0 && rbeat == rq[0];
""",
        "pre": r"""
      if (in_rst_i) begin
        rq.delete();
        rbeat = 0;
      end else begin
        if (in_m_axi_rvalid && rtl_m_axi_rready) begin
          if (rbeat == rq[0]) begin
            void'(rq.pop_front());
            rbeat = 0;
          end else rbeat++;
        end
        if (rtl_m_axi_arvalid && in_m_axi_arready) begin
          rq.push_back(32'(rtl_m_axi_arlen));
          bursts++;
        end
        if (rtl_out_valid_o && in_out_ready_i) items++;
      end
""",
        "activity": "rtl_out_valid_o && in_out_ready_i",
        "report": (" bursts=%0d items=%0d", "bursts, items"),
    }


# DMA writer: an AXI4 write slave takes AW and W (random ready) and answers
# B in order once a burst's AW and WLAST have both passed, 0.05 % SLVERR;
# commands of 1..400 words at random 4-byte-aligned addresses; input fast
# then slow; W stalled 900 cycles in 3000 (the beat FIFO and the burst ring
# fill), AW slow now and then; rare aborts, a reset every 4000 cycles.
def _writer_eq(p):
    return {
        "cycles": 12000,
        "reset_expr": "cyc % 4000 == 3999",
        "decls": r"""
  int unsigned aw_n = 0, wl_n = 0, b_n = 0, dones = 0, bursts = 0, beats = 0;
""",
        "inputs": {
            "abort_i": "$urandom_range(2999) == 0",
            "cmd_valid_i": "rnd_pct(30)",
            "cmd_addr_i": "{32'($urandom_range(3)), $urandom() & ~32'd3}",
            "cmd_bytes_i": "32'(rnd_range(1, 400) * 4)",
            "in_valid_i": "(cyc % 3000 < 1500) ? rnd_pct(90) : rnd_pct(40)",
            "m_axi_awready": "(cyc % 4000 >= 3000 && cyc % 4000 < 3400) ? rnd_pct(2) : rnd_pct(60)",
            # W stalls for 900 cycles in every 3000: the beat FIFO fills.
            "m_axi_wready": "(cyc % 3000 >= 1800 && cyc % 3000 < 2700) ? rnd_pct(2) : rnd_pct(80)",
            "m_axi_bid": str(p["Id"]),
            "m_axi_bresp": "($urandom_range(1999) == 0) ? 2'd2 : 2'd0",
        },
        "drive": r"""
      in_m_axi_bvalid = ((aw_n < wl_n) ? aw_n : wl_n) > b_n && rnd_pct(60);
""",
        "pre": r"""
      if (in_rst_i) begin
        aw_n = 0;
        wl_n = 0;
        b_n = 0;
      end else begin
        if (rtl_m_axi_awvalid && in_m_axi_awready) aw_n++;
        if (rtl_m_axi_wvalid && in_m_axi_wready && rtl_m_axi_wlast) wl_n++;
        if (in_m_axi_bvalid && rtl_m_axi_bready) begin
          b_n++;
          bursts++;
        end
        if (rtl_m_axi_wvalid && in_m_axi_wready) beats++;
      end
""",
        "post": r"""
      if (rtl_done_o && !in_rst_i) dones++;
""",
        "activity": "(rtl_m_axi_wvalid && in_m_axi_wready) || rtl_done_o",
        "report": (" bursts=%0d beats=%0d cmds_done=%0d", "bursts, beats, dones"),
    }


# Gate-store adapter: random engine requests (reads and writes, random
# addresses and data), an AXI4 slave answering AR with one R beat and AW+W
# with one B (in order, random delays, rare SLVERR), slow response consumer
# in phases, a flush (soft reset) now and then.
STORE_AXI_EQ = {
    "cycles": 10000,
    "reset_expr": "cyc % 5000 == 4999",
    "decls": r"""
  int unsigned ar_n = 0, r_n = 0, aw_n = 0, w_n = 0, b_n = 0, rsps = 0;
""",
    "inputs": {
        "flush_i": "cyc % 2500 >= 2460",
        "req_valid_i": "rnd_pct(50)",
        "req_write_i": "rnd_pct(50)",
        "rsp_ready_i": "(cyc % 2000 < 1000) ? rnd_pct(90) : rnd_pct(25)",
        "m_axi_awready": "rnd_pct(70)",
        "m_axi_wready": "rnd_pct(70)",
        "m_axi_arready": "rnd_pct(70)",
        "m_axi_bid": "0", "m_axi_rid": "0", "m_axi_rlast": "1",
        "m_axi_bresp": "($urandom_range(999) == 0) ? 2'd2 : 2'd0",
        "m_axi_rresp": "($urandom_range(999) == 0) ? 2'd2 : 2'd0",
    },
    "drive": r"""
      in_m_axi_rvalid = ar_n > r_n && rnd_pct(60);
      in_m_axi_bvalid = ((aw_n < w_n) ? aw_n : w_n) > b_n && rnd_pct(60);
""",
    "pre": r"""
      if (in_rst_i) begin
        ar_n = 0; r_n = 0; aw_n = 0; w_n = 0; b_n = 0;
      end else begin
        if (rtl_m_axi_arvalid && in_m_axi_arready) ar_n++;
        if (in_m_axi_rvalid && rtl_m_axi_rready) r_n++;
        if (rtl_m_axi_awvalid && in_m_axi_awready) aw_n++;
        if (rtl_m_axi_wvalid && in_m_axi_wready) w_n++;
        if (in_m_axi_bvalid && rtl_m_axi_bready) b_n++;
        if (rtl_rsp_valid_o && in_rsp_ready_i) rsps++;
      end
""",
    "activity": "rtl_rsp_valid_o && in_rsp_ready_i",
    "report": (" responses=%0d", "rsps"),
}

# The muxes: every port's ID is its index (as the shell wires them), random
# valid/ready/data, R and B IDs naming a port.
AXI_RD_MUX_EQ = {
    "inputs": {
        "s_arid_i": "{4'd4, 4'd3, 4'd2, 4'd1, 4'd0}",
        "s_arvalid_i": "5'($urandom()) & 5'($urandom())",
        "s_rready_i": "~(5'($urandom()) & 5'($urandom()))",
        "m_axi_arready": "rnd_pct(60)",
        "m_axi_rid": "4'($urandom_range(4))",
        "m_axi_rvalid": "rnd_pct(70)",
    },
    "activity": "(rtl_m_axi_arvalid && in_m_axi_arready) || (in_m_axi_rvalid && rtl_m_axi_rready)",
}
# The per-step repacker: sizes 1..4 held for 700 cycles at a time (the
# stream between is flushed by an abort, as farnn_core changes size only on
# an empty gather), items with random first and last words, fast then slow
# on either side.
UNIT_GATHER_EQ = {
    "reset_expr": "cyc % 5000 == 4999",
    "inputs": {
        "abort_i": "(cyc % 700 == 699) || $urandom_range(1999) == 0",
        "size_i": "3'(1 + (cyc / 700) % 4)",
        "in_valid_i": "(cyc % 2000 < 1000) ? rnd_pct(90) : rnd_pct(30)",
        "in_data_i": "{$urandom(), $urandom(), $urandom(), $urandom()}",
        "in_last_i": "rnd_pct(20)",
        "out_ready_i": "(cyc % 1500 < 700) ? rnd_pct(90) : rnd_pct(30)",
    },
    "drive": r"""
      in_in_lo_i = 2'($urandom_range(3));
      in_in_hi_i = 2'(rnd_range(32'(in_in_lo_i), 3));
""",
    "activity": "rtl_out_valid_o && in_out_ready_i",
}
AXI_WR_MUX_EQ = {
    "inputs": {
        "s_awid_i": "{4'd3, 4'd2, 4'd1, 4'd0}",
        "s_awvalid_i": "4'($urandom()) & 4'($urandom())",
        "s_wvalid_i": "4'($urandom())",
        "s_wlast_i": "4'($urandom()) & 4'($urandom())",
        "s_bready_i": "~(4'($urandom()) & 4'($urandom()))",
        "m_axi_awready": "rnd_pct(60)",
        "m_axi_wready": "rnd_pct(70)",
        "m_axi_bid": "4'($urandom_range(3))",
        "m_axi_bvalid": "rnd_pct(50)",
    },
    "activity": "(rtl_m_axi_wvalid && in_m_axi_wready) || (rtl_m_axi_awvalid && in_m_axi_awready)",
}

# Registers: AXI-Lite writes and reads at register addresses (85 %) with
# random data and strobes (mostly all four), random values on the ro inputs.
CORE_REGS_EQ = {
    "cycles": 6000,
    "decls": AXIL_DECLS,
    "inputs": {
        "s_axil_awaddr": "rnd_reg()", "s_axil_araddr": "rnd_reg()",
        "s_axil_awvalid": "rnd_pct(50)", "s_axil_wvalid": "rnd_pct(50)", "s_axil_bready": "rnd_pct(80)",
        "s_axil_arvalid": "rnd_pct(50)", "s_axil_rready": "rnd_pct(80)",
        "s_axil_wstrb": "rnd_pct(80) ? 4'hf : 4'($urandom())",
        "irq_status_done_set_i": "rnd_pct(5)", "irq_status_error_set_i": "rnd_pct(3)",
    },
    "activity": "(rtl_s_axil_rvalid && in_s_axil_rready) || (rtl_s_axil_bvalid && in_s_axil_bready)",
}

# Ring dispatcher alone: a ring of 8 at 0x8000 (now and then a bad size), a
# tail that stays within a ring of RING_DONE, window 0 over [0, 4 GiB) and
# seven random ones; the control reader answers each command with its words
# (a descriptor from gen_desc for a 128-byte fetch, small integers for
# lengths and polls); load, run and notify partners finish after random
# delays, some with an error; a DMA error now and then; a soft reset after
# 40 cycles halted; rare aborts.
CORE_DISPATCH_EQ = {
    "cycles": 20000,
    "reset_expr": "cyc % 10000 == 9999",
    "decls": DESC_DECLS + r"""
  int unsigned tail = 0, halt_cnt = 0, ld_cnt = 0, run_cnt = 0;
  int unsigned ntf_cmd = 0, ntf_dat = 0, ntf_dn = 0, fetched = 0, issued = 0, retired = 0, halts = 0;
  bit ld_busy = 0, run_busy = 0, dma_err = 0, run_ok = 0;
  logic [31:0] cq[$];
  bit cl[$];
  logic [127:0] db = '0;
  logic [447:0] wb7 = '0, ws7 = '0;
  logic [6:0] wr7 = '0, ww7 = '0;
  logic [1023:0] dsc;
""",
    "inputs": {
        "enable_i": "!(cyc % 5000 >= 4950)",
        "soft_reset_i": "0",
        "abort_i": "$urandom_range(4999) == 0",
        "ring_base_i": "64'h8000",
        "ring_size_i": "(cyc % 7000 >= 6950) ? 32'd6 : 32'd8",
        "ring_wb_addr_i": "(cyc % 4000 < 2500) ? 64'h2f00 : 64'h0",
        "watchdog_i": "32'd1500",
        "win_base_i": "{wb7, 64'h0}",
        "win_size_i": "{ws7, 64'h1_0000_0000}",
        "win_read_i": "{wr7, 1'b1}",
        "win_write_i": "{ww7, 1'b1}",
        "dma_err_addr_i": "{$urandom(), $urandom()}",
        "dma_err_resp_i": "2'd2",
        "store_idle_i": "rnd_pct(90)",
        "ctl_cmd_ready_i": "rnd_pct(60)",
        "ntf_cmd_ready_i": "rnd_pct(60)",
        "ntf_ready_i": "rnd_pct(60)",
        "load_ready_i": "rnd_pct(50)",
        "load_status_i": "rnd_pct(80) ? 5'd0 : 5'($urandom_range(1, 19))",
        "wgt_cmd_ready_i": "rnd_pct(50)",
        "run_fail_code_i": "5'($urandom_range(1, 19))",
    },
    "drive": r"""
      if (cyc % 2000 == 0) begin
        wb7 = {14{$urandom()}};
        ws7 = {14{$urandom()}};
        wr7 = 7'($urandom());
        ww7 = 7'($urandom());
      end
      if (rnd_pct(3) && tail - rtl_ring_done_o < 8) tail++;
      if (rnd_pct(1)) db[32 * $urandom_range(3) +: 32] += 1;
      in_ring_tail_i = tail;
      in_doorbells_i = db;
      in_ctl_valid_i = cq.size() > 0 && rnd_pct(80);
      in_ctl_data_i = (cq.size() > 0) ? cq[0] : $urandom();
      in_ctl_last_i = cq.size() > 0 && cl[0];
      in_ntf_done_i = ((ntf_cmd < ntf_dat) ? ntf_cmd : ntf_dat) > ntf_dn && rnd_pct(30);
      in_load_done_i = ld_busy && ld_cnt == 0;
      run_ok = rnd_pct(85);
      in_run_done_i = run_busy && run_cnt == 0 && run_ok;
      in_run_fail_i = run_busy && run_cnt == 0 && !run_ok;
      in_all_idle_i = !ld_busy && !run_busy;
      in_soft_reset_i = halt_cnt == 40;
      in_dma_err_i = dma_err;
""",
    "pre": r"""
      if (in_rst_i) begin
        cq.delete(); cl.delete();
        tail = 0; halt_cnt = 0; ld_busy = 0; run_busy = 0; dma_err = 0;
        ntf_cmd = 0; ntf_dat = 0; ntf_dn = 0;
      end else begin
        if (in_ctl_valid_i && rtl_ctl_ready_o) begin
          void'(cq.pop_front());
          void'(cl.pop_front());
        end
        if (rtl_ctl_cmd_valid_o && in_ctl_cmd_ready_i) begin
          if (rtl_ctl_cmd_bytes_o == 32'd128) begin
            dsc = gen_desc();
            fetched++;
            for (int w = 0; w < 32; w++) begin
              cq.push_back(dsc[w*32 +: 32]);
              cl.push_back(w == 31);
            end
          end else begin
            for (int w = 0; w < int'(rtl_ctl_cmd_bytes_o / 4); w++) begin
              cq.push_back(rnd_pct(99) ? 32'(rnd_range(1, 3)) : $urandom());
              cl.push_back(w == int'(rtl_ctl_cmd_bytes_o / 4) - 1);
            end
          end
        end
        if (rtl_ntf_cmd_valid_o && in_ntf_cmd_ready_i) ntf_cmd++;
        if (rtl_ntf_valid_o && in_ntf_ready_i) ntf_dat++;
        if (in_ntf_done_i) ntf_dn++;
        if (ld_busy) begin
          if (ld_cnt == 0) ld_busy = 0;
          else ld_cnt--;
        end
        if (rtl_load_valid_o && in_load_ready_i) begin
          ld_busy = 1;
          ld_cnt = rnd_range(5, 100);
          issued++;
        end
        if (run_busy) begin
          if (run_cnt == 0) run_busy = 0;
          else run_cnt--;
        end
        if (rtl_run_start_o) begin
          run_busy = 1;
          run_cnt = rnd_range(5, 150);
          issued++;
        end
        if (rtl_abort_o) begin
          dma_err = 0;
          if (ld_cnt > 3) ld_cnt = 3;
          if (run_cnt > 3) run_cnt = 3;
        end else if ($urandom_range(9999) == 0) dma_err = 1;
        halt_cnt = rtl_halted_o ? halt_cnt + 1 : 0;
        if (halt_cnt == 1) halts++;
        if (rtl_desc_done_o) retired++;
      end
""",
    "activity": "rtl_desc_done_o || (rtl_ctl_cmd_valid_o && in_ctl_cmd_ready_i) || rtl_run_start_o || "
                "(rtl_load_valid_o && in_load_ready_i)",
    "report": (" fetched=%0d issued=%0d retired=%0d halts=%0d", "fetched, issued, retired, halts"),
}

# Run unit alone: one command after another (FW or BW, LSTM or GRU, H 1..32,
# B 1..4, lengths 1..T, T 1..6, packed or strided, gated on a doorbell or a
# polled word 30 % of the time, progress every 0..2 steps); an engine that
# takes the command and ends after a random time (15 % with an error, then
# the shell's abort); DMA partners with random ready and completion delays;
# a run stuck for 3000 cycles is aborted; rare aborts.
CORE_RUN_EQ = {
    "cycles": 20000,
    "reset_expr": "cyc % 10000 == 9999",
    "decls": r"""
  bit r_active = 0, eng_busy = 0, c_bw = 0, c_ge = 0, c_gp = 0, abort_next = 0;
  int unsigned gap = 5, eng_cnt = 0, age = 0, runs_ok = 0, runs_fail = 0;
  int unsigned out_pend = 0, so_pend = 0, prog_cmd = 0, prog_dat = 0, prog_dn = 0, poll_pend = 0;
  logic [1:0] c_cell = 0, c_gs = 0;
  logic [15:0] c_h = 1, c_b = 1, c_t = 1, c_max = 1, c_every = 0;
  logic [63:0] c_len = '0;
  logic [31:0] c_total = 1, c_is = 0, c_os = 0;
  logic [127:0] db = '0;
  task automatic new_run();
    c_bw = rnd_pct(40);
    c_cell = 2'($urandom_range(1));
    c_h = 16'(rnd_range(1, 32));
    c_b = 16'(rnd_range(1, 4));
    c_t = 16'(rnd_range(1, 6));
    c_len = '0;
    c_max = 0;
    c_total = 0;
    for (int b = 0; b < 4; b++) begin
      if (b < int'(c_b)) begin
        c_len[b*16 +: 16] = 16'(rnd_range(1, int'(c_t)));
        c_total += 32'(c_len[b*16 +: 16]);
        if (c_len[b*16 +: 16] > c_max) c_max = c_len[b*16 +: 16];
      end
    end
    c_is = rnd_pct(70) ? 0 : 32'(4 * rnd_range(1, 4096));
    c_os = rnd_pct(70) ? 0 : 32'(4 * rnd_range(1, 4096));
    c_ge = rnd_pct(30);
    c_gp = rnd_pct(50);
    c_gs = 2'($urandom_range(3));
    c_every = 16'($urandom_range(2));
  endtask
""",
    "inputs": {
        "abort_i": "abort_next || $urandom_range(2999) == 0",
        "start_i": "0",
        "bw_i": "c_bw", "cell_i": "c_cell", "hidden_i": "c_h", "batch_i": "c_b", "steps_i": "c_t",
        "bank_i": "8'($urandom_range(1))", "lengths_i": "c_len", "maxlen_i": "c_max", "total_i": "c_total",
        "in_words_i": "c_bw ? 18'(c_h) : 18'(c_h) * (c_cell == 0 ? 18'd4 : 18'd3)",
        "out_words_i": "c_bw ? 18'(c_h) * 18'd4 : 18'(c_h)",
        "state_in_bytes_i": "32'(c_b) * 32'(c_h) * ((c_cell == 0 && !c_bw) ? 32'd8 : 32'd4)",
        "state_out_bytes_i": "32'(c_b) * 32'(c_h) * (c_cell == 0 ? 32'd8 : 32'd4)",
        "in_addr_i": "{$urandom(), $urandom() & ~32'd3}", "in_stride_i": "c_is",
        "out_addr_i": "{$urandom(), $urandom() & ~32'd3}", "out_stride_i": "c_os",
        "state_in_addr_i": "{$urandom(), $urandom() & ~32'd3}",
        "state_out_addr_i": "{$urandom(), $urandom() & ~32'd3}",
        "gate_enable_i": "c_ge", "gate_poll_i": "c_gp", "gate_select_i": "c_gs",
        "gate_addr_i": "{$urandom(), $urandom() & ~32'd3}", "progress_every_i": "c_every",
        "progress_addr_i": "{$urandom(), $urandom() & ~32'd3}", "doorbells_i": "db",
        "eng_cmd_ready_i": "rnd_pct(50)",
        "eng_status_i": "rnd_pct(85) ? 5'd0 : 5'($urandom_range(1, 19))",
        "in_cmd_ready_i": "rnd_pct(60)", "si_cmd_ready_i": "rnd_pct(60)", "poll_cmd_ready_i": "rnd_pct(60)",
        "out_cmd_ready_i": "rnd_pct(60)", "so_cmd_ready_i": "rnd_pct(60)", "prog_cmd_ready_i": "rnd_pct(60)",
        "prog_ready_i": "rnd_pct(60)", "poll_data_i": "32'($urandom_range(8))",
    },
    "drive": r"""
      if (rnd_pct(2)) db[32 * $urandom_range(3) +: 32] += 1;
      in_doorbells_i = db;
      if (!r_active && !in_abort_i) begin
        if (gap > 0) gap--;
        else begin
          new_run();
          in_start_i = 1;
          r_active = 1;
          age = 0;
        end
      end
      in_eng_busy_i = eng_busy;
      in_eng_done_i = eng_busy && eng_cnt == 0;
      in_poll_valid_i = poll_pend > 0 && rnd_pct(30);
      in_out_done_i = out_pend > 0 && rnd_pct(20);
      in_so_done_i = so_pend > 0 && rnd_pct(20);
      in_prog_done_i = ((prog_cmd < prog_dat) ? prog_cmd : prog_dat) > prog_dn && rnd_pct(30);
""",
    "pre": r"""
      abort_next = 0;
      if (in_rst_i) begin
        r_active = 0; eng_busy = 0; gap = 5; out_pend = 0; so_pend = 0; poll_pend = 0;
        prog_cmd = 0; prog_dat = 0; prog_dn = 0;
      end else begin
        if (eng_busy) begin
          if (eng_cnt == 0) eng_busy = 0;
          else eng_cnt--;
        end
        if (rtl_eng_cmd_valid_o && in_eng_cmd_ready_i) begin
          eng_busy = 1;
          eng_cnt = rnd_range(10, 300);
        end
        if (rtl_out_cmd_valid_o && in_out_cmd_ready_i) out_pend++;
        if (in_out_done_i) out_pend--;
        if (rtl_so_cmd_valid_o && in_so_cmd_ready_i) so_pend++;
        if (in_so_done_i) so_pend--;
        if (rtl_poll_cmd_valid_o && in_poll_cmd_ready_i) poll_pend++;
        if (in_poll_valid_i) poll_pend--;
        if (rtl_prog_cmd_valid_o && in_prog_cmd_ready_i) prog_cmd++;
        if (rtl_prog_valid_o && in_prog_ready_i) prog_dat++;
        if (in_prog_done_i) prog_dn++;
        age++;
        if (rtl_done_o) runs_ok++;
        if (rtl_fail_o) runs_fail++;
        if (r_active && (rtl_done_o || rtl_fail_o || in_abort_i || age > 3000)) begin
          abort_next = rtl_fail_o || age > 3000;
          r_active = 0;
          gap = rnd_range(0, 30);
        end
        if (in_abort_i && eng_cnt > 3) eng_cnt = 3;
      end
""",
    "activity": "rtl_done_o || rtl_fail_o || (rtl_in_cmd_valid_o && in_in_cmd_ready_i) || "
                "(rtl_out_cmd_valid_o && in_out_cmd_ready_i)",
    "report": (" runs_ok=%0d runs_fail=%0d", "runs_ok, runs_fail"),
}

# The whole core: a driver on the AXI-Lite port and two memories.
#  - driver: after each reset it opens window 0 over [0, 4 GiB), sets a ring
#    of 8 at 0x8000 with a write-back word, a watchdog, and CTRL (enable and
#    both interrupts); then advances RING_TAIL while it is less than a ring
#    ahead of RING_DONE (read back now and then), bumps step doorbells,
#    reads random registers, and answers the error interrupt with
#    IRQ_STATUS clear + CTRL soft reset (the ring restarts); a few random
#    register writes (undone by the set-up after each error);
#  - host memory (AXI4, 512 bits): every AR answered in order (R beats with
#    the AR's ID, random delays, 1 in 5000 beats SLVERR); a beat of the ring
#    holds a gen_desc() descriptor, of 0x1000-0x2FFF small integers
#    (lengths, polled counts), anything else FP32 values near 1; writes
#    take AW and W with random ready and answer B in AW order;
#  - card memory (gate store): one R beat per AR, one B per AW+W.
FARNN_CORE_EQ = {
    "cycles": 24000,
    "reset_expr": "cyc % 12000 == 11999",
    "decls": DESC_DECLS + AXIL_DECLS + r"""
  localparam logic [63:0] RING = 64'h8000;
  logic [11:0] wq_a[$];
  logic [31:0] wq_d[$];
  bit aw_v = 0, w_v = 0, aw_ok = 0, w_ok = 0, ar_v = 0;
  logic [11:0] ar_a = '0, r_a = '0;
  logic [31:0] tail = 0, done_seen = 0, db [4] = '{0, 0, 0, 0};
  int unsigned irq_done = 0, irq_err = 0, host_rd = 0, host_wr = 0, card_rq = 0, retired = 0, eng_cmds = 0;
  // host memory: R beats queued at AR time
  logic [511:0] rq_d[$];
  logic [3:0] rq_id[$];
  bit rq_l[$];
  logic [3:0] awq[$];
  int unsigned wl_n = 0;
  logic [1023:0] desc_cache [8];
  // card memory
  int unsigned c_ar = 0, c_r = 0, c_aw = 0, c_w = 0, c_b = 0;
  task automatic wr(input logic [11:0] a, input logic [31:0] v);
    wq_a.push_back(a);
    wq_d.push_back(v);
  endtask
  task automatic setup();
    wr(core_regs_pkg::REG_WIN_BASE, 0);
    wr(core_regs_pkg::REG_WIN_BASE_HI, 0);
    wr(core_regs_pkg::REG_WIN_SIZE, 0);
    wr(core_regs_pkg::REG_WIN_SIZE_HI, 1);
    wr(core_regs_pkg::REG_WIN_CTRL, 3);
    wr(core_regs_pkg::REG_RING_BASE, 32'(RING));
    wr(core_regs_pkg::REG_RING_BASE_HI, 0);
    wr(core_regs_pkg::REG_RING_SIZE, 8);
    wr(core_regs_pkg::REG_RING_WB_ADDR, 32'h2f00);
    wr(core_regs_pkg::REG_WATCHDOG, 4000);
    wr(core_regs_pkg::REG_CTRL, 32'h0001_0300);
  endtask
  function automatic logic [511:0] beat_at(input logic [63:0] a);
    logic [511:0] v;
    int unsigned s;
    if (a >= RING && a < RING + 64'd1024) begin
      s = int'((a - RING) >> 7);
      if (!a[6]) desc_cache[s] = gen_desc();
      v = desc_cache[s][a[6] * 512 +: 512];
    end else if (a >= 64'h1000 && a < 64'h3000) begin
      for (int w = 0; w < 16; w++) v[w*32 +: 32] = rnd_pct(99) ? 32'(rnd_range(1, 3)) : $urandom();
    end else begin
      for (int w = 0; w < 16; w++) v[w*32 +: 32] = rnd_small();
    end
    return v;
  endfunction
""",
    "inputs": {
        "s_axil_awvalid": "0", "s_axil_wvalid": "0", "s_axil_arvalid": "0",
        "s_axil_wstrb": "4'hf", "s_axil_bready": "rnd_pct(70)", "s_axil_rready": "rnd_pct(70)",
        "m_axi_host_arready": "rnd_pct(70)", "m_axi_host_awready": "rnd_pct(70)",
        "m_axi_host_wready": "rnd_pct(80)", "m_axi_host_rvalid": "0", "m_axi_host_bvalid": "0",
        "m_axi_host_bresp": "($urandom_range(4999) == 0) ? 2'd2 : 2'd0",
        "m_axi_card_arready": "rnd_pct(70)", "m_axi_card_awready": "rnd_pct(70)",
        "m_axi_card_wready": "rnd_pct(70)", "m_axi_card_rid": "0", "m_axi_card_bid": "0",
        "m_axi_card_rlast": "1", "m_axi_card_rresp": "0", "m_axi_card_bresp": "0",
        "m_axi_card_rdata": "{16{rnd_small()}}",
        "irq_ack_i": "0",
    },
    "drive": r"""
      // driver
      if (wq_a.size() == 0 && rnd_pct(3) && tail - done_seen < 8) begin
        tail++;
        wr(core_regs_pkg::REG_RING_TAIL, tail);
      end
      if (rnd_pct(2)) begin
        automatic int unsigned k = $urandom_range(3);
        db[k] += 32'($urandom_range(1, 2));
        wr(12'(core_regs_pkg::REG_STEP_DOORBELL + 4 * k), db[k]);
      end
      if ($urandom_range(1999) == 0) wr(rnd_reg(), $urandom());
      if (!aw_v && !aw_ok && wq_a.size() > 0 && rnd_pct(60)) aw_v = 1;
      if (!w_v && !w_ok && wq_a.size() > 0 && rnd_pct(60)) w_v = 1;
      in_s_axil_awvalid = aw_v;
      in_s_axil_awaddr = aw_v ? wq_a[0] : 12'($urandom());
      in_s_axil_wvalid = w_v;
      in_s_axil_wdata = w_v ? wq_d[0] : $urandom();
      if (!ar_v && rnd_pct(3)) begin
        ar_v = 1;
        ar_a = rnd_pct(50) ? core_regs_pkg::REG_RING_DONE : rnd_reg();
      end
      in_s_axil_arvalid = ar_v;
      in_s_axil_araddr = ar_a;
      in_irq_ack_i = prev_irq_req_o & 2'($urandom());
      // host memory
      in_m_axi_host_rvalid = rq_d.size() > 0 && rnd_pct(75);
      in_m_axi_host_rdata = (rq_d.size() > 0) ? rq_d[0] : {16{$urandom()}};
      in_m_axi_host_rid = (rq_d.size() > 0) ? rq_id[0] : 4'($urandom());
      in_m_axi_host_rlast = rq_d.size() > 0 && rq_l[0];
      in_m_axi_host_rresp = ($urandom_range(4999) == 0) ? 2'd2 : 2'd0;
      in_m_axi_host_bvalid = awq.size() > 0 && wl_n > 0 && rnd_pct(60);
      in_m_axi_host_bid = (awq.size() > 0) ? awq[0] : 4'($urandom());
      // card memory
      in_m_axi_card_rvalid = c_ar > c_r && rnd_pct(60);
      in_m_axi_card_bvalid = ((c_aw < c_w) ? c_aw : c_w) > c_b && rnd_pct(60);
""",
    "pre": r"""
      if (in_rst_i) begin
        wq_a.delete(); wq_d.delete();
        aw_v = 0; w_v = 0; aw_ok = 0; w_ok = 0; ar_v = 0;
        tail = 0; done_seen = 0; db = '{0, 0, 0, 0};
        rq_d.delete(); rq_id.delete(); rq_l.delete(); awq.delete(); wl_n = 0;
        c_ar = 0; c_r = 0; c_aw = 0; c_w = 0; c_b = 0;
        setup();
        need_load = 1;
      end else begin
        // AXI-Lite
        if (rtl_s_axil_rvalid && in_s_axil_rready && r_a == core_regs_pkg::REG_RING_DONE)
          done_seen = rtl_s_axil_rdata;
        if (ar_v && rtl_s_axil_arready) begin
          ar_v = 0;
          r_a = ar_a;
        end
        if (rtl_s_axil_bvalid && in_s_axil_bready && aw_ok && w_ok) begin
          void'(wq_a.pop_front());
          void'(wq_d.pop_front());
          aw_ok = 0;
          w_ok = 0;
        end
        if (aw_v && rtl_s_axil_awready) begin aw_v = 0; aw_ok = 1; end
        if (w_v && rtl_s_axil_wready) begin w_v = 0; w_ok = 1; end
        if (in_irq_ack_i[0] && rtl_irq_req_o[0]) begin
          irq_done++;
          wr(core_regs_pkg::REG_IRQ_STATUS, 32'h1);
        end
        if (in_irq_ack_i[1] && rtl_irq_req_o[1]) begin
          irq_err++;
          wr(core_regs_pkg::REG_IRQ_STATUS, 32'h2);
          wr(core_regs_pkg::REG_CTRL, 32'h0001_0301);
          setup();  // undo stray register writes
          need_load = 1;
        end
        // host memory
        if (in_m_axi_host_rvalid && rtl_m_axi_host_rready) begin
          void'(rq_d.pop_front()); void'(rq_id.pop_front()); void'(rq_l.pop_front());
          host_rd++;
        end
        if (rtl_m_axi_host_arvalid && in_m_axi_host_arready) begin
          for (int i = 0; i <= int'(rtl_m_axi_host_arlen); i++) begin
            rq_d.push_back(beat_at(rtl_m_axi_host_araddr + 64'(64 * i)));
            rq_id.push_back(rtl_m_axi_host_arid);
            rq_l.push_back(i == int'(rtl_m_axi_host_arlen));
          end
        end
        if (rtl_m_axi_host_awvalid && in_m_axi_host_awready) awq.push_back(rtl_m_axi_host_awid);
        if (rtl_m_axi_host_wvalid && in_m_axi_host_wready) begin
          host_wr++;
          if (rtl_m_axi_host_wlast) wl_n++;
        end
        if (in_m_axi_host_bvalid && rtl_m_axi_host_bready) begin
          void'(awq.pop_front());
          wl_n--;
        end
        // card memory
        if (rtl_m_axi_card_arvalid && in_m_axi_card_arready) c_ar++;
        if (in_m_axi_card_rvalid && rtl_m_axi_card_rready) c_r++;
        if (rtl_m_axi_card_awvalid && in_m_axi_card_awready) c_aw++;
        if (rtl_m_axi_card_wvalid && in_m_axi_card_wready) c_w++;
        if (in_m_axi_card_bvalid && rtl_m_axi_card_bready) c_b++;
        if ((rtl_m_axi_card_arvalid && in_m_axi_card_arready) ||
            (rtl_m_axi_card_awvalid && in_m_axi_card_awready)) card_rq++;
      end
""",
    "post": r"""
      if (!in_rst_i && u_rtl.desc_done) retired++;
      if (!in_rst_i && u_rtl.eng_done) eng_cmds++;
""",
    "activity": "(in_m_axi_host_rvalid && rtl_m_axi_host_rready) || "
                "(rtl_m_axi_host_wvalid && in_m_axi_host_wready) || "
                "(rtl_m_axi_card_arvalid && in_m_axi_card_arready) || "
                "(rtl_m_axi_card_awvalid && in_m_axi_card_awready)",
    "report": (" retired=%0d eng_cmds=%0d irq_done=%0d irq_err=%0d host_r_beats=%0d host_w_beats=%0d card_reqs=%0d",
               "retired, eng_cmds, irq_done, irq_err, host_rd, host_wr, card_rq"),
}

# Memories of the shell (prim_fifo keeps its array in prim_ram_1r1w lanes).
FIFO = r"u_fifo\.u_ram" + LANE
# The weight reader's 512-beat FIFO: the 16 data lanes (512 x 32) in block
# RAM (one RAMB18E2 each, 8 RAMB36 in all); the 3-bit lane of the item marks
# (first/last item, stream last) Yosys puts in LUT-RAM (512 x 3 bits, 104 LUTs).
RD_DEEP_MEMS = [(r"(.*\.)?u_fifo\.u_ram\.g_lane\[16\]\.g_infer\.mem$", {"lutram", "bram"}),
                (r"(.*\.)?" + FIFO, {"bram"}),
                (r"(.*\.)?desc_mem$", {"lutram", "ff"})]      # burst descriptors, MaxOutstanding
RD_MEMS = [(r"(.*\.)?" + FIFO, {"lutram", "ff"}),              # 2..32 beats
           (r"(.*\.)?desc_mem$", {"lutram", "ff"})]
WR_MEMS = [(r"(.*\.)?" + FIFO, {"lutram", "ff"}),              # 2..32 beats x 529 bits
           (r"(.*\.)?ring_(addr|len|last)$", {"lutram", "ff"})]  # burst ring, 2*MaxOutstanding
STORE_MEMS = [(r"(.*\.)?u_(order|rbuf|bbuf)\.u_ram" + LANE, {"lutram", "ff"})]  # 32 entries each
# Small case-statement tables (4-bit address) Yosys turns into ROMs: logic.
ROM_MEMS = [(r"\$auto\$proc_rom", {"ff", "lutram"})]
WR_MUX_MEMS = [(r"(.*\.)?gnt_mem$", {"lutram", "ff"})]         # grant FIFO, 8 x 2 bits

# The movers as farnn_core configures them (Id = AXI ID = mux port).
_RD = {"IdWidth": 4}
SHELL_READERS = {  # block -> (instance, parameters, items per command at most)
    "dma_reader_ctl": ("u_rd_ctl", _RD | {"Id": 0, "OutWords": 1, "FifoBeats": 4, "MaxBurstBeats": 2,
                                          "MaxOutstanding": 2}, 64),
    "dma_reader_wgt": ("u_rd_wgt", _RD | {"Id": 1, "OutWords": 16, "FifoBeats": 512, "MaxBurstBeats": 64,
                                          "MaxOutstanding": 8}, 128),
    "dma_reader_si": ("u_rd_si", _RD | {"Id": 2, "OutWords": 1, "FifoBeats": 16, "MaxBurstBeats": 16,
                                        "MaxOutstanding": 2}, 300),
    "dma_reader_in": ("u_rd_in", _RD | {"Id": 3, "OutWords": 4, "FifoBeats": 32, "MaxBurstBeats": 16,
                                        "MaxOutstanding": 8, "WordAligned": 1}, 300),
    "dma_reader_poll": ("u_rd_poll", _RD | {"Id": 4, "OutWords": 1, "FifoBeats": 2, "MaxBurstBeats": 1,
                                            "MaxOutstanding": 1}, 4),
}
# The four writers (instance -> parameters). Only the first is a block, at
# g_wr[0].u_wr's parameters. In farnn_core the four writers cost within 6 % of each other (the 2-beat
# ones keep the same 529-bit FIFO register and 32-deep LUT-RAM), so the
# block stands for all four.
SHELL_WRITERS = {
    "g_wr[0].u_wr": {"Id": 0, "FifoBeats": 32, "MaxBurstBeats": 16, "MaxOutstanding": 8},
    "g_wr[1].u_wr": {"Id": 1, "FifoBeats": 16, "MaxBurstBeats": 16, "MaxOutstanding": 2},
    "g_wr[2].u_wr": {"Id": 2, "FifoBeats": 2, "MaxBurstBeats": 1, "MaxOutstanding": 2},
    "g_wr[3].u_wr": {"Id": 3, "FifoBeats": 2, "MaxBurstBeats": 1, "MaxOutstanding": 2},
}
# The shell's part blocks of the default run and how many instances of
# farnn_core each stands for: the report's "shell parts" summary adds them
# up (dma_reader_si for the three one-word readers: ctl, si, poll;
# dma_reader_in, the per-step reader of 4-word items, and unit_gather behind
# it; dma_writer for the four writers). The other reader configurations are
# opt-in blocks (--large) for an exact look.
SHELL_PARTS = {"core_regs": 1, "core_dispatch": 1, "core_run": 1, "store_axi": 1, "axi_rd_mux": 1,
               "axi_wr_mux": 1, "dma_reader_wgt": 1, "dma_reader_si": 3, "dma_reader_in": 1,
               "unit_gather": 1, "dma_writer": 4}

BLOCKS.update({
    "core_regs": {"top": "core_regs", "params": {}, "quick": False, "mems": [], "dsp": 0,
                  "eq": CORE_REGS_EQ, "doc": "farnn_core registers (AXI4-Lite slave, generated)"},
    "core_dispatch": {"top": "core_dispatch",
                      "params": {"NumWindows": 8, "MaxBatch": P4["MaxBatch"], "MaxHidden": P4["MaxHidden"],
                                 "WeightLanes": P4["WeightLanes"], "StoreAddrWidth": 40},
                      "quick": False, "mems": ROM_MEMS, "dsp": None, "eq": CORE_DISPATCH_EQ,
                      "doc": "ring dispatcher with its window checker (farnn_core at P4)"},
    "core_run": {"top": "core_run", "params": {"MaxBatch": P4["MaxBatch"], "StoreAddrWidth": 40},
                 "quick": False, "mems": [], "dsp": None, "eq": CORE_RUN_EQ,
                 "doc": "FORWARD/BACKWARD run unit with its two stream walkers (farnn_core at P4)"},
    "store_axi": {"top": "store_axi", "params": {"AddrWidth": 40, "IdWidth": 4, "MaxOutstanding": 32},
                  "quick": False, "mems": STORE_MEMS, "dsp": 0, "eq": STORE_AXI_EQ,
                  "doc": "gate-store adapter onto the card AXI4 master"},
    "axi_rd_mux": {"top": "axi_rd_mux", "params": {"NumPorts": 5, "IdWidth": 4}, "quick": False,
                   "mems": [], "dsp": 0, "eq": AXI_RD_MUX_EQ, "doc": "host AXI4 read mux, 5 readers"},
    "axi_wr_mux": {"top": "axi_wr_mux", "params": {"NumPorts": 4, "IdWidth": 4, "GrantDepth": 8},
                   "quick": False, "mems": WR_MUX_MEMS, "dsp": 0, "eq": AXI_WR_MUX_EQ,
                   "doc": "host AXI4 write mux, 4 writers"},
    "unit_gather": {"top": "unit_gather", "params": {}, "quick": False, "mems": [], "dsp": 0,
                    "eq": UNIT_GATHER_EQ, "doc": "per-step item repacker: an Xp unit or a dh word a beat"},
})
for _b, (_inst, _p, _items) in SHELL_READERS.items():
    BLOCKS[_b] = {"top": "dma_reader", "params": _p, "quick": False, "optional": _b not in SHELL_PARTS,
                  "mems": RD_DEEP_MEMS if _p["FifoBeats"] >= 512 else RD_MEMS, "dsp": 0,
                  "eq": _reader_eq(_p, _items),
                  "doc": "DMA reader %s of farnn_core (%d-word items, %d-beat FIFO)"
                         % (_inst, _p["OutWords"], _p["FifoBeats"])}
BLOCKS["dma_writer"] = {"top": "dma_writer", "params": dict(SHELL_WRITERS["g_wr[0].u_wr"]), "quick": False,
                        "mems": WR_MEMS, "dsp": 0, "eq": _writer_eq(SHELL_WRITERS["g_wr[0].u_wr"]),
                        "doc": "DMA writer g_wr[0].u_wr of farnn_core (per-step output)"}

# farnn_core: memories of the engine (ENGINE_MEMS' first two rules) and of
# the shell; the shell's parts kept as hierarchy so that the report gives
# each one's cost in context (the movers named by their Id parameter).
# In farnn_core the shell's parts are kept as hierarchy through memory
# mapping, so their memories carry the names local to their module (no
# instance path), and a name that several instances share (the movers' beat
# FIFOs) is checked on the union of what they became: the per-instance
# mapping is what the part blocks check (dma_reader_wgt: block RAM).
CORE_MEMS = [(r"(.*\.)?u_weights" + LANE, {"bram", "uram"}),
             (r"(.*\.)?u_lut\.(even|odd)_rom$", {"bram"}),
             (r"u_fifo\.u_ram" + LANE, {"bram", "lutram", "ff"}),
             (r"(desc_mem|ring_(addr|len|last)|gnt_mem)$", {"lutram", "ff"}),
             (r"u_(order|rbuf|bbuf)\.u_ram" + LANE, {"lutram", "ff"})] + ROM_MEMS + \
            [(r".*", {"bram", "uram", "lutram", "ff"})]  # the engine's others (as the engine block)
BLOCKS["farnn_core"] = {
    "top": "farnn_core", "params": dict(P4), "quick": False, "slow": 3, "eq_opt_in": True,
    "mems": CORE_MEMS, "dsp": None, "eq": FARNN_CORE_EQ,
    "submodules": ["engine", "core_regs", "core_dispatch", "core_run", "dma_reader", "dma_writer",
                   "axi_rd_mux", "axi_wr_mux", "store_axi"],
    # several instances of one module: named by a parameter
    "instances": {"dma_reader": ("Id", {p["Id"]: i for i, p, _ in SHELL_READERS.values()}),
                  "dma_writer": ("Id", {p["Id"]: i for i, p in SHELL_WRITERS.items()})},
    "doc": "the FPGA shell with the engine at P4 (its equivalence check with --large): shell = farnn_core - engine"}


# The same core mapped flat, as a vendor flow synthesizes it by default: its
# depth is the core's in the clock estimate. With the parts kept as
# hierarchy ABC maps each part on its own and lets every output of a part
# grow to that part's own budget, so a path crossing two parts can add both
# (docs/decisions.md, "The core's depth, measured flat").
# Its memories carry their instance paths, so each part's are checked by
# that part block's own rules under its instance (the readers other than
# u_rd_wgt with the shallow-FIFO rules; first match wins).
def _under(inst, rules):
    return [(inst + r"\." + rx, kinds) for rx, kinds in rules]


CORE_FLAT_MEMS = (_under("u_engine", ENGINE_MEMS[:2]) + _under("u_rd_wgt", RD_DEEP_MEMS) +
                  _under(r"u_rd_\w+", RD_MEMS) + _under(r"g_wr\[\d+\]\.u_wr", WR_MEMS) +
                  _under("u_store", STORE_MEMS) + _under("u_wr_mux", WR_MUX_MEMS) +
                  _under("u_dispatch", ROM_MEMS) +
                  [(r"u_engine\.", {"bram", "uram", "lutram", "ff"})])  # the engine's others
BLOCKS["farnn_core_flat"] = {
    "top": "farnn_core", "params": dict(P4), "quick": False, "slow": 3, "eq_opt_in": True,
    "mems": CORE_FLAT_MEMS, "dsp": None, "eq": FARNN_CORE_EQ,
    "doc": "farnn_core mapped flat (no kept parts): the core's depth in the clock estimate"}
