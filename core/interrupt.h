// core/interrupt.h - Ctrl-C and the termination signals, turned into a flag that long work polls.
//
// The first SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 or SIGXCPU is recorded (the last four handled as SIGTERM;
// its message names the one that came); every mode stops at its next safe point (between steps, chunks of steps or
// kernel launches), writes what it must keep, and exits with 128 + the signal: 130 for Ctrl-C, 143 for the others.
// Batch systems send SIGUSR1 or SIGUSR2 ahead of a job's time limit (Slurm's --signal, PBS's and LSF's warnings) and
// the kernel sends SIGXCPU at a CPU-time soft limit: each is the warning before the kill, so the run saves and stops.
// A second Ctrl-C (SIGINT) after any of them ends the process at once, from the handler, with 130, after one line
// saying what that skips (set_second_interrupt_note): a person at the terminal who will not wait. One within 25 ms of
// the first is the first delivered twice. The others never count as a second request: they come from launchers and
// batch systems (mpirun forwards a SIGTERM that Slurm also sent each rank; SIGTERM follows a SIGUSR1 warning; the
// kernel repeats SIGXCPU every second of CPU time past the soft limit), and a second one would throw away the very
// save it warns of. SIGQUIT (Ctrl-\) and SIGKILL still end the process at once.
// SIGHUP, SIGUSR1, SIGUSR2 and SIGXCPU that the process was started with ignored (nohup, `trap '' USR1`) stay
// ignored: the one who started it asked for that.
// Header-only: the flag is one process-wide atomic, which a signal handler may set (it is lock-free).
#pragma once

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace nbody {

namespace detail {
inline std::atomic<int> interrupt_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free flag");
inline std::atomic<int> came_as{0};  // the signal that came, where it is recorded as SIGTERM (the message names it)
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler sets it");

// The line a second signal prints before the exit, in fixed buffers: the handler may only write(2)
// it. Two buffers: a new line is written into the one not shown, then published, so a handler that
// runs meanwhile (on another thread) writes the old line whole, unless two more updates come
// during its write (then the line may be torn: harmless on the way to _exit).
struct SecondNote {
  char text[1024];
  std::size_t length;
};
inline SecondNote second_notes[2];
inline std::atomic<int> second_note_shown{-1};  // index into second_notes; -1: none
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads which note is shown");

// A signal that follows the first within this time is the first again, delivered twice: `timeout`, job schedulers
// and process managers signal a process and then its process group, microseconds apart, and the handler may run for
// each. A person's second Ctrl-C comes later.
inline constexpr long long kRepeatNanoseconds = 25'000'000;
inline std::atomic<long long> first_signal_ns{0};  // when the recorded signal came (0: not known yet)
static_assert(std::atomic<long long>::is_always_lock_free, "the signal handler sets it");
inline long long monotonic_ns() {  // clock_gettime is async-signal-safe
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// Temporary files a second signal removes before the process ends at once: write(2), unlink(2) and _exit are all a
// handler may call. A slot is 0 free, 1 being filled, 2 shown to the handler. A path too long, or a seventeenth
// file at once, is not registered: that file is left behind as before.
inline constexpr int kTemporarySlots = 16;
struct TemporarySlot {
  char path[4096];
  std::atomic<int> state{0};
};
inline TemporarySlot temporary_slots[kTemporarySlots];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads the slots' states");

// The second signal's exit status, for the alarm that ends the process where its line would block.
inline std::atomic<int> exit_status{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handlers read it");
inline constexpr unsigned kSecondNoteSeconds = 2;
extern "C" inline void exit_on_alarm(int) { _exit(exit_status.load()); }

extern "C" inline void on_interrupt_signal(int sig) {
  int const recorded = sig == SIGINT ? SIGINT : SIGTERM;
  long long const now = monotonic_ns();
  if (interrupt_signal.load() == 0) {  // before the flag that makes them read
    came_as.store(sig);
    first_signal_ns.store(now);
  }
  int none = 0;
  if (interrupt_signal.compare_exchange_strong(none, recorded)) return;  // the first: recorded
  if (sig != SIGINT) return;  // a launcher's or batch system's, not a person's insistence
  long long const first = first_signal_ns.load();
  if (first == 0) {  // its time cleared since it came (clear_interrupt): this one's stands for it
    first_signal_ns.store(now);
    return;
  }
  if (now - first < kRepeatNanoseconds) return;  // the first again
  // the second one: at once, saying what it skips. The temporary files go first; the line may not hold the exit up
  // (a stalled terminal or ssh session, a pipe no one reads, where the first signal's work is stuck too): it is
  // written only where stderr takes it now, and should the write block all the same, an alarm ends the process with
  // the same status (poll, sigaction, pthread_sigmask, alarm: all async-signal-safe).
  for (TemporarySlot& slot : temporary_slots)
    if (slot.state.load(std::memory_order_acquire) == 2) ::unlink(slot.path);
  exit_status.store(128 + recorded);
  struct sigaction on_alarm {};
  on_alarm.sa_handler = exit_on_alarm;
  sigemptyset(&on_alarm.sa_mask);
  sigaction(SIGALRM, &on_alarm, nullptr);
  sigset_t alarm_only;  // a mask inherited from a launcher may block it
  sigemptyset(&alarm_only);
  sigaddset(&alarm_only, SIGALRM);
  pthread_sigmask(SIG_UNBLOCK, &alarm_only, nullptr);
  alarm(kSecondNoteSeconds);
  pollfd err{STDERR_FILENO, POLLOUT, 0};
  if (int const shown = second_note_shown.load(std::memory_order_acquire);
      shown >= 0 && ::poll(&err, 1, 0) == 1 && (err.revents & POLLOUT) != 0) {
    ssize_t const written = write(STDERR_FILENO, second_notes[shown].text, second_notes[shown].length);
    (void)written;  // nothing to do about a failed write on the way out
  }
  _exit(128 + recorded);
}
}  // namespace detail

// A temporary file (an output being written, before its rename into place) that a second signal's immediate exit
// removes, as its owner would on any other way out. Forgotten when destroyed or released (renamed into place,
// or removed by its owner).
class RemovedAtSecondInterrupt {
 public:
  explicit RemovedAtSecondInterrupt(const std::string& path) {
    if (path.size() >= sizeof detail::temporary_slots[0].path) return;
    for (int i = 0; i < detail::kTemporarySlots; ++i) {
      int free = 0;
      if (!detail::temporary_slots[i].state.compare_exchange_strong(free, 1)) continue;
      std::memcpy(detail::temporary_slots[i].path, path.c_str(), path.size() + 1);
      detail::temporary_slots[i].state.store(2, std::memory_order_release);
      slot_ = i;
      return;
    }
  }
  RemovedAtSecondInterrupt(RemovedAtSecondInterrupt&& other) noexcept : slot_(std::exchange(other.slot_, -1)) {}
  RemovedAtSecondInterrupt(const RemovedAtSecondInterrupt&) = delete;
  RemovedAtSecondInterrupt& operator=(const RemovedAtSecondInterrupt&) = delete;
  RemovedAtSecondInterrupt& operator=(RemovedAtSecondInterrupt&&) = delete;
  ~RemovedAtSecondInterrupt() { release(); }
  void release() {
    if (slot_ >= 0) detail::temporary_slots[slot_].state.store(0, std::memory_order_release);
    slot_ = -1;
  }

 private:
  int slot_ = -1;
};

// Thrown at a safe point after a signal arrived; main() turns it into the exit status. `every_rank`: thrown by every
// rank of the job at the same point, after they agreed on the signal (a collective call), so that the job can end as
// a whole rather than be aborted by the rank that noticed it.
struct Interrupted : std::runtime_error {
  explicit Interrupted(int sig, bool on_every_rank = false)
      : std::runtime_error(what_came(sig)), signal(sig), every_rank(on_every_rank) {}
  static const char* what_came(int sig) {
    if (sig == SIGINT) return "interrupted (Ctrl-C)";
    switch (detail::came_as.load()) {
      case SIGHUP: return "terminated (SIGHUP, hang-up)";
      case SIGUSR1: return "terminated (SIGUSR1, the batch system's warning)";
      case SIGUSR2: return "terminated (SIGUSR2, the batch system's warning)";
      case SIGXCPU: return "terminated (SIGXCPU, the CPU time limit)";
      default: return "terminated (SIGTERM)";
    }
  }
  int signal;
  bool every_rank;
};

// The signals that stop a run (see the top of this file).
inline constexpr int kInterruptSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGXCPU};

// Installs the handlers for the signals above, without SA_RESTART, so a blocking call returns (EINTR) instead of
// waiting on after the signal.
inline void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = detail::on_interrupt_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  for (int sig : kInterruptSignals) {
    struct sigaction before {};
    if (sig != SIGINT && sig != SIGTERM && sigaction(sig, nullptr, &before) == 0 && before.sa_handler == SIG_IGN)
      continue;  // ignored by whoever started the process (nohup, a job script's trap ''): left so
    sigaction(sig, &action, nullptr);
  }
}

// Sets the line a second signal prints before ending the process at once (a newline is added),
// e.g. "nbody: second interrupt: exiting now; --checkpoint run.h5 is not written". Long text is cut
// to the buffer. Call it from one thread, before and during the work, as what is left to write
// changes; "" prints nothing.
inline void set_second_interrupt_note(const std::string& text) {
  if (text.empty()) {
    detail::second_note_shown.store(-1, std::memory_order_release);
    return;
  }
  int const next = detail::second_note_shown.load(std::memory_order_relaxed) == 0 ? 1 : 0;
  detail::SecondNote& note = detail::second_notes[next];
  std::size_t const n = std::min(text.size(), sizeof note.text - 1);
  std::memcpy(note.text, text.data(), n);
  note.text[n] = '\n';
  note.length = n + 1;
  detail::second_note_shown.store(next, std::memory_order_release);
}

// The signal that arrived (SIGINT or SIGTERM), or 0.
inline int interrupt_signal() { return detail::interrupt_signal.load(std::memory_order_relaxed); }

// The signal that came (SIGUSR1, say, recorded as SIGTERM: the one the message names), or 0.
inline int came_signal() { return detail::came_as.load(); }
// Names `sig` as the signal that came, where the ranks of a job agreed on one that came to another rank
// (agreed_interrupt, core/ranks.h): every rank's message then names the same signal.
inline void name_came_signal(int sig) { detail::came_as.store(sig); }

// Forgets an interrupt that was answered, for a front end that goes on after one (Python's run).
inline void clear_interrupt() {
  detail::interrupt_signal.store(0, std::memory_order_relaxed);
  detail::came_as.store(0);
  detail::first_signal_ns.store(0);  // a signal recorded in between: the next one takes its time (see the handler)
}

// Records an interrupt as a signal would (for front ends with their own way to stop, and tests).
inline void request_interrupt(int sig = SIGINT) {
  detail::came_as.store(sig);
  detail::first_signal_ns.store(detail::monotonic_ns());
  detail::interrupt_signal.store(sig == SIGINT ? SIGINT : SIGTERM);
}

// Throws Interrupted if a signal arrived.
inline void throw_if_interrupted() {
  if (int const sig = interrupt_signal()) throw Interrupted(sig);
}

// The exit status for a signal: 128 + its number.
inline int interrupted_exit_code(int sig) { return 128 + sig; }

}  // namespace nbody
