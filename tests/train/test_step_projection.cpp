// The projected step with the schedule's overlap (farnn/step_projection.hpp):
// exact times for hand-placed schedules, and the phasing of a trace.
#include <gtest/gtest.h>

#include "farnn/step_projection.hpp"

namespace {

using namespace farnn::train;

TEST(StepProjection, DeviceAloneIsTheSumOfItsCommands) {
  HostPhases h;
  h.parts = {0, 0};
  h.part_steps = {2, 2};
  const StepProjection p = project_step(h, {5, 8, 3});
  EXPECT_EQ(p.step_us, 16);
  EXPECT_EQ(p.device_us, 16);
  EXPECT_EQ(p.exposed_device_us, 16);
  EXPECT_EQ(p.overlapped_us, 0);
}

// The LOAD runs beside the weight prep and the first GEMM part; the FORWARD's
// first half beside the second part; the second half, the BACKWARD and every
// host phase after the last part are exposed.
TEST(StepProjection, TheLoadAndTheForwardRunBesideTheInputGemm) {
  HostPhases h;
  h.before_load = 1;
  h.weight_prep = 2;
  h.parts = {10, 10};
  h.part_steps = {5, 5};
  h.before_backward = 3;
  h.after_backward = 4;
  const StepProjection p = project_step(h, {1, 4, 6});
  EXPECT_EQ(p.step_us, 38);  // 1 + 2 + 10 + 10 + 2 (FORWARD's second half) + 3 + 6 + 4
  EXPECT_EQ(p.host_us, 30);
  EXPECT_EQ(p.device_us, 11);
  EXPECT_EQ(p.exposed_device_us, 8);
  EXPECT_EQ(p.overlapped_us, 3);
}

// A device-bound step: the FORWARD waits for the LOAD, not for the parts,
// and reads each part's steps at its own pace (part 1 holds 1 of 4 steps).
TEST(StepProjection, ALongLoadDelaysTheForward) {
  HostPhases h;
  h.parts = {1, 1};
  h.part_steps = {1, 3};
  const StepProjection p = project_step(h, {10, 8, 0});
  EXPECT_EQ(p.step_us, 18);
  EXPECT_EQ(p.overlapped_us, 2);
  h.part_steps = {1};
  EXPECT_THROW(project_step(h, {10, 8, 0}), std::invalid_argument);
}

TEST(StepProjection, HostPhasesFollowTheTraceNames) {
  const std::vector<Trace::Event> ev = {
      {"compute", "batch", 0, 2},
      {"compute", "pack x", 2, 2},
      {"compute", "input GEMM l0, weights", 4, 6},
      {"compute", "input GEMM l0, part 1/2 (steps 0-2)", 10, 8},
      {"compute", "input GEMM l0, part 2/2 (steps 3-9)", 18, 12},
      {"host", "wait for the device", 30, 50},
      {"device", "FORWARD LSTM H=4 B=1 T=10 bank 0 (l0)", 10, 60},
      {"compute", "collect h l0", 80, 2},
      {"compute", "head and loss", 82, 4},
      {"compute", "dh l0", 86, 2},
      {"compute", "dx GEMM l1, part 1/2 (steps 5-9)", 100, 6},  // a streamed backward's
      {"compute", "gradient GEMMs l0", 106, 10},
      {"compute", "clip and update", 116, 4},
  };
  // Two steps' worth of spans: each phase is halved; 29 us of the 50 us of
  // host compute per step are in spans, the other 21 count as after the BACKWARD.
  const HostPhases h = host_phases(ev, 2, 50);
  EXPECT_EQ(h.before_load, 2);
  EXPECT_EQ(h.weight_prep, 3);
  EXPECT_EQ(h.parts, (std::vector<double>{4, 6}));
  EXPECT_EQ(h.part_steps, (std::vector<int>{3, 7}));
  EXPECT_EQ(h.before_backward, 4);
  EXPECT_EQ(h.after_backward, 10 + 21);
  EXPECT_EQ(h.total(), 50);
  const std::vector<Trace::Event> bad = {{"compute", "input GEMM l0, part two", 0, 1}};
  EXPECT_THROW(host_phases(bad, 1, 1), std::runtime_error);
}

}  // namespace
