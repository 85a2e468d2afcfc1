// app/main.cpp - the nbody executable: parse options, pick the mode, report errors.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <stdexcept>

#include "app/modes.h"
#include "app/options.h"
#include "core/errors.h"
#include "core/interrupt.h"

namespace {

int dispatch(nbody::app::Options& o) {
  using nbody::app::Mode;
  switch (o.mode) {
    case Mode::automatic:
      return nbody::app::run_default_mode(o);
    case Mode::viewer:
      return nbody::app::run_viewer(o);
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

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // reports reach a file or a pipe line by line, as they happen
  try {
    auto options = nbody::app::parse_options(argc, argv);
    if (!options) return 0;
    nbody::install_interrupt_handlers();
    nbody::app::check_outputs(*options);
    return dispatch(*options);
  } catch (const nbody::Interrupted& e) {
    std::fprintf(stderr, "nbody: %s\n", e.what());
    // Out at once: what had to be saved is saved, and the runtime's exit handlers could wait for
    // GPU work that was given up.
    std::fflush(nullptr);
    std::_Exit(nbody::interrupted_exit_code(e.signal));
  } catch (const nbody::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const nbody::RuntimeFailure& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: out of memory (try fewer --bodies)\n");
    return 1;
  } catch (const std::length_error&) {  // a size beyond what a container can hold: the same cause
    std::fprintf(stderr, "error: out of memory (try fewer --bodies)\n");
    return 1;
  } catch (const std::exception& e) {
    // Not one of nbody's own messages, which never show library internals: say what is known.
    std::fprintf(stderr, "error: unexpected failure (%s); please report it with the command line\n", e.what());
    return 1;
  }
}
