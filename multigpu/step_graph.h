// multigpu/step_graph.h - a block of steps captured once as a CUDA graph and replayed: one launch
// in place of several kernel launches, copies and event waits per device and step.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "sim/engines/engine.h"

namespace nbody::multigpu {

class StepGraph {
 public:
  virtual ~StepGraph() = default;
  // Captures what `enqueue` puts on the engines' streams (and on streams that join them through
  // events: the exchange's copies) into a graph. Nothing runs yet.
  virtual void capture(const std::function<void()>& enqueue) = 0;
  // Runs the captured work once, after whatever the engines' streams already hold.
  virtual void launch() = 0;
  // Timing: room for `marks` marks; each mark() waits (on the GPUs) for every engine's work so far
  // and timestamps it; intervals_ms() are the times between consecutive marks (synchronises).
  virtual void start_timing(std::size_t marks) = 0;
  virtual void mark() = 0;
  virtual std::vector<double> intervals_ms() = 0;
};

// For CUDA engines (the first one's stream launches the graph); null for host engines and in a
// build without CUDA.
std::unique_ptr<StepGraph> make_step_graph(const std::vector<sim::SliceEngine*>& engines);

}  // namespace nbody::multigpu
