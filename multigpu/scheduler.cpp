// multigpu/scheduler.cpp - the single-thread and worker-thread schedulers.
//
// One step on two devices, A owning [0, h) and B owning [h, N) (leapfrog; other programs differ
// in their kick/damp stages and in how many drift/forces pairs a step has):
//   A: [kick A][drift A] -publish(A, p)-> ...acquire(A, p): wait for B's slice... [swap][forces A][kick A]
//   B: [kick B][drift B] -publish(B, p)-> ...acquire(B, p): wait for A's slice... [swap][forces B][kick B]
// p counts publications (drifts) since the upload. publish enqueues the copies of the own new
// slice into every peer's buffer p % 2 and signals (an event on GPUs, a counter on the host);
// acquire makes the device's own stream wait for that signal. The single scheduler enqueues stage
// by stage across devices on one thread; the worker scheduler lets each device's thread run whole
// steps, meeting only through acquire.
#include "multigpu/scheduler.h"

#include <sched.h>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "core/errors.h"

namespace nbody::multigpu {

namespace {

// A forces stage in two halves: what the bodies already here allow (with bodies still to come from
// other ranks: the segments of this rank's own), then the rest once everything has arrived. The
// single scheduler starts every device's before it finishes any, so no device's early forces wait
// behind another's gather.
void start_forces(sim::SliceEngine& engine, Exchange& exchange, int device, std::uint64_t publication) {
  exchange.acquire(device, publication);
  engine.swap_buffers();
  if (auto const ready = exchange.ready_early(device)) engine.compute_forces_ready(*ready);
}

// `kick` (a kick stage's time, or none): the kick right after the forces, fused with them.
void finish_forces(sim::SliceEngine& engine, Exchange& exchange, int device, std::uint64_t publication,
                   const double* kick) {
  if (!exchange.ready_early(device)) return kick ? engine.compute_forces_kick(*kick) : engine.compute_forces();
  exchange.acquire_rest(device, publication);
  engine.compute_forces_rest();
  if (kick) engine.kick(*kick);
}

// The time of the kick fused with forces stage k, or null.
const double* fused_kick(const std::vector<sim::Stage>& stages, std::size_t k) {
  return fused_with_next(stages, k) ? &stages[k + 1].value : nullptr;
}

// Runs stage k of `stages` on one device, and the stage after it when fused_with_next(stages, k).
// `publication` is the number of the device's latest drift: a drift makes the next one, a forces
// stage acquires it.
void run_stage(sim::SliceEngine& engine, Exchange& exchange, int device, const std::vector<sim::Stage>& stages,
               std::size_t k, std::uint64_t& publication) {
  sim::Stage const& stage = stages[k];
  if (stage.kind == sim::StageKind::kick && fused_with_next(stages, k)) {
    engine.kick_drift(stage.value, stages[k + 1].value);
    exchange.publish(device, ++publication);
    return;
  }
  switch (stage.kind) {
    case sim::StageKind::kick:
      engine.kick(stage.value);
      break;
    case sim::StageKind::damp:
      engine.damp(stage.value);
      break;
    case sim::StageKind::drift:
      engine.drift(stage.value);
      exchange.publish(device, ++publication);
      break;
    case sim::StageKind::forces:
      start_forces(engine, exchange, device, publication);
      finish_forces(engine, exchange, device, publication, fused_kick(stages, k));
      break;
  }
}

class SingleThreadScheduler final : public Scheduler {
 public:
  SingleThreadScheduler(std::vector<sim::SliceEngine*> engines, Exchange& exchange)
      : engines_(std::move(engines)), exchange_(exchange) {
    for (auto* e : engines_) e->bind_thread();
  }

  void run(const sim::StepProgram& program, std::uint64_t first_publication, std::uint64_t steps,
           bool mark_steps) override {
    std::uint64_t publication = first_publication - 1;
    for (std::uint64_t step = 0; step < steps; ++step) {
      auto const& stages = program.stages;
      for (std::size_t k = 0; k < stages.size(); k += fused_with_next(stages, k) ? 2 : 1) {
        if (stages[k].kind == sim::StageKind::forces) {
          for (std::size_t d = 0; d < engines_.size(); ++d) start_forces(*engines_[d], exchange_, int(d), publication);
          for (std::size_t d = 0; d < engines_.size(); ++d)
            finish_forces(*engines_[d], exchange_, int(d), publication, fused_kick(stages, k));
          continue;
        }
        std::uint64_t const before = publication;
        for (std::size_t d = 0; d < engines_.size(); ++d) {
          publication = before;  // every device is at the same publication here
          run_stage(*engines_[d], exchange_, int(d), stages, k, publication);
        }
      }
      if (mark_steps)
        for (auto* e : engines_) e->mark_step_end();
    }
  }

  void for_each_device(const std::function<void(int)>& task) override {
    for (std::size_t d = 0; d < engines_.size(); ++d) task(int(d));
  }

  Threading threading() const override { return Threading::single; }

 private:
  std::vector<sim::SliceEngine*> engines_;
  Exchange& exchange_;
};

// Device threads with no stage program: for a simulation that drives its engines itself (Hermite's
// block steps, multigpu/hermite_blocks.h). `bind(d)` runs once on device d's thread.
class SingleThreadDevices final : public Scheduler {
 public:
  SingleThreadDevices(std::size_t devices, const std::function<void(int)>& bind) : devices_(devices) {
    for (std::size_t d = 0; d < devices_; ++d) bind(int(d));
  }
  void run(const sim::StepProgram&, std::uint64_t, std::uint64_t, bool) override {
    throw std::logic_error("SingleThreadDevices runs tasks, not step programs");
  }
  void for_each_device(const std::function<void(int)>& task) override {
    for (std::size_t d = 0; d < devices_; ++d) task(int(d));
  }
  Threading threading() const override { return Threading::single; }

 private:
  std::size_t devices_;
};

// One persistent thread per device, bound to it once. The main thread hands every worker the
// same job and waits until all have finished enqueuing it; a worker's exception aborts the
// exchange (so no peer waits forever) and is rethrown on the main thread.
class WorkerThreadScheduler final : public Scheduler {
 public:
  WorkerThreadScheduler(std::vector<sim::SliceEngine*> engines, Exchange& exchange)
      : engines_(std::move(engines)), exchange_(&exchange) {
    bind_ = [this](int d) { engines_[std::size_t(d)]->bind_thread(); };
    for (std::size_t d = 0; d < engines_.size(); ++d) threads_.emplace_back([this, d] { worker(int(d)); });
  }
  // Threads alone (no engines, no exchange), for SingleThreadDevices' uses.
  WorkerThreadScheduler(std::size_t devices, std::function<void(int)> bind) : bind_(std::move(bind)) {
    for (std::size_t d = 0; d < devices; ++d) threads_.emplace_back([this, d] { worker(int(d)); });
  }

  ~WorkerThreadScheduler() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    job_posted_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void run(const sim::StepProgram& program, std::uint64_t first_publication, std::uint64_t steps,
           bool mark_steps) override {
    if (!exchange_) throw std::logic_error("device threads without engines run tasks, not step programs");
    for_each_device([&](int d) {
      sim::SliceEngine& engine = *engines_[d];
      std::uint64_t publication = first_publication - 1;
      for (std::uint64_t step = 0; step < steps; ++step) {
        auto const& stages = program.stages;
        for (std::size_t k = 0; k < stages.size(); k += fused_with_next(stages, k) ? 2 : 1)
          run_stage(engine, *exchange_, d, stages, k, publication);
        if (mark_steps) engine.mark_step_end();
      }
    });
  }

  void for_each_device(const std::function<void(int)>& task) override {
    std::unique_lock<std::mutex> lock(mutex_);
    job_ = &task;
    ++generation_;
    pending_ = threads_.size();
    error_ = nullptr;
    job_posted_.notify_all();
    job_done_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
    if (error_) {
      std::exception_ptr e = error_;
      error_ = nullptr;
      lock.unlock();
      // reset() inside the handler: an exchange that must end the job there (between ranks) can
      // still report the failure itself (std::current_exception).
      try {
        std::rethrow_exception(e);
      } catch (...) {
        if (exchange_) exchange_->reset();
        throw;
      }
    }
  }

  Threading threading() const override { return Threading::workers; }

 private:
  void worker(int device) {
    std::exception_ptr bind_error;
    try {
      bind_(device);
    } catch (...) {
      bind_error = std::current_exception();
    }
    std::uint64_t seen = 0;
    while (true) {
      const std::function<void(int)>* job = nullptr;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        job_posted_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        job = job_;
      }
      std::exception_ptr failure = bind_error;
      if (!failure) {
        try {
          (*job)(device);
        } catch (...) {
          failure = std::current_exception();
        }
      }
      if (failure && exchange_) exchange_->abort();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (failure && !error_) error_ = failure;
        if (--pending_ == 0) job_done_.notify_all();
      }
    }
  }

  std::vector<sim::SliceEngine*> engines_;
  Exchange* exchange_ = nullptr;  // null for threads alone
  std::function<void(int)> bind_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable job_posted_, job_done_;
  const std::function<void(int)>* job_ = nullptr;
  std::uint64_t generation_ = 0;
  std::size_t pending_ = 0;
  std::exception_ptr error_;
  bool stopping_ = false;
};

}  // namespace

// A kick between a forces stage and a drift goes with the drift: kick_drift saves a pass on every
// engine, folding the kick into the forces only where they are split.
bool fused_with_next(const std::vector<sim::Stage>& stages, std::size_t k) {
  using sim::StageKind;
  auto is = [&](std::size_t i, StageKind kind) { return i < stages.size() && stages[i].kind == kind; };
  if (is(k, StageKind::kick)) return is(k + 1, StageKind::drift);
  return is(k, StageKind::forces) && is(k + 1, StageKind::kick) && !is(k + 2, StageKind::drift);
}

std::unique_ptr<Scheduler> make_scheduler(Threading threading, std::vector<sim::SliceEngine*> engines,
                                          Exchange& exchange) {
  if (threading == Threading::single) return std::make_unique<SingleThreadScheduler>(std::move(engines), exchange);
  return std::make_unique<WorkerThreadScheduler>(std::move(engines), exchange);
}

std::unique_ptr<Scheduler> make_device_threads(Threading threading, std::size_t devices,
                                               const std::function<void(int)>& bind) {
  if (threading == Threading::single) return std::make_unique<SingleThreadDevices>(devices, bind);
  return std::make_unique<WorkerThreadScheduler>(devices, bind);
}

int threads_per_engine(sim::Backend backend, Threading threading, int cpu_threads, std::size_t devices) {
  if (backend != sim::Backend::cpu || threading != Threading::workers) return cpu_threads;
  // All cores: those this process may run on (a batch job's share, a taskset), not the host's.
  int total = cpu_threads;
  if (total <= 0) {
    cpu_set_t usable;
    total = ::sched_getaffinity(0, sizeof usable, &usable) == 0 ? CPU_COUNT(&usable)
                                                                : int(std::max(1u, std::thread::hardware_concurrency()));
  }
  return std::max(1, total / int(std::max<std::size_t>(devices, 1)));
}

}  // namespace nbody::multigpu
