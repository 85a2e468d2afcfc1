// mpi/mpi_ranks.cpp - core/ranks.h on MPI: over a communicator, and the world the launcher started.
//
// Every MPI call goes through one mutex, so the library needs only MPI_THREAD_SERIALIZED: the
// simulation's communication thread tests its gathers while the main thread may make a collective
// call between runs. A non-blocking gather is completed by polling MPI_Test, never by a blocking
// wait that would hold the mutex.
//
// Every collective is non-blocking and polled against a deadline (NBODY_RANK_TIMEOUT seconds,
// default kDefaultRankTimeout): a rank that stopped (SIGSTOP, a debugger, a GPU wait that never
// ends) would otherwise hold every other rank in its next collective call forever. At the deadline
// the waiting rank says what it waited in and ends the job.
//
// The ranks work on their own duplicate of the communicator they are given, so that their
// messages never match a caller's (mpi4py's, an application's) on the same processes.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <type_traits>

#include "core/clock.h"
#include "core/errors.h"
#include "mpi/mpi_ranks.h"

namespace nbody::mpi {
namespace {

std::mutex g_mpi;  // every MPI call holds it

// Generous: ranks wait in collectives for each other's steps, checkpoint writes and start-up work.
constexpr double kDefaultRankTimeout = 900.0;

using Clock = std::chrono::steady_clock;

// NBODY_RANK_TIMEOUT: how long one collective call may wait for the other ranks, in seconds.
double rank_timeout_from_environment() {
  return seconds_from_environment("NBODY_RANK_TIMEOUT", kDefaultRankTimeout,
                                  "how long a rank waits for the others; default " +
                                      std::to_string(int(kDefaultRankTimeout)));
}

// NBODY_INIT_TIMEOUT: how long MPI_Init may wait for the other ranks to start, in seconds. Its own, since a large
// job's start can take longer than a short NBODY_RANK_TIMEOUT chosen to find a hang between steps quickly: by default
// the larger of that and kMinInitTimeout.
constexpr double kMinInitTimeout = 300.0;
double init_timeout_from_environment(double rank_timeout) {
  double const fallback = std::max(rank_timeout, kMinInitTimeout);
  return seconds_from_environment("NBODY_INIT_TIMEOUT", fallback,
                                  "how long MPI_Init waits for the other ranks to start; default the larger of "
                                  "NBODY_RANK_TIMEOUT and " + std::to_string(int(kMinInitTimeout)));
}

// A rank waited past the deadline: it says so and ends the job (the others may be stopped, so
// nothing can be agreed with them).
[[noreturn]] void give_up_waiting(MPI_Comm comm, int rank, int size, double seconds, const char* what) {
  char why[512];
  std::snprintf(why, sizeof why,
                "rank %d of %d: waited %g s for the other ranks in %s; a rank has stopped or hangs (NBODY_RANK_TIMEOUT "
                "sets this bound in seconds)",
                rank, size, seconds, what);
  std::fprintf(stderr, "error: %s; ending the job\n", why);
  std::fflush(nullptr);
  last_words(why);  // the run's last state kept, saved, and the front end's report (core/ranks.h)
  std::fflush(nullptr);
  MPI_Abort(comm, 1);
  std::_Exit(1);
}

// Polls `request` until it completes, taking the mutex only for each test. At first the polls
// follow each other at once (a collective whose ranks are all there completes in microseconds);
// after a millisecond they are spaced, so that a long wait leaves the core to the rank's work.
void wait_bounded(MPI_Comm comm, MPI_Request& request, int rank, int size, double timeout, const char* what) {
  auto const start = Clock::now();
  auto const deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout));
  while (true) {
    {
      std::lock_guard<std::mutex> lock(g_mpi);
      int flag = 0;
      int const status = MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
      if (status != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING] = {};
        int length = 0;
        MPI_Error_string(status, text, &length);
        // The request may still be pending, into buffers the caller would free while unwinding: the
        // job ends here instead.
        std::fprintf(stderr, "error: rank %d of %d: MPI: waiting in %s failed: %s; ending the job\n", rank, size, what,
                     text);
        std::fflush(nullptr);
        MPI_Abort(comm, 1);
        std::_Exit(1);
      }
      if (flag) return;
    }
    auto const now = Clock::now();
    if (now > deadline) give_up_waiting(comm, rank, size, timeout, what);
    if (now - start < std::chrono::milliseconds(1)) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
}

void check(int status, const char* what) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw RuntimeFailure(std::string("MPI: ") + what + " failed: " + text);
}

// MPI counts are ints: a piece of more units than that does not fit one call.
std::vector<int> to_ints(const std::vector<std::size_t>& v, const char* what) {
  std::vector<int> out;
  for (std::size_t x : v) {
    if (x > std::size_t(INT_MAX))
      throw RuntimeFailure(std::string("MPI: ") + what + " of " + std::to_string(x) + " units is more than one call can move");
    out.push_back(int(x));
  }
  return out;
}

// A contiguous type of `unit` bytes (one body's position), so counts are bodies, not bytes.
MPI_Datatype unit_type(std::size_t unit) {
  static std::map<std::size_t, MPI_Datatype> types;  // under g_mpi
  auto it = types.find(unit);
  if (it != types.end()) return it->second;
  MPI_Datatype t;
  check(MPI_Type_contiguous(int(unit), MPI_BYTE, &t), "MPI_Type_contiguous");
  check(MPI_Type_commit(&t), "MPI_Type_commit");
  return types[unit] = t;
}

class MpiGather final : public PendingGather {
 public:
  MpiGather(void* buffer, std::size_t unit, const std::vector<std::size_t>& counts,
            const std::vector<std::size_t>& offsets, MPI_Comm comm, int rank, int size, double timeout)
      : counts_(to_ints(counts, "a gather")),
        offsets_(to_ints(offsets, "an offset")),
        comm_(comm),
        rank_(rank),
        size_(size),
        timeout_(timeout),
        deadline_(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout))) {
    std::lock_guard<std::mutex> lock(g_mpi);
    check(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer, counts_.data(), offsets_.data(), unit_type(unit),
                          comm, &request_),
          "MPI_Iallgatherv");
  }
  ~MpiGather() override {
    // A gather still in flight is only left behind on the way out (an interrupt, a failure).
    if (!done_) {
      std::lock_guard<std::mutex> lock(g_mpi);
      int flag = 0;
      MPI_Test(&request_, &flag, MPI_STATUS_IGNORE);
    }
  }
  bool test() override {
    if (done_) return true;
    {
      std::lock_guard<std::mutex> lock(g_mpi);
      int flag = 0;
      check(MPI_Test(&request_, &flag, MPI_STATUS_IGNORE), "MPI_Test");
      done_ = flag != 0;
    }
    if (!done_ && Clock::now() > deadline_)
      give_up_waiting(comm_, rank_, size_, timeout_, "the exchange of positions between steps (an all-gather)");
    return done_;
  }

 private:
  std::vector<int> counts_, offsets_;  // must live until the gather completes
  MPI_Request request_ = MPI_REQUEST_NULL;
  bool done_ = false;
  MPI_Comm comm_;
  int rank_, size_;
  double timeout_;
  Clock::time_point deadline_;
};

// The processes of one communicator, which this object owns (the duplicate ranks_for made) and
// frees. As the world (`world`), it is also core/ranks.h's world for as long as it lives, and
// finalises MPI at the end.
class MpiRanks final : public Ranks {
 public:
  MpiRanks(MPI_Comm comm, double timeout, bool world) : comm_(comm), timeout_(timeout), world_(world) {
    try {
      {
        std::lock_guard<std::mutex> lock(g_mpi);
        MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &size_);
        MPI_Comm node;
        check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
        MPI_Comm_rank(node, &local_rank_);
        MPI_Comm_size(node, &local_size_);
        MPI_Comm_free(&node);
        char name[MPI_MAX_PROCESSOR_NAME] = {};
        int length = 0;
        MPI_Get_processor_name(name, &length);
        host_ = std::string(name, std::size_t(length));
      }
      auto const hosts = all_gather(host_);
      hosts_ = std::set<std::string>(hosts.begin(), hosts.end()).size();
    } catch (...) {
      std::lock_guard<std::mutex> lock(g_mpi);
      MPI_Comm_free(&comm_);
      throw;
    }
    if (world_) set_world(this);
  }
  ~MpiRanks() override {
    if (world_) set_world(nullptr);
    std::lock_guard<std::mutex> lock(g_mpi);
    // A communicator handed in by a caller may outlive MPI itself (mpi4py finalises it at the
    // interpreter's exit, perhaps before the last simulation goes): nothing is left to free then.
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
    if (world_ && !finalized) MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  std::string host() const override { return host_; }
  std::string describe() const override {
    return "MPI, " + std::to_string(size_) + (size_ == 1 ? " rank" : " ranks") + " on " + std::to_string(hosts_) +
           (hosts_ == 1 ? " host" : " hosts");
  }

  std::vector<std::string> all_gather(const std::string& mine) const override {
    static constexpr const char* what = "a collective call that agrees on options, outcomes or plans (an all-gather)";
    int const length = int(mine.size());
    std::vector<int> lengths(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
    MPI_Request request = MPI_REQUEST_NULL;
    {
      std::lock_guard<std::mutex> lock(g_mpi);
      check(MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_, &request),
            "MPI_Iallgather");
    }
    wait_bounded(comm_, request, rank_, size_, timeout_, what);
    std::size_t total = 0;
    for (int r = 0; r < size_; ++r) {
      offsets[std::size_t(r)] = int(total);
      total += std::size_t(lengths[std::size_t(r)]);
    }
    std::string all(total, '\0');
    {
      std::lock_guard<std::mutex> lock(g_mpi);
      check(MPI_Iallgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                            comm_, &request),
            "MPI_Iallgatherv");
    }
    wait_bounded(comm_, request, rank_, size_, timeout_, what);
    std::vector<std::string> out;
    for (int r = 0; r < size_; ++r)
      out.push_back(all.substr(std::size_t(offsets[std::size_t(r)]), std::size_t(lengths[std::size_t(r)])));
    return out;
  }

  void all_gather_in_place(void* buffer, std::size_t unit, const std::vector<std::size_t>& counts,
                           const std::vector<std::size_t>& offsets) const override {
    auto const c = to_ints(counts, "a gather");
    auto const o = to_ints(offsets, "an offset");
    MPI_Request request = MPI_REQUEST_NULL;
    {
      std::lock_guard<std::mutex> lock(g_mpi);
      check(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer, c.data(), o.data(), unit_type(unit),
                            comm_, &request),
            "MPI_Iallgatherv");
    }
    wait_bounded(comm_, request, rank_, size_, timeout_, "a gather of every rank's bodies or results (an all-gather)");
  }

  std::unique_ptr<PendingGather> start_all_gather(void* buffer, std::size_t unit,
                                                  const std::vector<std::size_t>& counts,
                                                  const std::vector<std::size_t>& offsets) const override {
    return std::make_unique<MpiGather>(buffer, unit, counts, offsets, comm_, rank_, size_, timeout_);
  }

  int max(int value) const override {
    int out = 0;
    MPI_Request request = MPI_REQUEST_NULL;
    {
      std::lock_guard<std::mutex> lock(g_mpi);
      check(MPI_Iallreduce(&value, &out, 1, MPI_INT, MPI_MAX, comm_, &request), "MPI_Iallreduce");
    }
    wait_bounded(comm_, request, rank_, size_, timeout_,
                 "a collective call that agrees on interrupts, step counts or the end of the run (a maximum)");
    return out;
  }

  [[noreturn]] void abort(int exit_code) const override {
    // No lock: another thread may hold it inside a call that will never return.
    MPI_Abort(comm_, exit_code);
    std::_Exit(exit_code);
  }

 private:
  MPI_Comm comm_;   // this object's own duplicate
  double timeout_;  // seconds a collective call may wait for the other ranks
  bool world_;      // core/ranks.h's world, and MPI finalised with it
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::size_t hosts_ = 1;
  std::string host_;
};

// An MPI_Comm from its value as an integer: a pointer in Open MPI, an int in MPICH.
template <class Comm>
Comm comm_from_handle(std::uintptr_t handle) {
  if constexpr (std::is_pointer_v<Comm>) {
    return reinterpret_cast<Comm>(handle);
  } else {
    return static_cast<Comm>(handle);
  }
}

const char* thread_level_name(int level) {
  if (level == MPI_THREAD_SINGLE) return "MPI_THREAD_SINGLE";
  if (level == MPI_THREAD_FUNNELED) return "MPI_THREAD_FUNNELED";
  if (level == MPI_THREAD_SERIALIZED) return "MPI_THREAD_SERIALIZED";
  return "MPI_THREAD_MULTIPLE";
}

// The ranks of `comm`, over a duplicate of it; the world's when `world`.
std::unique_ptr<Ranks> ranks_for(MPI_Comm comm, bool world) {
  double const timeout = rank_timeout_from_environment();
  MPI_Comm own = MPI_COMM_NULL;
  {
    std::lock_guard<std::mutex> lock(g_mpi);
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized)
      throw InputError(std::string("MPI communicator: MPI is ") + (finalized ? "finalised" : "not initialised") +
                       "; initialise it (mpi4py: from mpi4py import MPI) before handing in a communicator");
    if (comm == MPI_COMM_NULL) throw InputError("MPI communicator: MPI_COMM_NULL; give one the simulation's ranks share");
    int inter = 0;
    check(MPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
    if (inter) throw InputError("MPI communicator: an intercommunicator; give an intracommunicator (MPI_COMM_WORLD, or one made by split)");
    // The simulation's communication thread makes calls while the caller's thread may make others.
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_SERIALIZED)
      throw InputError(std::string("MPI communicator: MPI was initialised with ") + thread_level_name(level) +
                       "; nbody calls MPI from more than one thread and needs MPI_THREAD_SERIALIZED or more "
                       "(mpi4py's default, mpi4py.rc.thread_level = \"multiple\", provides it)");
  }
  // The duplicate is a collective call of `comm`'s ranks: one that never makes it (its simulation refused before, a
  // rank given no communicator) would hold the others in a blocking MPI_Comm_dup for ever. Bounded as every later
  // wait is.
  MPI_Request request = MPI_REQUEST_NULL;
  int rank = 0, size = 1;
  {
    std::lock_guard<std::mutex> lock(g_mpi);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    check(MPI_Comm_idup(comm, &own, &request), "MPI_Comm_idup");
  }
  wait_bounded(comm, request, rank, size, timeout,
               "making a simulation over the communicator (every rank makes it, with the same comm)");
  return std::make_unique<MpiRanks>(own, timeout, world);
}

// MPI_Init waits for every rank of the job to start (the launcher's fence), and no MPI call can bound that wait: a
// rank stopped before it (SIGSTOP, a debugger, a node that hangs) would keep the others in it for ever, silent. A
// watchdog thread gives the wait the bound every later one has, and at it says what it waited for and ends this
// rank (no MPI call can end the job yet: the launcher ends the others when a rank exits without MPI_Finalize; one of
// Open MPI 4.1's, ended in its own start-up handshake by a bound of a few hundredths of a second, was seen to hang).
// The bound is NBODY_INIT_TIMEOUT's, at least 300 s by default: a large job's start is not a hang.
class InitWatchdog {
 public:
  explicit InitWatchdog(double seconds) : thread_([this, seconds] { watch(seconds); }) {}
  ~InitWatchdog() {
    {
      std::lock_guard<std::mutex> const lock(mutex_);
      done_ = true;
    }
    ready_.notify_all();
    thread_.join();
  }
  InitWatchdog(const InitWatchdog&) = delete;
  InitWatchdog& operator=(const InitWatchdog&) = delete;

 private:
  void watch(double seconds) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (ready_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) return;
    std::fprintf(stderr,
                 "error: rank %d of %d: waited %g s in MPI_Init for the other ranks of the job to start; a rank has "
                 "stopped or hangs (NBODY_INIT_TIMEOUT sets this bound in seconds); ending the job\n",
                 launcher_world_rank(), launcher_world_size(), seconds);
    std::fflush(nullptr);
    std::_Exit(1);
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

bool mpi_built() { return true; }

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  return std::string(text, std::size_t(length));
}

std::unique_ptr<Ranks> ranks_for_handle(std::uintptr_t comm) { return ranks_for(comm_from_handle<MPI_Comm>(comm), false); }

std::unique_ptr<Ranks> start(int& argc, char**& argv) {
  if (!launched_by_mpi()) return nullptr;
  // Bad values are refused before MPI starts.
  double const timeout = init_timeout_from_environment(rank_timeout_from_environment());
  int provided = 0;
  {
    InitWatchdog const bounded(timeout);
    check(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  }
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw RuntimeFailure("MPI: this MPI library cannot be called from more than one thread (MPI_THREAD_SERIALIZED)");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  try {
    return ranks_for(MPI_COMM_WORLD, true);
  } catch (...) {
    MPI_Finalize();
    throw;
  }
}

}  // namespace nbody::mpi
