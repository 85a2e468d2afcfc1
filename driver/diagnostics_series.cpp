// driver/diagnostics_series.cpp - the diagnostics series file and the diagnostics as JSON.
#include "driver/diagnostics_series.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "core/errors.h"
#include "core/output_path.h"

namespace nbody::driver {

namespace {

std::string lower_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// Round-trip digits: a value read back from the CSV is the double the run measured, bit for bit.
void put(std::string& row, double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ",%.17g", v);
  row += buf;
}

void sync_folder(const std::string& path) {
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  int const fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

nlohmann::json diagnostics_json(const sim::Diagnostics& d, double e0) {
  return {{"kinetic", d.kinetic},
          {"potential", d.potential},
          {"total", d.total()},
          {"relative_energy_error", sim::relative_energy_error(d.total(), e0)},
          {"momentum", {d.momentum.x, d.momentum.y, d.momentum.z}},
          {"angular_momentum", {d.angular_momentum.x, d.angular_momentum.y, d.angular_momentum.z}},
          {"centre_of_mass", {d.centre_of_mass.x, d.centre_of_mass.y, d.centre_of_mass.z}},
          {"virial_ratio", d.virial_ratio()},
          {"lagrangian_radii",
           {{"r10", d.lagrangian_radii[0]}, {"r50", d.lagrangian_radii[1]}, {"r90", d.lagrangian_radii[2]}}}};
}

std::string diagnostics_csv_header() {
  return "step,time,wall_seconds,kinetic,potential,total,relative_energy_error,momentum_x,momentum_y,momentum_z,"
         "angular_momentum_x,angular_momentum_y,angular_momentum_z,centre_of_mass_x,centre_of_mass_y,"
         "centre_of_mass_z,virial_ratio,r10,r50,r90";
}

SeriesFormat series_format(const std::string& path, const SettingNames& names) {
  std::string const ext = lower_extension(path);
  if (ext == ".csv") return SeriesFormat::csv;
  if (ext == ".jsonl" || ext == ".json") return SeriesFormat::json_lines;
  std::string const given = names.with_text("--diagnostics", path);
  if (!path.empty() && path.back() == '/') throw InputError(given + ": ends in '/': name a .csv or .jsonl file");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(given + ": is a directory; name a .csv or .jsonl file (in it, for example)");
  throw InputError(given + ": unknown format '" + ext +
                   "'; name a .csv file, or .jsonl (or .json) for JSON lines");
}

std::string partial_path(const std::string& path) { return path + ".partial"; }

DiagnosticsSeries::DiagnosticsSeries(std::string path, const SettingNames& names)
    : path_(std::move(path)), partial_(partial_path(path_)), format_(series_format(path_, names)) {
  check_output_path(path_, "--diagnostics", names);
  check_output_path(partial_, "--diagnostics", names);
  std::string const given = names.with_text("--diagnostics", path_);
  struct stat st {};
  if (::lstat(partial_.c_str(), &st) == 0)
    throw InputError(given + ": " + partial_ + " exists (the series of a run that did not finish); rename or remove it "
                     "first");
  int const fd = ::open(partial_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) throw InputError(given + ": cannot create " + partial_ + ": " + std::strerror(errno));
  file_ = ::fdopen(fd, "w");
  if (!file_) {
    ::close(fd);
    throw RuntimeFailure("--diagnostics " + partial_ + ": " + std::strerror(errno));
  }
  if (format_ == SeriesFormat::csv) std::fprintf(file_, "%s\n", diagnostics_csv_header().c_str());
}

DiagnosticsSeries::~DiagnosticsSeries() {
  if (file_) std::fclose(file_);  // not closed: the run failed, and its rows stay in the partial file
}

void DiagnosticsSeries::write(const DiagnosticsSample& s) {
  if (!file_) throw RuntimeFailure("--diagnostics " + path_ + ": the series is closed");
  auto const& d = s.diagnostics;
  std::string row;
  if (format_ == SeriesFormat::csv) {
    row = std::to_string(s.step);
    for (double v : {s.time, s.wall_seconds, d.kinetic, d.potential, d.total(),
                     sim::relative_energy_error(d.total(), s.initial_energy), d.momentum.x, d.momentum.y, d.momentum.z,
                     d.angular_momentum.x, d.angular_momentum.y, d.angular_momentum.z, d.centre_of_mass.x,
                     d.centre_of_mass.y, d.centre_of_mass.z, d.virial_ratio(), d.lagrangian_radii[0],
                     d.lagrangian_radii[1], d.lagrangian_radii[2]})
      put(row, v);
  } else {
    nlohmann::json j = {{"step", s.step}, {"time", s.time}, {"wall_seconds", s.wall_seconds}};
    j.update(diagnostics_json(d, s.initial_energy));
    row = j.dump();
  }
  row += '\n';
  if (std::fwrite(row.data(), 1, row.size(), file_) != row.size() || std::fflush(file_) != 0)
    throw RuntimeFailure("--diagnostics " + partial_ + ": cannot write: " + std::strerror(errno));
  ++rows_;
}

void DiagnosticsSeries::close() {
  if (!file_) return;
  bool const synced = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  int const err = errno;
  bool const closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!synced || !closed)
    throw RuntimeFailure("--diagnostics " + partial_ + ": cannot write: " + std::strerror(synced ? errno : err) +
                         "; the rows written so far stay in it");
  // The name may have gone bad during the run (a directory made there): the rows then stay where they are.
  std::string const why = output_path_problem(path_);
  if (!why.empty() || std::rename(partial_.c_str(), path_.c_str()) != 0)
    throw RuntimeFailure("--diagnostics " + path_ + ": " + (why.empty() ? std::string(std::strerror(errno)) : why) +
                         "; the series is in " + partial_);
  sync_folder(path_);
}

}  // namespace nbody::driver
