// The projected time of one training step of a one-layer, one-direction
// stack on a card (what bench_train projects), with the overlap the
// trainer's schedule gives: measured host phases (from a trace of the same
// step run on model://) against device commands (from the cycle and PCIe
// models), placed as RnnStack orders them:
//   host:   before-LOAD work | weight prep | input GEMM part 1 .. K | wait for
//           the FORWARD | work before the BACKWARD | wait for it | the rest
//   device: LOAD (queued after the before-LOAD work) | FORWARD, which starts
//           once the LOAD is done and part 1 is published and reads the steps
//           of part k only once part k is published | BACKWARD (queued after
//           the work before it)
// The FORWARD is taken to spend its time evenly over its time steps.
#pragma once

#include <string>
#include <vector>

#include "farnn/trace.hpp"

namespace farnn::train {

// One step's host compute in µs, by phase.
struct HostPhases {
  double before_load = 0;       // the batch, packing x
  double weight_prep = 0;       // the input GEMM's weight permutation
  std::vector<double> parts;    // each part of the input GEMM
  std::vector<int> part_steps;  // the time steps each part holds
  double before_backward = 0;   // collecting h, the head and loss, dh
  double after_backward = 0;    // dx GEMM, gradient GEMMs, clip and update, and the rest
  double total() const;
};

// The per-step mean of the compute spans of `steps` training steps in
// `events` (a Trace's, from the step's first event on), phased by their
// names; `host_compute_us` is the measured host compute per step, and what
// the spans do not cover counts after the BACKWARD (never overlapped).
// std::runtime_error when a part's name does not say its steps.
HostPhases host_phases(const std::vector<Trace::Event>& events, int steps, double host_compute_us);

struct DeviceTimes {
  double load = 0, forward = 0, backward = 0;  // µs per command
};

struct StepProjection {
  double step_us = 0;            // with the overlap
  double host_us = 0;            // all host phases
  double device_us = 0;          // all device commands
  double exposed_device_us = 0;  // device time the host waits for: step - host
  double overlapped_us = 0;      // device time hidden behind host work
};

StepProjection project_step(const HostPhases& host, const DeviceTimes& device);

}  // namespace farnn::train
