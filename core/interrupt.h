// core/interrupt.h - Ctrl-C and the termination signals, turned into a flag that long work polls.
//
// The first SIGINT, SIGTERM or SIGHUP (handled as SIGTERM) is recorded; every mode stops at its
// next safe point (between steps, chunks of steps or kernel launches), writes what it must keep,
// and exits with 128 + the signal: 130 for Ctrl-C, 143 for SIGTERM and SIGHUP. A second one ends
// the process at once, from the handler, with the same status. Header-only: the flag is one
// process-wide atomic, which a signal handler may set (it is lock-free).
#pragma once

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <string>

namespace nbody {

// Thrown at a safe point after a signal arrived; main() turns it into the exit status.
struct Interrupted : std::runtime_error {
  explicit Interrupted(int sig)
      : std::runtime_error(sig == SIGINT ? "interrupted (Ctrl-C)" : "terminated (SIGTERM)"), signal(sig) {}
  int signal;
};

namespace detail {
inline std::atomic<int> interrupt_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" inline void on_interrupt_signal(int sig) {
  int const recorded = sig == SIGINT ? SIGINT : SIGTERM;
  if (interrupt_signal.exchange(recorded) != 0) _exit(128 + recorded);  // the second one: at once
}
}  // namespace detail

// Installs the handlers for SIGINT, SIGTERM and SIGHUP, without SA_RESTART, so a blocking call
// returns (EINTR) instead of waiting on after the signal.
inline void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = detail::on_interrupt_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &action, nullptr);
}

// The signal that arrived (SIGINT or SIGTERM), or 0.
inline int interrupt_signal() { return detail::interrupt_signal.load(std::memory_order_relaxed); }

// Records an interrupt as a signal would (for front ends with their own way to stop, and tests).
inline void request_interrupt(int sig = SIGINT) { detail::interrupt_signal.store(sig == SIGINT ? SIGINT : SIGTERM); }

// Throws Interrupted if a signal arrived.
inline void throw_if_interrupted() {
  if (int const sig = interrupt_signal()) throw Interrupted(sig);
}

// The exit status for a signal: 128 + its number.
inline int interrupted_exit_code(int sig) { return 128 + sig; }

}  // namespace nbody
