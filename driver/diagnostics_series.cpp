// driver/diagnostics_series.cpp - the diagnostics series file and the diagnostics as JSON.
#include "driver/diagnostics_series.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <utility>
#include <vector>

#include "core/atomic_file.h"
#include "core/bounds.h"
#include "core/errors.h"
#include "core/fnv1a.h"
#include "core/output_path.h"

namespace nbody::driver {

namespace {

// Round-trip digits: a value read back from the CSV is the double the run measured, bit for bit.
void put(std::string& row, double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ",%.17g", v);
  row += buf;
}

// What a continuation reads of a row: its step, time, total energy and relative energy error.
struct RowFigures {
  std::uint64_t step = 0;
  double time = 0.0, total = 0.0, error = 0.0;
  double kinetic = 0.0, potential = 0.0, virial = 0.0;  // virial: 2K/|W| about the centre of mass (NaN where W = 0)
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
        !parse_double(fields[5], r.total) || !parse_double(fields[6], r.error) ||
        !parse_double(fields[3], r.kinetic) || !parse_double(fields[4], r.potential) ||
        !parse_double(fields[16], r.virial))
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
  auto const virial = j.find("virial_ratio");
  if (!number("kinetic", r.kinetic) || !number("potential", r.potential) || virial == j.end() ||
      !(virial->is_number() || virial->is_null()))
    return std::nullopt;
  r.virial = virial->is_null() ? std::nan("") : virial->get<double>();
  r.step = step->get<std::uint64_t>();
  return r;
}

// A whole line of a series file (false at its end, and for an unfinished last line: a row being written when its run
// ended), without the carriage return of a line that ends in CR LF (a series written again on Windows is the same
// rows); `raw`, where given, is its length in the file, its line end included.
bool read_line(std::istream& in, std::string& line, std::uint64_t* raw = nullptr) {
  if (!std::getline(in, line) || in.eof()) return false;
  if (raw) *raw = line.size() + 1;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

// Whether a row's error was measured against `e0`, from the row's own figures (both formats write a double's shortest
// exact text). Its bulk kinetic energy is K less the kinetic energy about the centre of mass, 2K/|W| x |W| / 2 (all
// of K where W = 0: one body), which is |P|^2/2M to a few roundings of K: the error recomputed so is the row's to
// 1e-10, where another baseline changes it by the baselines' difference over the energy's change (and the first
// row's error, exactly 0, by all of it). A row of an earlier nbody, which weighed the error over |E0|, is one to the
// bit by that rule.
bool same_baseline(const RowFigures& r, double e0) {
  if (sim::relative_energy_error(r.total, e0, 0.0) == r.error) return true;
  double const internal = std::isnan(r.virial) ? 0.0 : 0.5 * r.virial * std::abs(r.potential);
  double const error = sim::relative_energy_error(r.total, e0, r.kinetic - internal);
  return std::abs(error - r.error) <= 1e-10 * std::max(std::abs(error), std::abs(r.error));
}

// Times the clock's arithmetic gives, to a few units in the last place (a compiler may fuse its multiply and add).
bool same_time(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b)); }

// A row without its wall clock: the one column in which a run that computes the same rows again writes others.
std::string without_wall(const std::string& line, SeriesFormat format) {
  if (format == SeriesFormat::csv) {
    std::size_t const first = line.find(','), second = first == std::string::npos ? first : line.find(',', first + 1),
                      third = second == std::string::npos ? second : line.find(',', second + 1);
    return third == std::string::npos ? line : line.substr(0, second) + line.substr(third);
  }
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object()) return line;
  j.erase("wall_seconds");
  return j.dump();
}

// A row's figures but its wall clock, as bytes: what its digest is of. The values, not the text, so that a file written
// again with the same numbers in another form (0.0 for 0, another tool's shortest form) is the same rows. CSV: each
// field as a double, in order; JSON: each key and, in key order, each number (arrays in order) as a double.
std::string row_figures(const std::string& line, SeriesFormat format) {
  std::string out;
  auto number = [&](double v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
  if (format == SeriesFormat::csv) {
    std::size_t field = 0;
    for (std::size_t at = 0; at <= line.size(); ++field) {
      std::size_t const end = std::min(line.find(',', at), line.size());
      if (field != 2) number(std::strtod(line.substr(at, end - at).c_str(), nullptr));
      at = end + 1;
    }
    return out;
  }
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object()) return line;
  j.erase("wall_seconds");
  std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& v) {
    if (v.is_object()) {
      for (auto const& [key, value] : v.items()) {
        out += key;
        out += '\0';
        walk(value);
      }
    } else if (v.is_array()) {
      for (auto const& e : v) walk(e);
    } else if (v.is_number()) {
      number(v.get<double>());
    } else {
      out += v.dump();
    }
  };
  walk(j);
  return out;
}

// Visits each whole row of a series file (a CSV file's header left out; an unfinished last line too) with its figures
// and its line as written.
template <typename Visit>
void for_each_row(const std::string& file, SeriesFormat format, Visit&& visit) {
  std::ifstream in(file, std::ios::binary);
  std::string line;
  bool header = format == SeriesFormat::csv;
  while (read_line(in, line)) {
    if (std::exchange(header, false)) continue;
    if (auto const r = parse_row(line, format)) visit(*r, line);
  }
}

// The whole rows of a series file, each as its step and its text without the wall clock.
std::vector<std::pair<std::uint64_t, std::string>> rows_of(const std::string& file, SeriesFormat format) {
  std::vector<std::pair<std::uint64_t, std::string>> rows;
  for_each_row(file, format,
               [&](const RowFigures& r, const std::string& line) { rows.emplace_back(r.step, without_wall(line, format)); });
  return rows;
}

// The last whole row of a series file; none where it has none, or cannot be read.
std::optional<RowFigures> last_row(const std::string& file, SeriesFormat format) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  std::streamoff const size = in.tellg();
  std::streamoff const from = std::max<std::streamoff>(0, size - (1 << 16));  // a row is a few hundred characters
  std::string tail(std::size_t(size - from), '\0');
  in.seekg(from);
  if (!in.read(tail.data(), std::streamsize(tail.size()))) return std::nullopt;
  std::size_t const end = tail.rfind('\n');
  if (end == std::string::npos) return std::nullopt;
  std::size_t const begin = end == 0 ? std::string::npos : tail.rfind('\n', end - 1);
  std::size_t const from_line = begin == std::string::npos ? 0 : begin + 1;
  std::size_t const length = end - from_line - (end > from_line && tail[end - 1] == '\r' ? 1 : 0);  // CR LF
  return parse_row(tail.substr(from_line, length), format);
}

std::optional<std::uint64_t> last_row_step(const std::string& file, SeriesFormat format) {
  auto const r = last_row(file, format);
  return r ? std::optional<std::uint64_t>(r->step) : std::nullopt;
}

// An earlier start's partial file longer than this is not held in memory to be compared: refused as before.
constexpr std::uintmax_t kMaxComparedBytes = std::uintmax_t(64) << 20;

std::string rows_text(std::uint64_t n);

// An earlier series read for a continuation: how much of it is kept, or why it is not this run's.
struct Scan {
  SeriesDigest kept_digest;  // of the rows kept
  std::optional<std::uint64_t> digest_at_recorded_rows;  // the hash of the first rows, as many as the lineage's digest
  std::uint64_t recorded_rows = 0;  // as many as the lineage's digest counts, where it applies to this file
  std::string not_this_runs;  // why not; empty when it is this run's
  bool other_baseline = false;  // why not: its rows measure another start energy
  std::uint64_t keep_bytes = 0;  // the header and the rows before the lineage's step
  std::uint64_t kept = 0, replaced = 0;
  std::uint64_t last_replaced_step = 0;  // where replaced
  std::uint64_t last_kept_step = 0;  // where kept
  double last_kept_time = 0.0;
  bool row_at_step = false;  // a row at the lineage's step (replaced)
  bool crlf = false;  // its lines end in CR LF (its first line's does): the rows that follow it are written so too
  bool replaced_on_clock = true;  // every row replaced is at the time the run's clock gives its step (fixed steps)
  // The steps between the rows kept where they were sampled every so many steps (cadence()); else 0.
  std::uint64_t first_gap = 0, last_gap = 0, inner_gap = 0;  // inner: the one gap between the first and the last
  bool even_inside = true;  // every gap between the first and the last is inner_gap
  std::uint64_t cadence() const {
    if (kept == 3) return first_gap == last_gap ? first_gap : 0;
    // The first row may be a start off the grid (a series begun again) and the last an end row the run it continues
    // left (ended, not stopped): those gaps are shorter. At least two gaps of the cadence.
    bool const two = (first_gap == inner_gap) + (last_gap == inner_gap) + (kept - 3) >= 2;
    return kept > 3 && even_inside && first_gap <= inner_gap && last_gap <= inner_gap && two ? inner_gap : 0;
  }
};

// Reads `file` (a series in `format`) against `lineage` (one with a baseline): the rows before its step are kept if
// every complete row is nbody's, in step order, of the run's energy baseline, at the times the run's clock gives
// (fixed steps: from the step its dt applies from; the start's), the kept ones in time order up to the lineage's
// time, and a row at its step at its time. An unfinished last line (a run killed while writing it) is left out; an
// empty file is a series of no rows.
Scan scan_series(const std::string& file, SeriesFormat format, const SeriesLineage& lineage) {
  Scan scan;
  // The digest applies to the file of its name (PATH, or its partial file) in its format; a series that begins again at
  // a new baseline keeps no rows of the one it is of.
  std::uint64_t recorded_rows = 0, recorded_hash = 0;
  if (!lineage.digest.empty() && !lineage.new_baseline) {
    std::string const& d = lineage.digest;
    std::size_t const a = d.find(':'), b = d.find(':', a + 1), c = d.find(':', b + 1);
    std::string name = std::filesystem::path(file).filename().string();
    if (name.size() > 8 && name.compare(name.size() - 8, 8, ".partial") == 0) name.resize(name.size() - 8);
    std::string const format_name = format == SeriesFormat::csv ? "csv" : "jsonl";
    if (c != std::string::npos && d.substr(0, a) == format_name && d.substr(c + 1) == name) {
      recorded_rows = std::strtoull(d.substr(a + 1, b - a - 1).c_str(), nullptr, 10);
      recorded_hash = std::strtoull(d.substr(b + 1, c - b - 1).c_str(), nullptr, 16);
      scan.recorded_rows = recorded_rows;
    }
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    scan.not_this_runs = "cannot be read";
    return scan;
  }
  if (in.peek() == std::char_traits<char>::eof()) return scan;
  // A row is a few hundred characters: a file whose first 4 KiB hold no line end is no series (and is not read).
  {
    std::string head(4096, '\0');
    in.read(head.data(), std::streamsize(head.size()));
    head.resize(std::size_t(in.gcount()));
    if (head.find('\n') == std::string::npos && head.size() == 4096) {
      scan.not_this_runs = "it is not a series of nbody's (no line in its first 4 KiB)";
      return scan;
    }
    in.clear();
    in.seekg(0);
  }
  std::string line;
  std::uint64_t offset = 0, row = 0, raw = 0;
  if (format == SeriesFormat::csv) {
    if (!read_line(in, line, &raw) || line != diagnostics_csv_header()) {
      scan.not_this_runs = "its first line is not nbody's header";
      return scan;
    }
    offset = scan.keep_bytes = raw;
    scan.crlf = raw > line.size() + 1;
  }
  std::optional<RowFigures> last;
  std::optional<double> first_time;  // of the rows kept
  while (read_line(in, line, &raw)) {  // (an unfinished last line: the row was being written when its run ended)
    if (format != SeriesFormat::csv && row == 0) scan.crlf = raw > line.size() + 1;
    ++row;
    offset += raw;
    std::optional<RowFigures> const r = parse_row(line, format);
    std::string const where = "row " + std::to_string(row);
    if (!r) {
      scan.not_this_runs = where + " is not a row of nbody's";
      return scan;
    }
    std::string const at = where + " (step " + std::to_string(r->step) + ", time " + shortest(r->time) + ")";
    if (last && r->step <= last->step) {
      scan.not_this_runs = at + " does not follow step " + std::to_string(last->step);
      return scan;
    }
    if (!same_baseline(*r, *lineage.initial_energy)) {
      scan.other_baseline = true;
      scan.not_this_runs = at + " measures its energy error from another start energy than this run's " +
                           shortest(*lineage.initial_energy);
      return scan;
    }
    if (r->step < lineage.step) {
      // The time the run's clock gives the row's step, where it gives one (NaN where not).
      double const due = r->step == 0                                      ? lineage.start_time
                         : lineage.dt > 0 && r->step >= lineage.dt_since_step ? lineage.time_at(r->step)
                                                                              : NAN;
      // Time runs one way from the first row to the lineage's time.
      if (!first_time) first_time = r->time;
      double const way = lineage.time >= *first_time ? 1.0 : -1.0;
      if ((!std::isnan(due) && !same_time(r->time, due)) || (last && way * (r->time - last->time) < 0.0) ||
          way * (lineage.time - r->time) < 0.0) {
        scan.not_this_runs = at + " is not at a time of this run, at time " + shortest(lineage.time) + " at step " +
                             std::to_string(lineage.step);
        if (!std::isnan(due))
          scan.not_this_runs += " (its step " + std::to_string(r->step) + " is at time " + shortest(due) + ")";
        return scan;
      }
      if (scan.kept > 0) {
        std::uint64_t const gap = r->step - scan.last_kept_step;
        // The gap before this one is now inside (neither the first nor the last) from the fourth row on.
        if (scan.kept == 1)
          scan.first_gap = gap;
        else if (scan.kept == 3)
          scan.inner_gap = scan.last_gap;
        else if (scan.kept > 3)
          scan.even_inside = scan.even_inside && scan.last_gap == scan.inner_gap;
        scan.last_gap = gap;
      }
      ++scan.kept;
      scan.kept_digest.add(row_figures(line, format));
      if (scan.kept_digest.rows == recorded_rows) scan.digest_at_recorded_rows = scan.kept_digest.hash;
      scan.keep_bytes = offset;
      scan.last_kept_step = r->step;
      scan.last_kept_time = r->time;
    } else {
      // From step 0 every row is to be this run's: at the time its clock gives the row's step, where it gives one.
      double const due = r->step == lineage.step                                        ? lineage.time
                         : lineage.step == 0 && lineage.dt > 0 && r->step >= lineage.dt_since_step ? lineage.time_at(r->step)
                                                                                                    : NAN;
      if (!std::isnan(due) && !same_time(r->time, due)) {
        scan.not_this_runs = at + " is not at a time of this run, " +
                             (r->step == lineage.step ? "at time " + shortest(lineage.time) + " at step " +
                                                            std::to_string(lineage.step)
                                                      : "whose step " + std::to_string(r->step) + " is at time " +
                                                            shortest(due));
        return scan;
      }
      scan.row_at_step = scan.row_at_step || r->step == lineage.step;
      if (lineage.dt > 0 && r->step >= lineage.dt_since_step && !same_time(r->time, lineage.time_at(r->step)))
        scan.replaced_on_clock = false;
      ++scan.replaced;
      scan.last_replaced_step = r->step;
    }
    last = r;
  }
  // The rows kept against the digest the run recorded of them (SeriesLineage::digest).
  if (recorded_rows > 0 && scan.digest_at_recorded_rows && *scan.digest_at_recorded_rows != recorded_hash)
    scan.not_this_runs = "its first " + rows_text(recorded_rows) + " are not the rows the run wrote before step " +
                         std::to_string(lineage.step) + " (by the digest of them that its checkpoint, or its last " +
                         "run, recorded: another run's from the same start, or changed since)";
  return scan;
}

bool same_bytes(const std::string& a, const std::string& b) {
  try {
    std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
    if (!fa || !fb) return false;
    return std::equal(std::istreambuf_iterator<char>(fa), std::istreambuf_iterator<char>(),
                      std::istreambuf_iterator<char>(fb), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure&) {  // a read error (a folder there): not the same file
    return false;
  }
}

// The name an earlier series of the run keeps where this run's begins again (PATH "d.csv": "d.earlier-1.csv", the
// next number where that one is taken): the first free one, or one that already names the very file at PATH (an
// earlier attempt of this run that linked it there, then died).
std::string earlier_series_name(const std::string& path) {
  std::filesystem::path const p(path);
  std::string const stem = (p.parent_path() / p.stem()).string(), ext = p.extension().string();
  struct stat at_path {};
  bool const exists = ::stat(path.c_str(), &at_path) == 0;
  for (unsigned k = 1;; ++k) {
    std::string const name = stem + ".earlier-" + std::to_string(k) + ext;
    struct stat st {};
    if (::lstat(name.c_str(), &st) != 0) return name;
    if (exists && st.st_dev == at_path.st_dev && st.st_ino == at_path.st_ino) return name;
    // A copy of it (a file system without links): the same bytes.
    if (exists && S_ISREG(st.st_mode) && st.st_size == at_path.st_size && same_bytes(name, path)) return name;
  }
}

std::string rows_text(std::uint64_t n) { return std::to_string(n) + (n == 1 ? " row" : " rows"); }

// What a continuation says: the rows kept and replaced, and a step cadence other than this run's.
// `held`: the rows from the run's step on stay until this run's reach as far (DiagnosticsSeries, a partial file).
std::string continued_text(const std::string& given, const std::string& from, const Scan& scan,
                           const SeriesLineage& lineage, const SettingNames& names, bool held = false) {
  std::string const step = std::to_string(lineage.step);
  std::string text = given + ": continues " + from + ": ";
  text += scan.kept ? "its " + rows_text(scan.kept) + " before step " + step + " kept" : "no row before step " + step;
  if (scan.replaced && held) {
    std::string const last = std::to_string(scan.last_replaced_step);
    text += "; its " + rows_text(scan.replaced) + " from step " + step + " to step " + last + " (this run's course, " +
            "computed again) stay until this run's rows reach step " + last + ", then are replaced by them (at once " +
            "where a row differs); stopped or killed before then, this run leaves them as they were, and one that " +
            "ends before then (at its own end) replaces them up to there, keeping those past it where that end is " +
            "at one of them";
  } else if (scan.replaced) {
    text += ", " + rows_text(scan.replaced) + " from step " + step + " on replaced";
  }
  std::uint64_t const cadence = scan.cadence();
  // Fewer rows than the run wrote before its step (by the digest it recorded): cut short (a restart from an earlier
  // step that stopped replaced the rest), or another run's, which the digest cannot tell for fewer rows than it counts.
  if (scan.kept > 0 && scan.kept < scan.recorded_rows) {
    text += "; the run wrote " + rows_text(scan.recorded_rows) + " before step " + step + " (by the digest of them " +
            "it recorded), and this file holds " + std::to_string(scan.kept) + ": cut short (by a restart from an " +
            "earlier step that stopped, say), or another run's, which fewer rows cannot show; kept, unverified";
    return text;
  }
  // Rows that the series' cadence (as the checkpoint records it, or its rows' own) puts between the last one kept and
  // the run's start, the start's own row left out (the run got from one to the other without writing this series: a
  // restart in between that wrote none): a gap in it, said.
  std::uint64_t missing = 0;
  std::string at;
  if (lineage.written_dt > 0 && scan.kept) {
    double const dt = lineage.written_dt, slack = 1e-9;
    double const reached = std::floor(lineage.time / dt + slack) - std::floor(scan.last_kept_time / dt + slack);
    if (reached >= 2) missing = std::uint64_t(reached) - 1;
    at = "every " + shortest(dt) + " in time";
  } else if (std::uint64_t const every = lineage.written_every ? lineage.written_every : cadence;
             scan.kept && every && lineage.step > scan.last_kept_step) {
    missing = (lineage.step - 1) / every - scan.last_kept_step / every;
    at = "every " + std::to_string(every) + " steps";
  }
  if (missing > 0)
    text += "; it has no rows between step " + std::to_string(scan.last_kept_step) + " and step " + step + " (" +
            rows_text(missing) + " at its cadence, " + at + "): the run got from one to the other without writing " +
            "this series, and the gap stays";
  bool const in_block_steps = lineage.dt == 0.0;  // the clock's dt: fixed steps
  auto const steps_of = [](bool blocks) { return std::string(blocks ? " block steps" : " steps"); };
  if (lineage.written_in_block_steps && *lineage.written_in_block_steps != in_block_steps && cadence &&
      lineage.every) {  // by time, this run's rows fall where its time says, as theirs may have
    // Rows a number of fixed steps apart continued in block steps (or the other way): no step cadence of this run's
    // falls where theirs did; only a time can.
    text += "; they are " + std::to_string(cadence) + steps_of(*lineage.written_in_block_steps) +
            " apart, which this run, in" + steps_of(in_block_steps) + ", does not count in: " +
            names.name("--diagnostics-dt") + " at the time between them keeps the series even";
  } else if (cadence && lineage.every && cadence != lineage.every) {
    text += "; they are " + std::to_string(cadence) + steps_of(in_block_steps) + " apart, this run's " +
            std::to_string(lineage.every) + ": " + names.with("--diagnostics-every", std::to_string(cadence)) +
            " (or the " + names.name("--diagnostics-dt") + " they were taken at) keeps the series even";
  }
  return text;
}

}  // namespace

nlohmann::json diagnostics_json(const sim::Diagnostics& d, double e0) {
  return {{"kinetic", d.kinetic},
          {"potential", d.potential},
          {"total", d.total()},
          {"relative_energy_error", sim::relative_energy_error(d, e0)},
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

std::optional<std::pair<std::uint64_t, double>> series_reaches(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  auto const r = last_row(path, series_format(path));
  return r ? std::optional<std::pair<std::uint64_t, double>>(std::make_pair(r->step, r->time)) : std::nullopt;
}

namespace {

// Whether a partial file holds no row a run could lose: empty, the CSV header, an unfinished first line.
bool holds_no_row(const std::string& file, SeriesFormat format) {
  std::ifstream in(file, std::ios::binary);
  std::string line;
  if (!in || !read_line(in, line)) return true;  // nothing, or one unfinished line
  if (format != SeriesFormat::csv || line != diagnostics_csv_header()) return false;
  return !read_line(in, line);
}

}  // namespace

bool holds_unfinished_rows(const std::string& path) {
  std::string const partial = partial_path(path);
  struct stat st {};
  if (::lstat(partial.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  return !holds_no_row(partial, series_format(path));
}

DiagnosticsSeries::DiagnosticsSeries(std::string path, const SettingNames& names,
                                     const std::optional<SeriesLineage>& lineage)
    : path_(std::move(path)),
      partial_(partial_path(path_)),
      given_(names.with_text("--diagnostics", path_)),
      cadence_(names.name("--diagnostics-every") + " or " + names.name("--diagnostics-dt")),
      format_(series_format(path_, names)) {
  check_output_path(path_, "--diagnostics", names);
  check_output_path(partial_, "--diagnostics", names);
  std::string const& given = given_;
  struct stat st {};
  bool unfinished = ::lstat(partial_.c_str(), &st) == 0;
  std::string const exists =
      given + ": " + partial_ + " exists (the unfinished series of a run that died or could not write it all";
  if (unfinished && !S_ISREG(st.st_mode)) throw InputError(exists + "); rename or remove it first");
  // One writer a series: a run holds a lock on its partial file while it writes it (or compares it with its rows), so
  // that the same command started twice refuses the second time rather than write between the first one's rows.
  if (unfinished) {
    lock_.reset(::open(partial_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (lock_.fd >= 0 && ::flock(lock_.fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
      unlock();
      throw InputError(given + ": " + partial_ + " is being written by another run now (another process, or another "
                       "simulation of this one, whose run has not ended); wait for it to end, or name another file");
    }
  }
  if (unfinished && holds_no_row(partial_, format_)) {
    unlock();
    if (::unlink(partial_.c_str()) != 0)
      throw InputError(given + ": cannot remove " + partial_ + ", which holds no row: " + std::strerror(errno));
    unfinished = false;
  }
  bool const continues = lineage && lineage->initial_energy;
  if (unfinished && !continues) throw InputError(exists + "); rename or remove it first");

  // The earlier series this run continues: the partial file, where the run died, or the published one.
  std::optional<Scan> from_partial, from_published;
  if (unfinished) {
    from_partial = scan_series(partial_, format_, *lineage);
    if (!from_partial->not_this_runs.empty())
      throw InputError(exists + ", not this run's: " + from_partial->not_this_runs + "); rename or remove it first");
  }
  std::error_code ec;
  bool const published = std::filesystem::is_regular_file(path_, ec);
  if (continues && published) from_published = scan_series(path_, format_, *lineage);
  bool const published_is_runs = from_published && from_published->not_this_runs.empty();
  continues_published_ = published_is_runs;
  // This run's own series from before its start energy was measured anew (no baseline, or a new one that the rows
  // do not match): replaced, and said so in the same words either way.
  bool const begins_again =
      published && lineage &&
      (!continues || (lineage->new_baseline && !published_is_runs && from_published->other_baseline));
  copy_published_ = published_is_runs && from_published->kept > 0 &&
                    (!from_partial || from_partial->kept == 0 ||
                     from_published->last_kept_step > from_partial->last_kept_step);
  if (copy_published_) {
    eol_ = from_published->crlf ? "\r\n" : "\n";
    unverified_ = from_published->kept < from_published->recorded_rows;
    keep_bytes_ = from_published->keep_bytes;
    digest_ = from_published->kept_digest;
    last_kept_time_ = from_published->last_kept_time;
    row_at_start_ = from_published->row_at_step;
    continuation_ = continued_text(given, path_, *from_published, *lineage, names);
    // Rows past the run's step: where the run changes the course (a branch), those of the course it leaves, which no
    // restart computes again; where it goes on with its checkpoint's course, they may still be a branch's, written
    // from the same checkpoint (no row records its course). The whole earlier series kept under a name of its own.
    // (A row at the step alone is the end row of the run this one continues, which gives way to the rows after it.)
    if (from_published->replaced > 0 && from_published->last_replaced_step > lineage->step) {
      earlier_name_ = earlier_series_name(path_);
      continuation_ += std::string(lineage->same_course ? "; they may be another course's (a branch's, which this run "
                                                          "does not compute again)"
                                                        : "; they are of another course (this run changes a setting)") +
                       ", so the earlier series is kept as " + earlier_name_;
    }
  } else if (from_partial && lineage->step == 0 && from_partial->kept == 0 && from_partial->replaced > 0) {
    // An earlier start's unfinished series: compared with this run's rows before anything of it changes.
    std::error_code size_ec;
    if (std::filesystem::file_size(partial_, size_ec) > kMaxComparedBytes)
      throw InputError(exists + ", from this run's start, but too long to compare with this run's rows); rename or "
                       "remove it first");
    earlier_ = rows_of(partial_, format_);
    proving_ = !earlier_.empty();
    continuation_ = given + ": " + partial_ + " is the unfinished series of an earlier start from this one (its " +
                    rows_text(earlier_.size()) + " measure this start's energy, to the bit): kept until this run's " +
                    "rows are shown to be the same, each to the bit but for the wall clock, up to its last (step " +
                    std::to_string(proving_ ? earlier_.back().first : 0) + "), then replaced by them; a row that " +
                    "differs keeps it, and this run writes no series";
  } else if (from_partial) {
    eol_ = from_partial->crlf ? "\r\n" : "\n";
    keep_bytes_ = from_partial->keep_bytes;
    digest_ = from_partial->kept_digest;
    if (from_partial->kept > 0) last_kept_time_ = from_partial->last_kept_time;
    row_at_start_ = from_partial->row_at_step;
    // Rows past the run's step (a restart from an earlier checkpoint than where the run died), where the run goes on
    // as it went (its course and the series' cadence unchanged, the rows at its clock's times), are the run's too,
    // computed again by this one: they stay until this run's rows reach as far, so that a restart stopped or killed
    // before then loses none of them. Compared meanwhile: a row that differs makes them another start's after all,
    // replaced at once.
    std::error_code size_ec;
    bool const same_cadence = (lineage->every > 0 && lineage->every == lineage->written_every) ||
                              (lineage->every_dt > 0 && lineage->every_dt == lineage->written_dt);
    if (lineage->step > 0 && lineage->same_course && same_cadence && from_partial->replaced_on_clock &&
        from_partial->last_replaced_step > lineage->step &&
        std::filesystem::file_size(partial_, size_ec) <= kMaxComparedBytes && !size_ec) {
      for (auto& row : rows_of(partial_, format_))
        if (row.first >= lineage->step) earlier_.push_back(std::move(row));
      proving_ = continues_partial_ = !earlier_.empty();
    }
    continuation_ = continued_text(given, partial_, *from_partial, *lineage, names, continues_partial_);
    unverified_ = from_partial->kept > 0 && from_partial->kept < from_partial->recorded_rows;
  } else if (published_is_runs && from_published->replaced) {
    continuation_ = continued_text(given, path_, *from_published, *lineage, names);
  }
  replaces_ = begins_again || (from_published && !published_is_runs);
  if (begins_again) {
    // The earlier series is the run's own, of another start energy: kept under a name of its own, not lost.
    earlier_name_ = earlier_series_name(path_);
    continuation_ += (continuation_.empty() ? given + ": " : "; " + path_ + " ") +
                     "replaced when the run ends: this run measures its energy error from a new start energy, so its "
                     "series begins again at step " + std::to_string(lineage->step) + "; the earlier series is kept " +
                     "as " + earlier_name_;
  }
  else if (from_published && !published_is_runs)
    continuation_ += (continuation_.empty() ? given + ": " : "; ") + path_ + " is not this run's series (" +
                     from_published->not_this_runs + "): replaced when the run ends";

  if (proving_) return;  // nothing is opened for writing until the rows are shown to be the same
  int const fd = unfinished ? ::open(partial_.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
                            : ::open(partial_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0)
    throw InputError(given + ": cannot " + (unfinished ? "open " : "create ") + partial_ + ": " +
                     std::strerror(errno));
  created_ = !unfinished;
  // A file of this series' own is locked through its own descriptor, before any other process can take it for an
  // abandoned one: created exclusively, it is no one else's.
  if (created_) {
    lock_.reset(::dup(fd));
    if (lock_.fd < 0 || ::flock(lock_.fd, LOCK_EX | LOCK_NB) != 0) {
      int const err = errno;
      ::close(fd);
      unlock();
      ::unlink(partial_.c_str());
      throw RuntimeFailure(given_ + ": " + partial_ + ": cannot lock it: " + std::strerror(err));
    }
  }
  file_ = ::fdopen(fd, "w");  // no truncation: nothing is written before settle()
  writes_partial_ = true;
  if (!file_) {
    int const err = errno;
    ::close(fd);
    if (created_) ::unlink(partial_.c_str());
    throw RuntimeFailure(given_ + ": " + partial_ + ": " + std::strerror(err));
  }
}

DiagnosticsSeries::~DiagnosticsSeries() {
  // Not closed: the run failed, and its rows stay in the partial file; an earlier start's, still being compared with
  // this run's rows, stays as it was (the rows held back are this run's, which it computes again).
  if (file_) {
    std::fclose(file_);
    if (created_ && rows_ == 0) ::unlink(partial_.c_str());  // it holds none: nothing to keep
  }
  unlock();
}

void DiagnosticsSeries::Lock::reset(int next) {
  if (fd >= 0) ::close(fd);  // (the lock goes with the descriptor)
  fd = next;
}

void DiagnosticsSeries::keep_earlier() {
  if (std::exchange(earlier_name_, std::string()).empty()) return;
  struct stat at_path {};
  // Gone meanwhile, or no longer a file (a folder made there): nothing to keep, and the name's check says the rest.
  if (::stat(path_.c_str(), &at_path) != 0 || !S_ISREG(at_path.st_mode)) return;
  // The name said at the start, unless another file took it meanwhile: then the next free one. Where it already is
  // the series (a link, or a copy, made by an earlier attempt of this run), nothing more.
  std::string const name = earlier_series_name(path_);
  if (struct stat st {}; ::lstat(name.c_str(), &st) == 0) return;
  auto fail = [&](const std::string& why) {
    unlock();
    throw RuntimeFailure(given_ + ": cannot keep the earlier series as " + name + ": " + why +
                         "; it stays at " + path_ + ", and this run's rows in " + partial_);
  };
  // A second name for the same file, so that the series is never without one; a copy, written whole, where the file
  // system has no such names.
  if (::link(path_.c_str(), name.c_str()) == 0) {
    sync_durably(name, "the earlier diagnostics series");
    return;
  }
  int const err = errno;
  if (err != EPERM && err != ENOTSUP && err != EXDEV && err != EMLINK && err != ENOSYS) fail(std::strerror(err));
  std::string rows;
  try {
    std::ifstream in(path_, std::ios::binary);
    rows.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) fail("cannot read " + path_);
  } catch (const std::ios_base::failure& e) {
    fail(std::string("cannot read ") + path_ + ": " + e.what());
  }
  write_text_file(name, rows, "the earlier diagnostics series");
}

void DiagnosticsSeries::settle() {
  if (settled_) return;
  settled_ = true;
  // The earlier series this one begins again from takes its second name now, before this run's first row: whatever
  // becomes of this run (stopped, killed, and a restart from its own checkpoint, which takes the earlier file for
  // another run's and replaces it), that series is not lost. A run that stops leaves it under both names.
  keep_earlier();
  int const fd = ::fileno(file_);
  auto fail = [&](const std::string& what) {
    throw RuntimeFailure(given_ + ": " + partial_ + ": " + what + ": " + std::strerror(errno));
  };
  // The partial file keeps its own rows before this run's step, or becomes the published file's.
  if (::ftruncate(fd, off_t(copy_published_ ? 0 : keep_bytes_)) != 0) fail("cannot cut it to the rows kept");
  if (copy_published_) {
    std::ifstream in(path_, std::ios::binary);
    std::vector<char> buffer(1 << 20);
    for (std::uint64_t left = keep_bytes_; left > 0;) {
      auto const n = std::streamsize(std::min<std::uint64_t>(left, buffer.size()));
      if (!in.read(buffer.data(), n)) {
        errno = EIO;
        fail("cannot read the rows of " + path_);
      }
      if (std::fwrite(buffer.data(), 1, std::size_t(n), file_) != std::size_t(n)) fail("cannot write");
      left -= std::uint64_t(n);
    }
  }
  if (std::fflush(file_) != 0 || std::fseek(file_, 0, SEEK_END) != 0) fail("cannot write");
  if (format_ == SeriesFormat::csv && std::ftell(file_) == 0)
    std::fprintf(file_, "%s%s", diagnostics_csv_header().c_str(), eol_.c_str());
}

std::string DiagnosticsSeries::row_text(const DiagnosticsSample& s) const {
  auto const& d = s.diagnostics;
  std::string row;
  if (format_ == SeriesFormat::csv) {
    row = std::to_string(s.step);
    for (double v : {s.time, s.wall_seconds, d.kinetic, d.potential, d.total(),
                     sim::relative_energy_error(d, s.initial_energy), d.momentum.x, d.momentum.y, d.momentum.z,
                     d.angular_momentum.x, d.angular_momentum.y, d.angular_momentum.z, d.centre_of_mass.x,
                     d.centre_of_mass.y, d.centre_of_mass.z, d.virial_ratio(), d.lagrangian_radii[0],
                     d.lagrangian_radii[1], d.lagrangian_radii[2]})
      put(row, v);
  } else {
    nlohmann::json j = {{"step", s.step}, {"time", s.time}, {"wall_seconds", s.wall_seconds}};
    j.update(diagnostics_json(d, s.initial_energy));
    row = j.dump();
  }
  return row + eol_;
}

void DiagnosticsSeries::write(const DiagnosticsSample& s) {
  if (!file_ && !proving_) throw RuntimeFailure(given_ + ": the series is closed");
  std::string const row = row_text(s);
  digest_before_last_ = digest_;
  digest_.add(row_figures(row.substr(0, row.size() - eol_.size()), format_));
  last_digested_step_ = s.step;
  if (proving_) {
    prove(row, s.step);
    return;
  }
  settle();
  append(row);
  ++rows_;
  last_step_ = s.step;
}

void SeriesDigest::add(const std::string& row_figures) {
  Fnv1a h(hash);
  h.bytes(row_figures.data(), row_figures.size());
  h.value('\n');
  hash = h.get();
  ++rows;
}

std::string SeriesDigest::text(SeriesFormat format, const std::string& path) const {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return std::string(format == SeriesFormat::csv ? "csv" : "jsonl") + ":" + std::to_string(rows) + ":" + hex + ":" +
         std::filesystem::path(path).filename().string();
}

std::string DiagnosticsSeries::digest_before(std::uint64_t step) const {
  if (!last_digested_step_ || *last_digested_step_ < step) return digest_.text(format_, path_);
  if (*last_digested_step_ == step) return digest_before_last_.text(format_, path_);
  return {};
}

void DiagnosticsSeries::append(const std::string& rows) {
  // Whole rows only: a row the disk took part of is cut off again, so the partial file (where the rows stay when
  // the series stops) ends with the last whole row. The row goes past stdio's buffer, which would write its rest
  // at close.
  auto fail = [&](int err) {
    throw RuntimeFailure(given_ + ": " + partial_ + ": cannot write: " + std::strerror(err));
  };
  if (std::fflush(file_) != 0) fail(errno);
  int const fd = ::fileno(file_);
  off_t const whole = ::lseek(fd, 0, SEEK_CUR);
  for (std::size_t done = 0; done < rows.size();) {
    ssize_t const n = ::write(fd, rows.data() + done, rows.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int const err = n < 0 ? errno : EIO;
      if (whole >= 0 && ::ftruncate(fd, whole) == 0) ::lseek(fd, whole, SEEK_SET);
      fail(err);
    }
    done += std::size_t(n);
  }
  // A disk that says it wrote what it did not (lost writes): the file is not as long as its rows.
  struct stat st {};
  if (whole >= 0 && ::fstat(fd, &st) == 0 && st.st_size < whole + off_t(rows.size())) {
    if (::ftruncate(fd, whole) == 0) ::lseek(fd, whole, SEEK_SET);
    throw RuntimeFailure(given_ + ": " + partial_ + ": cannot write: it holds fewer bytes than were written to it; " +
                         "the disk may be full or failing");
  }
}

void DiagnosticsSeries::prove(const std::string& row, std::uint64_t step) {
  // The partial file stays as it was where this run cannot show it its own; this series then writes nothing more.
  // (A restart's rows replace the ones from its step on instead: the rows before it are the run's, kept.)
  auto give_up = [&](const std::string& why) {
    if (continues_partial_) {
      commit();
      return;
    }
    proving_ = false;
    pending_.clear();
    unlock();
    throw RuntimeFailure(given_ + ": " + partial_ + " " + why + "; it is kept as it was, and this "
                         "run writes no series (rename it, or name another file)");
  };
  while (next_earlier_ < earlier_.size() && earlier_[next_earlier_].first < step) ++next_earlier_;
  bool const at_its_row = next_earlier_ < earlier_.size() && earlier_[next_earlier_].first == step;
  bool const differs =
      at_its_row && earlier_[next_earlier_].second != without_wall(row.substr(0, row.size() - eol_.size()), format_);
  if (differs && !continues_partial_)
    give_up("is another run's after all: its row at step " + std::to_string(step) + " differs from this run's "
            "(another integrator or setting, from the same bodies)");
  if (at_its_row && step > 0) ++matched_past_start_;
  pending_ += row;
  ++rows_;
  last_step_ = step;
  if (differs) {
    commit();
    return;
  }
  std::uint64_t const last = earlier_.back().first;
  if (step < last) {
    if (pending_.size() > kMaxComparedBytes)
      give_up("cannot be compared with this run's rows before they fill " +
              std::to_string(kMaxComparedBytes >> 20) + " MiB of memory (they are far more often than its)");
    return;
  }
  // Shown the same where a row past the start was compared (a file of the start's row alone is that row, the same); a
  // restart's reach as far, which is all that its rows need to replace them.
  if (matched_past_start_ > 0 || last == 0 || continues_partial_) {
    commit();
    return;
  }
  give_up("cannot be shown this run's: none of its rows past the start falls at a step of this run's rows (another " +
          cadence_ + ")");
}

std::string DiagnosticsSeries::kept_rows() const {
  if (!continues_partial_) return format_ == SeriesFormat::csv ? diagnostics_csv_header() + eol_ : std::string();
  // The partial file's first bytes, as the scan found them (it has not changed since: this run holds its lock).
  std::string rows(keep_bytes_, '\0');
  for (std::size_t done = 0; done < rows.size();) {
    ssize_t const n = ::pread(lock_.fd, rows.data() + done, rows.size() - done, off_t(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw RuntimeFailure(given_ + ": " + partial_ + ": cannot read the rows kept: " +
                           std::strerror(n < 0 ? errno : EIO));
    done += std::size_t(n);
  }
  return rows;
}

void DiagnosticsSeries::commit() {
  // This run's rows go to a file of their own, which then replaces the earlier start's whole (renamed over it): a
  // failure before leaves that one as it was. The lock passes to the new file before the name does.
  std::string const rows = kept_rows() + pending_;
  TemporaryFile next(partial_, given_);
  Lock lock;
  lock.reset(::dup(next.fd()));
  if (lock.fd < 0 || ::flock(lock.fd, LOCK_EX | LOCK_NB) != 0)
    throw RuntimeFailure(given_ + ": " + next.path() + ": cannot lock it: " + std::strerror(errno));
  int const fd = ::dup(next.fd());
  std::FILE* const file = fd < 0 ? nullptr : ::fdopen(fd, "w");
  if (!file) {
    if (fd >= 0) ::close(fd);
    throw RuntimeFailure(given_ + ": " + next.path() + ": " + std::strerror(errno));
  }
  file_ = file;
  settled_ = true;
  try {
    append(rows);
  } catch (const RuntimeFailure&) {
    std::fclose(file_);
    file_ = nullptr;
    throw;  // the temporary file goes with `next`; the earlier start's stays
  }
  if (std::fflush(file_) != 0 || std::rename(next.path().c_str(), partial_.c_str()) != 0) {
    int const err = errno;
    std::fclose(file_);
    file_ = nullptr;
    throw RuntimeFailure(given_ + ": " + partial_ + ": cannot replace it: " + std::strerror(err));
  }
  next.disown();
  std::swap(lock_.fd, lock.fd);  // the old file's lock goes with `lock`
  proving_ = false;
  writes_partial_ = true;
  pending_.clear();
  earlier_.clear();
}

void DiagnosticsSeries::close(bool ended) {
  // A run stopped before its end (a signal, a failure) replaces no PATH that reaches further than its rows (any row,
  // where it has none).
  auto kept_further = [&]() -> std::optional<std::uint64_t> {
    if (ended) return std::nullopt;
    struct stat published {};
    if (::stat(path_.c_str(), &published) != 0 || !S_ISREG(published.st_mode)) return std::nullopt;
    auto const further = last_row_step(path_, format_);
    return further && (!last_step_ || *further > *last_step_) ? further : std::nullopt;
  };
  auto keep_published = [&](std::uint64_t further, const std::string& rows_stay) {
    unlock();
    throw SeriesKept(path_ + " is kept: it reaches step " + std::to_string(further) +
                         ", past this stopped run's " +
                         (last_step_ ? "last row (step " + std::to_string(*last_step_) + ")" : "rows (none)") +
                         rows_stay);
  };
  // A restart of the same course that has not reached the rows held past its step: stopped (or with no row of its own),
  // it leaves the partial file as it was, whose rows its own are, to the bit (a restart from a later checkpoint goes on
  // with them), and says so; ended (at its own end, before theirs), its rows replace theirs up to that end, and where
  // that end is at one of their rows, theirs past it stay after its own: rows of its course (each of its own compared
  // with theirs was the same, to the bit, the end's included), which a restart from the run's later checkpoint goes on
  // from, where cut off they would be missing for good.
  if (proving_ && continues_partial_) {
    if (rows_ == 0 || !ended) {
      proving_ = false;
      unlock();
      if (ended) return;
      throw SeriesKept(partial_ + " is kept as it was: it reaches step " + std::to_string(earlier_.back().first) +
                       ", past this stopped run's " +
                       (last_step_ ? "last row (step " + std::to_string(*last_step_) + "), whose rows are its own, "
                                     "computed again"
                                   : "rows (none)") +
                       "; a restart from a later checkpoint goes on with it");
    }
    // Only where this run's end row is one of theirs (compared, the same): an end between two of their rows would leave
    // a row of its own among theirs, which the digests of the dead run's later checkpoints would not know, and a
    // restart from one would take the whole file for another run's.
    bool const ends_at_theirs =
        last_step_ && std::any_of(earlier_.begin(), earlier_.end(), [&](auto const& r) { return r.first == *last_step_; });
    if (ends_at_theirs) {
      std::uint64_t past = 0;
      for_each_row(partial_, format_, [&](const RowFigures& r, const std::string& line) {
        if (r.step <= *last_step_) return;
        pending_ += line + eol_;
        ++past;
      });
      if (past > 0)
        kept_past_end_ = rows_text(past) + " of " + partial_ + " past this run's end (step " +
                         std::to_string(*last_step_) + ", to step " + std::to_string(earlier_.back().first) + ")";
    }
    commit();
  }
  if (proving_) {
    // This run's rows ended before they reached the earlier start's last row, each the same as its row: that file,
    // which reaches further, stays; this run's rows are its own series.
    proving_ = false;
    if (auto const further = kept_further())
      keep_published(*further, rows_ > 0 ? "; this run's rows are not kept (they are the first of " + partial_ +
                                               "'s, which stays)"
                                         : "");
    std::string const rows = rows_ > 0 ? kept_rows() + pending_ : std::string();
    if (rows_ > 0) keep_earlier();
    if (rows_ > 0) write_text_file(path_, rows, "the diagnostics series");  // rows held in memory, published whole
    unlock();
    return;
  }
  if (!file_) return;
  // A run that wrote no row of its own (stopped in its start-up energy pass) changes nothing of an earlier series of
  // its run that it continues: its rows from this run's step on stay where they are, for the run that does go on from
  // here. (Another run's series is replaced, by this run's empty one, as before.)
  bool const continued = !replaces_ && (continues_published_ || !created_);
  if (rows_ == 0 && continued) {
    bool const still_named = names_the_file(partial_, ::fileno(file_));
    std::fclose(file_);
    file_ = nullptr;
    if (created_ && still_named) ::unlink(partial_.c_str());  // not another file moved to the name since
    return;
  }
  settle();
  bool const synced = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  int const err = errno;
  // The name may have lost the rows' file during the run (removed by a tidy-up, another file moved there): the rows
  // are read back from the file this run holds open (the process's own link to it, write-only as it is opened) and
  // published from there, and whatever holds the name now is left as it is.
  std::optional<std::string> unnamed;
  if (synced && !names_the_file(partial_, ::fileno(file_))) {
    std::ifstream in("/proc/self/fd/" + std::to_string(::fileno(file_)), std::ios::binary);
    std::string rows((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.good() || in.eof()) unnamed = std::move(rows);
  }
  bool const closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!synced || !closed) {
    unlock();
    throw RuntimeFailure(given_ + ": " + partial_ + ": cannot write: " + std::strerror(synced ? errno : err) +
                         "; the rows written so far stay in it");
  }
  // A run stopped before its end does not replace a series that reaches further (a finished run's, run again and
  // stopped): its rows stay in the partial file, which a restart from where it stopped continues (one with none is
  // removed: nothing to keep).
  if (auto const further = kept_further()) {
    if (created_ && rows_ == 0 && !unnamed) ::unlink(partial_.c_str());
    keep_published(*further, created_ && rows_ == 0 ? ""
                             : unnamed             ? "; this run's rows went with " + partial_ +
                                                         ", removed or replaced during the run"
                                                   : "; this run's rows stay in " + partial_);
  }
  if (unnamed) {
    try {
      write_text_file(path_, *unnamed, "the diagnostics series");
    } catch (const std::runtime_error& e) {
      unlock();
      throw RuntimeFailure(std::string(e.what()) + "; " + partial_ + ", which held the rows, was removed or replaced " +
                           "during the run: they are lost");
    }
    partial_lost_ = given_ + ": its working file " + partial_ + " was removed or replaced during " +
                    "the run; the rows were written from the run's own copy, and the file at that name now (if any) " +
                    "is left as it is";
    unlock();
    return;
  }
  // The name may have gone bad during the run (a directory made there): the rows then stay where they are.
  std::string const why = output_path_problem(path_);
  if (!why.empty() || std::rename(partial_.c_str(), path_.c_str()) != 0) {
    std::string const problem = why.empty() ? std::string(std::strerror(errno)) : why;
    // Where the folder went, the rows went with it.
    struct stat st {};
    bool const kept = ::lstat(partial_.c_str(), &st) == 0;
    unlock();
    throw RuntimeFailure(given_ + ": " + problem +
                         (kept ? "; the series is in " + partial_ : "; its rows are lost with " + partial_));
  }
  unlock();
  sync_durably(path_, "the diagnostics series");
}

void DiagnosticsSeries::sync_durably(const std::string& path, const std::string& what) {
  try {
    sync_folder(path, what);
  } catch (const RuntimeFailure& e) {  // the file is in place: said, not a series lost
    not_synced_ = std::string(e.what()) + "; it is in place, but may not outlast a crash of the machine";
  }
}

}  // namespace nbody::driver
