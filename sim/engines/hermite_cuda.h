// sim/engines/hermite_cuda.h - what the CUDA Hermite engine offers beyond HermiteEngine (plain C++ and the CUDA runtime
// API header, as sim/engines/cuda_engine.h: builds with CUDA only; tests and tools reach it by dynamic_cast from the
// engine make_hermite_engine returns).
#pragma once

#include <cuda_runtime_api.h>

#include "sim/engines/hermite_engine.h"

namespace nbody::sim {

class CudaHermiteEngine : public HermiteEngine {
 public:
  // advance_blocks() replays CUDA graphs of whole block steps (the default) or launches every kernel on the
  // stream; both give the same bits.
  virtual void set_graph_launch(bool graphs) = 0;
  virtual bool graph_launch() const = 0;
  // Resident blocks of the force kernel: the grid it is launched with, and the work it is cut into depends on
  // it (sim/kernels/hermite.cuh). 0: as many as stay resident on the device. For tests of launch-shape
  // independence; call before the first step.
  virtual void set_force_grid(int blocks) = 0;
  // The stream the engine queues its work on (tests hold it, tools time it).
  virtual cudaStream_t stream() const = 0;
  // advance_together: this device neither announces its partials to the others nor waits for theirs. For tests only: it
  // makes a device whose announcements never come, so that the others' bounded waits can be seen to end.
  virtual void set_isolated_for_test(bool isolated) = 0;
  // advance_together on this engine (the first of the engines) makes, inside its capture of the devices' graphs (the
  // graph over every stream, or the last device's own), a call the driver refuses there, as a driver that cannot
  // capture such graphs would. For tests only: the block steps must then go on the streams, with the same bits.
  virtual void set_refuse_capture_for_test(bool refuse) = 0;
};

}  // namespace nbody::sim
