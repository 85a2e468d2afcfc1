// multigpu/cuda_step_graph.cpp - StepGraph on CUDA stream capture.
//
// The capture starts on engine 0's stream; every other engine's stream joins it through an event
// recorded there (a fork), and the exchange's copy streams join through the events they already
// wait on. At the end each engine's stream is joined back into engine 0's, so the graph ends when
// every device's work has: one launch on engine 0's stream runs all of it, ordered after what any
// stream held before (every stream waits for engine 0's at the fork, engine 0's for theirs first).
#include "core/clock.h"
#include "core/errors.h"
#include "gpu/check.h"
#include "gpu/resources.h"
#include "multigpu/step_graph.h"
#include "sim/engines/cuda_engine.h"

namespace nbody::multigpu {
namespace {

class CudaStepGraph final : public StepGraph {
 public:
  explicit CudaStepGraph(const std::vector<sim::SliceEngine*>& engines) {
    for (auto* e : engines) {
      auto* cuda = dynamic_cast<sim::CudaSliceEngine*>(e);
      if (!cuda) throw std::logic_error("a CUDA graph needs CUDA engines");
      engines_.push_back(cuda);
      joins_.emplace_back(cuda->device());
    }
    fork_ = gpu::SyncEvent(engines_.front()->device());
  }

  ~CudaStepGraph() override {
    if (exec_) (void)cudaGraphExecDestroy(exec_);
    if (graph_) (void)cudaGraphDestroy(graph_);
  }

  void capture(const std::function<void()>& enqueue) override {
    if (exec_) (void)cudaGraphExecDestroy(exec_), exec_ = nullptr;
    if (graph_) (void)cudaGraphDestroy(graph_), graph_ = nullptr;
    cudaStream_t const origin = engines_.front()->stream();
    gpu::DeviceGuard guard(engines_.front()->device());
    // Every other stream first waits for what the origin held: also what orders this block after
    // the work enqueued before it.
    join_others_into_origin();
    NBODY_CUDA_CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal));
    struct Capturing {
      Capturing() { gpu::capturing = true; }
      ~Capturing() { gpu::capturing = false; }
    } capturing;
    try {
      NBODY_CUDA_CHECK(cudaEventRecord(fork_.get(), origin));
      for (std::size_t d = 1; d < engines_.size(); ++d) {
        gpu::DeviceGuard g(engines_[d]->device());
        NBODY_CUDA_CHECK(cudaStreamWaitEvent(engines_[d]->stream(), fork_.get(), 0));
      }
      enqueue();
      join_others_into_origin();
    } catch (...) {
      cudaGraph_t broken = nullptr;
      (void)cudaStreamEndCapture(origin, &broken);
      if (broken) (void)cudaGraphDestroy(broken);
      throw;
    }
    NBODY_CUDA_CHECK(cudaStreamEndCapture(origin, &graph_));
    NBODY_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }

  void launch() override {
    cudaStream_t const origin = engines_.front()->stream();
    gpu::DeviceGuard guard(engines_.front()->device());
    join_others_into_origin();  // the graph's work on every device comes after what its stream holds
    NBODY_CUDA_CHECK(cudaGraphLaunch(exec_, origin));
    NBODY_CUDA_CHECK(cudaEventRecord(fork_.get(), origin));
    for (std::size_t d = 1; d < engines_.size(); ++d) {  // and what comes next, after the graph
      gpu::DeviceGuard g(engines_[d]->device());
      NBODY_CUDA_CHECK(cudaStreamWaitEvent(engines_[d]->stream(), fork_.get(), 0));
    }
  }

  void start_timing(std::size_t marks) override {
    marks_.clear();
    for (std::size_t k = marks_.size(); k < marks; ++k) marks_.emplace_back(engines_.front()->device());
    used_ = 0;
  }

  void mark() override {
    if (used_ >= marks_.size()) return;
    gpu::DeviceGuard guard(engines_.front()->device());
    join_others_into_origin();
    NBODY_CUDA_CHECK(cudaEventRecord(marks_[used_++].get(), engines_.front()->stream()));
  }

  std::vector<double> intervals_ms() override {
    std::vector<double> t;
    if (used_ == 0) return t;
    gpu::DeviceGuard guard(engines_.front()->device());
    NBODY_CUDA_CHECK(cudaEventSynchronize(marks_[used_ - 1].get()));
    for (std::size_t k = 1; k < used_; ++k) {
      float ms = 0;
      NBODY_CUDA_CHECK(cudaEventElapsedTime(&ms, marks_[k - 1].get(), marks_[k].get()));
      t.push_back(event_milliseconds(ms));
    }
    return t;
  }

 private:
  // Engine 0's stream waits for every other engine's work so far.
  void join_others_into_origin() {
    for (std::size_t d = 1; d < engines_.size(); ++d) {
      gpu::DeviceGuard g(engines_[d]->device());
      NBODY_CUDA_CHECK(cudaEventRecord(joins_[d].get(), engines_[d]->stream()));
      NBODY_CUDA_CHECK(cudaStreamWaitEvent(engines_.front()->stream(), joins_[d].get(), 0));
    }
  }

  std::vector<sim::CudaSliceEngine*> engines_;
  gpu::SyncEvent fork_;
  std::vector<gpu::SyncEvent> joins_;
  std::vector<gpu::TimingEvent> marks_;
  std::size_t used_ = 0;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace

std::unique_ptr<StepGraph> make_step_graph(const std::vector<sim::SliceEngine*>& engines) {
  if (engines.empty() || !dynamic_cast<sim::CudaSliceEngine*>(engines.front())) return nullptr;
  return std::make_unique<CudaStepGraph>(engines);
}

}  // namespace nbody::multigpu
