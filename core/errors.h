// core/errors.h - the exception types the program distinguishes when it reports and exits.
#pragma once

#include <stdexcept>
#include <string>

namespace nbody {

// Bad input from the user: an option value, a file, a size. `main` prints it and exits with 2.
struct InputError : std::runtime_error {
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

// A failure of the machine or a library (CUDA, I/O after validation): exit code 1.
struct RuntimeFailure : std::runtime_error {
  explicit RuntimeFailure(const std::string& what) : std::runtime_error(what) {}
};

// A failure raised between whole steps (hermite4's step below the floor): the run cannot go on, but the state it
// stopped at is whole, and is what a run should save. (A start step below the floor comes before there is one.)
struct StoppedWhole : RuntimeFailure {
  explicit StoppedWhole(const std::string& what) : RuntimeFailure(what) {}
};

}  // namespace nbody
