// driver/diagnostics_series.cpp - the diagnostics series file and the diagnostics as JSON.
#include "driver/diagnostics_series.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "core/bounds.h"
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

// What a continuation reads of a row: its step, time, total energy and relative energy error.
struct RowFigures {
  std::uint64_t step = 0;
  double time = 0.0, total = 0.0, error = 0.0;
};

bool parse_u64(const std::string& text, std::uint64_t& out) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtoull(text.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}

bool parse_double(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return *end == '\0';
}

// A row as this file writes it, or nothing.
std::optional<RowFigures> parse_row(const std::string& line, SeriesFormat format) {
  RowFigures r;
  if (format == SeriesFormat::csv) {
    std::vector<std::string> fields(1);
    for (char c : line) {
      if (c == ',')
        fields.emplace_back();
      else
        fields.back() += c;
    }
    if (fields.size() != 20 || !parse_u64(fields[0], r.step) || !parse_double(fields[1], r.time) ||
        !parse_double(fields[5], r.total) || !parse_double(fields[6], r.error))
      return std::nullopt;
    return r;
  }
  nlohmann::json const j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  auto number = [&](const char* key, double& out) {
    auto const it = j.find(key);
    if (it == j.end() || !it->is_number()) return false;
    out = it->get<double>();
    return true;
  };
  auto const step = j.find("step");
  if (step == j.end() || !step->is_number_unsigned() || !number("time", r.time) || !number("total", r.total) ||
      !number("relative_energy_error", r.error))
    return std::nullopt;
  r.step = step->get<std::uint64_t>();
  return r;
}

// Whether a row's error was measured against `e0`: the error is |E - E0| / |E0|, so E0 is E / (1 + error) or
// E / (1 - error), to a few units in the last place.
bool same_baseline(const RowFigures& r, double e0) {
  if (e0 == 0.0) return std::abs(r.error - std::abs(r.total)) <= 1e-12 * std::max(1.0, std::abs(r.total));
  auto near = [&](double candidate) { return std::abs(candidate - e0) <= 1e-12 * std::abs(e0); };
  return near(r.total / (1.0 + r.error)) || (r.error != 1.0 && near(r.total / (1.0 - r.error)));
}

// An earlier series read for a continuation: how much of it is kept, or why it is not this run's.
struct Scan {
  std::string not_this_runs;  // why not; empty when it is this run's
  std::uint64_t keep_bytes = 0;  // the header and the rows before the lineage's step
  std::uint64_t kept = 0, replaced = 0;
};

// Reads `file` (a series in `format`) against `lineage`: the rows before its step are kept if every complete row
// is nbody's, in step order, of the same energy baseline, the kept ones in time order up to the lineage's time, and
// a row at its step at its time. An unfinished last line (a run killed while writing it) is left out.
Scan scan_series(const std::string& file, SeriesFormat format, const SeriesLineage& lineage) {
  Scan scan;
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    scan.not_this_runs = "cannot be read";
    return scan;
  }
  std::string line;
  std::uint64_t offset = 0, row = 0;
  if (format == SeriesFormat::csv) {
    if (!std::getline(in, line) || in.eof() || line != diagnostics_csv_header()) {
      scan.not_this_runs = "its first line is not nbody's header";
      return scan;
    }
    offset = scan.keep_bytes = line.size() + 1;
  }
  std::optional<RowFigures> last;
  std::optional<double> first_time;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no newline: the row was being written when its run ended
    ++row;
    offset += line.size() + 1;
    std::optional<RowFigures> const r = parse_row(line, format);
    std::string const where = "row " + std::to_string(row);
    if (!r) {
      scan.not_this_runs = where + " is not a row of nbody's";
      return scan;
    }
    if (last && r->step <= last->step) {
      scan.not_this_runs = where + " (step " + std::to_string(r->step) + ") does not follow step " +
                           std::to_string(last->step);
      return scan;
    }
    if (!same_baseline(*r, lineage.initial_energy)) {
      scan.not_this_runs = where + " (step " + std::to_string(r->step) + ") measures its energy error from another "
                           "start energy than this run's " + shortest(lineage.initial_energy);
      return scan;
    }
    if (r->step < lineage.step) {
      // Time runs one way from the first row to the lineage's time.
      if (!first_time) first_time = r->time;
      double const way = lineage.time >= *first_time ? 1.0 : -1.0;
      if ((last && way * (r->time - last->time) < 0.0) || way * (lineage.time - r->time) < 0.0) {
        scan.not_this_runs = where + " (step " + std::to_string(r->step) + ", time " + shortest(r->time) +
                             ") is out of time order with this run, at time " + shortest(lineage.time) + " at step " +
                             std::to_string(lineage.step);
        return scan;
      }
      ++scan.kept;
      scan.keep_bytes = offset;
    } else {
      if (r->step == lineage.step && r->time != lineage.time) {
        scan.not_this_runs = where + " is step " + std::to_string(r->step) + " at time " + shortest(r->time) +
                             ", where this run is at time " + shortest(lineage.time);
        return scan;
      }
      ++scan.replaced;
    }
    last = r;
  }
  return scan;
}

std::string rows_text(std::uint64_t n) { return std::to_string(n) + (n == 1 ? " row" : " rows"); }

// What a continuation says: the rows kept and replaced.
std::string continued_text(const std::string& given, const std::string& from, const Scan& scan,
                           const SeriesLineage& lineage) {
  std::string text = given + ": continues " + from + ": its " + rows_text(scan.kept) + " before step " +
                     std::to_string(lineage.step) + " kept";
  if (scan.replaced) text += ", " + rows_text(scan.replaced) + " from step " + std::to_string(lineage.step) + " on replaced";
  return text;
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

DiagnosticsSeries::DiagnosticsSeries(std::string path, const SettingNames& names,
                                     const std::optional<SeriesLineage>& lineage)
    : path_(std::move(path)), partial_(partial_path(path_)), format_(series_format(path_, names)) {
  check_output_path(path_, "--diagnostics", names);
  check_output_path(partial_, "--diagnostics", names);
  std::string const given = names.with_text("--diagnostics", path_);
  auto open_file = [&](int fd) {
    file_ = ::fdopen(fd, "w");  // no truncation: at the descriptor's offset
    if (!file_) {
      ::close(fd);
      throw RuntimeFailure("--diagnostics " + partial_ + ": " + std::strerror(errno));
    }
  };
  struct stat st {};
  if (::lstat(partial_.c_str(), &st) == 0) {
    std::string const unfinished = given + ": " + partial_ + " exists (the series of a run that did not finish";
    if (!lineage || !S_ISREG(st.st_mode))
      throw InputError(unfinished + "); rename or remove it first");
    // A restart of that run (after a crash, which left its rows there): the rows before the restart's step go on.
    Scan const scan = scan_series(partial_, format_, *lineage);
    if (!scan.not_this_runs.empty())
      throw InputError(unfinished + ", not this run's: " + scan.not_this_runs + "); rename or remove it first");
    int const fd = ::open(partial_.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) throw InputError(given + ": cannot open " + partial_ + ": " + std::strerror(errno));
    if (::ftruncate(fd, off_t(scan.keep_bytes)) != 0 || ::lseek(fd, 0, SEEK_END) < 0) {
      int const err = errno;
      ::close(fd);
      throw RuntimeFailure("--diagnostics " + partial_ + ": cannot continue it: " + std::strerror(err));
    }
    open_file(fd);
    if (format_ == SeriesFormat::csv && scan.keep_bytes == 0)
      std::fprintf(file_, "%s\n", diagnostics_csv_header().c_str());
    kept_ = scan.kept;
    continuation_ = continued_text(given, partial_, scan, *lineage);
    return;
  }
  int const fd = ::open(partial_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) throw InputError(given + ": cannot create " + partial_ + ": " + std::strerror(errno));
  open_file(fd);
  std::error_code ec;
  if (lineage && std::filesystem::is_regular_file(path_, ec)) {
    // The series of the run this one continues (a restart naming its file again) is copied up to this run's step;
    // the file itself stays whole until this series replaces it.
    Scan const scan = scan_series(path_, format_, *lineage);
    if (scan.not_this_runs.empty() && scan.kept > 0) {
      std::ifstream in(path_, std::ios::binary);
      std::vector<char> buffer(1 << 20);
      for (std::uint64_t left = scan.keep_bytes; left > 0;) {
        auto const n = std::streamsize(std::min<std::uint64_t>(left, buffer.size()));
        if (!in.read(buffer.data(), n) || std::fwrite(buffer.data(), 1, std::size_t(n), file_) != std::size_t(n) ||
            (left == std::uint64_t(n) && std::fflush(file_) != 0)) {
          int const err = errno;
          std::fclose(file_);  // the copy is all it holds: nothing is lost with it
          file_ = nullptr;
          ::unlink(partial_.c_str());
          throw RuntimeFailure("--diagnostics " + partial_ + ": cannot copy the rows of " + path_ + ": " +
                               std::strerror(err));
        }
        left -= std::uint64_t(n);
      }
      kept_ = scan.kept;
      continuation_ = continued_text(given, path_, scan, *lineage);
      return;
    }
    if (!scan.not_this_runs.empty())
      continuation_ = given + ": not this run's series (" + scan.not_this_runs + "): replaced when the run ends";
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
