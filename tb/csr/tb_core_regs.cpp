// tb_core_regs: the generated register block core_regs (rtl/core/core_regs.sv)
// against the register table of the generated header farnn/core_regs.hpp,
// which is first compared with the source rtl/core/data/regmap.json itself.
// Expectations come only from that table and a model of the access types, so a
// wrong offset, reset value, access behaviour or pulse in the RTL fails here.
//
// Suites (--suite NAME runs one; all run by default, in this order):
//   reset    outputs and reads after reset, and again after writes and a reset
//   rw       random writes with byte strobes to every word: read back, _o, we pulse
//   ro       hardware values read as is; writes have no effect; 64-bit shadow
//   const    constant values; writes have no effect
//   w1p      a pulse for each 1 written (with its strobe); reads 0
//   w1c      hardware set, clear by writing 1, strobes, a set wins over a clear
//   unknown  every unmapped word answers SLVERR with no effect; bits [1:0] ignored
//   random   queued reads and writes interleaved with random idle cycles and
//            backpressure on every channel; a blocked B does not stop reads and
//            a blocked R does not stop writes
// Throughout, a monitor checks every cycle that an rw output changes only with
// its register's we pulse and holds, at the pulse, the value the model expects
// after that write; that each w1p pulse matches a written 1; and the AXI-Lite
// master checks the slave's handshakes.
#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "Vcore_regs.h"
#include "axil_master.hpp"
#include "farnn/core_regs.hpp"
#include "options.hpp"
#include "testbench.hpp"

namespace {

namespace cr = farnn::core_regs;
using farnn::tb::AxilMaster;
using farnn::tb::Component;
using farnn::tb::Options;
using farnn::tb::Rng;
using farnn::tb::Testbench;
using Access = cr::Access;

constexpr uint64_t mask(unsigned w) {
  return w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
}

std::string hex(uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// ---- Bits [lsb +: w] (w <= 64) of a Verilated port: CData..QData, or VlWide.
template <class T>
uint64_t get_bits(const T& s, unsigned lsb, unsigned w) {
  return (static_cast<uint64_t>(s) >> lsb) & mask(w);
}
template <std::size_t N>
uint64_t get_bits(const VlWide<N>& s, unsigned lsb, unsigned w) {
  uint64_t v = 0;
  for (unsigned b = 0; b < w; ++b)
    v |= uint64_t{(s.at((lsb + b) / 32) >> ((lsb + b) % 32)) & 1u} << b;
  return v;
}
template <class T>
void set_bits(T& s, unsigned lsb, unsigned w, uint64_t v) {
  const uint64_t m = mask(w) << lsb;
  s = static_cast<T>((static_cast<uint64_t>(s) & ~m) | ((v << lsb) & m));
}
template <std::size_t N>
void set_bits(VlWide<N>& s, unsigned lsb, unsigned w, uint64_t v) {
  for (unsigned b = 0; b < w; ++b) {
    const uint32_t bit = 1u << ((lsb + b) % 32);
    auto& word = s.at((lsb + b) / 32);
    word = ((v >> b) & 1u) ? (word | bit) : (word & ~bit);
  }
}

// A port of core_regs, read or written bit range by bit range.
struct Port {
  std::function<uint64_t(unsigned lsb, unsigned w)> get;
  std::function<void(unsigned lsb, unsigned w, uint64_t v)> set;
};
template <class T>
Port port(T& s) {
  return {[&s](unsigned lsb, unsigned w) { return get_bits(s, lsb, w); },
          [&s](unsigned lsb, unsigned w, uint64_t v) { set_bits(s, lsb, w, v); }};
}

// Every register port of core_regs by name. The test derives each field's port
// names from the table with the documented naming rule and fails naming any
// port missing here, so a register added to the source must be added here too.
std::map<std::string, Port> bind_ports(Vcore_regs& d) {
#define FARNN_PORT(name) \
  { #name, port(d.name) }
  return {FARNN_PORT(build_id_i),
          FARNN_PORT(clock_khz_i),
          FARNN_PORT(caps0_num_pe_i),
          FARNN_PORT(caps0_num_banks_i),
          FARNN_PORT(caps0_weight_lanes_i),
          FARNN_PORT(caps1_max_hidden_i),
          FARNN_PORT(caps1_max_batch_i),
          FARNN_PORT(caps2_weight_depth_i),
          FARNN_PORT(caps3_cells_i),
          FARNN_PORT(caps3_addr_width_i),
          FARNN_PORT(caps3_num_windows_i),
          FARNN_PORT(caps3_max_outstanding_i),
          FARNN_PORT(caps4_store_addr_width_i),
          FARNN_PORT(caps5_num_chains_i),
          FARNN_PORT(caps5_red_adder_i),
          FARNN_PORT(scratch_o),
          FARNN_PORT(scratch_we_o),
          FARNN_PORT(ctrl_soft_reset_o),
          FARNN_PORT(ctrl_abort_o),
          FARNN_PORT(ctrl_irq_done_en_o),
          FARNN_PORT(ctrl_irq_error_en_o),
          FARNN_PORT(ctrl_enable_o),
          FARNN_PORT(ctrl_we_o),
          FARNN_PORT(status_busy_i),
          FARNN_PORT(status_halted_i),
          FARNN_PORT(status_resetting_i),
          FARNN_PORT(status_error_i),
          FARNN_PORT(status_unit_i),
          FARNN_PORT(status_op_i),
          FARNN_PORT(irq_status_done_set_i),
          FARNN_PORT(irq_status_done_o),
          FARNN_PORT(irq_status_error_set_i),
          FARNN_PORT(irq_status_error_o),
          FARNN_PORT(watchdog_o),
          FARNN_PORT(watchdog_we_o),
          FARNN_PORT(ring_base_o),
          FARNN_PORT(ring_base_we_o),
          FARNN_PORT(ring_size_o),
          FARNN_PORT(ring_size_we_o),
          FARNN_PORT(ring_tail_o),
          FARNN_PORT(ring_tail_we_o),
          FARNN_PORT(ring_head_i),
          FARNN_PORT(ring_done_i),
          FARNN_PORT(ring_wb_addr_o),
          FARNN_PORT(ring_wb_addr_we_o),
          FARNN_PORT(fault_addr_i),
          FARNN_PORT(fault_info_kind_i),
          FARNN_PORT(fault_info_stream_i),
          FARNN_PORT(fault_desc_i),
          FARNN_PORT(step_doorbell_o),
          FARNN_PORT(step_doorbell_we_o),
          FARNN_PORT(win_base_o),
          FARNN_PORT(win_base_we_o),
          FARNN_PORT(win_size_o),
          FARNN_PORT(win_size_we_o),
          FARNN_PORT(win_ctrl_read_o),
          FARNN_PORT(win_ctrl_write_o),
          FARNN_PORT(win_ctrl_we_o),
          FARNN_PORT(cnt_cycles_i),
          FARNN_PORT(cnt_busy_cycles_i),
          FARNN_PORT(cnt_macs_i),
          FARNN_PORT(cnt_stall_input_i),
          FARNN_PORT(cnt_stall_output_i),
          FARNN_PORT(cnt_stall_dep_i),
          FARNN_PORT(cnt_stall_store_i),
          FARNN_PORT(cnt_stall_gate_i),
          FARNN_PORT(cnt_host_rd_bytes_i),
          FARNN_PORT(cnt_host_wr_bytes_i),
          FARNN_PORT(cnt_card_rd_bytes_i),
          FARNN_PORT(cnt_card_wr_bytes_i),
          FARNN_PORT(cnt_desc_done_i),
          FARNN_PORT(cnt_nonfinite_i)};
#undef FARNN_PORT
}

// ---- The header's tables against the source JSON.

uint64_t json_int(const nlohmann::json& j) {
  if (j.is_number_integer()) return j.get<uint64_t>();
  std::string s = j.get<std::string>();  // "0x..." with optional '_'
  std::erase(s, '_');
  return std::stoull(s.substr(2), nullptr, 16);
}

void check_tables_against_json(const std::function<void(const std::string&)>& fail) {
  std::ifstream in(FARNN_REGMAP_JSON);
  if (!in) fail(std::string("cannot read ") + FARNN_REGMAP_JSON);
  const auto j = nlohmann::json::parse(in);
  std::vector<const nlohmann::json*> regs;
  for (const auto& g : j.at("groups")) {
    for (const auto& r : g.at("registers")) regs.push_back(&r);
  }
  if (regs.size() != std::size(cr::kRegisters)) {
    fail("header has " + std::to_string(std::size(cr::kRegisters)) + " registers, the JSON " +
         std::to_string(regs.size()));
  }
  for (size_t i = 0; i < regs.size(); ++i) {
    const auto& r = *regs[i];
    const auto& h = cr::kRegisters[i];
    const std::string name = r.at("name");
    const bool same = name == h.name && json_int(r.at("offset")) == h.offset &&
                      json_int(r.value("width", nlohmann::json(32))) == h.width &&
                      json_int(r.value("count", nlohmann::json(1))) == h.count &&
                      json_int(r.value("stride", nlohmann::json(0))) == h.stride &&
                      r.at("fields").size() == h.fields.size();
    if (!same) fail("register " + name + ": the header's entry differs from the JSON");
    for (size_t k = 0; k < h.fields.size(); ++k) {
      const auto& f = r.at("fields")[k];
      const auto& hf = h.fields[k];
      const std::string acc = f.at("access");
      const uint64_t reset = f.contains("reset") ? json_int(f.at("reset")) : 0;
      if (f.at("name") != hf.name || json_int(f.at("lsb")) != hf.lsb ||
          json_int(f.at("width")) != hf.width || acc != cr::to_string(hf.access) ||
          reset != hf.reset) {
        fail("field " + name + "." + std::string(f.at("name")) +
             ": the header's entry differs from the JSON");
      }
    }
  }
}

// ---- The model of the register block, one Slot per field of each element.

struct Slot {
  const cr::RegisterInfo* reg = nullptr;
  const cr::FieldInfo* f = nullptr;
  unsigned elem = 0;
  std::string name;             // "WIN_CTRL[3].read"
  Port out, in;                 // rw, w1p, w1c: _o; ro: _i; w1c: _set_i
  uint64_t value = 0;           // rw, w1c: after the writes issued so far; ro: the driven input
  uint64_t seen = 0;            // monitor: the output in the previous cycle
  std::deque<uint64_t> pulses;  // w1p: non-zero pulses expected, in order
  unsigned width() const { return f->width; }
  unsigned port_lsb() const { return elem * f->width; }  // element i of a flat port
  uint64_t output() const { return out.get(port_lsb(), width()); }
};

struct Elem {
  const cr::RegisterInfo* reg = nullptr;
  unsigned index = 0;
  uint32_t offset = 0;
  std::string name;  // "WIN_BASE[2]"
  std::vector<Slot*> slots;
  bool has_we = false;
  Port we;
  std::deque<std::vector<uint64_t>> we_expect;  // rw slot values after each write not yet pulsed
  uint32_t shadow = 0;  // 64-bit ro: the high half at the last low-word read
  unsigned words() const { return reg->width / 32; }
};

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class CsrEnv;

// Checks the register outputs every cycle (see the file comment).
class Monitor : public Component {
 public:
  explicit Monitor(CsrEnv& env) : env_(env) {}
  void sample() override;

 private:
  CsrEnv& env_;
};

class CsrEnv {
 public:
  explicit CsrEnv(const Options& opt)
      : tb(opt, "tb_core_regs"),
        rng(opt.seed()),
        axil(rng, farnn::tb::axil_slave_ports(tb.dut()),
             [this](const std::string& m) { tb.fail(m); }),
        monitor(*this) {
    check_tables_against_json([this](const std::string& m) { tb.fail("table: " + m); });
    build_model();
    axil.set_stress(rng.uniform(0.1, 0.5));  // idle cycles and backpressure in every suite
    tb.add(axil);
    tb.add(monitor);
    axil.on_done([this](const AxilMaster::Result& r) { check_queued(r); });
    for (auto& s : slots) {
      if (s.f->access == Access::kRo) drive_hw(s, rng.u64());
      if (s.f->access == Access::kW1c) s.in.set(s.port_lsb(), s.width(), 0);
    }
    reset();
  }

  Testbench<Vcore_regs> tb;
  Rng rng;
  AxilMaster axil;
  Monitor monitor;
  std::deque<Slot> slots;
  std::vector<Elem> elems;

  void fail(const std::string& m) { tb.fail(m); }

  void reset() {
    tb.reset();
    for (auto& s : slots) {
      if (s.f->access == Access::kRw || s.f->access == Access::kW1c) s.value = s.f->reset;
    }
    for (auto& e : elems) e.shadow = 0;
  }

  // The element and half a word address names, or nullptr.
  Elem* at(uint32_t addr, unsigned* half) {
    auto it = by_addr_.find(addr & ~3u);
    if (it == by_addr_.end()) return nullptr;
    *half = it->second.second;
    return it->second.first;
  }
  uint32_t word_addr(const Elem& e, unsigned half) const { return e.offset + 4 * half; }

  void drive_hw(Slot& s, uint64_t v) {
    s.value = v & mask(s.width());
    s.in.set(s.port_lsb(), s.width(), s.value);
  }

  // The value a read of `addr` returns, as the DUT handles reads in order
  // (updates the 64-bit shadow on a low-word read).
  uint32_t expect_read(uint32_t addr) {
    unsigned half = 0;
    Elem* e = at(addr, &half);
    if (!e) return 0;
    if (e->reg->width == 64) {
      const Slot& s = *e->slots[0];
      if (s.f->access == Access::kRw) return static_cast<uint32_t>(s.value >> (32 * half));
      if (half == 0) {
        e->shadow = static_cast<uint32_t>(s.value >> 32);
        return static_cast<uint32_t>(s.value);
      }
      return e->shadow;
    }
    uint32_t v = 0;
    for (const Slot* s : e->slots) {
      uint64_t fv = 0;
      switch (s->f->access) {
        case Access::kRw:
        case Access::kRo:
        case Access::kW1c:
          fv = s->value;
          break;
        case Access::kConst:
          fv = s->f->reset;
          break;
        case Access::kW1p:
          fv = 0;
          break;
      }
      v |= static_cast<uint32_t>(fv << s->f->lsb);
    }
    return v;
  }

  // Applies a write to the model and queues the outputs it must produce.
  void model_write(uint32_t addr, uint32_t data, uint8_t strb) {
    unsigned half = 0;
    Elem* e = at(addr, &half);
    if (!e) return;
    uint32_t bm = 0;
    for (int b = 0; b < 4; ++b) bm |= ((strb >> b) & 1u) ? 0xffu << (8 * b) : 0u;
    for (Slot* s : e->slots) {
      if (e->reg->width == 64) {
        if (s->f->access == Access::kRw) {
          const uint64_t m = uint64_t{bm} << (32 * half);
          s->value = (s->value & ~m) | ((uint64_t{data} << (32 * half)) & m);
        }
        continue;
      }
      const uint64_t fm = mask(s->width());
      const uint64_t d = (data >> s->f->lsb) & fm, sm = (bm >> s->f->lsb) & fm;
      if (s->f->access == Access::kRw) s->value = (s->value & ~sm) | (d & sm);
      if (s->f->access == Access::kW1p && (d & sm) != 0) s->pulses.push_back(d & sm);
      if (s->f->access == Access::kW1c) s->value &= ~(d & sm);
    }
    if (e->has_we) e->we_expect.push_back(rw_values(*e));
  }

  static std::vector<uint64_t> rw_values(const Elem& e) {
    std::vector<uint64_t> v;
    for (const Slot* s : e.slots) {
      if (s->f->access == Access::kRw) v.push_back(s->value);
    }
    return v;
  }

  // ---- Blocking accesses checked against the model.
  void write(uint32_t addr, uint32_t data, uint8_t strb = 0xf) {
    unsigned half = 0;
    const bool mapped = at(addr, &half) != nullptr;
    model_write(addr, data, strb);
    const auto r = axil.write_resp(tb, addr, data, strb);
    const uint8_t want = mapped ? AxilMaster::kOkay : AxilMaster::kSlvErr;
    if (r.resp != want) {
      fail("write " + hex(data) + " (strb " + hex(strb) + ") to " + where(addr) + " answered " +
           AxilMaster::resp_name(r.resp) + ", expected " + AxilMaster::resp_name(want));
    }
    expect_outputs_settled();
  }
  void check_read(uint32_t addr, const std::string& why) {
    unsigned half = 0;
    const bool mapped = at(addr, &half) != nullptr;
    const uint32_t want = expect_read(addr);
    const auto r = axil.read_resp(tb, addr);
    const uint8_t want_resp = mapped ? AxilMaster::kOkay : AxilMaster::kSlvErr;
    if (r.resp != want_resp || r.data != want) {
      fail(why + ": read of " + where(addr) + " returned " + hex(r.data) + " " +
           AxilMaster::resp_name(r.resp) + ", expected " + hex(want) + " " +
           AxilMaster::resp_name(want_resp));
    }
  }
  void check_all_reads(const std::string& why) {
    for (auto& e : elems) {
      for (unsigned h = 0; h < e.words(); ++h) check_read(word_addr(e, h), why);
    }
  }
  // By the B response of a write its pulses have happened and its value is out.
  void expect_outputs_settled() {
    for (auto& e : elems) {
      if (!e.we_expect.empty()) fail(e.name + ": no we pulse for a write by its B response");
    }
    for (auto& s : slots) {
      if (!s.pulses.empty()) fail(s.name + ": no pulse for a written 1 by the B response");
      const bool has_out = s.f->access == Access::kRw || s.f->access == Access::kW1c;
      if (has_out && s.output() != s.value) {
        fail(s.name + ": output " + hex(s.output()) + ", expected " + hex(s.value));
      }
    }
  }

  std::string where(uint32_t addr) {
    unsigned half = 0;
    const Elem* e = at(addr, &half);
    if (!e) return hex(addr) + " (unmapped)";
    return hex(addr) + " (" + e->name + (e->reg->width == 64 ? (half ? " high" : " low") : "") +
           ")";
  }

  // ---- Queued accesses (the random suite): expectations by transaction id.
  struct Expected {
    uint32_t addr, data;
    uint8_t resp;
    bool write;
  };
  std::map<uint64_t, Expected> expected;

  void queue_write(uint32_t addr, uint32_t data, uint8_t strb) {
    unsigned half = 0;
    const bool mapped = at(addr, &half) != nullptr;
    model_write(addr, data, strb);
    expected[axil.queue_write(addr, data, strb)] = {
        addr, data, mapped ? AxilMaster::kOkay : AxilMaster::kSlvErr, true};
  }
  void queue_read(uint32_t addr) {
    unsigned half = 0;
    const bool mapped = at(addr, &half) != nullptr;
    const uint32_t want = expect_read(addr);
    expected[axil.queue_read(addr)] = {addr, want, mapped ? AxilMaster::kOkay : AxilMaster::kSlvErr,
                                       false};
  }
  void check_queued(const AxilMaster::Result& r) {
    auto it = expected.find(r.id);
    if (it == expected.end()) fail("response to an unknown transaction " + std::to_string(r.id));
    const Expected e = it->second;
    expected.erase(it);
    if (r.resp != e.resp || (!e.write && r.data != e.data)) {
      fail(std::string(e.write ? "queued write to " : "queued read of ") + where(e.addr) +
           " returned " + hex(r.data) + " " + AxilMaster::resp_name(r.resp) + ", expected " +
           (e.write ? "" : hex(e.data) + " ") + AxilMaster::resp_name(e.resp));
    }
  }

 private:
  void build_model() {
    auto ports = bind_ports(tb.dut());
    std::set<std::string> used;
    auto need = [&](const std::string& n) -> Port {
      auto it = ports.find(n);
      if (it == ports.end()) fail("no port " + n + " bound in tb_core_regs.cpp's bind_ports()");
      used.insert(n);
      return it->second;
    };
    for (const auto& r : cr::kRegisters) {
      const bool value_only = r.fields.size() == 1 && std::string(r.fields[0].name) == "value";
      bool has_rw = false;
      for (const auto& f : r.fields) has_rw = has_rw || f.access == Access::kRw;
      for (unsigned i = 0; i < r.count; ++i) {
        Elem e;
        e.reg = &r;
        e.index = i;
        e.offset = r.offset_of(i);
        e.name = std::string(r.name) + (r.count > 1 ? "[" + std::to_string(i) + "]" : "");
        e.has_we = has_rw;
        if (has_rw) e.we = need(lower(r.name) + "_we_o");
        for (const auto& f : r.fields) {
          Slot s;
          s.reg = &r;
          s.f = &f;
          s.elem = i;
          s.name = e.name + "." + f.name;
          const std::string stem = value_only ? lower(r.name) : lower(r.name) + "_" + f.name;
          switch (f.access) {
            case Access::kRw:
            case Access::kW1p:
              s.out = need(stem + "_o");
              break;
            case Access::kRo:
              s.in = need(stem + "_i");
              break;
            case Access::kW1c:
              s.out = need(stem + "_o");
              s.in = need(stem + "_set_i");
              break;
            case Access::kConst:
              break;
          }
          slots.push_back(std::move(s));
          e.slots.push_back(&slots.back());
        }
        elems.push_back(std::move(e));
      }
    }
    for (const auto& [n, p] : ports) {
      if (!used.count(n)) fail("port " + n + " matches no field of the register table");
    }
    for (auto& e : elems) {
      for (unsigned h = 0; h < e.words(); ++h) {
        if (!by_addr_.emplace(word_addr(e, h), std::make_pair(&e, h)).second) {
          fail("table: " + e.name + " overlaps another register at " + hex(word_addr(e, h)));
        }
      }
    }
  }

  std::map<uint32_t, std::pair<Elem*, unsigned>> by_addr_;
};

void Monitor::sample() {
  if (env_.tb.dut().rst_i) {  // outputs take their reset values; expectations are void
    for (auto& s : env_.slots) {
      if (s.f->access == Access::kRw) s.seen = s.output();
      s.pulses.clear();
    }
    for (auto& e : env_.elems) e.we_expect.clear();
    return;
  }
  for (auto& e : env_.elems) {
    if (!e.has_we) continue;
    const bool we = e.we.get(e.index, 1) != 0;
    std::vector<uint64_t> want;
    if (we) {
      if (e.we_expect.empty()) env_.fail(e.name + ": we pulse without a write");
      want = e.we_expect.front();
      e.we_expect.pop_front();
    }
    size_t k = 0;
    for (Slot* s : e.slots) {
      if (s->f->access != Access::kRw) continue;
      const uint64_t v = s->output();
      if (we && v != want[k]) {
        env_.fail(s->name + ": output " + hex(v) + " with the we pulse, expected " + hex(want[k]));
      }
      if (!we && v != s->seen) {
        env_.fail(s->name + ": output changed " + hex(s->seen) + " -> " + hex(v) +
                  " without a we pulse");
      }
      s->seen = v;
      ++k;
    }
  }
  for (auto& s : env_.slots) {
    if (s.f->access != Access::kW1p) continue;
    const uint64_t v = s.output();
    if (v == 0) continue;
    if (s.pulses.empty()) env_.fail(s.name + ": pulse " + hex(v) + " without a write of 1");
    if (s.pulses.front() != v)
      env_.fail(s.name + ": pulse " + hex(v) + ", expected " + hex(s.pulses.front()));
    s.pulses.pop_front();
  }
}

uint8_t random_strb(Rng& rng) {
  switch (rng.range(0, 3)) {
    case 0:
      return 0xf;
    case 1:
      return 0x0;
    default:
      return static_cast<uint8_t>(rng.range(0, 15));
  }
}

// ---- Suites

void suite_reset(CsrEnv& env) {
  auto check = [&](const std::string& when) {
    for (auto& s : env.slots) {
      const bool has_out = s.f->access == Access::kRw || s.f->access == Access::kW1c;
      if (has_out && s.output() != s.f->reset) {
        env.fail(when + ": " + s.name + " output " + hex(s.output()) + ", reset value " +
                 hex(s.f->reset));
      }
    }
    // The high word of a 64-bit ro register before any low-word read: the shadow's reset value 0.
    for (auto& e : env.elems) {
      if (e.reg->width == 64 && e.slots[0]->f->access == Access::kRo)
        env.check_read(e.offset + 4, when);
    }
    env.check_all_reads(when);
  };
  check("after reset");
  for (auto& e : env.elems) {
    for (unsigned h = 0; h < e.words(); ++h) env.write(env.word_addr(e, h), env.rng.u32());
  }
  env.reset();
  check("after writes and a reset");
}

void suite_rw(CsrEnv& env) {
  for (auto& e : env.elems) {
    if (!e.has_we) continue;
    for (int n = 0; n < 6; ++n) {
      for (unsigned h = 0; h < e.words(); ++h) {
        env.write(env.word_addr(e, h), env.rng.u32(), random_strb(env.rng));
        for (unsigned k = 0; k < e.words(); ++k)
          env.check_read(env.word_addr(e, k), "rw " + e.name);
      }
    }
  }
}

void suite_ro(CsrEnv& env) {
  for (auto& e : env.elems) {
    bool any_ro = false;
    for (Slot* s : e.slots) any_ro = any_ro || s->f->access == Access::kRo;
    if (!any_ro) continue;
    for (int n = 0; n < 3; ++n) {
      for (Slot* s : e.slots) {
        if (s->f->access == Access::kRo) env.drive_hw(*s, env.rng.u64());
      }
      for (unsigned h = 0; h < e.words(); ++h) env.check_read(env.word_addr(e, h), "ro " + e.name);
      for (unsigned h = 0; h < e.words(); ++h) env.write(env.word_addr(e, h), env.rng.u32());
      for (unsigned h = 0; h < e.words(); ++h)
        env.check_read(env.word_addr(e, h), "ro " + e.name + " after a write");
    }
    if (e.reg->width != 64) continue;
    // The low-word read latches the high half: a later change of the input does
    // not reach the high word until the next low-word read.
    Slot& s = *e.slots[0];
    const uint64_t first = env.rng.u64();
    env.drive_hw(s, first);
    env.check_read(e.offset, "shadow " + e.name);
    env.drive_hw(s, env.rng.u64());
    for (int n = 0; n < 2; ++n) {
      const auto r = env.axil.read_resp(env.tb, e.offset + 4);
      if (r.data != static_cast<uint32_t>(first >> 32)) {
        env.fail(e.name + ": high word " + hex(r.data) +
                 " after the input changed, expected the latched " + hex(first >> 32));
      }
    }
    env.check_read(e.offset, "shadow " + e.name);
    env.check_read(e.offset + 4, "shadow " + e.name);
  }
}

void suite_const(CsrEnv& env) {
  for (auto& e : env.elems) {
    bool all_const = true;
    for (Slot* s : e.slots) all_const = all_const && s->f->access == Access::kConst;
    if (!all_const) continue;
    env.check_read(e.offset, "const " + e.name);
    env.write(e.offset, ~env.expect_read(e.offset));
    env.check_read(e.offset, "const " + e.name + " after a write");
  }
}

void suite_w1p(CsrEnv& env) {
  for (auto& s : env.slots) {
    if (s.f->access != Access::kW1p) continue;
    const uint32_t addr = s.reg->offset_of(s.elem);
    const uint32_t one = static_cast<uint32_t>(mask(s.width()) << s.f->lsb);
    const uint8_t lane = static_cast<uint8_t>(1u << (s.f->lsb / 8));
    env.write(addr, one);                                     // a pulse
    env.write(addr, 0);                                       // none
    env.write(addr, one, static_cast<uint8_t>(0xf & ~lane));  // strobe off: none
    env.write(addr, one | env.rng.u32(), lane);               // pulse, with other fields random
    env.check_read(addr, "w1p " + s.name + " reads 0");
    // Reads back to back with a write of 1 (rw fields rewritten unchanged):
    // without stress one of them is sampled in the cycle of the pulse.
    const AxilMaster::Timing timing = env.axil.timing();
    for (int n = 0; n < 4; ++n) {
      env.axil.set_stress(n == 0 ? 0.0 : 0.3);
      env.queue_write(addr, env.expect_read(addr) | one, 0xf);
      for (int k = 0; k < 6; ++k) env.queue_read(addr);
      env.axil.drain(env.tb);
    }
    env.axil.set_timing(timing);
  }
}

void suite_w1c(CsrEnv& env) {
  for (auto& s : env.slots) {
    if (s.f->access != Access::kW1c) continue;
    const uint32_t addr = s.reg->offset_of(s.elem);
    const uint64_t all = mask(s.width());
    const uint32_t one = static_cast<uint32_t>(all << s.f->lsb);
    const uint8_t lane = static_cast<uint8_t>(1u << (s.f->lsb / 8));
    auto set_pulse = [&] {
      s.in.set(s.port_lsb(), s.width(), all);
      env.tb.tick();
      s.in.set(s.port_lsb(), s.width(), 0);
      s.value = all;
      env.tb.tick();
      if (s.output() != all) env.fail(s.name + ": not set by _set_i");
    };
    set_pulse();
    env.check_read(addr, "w1c " + s.name + " set");
    env.write(addr, 0);
    env.write(addr, one, static_cast<uint8_t>(0xf & ~lane));
    env.check_read(addr, "w1c " + s.name + " after writes of 0 and an unstrobed 1");
    env.write(addr, one);
    env.check_read(addr, "w1c " + s.name + " cleared");
    // A set in the same cycle as the clear wins: with _set_i held through a
    // write of 1 the output never drops.
    set_pulse();
    s.in.set(s.port_lsb(), s.width(), all);
    env.expected[env.axil.queue_write(addr, one)] = {addr, one, AxilMaster::kOkay, true};
    for (int c = 0; !env.expected.empty(); ++c) {
      if (c == 1000) env.fail(s.name + ": no B response to the clear");
      env.tb.tick();
      if (s.output() != all) env.fail(s.name + ": a clear won over a set in the same cycle");
    }
    s.in.set(s.port_lsb(), s.width(), 0);
    env.check_read(addr, "w1c " + s.name + " set wins");
    env.write(addr, one);
    env.check_read(addr, "w1c " + s.name + " cleared after the set");
  }
}

void suite_unknown(CsrEnv& env) {
  unsigned half = 0;
  for (uint32_t a = 0; a < cr::kBlockBytes; a += 4) {
    if (env.at(a, &half)) continue;
    env.check_read(a, "unmapped");
    env.write(a, env.rng.u32(), random_strb(env.rng));
  }
  // Address bits [1:0] are ignored.
  for (auto& e : env.elems) {
    env.check_read(e.offset + static_cast<uint32_t>(env.rng.range(1, 3)),
                   "byte address in " + e.name);
  }
  env.check_all_reads("after writes to unmapped addresses");
}

void suite_random(CsrEnv& env) {
  Rng& rng = env.rng;
  std::vector<uint32_t> unmapped;
  unsigned half = 0;
  for (uint32_t a = 0; a < cr::kBlockBytes; a += 4) {
    if (!env.at(a, &half)) unmapped.push_back(a);
  }
  for (int round = 0; round < 8; ++round) {
    AxilMaster::Timing t;
    t.aw_idle = rng.uniform(0, 0.8);
    t.w_idle = rng.uniform(0, 0.8);
    t.ar_idle = rng.uniform(0, 0.8);
    t.b_stall = rng.uniform(0, 0.8);
    t.r_stall = rng.uniform(0, 0.8);
    env.axil.set_timing(t);
    // Registers written this round are not read in it, so every read has one
    // right answer whatever the interleaving; the others are read, not written.
    std::vector<Elem*> written, read;
    for (auto& e : env.elems) {
      bool writable = false;
      for (Slot* s : e.slots) {
        writable = writable || (s->f->access != Access::kRo && s->f->access != Access::kConst);
        if (s->f->access == Access::kRo) env.drive_hw(*s, rng.u64());
      }
      (writable && rng.chance(0.5) ? written : read).push_back(&e);
    }
    if (written.empty()) continue;
    for (int n = 0; n < 60; ++n) {
      const int batch = static_cast<int>(rng.range(1, 8));
      for (int k = 0; k < batch; ++k) {
        const auto pick = [&](std::vector<Elem*>& v) {
          Elem& e = *v[rng.range(0, static_cast<long long>(v.size()) - 1)];
          return env.word_addr(e, static_cast<unsigned>(rng.range(0, e.words() - 1)));
        };
        const uint32_t stray = unmapped[rng.range(0, static_cast<long long>(unmapped.size()) - 1)];
        switch (rng.range(0, 5)) {
          case 0:
          case 1:
            env.queue_write(pick(written), rng.u32(), random_strb(rng));
            break;
          case 2:
            env.queue_read(pick(read));
            break;
          case 3:
            env.queue_read(rng.chance(0.5) ? stray : pick(read));
            break;
          case 4: {  // a read-set register written: only ro and const ones have no effect
            Elem* e = read[rng.range(0, static_cast<long long>(read.size()) - 1)];
            bool inert = true;
            for (Slot* s : e->slots)
              inert = inert && (s->f->access == Access::kRo || s->f->access == Access::kConst);
            env.queue_write(inert ? e->offset : stray, rng.u32(), 0xf);
            break;
          }
          default:
            env.queue_write(stray, rng.u32(), random_strb(rng));
            break;
        }
      }
      for (long long c = rng.range(0, 12); c > 0; --c) env.tb.tick();
    }
    env.axil.drain(env.tb);
    if (!env.expected.empty()) env.fail("random: responses missing after the drain");
    env.axil.set_stress(0);
    env.expect_outputs_settled();
    env.check_all_reads("after random round " + std::to_string(round));
  }

  // A B response that is never taken holds back writes only, and an R response
  // that is never taken holds back reads only.
  auto blocked = [&](bool block_b) {
    AxilMaster::Timing t;
    (block_b ? t.b_stall : t.r_stall) = 1.0;
    env.axil.set_timing(t);
    const Elem* rw = nullptr;  // any 32-bit register with a we pulse
    for (const auto& e : env.elems) {
      if (e.has_we && e.reg->width == 32) rw = &e;
    }
    env.queue_write(rw->offset, rng.u32(), 0xf);
    env.queue_read(env.elems[0].offset);
    for (int k = 0; k < 4; ++k) {
      if (block_b) {
        env.queue_read(env.elems[0].offset);
      } else {
        env.queue_write(unmapped[0], 0, 0xf);
      }
    }
    env.tb.run_until([&] { return env.expected.size() == 1; }, 1000,
                     block_b ? "reads while a B response is not taken"
                             : "writes while an R response is not taken");
    for (int c = 0; c < 50; ++c) env.tb.tick();
    if (env.expected.size() != 1) env.fail("a response was taken while its channel was blocked");
    env.axil.set_stress(0);
    env.axil.drain(env.tb);
  };
  blocked(true);
  blocked(false);
  const auto& st = env.axil.stats();
  if (st.aw_before_w == 0 || st.w_before_aw == 0 || st.aw_with_w == 0 || st.b_stalled == 0 ||
      st.r_stalled == 0) {
    env.fail("random: an AW/W order or a response stall never happened (AW first " +
             std::to_string(st.aw_before_w) + ", W first " + std::to_string(st.w_before_aw) +
             ", together " + std::to_string(st.aw_with_w) + ", B stalls " +
             std::to_string(st.b_stalled) + ", R stalls " + std::to_string(st.r_stalled) + ")");
  }
  std::cout << "tb_core_regs: AXI-Lite so far: " << st.writes << " writes, " << st.reads
            << " reads; AW first " << st.aw_before_w << ", W first " << st.w_before_aw
            << ", together " << st.aw_with_w << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  return farnn::tb::run_main(argc, argv, "tb_core_regs", [](const Options& opt) {
    opt.allow({"suite"});
    const std::vector<std::pair<std::string, void (*)(CsrEnv&)>> suites = {
        {"reset", suite_reset},     {"rw", suite_rw},        {"ro", suite_ro},
        {"const", suite_const},     {"w1p", suite_w1p},      {"w1c", suite_w1c},
        {"unknown", suite_unknown}, {"random", suite_random}};
    const std::string only = opt.get_string("suite", "all");
    bool known = only == "all";
    for (const auto& [name, fn] : suites) known = known || only == name;
    if (!known) throw std::invalid_argument("unknown --suite " + only);
    CsrEnv env(opt);
    for (const auto& [name, fn] : suites) {
      if (only != "all" && only != name) continue;
      fn(env);
      env.expect_outputs_settled();
      std::cout << "tb_core_regs: " << name << " ok (cycle " << env.tb.cycle() << ")" << std::endl;
    }
  });
}
