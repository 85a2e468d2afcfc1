// sim/io/tipsy.cpp - tipsy snapshot I/O, both byte orders, validated before anything is used.
#include "sim/io/tipsy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <system_error>
#include <vector>

#include "core/atomic_file.h"
#include "core/errors.h"
#include "core/interrupt.h"

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

[[noreturn]] void fail_machine(const std::string& path, const std::string& problem) {
  throw RuntimeFailure(path + ": " + problem);
}

// A failed stat, open or read: what the user can fix (a wrong name, no permission) is bad input,
// anything else (EIO, ENOMEM, ...) is the machine.
[[noreturn]] void fail_errno(const std::string& path, const std::string& what, int error) {
  std::string const problem = what + ": " + std::generic_category().message(error);
  switch (error) {
    case ENOENT: case ENOTDIR: case EACCES: case EPERM: case ELOOP: case ENAMETOOLONG:
      fail(path, problem);
    default:
      fail_machine(path, problem);
  }
}

const char* kind_of_file(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

[[noreturn]] void fail_not_regular(const std::string& path, mode_t mode) {
  fail(path, std::string("not a regular file (") + kind_of_file(mode) + "); give a snapshot file (tipsy, HDF5 or GADGET)");
}

// A file descriptor opened for reading, closed by its destructor; move-only in spirit, never copied.
class ReadOnlyFile {
 public:
  // O_NONBLOCK: should the path have been replaced by a FIFO since it was checked, open returns
  // at once instead of waiting for a writer, and the fstat below refuses it.
  explicit ReadOnlyFile(const std::string& path)
      : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) {
    if (fd_ < 0) fail_errno(path_, "cannot open", errno);
  }
  ~ReadOnlyFile() { ::close(fd_); }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;

  struct stat status() const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) fail_errno(path_, "cannot stat", errno);
    return st;
  }

  // Reads up to n bytes; fewer only at the end of the file.
  std::size_t read(unsigned char* dst, std::size_t n) {
    std::size_t done = 0;
    while (done < n) {
      ssize_t const got = ::read(fd_, dst + done, n - done);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail_errno(path_, "read error", errno);
      if (got == 0) break;
      done += std::size_t(got);
    }
    return done;
  }

 private:
  std::string path_;
  int fd_;
};

// A file named as HDF5 (.h5, .hdf5) that is no tipsy file either: the name is said not to match the contents, for a
// reader who gave it as HDF5.
std::string unless_hdf5_named(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  for (char& ch : extension) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return extension == ".h5" || extension == ".hdf5" ? "; nor an HDF5 file, as its name says (no HDF5 signature)" : "";
}

// Which byte order the header is in: ndim is 3 in exactly one of them (0x00000003 read the other
// way is 50331648), so a valid header never has two readings.
bool header_is_little_endian(const std::string& path, const unsigned char* raw, const SettingNames& names) {
  bool const big = parse_header(raw, false).ndim == 3;
  bool const little = parse_header(raw, true).ndim == 3;
  // HDF5's signature: nbody's checkpoints and snapshots, which a user may give where a tipsy file is read.
  static constexpr unsigned char kHdf5[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  if (!big && !little && std::memcmp(raw, kHdf5, sizeof kHdf5) == 0)
    fail(path, "an HDF5 file in neither nbody's nor GADGET's layout (a Header group with NumPart_Total or "
               "NumPart_ThisFile, and PartTypeN groups, N from 0 to 5); " + names.entry("--load") +
                   " reads tipsy files and HDF5 snapshots in the GADGET/SWIFT layout, nbody's and others' (a "
                   "checkpoint continues with " + names.entry("--restart") + ")");
  if (!big && !little)
    fail(path, "not a tipsy file: its header's ndim (bytes 12-15), " + std::to_string(parse_header(raw, true).ndim) +
                   " little-endian and " + std::to_string(parse_header(raw, false).ndim) +
                   " big-endian, is 3 in a tipsy file" + unless_hdf5_named(path));
  return little;
}

// Refuses a header whose counts no tipsy writer produces, before they size anything, and a time no run can have (the
// range an HDF5 snapshot's time is held to).
void check_header(const std::string& path, const Header& h) {
  // shortest: a time just outside the range is not shown as its bound.
  if (auto const why = time_problem(h.time); !why.empty()) fail(path, "header time " + shortest(h.time) + " is " + why);
  if (h.nbodies < 1 || h.nbodies > kTipsyMaxBodies) {
    fail(path, "header says nbodies = " + std::to_string(h.nbodies) + "; nbody reads 1 to " +
                   std::to_string(kTipsyMaxBodies) + " (2^30) bodies");
  }
  for (auto [name, count] : {std::pair{"nsph", h.nsph}, std::pair{"ndark", h.ndark}, std::pair{"nstar", h.nstar}}) {
    if (count < 0) fail(path, "header says " + std::string(name) + " = " + std::to_string(count) + "; a count must be >= 0");
  }
  std::int64_t const sum = std::int64_t{h.nsph} + h.ndark + h.nstar;
  if (sum != h.nbodies) {
    fail(path, "header counts do not add up: nsph " + std::to_string(h.nsph) + " + ndark " + std::to_string(h.ndark) +
                   " + nstar " + std::to_string(h.nstar) + " = " + std::to_string(sum) + ", but nbodies = " +
                   std::to_string(h.nbodies));
  }
}

// A float field as the program that wrote it meant it: the shortest decimal that reads back as the same float (eps
// 0.001, stored as 0.0010000000474974513, is 0.001 again: the softening the run had, which a later --softening
// 0.001 then names, not another).
double as_written(float value) {
  char text[32];
  auto const end = std::to_chars(text, text + sizeof text, value).ptr;
  return std::strtod(std::string(text, end).c_str(), nullptr);
}

// One tipsy particle family: its record length in floats and where its softening lies. A gas
// particle has no eps; pkdgrav and gasoline take hsmooth as its softening, and write_tipsy writes it there.
struct Family {
  BodyType type;
  std::size_t floats;
  std::size_t eps_index;
  const char* eps_name;
};
constexpr Family kGas{BodyType::gas, kGasFloats, 9, "hsmooth"};  // mass pos[3] vel[3] rho temp hsmooth metals phi
constexpr Family kDark{BodyType::dark, kDarkFloats, 7, "eps"};   // mass pos[3] vel[3] eps phi
constexpr Family kStar{BodyType::star, kStarFloats, 9, "eps"};   // mass pos[3] vel[3] metals tform eps phi

constexpr std::size_t kChunkRecords = 1 << 16;  // records read per read(2): at most 3 MiB of buffer

// A header read and checked, its size matched against the file's.
struct CheckedHeader {
  Header h;
  bool little = false;
  std::uint64_t file_bytes = 0;
};

// Opens `path` into `file` and reads its header: every check made before a body is read.
CheckedHeader open_checked(const std::string& path, std::optional<ReadOnlyFile>& file, const SettingNames& names) {
  // stat before open: opening a FIFO for reading waits for a writer, a device never ends.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail_errno(path, "cannot open", errno);
  if (!S_ISREG(st.st_mode)) fail_not_regular(path, st.st_mode);
  file.emplace(path);
  st = file->status();  // the file opened, in case the path changed since
  if (!S_ISREG(st.st_mode)) fail_not_regular(path, st.st_mode);
  auto const file_bytes = std::uint64_t(st.st_size);

  unsigned char raw[kHeaderBytes];
  std::size_t const got = file->read(raw, kHeaderBytes);
  if (got < kHeaderBytes) {
    fail(path, "truncated tipsy header: " + std::to_string(got) + " bytes, need " + std::to_string(kHeaderBytes) +
                   unless_hdf5_named(path));
  }
  bool const little = header_is_little_endian(path, raw, names);
  Header const h = parse_header(raw, little);
  check_header(path, h);
  if (h.expected_bytes() != file_bytes) {
    std::ostringstream s;
    s << (file_bytes < h.expected_bytes() ? "truncated" : "oversized") << " tipsy file: header describes "
      << h.nbodies << " bodies (" << h.nsph << " gas, " << h.ndark << " dark, " << h.nstar << " star) in "
      << h.expected_bytes() << " bytes, file has " << file_bytes;
    fail(path, s.str());
  }
  return {h, little, file_bytes};
}

BodySet read_checked(const std::string& path, TipsyInfo* info, const SettingNames& names) {
  std::optional<ReadOnlyFile> opened;
  auto const [h, little, file_bytes] = open_checked(path, opened, names);
  ReadOnlyFile& file = *opened;
  BodySet b;
  b.time = h.time;
  try {
    b.pos_mass.reserve(std::size_t(h.nbodies));
    b.velocity.reserve(std::size_t(h.nbodies));
    b.type.reserve(std::size_t(h.nbodies));
  } catch (const std::bad_alloc&) {
    fail_machine(path, "not enough memory for " + std::to_string(h.nbodies) + " bodies");
  }

  std::optional<float> first_eps;
  bool same_eps = true;
  bool gas_fields = false, star_fields = false;
  float eps_min = 0.0f, eps_max = 0.0f;
  std::vector<unsigned char> chunk;
  std::uint64_t offset = kHeaderBytes;
  for (auto [family, count] : {std::pair{kGas, h.nsph}, std::pair{kDark, h.ndark}, std::pair{kStar, h.nstar}}) {
    std::size_t const record = 4 * family.floats;
    for (std::size_t k0 = 0; k0 < std::size_t(count); k0 += kChunkRecords) {
      throw_if_interrupted();  // a start-up phase like any other: a chunk at a time (a 2^30-body file is 36 GB)
      std::size_t const n = std::min(kChunkRecords, std::size_t(count) - k0);
      chunk.resize(n * record);
      if (std::size_t const read = file.read(chunk.data(), chunk.size()); read < chunk.size()) {
        fail(path, "truncated while being read: ended at byte " + std::to_string(offset + read) + " of " +
                       std::to_string(file_bytes) + " (did the file change?)");
      }
      offset += chunk.size();
      for (std::size_t k = 0; k < n; ++k) {
        const unsigned char* r = chunk.data() + k * record;
        // The body's values as every reader checks them (core/bounds.h), then its eps; in `order`.
        auto problem_in = [&](bool order, float* f) {
          for (std::size_t c = 0; c < 7; ++c) f[c] = load<float>(r + 4 * c, order);
          float const eps = load<float>(r + 4 * family.eps_index, order);
          std::string problem;
          for (std::size_t c = 0; c < 7 && problem.empty(); ++c)
            problem = body_value_problem(kBodyFields[c], f[c], c == 0);
          return problem.empty() ? body_value_problem(family.eps_name, eps, true) : problem;
        };
        // Each value 0 or a normal number in `order`, as a body's are (round values, 1 or 0.5, turned round are
        // subnormal: 1e-40 and less).
        auto round_in = [&](bool order) {
          float v[8];
          bool sound = problem_in(order, v).empty();
          v[7] = load<float>(r + 4 * family.eps_index, order);
          for (float x : v) sound = sound && (x == 0.0f || std::isnormal(x));
          return sound;
        };
        float f[7];
        std::string problem = problem_in(little, f);
        // Values that are sound in the other byte order but not in the header's (out of bounds, or subnormal, which
        // no body's are and round values turned round all are): the bodies may have been written in it and the
        // header not (a converter that swapped the header alone). Said, since nothing else would tell why; a body
        // of subnormal values is refused only then.
        bool const subnormal = problem.empty() && !round_in(little);
        if (!problem.empty() || subnormal) {
          bool const other_order = round_in(!little);
          for (std::size_t c = 0; c < 8 && subnormal && other_order && problem.empty(); ++c) {
            float const v = load<float>(r + 4 * (c < 7 ? c : family.eps_index), little);
            if (v == 0.0f || std::isnormal(v)) continue;
            std::ostringstream said;
            said << (c < 7 ? kBodyFields[c] : family.eps_name) << " is " << v << ", a subnormal number";
            problem = said.str();
          }
          std::string const header = little ? "little-endian" : "big-endian";
          std::string const other = little ? "big-endian" : "little-endian";
          if (!problem.empty())
            fail(path, "body " + std::to_string(b.size()) + ": " + problem +
                           (other_order ? "; its values are sound read " + other + ", and the header is " + header +
                                              ": were the bodies written in the other byte order?"
                                        : ""));
        }
        float const eps = load<float>(r + 4 * family.eps_index, little);
        if (!first_eps) first_eps = eps_min = eps_max = eps;
        same_eps = same_eps && eps == *first_eps;
        eps_min = std::min(eps_min, eps);
        eps_max = std::max(eps_max, eps);
        b.append({f[1], f[2], f[3], f[0]}, {f[4], f[5], f[6]}, family.type);
        // The record's fields that are not kept: those after the velocity but the softening and the potential (the last,
        // which a run computes again): rho, temp and metals for gas, metals and tform for stars, none for dark matter.
        if (family.type != BodyType::dark) {
          bool& dropped = family.type == BodyType::gas ? gas_fields : star_fields;  // once found, not looked for again
          for (std::size_t c = 7; c + 1 < family.floats && !dropped; ++c)
            dropped = c != family.eps_index && load<float>(r + 4 * c, little) != 0.0f;
        }
      }
    }
  }
  unsigned char extra = 0;
  if (file.read(&extra, 1) != 0) fail(path, "grew while being read: longer than its " + std::to_string(file_bytes) + " bytes");

  if (info) {
    info->format = little ? TipsyFormat::little_endian : TipsyFormat::standard;
    info->gas = std::size_t(h.nsph);
    info->dark = std::size_t(h.ndark);
    info->star = std::size_t(h.nstar);
    info->softening.reset();
    if (same_eps && first_eps) info->softening = as_written(*first_eps);
    info->eps_min = as_written(eps_min);
    info->eps_max = as_written(eps_max);
    info->gas_fields = gas_fields;
    info->star_fields = star_fields;
  }
  return b;
}

// Runs `read`: every refusal above is already one line naming the file; what the standard library throws (its
// messages name its internals) is turned into one too.
template <class Read>
auto one_line_errors(const std::string& path, Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const InputError&) {
    throw;
  } catch (const RuntimeFailure&) {
    throw;
  } catch (const Interrupted&) {
    throw;
  } catch (const std::bad_alloc&) {
    fail_machine(path, "not enough memory to read the snapshot");
  } catch (const std::length_error&) {
    fail_machine(path, "not enough memory to read the snapshot");
  } catch (const std::exception&) {
    fail_machine(path, "the snapshot could not be read");
  }
}

}  // namespace

BodySet read_tipsy(const std::string& path, TipsyInfo* info, const SettingNames& names) {
  return one_line_errors(path, [&] { return read_checked(path, info, names); });
}

std::size_t read_tipsy_bodies(const std::string& path, const SettingNames& names) {
  return one_line_errors(path, [&] {
    std::optional<ReadOnlyFile> file;
    return std::size_t(open_checked(path, file, names).h.nbodies);
  });
}

std::string tipsy_order_notice(const BodySet& bodies, const std::string& path) {
  auto rank = [](BodyType t) { return t == BodyType::gas ? 0 : t == BodyType::dark ? 1 : 2; };
  for (std::size_t i = 1; i < bodies.type.size(); ++i)
    if (rank(bodies.type[i]) < rank(bodies.type[i - 1]))
      return path + ": tipsy groups the bodies by family (gas, dark matter, stars), so they are written in that order "
                    "and body " + std::to_string(i) + " of the run is not body " + std::to_string(i) +
             " of the file (a checkpoint or an HDF5 snapshot keeps the run's order)";
  return {};
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

  write_bytes_file(path, std::string_view(reinterpret_cast<const char*>(out.data()), out.size()), "snapshot");
}

namespace {
constexpr const char* kParamFirstLine = "# nbody: the units of the tipsy file ";
}  // namespace

std::string tipsy_param_path(const std::string& tipsy_path) { return tipsy_path + ".param"; }

std::string other_param_file(const std::string& param_path, bool above) {
  namespace fs = std::filesystem;
  fs::path const ours(param_path);
  fs::path folder = ours.has_parent_path() ? ours.parent_path() : fs::path(".");
  if (above) folder /= "..";
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    fs::path const& p = it->path();
    std::error_code type_error;
    if (!it->is_regular_file(type_error)) continue;  // a folder named .param is no parameter file to its readers
    if (p.extension() == ".param" && (above || p.filename() != ours.filename()))
      return (ours.has_parent_path() || above ? (folder / p.filename()).lexically_normal() : p.filename()).string();
  }
  return {};
}

std::optional<OtherParamFile> nearest_other_param_file(const std::string& param_path) {
  if (std::string here = other_param_file(param_path); !here.empty()) return OtherParamFile{std::move(here), false};
  if (std::string above = other_param_file(param_path, true); !above.empty()) return OtherParamFile{std::move(above), true};
  return std::nullopt;
}

bool is_nbody_tipsy_param(const std::string& param_path) {
  // A regular file only: a FIFO of that name would hold the read up for ever, and a folder is no statement.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(param_path, ec)) return false;
  std::ifstream f(param_path);
  std::string first;
  return f && std::getline(f, first) && first.rfind(kParamFirstLine, 0) == 0;
}

void write_tipsy_param(const std::string& param_path, const std::string& tipsy_path, const Units& units) {
  if (!units.physical()) throw std::logic_error("write_tipsy_param: N-body units have no scale to state");
  std::string const name = tipsy_path.substr(tipsy_path.find_last_of('/') + 1);
  auto number = [](double v) {  // 15 digits: 1e5 as 100000 rather than as the double nearest 1e5 * Msun / Msun
    char text[32];
    std::snprintf(text, sizeof text, "%.15g", v);
    return std::string(text);
  };
  std::string const text =
      std::string(kParamFirstLine) + name + " (G = 1), for its readers (pynbody, yt)\n" +
      "# mass unit " + units.mass + ", length unit " + units.length + ": " + units.derived() + "\n" +
      "achOutName = " + name + "\n" +
      "dMsolUnit = " + number(units.mass_g / kSolarMassGrams) + "\n" +
      "dKpcUnit = " + number(units.length_cm / (1e3 * kParsecCm)) + "\n" +
      "bComove = 0\nbPeriodic = 0\n";  // no bDoublePos = 0: pynbody takes any value given for true
  write_text_file(param_path, text, "the tipsy file's units");
}

namespace {

// Another program's FILE.param (gasoline's, ChaNGa's, a script's): its dMsolUnit and dKpcUnit where it gives both, as
// pynbody takes them; nullopt where it gives one or neither (pynbody then takes none). A value no unit has, or
// bComove on (comoving coordinates, which nbody does not integrate), is refused, naming the file: units given for the
// run go past it (driver/setup.cpp).
std::optional<Units> read_other_param(const std::string& path, const std::string& tipsy_path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream f(path);
  auto refused = [&](const std::string& why) {
    return InputError(path + ": " + why + " (the units of " + tipsy_path + ", as pynbody reads them)");
  };
  std::optional<double> msol, kpc;
  std::string msol_text, kpc_text, line;
  constexpr std::size_t kMostLines = 100000;  // a gasoline run's has a few hundred
  for (std::size_t n = 0; n < kMostLines && std::getline(f, line); ++n) {
    line = trimmed(line, " \t\r");
    std::size_t const eq = line.find('=');
    if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
    std::string const key = trimmed(line.substr(0, eq), " \t");
    if (key != "dMsolUnit" && key != "dKpcUnit" && key != "bComove") continue;
    std::string const value = trimmed(line.substr(eq + 1, line.find('#', eq) - eq - 1), " \t\r");
    std::optional<double> const v = parse_decimal(value);
    if (key == "bComove") {
      if (!v) throw refused("bComove is '" + value + "', not a number (0 or 1)");
      if (*v != 0)
        throw refused("bComove is '" + value + "': a cosmological run's (comoving coordinates), and nbody " +
                      "integrates bodies in open space");
      continue;
    }
    if (!v || !(*v > 0) || !std::isfinite(*v)) throw refused(key + " is '" + value + "', not a positive number");
    (key == "dMsolUnit" ? msol : kpc) = *v;
    (key == "dMsolUnit" ? msol_text : kpc_text) = value;
  }
  if (!msol || !kpc) return std::nullopt;
  try {  // in the file's words ("2.5e10Msun")
    return parse_units(msol_text + "Msun", kpc_text + "kpc",
                       UnitSource{"dMsolUnit " + msol_text, "dKpcUnit " + kpc_text, "dMsolUnit", "dKpcUnit"});
  } catch (const InputError& e) {
    throw refused(e.what());
  }
}

}  // namespace

std::optional<Units> read_tipsy_param(const std::string& tipsy_path) {
  std::string const path = tipsy_param_path(tipsy_path);
  if (!is_nbody_tipsy_param(path)) return read_other_param(path, tipsy_path);
  auto damaged = [&](const std::string& why) {
    return InputError(path + ": nbody's statement of the units of " + tipsy_path + ", but " + why +
                      "; remove it (the file's values are then in N-body units) or give the units");
  };
  std::ifstream f(path);
  std::string line, given_mass, given_length;
  std::optional<double> msol, kpc;
  std::string msol_text, kpc_text;  // as the file writes them
  constexpr std::size_t kMostLines = 64;  // it has 6
  // The blanks an editor leaves around a line, a key and its value (spaces, tabs, a CRLF line's CR) are layout.
  auto blank_trimmed = [](const std::string& text) { return trimmed(text, " \t\r"); };
  for (std::size_t n = 0; n < kMostLines && std::getline(f, line); ++n) {
    line = blank_trimmed(line);
    std::string const words = "# mass unit ";
    if (line.rfind(words, 0) == 0) {
      std::size_t const comma = line.find(", length unit ");
      std::size_t const colon = line.find(':', comma == std::string::npos ? 0 : comma);
      if (comma != std::string::npos && colon != std::string::npos) {
        given_mass = line.substr(words.size(), comma - words.size());
        given_length = line.substr(comma + 14, colon - comma - 14);
      }
      continue;
    }
    std::size_t const eq = line.find('=');
    if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
    std::string const key = blank_trimmed(line.substr(0, eq));
    if (key != "dMsolUnit" && key != "dKpcUnit") continue;
    // A comment after the value ("dMsolUnit = 2.325e5  # Msun"), as gasoline's own files have them, is no part of it.
    std::string const value = blank_trimmed(line.substr(eq + 1, line.find('#', eq) - eq - 1));
    // The options' grammar (core/bounds.h): decimal, not strtod's hexadecimal.
    std::optional<double> const v = parse_decimal(value);
    if (!v || !(*v > 0) || !std::isfinite(*v)) throw damaged(key + " is '" + value + "', not a positive number");
    (key == "dMsolUnit" ? msol : kpc) = *v;
    (key == "dMsolUnit" ? msol_text : kpc_text) = value;
  }
  if (!msol || !kpc) throw damaged(std::string(msol ? "dKpcUnit" : "dMsolUnit") + " is missing");
  auto same = [](double a, double b) { return std::abs(a - b) <= 1e-12 * b; };
  try {
    // Named as the file has them (its second line's words, its dMsolUnit and dKpcUnit), not as options.
    if (!given_mass.empty()) {
      Units const words = parse_units(given_mass, given_length,
                                      UnitSource{"mass unit '" + given_mass + "'", "length unit '" + given_length + "'",
                                                 "a mass unit", "a length unit"});
      if (same(words.mass_g / kSolarMassGrams, *msol) && same(words.length_cm / (1e3 * kParsecCm), *kpc)) return words;
    }
    char mass[40], length[40];  // edited since: the numbers its readers take
    std::snprintf(mass, sizeof mass, "%.15gMsun", *msol);
    std::snprintf(length, sizeof length, "%.15gkpc", *kpc);
    return parse_units(mass, length,
                       UnitSource{"dMsolUnit " + msol_text, "dKpcUnit " + kpc_text, "dMsolUnit", "dKpcUnit"});
  } catch (const InputError& e) {
    throw damaged(e.what());
  }
}

}  // namespace nbody::sim
