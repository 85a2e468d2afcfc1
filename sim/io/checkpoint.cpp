// sim/io/checkpoint.cpp - HDF5 checkpoints and snapshots through the HDF5 C API: written in chunks
// with every call checked (checkpoints are read back before they are published); read with every
// link, layout, count and setting checked, in chunks, and the checksum compared.
#include "sim/io/checkpoint.h"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/atomic_file.h"
#include "core/bounds.h"
#include "core/errors.h"
#include "core/fnv1a.h"
#include "core/interrupt.h"
#include "core/version.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the checksum hashes values in the host's byte order");

namespace nbody::sim {


bool checkpoints_built() { return true; }

namespace {

constexpr const char* kCode = "nbody " NBODY_VERSION;
// Rows written or read per HDF5 call: buffers stay small whatever N, and an interrupt is seen
// within one chunk (about 4 MB of fp64 coordinates).
constexpr hsize_t kRowsPerChunk = 1 << 17;

// An HDF5 identifier closed by its own close function when the owner goes, or by close(), which
// says whether the close succeeded (a file's close writes what HDF5 still held).
class Handle {
 public:
  Handle(hid_t id, herr_t (*closer)(hid_t)) : id_(id), close_(closer) {}
  ~Handle() { close(); }
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, -1)), close_(o.close_) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle& operator=(Handle&&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }
  bool close() {
    herr_t const rc = id_ >= 0 ? close_(id_) : 0;
    id_ = -1;
    return rc >= 0;
  }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// HDF5 prints a stack of errors to stderr by default; nbody reports its own one line instead. A file
// can also name a filter that HDF5 would load as a plugin from HDF5_PLUGIN_PATH: checkpoints use
// none, and opening a file must not load code.
//
// HDF5 also closes at exit what is still open, and a file whose close failed (a full disk) crashes
// it there (HDF5 1.10: a segmentation fault in H5F__close_cb): the library is left to the process's
// end instead. Writes reserve their blocks first (reserve_blocks), so that close rarely fails at all.
//
// A thread-safe HDF5 (Debian's) keeps the error printing per thread: each thread that calls it is quieted (Python's
// restart reads on a thread of its own each time; the second one printed HDF5's stack).
void quiet_hdf5() {
  static bool const done = [] {
    H5dont_atexit();  // before any other call: it takes effect only before the library starts
    H5PLset_loading_state(0);
    return true;
  }();
  (void)done;
  thread_local bool const quiet = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)quiet;
}

// What the system said where the HDF5 call that just failed failed in a system call on the file itself (its file
// driver's "errno = 5, error message = 'Input/output error'", its lock's "errno = 11"): the errno and its words, or
// errno 0 where HDF5 failed on what the file holds (damaged, not HDF5) rather than on reaching it.
struct SystemError {
  int number = 0;
  std::string words;
};
SystemError hdf5_system_error() {
  SystemError said;
  auto const walk = [](unsigned, const H5E_error2_t* e, void* out) -> herr_t {
    std::string const text = e && e->desc ? e->desc : "";
    std::size_t const at = text.find("errno = ");
    int const number = at == std::string::npos ? 0 : std::atoi(text.c_str() + at + 8);
    if (number == 0) return 0;
    SystemError& error = *static_cast<SystemError*>(out);
    error.number = number;
    std::size_t const begin = text.find("error message = '", at);
    std::size_t const end = begin == std::string::npos ? begin : text.find('\'', begin + 17);
    error.words = end != std::string::npos ? text.substr(begin + 17, end - begin - 17) : std::strerror(number);
    return 1;  // the first (innermost) one
  };
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk, &said);
  return said;
}
// A read of the disk or file system that failed (a failing disk, a network file system gone): not the file's fault,
// and a later try may read it.
struct ReadError : RuntimeFailure {
  using RuntimeFailure::RuntimeFailure;
};
bool read_failure(int number) {
  return number == EIO || number == ENXIO || number == ENODEV || number == ESTALE || number == ETIMEDOUT ||
         number == EREMOTEIO;
}
// Throws where the HDF5 call that just failed met the system rather than the file's contents: a read error (ReadError,
// exit 1), a file the user may not read or one another program holds locked (InputError), another system error
// (RuntimeFailure).
void refuse_system_error(const std::string& path) {
  SystemError const e = hdf5_system_error();
  if (e.number == 0) return;
  if (read_failure(e.number))
    throw ReadError(path + ": cannot read: " + e.words + " (the disk or file system failed to read it; the file "
                    "itself may be whole)");
  if (e.number == EACCES || e.number == EPERM) throw InputError(path + ": cannot read: " + e.words);
  if (e.number == EAGAIN || e.number == EWOULDBLOCK)
    throw InputError(path + ": cannot open: it is held open to be written (HDF5's file lock: h5py's mode 'a', say, in "
                     "this process or another); close it there first");
  throw RuntimeFailure(path + ": cannot read: " + e.words);
}



double time_of(const RunRecord& r) { return r.time(); }

constexpr std::uint64_t kFormat = 2;  // checkpoint.h: the layout with particle families and units

// A record's series cadences: the name their Header attributes begin with (NameEvery, NameDt), their checksum tags,
// and the record's two values (one at most is set).
template <class Record>
auto cadence_fields(Record& r) {
  return std::array{std::tuple{"Diagnostics", 'K', 'D', &r.diagnostics_every, &r.diagnostics_dt},
                    std::tuple{"Checkpoint", 'P', 'p', &r.checkpoint_every, &r.checkpoint_dt},
                    std::tuple{"Snapshot", 'N', 'n', &r.snapshot_every, &r.snapshot_dt}};
}

// The run's part of the checksum (checkpoint.h gives the order). Format 2 adds the units and the
// shift; `units` are U_L, U_M, U_t as the file states them.
void hash_record(Fnv1a& h, const RunRecord& r, std::uint64_t bodies, int format, const double (&units)[3] = {},
                 double shift = 0) {
  if (format >= 2) h.value(kFormat);
  h.value(bodies);
  h.value(r.step);
  h.value(r.dt_since_step);
  h.value(r.seed);
  for (double v : {r.start_time, r.dt_since_time, r.dt, r.softening, r.damping}) h.value(v);
  h.value(std::uint8_t{r.initial_energy.has_value()});
  if (r.initial_energy) h.value(*r.initial_energy);
  h.text(name_of(r.precision));
  h.text(r.integrator);
  h.text(r.scenario);
  if (format < 2) return;
  h.text(r.units.mass);
  h.text(r.units.length);
  for (double v : units) h.value(v);
  h.value(shift);
  if (r.hermite) {  // hermite4's settings (files of other integrators hash as before)
    h.text("hermite4");
    for (double v : {r.hermite->eta, r.hermite->eta_start, r.hermite->dt_max}) h.value(v);
  }
  // Where the run was going (files without it hash as before).
  if (r.end_time) {
    h.value(std::uint8_t{'T'});
    h.value(*r.end_time);
  } else if (r.end_step) {
    h.value(std::uint8_t{'S'});
    h.value(*r.end_step);
  }
  // How often it wrote its series (files without them hash as before).
  for (auto const& [name, every_tag, dt_tag, every, dt] : cadence_fields(r)) {
    if (*every) {
      h.value(std::uint8_t(every_tag));
      h.value(**every);
    } else if (*dt) {
      h.value(std::uint8_t(dt_tag));
      h.value(**dt);
    }
  }
  if (!r.diagnostics_digest.empty()) {  // (files without it hash as before)
    h.value(std::uint8_t{'G'});
    h.text(r.diagnostics_digest);
  }
  if (!r.course.empty()) {  // (files without it hash as before)
    h.value(std::uint8_t{'R'});
    h.text(r.course);
  }
}

// The particle groups, as GADGET and SWIFT number them (and pynbody and yt name their families).
struct Family {
  BodyType type;
  int part_type;
  const char* group;
};
constexpr Family kFamilies[] = {
    {BodyType::gas, 0, "PartType0"}, {BodyType::dark, 1, "PartType1"}, {BodyType::star, 4, "PartType4"}};

// The datasets: name, values per body, whether they hold reals (in the file's precision), and the
// powers of length, mass and time of their unit (SWIFT's exponent attributes).
struct Column {
  const char* name;
  hsize_t columns;
  bool fp;
  double length, mass, time;
};
constexpr Column kParticleIds{"ParticleIDs", 1, false, 0, 0, 0}, kBodyType{"BodyType", 1, false, 0, 0, 0},
    kCoordinates{"Coordinates", 3, true, 1, 0, 0}, kRoundoff{"CoordinateRoundoff", 3, true, 1, 0, 0},
    kVelocities{"Velocities", 3, true, 1, 0, -1}, kMasses{"Masses", 1, true, 0, 1, 0},
    kSmoothingLengths{"SmoothingLengths", 1, true, 1, 0, 0}, kTimeStep{"TimeStep", 1, true, 0, 0, 1};
// hermite4's per-body state (/Hermite, every body in index order, float64): each body at its own time.
constexpr Column kHermitePositions{"Positions", 3, true, 1, 0, 0}, kHermiteVelocities{"Velocities", 3, true, 1, 0, -1},
    kHermiteAccelerations{"Accelerations", 3, true, 1, 0, -2}, kHermiteJerks{"Jerks", 3, true, 1, 0, -3},
    kHermiteTimes{"Times", 1, true, 0, 0, 1}, kHermiteSteps{"Steps", 1, true, 0, 0, 1};
constexpr const char* kHermiteGroup = "Hermite";

// Bodies are centred on the origin; SWIFT's readers keep those inside [0, BoxSize) (yt drops the
// others). The box is the smallest side of the form m x 2^k (m = 4..7: 1, 1.25, 1.5, 1.75, 2, 2.5,
// ...) with room for every body, and a margin that rounding cannot cross; such a side and its half
// are exact in float32 and float64, so the shift by half of it can be undone exactly.
double box_side(double extent) {
  double const need = 2.0 * extent * (1.0 + std::ldexp(1.0, -16));
  if (!(need > 0)) return 1.0;
  int e = 0;
  (void)std::frexp(need, &e);  // need in [2^(e-1), 2^e)
  for (int m = 4; m < 8; ++m)
    if (std::ldexp(double(m), e - 3) > need) return std::ldexp(double(m), e - 3);
  return std::ldexp(1.0, e);
}

// The box of a file of `bodies`: box_side of their largest coordinate's magnitude.
double box_side_of(const BodySet& bodies) {
  double extent = 0;
  for (auto const& p : bodies.pos_mass) extent = std::max({extent, std::abs(p.x), std::abs(p.y), std::abs(p.z)});
  return box_side(extent);
}

// A coordinate x with |x| < c, shifted: s = x + c rounded, and r what the rounding took, so that
// (s - c) + r is x again, exactly, in T's arithmetic. For s in [c/2, 2c], s - c is exact (Sterbenz's
// lemma) and x - (s - c) is the sum's rounding error, which is exact too; for x in [-c, -c/2] the sum
// itself is exact and r is 0.
template <class T>
void shift_exactly(T x, T c, T& s, T& r) {
  s = x + c;
  r = x - (s - c);
}
template <class T>
T unshift(T s, T c, T r) {
  return (s - c) + r;
}

// Writing ------------------------------------------------------------------------------------

struct Writer {
  bool ok = true;

  void attribute(hid_t loc, const char* name, hid_t type, const void* value, hsize_t count = 1) {
    if (!ok) return;
    Handle space(count == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr), H5Sclose);
    Handle attr(H5Acreate2(loc, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    ok = attr.ok() && H5Awrite(attr.get(), type, value) >= 0 && attr.close() && space.close();
  }
  void number(hid_t loc, const char* name, double v) { attribute(loc, name, H5T_NATIVE_DOUBLE, &v); }
  void number(hid_t loc, const char* name, std::int32_t v) { attribute(loc, name, H5T_NATIVE_INT32, &v); }
  void number(hid_t loc, const char* name, std::uint64_t v) { attribute(loc, name, H5T_NATIVE_UINT64, &v); }
  // Fixed-length, null-terminated ASCII, as GADGET and SWIFT write their strings (yt, for one,
  // decodes Header/Code as bytes).
  void text(hid_t loc, const char* name, const std::string& v) {
    if (!ok) return;
    Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    ok = type.ok() && H5Tset_size(type.get(), v.size() + 1) >= 0 && H5Tset_strpad(type.get(), H5T_STR_NULLTERM) >= 0;
    attribute(loc, name, type.get(), v.c_str());
  }
  Handle group(hid_t loc, const char* name) {
    Handle gcpl = untimed(H5P_GROUP_CREATE);
    Handle g(ok && gcpl.ok() ? H5Gcreate2(loc, name, H5P_DEFAULT, gcpl.get(), H5P_DEFAULT) : -1, H5Gclose);
    ok = ok && g.ok();
    return g;
  }
  // An object's creation properties without HDF5's timestamps (its default records when each object was made): the
  // same state writes the same bytes, so that two checkpoints of one state compare equal as files (cmp, sha256sum).
  static Handle untimed(hid_t property_class) {
    Handle p(H5Pcreate(property_class), H5Pclose);
    if (p.ok() && H5Pset_obj_track_times(p.get(), false) < 0) return Handle(-1, H5Pclose);
    return p;
  }

  // A dataset of `rows` x `columns` values, written a chunk of rows at a time: fill(first, count,
  // buffer) puts rows [first, first + count) into `buffer`, which then goes into the checksum
  // (when `hash`). SWIFT's unit exponents go on it as attributes (all 0 in N-body units).
  template <class T, class Fill>
  void dataset(hid_t group, const Column& c, hid_t file_type, hid_t memory_type, hsize_t rows, bool physical,
               Fnv1a* hash, Fill&& fill) {
    if (!ok) return;
    hsize_t const dims[2] = {rows, c.columns};
    int const rank = c.columns == 1 ? 1 : 2;
    Handle space(H5Screate_simple(rank, dims, nullptr), H5Sclose);
    Handle dcpl = untimed(H5P_DATASET_CREATE);
    Handle set(dcpl.ok() ? H5Dcreate2(group, c.name, file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT) : -1,
               H5Dclose);
    ok = space.ok() && set.ok();
    std::vector<T> buffer(std::size_t(std::min(rows, kRowsPerChunk) * c.columns));
    for (hsize_t first = 0; ok && first < rows; first += kRowsPerChunk) {
      hsize_t const count[2] = {std::min(kRowsPerChunk, rows - first), c.columns};
      hsize_t const start[2] = {first, 0};
      fill(std::size_t(first), std::size_t(count[0]), buffer.data());
      if (hash) hash->bytes(buffer.data(), std::size_t(count[0] * c.columns) * sizeof(T));
      Handle memory(H5Screate_simple(rank, count, nullptr), H5Sclose);
      ok = memory.ok() && H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) >= 0 &&
           H5Dwrite(set.get(), memory_type, memory.get(), space.get(), H5P_DEFAULT, buffer.data()) >= 0;
    }
    if (ok) {
      double const zero = 0;
      number(set.get(), "U_L exponent", physical ? c.length : zero);
      number(set.get(), "U_M exponent", physical ? c.mass : zero);
      number(set.get(), "U_t exponent", physical ? c.time : zero);
      number(set.get(), "U_I exponent", zero);
      number(set.get(), "U_T exponent", zero);
      number(set.get(), "a-scale exponent", zero);
      number(set.get(), "h-scale exponent", zero);
    }
    ok = ok && set.close() && space.close();
  }
};

// A file access property list: HDF5's 1.8 format (superblock and object headers carry checksums of
// their own, so a damaged structure is refused by HDF5 before nbody reads a value), and a close of
// the file that closes every object still open in it.
Handle file_access() {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (fapl.ok() && H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18) >= 0 &&
      H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG) >= 0)
    return fapl;
  return Handle(-1, H5Pclose);
}

// Reserves the disk blocks of a file about to be written with about `bytes`, beyond its end (its
// size is unchanged): a disk without room for it fails here, before HDF5 holds any data it could
// not write, and HDF5's writes and close then land in blocks that are already the file's. Where the
// estimate's headroom does not fit, the datasets' own bytes (`least`, which the file needs anyway) are
// reserved instead: a file that fits is written, and read back before it is published. File systems
// that cannot reserve (some network ones) go on without.
bool reserve_blocks(const std::string& path, std::uint64_t bytes, std::uint64_t least) {
  int const fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  int rc = ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, off_t(bytes));
  if (rc != 0 && errno == ENOSPC) rc = ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, off_t(least));
  int const err = errno;
  ::close(fd);
  errno = err;
  return rc == 0 || err == EOPNOTSUPP || err == ENOSYS || err == EINVAL;
}

// Gives back the blocks reserve_blocks took beyond the end of the file as written (`reserved`: what it
// asked for): left, they would stay the file's after it is published, up to twice its size on the disk.
// Best effort: a file system that cannot punch keeps them.
void release_blocks_past_end(const std::string& path, std::uint64_t reserved) {
  int const fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && std::uint64_t(st.st_size) < reserved) {
    // A truncation to the file's own size drops the blocks past its end on ext4 and XFS, whose hole
    // punching stops at the end; tmpfs keeps them through that and gives them back to a punched hole.
    (void)::ftruncate(fd, st.st_size);
    (void)::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, st.st_size, off_t(reserved - st.st_size));
  }
  ::close(fd);
}

// The SWIFT unit attributes: U_L, U_M, U_t, as written and hashed.
void unit_values(const Units& u, double (&out)[3]) {
  out[0] = u.length_cm;
  out[1] = u.mass_g;
  out[2] = u.time_s();
}

// The bodies of each family, in index order: rows of its particle group.
std::vector<std::vector<std::uint32_t>> family_rows(const BodySet& b) {
  std::vector<std::vector<std::uint32_t>> rows(std::size(kFamilies));
  std::vector<std::size_t> count(std::size(kFamilies), 0);  // each list made at its size: 4 bytes a body, no growth
  for (std::size_t i = 0; i < b.size(); ++i)
    for (std::size_t f = 0; f < std::size(kFamilies); ++f)
      if (b.type[i] == kFamilies[f].type) ++count[f];
  for (std::size_t f = 0; f < std::size(kFamilies); ++f) rows[f].reserve(count[f]);
  for (std::size_t i = 0; i < b.size(); ++i)
    for (std::size_t f = 0; f < std::size(kFamilies); ++f)
      if (b.type[i] == kFamilies[f].type) rows[f].push_back(std::uint32_t(i));
  return rows;
}

// Writes a checkpoint (`checkpoint`: every setting, the exact state, a checksum) or a snapshot
// (`values`: the precision of its reals); returns false on any failure (errno as the failing call
// left it). `checksum` gets the value written into Header/Checksum.
// `time_steps`: a snapshot's bodies' own steps (hermite4's), written as each family's TimeStep.
bool write_file(const std::string& path, const BodySet& b, const RunRecord& run, bool checkpoint, Precision values,
                std::uint64_t& checksum, const hermite::HermiteState* hs = nullptr,
                const std::vector<double>* time_steps = nullptr) {
  std::size_t const n = b.size();
  Handle fapl = file_access();
  if (!fapl.ok()) return false;
  Handle fcpl = Writer::untimed(H5P_FILE_CREATE);  // the root group's
  if (!fcpl.ok()) return false;
  Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()), H5Fclose);
  if (!file.ok()) return false;
  // The datasets' bytes, and 64 KiB for HDF5's structures and attributes (measured: 8 to 24 KB).
  std::size_t const real_bytes = values == Precision::fp64 ? 8 : 4;
  std::uint64_t const data =
      std::uint64_t(n) * ((checkpoint ? 10 : 7) * real_bytes + 8 + 4 + (hs ? 14 * 8 : 0) + (time_steps ? real_bytes : 0));
  std::uint64_t const reserved = data + (64u << 10);
  if (!reserve_blocks(path, reserved, data)) return false;
  double const side = box_side_of(b), shift = side / 2;
  if (!std::isfinite(side) || (values == Precision::fp32 && !std::isfinite(float(side)))) {
    errno = ERANGE;  // positions too large to be shifted into a box in this precision
    return false;
  }
  double units[3];
  unit_values(run.units, units);
  bool const physical = run.units.physical();
  auto const rows = family_rows(b);

  Writer w;
  Fnv1a hash;
  if (checkpoint) hash_record(hash, run, n, 2, units, shift);
  Handle header = w.group(file.get(), "Header");
  {
    hid_t const h = header.get();
    std::uint32_t counts[6] = {}, highs[6] = {};
    for (std::size_t f = 0; f < std::size(kFamilies); ++f) {
      counts[kFamilies[f].part_type] = std::uint32_t(rows[f].size() & 0xffffffffu);
      highs[kFamilies[f].part_type] = std::uint32_t(std::uint64_t(rows[f].size()) >> 32);
    }
    double const mass_table[6] = {0, 0, 0, 0, 0, 0};
    double const box[3] = {side, side, side}, shifts[3] = {shift, shift, shift};
    w.text(h, "Code", "SWIFT");
    w.number(h, "Dimension", std::int32_t{3});
    w.attribute(h, "NumPart_ThisFile", H5T_NATIVE_UINT32, counts, 6);
    w.attribute(h, "NumPart_Total", H5T_NATIVE_UINT32, counts, 6);
    w.attribute(h, "NumPart_Total_HighWord", H5T_NATIVE_UINT32, highs, 6);
    w.attribute(h, "MassTable", H5T_NATIVE_DOUBLE, mass_table, 6);
    w.number(h, "Time", time_of(run));
    w.number(h, "Redshift", 0.0);
    w.number(h, "Scale-factor", 1.0);
    w.attribute(h, "BoxSize", H5T_NATIVE_DOUBLE, box, 3);
    w.attribute(h, "Shift", H5T_NATIVE_DOUBLE, shifts, 3);
    w.number(h, "NumFilesPerSnapshot", std::int32_t{1});
    w.number(h, "Omega0", 0.0);
    w.number(h, "OmegaLambda", 0.0);
    w.number(h, "HubbleParam", 1.0);
    for (const char* flag : {"Flag_Sfr", "Flag_Cooling", "Flag_StellarAge", "Flag_Metals", "Flag_Feedback"})
      w.number(h, flag, std::int32_t{0});
    w.number(h, "Flag_DoublePrecision", std::int32_t{values == Precision::fp64});
    w.number(h, "NbodyFormat", kFormat);
    w.text(h, "NbodyFile", checkpoint ? "checkpoint" : "snapshot");
    w.number(h, "Step", run.step);
    w.text(h, "MassUnit", run.units.mass);
    w.text(h, "LengthUnit", run.units.length);
    w.number(h, "Softening", run.softening);  // a snapshot's too: the bodies' potential needs it
    if (!run.course.empty()) w.text(h, "Course", run.course);  // a snapshot's too: which course of its series it is
    w.text(h, "Integrator", run.integrator);  // a snapshot's too: whose steps its TimeStep are (hermite4's)
    if (!checkpoint && run.stopped) w.number(h, "Stopped", std::int32_t{1});
    if (checkpoint) {
      w.number(h, "StartTime", run.start_time);
      w.number(h, "DtSinceStep", run.dt_since_step);
      w.number(h, "DtSinceTime", run.dt_since_time);
      w.text(h, "Precision", name_of(run.precision));
      w.number(h, "Dt", run.dt);
      w.number(h, "Damping", run.damping);
      w.text(h, "Scenario", run.scenario);
      w.number(h, "Seed", run.seed);
      if (run.initial_energy) w.number(h, "InitialEnergy", *run.initial_energy);
      if (run.hermite) {
        w.number(h, "HermiteEta", run.hermite->eta);
        w.number(h, "HermiteEtaStart", run.hermite->eta_start);
        w.number(h, "HermiteDtMax", run.hermite->dt_max);
      }
      if (run.end_time) w.number(h, "EndTime", *run.end_time);
      else if (run.end_step) w.number(h, "EndStep", *run.end_step);
      for (auto const& [name, every_tag, dt_tag, every, dt] : cadence_fields(run)) {
        if (*every) w.number(h, (std::string(name) + "Every").c_str(), **every);
        else if (*dt) w.number(h, (std::string(name) + "Dt").c_str(), **dt);
      }
      if (!run.diagnostics_digest.empty()) w.text(h, "DiagnosticsDigest", run.diagnostics_digest);
    }
  }
  // What SWIFT's readers require besides the header: its unit groups, and the flags that say the
  // run is neither cosmological nor periodic.
  for (const char* name : {"Units", "InternalCodeUnits"}) {
    Handle g = w.group(file.get(), name);
    w.number(g.get(), "Unit length in cgs (U_L)", units[0]);
    w.number(g.get(), "Unit mass in cgs (U_M)", units[1]);
    w.number(g.get(), "Unit time in cgs (U_t)", units[2]);
    w.number(g.get(), "Unit current in cgs (U_I)", 1.0);
    w.number(g.get(), "Unit temperature in cgs (U_T)", 1.0);
    w.ok = w.ok && g.close();
  }
  {
    Handle policy = w.group(file.get(), "Policy");
    w.number(policy.get(), "cosmological integration", std::int32_t{0});
    w.number(policy.get(), "self gravity", std::int32_t{1});
    Handle cosmology = w.group(file.get(), "Cosmology");
    w.number(cosmology.get(), "Cosmological run", std::int32_t{0});
    Handle parameters = w.group(file.get(), "Parameters");
    w.text(parameters.get(), "InitialConditions:periodic", "0");
    Handle code = w.group(file.get(), "Code");
    w.text(code.get(), "Code", kCode);
    Handle hydro = w.group(file.get(), "HydroScheme"), subgrid = w.group(file.get(), "SubgridScheme");
    w.ok = w.ok && policy.close() && cosmology.close() && parameters.close() && code.close() && hydro.close() &&
           subgrid.close();
  }
  bool const fp64 = values == Precision::fp64;
  hid_t const real = fp64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
  // Values are rounded to the file's precision here, so that the checksum hashes exactly what the
  // file holds (an fp32 run's values are floats already: nothing changes).
  auto stored = [fp64](double v) { return fp64 ? v : double(float(v)); };
  // A checkpoint's values go into its checksum; a snapshot's into the hash its read-back is compared with
  // (snapshot_values_hash), which the file does not hold.
  Fnv1a* const hashed = &hash;  // (SmoothingLengths, filled from the softening, go into neither)
  bool exact = true;  // every shifted coordinate of a checkpoint comes back exactly
  for (std::size_t f = 0; f < std::size(kFamilies) && w.ok; ++f) {
    std::vector<std::uint32_t> const& at = rows[f];
    if (at.empty()) continue;
    hsize_t const count = at.size();
    hash.value(std::uint64_t(count));
    Handle group = w.group(file.get(), kFamilies[f].group);
    hid_t const g = group.get();
    w.dataset<std::uint64_t>(g, kParticleIds, H5T_STD_U64LE, H5T_NATIVE_UINT64, count, physical, hashed,
                             [&](std::size_t first, std::size_t k, std::uint64_t* out) {
                               for (std::size_t i = 0; i < k; ++i) out[i] = at[first + i];
                             });
    // Shifted by half the box, with what rounding took kept beside (checkpoints), in the
    // checkpoint's precision's own arithmetic; a snapshot rounds the shifted value once.
    auto split = [&](std::size_t i, int axis, double& s, double& r) {
      auto const& p = b.pos_mass[i];
      double const x = axis == 0 ? p.x : axis == 1 ? p.y : p.z;
      if (!checkpoint) {
        s = stored(x + shift);
        r = 0;
      } else if (fp64) {
        shift_exactly(x, shift, s, r);
        exact = exact && unshift(s, shift, r) == x;
      } else {
        float fs = 0, fr = 0;
        shift_exactly(float(x), float(shift), fs, fr);
        exact = exact && unshift(fs, float(shift), fr) == float(x);
        s = fs, r = fr;
      }
    };
    w.dataset<double>(g, kCoordinates, real, H5T_NATIVE_DOUBLE, count, physical, hashed,
                      [&](std::size_t first, std::size_t k, double* out) {
                        double r = 0;
                        for (std::size_t i = 0; i < k; ++i)
                          for (int axis = 0; axis < 3; ++axis) split(at[first + i], axis, out[3 * i + axis], r);
                      });
    if (checkpoint)
      w.dataset<double>(g, kRoundoff, real, H5T_NATIVE_DOUBLE, count, physical, hashed,
                        [&](std::size_t first, std::size_t k, double* out) {
                          double s = 0;
                          for (std::size_t i = 0; i < k; ++i)
                            for (int axis = 0; axis < 3; ++axis) split(at[first + i], axis, s, out[3 * i + axis]);
                        });
    w.dataset<double>(g, kVelocities, real, H5T_NATIVE_DOUBLE, count, physical, hashed,
                      [&](std::size_t first, std::size_t k, double* out) {
                        for (std::size_t i = 0; i < k; ++i) {
                          auto const& v = b.velocity[at[first + i]];
                          out[3 * i] = stored(v.x), out[3 * i + 1] = stored(v.y), out[3 * i + 2] = stored(v.z);
                        }
                      });
    w.dataset<double>(g, kMasses, real, H5T_NATIVE_DOUBLE, count, physical, hashed,
                      [&](std::size_t first, std::size_t k, double* out) {
                        for (std::size_t i = 0; i < k; ++i) out[i] = stored(b.pos_mass[at[first + i]].w);
                      });
    if (time_steps)  // powers of two: exact in either precision
      w.dataset<double>(g, kTimeStep, real, H5T_NATIVE_DOUBLE, count, physical, hashed,
                        [&](std::size_t first, std::size_t k, double* out) {
                          for (std::size_t i = 0; i < k; ++i) out[i] = stored((*time_steps)[at[first + i]]);
                        });
    if (kFamilies[f].type == BodyType::gas)  // yt's SPH reader needs a smoothing length for gas
      w.dataset<double>(g, kSmoothingLengths, real, H5T_NATIVE_DOUBLE, count, physical, nullptr,
                        [&](std::size_t, std::size_t k, double* out) { std::fill_n(out, k, stored(run.softening)); });
    w.ok = w.ok && group.close();
  }
  if (!exact) {
    errno = EDOM;  // cannot happen (|x| < shift); checked so that a checkpoint never loses a bit
    return false;
  }
  if (checkpoint && hs && w.ok) {
    // Every body in index order, float64: the state the run continues from, bit for bit.
    hash.value(std::uint8_t{1});
    hash.value(hs->epoch);
    Handle group = w.group(file.get(), kHermiteGroup);
    hid_t const g = group.get();
    w.number(g, "Epoch", hs->epoch);
    if (hs->finished) {  // only then, so that a file of any other state keeps the checksum it always had
      hash.value(std::uint8_t{1});
      w.number(g, "Finish", std::int32_t{1});
    }
    auto vectors = [&](const Column& c, const std::vector<Vec3d>& v) {
      w.dataset<double>(g, c, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, physical, &hash,
                        [&](std::size_t first, std::size_t k, double* out) {
                          for (std::size_t i = 0; i < k; ++i)
                            out[3 * i] = v[first + i].x, out[3 * i + 1] = v[first + i].y, out[3 * i + 2] = v[first + i].z;
                        });
    };
    auto scalars = [&](const Column& c, const std::vector<double>& v) {
      w.dataset<double>(g, c, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, physical, &hash,
                        [&](std::size_t first, std::size_t k, double* out) { std::copy_n(v.begin() + first, k, out); });
    };
    vectors(kHermitePositions, hs->position);
    vectors(kHermiteVelocities, hs->velocity);
    vectors(kHermiteAccelerations, hs->acceleration);
    vectors(kHermiteJerks, hs->jerk);
    scalars(kHermiteTimes, hs->time);
    scalars(kHermiteSteps, hs->step);
    w.ok = w.ok && group.close();
  }
  checksum = hash.get();
  if (checkpoint) w.number(header.get(), "Checksum", checksum);
  // Every close checked: the file's close writes the metadata HDF5 still held, and a full disk
  // may first show there.
  bool const closed = header.close() && w.ok;
  bool const written = file.close() && closed;
  if (written) release_blocks_past_end(path, reserved);
  return written;
}
// Reading ------------------------------------------------------------------------------------

class Reader {
 public:
  Reader(std::string path, hid_t file, std::string what = "not a checkpoint nbody can continue")
      : path_(std::move(path)), file_(file), what_(std::move(what)) {}

  [[noreturn]] void fail(const std::string& problem) const {
    refuse_system_error(path_);  // a read that failed is the disk's failure, not the file's
    throw InputError(path_ + ": " + problem + " (" + what_ + ")");
  }

  // Every object nbody reads is reached through hard links only: a soft link, an external link
  // (another file) or a user-defined one could point the reader at anything.
  void require_object(const std::string& where, const char* kind) const {
    if (H5Lexists(file_, where.c_str(), H5P_DEFAULT) <= 0) fail("no /" + where + " " + kind);
    H5L_info_t info{};
    if (H5Lget_info(file_, where.c_str(), &info, H5P_DEFAULT) < 0) fail("cannot read the link /" + where);
    if (info.type != H5L_TYPE_HARD)
      fail("/" + where + " is a link to another object or file; nbody reads only what the file holds itself");
  }

  Handle open_attribute(const char* group, const char* name) const {
    require_object(group, "group");
    if (!has_attribute(group, name)) fail(std::string("no ") + group + "/" + name + " attribute");
    Handle a(H5Aopen_by_name(file_, group, name, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    if (!a.ok()) fail(std::string("cannot read ") + group + "/" + name);
    return a;
  }

  // An object at the root (e.g. an optional group), reached through a hard link only.
  bool has_object(const char* name) const {
    htri_t const exists = H5Lexists(file_, name, H5P_DEFAULT);
    if (exists < 0) fail(std::string("cannot read the link /") + name + " (the file is damaged)");
    if (exists == 0) return false;
    require_object(name, "object");
    return true;
  }

  // An object at the root that is a group (reached as has_object's are).
  bool has_group(const char* name) const {
    if (!has_object(name)) return false;
    Handle object(H5Oopen(file_, name, H5P_DEFAULT), H5Oclose);
    if (!object.ok()) fail(std::string("cannot open /") + name + " (the file is damaged)");
    return H5Iget_type(object.get()) == H5I_GROUP;
  }

  // The names of a group's links (datasets, groups, links), in the order of their names (a group that cannot be
  // listed: none).
  std::vector<std::string> members(const char* group) const {
    Handle g(H5Gopen2(file_, group, H5P_DEFAULT), H5Gclose);
    if (!g.ok()) fail(std::string("cannot open /") + group + " (the file is damaged)");
    std::vector<std::string> found;
    H5G_info_t info;
    if (H5Gget_info(g.get(), &info) < 0) return found;
    for (hsize_t k = 0; k < info.nlinks; ++k) {
      ssize_t const size = H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, k, nullptr, 0, H5P_DEFAULT);
      if (size <= 0) continue;
      std::string name(std::size_t(size) + 1, '\0');
      H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, k, name.data(), name.size(), H5P_DEFAULT);
      name.resize(std::size_t(size));
      found.push_back(name);
    }
    return found;
  }

  bool has_attribute(const char* group, const char* name) const {
    Handle g(H5Gopen2(file_, group, H5P_DEFAULT), H5Gclose);
    if (!g.ok()) fail(std::string("cannot open /") + group + " (the file is damaged)");
    htri_t const exists = H5Aexists(g.get(), name);
    if (exists < 0) fail(std::string("cannot read the attributes of /") + group + " (the file is damaged)");
    return exists > 0;
  }

  template <class T>
  T scalar(const char* name, hid_t memory_type, const char* group = "Header") const {
    Handle a = open_attribute(group, name);
    Handle space(H5Aget_space(a.get()), H5Sclose);
    if (H5Sget_simple_extent_npoints(space.get()) != 1) fail(std::string(group) + "/" + name + " is not one value");
    T v{};
    if (H5Aread(a.get(), memory_type, &v) < 0) fail(std::string(group) + "/" + name + " has the wrong type");
    return v;
  }

  // A whole number from 0 to `max`, stored as an integer: a negative, fractional or too large value
  // is refused rather than wrapped or truncated by HDF5's conversion.
  std::uint64_t whole(const char* name, std::uint64_t max, std::uint64_t min = 0, const char* group = "Header") const {
    std::string const named = std::string(group) + "/" + name;
    std::uint64_t v = 0;
    {
      Handle a = open_attribute(group, name);
      Handle type(H5Aget_type(a.get()), H5Tclose);
      if (H5Tget_class(type.get()) != H5T_INTEGER) fail(named + " is not a whole number");
      if (H5Tget_sign(type.get()) == H5T_SGN_2) {
        auto const s = scalar<std::int64_t>(name, H5T_NATIVE_INT64, group);
        if (s < 0) fail(named + " is " + std::to_string(s) + "; must be " + std::to_string(min) + " or more");
        v = std::uint64_t(s);
      } else {
        v = scalar<std::uint64_t>(name, H5T_NATIVE_UINT64, group);
      }
    }
    if (v < min) fail(named + " is " + std::to_string(v) + "; must be " + std::to_string(min) + " or more");
    if (v > max) fail(named + " is " + std::to_string(v) + "; must be at most " + std::to_string(max));
    return v;
  }

  double finite(const char* name, const char* group = "Header") const {
    double const v = scalar<double>(name, H5T_NATIVE_DOUBLE, group);
    if (!std::isfinite(v)) fail(std::string(group) + "/" + name + " is not a finite number");
    return v;
  }

  // Six counts, one per GADGET particle type, as the file stores them: nbody writes uint32, a script may write int64
  // (h5py's default). Read as 64 bits, so that a count beyond 32 bits is the file's, not the 4294967295 HDF5 clamps it
  // to, and a signed one is refused where negative rather than clamped to 0.
  // `more`: a file may count more types than GADGET's six (current SWIFT's seventh, its neutrinos), none of which
  // may then hold a body.
  void counts(const char* name, std::uint64_t (&out)[6], bool more = false) const {
    std::string const named = std::string("Header/") + name;
    Handle a = open_attribute("Header", name);
    Handle space(H5Aget_space(a.get()), H5Sclose);
    Handle type(H5Aget_type(a.get()), H5Tclose);
    hssize_t const n = H5Sget_simple_extent_npoints(space.get());
    if (n != 6 && !(more && n > 6 && n <= 64)) fail(named + " is not 6 counts");
    std::vector<std::uint64_t> all(std::size_t(n), 0);
    H5T_class_t const cls = H5Tget_class(type.get());
    if (cls == H5T_INTEGER && H5Tget_sign(type.get()) == H5T_SGN_NONE) {
      if (H5Aread(a.get(), H5T_NATIVE_UINT64, all.data()) < 0) fail(named + " is not " + std::to_string(n) + " counts");
    } else if (cls == H5T_FLOAT) {  // whole numbers only: HDF5's conversion would cut 256.5 to 256 unseen
      std::vector<double> values(std::size_t(n), 0.0);
      if (H5Aread(a.get(), H5T_NATIVE_DOUBLE, values.data()) < 0) fail(named + " is not " + std::to_string(n) + " counts");
      for (std::size_t t = 0; t < values.size(); ++t) {
        if (!(values[t] >= 0.0 && values[t] <= 9007199254740992.0 && values[t] == std::floor(values[t]))) {
          std::ostringstream v;
          v << values[t];
          fail(named + " holds " + v.str() + "; a count is a whole number >= 0");
        }
        all[t] = std::uint64_t(values[t]);
      }
    } else if (cls != H5T_INTEGER) {
      fail(named + " is not " + std::to_string(n) + " counts (an HDF5 type of class " + std::to_string(int(cls)) +
           ", not integers)");
    } else {
      std::vector<std::int64_t> values(std::size_t(n), 0);
      if (H5Aread(a.get(), H5T_NATIVE_INT64, values.data()) < 0) fail(named + " is not " + std::to_string(n) + " counts");
      for (std::size_t t = 0; t < values.size(); ++t) {
        if (values[t] < 0) fail(named + " holds " + std::to_string(values[t]) + "; a count must be >= 0");
        all[t] = std::uint64_t(values[t]);
      }
    }
    for (std::size_t t = 6; t < all.size(); ++t)
      if (all[t] != 0)
        fail(named + " gives PartType" + std::to_string(t) + " " + std::to_string(all[t]) + " bodies (SWIFT's " +
             "neutrinos, say), and nbody reads types 0 to 5 only");
    std::copy_n(all.begin(), 6, out);
  }

  // Three equal, finite values (SWIFT's BoxSize and Shift).
  double three_equal(const char* name) const {
    Handle a = open_attribute("Header", name);
    Handle space(H5Aget_space(a.get()), H5Sclose);
    double v[3] = {};
    if (H5Sget_simple_extent_npoints(space.get()) != 3 || H5Aread(a.get(), H5T_NATIVE_DOUBLE, v) < 0)
      fail(std::string("Header/") + name + " is not 3 numbers");
    if (!std::isfinite(v[0]) || v[0] != v[1] || v[0] != v[2])
      fail(std::string("Header/") + name + " is not 3 equal finite numbers");
    return v[0];
  }

  // A string attribute, fixed-length (as nbody writes it) or variable-length (as h5py writes a str).
  std::string text(const char* name) const {
    Handle a = open_attribute("Header", name);
    Handle type(H5Aget_type(a.get()), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_STRING) fail(std::string("Header/") + name + " is not a string");
    if (H5Tis_variable_str(type.get()) > 0) {
      char* c = nullptr;
      if (H5Aread(a.get(), type.get(), &c) < 0 || !c) fail(std::string("cannot read Header/") + name);
      std::string s(c);
      H5free_memory(c);
      if (s.size() > 4096) fail(std::string("Header/") + name + " is not a short string");
      return s;
    }
    std::size_t const size = H5Tget_size(type.get());
    if (size == 0 || size > 4096) fail(std::string("Header/") + name + " is not a short string");
    std::vector<char> buffer(size + 1, '\0');
    if (H5Aread(a.get(), type.get(), buffer.data()) < 0) fail(std::string("cannot read Header/") + name);
    return std::string(buffer.data());  // up to the first null: null-terminated or null-padded
  }

  // Refuses dataset `c` of `group` unless it holds `bodies` rows: before memory for the bodies a header claims is
  // taken (a header that says 2^30 over a file of 100 is a bad file, not a lack of memory).
  void expect_rows(const char* group, const Column& c, hsize_t bodies) const {
    Shape const s = shape_of(group, c);
    if (s.rank < 1 || s.dims[0] != bodies) fail(shape_problem(s.where, s.rank, s.dims, bodies, c.columns));
  }

  // The rows of `group`'s dataset `c` (its first dimension; 0 for a scalar).
  hsize_t rows_of(const char* group, const Column& c) const {
    Shape const s = shape_of(group, c);
    return s.rank < 1 ? 0 : s.dims[0];
  }

  // The shape of `group`'s dataset `c` as stored, named as messages name it ("PartType1/Coordinates").
  struct Shape {
    std::string where;
    int rank = 0;
    hsize_t dims[H5S_MAX_RANK] = {};
  };
  Shape shape_of(const char* group, const Column& c) const {
    Shape s;
    s.where = std::string(group) + "/" + c.name;
    Handle set = open_dataset(group, s.where);
    Handle space(H5Dget_space(set.get()), H5Sclose);
    s.rank = H5Sget_simple_extent_ndims(space.get());
    if (s.rank < 0 || H5Sget_simple_extent_dims(space.get(), s.dims, nullptr) < 0)
      fail("cannot read the shape of " + s.where + " (the file is damaged)");
    return s;
  }

  // The dataset `where` of `group`, reached by hard links only.
  Handle open_dataset(const char* group, const std::string& where) const {
    require_object(group, "group");
    require_object(where, "dataset");
    {
      Handle object(H5Oopen(file_, where.c_str(), H5P_DEFAULT), H5Oclose);
      if (object.ok() && H5Iget_type(object.get()) != H5I_DATASET)
        fail(where + " is " + (H5Iget_type(object.get()) == H5I_GROUP ? "a group" : "a named type") +
             ", not a dataset");
    }
    Handle set(H5Dopen2(file_, where.c_str(), H5P_DEFAULT), H5Dclose);
    if (!set.ok()) fail("cannot open " + where + " (the file is damaged)");
    return set;
  }

  // "PartType1/Coordinates has shape (897), expected (299, 3)".
  static std::string shape_problem(const std::string& where, int rank, const hsize_t* dims, hsize_t bodies,
                                   hsize_t columns) {
    std::ostringstream s;
    s << where << " has shape (";
    for (int d = 0; d < rank; ++d) s << (d ? ", " : "") << dims[d];
    s << "), expected (" << bodies;
    if (columns > 1) s << ", " << columns;
    s << ")";
    return s.str();
  }

  // Reads dataset `c` (`bodies` rows) a chunk at a time as `memory_type`: each(first, count, rows).
  // Its shape, its storage (inside this file, not external or virtual) and its type are checked
  // before anything is read.
  // An interruptible read (a restart's start-up) throws Interrupted between chunks after a signal.
  template <class T, class Each>
  void rows(const char* group, const Column& c, hsize_t bodies, hid_t memory_type, bool interruptible,
            Each&& each) const {
    std::string const where = std::string(group) + "/" + c.name;
    Handle set = open_dataset(group, where);
    {
      Handle dcpl(H5Dget_create_plist(set.get()), H5Pclose);
      if (!dcpl.ok()) fail("cannot read how " + where + " is stored");
      if (H5Pget_layout(dcpl.get()) == H5D_VIRTUAL) fail(where + " is a virtual dataset (its values live in other files)");
      if (H5Pget_external_count(dcpl.get()) != 0) fail(where + " is stored in external files");
    }
    Handle space(H5Dget_space(set.get()), H5Sclose);
    int const rank = H5Sget_simple_extent_ndims(space.get());
    hsize_t dims[H5S_MAX_RANK] = {};  // the shape as stored, whatever its rank: () for a scalar
    if (rank < 0 || H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 0)
      fail("cannot read the shape of " + where + " (the file is damaged)");
    if (rank < 1 || rank > 2 || dims[0] != bodies || (rank == 2 ? dims[1] : 1) != c.columns ||
        (c.columns > 1 && rank != 2))
      fail(shape_problem(where, rank, dims, bodies, c.columns));
    Handle type(H5Dget_type(set.get()), H5Tclose);
    H5T_class_t const cls = H5Tget_class(type.get());
    if (cls != H5T_FLOAT && cls != H5T_INTEGER) fail(where + " does not hold numbers");
    // HDF5's conversion would cut 2.5 to 2 unseen: identifiers and types are stored as integers or refused.
    if (!c.fp && cls != H5T_INTEGER) fail(where + " holds floating-point numbers; it must hold integers");
    std::vector<T> buffer(std::size_t(std::min(bodies, kRowsPerChunk) * c.columns));
    for (hsize_t first = 0; first < bodies; first += kRowsPerChunk) {
      if (interruptible) throw_if_interrupted();
      hsize_t const count[2] = {std::min(kRowsPerChunk, bodies - first), c.columns};
      hsize_t const start[2] = {first, 0};
      Handle memory(H5Screate_simple(rank, count, nullptr), H5Sclose);
      if (!memory.ok() || H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
          H5Dread(set.get(), memory_type, memory.get(), space.get(), H5P_DEFAULT, buffer.data()) < 0)
        fail("cannot read " + where);
      each(std::size_t(first), std::size_t(count[0]), buffer.data());
    }
  }

 private:
  std::string path_;
  hid_t file_;
  std::string what_;  // what the file is not, after each refusal
};

// Header/Course: 16 lowercase hexadecimal digits (RunRecord::course).
std::string read_course(const Reader& r) {
  std::string const course = r.text("Course");
  if (course.size() != 16 || course.find_first_not_of("0123456789abcdef") != std::string::npos)
    r.fail("Header/Course '" + course + "' is not a run's course (16 hexadecimal digits)");
  return course;
}

// The header's values, every one checked against the command line's bounds, and the stored checksum
// (none for a file written without one).
struct Header {
  CheckpointHeader info;
  int format = 2;
  std::uint64_t counts[6] = {};  // bodies per particle type (format 1: all of type 1)
  double units[3] = {};          // U_L, U_M, U_t as the file states them (format 2)
  double shift = 0;              // half the box: Coordinates - shift is the position (format 2)
  bool roundoff = true;          // CoordinateRoundoff beside Coordinates (a checkpoint's; a snapshot rounds once)
  std::optional<std::uint64_t> checksum;
};

// The bodies of each particle type (h.counts) and in all (h.info.bodies), checked: only the types nbody writes, 1 to
// kMaxBodies in all, all in this one file.
void read_counts(const Reader& r, Header& h, bool every_type = false) {
  std::uint64_t counts[6] = {}, highs[6] = {};
  // Another program's file in one part may state its counts in NumPart_ThisFile alone: those are the snapshot's.
  bool const this_file_alone = every_type && !r.has_attribute("Header", "NumPart_Total") &&
                               r.has_attribute("Header", "NumPart_ThisFile");
  std::string const total = this_file_alone ? "NumPart_ThisFile" : "NumPart_Total";
  if (every_type && !r.has_attribute("Header", "NumPart_Total") && !this_file_alone)
    r.fail("no Header/NumPart_Total attribute (nor NumPart_ThisFile): the bodies of each particle type");
  r.counts(total.c_str(), counts, every_type);
  if (!this_file_alone && r.has_attribute("Header", "NumPart_Total_HighWord"))
    r.counts("NumPart_Total_HighWord", highs, every_type);
  std::uint64_t bodies = 0;
  bool wraps = false;  // a count or a sum past 2^64 - 1 (the high words can say so)
  constexpr std::uint64_t kMost = std::numeric_limits<std::uint64_t>::max();
  for (int t = 0; t < 6; ++t) {
    bool const used = every_type || (h.format == 1 ? t == 1 : (t == 0 || t == 1 || t == 4));
    if (!used && (counts[t] || highs[t]))
      r.fail("bodies of particle type " + std::to_string(t) +
             (h.format == 1 ? " (nbody wrote PartType1 only)" : " (nbody writes PartType0, 1 and 4 only)"));
    // GADGET's high word counts 2^32s; a count stored in 64 bits is whole in the low one.
    wraps = wraps || highs[t] > (kMost >> 32) || counts[t] > kMost - (highs[t] << 32);
    h.counts[t] = (highs[t] << 32) + counts[t];
    wraps = wraps || h.counts[t] > kMost - bodies;
    bodies += h.counts[t];
  }
  if (wraps || bodies == 0 || bodies > kMaxBodies) {
    bool const high = std::any_of(highs, highs + 6, [](std::uint64_t v) { return v != 0; });
    r.fail("Header/" + total + (high ? " with NumPart_Total_HighWord (2^32 each)" : "") + " says " +
           (wraps ? std::string("more than 2^64") : std::to_string(bodies)) + " bodies; must be 1 to " +
           std::to_string(kMaxBodies));
  }
  if (!this_file_alone && r.has_attribute("Header", "NumPart_ThisFile")) {
    std::uint64_t this_file[6] = {};
    r.counts("NumPart_ThisFile", this_file, every_type);
    if (!std::equal(this_file, this_file + 6, counts) || std::any_of(highs, highs + 6, [](std::uint64_t v) { return v != 0; }))
      r.fail("Header/NumPart_ThisFile disagrees with NumPart_Total (nbody reads a snapshot in one file)");
  }
  h.info.bodies = bodies;
}

// The units as given, parsed again with the command line's rules, and the numbers SWIFT's readers use, as the file
// states them (format 2); the shift, exact in the file's precision (`run.precision`) and positive, or the positions
// cannot be recovered exactly.
void read_units_and_shift(const Reader& r, Header& h) {
  RunRecord& run = h.info.run;
  std::string const mass = r.text("MassUnit"), length = r.text("LengthUnit");
  try {  // named as the file has them: no option was given
    run.units = parse_units(mass, length,
                            UnitSource{"Header/MassUnit '" + mass + "'", "Header/LengthUnit '" + length + "'",
                                       "Header/MassUnit", "Header/LengthUnit"});
  } catch (const InputError& e) {
    r.fail(e.what());
  }
  h.units[0] = r.finite("Unit length in cgs (U_L)", "Units");
  h.units[1] = r.finite("Unit mass in cgs (U_M)", "Units");
  h.units[2] = r.finite("Unit time in cgs (U_t)", "Units");
  // The same units twice: nbody's words in the Header, and the numbers yt and SWIFT's readers take from /Units. A
  // file where they differ (one edited) is two systems to two readers: refused, naming both.
  double stated[3];
  unit_values(run.units, stated);
  for (int k = 0; k < 3; ++k)
    if (!(std::abs(h.units[k] - stated[k]) <= 1e-12 * std::abs(stated[k]))) {
      static constexpr const char* kNames[3] = {"Unit length in cgs (U_L)", "Unit mass in cgs (U_M)",
                                                "Unit time in cgs (U_t)"};
      static constexpr const char* kCgs[3] = {" cm", " g", " s"};
      r.fail(std::string("/Units gives ") + kNames[k] + " " + shortest(h.units[k]) + kCgs[k] + ", which yt reads, " +
             "where Header/MassUnit and LengthUnit (" + run.units.describe() + ") make it " + shortest(stated[k]) +
             kCgs[k] +
             ": the two statements of the units disagree (one edited?); make them agree");
    }
  h.shift = r.three_equal("Shift");
  if (!(h.shift > 0) || (run.precision == Precision::fp32 && double(float(h.shift)) != h.shift)) {
    std::ostringstream s;
    s.precision(17);
    s << "Header/Shift " << h.shift << " is not a positive number exact in " << name_of(run.precision);
    r.fail(s.str());
  }
}

// `names`: how the messages name the entry points (core/setting_names.h).
Header read_header(const Reader& r, const SettingNames& names = {}) {
  Header h;
  RunRecord& run = h.info.run;
  // An HDF5 file of another program: said as such, not as a damaged checkpoint.
  if (!r.has_group("Header")) r.fail("an HDF5 file with no /Header group: another program's");
  if (!r.has_attribute("Header", "NbodyFile") && !r.has_attribute("Header", "Step") &&
      (r.has_attribute("Header", "NumPart_Total") || r.has_attribute("Header", "NumPart_ThisFile")))
    r.fail("another program's snapshot in the GADGET/SWIFT layout (its Header has no Step); " +
           names.entry("--load") + " starts a new run from it");
  h.format = r.has_attribute("Header", "NbodyFormat") ? int(r.whole("NbodyFormat", 1000)) : 1;
  if (h.format != 1 && h.format != 2)
    r.fail("Header/NbodyFormat is " + std::to_string(h.format) + "; this nbody reads formats 1 and 2 (a newer nbody wrote it?)");
  if (h.format == 2 && r.has_attribute("Header", "NbodyFile") && r.text("NbodyFile") != "checkpoint")
    r.fail("it is an nbody " + r.text("NbodyFile") + " (bodies for analysis, no run settings); " +
           names.entry("--restart") + " takes a file written by " + names.entry("--checkpoint") + ", and " +
           names.entry("--load") + " starts a new run from a snapshot");
  read_counts(r, h);

  run.step = r.whole("Step", kMaxSteps);
  run.start_time = r.finite("StartTime");
  bool const dt_changed = r.has_attribute("Header", "DtSinceStep") || r.has_attribute("Header", "DtSinceTime");
  run.dt_since_step = dt_changed ? r.whole("DtSinceStep", run.step) : 0;
  run.dt_since_time = dt_changed ? r.finite("DtSinceTime") : run.start_time;
  std::string const precision = r.text("Precision");
  auto const p = from_name<Precision>(precision);
  if (!p) r.fail("Header/Precision '" + precision + "' is not fp32 or fp64");
  run.precision = *p;
  run.integrator = r.text("Integrator");
  run.dt = r.finite("Dt");
  if (auto const why = dt_problem(run.dt); !why.empty()) {
    std::ostringstream s;
    s << "Header/Dt " << run.dt << ": " << why;
    r.fail(s.str());
  }
  run.softening = r.finite("Softening");
  bool const unsoftened = run.integrator == "hermite4" && run.softening == 0.0;  // hermite4 takes 0
  if (auto const why = softening_problem(run.softening, run.precision); !why.empty() && !unsoftened) {
    std::ostringstream s;
    s << "Header/Softening " << run.softening << ": " << why;
    r.fail(s.str());
  }
  run.damping = r.finite("Damping");
  if (auto const why = damping_problem(run.damping); !why.empty()) {
    std::ostringstream s;
    s << "Header/Damping " << run.damping << ": " << why;
    r.fail(s.str());
  }
  run.scenario = r.text("Scenario");
  run.seed = r.whole("Seed", std::uint64_t(std::numeric_limits<long long>::max()));
  if (r.has_attribute("Header", "InitialEnergy")) run.initial_energy = r.finite("InitialEnergy");
  if (r.has_attribute("Header", "HermiteEta") || run.integrator == "hermite4") {
    // The settings with the command line's bounds (core/bounds.h), each named as the file has it.
    hermite::HermiteParams hp;
    hp.eta = r.finite("HermiteEta");
    hp.eta_start = r.finite("HermiteEtaStart");
    hp.dt_max = r.finite("HermiteDtMax");
    for (auto const& why : {eta_problem(hp.eta, "Header/HermiteEta"),
                            eta_problem(hp.eta_start, "Header/HermiteEtaStart"),
                            dt_max_problem(hp.dt_max, "Header/HermiteDtMax")})
      if (!why.empty()) r.fail(why);
    run.hermite = hp;
  }
  // Where the run was going: a time or a step a command line could have named.
  if (r.has_attribute("Header", "EndTime") && r.has_attribute("Header", "EndStep"))
    r.fail("Header/EndTime and Header/EndStep are both given; a run goes to one of them");
  if (r.has_attribute("Header", "EndTime")) {
    run.end_time = r.finite("EndTime");
    if (auto const why = time_problem(*run.end_time); !why.empty())
      r.fail("Header/EndTime " + shortest(*run.end_time) + " is " + why);
  } else if (r.has_attribute("Header", "EndStep")) {
    run.end_step = r.whole("EndStep", kMaxSteps);
  }
  // How often it wrote its series: cadences a command line could have named.
  for (auto const& [name, every_tag, dt_tag, every, dt] : cadence_fields(run)) {
    std::string const every_name = std::string(name) + "Every", dt_name = std::string(name) + "Dt";
    bool const has_every = r.has_attribute("Header", every_name.c_str());
    bool const has_dt = r.has_attribute("Header", dt_name.c_str());
    if (has_every && has_dt)
      r.fail("Header/" + every_name + " and Header/" + dt_name + " are both given; a series is written by one of them");
    if (has_every) {
      *every = r.whole(every_name.c_str(), kMaxSteps, 1);
    } else if (has_dt) {
      *dt = r.finite(dt_name.c_str());
      if (!(**dt > 0 && **dt <= kMaxTime)) {
        std::ostringstream s;
        s << "Header/" << dt_name << " " << **dt << " is not a time in (0, 1e27]";
        r.fail(s.str());
      }
    }
  }
  if (r.has_attribute("Header", "DiagnosticsDigest")) {
    // "csv:ROWS:HASH:NAME" or "jsonl:ROWS:HASH:NAME", HASH 16 hexadecimal digits, NAME a file's name.
    std::string const d = r.text("DiagnosticsDigest");
    std::size_t const first = d.find(':'), second = first == std::string::npos ? first : d.find(':', first + 1);
    std::string const format = d.substr(0, first);
    bool const rows = second != std::string::npos && second > first + 1 &&
                      d.find_first_not_of("0123456789", first + 1) == second;
    bool const hash = second != std::string::npos && d.size() > second + 18 && d[second + 17] == ':' &&
                      d.find_first_not_of("0123456789abcdef", second + 1) == second + 17;
    if (!(format == "csv" || format == "jsonl") || !rows || !hash)
      r.fail("Header/DiagnosticsDigest '" + d + "' is not a digest of a series' rows (csv:ROWS:HASH:NAME or "
             "jsonl:ROWS:HASH:NAME)");
    run.diagnostics_digest = d;
  }
  if (r.has_attribute("Header", "Course")) run.course = read_course(r);
  if (h.format == 2) read_units_and_shift(r, h);  // (the checksum covers them)
  double const time = time_of(run);
  if (!std::isfinite(time)) r.fail("the time it reached is not finite");
  if (r.has_attribute("Header", "Time") && r.finite("Time") != time) {
    std::ostringstream s;
    s.precision(17);
    s << "Header/Time " << r.finite("Time") << " disagrees with the time its step and dt give, " << time;
    r.fail(s.str());
  }
  if (r.has_attribute("Header", "Checksum")) h.checksum = r.scalar<std::uint64_t>("Checksum", H5T_NATIVE_UINT64);
  return h;
}

// Reads every dataset in the checksum's order and returns the checksum of the header and the
// bodies. With `into` (a restart: interruptible), the bodies are checked (IDs 0..N-1 once each over
// all groups, values as body_value_problem takes them, known types) and put in place.
std::uint64_t read_bodies(const Reader& r, const Header& header, BodySet* into,
                          hermite::HermiteState* hermite_into = nullptr) {
  std::uint64_t const n = header.info.bodies;
  Precision const precision = header.info.run.precision;
  Fnv1a hash;
  hash_record(hash, header.info.run, n, header.format, header.units, header.shift);
  if (into)
    for (Family const& family : kFamilies)
      if ((header.format != 1 || family.part_type == 1) && header.counts[family.part_type])
        r.expect_rows(family.group, kCoordinates, header.counts[family.part_type]);
  if (into) into->resize(std::size_t(n));
  std::vector<bool> seen(into ? std::size_t(n) : 0, false);
  std::vector<std::uint32_t> ids;  // row of the group being read -> body, when the bodies are kept
  bool const interruptible = into != nullptr;
  // A body's value as every reader of bodies checks it (core/bounds.h: the tipsy reader, Python's arrays), named by
  // the body and the field: `field` of kBodyFields. The magnitude bound holds for every file without a checksum (a
  // snapshot, a checkpoint edited by hand); one with a checksum is the run's own state, which may have carried a body
  // past it: continued as it was written where the checksum holds, and refused for the checksum where it does not.
  bool const bounded = !header.checksum;
  auto check = [&](std::uint32_t body, std::size_t field, double value) {
    if (auto const why = body_value_problem(kBodyFields[field], value, field == 0, bounded); !why.empty())
      r.fail("body " + std::to_string(body) + ": " + why);
  };
  for (Family const& family : kFamilies) {
    if (header.format == 1 && family.part_type != 1) continue;
    std::uint64_t const count = header.counts[family.part_type];
    if (count == 0) continue;
    if (header.format == 2) hash.value(count);
    const char* const g = family.group;
    if (into) ids.assign(std::size_t(count), 0);
    r.rows<std::uint64_t>(g, kParticleIds, count, H5T_NATIVE_UINT64, interruptible,
                          [&](std::size_t first, std::size_t k, const std::uint64_t* v) {
                            hash.bytes(v, k * sizeof *v);
                            if (!into) return;
                            for (std::size_t j = 0; j < k; ++j) {
                              std::uint64_t const i = v[j];
                              if (i >= n || seen[i])
                                r.fail("ParticleIDs must hold 0.." + std::to_string(n - 1) + " once each; " +
                                       std::to_string(i) + (i >= n ? " is out of range" : " appears twice"));
                              seen[i] = true;
                              ids[first + j] = std::uint32_t(i);
                              into->type[i] = family.type;
                            }
                          });
    if (header.format == 1)
      r.rows<std::uint8_t>(g, kBodyType, count, H5T_NATIVE_UINT8, interruptible,
                           [&](std::size_t first, std::size_t k, const std::uint8_t* v) {
                             hash.bytes(v, k * sizeof *v);
                             if (!into) return;
                             for (std::size_t j = 0; j < k; ++j) {
                               if (v[j] > 2)
                                 r.fail("body " + std::to_string(ids[first + j]) + ": BodyType " +
                                        std::to_string(v[j]) + " is not 0, 1 or 2");
                               into->type[ids[first + j]] = BodyType(v[j]);
                             }
                           });
    r.rows<double>(g, kCoordinates, count, H5T_NATIVE_DOUBLE, interruptible,
                   [&](std::size_t first, std::size_t k, const double* v) {
                     hash.bytes(v, k * 3 * sizeof *v);
                     if (!into) return;
                     for (std::size_t j = 0; j < k; ++j) {
                       // Format 1's coordinates are the positions; format 2's are checked as positions once the
                       // shift is taken off (place, below).
                       if (header.format == 1)
                         for (std::size_t c = 0; c < 3; ++c) check(ids[first + j], 1 + c, v[3 * j + c]);
                       auto& p = into->pos_mass[ids[first + j]];
                       p.x = v[3 * j], p.y = v[3 * j + 1], p.z = v[3 * j + 2];
                     }
                   });
    if (header.format == 2) {
      // position = (Coordinates - Shift) + CoordinateRoundoff, in the file's precision's arithmetic.
      double const c = header.shift;
      auto back = [&](double s, double roundoff) {
        return precision == Precision::fp64 ? unshift(s, c, roundoff)
                                            : double(unshift(float(s), float(c), float(roundoff)));
      };
      auto place = [&](std::uint32_t body, double rx, double ry, double rz) {
        auto& p = into->pos_mass[body];
        p.x = back(p.x, rx), p.y = back(p.y, ry), p.z = back(p.z, rz);
        check(body, 1, p.x), check(body, 2, p.y), check(body, 3, p.z);
      };
      if (!header.roundoff) {  // a snapshot's: the shifted value, rounded once
        if (into)
          for (std::size_t j = 0; j < count; ++j) place(ids[j], 0.0, 0.0, 0.0);
      } else {
        r.rows<double>(g, kRoundoff, count, H5T_NATIVE_DOUBLE, interruptible,
                       [&](std::size_t first, std::size_t k, const double* v) {
                         hash.bytes(v, k * 3 * sizeof *v);
                         if (!into) return;
                         for (std::size_t j = 0; j < k; ++j) place(ids[first + j], v[3 * j], v[3 * j + 1], v[3 * j + 2]);
                       });
      }
    }
    r.rows<double>(g, kVelocities, count, H5T_NATIVE_DOUBLE, interruptible,
                   [&](std::size_t first, std::size_t k, const double* v) {
                     hash.bytes(v, k * 3 * sizeof *v);
                     if (!into) return;
                     for (std::size_t j = 0; j < k; ++j) {
                       for (std::size_t c = 0; c < 3; ++c) check(ids[first + j], 4 + c, v[3 * j + c]);
                       into->velocity[ids[first + j]] = {v[3 * j], v[3 * j + 1], v[3 * j + 2]};
                     }
                   });
    r.rows<double>(g, kMasses, count, H5T_NATIVE_DOUBLE, interruptible,
                   [&](std::size_t first, std::size_t k, const double* v) {
                     hash.bytes(v, k * sizeof *v);
                     if (!into) return;
                     for (std::size_t j = 0; j < k; ++j) {
                       check(ids[first + j], 0, v[j]);
                       into->pos_mass[ids[first + j]].w = v[j];
                     }
                   });
  }
  // hermite4's per-body state (/Hermite) where the file has it: without it (a state saved after a failure) the
  // run starts every body as at t = 0 from the synchronised bodies. Other integrators' files are read as before.
  if (header.info.run.hermite && r.has_object(kHermiteGroup)) {
    hermite::HermiteState local;
    hermite::HermiteState& s = hermite_into ? *hermite_into : local;
    s.epoch = r.finite("Epoch", kHermiteGroup);
    hash.value(std::uint8_t{1});
    hash.value(s.epoch);
    s.finished = false;
    if (r.has_attribute(kHermiteGroup, "Finish")) {  // an integer 1 only (absent: not a finish's state)
      r.whole("Finish", 1, 1, kHermiteGroup);
      s.finished = true;
      hash.value(std::uint8_t{1});
    }
    bool const keep = hermite_into != nullptr;
    if (keep) {
      s.resize(std::size_t(n));
      s.position.resize(std::size_t(n));
      s.velocity.resize(std::size_t(n));
    }
    auto vectors = [&](const Column& c, std::vector<Vec3d>& out) {
      r.rows<double>(kHermiteGroup, c, n, H5T_NATIVE_DOUBLE, interruptible,
                     [&](std::size_t first, std::size_t k, const double* v) {
                       hash.bytes(v, k * 3 * sizeof *v);
                       if (keep)
                         for (std::size_t j = 0; j < k; ++j) out[first + j] = {v[3 * j], v[3 * j + 1], v[3 * j + 2]};
                     });
    };
    auto scalars = [&](const Column& c, std::vector<double>& out) {
      r.rows<double>(kHermiteGroup, c, n, H5T_NATIVE_DOUBLE, interruptible,
                     [&](std::size_t first, std::size_t k, const double* v) {
                       hash.bytes(v, k * sizeof *v);
                       if (keep) std::copy_n(v, k, out.begin() + std::ptrdiff_t(first));
                     });
    };
    vectors(kHermitePositions, s.position);
    vectors(kHermiteVelocities, s.velocity);
    vectors(kHermiteAccelerations, s.acceleration);
    vectors(kHermiteJerks, s.jerk);
    scalars(kHermiteTimes, s.time);
    scalars(kHermiteSteps, s.step);
    if (keep)
      if (auto const why = hermite::state_problem(s, std::size_t(n), "/Hermite"); !why.empty()) r.fail(why);
  }
  return hash.get();
}

// The checks of a file before HDF5 opens it: a regular file (not a FIFO that would block, not a
// device), and HDF5.
Handle open_file(const std::string& path, const SettingNames& names = {}) {
  quiet_hdf5();
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw InputError(path + ": not a regular file; give a checkpoint written by " + names.entry("--checkpoint"));
  if (htri_t const is = H5Fis_hdf5(path.c_str()); is <= 0) {
    if (is < 0) refuse_system_error(path);
    throw InputError(path + ": not an HDF5 file; " + names.entry("--restart") + " takes a checkpoint written by " +
                     names.entry("--checkpoint"));
  }
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.ok() || H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG) < 0)
    throw RuntimeFailure(path + ": cannot set up HDF5 to read it");
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  if (!file.ok()) {
    refuse_system_error(path);
    throw InputError(path + ": cannot open the HDF5 file (damaged, or not one HDF5 can read)");
  }
  return file;
}

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << std::hex << v;
  return s.str();
}

}  // namespace

void write_checkpoint(const std::string& path, const BodySet& bodies, const RunRecord& run,
                      const hermite::HermiteState* hermite) {
  quiet_hdf5();
  std::uint64_t checksum = 0;
  write_file_atomically(
      path, "checkpoint",
      [&](const std::string& tmp) { return write_file(tmp, bodies, run, true, run.precision, checksum, hermite); },
      [&](const std::string& tmp) {
        // What is on the disk now, read back whole: the header's checksum and the one of the values
        // read must both be the one computed while writing.
        auto fail = [&](const std::string& why) {
          throw RuntimeFailure(path + ": cannot write checkpoint: " + why +
                               "; the disk may be full or failing (nothing was replaced)");
        };
        try {
          Handle file = open_file(tmp);
          Reader r(tmp, file.get());
          Header const h = read_header(r);
          if (h.checksum != checksum) fail("the file read back has another checksum in its header");
          if (read_bodies(r, h, nullptr) != checksum) fail("the values read back differ from those written");
          if (!file.close()) fail("the file read back cannot be closed");
        } catch (const InputError& e) {
          fail(std::string("the file read back is not whole (") + e.what() + ")");
        } catch (const ReadError& e) {
          fail(std::string("the file written cannot be read back (") + e.what() + ")");
        }
      });
}

namespace {

// A snapshot's values as write_file hashed them while writing: each family's count, then its ParticleIDs,
// Coordinates, Velocities, Masses and (`time_steps`) TimeStep, read back as doubles (a float file's values are the
// floats the writer rounded to, so the same doubles).
std::uint64_t snapshot_values_hash(const Reader& r, const std::uint64_t counts[6], bool time_steps) {
  Fnv1a hash;
  for (Family const& family : kFamilies) {
    std::uint64_t const count = counts[family.part_type];
    if (count == 0) continue;
    hash.value(count);
    r.rows<std::uint64_t>(family.group, kParticleIds, count, H5T_NATIVE_UINT64, false,
                          [&](std::size_t, std::size_t k, const std::uint64_t* v) { hash.bytes(v, k * sizeof *v); });
    for (const Column* c : {&kCoordinates, &kVelocities, &kMasses, &kTimeStep}) {
      if (c == &kTimeStep && !time_steps) continue;
      r.rows<double>(family.group, *c, count, H5T_NATIVE_DOUBLE, false,
                     [&](std::size_t, std::size_t k, const double* v) { hash.bytes(v, k * c->columns * sizeof *v); });
    }
  }
  return hash.get();
}

}  // namespace

void write_snapshot(const std::string& path, const BodySet& bodies, const RunRecord& run, Precision precision,
                    const std::vector<double>* time_steps) {
  if (time_steps && time_steps->size() != bodies.size())
    throw std::logic_error("write_snapshot: a time step for each body, or none");
  quiet_hdf5();
  std::uint64_t written = 0;  // the values' hash
  write_file_atomically(
      path, "snapshot",
      [&](const std::string& tmp) { return write_file(tmp, bodies, run, false, precision, written, nullptr, time_steps); },
      [&](const std::string& tmp) {
        // Read back whole: the file opens, holds what its header says, and its values are those written (a write the
        // disk lost reads back as zeros).
        bool differs = false;
        try {
          Handle file = open_file(tmp);
          Reader r(tmp, file.get());
          std::uint64_t counts[6] = {};
          r.counts("NumPart_Total", counts);
          std::uint64_t total = 0;
          for (std::uint64_t c : counts) total += c;
          if (total != bodies.size()) throw InputError("counts");
          differs = snapshot_values_hash(r, counts, time_steps != nullptr) != written;
          if (!file.close()) throw InputError("close");
        } catch (const std::runtime_error& e) {  // not whole, or not readable (ReadError)
          throw RuntimeFailure(path + ": cannot write snapshot: the file read back is not whole (" +
                               std::string(e.what()) + "); the disk may be full or failing (nothing was replaced)");
        }
        if (differs)
          throw RuntimeFailure(path + ": cannot write snapshot: the values read back differ from those written; the "
                               "disk may be full or failing (nothing was replaced)");
      });
}

double snapshot_coordinate_rounding(const BodySet& bodies, Precision precision) {
  if (bodies.size() == 0) return 0.0;
  int e = 0;
  double const side = box_side_of(bodies);
  double const m = std::frexp(side, &e);  // side = m 2^e, m in [0.5, 1)
  return std::ldexp(1.0, (m == 0.5 ? e - 1 : e) - (precision == Precision::fp64 ? 54 : 25));  // half its ulp
}

CheckpointHeader read_checkpoint_header(const std::string& path, const SettingNames& names) {
  Handle file = open_file(path, names);
  return read_header(Reader(path, file.get()), names).info;
}

Checkpoint read_checkpoint(const std::string& path, const SettingNames& names) {
  Handle file = open_file(path, names);
  Reader r(path, file.get());
  Header const h = read_header(r, names);
  Checkpoint c;
  c.run = h.info.run;
  c.format = h.format;
  std::uint64_t const checksum = read_bodies(r, h, &c.bodies, &c.hermite);
  if (h.checksum && *h.checksum != checksum)
    r.fail("its checksum is " + hex(*h.checksum) + " but its contents give " + hex(checksum) +
           ": the file changed after nbody wrote it (damaged; or edited on purpose: then delete Header/Checksum), " +
           "or a newer nbody wrote it with settings this one does not read");
  c.verified = h.checksum.has_value();
  c.bodies.time = time_of(c.run);
  return c;
}

namespace {

// What an HDF5 file's Header/NbodyFile says it is ("snapshot", "checkpoint"), "" where it says nothing or is no
// HDF5 file, and `unreadable` where it is an HDF5 file that cannot be read.
std::string nbody_file_kind(const std::string& path, const char* unreadable) {
  quiet_hdf5();
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  if (htri_t const is = H5Fis_hdf5(path.c_str()); is <= 0) {
    int const number = is < 0 ? hdf5_system_error().number : 0;
    return number != 0 && number != EACCES && number != EPERM ? unreadable : "";  // unreadable: the tipsy reader says so
  }
  try {
    Handle file = open_file(path);
    Reader r(path, file.get());
    return r.has_group("Header") && r.has_attribute("Header", "NbodyFile") ? r.text("NbodyFile") : "";
  } catch (const InputError&) {
    return unreadable;
  } catch (const RuntimeFailure&) {
    return unreadable;
  }
}

}  // namespace

// An HDF5 file that cannot be read (cut short, damaged, a read error of the disk: HDF5 cannot even tell) is taken
// for a snapshot, so that read_snapshot says what is wrong with it rather than the tipsy reader that it is no tipsy
// file.
bool is_nbody_snapshot(const std::string& path) { return nbody_file_kind(path, "snapshot") == "snapshot"; }

bool is_nbody_checkpoint(const std::string& path) { return nbody_file_kind(path, "") == "checkpoint"; }

std::string recorded_course(const std::string& path) {
  if (nbody_file_kind(path, "") == "") return "";
  try {
    Handle file = open_file(path);
    Reader r(path, file.get());
    return r.has_attribute("Header", "Course") ? read_course(r) : "";
  } catch (const InputError&) {
    return "";
  } catch (const RuntimeFailure&) {
    return "";
  }
}

Snapshot read_snapshot(const std::string& path, const SettingNames& names, bool bodies) {
  Handle file = open_file(path, names);
  Reader r(path, file.get(), "not an nbody snapshot " + names.entry("--load") + " can read");
  if (!r.has_group("Header") || !r.has_attribute("Header", "NbodyFile") || r.text("NbodyFile") != "snapshot")
    r.fail("no Header/NbodyFile 'snapshot'");
  Header h;
  h.format = int(r.whole("NbodyFormat", 1000));
  if (h.format != 2) r.fail("Header/NbodyFormat is " + std::to_string(h.format) + "; this nbody reads format 2");
  read_counts(r, h);
  Snapshot s;
  s.count = h.info.bodies;
  s.precision = r.whole("Flag_DoublePrecision", 1) != 0 ? Precision::fp64 : Precision::fp32;
  h.info.run.precision = s.precision;
  s.step = r.whole("Step", kMaxSteps);
  double const time = r.finite("Time");
  if (auto const why = time_problem(time); !why.empty()) r.fail("Header/Time " + shortest(time) + " is " + why);
  s.time = time;
  if (r.has_attribute("Header", "Course")) s.course = read_course(r);
  s.stopped = r.has_attribute("Header", "Stopped") && r.whole("Stopped", 1) == 1;
  s.softening = r.finite("Softening");
  if (!(s.softening >= 0 && s.softening <= kMaxSoftening)) {
    std::ostringstream m;
    m << "Header/Softening " << s.softening << " is not a length in [0, " << kMaxSoftening << "]";
    r.fail(m.str());
  }
  read_units_and_shift(r, h);
  h.roundoff = false;
  s.units = h.info.run.units;
  if (bodies) {
    read_bodies(r, h, &s.bodies);
    s.bodies.time = time;
  }
  return s;
}


namespace {

// What a GADGET/SWIFT-layout file states of its units, in cgs: length, mass, velocity (0: not stated).
struct StatedUnits {
  double length = 0, mass = 0, velocity = 0;
  const char* where = "";
};

StatedUnits stated_units(const Reader& r) {
  StatedUnits u;
  if (r.has_group("Units") && r.has_attribute("Units", "Unit length in cgs (U_L)")) {  // SWIFT's
    u.length = r.finite("Unit length in cgs (U_L)", "Units");
    u.mass = r.finite("Unit mass in cgs (U_M)", "Units");
    u.velocity = u.length / r.finite("Unit time in cgs (U_t)", "Units");
    u.where = "/Units";
  } else if (r.has_group("Parameters") && r.has_attribute("Parameters", "UnitLength_in_cm")) {  // GADGET-4's
    u.length = r.finite("UnitLength_in_cm", "Parameters");
    u.mass = r.finite("UnitMass_in_g", "Parameters");
    u.velocity = r.finite("UnitVelocity_in_cm_per_s", "Parameters");
    u.where = "/Parameters";
  } else if (r.has_attribute("Header", "UnitLength_in_cm")) {  // AREPO's
    u.length = r.finite("UnitLength_in_cm", "Header");
    u.mass = r.finite("UnitMass_in_g", "Header");
    u.velocity = r.finite("UnitVelocity_in_cm_per_s", "Header");
    u.where = "/Header";
  } else {
    return u;
  }
  if (!(u.length > 0 && u.mass > 0 && u.velocity > 0 && std::isfinite(u.velocity)))
    r.fail(std::string(u.where) + " states units that are not positive numbers");
  return u;
}

}  // namespace

constexpr const char* kPartGroups[] = {"PartType0", "PartType1", "PartType2", "PartType3", "PartType4", "PartType5"};

bool is_foreign_snapshot(const std::string& path) {
  quiet_hdf5();
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || H5Fis_hdf5(path.c_str()) <= 0) return false;
  try {
    Handle file = open_file(path);
    Reader r(path, file.get());
    // The layout's header with counts, or with particle groups (where the counts are missing, the reader says so).
    // The groups are looked at only without the counts: a group the reader cannot take (a soft link) is then its
    // reader's to name, not a file "in neither layout".
    if (!r.has_group("Header") || r.has_attribute("Header", "NbodyFile")) return false;
    if (r.has_attribute("Header", "NumPart_Total") || r.has_attribute("Header", "NumPart_ThisFile")) return true;
    return std::any_of(std::begin(kPartGroups), std::end(kPartGroups), [&](const char* g) { return r.has_group(g); });
  } catch (const InputError&) {
    return false;
  } catch (const RuntimeFailure&) {
    return false;
  }
}

ForeignSnapshot read_foreign_snapshot(const std::string& path, const SettingNames& names, bool bodies) {
  Handle file = open_file(path, names);
  Reader r(path, file.get(), "not GADGET/SWIFT-layout initial conditions " + names.entry("--load") + " can read");
  if (r.has_attribute("Header", "NumFilesPerSnapshot")) {
    std::uint64_t const files = r.whole("NumFilesPerSnapshot", std::numeric_limits<std::uint32_t>::max());
    if (files > 1)
      r.fail("Header/NumFilesPerSnapshot is " + std::to_string(files) + ": one part of a snapshot split over " +
             std::to_string(files) + " files; join them into one first");
  }
  if (r.has_attribute("Header", "Redshift")) {
    double const z = r.finite("Redshift");
    if (z > 0)
      r.fail("Header/Redshift is " + shortest(z) + ": a cosmological snapshot (comoving coordinates, Time the " +
             "scale factor), and nbody integrates bodies in open space");
  }
  // Comoving coordinates at z = 0 too: SWIFT's Cosmology group, GADGET-4's ComovingIntegrationOn.
  if (r.has_group("Cosmology") && r.has_attribute("Cosmology", "Cosmological run") &&
      r.whole("Cosmological run", 1, 0, "Cosmology") != 0)
    r.fail("Cosmology/Cosmological run is 1: a cosmological snapshot (comoving coordinates), and nbody integrates "
           "bodies in open space");
  if (r.has_group("Parameters") && r.has_attribute("Parameters", "ComovingIntegrationOn") &&
      r.whole("ComovingIntegrationOn", 1, 0, "Parameters") != 0)
    r.fail("Parameters/ComovingIntegrationOn is 1: a cosmological snapshot (comoving coordinates), and nbody "
           "integrates bodies in open space");
  ForeignSnapshot out;
  // A cosmology named with no word of whether the run was comoving: GADGET-2 and -3 write Omega0 and HubbleParam
  // whatever the run, and their z = 0 output of a cosmological box has Time 1 (the scale factor) and Redshift 0
  // (1/Time - 1; a Redshift above 0 is refused above). Said, not refused, where Time can be a scale factor: 1 with a
  // Redshift of 0, in (0, 1] without one. These attributes only feed that warning: one that is not a number is
  // passed over, as before it was read.
  auto number = [&](const char* key) -> std::optional<double> {
    if (!r.has_attribute("Header", key)) return std::nullopt;
    try {
      return r.finite(key);
    } catch (const InputError&) {
      return std::nullopt;
    }
  };
  bool const comoving_said = (r.has_group("Cosmology") && r.has_attribute("Cosmology", "Cosmological run")) ||
                             (r.has_group("Parameters") && r.has_attribute("Parameters", "ComovingIntegrationOn"));
  std::optional<double> const time_read = number("Time"), z = number("Redshift");
  bool const scale_factor =
      time_read && (z ? *z == 0 && std::abs(*time_read - 1.0) < 1e-6 : *time_read > 0 && *time_read <= 1.0);
  if (!comoving_said && scale_factor) {
    std::string named;
    for (const char* key : {"Omega0", "OmegaLambda"})
      if (auto const v = number(key); v && *v > 0)
        named += (named.empty() ? "" : ", ") + std::string(key) + " = " + shortest(*v);
    if (auto const h0 = number("HubbleParam"); !named.empty() && h0) named += ", HubbleParam = " + shortest(*h0);
    out.cosmology = named;
  }
  Header h;
  read_counts(r, h, true);
  // Bodies the header does not count (an h5py script's group added without its count, a type past GADGET's six):
  // refused, not dropped unseen.
  std::string const counted = r.has_attribute("Header", "NumPart_Total") ? "NumPart_Total" : "NumPart_ThisFile";
  for (int t = 0; t < 64; ++t) {
    std::string const group = "PartType" + std::to_string(t);
    if ((t < 6 && h.counts[t] > 0) || !r.has_group(group.c_str()) ||
        !r.has_object((group + "/" + kCoordinates.name).c_str()))
      continue;
    if (hsize_t const rows = r.rows_of(group.c_str(), kCoordinates); rows > 0)
      r.fail(group + "/" + kCoordinates.name + " holds " + std::to_string(rows) + " bodies where Header/" + counted +
             " counts none of type " + std::to_string(t) + (t < 6 ? "" : " (nbody reads types 0 to 5)") +
             ": the header's counts say which bodies the file holds; correct them, or remove the group");
  }
  out.count = h.info.bodies;
  std::vector<double> mass_table(6, 0.0);  // (SWIFT's has a seventh, its neutrinos')
  if (r.has_attribute("Header", "MassTable")) {
    Handle a = r.open_attribute("Header", "MassTable");
    Handle space(H5Aget_space(a.get()), H5Sclose);
    hssize_t const n = H5Sget_simple_extent_npoints(space.get());
    if (n >= 6 && n <= 64) mass_table.resize(std::size_t(n));
    if (n < 6 || n > 64 || H5Aread(a.get(), H5T_NATIVE_DOUBLE, mass_table.data()) < 0)
      r.fail("Header/MassTable is not 6 numbers");
  }
  StatedUnits const stated = stated_units(r);
  // The velocity and time units of the file against the G = 1 units of its mass and length.
  double velocity_scale = 1.0, time_scale = 1.0;
  if (stated.length > 0) {
    try {
      out.units = parse_units(shortest(stated.mass) + "g", shortest(stated.length) + "cm",
                              UnitSource{std::string(stated.where) + " mass unit " + shortest(stated.mass) + " g",
                                         std::string(stated.where) + " length unit " + shortest(stated.length) + " cm",
                                         std::string(stated.where) + " mass unit",
                                         std::string(stated.where) + " length unit"});
    } catch (const InputError& e) {
      r.fail(e.what());
    }
    out.units_stated = true;
    velocity_scale = stated.velocity / out.units.velocity_cm_per_s();
    time_scale = (stated.length / stated.velocity) / out.units.time_s();
  }
  double time = 0.0;
  if (r.has_attribute("Header", "Time")) {
    time = r.finite("Time") * time_scale;
    if (auto const why = time_problem(time); !why.empty()) r.fail("Header/Time as read, " + shortest(time) + ", is " + why);
  }
  std::ostringstream layout;
  for (int t = 0; t < 6; ++t)
    if (h.counts[t]) layout << (layout.tellp() > 0 ? ", " : "") << "PartType" << t << " (" << h.counts[t] << ")";
  layout << "; " << (out.units_stated ? std::string("units from ") + stated.where : std::string("no units stated"));
  out.layout = layout.str();
  if (!bodies) return out;
  for (int t = 0; t < 6; ++t)
    if (h.counts[t]) r.expect_rows(("PartType" + std::to_string(t)).c_str(), kCoordinates, h.counts[t]);
  // What else the groups hold (a gas's InternalEnergy, Density, SmoothingLength; a star's metals): not kept.
  for (int t = 0; t < 6; ++t) {
    if (!h.counts[t]) continue;
    std::string const group = "PartType" + std::to_string(t);
    for (std::string const& name : r.members(group.c_str()))
      if (name != kCoordinates.name && name != kVelocities.name && name != kMasses.name && name != kParticleIds.name)
        out.dropped.push_back(group + "/" + name);
  }
  BodySet& b = out.bodies;
  b.resize(std::size_t(out.count));
  auto check = [&](std::size_t body, std::size_t field, double value) {
    if (auto const why = body_value_problem(kBodyFields[field], value, field == 0, true); !why.empty())
      r.fail("body " + std::to_string(body) + ": " + why);
  };
  std::size_t first_body = 0;
  for (int t = 0; t < 6; ++t) {
    std::uint64_t const count = h.counts[t];
    if (count == 0) continue;
    std::string const group = "PartType" + std::to_string(t);
    const char* const g = group.c_str();
    BodyType const type = t == 0 ? BodyType::gas : t == 4 ? BodyType::star : BodyType::dark;
    r.rows<double>(g, kCoordinates, count, H5T_NATIVE_DOUBLE, true,
                   [&](std::size_t first, std::size_t k, const double* v) {
                     for (std::size_t j = 0; j < k; ++j) {
                       std::size_t const i = first_body + first + j;
                       for (std::size_t c = 0; c < 3; ++c) check(i, 1 + c, v[3 * j + c]);
                       b.pos_mass[i] = {v[3 * j], v[3 * j + 1], v[3 * j + 2], 0.0};
                       b.type[i] = type;
                     }
                   });
    r.rows<double>(g, kVelocities, count, H5T_NATIVE_DOUBLE, true,
                   [&](std::size_t first, std::size_t k, const double* v) {
                     for (std::size_t j = 0; j < k; ++j) {
                       std::size_t const i = first_body + first + j;
                       Vec3d const u{v[3 * j] * velocity_scale, v[3 * j + 1] * velocity_scale,
                                     v[3 * j + 2] * velocity_scale};
                       check(i, 4, u.x), check(i, 5, u.y), check(i, 6, u.z);
                       b.velocity[i] = u;
                     }
                   });
    if (!out.renumbered && r.has_object((group + "/" + kParticleIds.name).c_str()))
      r.rows<std::uint64_t>(g, kParticleIds, count, H5T_NATIVE_UINT64, true,
                            [&](std::size_t first, std::size_t k, const std::uint64_t* v) {
                              for (std::size_t j = 0; j < k && !out.renumbered; ++j)
                                if (v[j] != first_body + first + j)
                                  out.renumbered = ForeignSnapshot::Renumbered{first_body + first + j, v[j]};
                            });
    if (r.has_object((group + "/" + kMasses.name).c_str())) {
      // GADGET reads a type's masses from the table where it gives one, and from the dataset only where it gives 0:
      // a file with both, where they differ (beyond a float32 dataset's rounding of the table's), means two systems to
      // two readers.
      r.rows<double>(g, kMasses, count, H5T_NATIVE_DOUBLE, true, [&](std::size_t first, std::size_t k, const double* v) {
        for (std::size_t j = 0; j < k; ++j) {
          check(first_body + first + j, 0, v[j]);
          if (mass_table[t] != 0 && !(std::abs(v[j] - mass_table[t]) <= 1e-6 * std::abs(mass_table[t])))
            r.fail(group + "/Masses gives body " + std::to_string(first + j) + " of the type the mass " +
                   shortest(v[j]) + ", and Header/MassTable every one of type " + std::to_string(t) + " " +
                   shortest(mass_table[t]) + " (GADGET reads the table's, where it is not 0); give one of the two");
          b.pos_mass[first_body + first + j].w = v[j];
        }
      });
    } else {
      if (!(mass_table[t] > 0))  // 0: none given; else a value no mass has (negative, NaN)
        r.fail(group + " has no Masses, and Header/MassTable gives type " + std::to_string(t) +
               (mass_table[t] == 0 ? " no mass (0)"
                                   : " the mass " + shortest(mass_table[t]) + ", which no mass is (a positive one is)"));
      for (std::size_t j = 0; j < count; ++j) {
        check(first_body + j, 0, mass_table[t]);
        b.pos_mass[first_body + j].w = mass_table[t];
      }
    }
    first_body += std::size_t(count);
  }
  b.time = time;
  return out;
}

}  // namespace nbody::sim
