// core/ranks.h - the processes one run is spread over (MPI ranks), as the layers above see them.
//
// Everything above core/ talks to other processes only through this interface: the simulation
// gathers its state and exchanges slices, the front end agrees on errors and interrupts. A process
// started without a launcher is one rank (solo_ranks()); mpi/ implements the interface on MPI.
// Collective calls must be made by every rank in the same order, like their MPI counterparts.
// Calls may come from several threads; implementations serialise them.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace nbody {

// A gather started but not finished (a non-blocking collective); see Ranks::start_all_gather.
class PendingGather {
 public:
  virtual ~PendingGather() = default;
  // True once every rank's piece has arrived; never waits.
  virtual bool test() = 0;
};

class Ranks {
 public:
  virtual ~Ranks() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_rank() const = 0;  // among the ranks on this host
  virtual int local_size() const = 0;
  virtual std::string host() const = 0;
  virtual std::string describe() const = 0;  // "MPI, 4 ranks on 2 hosts" or "one process"

  // Every rank's `mine`, in rank order, on every rank.
  virtual std::vector<std::string> all_gather(const std::string& mine) const = 0;
  // In place: rank r's piece is `counts[r]` units of `unit` bytes at `offsets[r]` units into
  // `buffer`; on return every rank's `buffer` holds every piece.
  virtual void all_gather_in_place(void* buffer, std::size_t unit, const std::vector<std::size_t>& counts,
                                   const std::vector<std::size_t>& offsets) const = 0;
  // The same without waiting: `buffer` must stay untouched until the gather has completed.
  virtual std::unique_ptr<PendingGather> start_all_gather(void* buffer, std::size_t unit,
                                                          const std::vector<std::size_t>& counts,
                                                          const std::vector<std::size_t>& offsets) const = 0;
  // The largest of every rank's `value` (an interrupt seen anywhere, a failure anywhere).
  virtual int max(int value) const = 0;
  // Ends every rank of the run at once (a failure that the others cannot learn of in time).
  [[noreturn]] virtual void abort(int exit_code) const = 0;
};

// A failure every rank of the run knows of (see agree()): each rank throws it, and only rank 0
// needs to report it. `exit_code` is what the failure would have exited with alone (2 for bad input).
struct JobFailure : std::runtime_error {
  JobFailure(const std::string& what, int code) : std::runtime_error(what), exit_code(code) {}
  int exit_code;
};

// Runs `step` (work without collective calls) on every rank, then makes the ranks agree on how it
// went: if it threw on any rank, every rank throws JobFailure with the lowest failing rank's
// message (naming that rank when not every rank failed alike). So a failure on one rank ends every
// rank cleanly instead of leaving the others waiting in the next collective call. With one rank,
// `step` runs as it is and its exceptions pass unchanged. An interrupt on any rank (Interrupted thrown by `step`)
// comes before failures: every rank then throws Interrupted with that signal and `every_rank` set.
void agree(const Ranks& ranks, const std::function<void()>& step);

// The interrupt the ranks agree on (collective): the signal recorded on any rank (SIGTERM over SIGINT, as max), or
// 0. Every rank then names the same signal as the one that came (name_came_signal), that of the rank where it was
// recorded: a SIGUSR1 sent to one rank alone is named as such by rank 0, which says it. With one rank: this
// process's own.
int agreed_interrupt(const Ranks& ranks);

// This process alone.
const Ranks& solo_ranks();

// The ranks this process runs with: the MPI world once mpi/ has started it, otherwise solo_ranks().
const Ranks& world();
// Set by the MPI start-up (mpi/mpi_ranks.h); the ranks must outlive every user.
void set_world(const Ranks* ranks);

// What this process does before it ends a job whose ranks can no longer agree (a wait for the others past its bound:
// one stopped or hangs): the run in progress saves the last state it kept (driver::run), which no collective call
// can do then, and its front end reports why the job ended. Registered for the life of the object (one at a time: a
// later one replaces it until it goes); run at most once, by last_words(why), on the thread that gave up, which may
// hold the ranks' own locks: it must make no call of Ranks, and what it reads must be guarded against the thread that
// runs the job. `why`: the give-up's one line ("rank 0 of 2: waited 3 s for the other ranks in ...").
class LastWords {
 public:
  explicit LastWords(std::function<void(const std::string& why)> say);
  ~LastWords();
  LastWords(const LastWords&) = delete;
  LastWords& operator=(const LastWords&) = delete;

 private:
  std::function<void(const std::string&)> previous_;
};
// For implementations of Ranks, just before they end the job: runs the registered LastWords, if any, once. A failure
// in it is said on stderr and passes no further.
void last_words(const std::string& why);

}  // namespace nbody
