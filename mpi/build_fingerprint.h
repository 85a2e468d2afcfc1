// mpi/build_fingerprint.h - what makes two nbody builds compute the same bits, and the check that
// every rank of a run was started with the same build and the same options.
#pragma once

#include <string>

#include "core/ranks.h"

namespace nbody::mpi {

// One line of "key=value" fields separated by "; ": nbody's version, the C++ compiler and its
// version, the build type and compile flags, the CPU target of the vectorised force path (the
// instruction-set extensions -march=native chose, or the portable baseline) and the CUDA compiler,
// architectures and flags (or no CUDA). Two builds whose results may differ in the last bit differ
// here; the same build on two hosts gives the same line.
const char* build_fingerprint();
// The fingerprint's fields with the sources' commit after the version ("version=0.1.0; commit=1a2b3c4d5e6f;
// compiler=GNU 12.2.0; ..."), which --version and every --json report give: the build a number came from. The commit
// (cmake/source_commit.cmake: "-modified." and a hash of the difference where the tree differs from it, "unknown"
// outside a git checkout of its own) is no part of the fingerprint ranks compare: the same code built on a host
// without git is the same build.
std::string build_description();

// Every rank's build fingerprint and arguments (argv[1..]) must be rank 0's: otherwise every rank
// throws JobFailure (exit code 2) naming the ranks and what differs, before any work. One rank:
// nothing to compare.
void check_same_build_and_options(const Ranks& ranks, int argc, char** argv);

}  // namespace nbody::mpi
