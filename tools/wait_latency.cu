// tools/wait_latency.cu - what it costs one GPU's work to wait for another's: the latencies that decide how the
// devices of a block step should meet. Developer tool; needs GPU 0, and GPU 1 with peer access for the last two
// lines (a single GPU runs the event round trip between two streams of it):
//   wait_latency
// Prints, each the mean over 2,000 rounds after a warm-up round:
//   a tiny kernel after a tiny kernel on one stream, launched one by one and as a graph;
//   GPU 0 -> GPU 1 -> GPU 0 through event records and cudaStreamWaitEvent (two tiny kernels, two waits), on the
//   streams and as one graph over both devices;
//   the same round trip through flags in device memory: two persistent one-thread kernels, each storing the round's
//   number into the other's memory and polling its own (every poll bounded: a GPU that waited 10 s gives up).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <functional>

#include "gpu/check.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kRounds = 2000;
constexpr unsigned long long kGiveUpNs = 10'000'000'000ull;

__global__ void tiny(int* p) {
  if (threadIdx.x == 0 && blockIdx.x == 0) p[0] += 1;
}

__device__ unsigned long long global_nanoseconds() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// `starts`: this one stores first, then waits; the other waits, then stores. *failed set when a wait gave up.
__global__ void bounce(volatile int* mine, volatile int* theirs, int rounds, bool starts, int* failed) {
  unsigned long long const begin = global_nanoseconds();
  for (int r = 1; r <= rounds; ++r) {
    if (starts) theirs[0] = r;
    while (mine[0] < r) {
      if (global_nanoseconds() - begin > kGiveUpNs) {
        *failed = 1;
        return;
      }
    }
    if (!starts) theirs[0] = r;
  }
}

double microseconds_each(Clock::time_point t0, int n) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / n;
}

cudaGraphExec_t capture(cudaStream_t s, const std::function<void()>& enqueue) {
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  NBODY_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  enqueue();
  NBODY_CUDA_CHECK(cudaStreamEndCapture(s, &g));
  NBODY_CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
  NBODY_CUDA_CHECK(cudaGraphDestroy(g));
  return exec;
}

// Times `enqueue_all` (kRounds rounds in all) once to warm up and once measured; `stream` is waited for.
double timed(cudaStream_t stream, int device, const std::function<void()>& enqueue_all) {
  double us = 0;
  for (int pass = 0; pass < 2; ++pass) {
    NBODY_CUDA_CHECK(cudaSetDevice(device));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
    auto const t0 = Clock::now();
    enqueue_all();
    NBODY_CUDA_CHECK(cudaSetDevice(device));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
    us = microseconds_each(t0, kRounds);
  }
  return us;
}

}  // namespace

int main() {
  int count = 0;
  NBODY_CUDA_CHECK(cudaGetDeviceCount(&count));
  int peer = 0;
  if (count > 1) NBODY_CUDA_CHECK(cudaDeviceCanAccessPeer(&peer, 0, 1));
  int const other = peer ? 1 : 0;
  int *a = nullptr, *b = nullptr, *failed = nullptr;
  cudaStream_t s0 = nullptr, s1 = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  NBODY_CUDA_CHECK(cudaSetDevice(0));
  NBODY_CUDA_CHECK(cudaMalloc(&a, 64));
  NBODY_CUDA_CHECK(cudaMemset(a, 0, 64));
  NBODY_CUDA_CHECK(cudaHostAlloc(&failed, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  *failed = 0;
  NBODY_CUDA_CHECK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
  NBODY_CUDA_CHECK(cudaEventCreateWithFlags(&e0, cudaEventDisableTiming));
  if (other) NBODY_CUDA_CHECK(cudaDeviceEnablePeerAccess(other, 0));
  NBODY_CUDA_CHECK(cudaSetDevice(other));
  NBODY_CUDA_CHECK(cudaMalloc(&b, 64));
  NBODY_CUDA_CHECK(cudaMemset(b, 0, 64));
  NBODY_CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  NBODY_CUDA_CHECK(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));
  if (other) NBODY_CUDA_CHECK(cudaDeviceEnablePeerAccess(0, 0));
  NBODY_CUDA_CHECK(cudaDeviceSynchronize());

  // One GPU: a kernel after a kernel.
  NBODY_CUDA_CHECK(cudaSetDevice(0));
  auto chain = [&](int n) {
    for (int i = 0; i < n; ++i) tiny<<<1, 32, 0, s0>>>(a);
  };
  cudaGraphExec_t const chain_graph = capture(s0, [&] { chain(100); });
  double const kernel_stream = timed(s0, 0, [&] { chain(kRounds); });
  double const kernel_graph = timed(s0, 0, [&] {
    for (int i = 0; i < kRounds / 100; ++i) NBODY_CUDA_CHECK(cudaGraphLaunch(chain_graph, s0));
  });
  std::printf("one GPU, a tiny kernel after a tiny kernel: %.2f us on the stream, %.2f us in a graph\n", kernel_stream,
              kernel_graph);

  // Events: GPU 0 -> GPU 1 -> GPU 0.
  auto round_trips = [&](int n) {
    for (int i = 0; i < n; ++i) {
      NBODY_CUDA_CHECK(cudaSetDevice(0));
      tiny<<<1, 32, 0, s0>>>(a);
      NBODY_CUDA_CHECK(cudaEventRecord(e0, s0));
      NBODY_CUDA_CHECK(cudaSetDevice(other));
      NBODY_CUDA_CHECK(cudaStreamWaitEvent(s1, e0, 0));
      tiny<<<1, 32, 0, s1>>>(b);
      NBODY_CUDA_CHECK(cudaEventRecord(e1, s1));
      NBODY_CUDA_CHECK(cudaSetDevice(0));
      NBODY_CUDA_CHECK(cudaStreamWaitEvent(s0, e1, 0));
    }
  };
  NBODY_CUDA_CHECK(cudaSetDevice(0));
  cudaGraphExec_t const trip_graph = capture(s0, [&] { round_trips(50); });
  double const event_stream = timed(s0, 0, [&] { round_trips(kRounds); });
  double const event_graph = timed(s0, 0, [&] {
    for (int i = 0; i < kRounds / 50; ++i) NBODY_CUDA_CHECK(cudaGraphLaunch(trip_graph, s0));
  });
  std::printf("GPU 0 -> GPU %d -> GPU 0 through events (two tiny kernels, two waits): %.2f us on the streams, %.2f us "
              "in one graph\n", other, event_stream, event_graph);

  if (other) {
    for (int pass = 0; pass < 2; ++pass) {
      NBODY_CUDA_CHECK(cudaSetDevice(0));
      NBODY_CUDA_CHECK(cudaMemset(a, 0, 64));
      NBODY_CUDA_CHECK(cudaDeviceSynchronize());
      NBODY_CUDA_CHECK(cudaSetDevice(other));
      NBODY_CUDA_CHECK(cudaMemset(b, 0, 64));
      NBODY_CUDA_CHECK(cudaDeviceSynchronize());
      auto const t0 = Clock::now();
      NBODY_CUDA_CHECK(cudaSetDevice(0));
      bounce<<<1, 1, 0, s0>>>(a, b, kRounds, true, failed);
      NBODY_CUDA_CHECK(cudaSetDevice(other));
      bounce<<<1, 1, 0, s1>>>(b, a, kRounds, false, failed);
      NBODY_CUDA_CHECK(cudaStreamSynchronize(s1));
      NBODY_CUDA_CHECK(cudaSetDevice(0));
      NBODY_CUDA_CHECK(cudaStreamSynchronize(s0));
      if (*failed) {
        std::printf("GPU 0 -> GPU 1 -> GPU 0 through flags in device memory: a GPU waited 10 s and gave up\n");
        return 1;
      }
      if (pass == 1)
        std::printf("GPU 0 -> GPU 1 -> GPU 0 through flags in device memory: %.2f us a round trip\n",
                    microseconds_each(t0, kRounds));
    }
  }
  return 0;
}
