// multigpu/exchange_choice.cpp - the rule that picks the exchange between GPUs, as a function of
// what the process can see, so that it is tested without a GPU.
#include "multigpu/exchange_choice.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "core/errors.h"
#if NBODY_HAVE_CUDA
#include "gpu/check.h"
#endif
#include "sim/kernels/drift_signal.h"

namespace nbody::multigpu {

namespace {
constexpr const char* kWaitsForever = ", so a GPU waiting for a peer's drift would never see it";
}  // namespace

std::string direct_exchange_hazard(const ExchangeConditions& c) {
  if (c.devices < 2 || !c.distinct_gpus) return "";  // no GPU waits on the GPU for another
  if (c.launch_blocking) return std::string("CUDA_LAUNCH_BLOCKING=1 makes each launch wait for the GPU") + kWaitsForever;
  if (c.debug_sync && c.one_host_thread)
    return std::string("NBODY_DEBUG_SYNC=1 makes the one host thread that drives every GPU wait after each launch") +
           kWaitsForever;
  if (c.mps)
    return "an MPS server may be running (CUDA_MPS_PIPE_DIRECTORY is set, or /tmp/nvidia-mps exists), so the GPUs may "
           "be shared with other processes whose waiting kernels hold the multiprocessors a peer's drift needs";
  if (c.host_gpus > 0 && c.local_ranks > c.host_gpus)
    return std::to_string(c.local_ranks) + " ranks on this host share its " + std::to_string(c.host_gpus) +
           " GPU(s), so one rank's waiting kernels can hold the multiprocessors another rank's drift needs";
  if (!c.shared_gpu.empty())
    return c.shared_gpu + " on this host, so one rank's waiting kernels can hold the multiprocessors the other's "
                          "drift needs";
  return "";
}

ExchangeMode choose_exchange(ExchangeMode requested, const ExchangeConditions& c, const SettingNames& names) {
  if (requested == ExchangeMode::direct) {
    std::string const direct = names.with_text("--exchange", "direct");
    if (!c.all_pairs_peer)
      throw InputError(direct + ": needs every pair of GPUs to reach each other's memory (peer access); use " +
                       names.with_text("--exchange", "peer") + (names.keywords ? " or 'staged'" : " or staged"));
    std::string const hazard = direct_exchange_hazard(c);
    if (!hazard.empty()) throw InputError(direct + ": " + hazard + "; use peer");
    return requested;
  }
  if (requested != ExchangeMode::automatic) return requested;
  // Direct stores where every pair has peer access: never slower than copies (equal at large N,
  // 40% less a step at N = 4,096 on 2 x H200 with graphs; docs/benchmarks.md).
  if (!c.all_pairs_peer) return ExchangeMode::staged;
  bool const few = c.devices <= std::size_t(sim::kernels::kMaxSignalPeers) + 1;
  return few && direct_exchange_hazard(c).empty() ? ExchangeMode::direct : ExchangeMode::peer;
}

ExchangeConditions process_exchange_conditions() {
  ExchangeConditions c;
#if NBODY_HAVE_CUDA
  c.debug_sync = gpu::debug_sync();
#endif
  const char* blocking = std::getenv("CUDA_LAUNCH_BLOCKING");
  c.launch_blocking = blocking != nullptr && std::strcmp(blocking, "1") == 0;
  const char* pipe = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  std::error_code ignored;  // an unreadable /tmp says nothing about MPS
  c.mps = (pipe != nullptr && *pipe != '\0') || std::filesystem::exists("/tmp/nvidia-mps", ignored);
  return c;
}

}  // namespace nbody::multigpu
