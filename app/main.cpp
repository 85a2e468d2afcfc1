// app/main.cpp - the nbody executable: parse options, pick the mode, report errors.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <stdexcept>

#include "app/modes.h"
#include "app/options.h"
#include "core/console.h"
#include "core/errors.h"
#include "core/interrupt.h"
#include "core/ranks.h"
#include "mpi/build_fingerprint.h"
#include "mpi/mpi_ranks.h"

namespace {

int dispatch(nbody::app::Options& o) {
  using nbody::app::Mode;
  switch (o.mode) {
    case Mode::automatic:
      return nbody::app::run_default_mode(o);
    case Mode::viewer:
      return nbody::app::run_viewer(o);
    case Mode::serve:
      return nbody::app::run_serve(o);
    case Mode::run:
      return nbody::app::run_simulation(o);
    case Mode::benchmark:
      return nbody::app::run_benchmark(o);
    case Mode::validate:
      return nbody::app::run_validate(o);
    case Mode::devices:
      return nbody::app::run_devices(o);
    case Mode::compare_threading:
      return nbody::app::run_compare_threading(o);
  }
  return 1;
}

// Reports a failure and gives its exit code. Alone, that is all. In a run of several ranks only this
// rank knows of it, and the others may be waiting for it in a collective call: the whole run ends
// here (MPI_Abort), with the message naming the rank.
int fail(const nbody::Ranks& ranks, const std::string& message, int code) {
  if (ranks.size() == 1) {
    std::fprintf(stderr, "error: %s\n", nbody::one_line(message).c_str());
    return code;
  }
  std::fprintf(stderr, "error: rank %d of %d (%s): %s\n", ranks.rank(), ranks.size(), ranks.host().c_str(),
               nbody::one_line(message).c_str());
  std::fflush(nullptr);
  ranks.abort(code);
  return code;
}

// What ran out of memory, as far as the command line tells: the mode and where the bodies came from.
// Fewer --bodies is suggested only to a user who gave --bodies.
std::string out_of_memory(const std::optional<nbody::app::Options>& o) {
  using nbody::app::Mode;
  if (!o) return "out of memory while reading the command line";
  const char* mode = "";
  switch (o->mode) {
    case Mode::automatic: mode = "the default mode"; break;
    case Mode::viewer: mode = "the viewer"; break;
    case Mode::serve: mode = "--serve"; break;
    case Mode::run: mode = "--run"; break;
    case Mode::benchmark: mode = "--benchmark"; break;
    case Mode::validate: mode = "--validate"; break;
    case Mode::devices: mode = "--devices"; break;
    case Mode::compare_threading: mode = "--compare-threading"; break;
  }
  auto const& initial = o->run.initial;
  std::string const from = !initial.checkpoint.empty() ? "with --restart " + initial.checkpoint
                           : !initial.snapshot.empty() ? "with --load " + initial.snapshot
                           : o->sizes.empty()          ? std::string("with the default number of bodies")
                                                       : "with --bodies " + std::to_string(o->sizes.back());
  return std::string("out of memory (") + mode + " " + from + (o->sizes.empty() ? ")" : "; try fewer --bodies)");
}

// The exit code of a mode that ended with `code`, its report on stdout considered: the report is the mode's result
// (a benchmark's figures, a run's energies), so one that could not be written all (a full disk under `> log`,
// /dev/full, a reader that went away) fails a mode that would otherwise have succeeded, said on stderr.
int report_written(int code) {
  std::cout.flush();
  bool const whole = std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout.good();
  int const err = nbody::console_error();
  if (whole || code != 0) return code;
  std::fprintf(stderr,
               "error: the report on standard output was not written whole (%s); the files it wrote are whole\n",
               err ? std::strerror(err) : "a write to it failed");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // reports reach a file or a pipe line by line, as they happen
  // A write past a file-size limit (ulimit -f, a batch system's) then fails with EFBIG, as one onto a full disk
  // does: that output is refused by name and the others are written. The signal would end the process with its
  // outputs half written and its temporary files left.
  std::signal(SIGXFSZ, SIG_IGN);
  // A reader of the report that went away (`| tee log` ended by the Ctrl-C or the scheduler's SIGTERM that also
  // reaches nbody, `| head`) makes the next write fail with EPIPE instead of ending nbody between its outputs: the
  // checkpoint, the tipsy file, the series and --json are still written (report_written says the rest).
  std::signal(SIGPIPE, SIG_IGN);
  // From the start: a signal during MPI's start-up (a few hundred milliseconds under mpirun) is recorded and answered
  // at the first safe point, with the usual line and status, rather than ending the process by the signal's default
  // (SIGXCPU's dumps core) before a word is said. Installed again below, past MPI's start, which may install its own.
  nbody::install_interrupt_handlers();
  std::unique_ptr<nbody::Ranks> mpi;
  try {
    mpi = nbody::mpi::start(argc, argv);
  } catch (const std::exception& e) {
    // Before MPI starts (a bad NBODY_RANK_TIMEOUT, which every rank reads alike): rank 0 says it, as later errors.
    if (nbody::mpi::launcher_world_rank() <= 0) std::fprintf(stderr, "error: %s\n", nbody::one_line(e.what()).c_str());
    return dynamic_cast<const nbody::InputError*>(&e) ? 2 : 1;
  }
  nbody::Ranks const& ranks = nbody::world();
  bool const several = ranks.size() > 1;
  // Rank 0 reports; the others' reports would repeat it (their errors still reach stderr).
  if (ranks.rank() != 0 && !std::freopen("/dev/null", "w", stdout)) return 1;
  nbody::make_console_interruptible();  // a stalled terminal does not hold up an interrupted run's outputs
  std::optional<nbody::app::Options> options;
  try {
    // Every rank must run the same build with the same options: refused before any work otherwise.
    if (several) nbody::mpi::check_same_build_and_options(ranks, argc, argv);
    nbody::agree(ranks, [&] { options = nbody::app::parse_options(argc, argv); });
    if (!options) {
      // --help, --version: the report is all they do, and a reader that took what it wanted and went away (`| head`,
      // `| grep -m1`) has it; another failure (a full disk) is said.
      std::cout.flush();
      std::fflush(stdout);
      return nbody::console_error() == EPIPE ? 0 : report_written(0);
    }
    nbody::app::note_unwritten_outputs(*options);
    nbody::install_interrupt_handlers();
    nbody::agree(ranks, [&] {
      if (ranks.rank() != 0) return;  // rank 0 writes every output
      nbody::app::check_outputs(*options);
      nbody::app::lock_reports(*options);
    });
    int const code = report_written(dispatch(*options));
    if (several) ranks.max(0);  // no rank finalises MPI while another still needs it
    return code;
  } catch (const nbody::JobFailure& e) {
    // Every rank knows of it: rank 0 says it once, and the ranks end together.
    if (ranks.rank() == 0) std::fprintf(stderr, "error: %s\n", nbody::one_line(e.what()).c_str());
    return e.exit_code;
  } catch (const nbody::Interrupted& e) {
    // An interrupt that reaches here ended a mode before it wrote its outputs (a start-up phase, a benchmark): those
    // it leaves unwritten are named.
    std::string const unwritten = nbody::app::unwritten_outputs();
    if (ranks.rank() == 0 || !several)
      std::fprintf(stderr, "nbody: %s%s\n", e.what(), unwritten.empty() ? "" : ("; " + unwritten).c_str());
    if (several && !e.every_rank) {
      // This rank stops where it noticed the signal; the others may be waiting for it in the
      // exchange, and not every launcher ends them: the job ends here. (--run stops all ranks at one
      // step by itself and returns normally.)
      std::fflush(nullptr);
      nbody::app::release_reports();
      ranks.abort(nbody::interrupted_exit_code(e.signal));
    }
    // Every rank stopped at the same point: they end MPI together, as a job that finished does.
    if (several) mpi.reset();
    // Out at once: what had to be saved is saved, and the runtime's exit handlers could wait for
    // GPU work that was given up. (The reports' locks are let go and their files removed first.)
    nbody::app::release_reports();
    std::fflush(nullptr);
    std::_Exit(nbody::interrupted_exit_code(e.signal));
  } catch (const nbody::InputError& e) {
    return fail(ranks, e.what(), 2);
  } catch (const nbody::RuntimeFailure& e) {
    return fail(ranks, e.what(), 1);
  } catch (const std::bad_alloc&) {
    return fail(ranks, out_of_memory(options), 1);
  } catch (const std::length_error&) {  // a size beyond what a container can hold: the same cause
    return fail(ranks, out_of_memory(options), 1);
  } catch (const std::exception& e) {
    // Not one of nbody's own messages, which never show library internals: say what is known.
    return fail(ranks, std::string("unexpected failure (") + e.what() + "); please report it with the command line", 1);
  }
}
