// driver/benchmark.h - timing a simulation: warm-up, timed steps, medians and interactions/s, and
// its report as JSON; and the comparison of the two threading models over device counts and sizes.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "driver/config.h"
#include "multigpu/simulation.h"

namespace nbody::driver {

struct Measurement {
  double median_ms = 0, min_ms = 0, max_ms = 0;  // per step: CUDA events (GPU) or clocks (CPU)
  double wall_mean_ms = 0;                        // host wall clock over the timed steps, per step
  double enqueue_ms_per_step = 0;                 // host time to enqueue a step (GPU: the host's share)
  std::vector<double> device_median_ms;           // per device: shows imbalance
  double interactions_per_s = 0;                  // force evaluations x N^2 / median step time
  double gflops = 0;                              // at 20 flops per interaction (the CUDA samples' count)
};

// Advances `steps` steps and waits for them, stopping with Interrupted within about a step of a
// signal: CPU steps one at a time with a check between, GPU steps enqueued at once and waited for
// by polling.
void advance_interruptibly(multigpu::Simulation& simulation, std::uint64_t steps);

// Step k of several devices, from their own step times (each device's counted from the start of
// the timing, when all were idle): from the moment the last device finished step k - 1 to the
// moment the last finished step k. Not the longest of the devices' step k: where the devices take
// turns waiting for each other (as launch-bound steps on several GPUs do), every step would be
// some device's long one, and the median would be far above the wall clock's mean.
std::vector<double> slowest_device_steps(const std::vector<std::vector<double>>& per_device, std::size_t steps);

// Runs `warmup` untimed steps, then `steps` timed ones (at least 1). A step lasts until the slowest
// device has finished it (slowest_device_steps). Throws Interrupted (core/interrupt.h) within
// about a step of a signal.
Measurement measure(multigpu::Simulation& simulation, std::uint64_t warmup, std::uint64_t steps);

// A benchmark's report, as `nbody --benchmark --json` writes it and Python's Simulation.benchmark
// returns it: one function, so both give the same keys. `source` names where the bodies came from
// (driver::Setup::source); `warmup` and `steps` are the counts measure() was given.
nlohmann::json benchmark_json(const Measurement& m, const multigpu::Simulation& simulation, const std::string& source,
                              std::uint64_t warmup, std::uint64_t steps);

struct ComparisonRow {
  multigpu::Threading model;
  multigpu::Launch launch;
  int devices;
  std::size_t bodies;
  Measurement measurement;
  double speedup;     // one device's median step over this row's
  double efficiency;  // speedup / devices
};

// For each size and each way of driving the devices (interruptible like measure()): the two
// threading models launching on streams, and on GPUs in one process CUDA graphs (single thread),
// measures 1, 2, ... up to the devices `base` resolves to (its --gpus and --weights prefixes for
// fewer devices). `on_row` sees each row as it is measured.
std::vector<ComparisonRow> compare_threading(const RunConfig& base, const std::vector<std::size_t>& sizes,
                                             std::uint64_t warmup, std::uint64_t steps,
                                             const std::function<void(const ComparisonRow&)>& on_row = {});

}  // namespace nbody::driver
