// driver/diagnostics_series.h - a run's diagnostics over time (energies, momentum, angular momentum,
// centre of mass, virial ratio, Lagrangian radii) as CSV or JSON lines, and the same quantities as
// JSON for the run's summary.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.h"
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

// What close() throws where a stopped run keeps a PATH that reaches further (not a failure of the series: PATH holds
// the finished run's, the partial file this run's rows). Its text names PATH first ("d.csv is kept: ...").
struct SeriesKept : RuntimeFailure {
  using RuntimeFailure::RuntimeFailure;
};

// Where a series is written while the run goes: PATH + ".partial", renamed to PATH when it ends, so
// PATH holds a whole series or nothing, and a run that dies leaves every row it took beside it.
std::string partial_path(const std::string& path);
// The step and time of the last row of the finished series at PATH (not its partial file); none where it holds no
// row or is no file.
std::optional<std::pair<std::uint64_t, double>> series_reaches(const std::string& path);
// Whether PATH.partial is a regular file with a row in it: the unfinished series of a run that died, which a run from
// step 0 measures its start for before it makes its series (the same run begun again takes it over; see below).
bool holds_unfinished_rows(const std::string& path);

// Where a run that does not begin at step 0 (a restart, a Python script's next run) takes up its run: a series of the
// same run already at the path is continued, not replaced.
struct SeriesLineage {
  std::uint64_t step = 0;       // the run's first step: the rows from it on are this run's
  double time = 0.0;            // the simulation time at that step
  // The run's baseline of the energy error (the checkpoint's, or its start's where it measured one anew: see
  // new_baseline). None only where the pass that would measure it was interrupted: the series then continues
  // nothing, and one from before begins again.
  std::optional<double> initial_energy;
  double start_time = 0.0;      // the time at step 0
  // Fixed steps: the clock (multigpu::RunClock), which gives the time of every step from dt_since_step on; 0 for
  // block steps, whose times no clock gives.
  double dt = 0.0;
  std::uint64_t dt_since_step = 0;
  double dt_since_time = 0.0;
  double time_at(std::uint64_t k) const { return dt_since_time + double(k - dt_since_step) * dt; }
  // The baseline was measured anew at this step (a new softening, new bodies, a checkpoint without its own): a
  // series whose rows measure another start energy is this run's from before, and begins again (said so), not
  // another run's; one measured from this start (the same run, run again after it died) goes on.
  bool new_baseline = false;
  // This run's rows are every this many steps (0: by time): an earlier series of the run kept at another step cadence
  // is said (continuation()), since its rows and this run's then fall at other intervals.
  std::uint64_t every = 0;
  double every_dt = 0.0;  // by time: this run's rows at every multiple of this time (0: by steps)
  // The cadence the series was written at, as the run's checkpoint records it: steps, or a time (0: none).
  std::uint64_t written_every = 0;
  double written_dt = 0.0;
  // Whether the run's steps before `step` were block steps (hermite4's), as its checkpoint records it; none where it
  // records nothing. Rows a number of steps apart of another kind than this run's are not this run's cadence.
  std::optional<bool> written_in_block_steps = {};
  // The rows before `step` as the run's checkpoint records them (DiagnosticsSeries::digest_before; "" where it
  // records none): an earlier series of that name and format whose first rows (as many as the digest counts) give
  // another digest is another run's, however well its energies and times agree (another integrator from the same
  // bodies with the same dt). One with fewer rows than that is left to the other checks (it may be a copy of them cut
  // short: a partial file of an earlier start that died), as is another file's.
  std::string digest = {};
  // The run goes on from its checkpoint as that run did (a restart that names no setting of its course anew:
  // Setup::course_changed; its baseline not new): where it also samples at the cadence the series was written at, and
  // a partial file's rows past its step are at the times its clock gives them (fixed steps), they are the rows an
  // earlier start of it computed, to the bit but for the wall clock, and are held until this run's reach them
  // (DiagnosticsSeries). Else they are another's, replaced from the step on at the first row.
  bool same_course = false;
};

// A digest of a series' rows, each as its figures but its wall clock (FNV-1a, 64 bits, over the values, not their
// text), and how many: what a checkpoint records of the rows before its step.
struct SeriesDigest {
  std::uint64_t hash = 14695981039346656037ull;
  std::uint64_t rows = 0;
  void add(const std::string& row_figures);
  // "csv:ROWS:HASH:NAME" (or "jsonl:..."): HASH in 16 hexadecimal digits, NAME the series file's name without its
  // folder, the one file whose rows it is of.
  std::string text(SeriesFormat format, const std::string& path) const;
};

// The series file. Refuses (InputError) what an output may not be (core/output_path.h) and a
// partial file left by another run, which it would otherwise lose (one that holds no row is taken
// over: nothing is lost). Each row is flushed as written; close() syncs the file to disk and gives
// it its name. Not closed, the partial file stays (removed if this series made it and wrote no row).
//
// Given a lineage, a series of the same run at PATH.partial (one that did not finish) or at PATH keeps its rows
// before the lineage's step, and this run's follow them; of the two, the one whose kept rows reach further. The
// same run's: every row is nbody's, in step order, its energy error measured from the run's start energy (to the
// bit), at the times the run's clock gives (fixed steps), in time order up to the lineage's time, a row at its step
// at its time. A lineage at step 0 (a run from its start, measured) may take over a partial file begun from this very
// start (its rows measure this start energy, to the bit, at this run's times: a job killed before it could be
// restarted, run again): the file is kept as it is while this run's rows are held back and compared with its rows, each
// to the bit but for the wall clock; once they reach its last row, all the same, they replace it. A row that differs
// makes it another run's after all (another integrator or setting from the same bodies): it is kept, and this series
// stops (write throws). A lineage past step 0 of the same course whose partial file holds rows past its step (a
// restart from an earlier checkpoint than the file reaches; see SeriesLineage::same_course) keeps them the same way, its
// rows before the step kept, until this run's rows reach its last one, then this run's replace them (at once where one
// differs). Stopped or killed before then, the partial file stays as it was (its rows are this run's, to the bit);
// ended before then (its own end), its rows replace them up to that end, and where the end is at one of theirs, theirs
// past it stay after its own (close()). Another run's PATH is replaced, as any output is; another run's partial file is refused, and
// so is one another process writes now (each writer holds a lock on its partial file). A lineage
// with no baseline continues nothing: its PATH is replaced and its partial file refused.
// continuation() says which. Nothing of the earlier files changes until this series writes its first row: a restart
// that stops before it (in its start-up energy pass) leaves them as they were, closed or not.
class DiagnosticsSeries {
 public:
  explicit DiagnosticsSeries(std::string path, const SettingNames& names = {},
                             const std::optional<SeriesLineage>& lineage = std::nullopt);
  ~DiagnosticsSeries();
  DiagnosticsSeries(const DiagnosticsSeries&) = delete;
  DiagnosticsSeries& operator=(const DiagnosticsSeries&) = delete;

  void write(const DiagnosticsSample& sample);
  // Gives the rows their name (PATH). `ended`: the run reached its end; one stopped before it (a signal, a failure)
  // replaces no PATH that reaches a later step than its rows do (a finished run's series, run again and stopped): its
  // rows then stay in the partial file, and close throws saying so.
  void close(bool ended = true);
  const std::string& path() const { return path_; }
  std::uint64_t rows() const { return rows_; }  // this run's rows
  // The file this run's rows are in while the series has no name yet (the partial file), or "" where they are in none
  // (held back while an earlier start's rows were compared, and found another run's).
  std::string rows_in() const { return writes_partial_ && rows_ > 0 ? partial_ : std::string(); }
  // What became of an earlier series at the path, for a notice: continued (how many rows kept, how many replaced),
  // or replaced as another run's (why); empty when there was none.
  const std::string& continuation() const { return continuation_; }
  // After close(): the rows of a dead run's partial file past this run's end that stay after its own (a restart of the
  // run's course from an earlier checkpoint, ended before them), for a notice; empty where none stayed.
  const std::string& kept_past_end() const { return kept_past_end_; }
  // After close(): where the working file's name no longer held this run's rows when it ended (removed, or another
  // file moved there during the run), what became of them, for a warning; empty otherwise.
  const std::string& partial_lost() const { return partial_lost_; }
  // Where a folder the series' files went into could not be synced after they did (they are in place, but may not
  // outlast a crash of the machine), why, for a warning; empty otherwise.
  const std::string& not_synced() const { return not_synced_; }
  // The rows kept are fewer than the run wrote there (by its digest): its own cut short, or another run's, which the
  // digest cannot tell; continuation() says so, as a warning.
  bool unverified() const { return unverified_; }
  // The earlier series at the path is replaced whole when the run ends (another run's, or this run's from before its
  // start energy was measured anew); continuation() says whose and why.
  bool replaces() const { return replaces_; }
  // Where rows of an earlier series of the run are kept (this run's follow them): the last one's time.
  std::optional<double> last_kept_time() const { return last_kept_time_; }
  // The earlier series kept has a row at the lineage's step (where the run it continues ended, not stopped), which
  // this series replaces: a run that ends before a row of its own writes its start there instead (driver::run).
  bool replaces_a_row_at_its_start() const { return row_at_start_; }
  // The digest of the series' rows before `step` (SeriesDigest::text), the kept ones and this run's: what a checkpoint
  // at `step` records (SeriesLineage::digest); "" where this series cannot tell (a row past it).
  std::string digest_before(std::uint64_t step) const;

 private:
  void settle();  // the earlier rows kept, the header: before the first row
  void keep_earlier();  // an earlier series that this one begins again from: a name of its own (earlier_name_)
  std::string row_text(const DiagnosticsSample& s) const;  // one row, with its line end
  void append(const std::string& rows);                    // whole rows, or none (cut off again)
  void prove(const std::string& row, std::uint64_t step);  // a row while an earlier start's rows are compared
  void commit();                                           // they were all the same: this run's replace them
  std::string kept_rows() const;  // what goes before this run's rows where they replace the compared ones
  void unlock() { lock_.reset(); }
  void sync_durably(const std::string& path, const std::string& what);  // a failed folder sync: not_synced_

  std::string path_, partial_;
  std::string given_;    // the setting as its front end names it: "--diagnostics PATH", "diagnostics='PATH'"
  std::string cadence_;  // "--diagnostics-every or --diagnostics-dt", or the keywords
  SeriesFormat format_;
  // The line end of the rows written: the earlier file's where this series continues one whose lines end in CR LF (one
  // written again on Windows), so that the file keeps one kind.
  std::string eol_ = "\n";
  std::FILE* file_ = nullptr;
  std::uint64_t rows_ = 0;
  std::string continuation_;
  std::string kept_past_end_;
  std::string partial_lost_;
  std::string not_synced_;
  bool replaces_ = false;
  // Where this series begins again from the run's earlier one at PATH (another start energy): the name that one keeps,
  // given to it before this run's first row goes anywhere ("" once given, or where none is kept).
  std::string earlier_name_;
  bool created_ = false;      // the partial file is this series' own
  bool settled_ = false;      // the kept rows are in place
  bool copy_published_ = false;  // they come from PATH (else: the partial file's first keep_bytes_)
  bool continues_published_ = false;  // PATH holds an earlier series of the run, which this one continues
  std::uint64_t keep_bytes_ = 0;
  std::optional<double> last_kept_time_;
  bool row_at_start_ = false;
  bool unverified_ = false;
  // A descriptor of the partial file that holds this series' lock on it (flock) while it writes it, released with it
  // (also where the constructor throws).
  struct Lock {
    int fd = -1;
    Lock() = default;
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;
    ~Lock() { reset(); }
    void reset(int next = -1);
  } lock_;
  std::optional<std::uint64_t> last_step_;  // of this run's rows
  // Of every row of the series (the kept ones, then this run's), and of those before the last one.
  SeriesDigest digest_, digest_before_last_;
  std::optional<std::uint64_t> last_digested_step_;
  // An earlier start's partial file being compared (proving_): its rows (step, text but the wall clock), the next one
  // to compare, and this run's rows held back meanwhile.
  bool proving_ = false;
  // The rows compared follow rows of the run kept before its step (a restart from an earlier checkpoint than the
  // partial file reaches): this run's replace them once they reach as far, or at once where one differs.
  bool continues_partial_ = false;
  bool writes_partial_ = false;  // this run's rows go to the partial file
  std::vector<std::pair<std::uint64_t, std::string>> earlier_;
  std::size_t next_earlier_ = 0;
  std::uint64_t matched_past_start_ = 0;  // rows past the start compared and found the same
  std::string pending_;
};

}  // namespace nbody::driver
