// driver/diagnostics_series.h - a run's diagnostics over time (energies, momentum, angular momentum,
// centre of mass, virial ratio, Lagrangian radii) as CSV or JSON lines, and the same quantities as
// JSON for the run's summary.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "core/setting_names.h"
#include "sim/physics/diagnostics.h"

namespace nbody::driver {

// The samples a series takes when the user names a file but no interval: one every 100 steps costs
// about one force evaluation in a hundred (the potential), plus a copy of the state.
inline constexpr std::uint64_t kDefaultDiagnosticsEvery = 100;

// One sample: where and when it was taken, and what it measured.
struct DiagnosticsSample {
  std::uint64_t step = 0;     // steps since the run began (a restart's included)
  double time = 0.0;          // simulation time
  double wall_seconds = 0.0;  // since this run's steps began
  sim::Diagnostics diagnostics;
  double initial_energy = 0.0;  // the baseline of the relative energy error
};

// The quantities of `d` as the run's JSON summary and the JSON lines series write them.
nlohmann::json diagnostics_json(const sim::Diagnostics& d, double initial_energy);

// The series' columns, in order (CSV header; JSON lines use the same names, vectors as arrays).
std::string diagnostics_csv_header();

enum class SeriesFormat { csv, json_lines };

// The format PATH's extension names: .csv, or .jsonl / .json (one JSON object per line). InputError
// naming the option and the path for anything else.
SeriesFormat series_format(const std::string& path, const SettingNames& names = {});

// Where a series is written while the run goes: PATH + ".partial", renamed to PATH when it ends, so
// PATH holds a whole series or nothing, and a run that dies leaves every row it took beside it.
std::string partial_path(const std::string& path);

// The series file. Refuses (InputError) what an output may not be (core/output_path.h) and a
// partial file left by another run, which it would otherwise lose. Each row is flushed as written;
// close() syncs the file to disk and gives it its name. Not closed, the partial file stays.
class DiagnosticsSeries {
 public:
  explicit DiagnosticsSeries(std::string path, const SettingNames& names = {});
  ~DiagnosticsSeries();
  DiagnosticsSeries(const DiagnosticsSeries&) = delete;
  DiagnosticsSeries& operator=(const DiagnosticsSeries&) = delete;

  void write(const DiagnosticsSample& sample);
  void close();
  const std::string& path() const { return path_; }
  std::uint64_t rows() const { return rows_; }

 private:
  std::string path_, partial_;
  SeriesFormat format_;
  std::FILE* file_ = nullptr;
  std::uint64_t rows_ = 0;
};

}  // namespace nbody::driver
