// mpi/build_fingerprint.cpp - the build fingerprint ranks compare before any work, and the check.
//
// This file is compiled with the CPU target of the vectorised force path (-march=native where
// NBODY_NATIVE_CPU is on: mpi/CMakeLists.txt), so the compiler's instruction-set macros below say
// what that path was built for: two hosts that each built nbody with -march=native on different
// CPUs (AVX-512 on one, AVX2 on the other) give different fingerprints.
#include "mpi/build_fingerprint.h"

#include <cstddef>
#include <vector>

#include "build_info.h"     // generated: mpi/build_info.h.in
#include "source_commit.h"  // generated at each build: cmake/source_commit.cmake
#include "core/errors.h"

#if defined(__x86_64__)
#define NBODY_CPU_ARCH "x86-64"
#elif defined(__aarch64__)
#define NBODY_CPU_ARCH "aarch64"
#else
#define NBODY_CPU_ARCH "other"
#endif
#ifdef __SSE4_2__
#define NBODY_CPU_SSE42 " sse4.2"
#else
#define NBODY_CPU_SSE42 ""
#endif
#ifdef __AVX__
#define NBODY_CPU_AVX " avx"
#else
#define NBODY_CPU_AVX ""
#endif
#ifdef __AVX2__
#define NBODY_CPU_AVX2 " avx2"
#else
#define NBODY_CPU_AVX2 ""
#endif
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
#define NBODY_CPU_FMA " fma"
#else
#define NBODY_CPU_FMA ""
#endif
#ifdef __AVX512F__
#define NBODY_CPU_AVX512F " avx512f"
#else
#define NBODY_CPU_AVX512F ""
#endif
#ifdef __AVX512DQ__
#define NBODY_CPU_AVX512DQ " avx512dq"
#else
#define NBODY_CPU_AVX512DQ ""
#endif
#ifdef __AVX512VL__
#define NBODY_CPU_AVX512VL " avx512vl"
#else
#define NBODY_CPU_AVX512VL ""
#endif
#ifdef __ARM_FEATURE_SVE
#define NBODY_CPU_SVE " sve"
#else
#define NBODY_CPU_SVE ""
#endif

namespace nbody::mpi {
namespace {

constexpr const char kPrefix[] = "nbody build fingerprint: ";

// One literal, so the whole fingerprint lies in the binary as one string.
constexpr const char kFingerprint[] =
    "nbody build fingerprint: version=" NBODY_BUILD_VERSION "; compiler=" NBODY_BUILD_COMPILER
    "; build=" NBODY_BUILD_TYPE "; flags=" NBODY_BUILD_CXX_FLAGS "; cpu=" NBODY_BUILD_NATIVE_CPU " " NBODY_CPU_ARCH
        NBODY_CPU_SSE42 NBODY_CPU_AVX NBODY_CPU_AVX2 NBODY_CPU_FMA NBODY_CPU_AVX512F NBODY_CPU_AVX512DQ
            NBODY_CPU_AVX512VL NBODY_CPU_SVE "; cuda=" NBODY_BUILD_CUDA;

// "key=value; key=value" after the prefix, as (key, value) pairs.
std::vector<std::pair<std::string, std::string>> fields(const std::string& fingerprint) {
  std::vector<std::pair<std::string, std::string>> out;
  if (fingerprint.rfind(kPrefix, 0) != 0) return out;
  std::size_t at = sizeof kPrefix - 1;
  while (at <= fingerprint.size()) {
    std::size_t end = fingerprint.find("; ", at);
    if (end == std::string::npos) end = fingerprint.size();
    std::string const field = fingerprint.substr(at, end - at);
    std::size_t const eq = field.find('=');
    out.emplace_back(field.substr(0, eq), eq == std::string::npos ? std::string() : field.substr(eq + 1));
    at = end + 2;
  }
  return out;
}

// What differs between two fingerprints, field by field: "compiler: GNU 12.2.0 on rank 0, GNU
// 13.1.0 on rank 2".
std::string differences(const std::string& first, const std::string& other, int rank) {
  auto const a = fields(first), b = fields(other);
  std::string const on_0 = " on rank 0, ", on_r = " on rank " + std::to_string(rank);
  if (b.empty()) return "its build says '" + other.substr(0, 200) + "'" + on_r;
  std::string out;
  for (std::size_t k = 0; k < std::max(a.size(), b.size()); ++k) {
    std::string const key = k < a.size() ? a[k].first : b[k].first;
    std::string const va = k < a.size() ? a[k].second : "(none)", vb = k < b.size() ? b[k].second : "(none)";
    if (va == vb) continue;
    out += (out.empty() ? "" : "; ") + key + ": " + (va.empty() ? "(none)" : va) + on_0 + (vb.empty() ? "(none)" : vb) +
           on_r;
  }
  return out.empty() ? "the fingerprints differ" : out;
}

// "rank 3", "ranks 1 and 3", "ranks 1, 2, 3, 4, 5, 6 and 9 more".
std::string rank_list(const std::vector<int>& ranks) {
  if (ranks.size() == 1) return "rank " + std::to_string(ranks[0]);
  constexpr std::size_t kNamed = 6;
  std::string out = "ranks ";
  std::size_t const named = ranks.size() > kNamed + 1 ? kNamed : ranks.size() - 1;
  for (std::size_t k = 0; k < named; ++k) out += (k ? ", " : "") + std::to_string(ranks[k]);
  if (named == ranks.size() - 1) return out + " and " + std::to_string(ranks.back());
  return out + " and " + std::to_string(ranks.size() - named) + " more";
}

// The first argument that differs: "argument 2: '100' on rank 0, '200' on rank 1".
std::string first_difference(const std::vector<std::string>& a, const std::vector<std::string>& b, int rank) {
  std::string const on_r = " on rank " + std::to_string(rank);
  for (std::size_t k = 0; k < std::max(a.size(), b.size()); ++k) {
    if (k < a.size() && k < b.size() && a[k] == b[k]) continue;
    std::string const va = k < a.size() ? "'" + a[k] + "'" : "nothing", vb = k < b.size() ? "'" + b[k] + "'" : "nothing";
    return "argument " + std::to_string(k + 1) + ": " + va + " on rank 0, " + vb + on_r;
  }
  return "the arguments differ";
}

std::vector<std::string> split_arguments(const std::string& joined) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < joined.size();) {
    std::size_t const end = joined.find('\0', at);
    out.push_back(joined.substr(at, end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

}  // namespace

// Through a volatile pointer: the compiler then cannot fold a copy of the literal into the code
// that uses it, so the binary holds the fingerprint once, as one string (`strings nbody` shows it;
// tests/mpi_cli.py changes it there to stand for another build).
const char* build_fingerprint() {
  const char* volatile text = kFingerprint;
  return text;
}

std::string build_description() {
  // The commit after the version; not in the fingerprint, which ranks built from the same code on hosts with and
  // without git (or with an unrelated edit) must share.
  std::string fields = std::string(build_fingerprint()).substr(sizeof kPrefix - 1);
  std::size_t const after_version = fields.find("; ");
  return fields.insert(after_version == std::string::npos ? fields.size() : after_version,
                       "; commit=" NBODY_SOURCE_COMMIT);
}

void check_same_build_and_options(const Ranks& ranks, int argc, char** argv) {
  if (ranks.size() == 1) return;
  // "<fingerprint>\n<argument>\0<argument>\0...": an argument may hold a newline, the fingerprint not.
  std::string mine = std::string(build_fingerprint()) + '\n';
  for (int i = 1; i < argc; ++i) mine += std::string(argv[i]) + '\0';
  auto const all = ranks.all_gather(mine);
  std::vector<std::string> builds, arguments;
  for (auto const& a : all) {
    std::size_t const newline = a.find('\n');
    builds.push_back(a.substr(0, newline));
    arguments.push_back(newline == std::string::npos ? std::string() : a.substr(newline + 1));
  }
  // The build first: another build may read the same options otherwise.
  std::vector<int> other;
  for (std::size_t r = 1; r < all.size(); ++r)
    if (builds[r] != builds[0]) other.push_back(int(r));
  if (!other.empty())
    throw JobFailure(rank_list(other) + (other.size() == 1 ? " runs" : " run") + " another nbody build than rank 0 (" +
                         differences(builds[0], builds[std::size_t(other[0])], other[0]) +
                         "); every rank of one run needs the same build (the same nbody binary, or builds with the "
                         "same compiler, flags and CPU target), or its results would not be those of one process",
                     2);
  for (std::size_t r = 1; r < all.size(); ++r)
    if (arguments[r] != arguments[0]) other.push_back(int(r));
  if (!other.empty())
    throw JobFailure(rank_list(other) + (other.size() == 1 ? " was" : " were") +
                         " started with other options than rank 0 (" +
                         first_difference(split_arguments(arguments[0]),
                                          split_arguments(arguments[std::size_t(other[0])]), other[0]) +
                         "); every rank of one run needs the same options",
                     2);
}

}  // namespace nbody::mpi
