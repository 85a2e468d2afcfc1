// sim/io/checkpoint.cpp - HDF5 checkpoints through the HDF5 C API.
#include "sim/io/checkpoint.h"

#include <hdf5.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <utility>
#include <vector>

#include "core/atomic_file.h"
#include "core/errors.h"

namespace nbody::sim {

bool checkpoints_built() { return true; }

namespace {

constexpr const char* kCode = "nbody 0.1.0";
constexpr std::uint64_t kMaxBodies = std::uint64_t{1} << 30;

// An HDF5 identifier closed by its own close function when the owner goes.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, -1)), close_(o.close_) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle& operator=(Handle&&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// HDF5 prints a stack of errors to stderr by default; nbody reports its own one line instead.
void quiet_hdf5() {
  static bool const done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

// Writing ------------------------------------------------------------------------------------

struct Writer {
  bool ok = true;

  void attribute(hid_t loc, const char* name, hid_t type, const void* value, hsize_t count = 1) {
    if (!ok) return;
    Handle space(count == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr), H5Sclose);
    Handle attr(H5Acreate2(loc, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    ok = attr.ok() && H5Awrite(attr.get(), type, value) >= 0;
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

  void dataset(hid_t group, const char* name, hid_t file_type, hid_t memory_type, const void* data, hsize_t rows,
               hsize_t columns) {
    if (!ok) return;
    hsize_t const dims[2] = {rows, columns};
    Handle space(H5Screate_simple(columns == 1 ? 1 : 2, dims, nullptr), H5Sclose);
    Handle set(H5Dcreate2(group, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
    ok = set.ok() && (rows == 0 || H5Dwrite(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
  }
};

bool write_file(const std::string& path, const BodySet& b, const RunRecord& run) {
  std::size_t const n = b.size();
  Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) return false;
  Writer w;
  {
    Handle header(H5Gcreate2(file.get(), "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!header.ok()) return false;
    hid_t const h = header.get();
    std::uint32_t const low = std::uint32_t(n & 0xffffffffu), high = std::uint32_t(std::uint64_t(n) >> 32);
    std::uint32_t const counts[6] = {0, low, 0, 0, 0, 0}, highs[6] = {0, high, 0, 0, 0, 0};
    double const mass_table[6] = {0, 0, 0, 0, 0, 0};
    w.attribute(h, "NumPart_ThisFile", H5T_NATIVE_UINT32, counts, 6);
    w.attribute(h, "NumPart_Total", H5T_NATIVE_UINT32, counts, 6);
    w.attribute(h, "NumPart_Total_HighWord", H5T_NATIVE_UINT32, highs, 6);
    w.attribute(h, "MassTable", H5T_NATIVE_DOUBLE, mass_table, 6);
    double extent = 0;
    for (auto const& p : b.pos_mass) extent = std::max({extent, std::abs(p.x), std::abs(p.y), std::abs(p.z)});
    w.number(h, "Time", run.start_time + double(run.step) * run.dt);
    w.number(h, "Redshift", 0.0);
    w.number(h, "BoxSize", 2.0 * extent);  // the bodies are centred on the origin, not in [0, BoxSize)
    w.number(h, "NumFilesPerSnapshot", std::int32_t{1});
    w.number(h, "Omega0", 0.0);
    w.number(h, "OmegaLambda", 0.0);
    w.number(h, "HubbleParam", 1.0);
    for (const char* flag : {"Flag_Sfr", "Flag_Cooling", "Flag_StellarAge", "Flag_Metals", "Flag_Feedback"})
      w.number(h, flag, std::int32_t{0});
    w.number(h, "Flag_DoublePrecision", std::int32_t{run.precision == Precision::fp64});
    w.number(h, "Step", run.step);
    w.number(h, "StartTime", run.start_time);
    w.text(h, "Precision", name_of(run.precision));
    w.text(h, "Integrator", run.integrator);
    w.number(h, "Dt", run.dt);
    w.number(h, "Softening", run.softening);
    w.number(h, "Damping", run.damping);
    w.text(h, "Scenario", run.scenario);
    w.number(h, "Seed", run.seed);
    if (run.initial_energy) w.number(h, "InitialEnergy", *run.initial_energy);
    w.text(h, "Code", kCode);
  }
  {
    Handle group(H5Gcreate2(file.get(), "PartType1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!group.ok()) return false;
    std::vector<double> coordinates(3 * n), velocities(3 * n), masses(n);
    std::vector<std::uint64_t> ids(n);
    std::vector<std::uint8_t> types(n);
    for (std::size_t i = 0; i < n; ++i) {
      coordinates[3 * i] = b.pos_mass[i].x;
      coordinates[3 * i + 1] = b.pos_mass[i].y;
      coordinates[3 * i + 2] = b.pos_mass[i].z;
      velocities[3 * i] = b.velocity[i].x;
      velocities[3 * i + 1] = b.velocity[i].y;
      velocities[3 * i + 2] = b.velocity[i].z;
      masses[i] = b.pos_mass[i].w;
      ids[i] = i;
      types[i] = std::uint8_t(b.type[i]);
    }
    // In the run's precision: HDF5 converts the doubles, exactly for an fp32 run's values.
    hid_t const real = run.precision == Precision::fp64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
    w.dataset(group.get(), "Coordinates", real, H5T_NATIVE_DOUBLE, coordinates.data(), n, 3);
    w.dataset(group.get(), "Velocities", real, H5T_NATIVE_DOUBLE, velocities.data(), n, 3);
    w.dataset(group.get(), "Masses", real, H5T_NATIVE_DOUBLE, masses.data(), n, 1);
    w.dataset(group.get(), "ParticleIDs", H5T_STD_U64LE, H5T_NATIVE_UINT64, ids.data(), n, 1);
    w.dataset(group.get(), "BodyType", H5T_STD_U8LE, H5T_NATIVE_UINT8, types.data(), n, 1);
  }
  return w.ok && H5Fflush(file.get(), H5F_SCOPE_GLOBAL) >= 0;
}

// Reading ------------------------------------------------------------------------------------

class Reader {
 public:
  Reader(std::string path, hid_t file) : path_(std::move(path)), file_(file) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw InputError(path_ + ": " + problem + " (not a checkpoint nbody can continue)");
  }

  Handle open_attribute(const char* group, const char* name) const {
    if (H5Lexists(file_, group, H5P_DEFAULT) <= 0) fail(std::string("no /") + group + " group");
    if (!has_attribute(group, name)) fail(std::string("no ") + group + "/" + name + " attribute");
    Handle a(H5Aopen_by_name(file_, group, name, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    if (!a.ok()) fail(std::string("cannot read ") + group + "/" + name);
    return a;
  }

  bool has_attribute(const char* group, const char* name) const {
    Handle g(H5Gopen2(file_, group, H5P_DEFAULT), H5Gclose);
    return g.ok() && H5Aexists(g.get(), name) > 0;
  }

  template <class T>
  T scalar(const char* name, hid_t memory_type) const {
    Handle a = open_attribute("Header", name);
    Handle space(H5Aget_space(a.get()), H5Sclose);
    if (H5Sget_simple_extent_npoints(space.get()) != 1) fail(std::string("Header/") + name + " is not one value");
    T v{};
    if (H5Aread(a.get(), memory_type, &v) < 0) fail(std::string("Header/") + name + " has the wrong type");
    return v;
  }

  double finite(const char* name) const {
    double const v = scalar<double>(name, H5T_NATIVE_DOUBLE);
    if (!std::isfinite(v)) fail(std::string("Header/") + name + " is not a finite number");
    return v;
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
      return s;
    }
    std::size_t const size = H5Tget_size(type.get());
    if (size == 0 || size > 4096) fail(std::string("Header/") + name + " is not a short string");
    std::vector<char> buffer(size + 1, '\0');
    if (H5Aread(a.get(), type.get(), buffer.data()) < 0) fail(std::string("cannot read Header/") + name);
    return std::string(buffer.data());  // up to the first null: null-terminated or null-padded
  }

  // A dataset of `columns` values per body (1: a vector), read into `out` as `memory_type`.
  template <class T>
  void dataset(const char* name, hsize_t bodies, hsize_t columns, hid_t memory_type, std::vector<T>& out) const {
    std::string const where = std::string("PartType1/") + name;
    if (H5Lexists(file_, "PartType1", H5P_DEFAULT) <= 0) fail("no /PartType1 group");
    if (H5Lexists(file_, where.c_str(), H5P_DEFAULT) <= 0) fail("no " + where + " dataset");
    Handle set(H5Dopen2(file_, where.c_str(), H5P_DEFAULT), H5Dclose);
    if (!set.ok()) fail("cannot open " + where);
    Handle space(H5Dget_space(set.get()), H5Sclose);
    int const rank = H5Sget_simple_extent_ndims(space.get());
    hsize_t dims[2] = {0, 0};
    if (rank < 1 || rank > 2 || H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 0 ||
        dims[0] != bodies || (rank == 2 ? dims[1] : 1) != columns || (columns > 1 && rank != 2)) {
      std::ostringstream s;
      s << where << " has shape (" << dims[0];
      if (rank == 2) s << ", " << dims[1];
      s << "), expected (" << bodies;
      if (columns > 1) s << ", " << columns;
      s << ")";
      fail(s.str());
    }
    Handle type(H5Dget_type(set.get()), H5Tclose);
    H5T_class_t const cls = H5Tget_class(type.get());
    if (cls != H5T_FLOAT && cls != H5T_INTEGER) fail(where + " does not hold numbers");
    out.resize(bodies * columns);
    if (bodies && H5Dread(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
      fail("cannot read " + where);
  }

 private:
  std::string path_;
  hid_t file_;
};

}  // namespace

void write_checkpoint(const std::string& path, const BodySet& bodies, const RunRecord& run) {
  quiet_hdf5();
  write_file_atomically(path, "checkpoint", [&](const std::string& tmp) { return write_file(tmp, bodies, run); });
}

Checkpoint read_checkpoint(const std::string& path) {
  quiet_hdf5();
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw InputError(path + ": not a regular file; give a checkpoint written by --checkpoint");
  if (H5Fis_hdf5(path.c_str()) <= 0)
    throw InputError(path + ": not an HDF5 file; --restart takes a checkpoint written by --checkpoint");
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) throw InputError(path + ": cannot open the HDF5 file");
  Reader r(path, file.get());

  Checkpoint c;
  RunRecord& run = c.run;
  std::uint32_t counts[6] = {}, highs[6] = {};
  {
    Handle a = r.open_attribute("Header", "NumPart_Total");
    Handle space(H5Aget_space(a.get()), H5Sclose);
    if (H5Sget_simple_extent_npoints(space.get()) != 6 || H5Aread(a.get(), H5T_NATIVE_UINT32, counts) < 0)
      r.fail("Header/NumPart_Total is not 6 counts");
  }
  if (r.has_attribute("Header", "NumPart_Total_HighWord")) {
    Handle a = r.open_attribute("Header", "NumPart_Total_HighWord");
    Handle space(H5Aget_space(a.get()), H5Sclose);
    if (H5Sget_simple_extent_npoints(space.get()) != 6 || H5Aread(a.get(), H5T_NATIVE_UINT32, highs) < 0)
      r.fail("Header/NumPart_Total_HighWord is not 6 counts");
  }
  for (int t = 0; t < 6; ++t)
    if (t != 1 && (counts[t] || highs[t]))
      r.fail("bodies of particle type " + std::to_string(t) + " (nbody writes PartType1 only)");
  std::uint64_t const bodies = (std::uint64_t(highs[1]) << 32) | counts[1];
  if (bodies == 0 || bodies > kMaxBodies)
    r.fail("Header/NumPart_Total says " + std::to_string(bodies) + " bodies; must be 1 to 1073741824");

  run.step = r.scalar<std::uint64_t>("Step", H5T_NATIVE_UINT64);
  run.start_time = r.finite("StartTime");
  std::string const precision = r.text("Precision");
  auto const p = from_name<Precision>(precision);
  if (!p) r.fail("Header/Precision '" + precision + "' is not fp32 or fp64");
  run.precision = *p;
  run.integrator = r.text("Integrator");
  run.dt = r.finite("Dt");
  run.softening = r.finite("Softening");
  run.damping = r.finite("Damping");
  if (!(run.dt > 0)) r.fail("Header/Dt must be positive");
  if (!(run.softening > 0)) r.fail("Header/Softening must be positive");
  run.scenario = r.text("Scenario");
  run.seed = r.scalar<std::uint64_t>("Seed", H5T_NATIVE_UINT64);
  if (r.has_attribute("Header", "InitialEnergy")) run.initial_energy = r.finite("InitialEnergy");

  std::vector<double> coordinates, velocities, masses;
  std::vector<std::uint64_t> ids;
  std::vector<std::uint8_t> types;
  r.dataset("Coordinates", bodies, 3, H5T_NATIVE_DOUBLE, coordinates);
  r.dataset("Velocities", bodies, 3, H5T_NATIVE_DOUBLE, velocities);
  r.dataset("Masses", bodies, 1, H5T_NATIVE_DOUBLE, masses);
  r.dataset("ParticleIDs", bodies, 1, H5T_NATIVE_UINT64, ids);
  r.dataset("BodyType", bodies, 1, H5T_NATIVE_UINT8, types);

  BodySet& b = c.bodies;
  b.resize(std::size_t(bodies));
  std::vector<bool> seen(std::size_t(bodies), false);
  for (std::size_t k = 0; k < bodies; ++k) {
    std::uint64_t const i = ids[k];
    if (i >= bodies || seen[i])
      r.fail("ParticleIDs must hold 0.." + std::to_string(bodies - 1) + " once each; " + std::to_string(i) +
             (i >= bodies ? " is out of range" : " appears twice"));
    seen[i] = true;
    double const values[7] = {coordinates[3 * k], coordinates[3 * k + 1], coordinates[3 * k + 2], masses[k],
                              velocities[3 * k], velocities[3 * k + 1], velocities[3 * k + 2]};
    for (double v : values)
      if (!std::isfinite(v)) r.fail("body " + std::to_string(i) + " has a value that is not finite");
    if (masses[k] < 0) r.fail("body " + std::to_string(i) + " has a negative mass");
    if (types[k] > 2)
      r.fail("body " + std::to_string(i) + ": BodyType " + std::to_string(types[k]) + " is not 0, 1 or 2");
    b.pos_mass[i] = {values[0], values[1], values[2], values[3]};
    b.velocity[i] = {values[4], values[5], values[6]};
    b.type[i] = BodyType(types[k]);
  }
  b.time = run.start_time + double(run.step) * run.dt;
  return c;
}

}  // namespace nbody::sim
