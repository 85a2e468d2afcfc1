// sim/io/tipsy.cpp - tipsy snapshot I/O, both byte orders, validated before anything is used.
#include "sim/io/tipsy.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/atomic_file.h"
#include "core/errors.h"

namespace nbody::sim {
namespace {

constexpr std::size_t kHeaderBytes = 32;  // time(8) nbodies ndim nsph ndark nstar (4 each) pad(4)
constexpr std::size_t kGasFloats = 12;    // mass pos[3] vel[3] rho temp hsmooth metals phi
constexpr std::size_t kDarkFloats = 9;    // mass pos[3] vel[3] eps phi|id
constexpr std::size_t kStarFloats = 11;   // mass pos[3] vel[3] metals tform eps phi|id

bool host_is_little_endian() {
  std::uint16_t const one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

template <class T>
T load(const unsigned char* p, bool little) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, p, sizeof(T));
  if (little != host_is_little_endian()) std::reverse(bytes, bytes + sizeof(T));
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

template <class T>
void store(std::vector<unsigned char>& out, T value, bool little) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  if (little != host_is_little_endian()) std::reverse(bytes, bytes + sizeof(T));
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

struct Header {
  double time;
  std::int32_t nbodies, ndim, nsph, ndark, nstar;
  bool plausible() const {
    return ndim == 3 && nsph >= 0 && ndark >= 0 && nstar >= 0 && nbodies > 0 &&
           static_cast<std::int64_t>(nsph) + ndark + nstar == nbodies && std::isfinite(time);
  }
  std::uint64_t expected_bytes() const {
    return kHeaderBytes + 4 * (kGasFloats * std::uint64_t(nsph) + kDarkFloats * std::uint64_t(ndark) +
                               kStarFloats * std::uint64_t(nstar));
  }
};

Header parse_header(const unsigned char* p, bool little) {
  return {load<double>(p, little),      load<std::int32_t>(p + 8, little),  load<std::int32_t>(p + 12, little),
          load<std::int32_t>(p + 16, little), load<std::int32_t>(p + 20, little), load<std::int32_t>(p + 24, little)};
}

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw InputError(path + ": " + problem);
}

}  // namespace

BodySet read_tipsy(const std::string& path, TipsyInfo* info) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail(path, "read error");
  if (bytes.size() < kHeaderBytes) {
    fail(path, "truncated tipsy header: " + std::to_string(bytes.size()) + " bytes, need " +
                   std::to_string(kHeaderBytes));
  }

  Header const big = parse_header(bytes.data(), false);
  Header const little = parse_header(bytes.data(), true);
  bool is_little = false;
  if (big.plausible() && big.expected_bytes() == bytes.size()) {
    is_little = false;
  } else if (little.plausible() && little.expected_bytes() == bytes.size()) {
    is_little = true;
  } else if (big.plausible() || little.plausible()) {
    Header const& h = big.plausible() ? big : little;
    std::ostringstream s;
    s << (bytes.size() < h.expected_bytes() ? "truncated" : "oversized") << " tipsy file: header describes "
      << h.nbodies << " bodies (" << h.nsph << " gas, " << h.ndark << " dark, " << h.nstar << " star) in "
      << h.expected_bytes() << " bytes, file has " << bytes.size();
    fail(path, s.str());
  } else {
    fail(path, "not a tipsy file: the header (either byte order) has no ndim = 3 with nbodies = nsph + ndark + nstar > 0");
  }
  Header const& h = is_little ? little : big;

  BodySet b;
  b.time = h.time;
  b.pos_mass.reserve(std::size_t(h.nbodies));
  std::size_t offset = kHeaderBytes;
  auto read_group = [&](std::int32_t count, std::size_t floats, BodyType type, const char* family) {
    for (std::int32_t k = 0; k < count; ++k, offset += 4 * floats) {
      float f[7];
      for (int c = 0; c < 7; ++c) f[c] = load<float>(bytes.data() + offset + 4 * std::size_t(c), is_little);
      bool const finite = std::all_of(f, f + 7, [](float x) { return std::isfinite(x); });
      if (!finite || f[0] < 0.0f) {
        fail(path, std::string(family) + " particle " + std::to_string(k) + " (body " + std::to_string(b.size()) +
                       ") has " + (finite ? "a negative mass" : "a non-finite mass, position or velocity"));
      }
      b.append({f[1], f[2], f[3], f[0]}, {f[4], f[5], f[6]}, type);
    }
  };
  read_group(h.nsph, kGasFloats, BodyType::gas, "gas");
  read_group(h.ndark, kDarkFloats, BodyType::dark, "dark");
  read_group(h.nstar, kStarFloats, BodyType::star, "star");
  if (info) {
    info->format = is_little ? TipsyFormat::little_endian : TipsyFormat::standard;
    info->gas = std::size_t(h.nsph);
    info->dark = std::size_t(h.ndark);
    info->star = std::size_t(h.nstar);
  }
  return b;
}

void write_tipsy(const std::string& path, const BodySet& bodies, double softening, TipsyFormat format) {
  if (bodies.size() == 0) throw InputError(path + ": refusing to write a snapshot with no bodies");
  if (bodies.size() > std::size_t(INT32_MAX)) throw InputError(path + ": tipsy holds at most 2^31-1 bodies");
  bool const little = format == TipsyFormat::little_endian;
  std::int32_t counts[3] = {0, 0, 0};
  for (auto t : bodies.type) ++counts[static_cast<int>(t)];

  std::vector<unsigned char> out;
  out.reserve(std::size_t(Header{0, 0, 3, counts[0], counts[1], counts[2]}.expected_bytes()));
  store<double>(out, bodies.time, little);
  for (std::int32_t v : {static_cast<std::int32_t>(bodies.size()), 3, counts[0], counts[1], counts[2], 0})
    store<std::int32_t>(out, v, little);

  auto const eps = static_cast<float>(softening);
  std::int32_t id = 0;
  for (BodyType family : {BodyType::gas, BodyType::dark, BodyType::star}) {
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      if (bodies.type[i] != family) continue;
      auto const& p = bodies.pos_mass[i];
      auto const& v = bodies.velocity[i];
      for (double x : {p.w, p.x, p.y, p.z, v.x, v.y, v.z}) store<float>(out, static_cast<float>(x), little);
      switch (family) {
        case BodyType::gas:  // rho temp hsmooth metals phi
          for (float x : {0.0f, 0.0f, eps, 0.0f, 0.0f}) store<float>(out, x, little);
          break;
        case BodyType::dark:
          store<float>(out, eps, little);
          break;
        case BodyType::star:  // metals tform eps
          for (float x : {0.0f, 0.0f, eps}) store<float>(out, x, little);
          break;
      }
      if (family == BodyType::gas) continue;
      if (little)
        store<std::int32_t>(out, id++, little);  // Bonsai variant: particle id
      else
        store<float>(out, 0.0f, little);  // standard: potential, not computed here
    }
  }

  write_file_atomically(path, "snapshot", [&](const std::string& tmp) {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
    f.flush();
    return bool(f);
  });
}

}  // namespace nbody::sim
