// gpu/check.cpp - the exception behind NBODY_CUDA_CHECK.
#include "gpu/check.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

namespace nbody::gpu {

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  int device = -1;
  std::ostringstream s;
  s << "CUDA error " << cudaGetErrorName(code) << " (" << cudaGetErrorString(code) << ") in " << call << " at " << file
    << ':' << line;
  if (code != cudaErrorNoDevice && code != cudaErrorInsufficientDriver && cudaGetDevice(&device) == cudaSuccess)
    s << " on device " << device;
  // The error is reported here, once: a recoverable one is cleared from the thread's last error, so that the next
  // launch check does not report it again as its own (a sticky one stays: every later call returns it).
  (void)cudaGetLastError();
  throw CudaError(s.str(), code);
}

}  // namespace nbody::gpu

namespace nbody::gpu {

bool debug_sync() {
  static bool const on = [] {
    const char* value = std::getenv("NBODY_DEBUG_SYNC");
    return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
  }();
  return on;
}

}  // namespace nbody::gpu

namespace nbody::gpu {

double debug_sync_seconds() {
  static double const seconds = [] {
    const char* text = std::getenv("NBODY_WATCHDOG_SECONDS");
    char* end = nullptr;
    double const v = text ? std::strtod(text, &end) : 0.0;
    return text && end != text && *end == '\0' && std::isfinite(v) && v > 0 ? v : 60.0;
  }();
  return seconds;
}

void debug_sync_wait(cudaStream_t stream, const char* file, int line) {
  auto const start = std::chrono::steady_clock::now();
  auto const limit = std::chrono::duration<double>(debug_sync_seconds());
  while (true) {
    cudaError_t const state = cudaStreamQuery(stream);
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady) throw_cuda_error(state, "cudaStreamQuery(launch stream) (NBODY_DEBUG_SYNC)", file, line);
    if (std::chrono::steady_clock::now() - start > limit) {
      std::ostringstream s;
      s << "NBODY_DEBUG_SYNC: the launch at " << file << ':' << line << " has not finished after "
        << debug_sync_seconds() << " s; its stream waits for work that would be enqueued after it (a GPU waiting "
        << "for a peer, or a held stream): unset NBODY_DEBUG_SYNC, or use --threading workers";
      throw RuntimeFailure(s.str());
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

}  // namespace nbody::gpu

namespace nbody::gpu {
namespace {

// How the bounded wait polls: it spins on the query (yielding the core to any other runnable thread) for the first
// kSpin, as the runtime's own cudaStreamSynchronize spins by default, so a wait that ends within it returns within a
// query of the work's end; after that it sleeps kSleep between queries (each sleep lasts up to the kernel's timer
// slack longer, about 50 us). Sleeping after a 200 us spin cost up to a sleep and its slack at the end of most waits
// for a run of small block steps: 0.1 to 1.5 us a block step in hermite_bench's runs of 48 (docs/benchmarks.md).
constexpr auto kSpin = std::chrono::milliseconds(20);
constexpr auto kSleep = std::chrono::microseconds(100);

template <class Query>
void wait_bounded(Query query, double seconds, const std::string& what, const char* call) {
  seconds = bound_seconds(seconds);
  auto const start = std::chrono::steady_clock::now();
  auto const limit = std::chrono::duration<double>(seconds);
  while (true) {
    cudaError_t const state = query();
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady) throw_cuda_error(state, call, __FILE__, __LINE__);
    auto const waited = std::chrono::steady_clock::now() - start;
    if (waited > limit) {
      std::ostringstream s;
      s << what << " has not finished after " << seconds << " s (NBODY_WATCHDOG_SECONDS sets the bound)";
      throw RuntimeFailure(s.str());
    }
    if (waited < kSpin)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(kSleep);
  }
}

}  // namespace

double bound_seconds(double seconds) {
  const char* text = std::getenv("NBODY_WATCHDOG_SECONDS");
  char* end = nullptr;
  double const configured = text ? std::strtod(text, &end) : 0.0;
  return text && end != text && *end == '\0' && std::isfinite(configured) && configured > 0 ? configured : seconds;
}

bool refused_capture(cudaError_t code) {
  switch (code) {
    // What the driver says of an operation it will not capture, and of the capture it then ends. The codes of a
    // capture broken by the caller (unjoined, merged or isolated streams, an event recorded in another capture) are
    // not among them: those are defects, which falling back would hide.
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureInvalidated:
    case cudaErrorNotSupported:
      return true;
    default:
      return false;
  }
}

void bounded_sync(cudaStream_t stream, double seconds, const std::string& what) {
  wait_bounded([stream] { return cudaStreamQuery(stream); }, seconds, what, "cudaStreamQuery (a bounded wait)");
}

void bounded_sync(cudaEvent_t event, double seconds, const std::string& what) {
  wait_bounded([event] { return cudaEventQuery(event); }, seconds, what, "cudaEventQuery (a bounded wait)");
}

}  // namespace nbody::gpu
