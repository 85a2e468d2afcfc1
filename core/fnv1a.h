// core/fnv1a.h - FNV-1a, 64-bit (Fowler, Noll and Vo's offset basis and prime): the one hash nbody's files and
// records use (a checkpoint's checksum, a run's course). A few lines in any language, so a file can be checked
// without nbody; not a cryptographic hash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace nbody {

// Where the state hashes begin (the end state a benchmark reports, hermite4's, the check that ranks hold one set of
// bodies): a digit short of FNV's offset basis, and kept so, since the end states recorded in docs/benchmarks.md
// were hashed from it.
inline constexpr std::uint64_t kStateHashBasis = 1469598103934665603ull;

class Fnv1a {
 public:
  Fnv1a() = default;
  explicit Fnv1a(std::uint64_t basis) : h_(basis) {}
  void bytes(const void* data, std::size_t n) {
    auto const* p = static_cast<const unsigned char*>(data);
    std::uint64_t h = h_;
    for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
    h_ = h;
  }
  template <class T>
  void value(T v) {
    static_assert(std::is_arithmetic_v<T>);
    bytes(&v, sizeof v);
  }
  // The text and a zero byte, so that ("ab", "c") and ("a", "bc") differ.
  void text(const std::string& s) {
    bytes(s.data(), s.size());
    value(std::uint8_t{0});
  }
  std::uint64_t get() const { return h_; }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ull;
};

}  // namespace nbody
