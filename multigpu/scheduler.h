// multigpu/scheduler.h - who enqueues each device's work: one host thread, or one per device.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/enum_names.h"
#include "multigpu/exchange.h"
#include "sim/engines/engine.h"
#include "sim/physics/integrator.h"

namespace nbody::multigpu {

// Who enqueues each device's work: one host thread for all (single), or one per device (workers).
enum class Threading { single, workers };
inline constexpr std::array<EnumName<Threading>, 2> kThreadingNames{
    {{Threading::single, "single"}, {Threading::workers, "workers"}}};
constexpr const auto& enum_names(Threading) { return kThreadingNames; }

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // Enqueues `steps` steps of `program` on every device; the first drift makes publication
  // `first_publication` (see Exchange), each further drift the next one. On GPUs it returns once
  // everything is enqueued; the host does not wait for the devices.
  // `mark_steps`: mark each step's end for the engines' timing (not inside a graph capture).
  virtual void run(const sim::StepProgram& program, std::uint64_t first_publication, std::uint64_t steps,
                   bool mark_steps = true) = 0;
  // Runs task(d) for every device d on the thread that drives d, and waits for all of them.
  virtual void for_each_device(const std::function<void(int)>& task) = 0;
  virtual Threading threading() const = 0;
};

// Whether stage k runs in one pass with stage k + 1: a kick with the drift right after it
// (SliceEngine::kick_drift), and a kick right after a forces stage, where it is not right before a
// drift, with the forces (compute_forces_kick). Fused or not, the results are the same bits.
bool fused_with_next(const std::vector<sim::Stage>& stages, std::size_t k);

// Both schedulers call the same per-device stage code (run_stage), so they enqueue identical
// work and give bitwise-identical results.
std::unique_ptr<Scheduler> make_scheduler(Threading threading, std::vector<sim::SliceEngine*> engines,
                                          Exchange& exchange);

// Device threads alone, for a simulation that drives its engines itself (Hermite block steps): for_each_device
// runs task(d) in turn on the caller's thread (single) or on device d's own worker (workers), where bind(d)
// ran once first; run() throws (there is no step program).
// The OpenMP threads each of `devices` host engines gets: `cpu_threads` (0: all cores) as given, except
// that under worker threads each worker runs its own OpenMP team, so the cores are shared among them
// instead of oversubscribed.
int threads_per_engine(sim::Backend backend, Threading threading, int cpu_threads, std::size_t devices);

std::unique_ptr<Scheduler> make_device_threads(Threading threading, std::size_t devices,
                                               const std::function<void(int)>& bind);

}  // namespace nbody::multigpu
