// multigpu/no_step_graph.cpp - a build without CUDA has no graphs.
#include "multigpu/step_graph.h"

namespace nbody::multigpu {

std::unique_ptr<StepGraph> make_step_graph(const std::vector<sim::SliceEngine*>&) { return nullptr; }

}  // namespace nbody::multigpu
