// app/modes.cpp - run, benchmark, validate, devices and compare-threading: each parses nothing and
// computes little itself; the driver library does the work, this file reports it.
#include "app/modes.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <atomic>
#include <thread>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "app/progress.h"
#include "core/atomic_file.h"
#include "core/bounds.h"
#include "core/clock.h"
#include "core/console.h"
#include "core/errors.h"
#include "core/interrupt.h"
#include "core/output_path.h"
#include "core/ranks.h"
#include "core/signal_watch.h"
#include "driver/benchmark.h"
#include "driver/checkpoints.h"
#include "driver/diagnostics_series.h"
#include "driver/run.h"
#include "driver/setup.h"
#include "mpi/build_fingerprint.h"
#include "driver/validation.h"
#include "gpu/devices.h"
#include "multigpu/simulation.h"
#include "sim/engines/engine.h"
#include "sim/io/tipsy.h"
#include "sim/physics/diagnostics.h"

namespace nbody::app {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;


std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

void print_diagnostics(const char* label, const sim::Diagnostics& d, double e0) {
  std::printf("  %-6s E = %.10e  (K = %.6e, W = %.6e)  energy error %.3e  |P| = %.3e\n", label, d.total(), d.kinetic,
              d.potential, sim::relative_energy_error(d, e0), norm(d.momentum));
  double const virial = d.virial_ratio();
  std::string ratio = std::isnan(virial) ? "undefined (W = 0)" : fmt("%.4f", virial);
  // The ratio takes K about the centre of mass; where the system moves as a whole that is not the K printed above.
  if (!std::isnan(virial) && std::abs(d.kinetic - d.internal_kinetic) > 1e-6 * std::abs(d.kinetic))
    ratio += " (K about the centre of mass " + fmt("%.6e", d.internal_kinetic) + ")";
  std::string const radii = std::isnan(d.lagrangian_radii[1])
                                ? "undefined (no mass)"
                                : fmt("%.4g", d.lagrangian_radii[0]) + ", " + fmt("%.4g", d.lagrangian_radii[1]) + ", " +
                                      fmt("%.4g", d.lagrangian_radii[2]);
  std::printf("         |L| = %.6e  2K/|W| = %s  Lagrangian radii (10, 50, 90%% of the mass) %s\n",
              norm(d.angular_momentum), ratio.c_str(), radii.c_str());
}

using driver::diagnostics_json;

// Rank 0 writes every output of a run (the others hold the same results).
bool writes_outputs() { return world().rank() == 0; }

// The reports' locks (lock_reports), by path, and the mutex a writer and release_reports take: a rank's give-up
// writes --json from its own thread while the main thread may be ending the process.
std::mutex report_locks_mutex;
std::vector<std::pair<std::string, std::unique_ptr<WriterLock>>>& report_locks() {
  static std::vector<std::pair<std::string, std::unique_ptr<WriterLock>>> locks;
  return locks;
}

// A report written as the holder of its lock (CheckpointWrite), from whichever thread writes it (a rank's give-up).
void write_report(const std::string& path, const std::string& text) {
  std::lock_guard<std::mutex> const guard(report_locks_mutex);
  const WriterLock* lock = nullptr;
  for (auto const& [locked, held] : report_locks())
    if (locked == path) lock = held.get();
  CheckpointWrite const own(lock);
  write_text_file(path, text);
}

// Every report says what made it: the build (mpi::build_description), the command line, and when (UTC), so that a
// published number can be reproduced and its build told from another's.
void write_json(const Options& o, const json& j) {
  if (o.json.empty() || !writes_outputs()) return;
  json made = j;
  char when[32] = "";
  std::time_t const now = std::time(nullptr);
  std::tm utc{};
  if (gmtime_r(&now, &utc)) std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  made["made_by"] = {{"build", mpi::build_description()}, {"command_line", o.command_line}, {"written_utc", when}};
  // (argv is bytes: a file name that is no UTF-8 is written with U+FFFD where JSON cannot hold its bytes)
  write_report(o.json, made.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

// A table's --csv and --json, each on its own: one that cannot be written does not cost the other. The failure is
// raised once both were tried (the first printed where both failed).
void write_table(const Options& o, const std::string& csv, const json& j) {
  std::vector<std::exception_ptr> failed;
  try {
    if (!o.csv.empty() && writes_outputs()) write_report(o.csv, csv);
  } catch (const std::runtime_error&) {
    failed.push_back(std::current_exception());
  }
  try {
    write_json(o, j);
  } catch (const std::runtime_error&) {
    failed.push_back(std::current_exception());
  }
  if (failed.size() == 2) {
    try {
      std::rethrow_exception(failed[0]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s\n", one_line(e.what()).c_str());
    }
  }
  if (!failed.empty()) std::rethrow_exception(failed.back());
}

// The driver's setup, with its notices printed unless --quiet.
driver::Setup make_setup(const Options& o) {
  driver::Setup setup;
  agree(world(), [&] {
    setup = driver::make_setup(o.run);
    // What the file loaded holds that nbody does not keep is known now: a --save over it would lose that.
    if (!o.save.empty()) driver::check_outputs_spare_inputs(setup.run, {{"--save", o.save}}, "--checkpoint", "--save");
  });
  setup.notices.insert(setup.notices.begin(), o.notices.begin(), o.notices.end());
  if (!o.quiet && writes_outputs())
    for (auto const& notice : setup.notices) std::cerr << "notice: " << notice << "\n";
  // (Its warnings: said by the mode, once its outputs are checked, --quiet or not.)
  return setup;
}

// The setup's warnings (other units than its checkpoint's), --quiet or not, once the mode's input is known good: the
// benchmark's and the validation's, whose --json lists them among the notices (a run's observer says them, and its
// --json has them under "warnings").
void say_setup_warnings(const driver::Setup& setup, std::vector<std::string>& notices) {
  for (auto const& warning : setup.warnings) {
    if (writes_outputs()) std::cerr << "warning: " << warning << "\n";
    notices.push_back(warning);
  }
}

// After the comparison table, per size: which way of driving the devices was fastest, and why the
// others lost, from the measurements themselves (how much of a stream step the host spent enqueuing
// it; how far apart the ways were; whether more devices helped).
// Whether a comparison's rows agreed bit for bit: the rows that did not (`differ`), as an error on stderr, or that
// every row did, said before the tables are written (a table that cannot be written must not hide it).
void say_bitwise(const std::vector<std::string>& differ, const char* differs, const char* agree) {
  if (differ.empty()) {
    std::printf("%s\n", agree);
    return;
  }
  std::string list;
  for (std::size_t k = 0; k < differ.size(); ++k) list += (k ? "; " : "") + differ[k];
  if (writes_outputs())
    std::fprintf(stderr, "error: %s in %s: the layouts should agree bit for bit\n", differs, list.c_str());
}

void print_verdicts(const std::vector<driver::ComparisonRow>& rows, bool gpu) {
  std::vector<std::size_t> sizes;
  for (auto const& r : rows)
    if (std::find(sizes.begin(), sizes.end(), r.bodies) == sizes.end()) sizes.push_back(r.bodies);
  std::printf("fastest, per N:\n");
  for (std::size_t n : sizes) {
    const driver::ComparisonRow* best = nullptr;
    const driver::ComparisonRow* best_one = nullptr;
    for (auto const& r : rows) {
      if (r.bodies != n) continue;
      if (!best || r.measurement.median_ms < best->measurement.median_ms) best = &r;
      if (r.devices == 1 && (!best_one || r.measurement.median_ms < best_one->measurement.median_ms)) best_one = &r;
    }
    std::printf("  N = %zu: %s/%s on %d device(s), %.4f ms a step.", n, name_of(best->model).c_str(),
                name_of(best->launch).c_str(), best->devices, best->measurement.median_ms);
    double slowest = best->measurement.median_ms;
    const driver::ComparisonRow* stream = nullptr;  // single/stream at the best device count
    for (auto const& r : rows) {
      if (r.bodies != n || r.devices != best->devices) continue;
      slowest = std::max(slowest, r.measurement.median_ms);
      if (r.model == multigpu::Threading::single && r.launch == multigpu::Launch::stream) stream = &r;
    }
    double const spread = 100.0 * (slowest / best->measurement.median_ms - 1.0);
    // A host that enqueues for most of a step may only be waiting for room in a full launch queue:
    // launch-bound only where the ways of launching also differ.
    if (gpu && stream && stream->measurement.enqueue_ms_per_step > 0.5 * stream->measurement.median_ms &&
        spread >= 5.0)
      std::printf(" Launch-bound: with streams the host needs %.0f%% of a step to enqueue it (the ways differ by up "
                  "to %.0f%%).",
                  100.0 * stream->measurement.enqueue_ms_per_step / stream->measurement.median_ms, spread);
    else if (spread < 10.0)
      std::printf(" %s: the ways of driving %d device(s) are within %.0f%% of each other.",
                  gpu ? "Device-bound" : "Compute-bound", best->devices, spread);
    else  // how the devices are driven sets part of the pace; as much as the forces only where a way is twice the best
      std::printf(" The ways of driving %d device(s) differ by up to %.0f%%: at this size %s %s.", best->devices, spread,
                  gpu ? "the launches and hand-offs" : "the hand-offs between threads",
                  spread >= 100.0 ? "cost as much as the forces" : "are a part of a step the forces do not hide");
    if (best_one && best->devices == 1 && rows.back().devices > 1)
      std::printf(gpu ? " More devices were slower: the exchange and the launches outweigh the forces they share."
                      : " More devices were slower: host devices share the same cores, so they add no compute, and "
                        "the exchange and the hand-offs between threads cost on top.");
    else if (best_one && best->devices > 1)
      std::printf(" %d devices: %.2fx one.", best->devices, best_one->measurement.median_ms / best->measurement.median_ms);
    std::printf("\n");
  }
}

// Runs `work` on a thread of its own and returns its result, or throws Interrupted as soon as a
// signal arrives (polled every 20 ms), leaving the work running. For work that cannot poll for a
// signal itself, in a mode that writes nothing until the work is done: the process must end after
// the Interrupted (main exits with std::_Exit, which does not wait for the thread).
template <class F>
auto finish_unless_interrupted(F work) -> decltype(work()) {
  using Result = decltype(work());
  // The state the work reports into outlives this call: the thread holds it until it ends.
  auto task = std::make_shared<std::packaged_task<Result()>>(std::move(work));
  std::future<Result> result = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  while (result.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) throw_if_interrupted();
  return result.get();
}

// A simulation's start made interruptible: a signal raises flag() (core/signal_watch.h), for the CPU engines' first
// forces, which check a cancel flag, not for signals. stop() ends the watch and lowers the flag, so that the steps
// after the start, which stop between chunks, are never cancelled part-way; the flag must outlive the simulation
// given it.
class StartCancel {
 public:
  const std::atomic<bool>* flag() const { return &flag_; }
  // Ends the watch; a simulation whose start was cancelled throws sim::StepCancelled before this.
  void stop() { watch_.stop(); }

 private:
  std::atomic<bool> flag_{false};
  SignalWatch watch_{flag_};
};

// Makes a simulation with `make` (given the cancel flag to set in its config), stopping on a signal during its start:
// Interrupted, as every start-up phase.
template <class Make>
auto start_interruptibly(StartCancel& cancel, Make make) {
  try {
    auto made = make(cancel.flag());
    cancel.stop();
    return made;
  } catch (const sim::StepCancelled&) {
    throw_if_interrupted();
    throw;
  }
}

// The outputs a process ending now leaves unwritten, as a clause ("--checkpoint a.h5 and --save b.bin are not
// written"); "" for none.
std::string unwritten_clause;

// What a second Ctrl-C may leave unwritten, (option, path) with "" for an output not given, as the line the signal
// handler prints: "nbody: second interrupt: exiting now; --checkpoint a.h5 and --save b.bin may be missing (any of
// them there is whole)". May: the one being written when the signal comes may be published already (the list is
// updated after each write), and an output is whole or absent, never part written.
void note_unwritten(const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::vector<std::string> named;
  for (auto const& [option, path] : outputs)
    if (!path.empty()) named.push_back(option + " " + path);
  std::string const list = spoken_list(named);
  unwritten_clause = named.empty() ? "" : list + (named.size() == 1 ? " is not written" : " are not written");
  set_second_interrupt_note("nbody: second interrupt: exiting now" +
                            (named.empty() ? "" : "; " + list + (named.size() == 1
                                                                     ? " may be missing (if it is there, it is whole)"
                                                                     : " may be missing (any of them there is whole)")));
}

// What main says after an interrupt, in place of the outputs left unwritten: what a mode that wrote them kept.
void say_at_interrupt(const std::string& clause) { unwritten_clause = clause; }

}  // namespace

std::string unwritten_outputs() { return unwritten_clause; }

void note_unwritten_outputs(const Options& o) {
  note_unwritten({{"--checkpoint", o.checkpoint}, {"--save", o.save}, {"--diagnostics", o.diagnostics},
                  {"--snapshots", o.snapshots.base}, {"--json", o.json}, {"--csv", o.csv}, {"--screenshot", o.screenshot},
                  {"--video", o.video}});
}

void check_outputs(const Options& o) {
  std::vector<std::pair<std::string, std::string>> const outputs{
      {"--save", o.save},         {"--checkpoint", o.checkpoint}, {"--diagnostics", o.diagnostics},
      {"--json", o.json},         {"--csv", o.csv},               {"--screenshot", o.screenshot},
      {"--video", o.video}};
  // Snapshot names are checked with the run's series (driver::check_run_outputs): they hold the step. The checkpoint
  // another run writes now is refused here too, as every output naming it is, before the start-up's work; the run
  // takes the checkpoint's lock itself when it begins (driver::run).
  for (auto const& [option, path] : outputs)
    if (!path.empty())
      check_output_path(path, option, {}, driver::bytes_named_after(option, o.checkpoint_every || o.checkpoint_dt > 0));
  // A text output named where an HDF5 file is (--json c.h5 for c.json, say) would replace a checkpoint or a snapshot:
  // the state a restart goes on from. Refused; the HDF5 outputs say what they replace themselves.
  // (The file the run starts from is left to the check that says so: driver::check_outputs_spare_inputs.)
  auto is_input = [&](const std::string& path) {
    std::error_code ec;
    for (std::string const& input : {o.run.initial.checkpoint, o.run.initial.snapshot})
      if (!input.empty() && (input == path || std::filesystem::equivalent(input, path, ec))) return true;
    return false;
  };
  for (auto const& [option, path] : outputs) {
    if (path.empty() || (option != "--json" && option != "--csv" && option != "--diagnostics") || is_input(path))
      continue;
    std::ifstream in(path, std::ios::binary);
    char signature[8] = {};
    if (in.read(signature, sizeof signature) && std::memcmp(signature, "\x89HDF\r\n\x1a\n", 8) == 0)
      throw InputError(option + " " + path + ": is an HDF5 file (a checkpoint or a snapshot, say), which this text "
                       "output would replace; name another file, or remove it first");
  }
  // Nor a series another run writes now (its lock, driver::run's): refused here, before the start-up's work, as the
  // checkpoint another run writes is.
  for (auto const& series :
       driver::written_series(o.snapshots, o.checkpoint, o.checkpoint_every, o.checkpoint_dt, o.run.names))
    if (std::string const other = another_writer_of(driver::series_lock_name(series.path_of)); !other.empty())
      throw InputError(series.given + ": " + other);
  // Nor the working file of the diagnostics series (FILE.partial, which a restart reads the series' rows from).
  auto distinct = outputs;
  if (!o.diagnostics.empty())
    distinct.emplace_back("--diagnostics " + o.diagnostics + "'s working file", driver::partial_path(o.diagnostics));
  check_distinct_outputs(distinct);
  // Nor the file beside a tipsy --save that states its units to pynbody and yt.
  driver::check_outputs_spare_tipsy_units(o.save, outputs, o.run.names);
  // Nor one of the frames --frames-dir writes (DIR/frame_00000.png, ...).
  if (!o.frames_dir.empty()) {
    std::uint64_t const frames = viewer_frames(o);  // 0: until the window closes, any frame
    // Nor the folder itself (which the viewer makes): a file output of its name would be a folder by then. (One
    // spelling per path, as for the other outputs: ./x.png is x.png.)
    for (auto const& [option, path] : outputs)
      if (!path.empty()) check_distinct_outputs({{"--frames-dir", o.frames_dir}, {option, path}});
    for (auto const& [option, path] : outputs) {
      // A name frame_file_name gives: "frame_" and its digits (at least 5), ".png".
      std::string const name = std::filesystem::path(path).filename().string();
      if (name.size() < 15 || name.size() > 29 || name.compare(name.size() - 4, 4, ".png") != 0) continue;
      std::string const digits = name.substr(6, name.size() - 10);
      if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
      std::uint64_t const frame = std::stoull(digits);
      if (name == frame_file_name(frame) && (frames == 0 || frame < frames))
        check_distinct_outputs({{"--frames-dir", (std::filesystem::path(o.frames_dir) / name).string()}, {option, path}});
    }
  }
  // No output replaces the file the run starts from, but the state continued in place: --restart's --checkpoint,
  // --load's --save (both written whole, once the run is done with the file).
  driver::check_outputs_spare_inputs(o.run, outputs, "--checkpoint", "--save", &o.snapshots, "--snapshots");
  // Nor a report named as a format it is not (--json run.csv, meant for --csv).
  if (!o.json.empty()) driver::check_report_name(o.json, "--json " + o.json, true);
  if (!o.csv.empty()) driver::check_report_name(o.csv, "--csv " + o.csv, false);
  // The folder the viewer's 'p' and 's' keys write into: one that is missing or read-only is found
  // now, not when a picture of the moment is lost.
  if (!o.screenshot_dir.empty()) {
    std::string const why = output_path_problem((std::filesystem::path(o.screenshot_dir) / "nbody.png").string());
    if (!why.empty()) throw InputError("--screenshot-dir " + o.screenshot_dir + ": " + why);
  }
}

void lock_reports(const Options& o) {
  std::lock_guard<std::mutex> const guard(report_locks_mutex);
  for (auto const& [option, path] : {std::pair{"--json", &o.json}, std::pair{"--csv", &o.csv}})
    if (!path->empty())
      report_locks().emplace_back(*path, std::make_unique<WriterLock>(*path, std::string(option) + " " + *path));
}

void release_reports() {
  // Not waiting for a report being written (a give-up's): the process is ending, and that writer holds the lock.
  std::unique_lock<std::mutex> const guard(report_locks_mutex, std::try_to_lock);
  if (guard.owns_lock()) report_locks().clear();
}

void check_interop_on(const Options& o) {
  if (o.interop != Interop::on || world().size() != 1) return;
  std::vector<std::string> notices;
  if (driver::resolve_devices(o.run, 1, &notices).backend == sim::Backend::cuda) return;
  // --backend auto fell back to the CPU: its notice says why.
  std::string why = "no usable CUDA device";
  for (auto const& n : notices)
    if (n.rfind("no CUDA device", 0) == 0) why = n.substr(0, n.find(';'));
  throw InputError("--interop on: CUDA-GL interop needs a CUDA GPU, and this run is on the CPU: " + why +
                   "; leave --interop out (auto)");
}

bool display_available() {
  char const* x = std::getenv("DISPLAY");
  char const* w = std::getenv("WAYLAND_DISPLAY");
  return (x && *x) || (w && *w);
}

// How the command line follows a run: a progress line on a terminal, notes and warnings on stderr,
// the start's diagnostics on stdout, the second Ctrl-C's note kept up to date.
class CliRunObserver : public driver::RunObserver {
 public:
  CliRunObserver(const Options& o, std::uint64_t steps, std::optional<Progress::TimeSpan> span,
                 std::function<void(const std::string&)> notice)
      : o_(o),
        progress_(steps, !o.quiet && writes_outputs() && isatty(STDERR_FILENO), span),
        notice_(std::move(notice)) {}
  void started(const std::optional<sim::Diagnostics>& start, std::optional<double> e0) override {
    start_ = start;
    e0_ = e0;
    {
      std::lock_guard<std::mutex> lock(shared_start_mutex_);
      shared_start_ = start_json();
    }
    if (!o_.quiet && start) print_diagnostics("start", *start, e0.value_or(start->total()));
    if (!o_.quiet && !start) std::printf("  start energy not computed: interrupted\n");
    std::fflush(stdout);
  }
  void progress(std::uint64_t done, std::uint64_t, double time) override { progress_.update(done, time); }
  void note(const std::string& text) override {
    if (!o_.quiet && writes_outputs()) progress_.note(text);
  }
  void notice(const std::string& text) override { notice_(text); }  // before the first step: no progress line yet
  void warning(const std::string& text) override {
    if (writes_outputs()) progress_.warn("warning: " + text);
    warnings_.push_back(text);
  }
  void replaces(const std::string& text) override { warning(text); }  // said even when quiet
  // Every warning of the run, as printed without "warning: " (--json's "warnings").
  const std::vector<std::string>& warnings() const { return warnings_; }
  // Said at the end, as an error (run_simulation).
  void output_not_written(const driver::OutputNotWritten&) override {}
  void unwritten(const std::vector<std::pair<std::string, std::string>>& outputs) override {
    auto all = outputs;
    all.emplace_back("--json", o_.json);
    note_unwritten(all);
  }
  void finish() { progress_.finish(); }
  // The start's diagnostics as --json holds them (null when none were measured): kept here, so that a run that fails
  // with no result to return still reports them.
  json start_json() const { return start_ ? diagnostics_json(*start_, e0_.value_or(start_->total())) : json(nullptr); }
  // The same, for another thread (the one that gives up a wait on the ranks while the run's thread waits): null until
  // the start was measured.
  json shared_start_json() const {
    std::lock_guard<std::mutex> lock(shared_start_mutex_);
    return shared_start_;
  }

 private:
  const Options& o_;
  Progress progress_;
  std::optional<sim::Diagnostics> start_;
  std::optional<double> e0_;
  std::vector<std::string> warnings_;
  std::function<void(const std::string&)> notice_;
  mutable std::mutex shared_start_mutex_;
  json shared_start_;
};

int run_simulation(const Options& asked) {
  driver::Setup setup = make_setup(asked);
  // A restart that names no end goes on to the end of the run it continues: as if it had named that end.
  Options o = asked;
  driver::ContinuedEnd const continued = o.steps || o.t_end ? driver::ContinuedEnd{} : driver::continued_end(setup);
  if (continued.t_end) o.t_end = continued.t_end;
  if (continued.steps) o.steps = continued.steps;
  std::uint64_t steps = o.steps.value_or(1000);
  bool const blocks = setup.program.hermite.has_value();
  // Every notice of the run, printed unless --quiet and in --json's "notices" in any case.
  std::vector<std::string> notices = setup.notices;
  // A rank's last words (the give-up's --json) read them from the thread that gave up, while the run may add one.
  std::mutex notices_mutex;
  auto notice = [&](const std::string& text) {
    {
      std::lock_guard<std::mutex> const guard(notices_mutex);
      notices.push_back(text);
    }
    if (!o.quiet && writes_outputs()) std::cerr << "notice: " << text << "\n";
  };
  if (!continued.notice.empty())
    notice(continued.notice + (continued.t_end || continued.steps
                                   ? ""
                                   : ": this run makes the default " + std::to_string(steps) +
                                         (blocks ? " block steps" : " steps") + " (" + o.run.names.name("--steps") +
                                         " or " + o.run.names.name("--t-end") + " sets another end)"));
  // A time taken from the file is named as the file has it in what the run says of it.
  NamedSetting const t_end_option = continued.t_end ? NamedSetting{asked.run.initial.checkpoint + "'s Header/EndTime"}
                                                   : o.run.names.setting("--t-end");
  if (o.t_end) {
    // A new run from a file starts at the file's time and goes forward: a time before it is a mistake (a restart
    // already past its end has nothing left to do, as when a job script runs again). Agreed, so that under several
    // ranks rank 0 says it once.
    // Block steps are not known in advance: as many as it takes, none past the time (the simulation's limit).
    agree(world(), [&] {
      if (asked.run.initial.checkpoint.empty())
        driver::refuse_t_end_before_start(setup.clock.time(setup.program.dt), *o.t_end, t_end_option,
                                          asked.run.initial.snapshot, setup.units);
      steps = driver::steps_for_time(setup.clock, setup.program, *o.t_end, t_end_option, o.run.names);
    });
    if (steps == 0)
      notice(driver::already_at_notice(setup.clock.time(setup.program.dt), *o.t_end, t_end_option, setup.units) +
             "; no steps, the outputs hold its state");
  }
  driver::RunOutputs outputs;
  outputs.checkpoint = o.checkpoint;
  outputs.checkpoint_every = o.checkpoint_every;
  outputs.checkpoint_dt = o.checkpoint_dt;
  outputs.save = o.save;
  outputs.save_format = o.save_format;
  outputs.diagnostics = o.diagnostics;
  outputs.diagnostics_every = o.diagnostics_every;
  outputs.diagnostics_dt = o.diagnostics_dt;
  outputs.snapshots = o.snapshots;
  outputs.end_time = o.t_end;
  outputs.checkpoint_cadence_named = o.checkpoint_cadence_named;
  outputs.snapshot_cadence_named = o.snapshot_cadence_named;
  outputs.snapshot_precision_named = o.snapshot_precision_named;
  outputs.from_checkpoint = !setup.run.initial.checkpoint.empty();
  outputs.course = setup.course;
  outputs.units = setup.units;
  // A restart writes its series as the run it continues did, where it names no cadence of its own.
  driver::take_up_cadences(setup, blocks, setup.clock.step, steps, outputs);
  // Every file of the series is named now: one that cannot be written stops nothing half way.
  std::vector<std::string> output_notices;
  agree(world(), [&] {
    if (!writes_outputs()) return;
    output_notices = driver::check_run_outputs(outputs, setup.clock.step, setup.clock.step + steps, {{"--json", o.json}});
    driver::check_tipsy_save(o.save, "--save " + o.save, setup.units);
  });
  for (std::string const& text : output_notices) notice(text);
  if (std::string const text = driver::series_names_notice(outputs, setup.clock.step + steps); !text.empty())
    notice(text);
  // What every report of the run holds, the failed ones' too: what ran, how far (`at`: the simulation's, or where a
  // run that stopped in its start pass was to begin), and what was said.
  struct Where {
    std::size_t bodies;
    json description;  // the simulation's one line (backend, devices, kernel, precision, ...); null where none was made
    json kernel;       // as the benchmark's report names it; null where no simulation was made
    double softening;
    std::uint64_t step;
    double time;
  };
  auto report_json = [&](const driver::RunResult& r, const Where& at, const json& warnings) {
    return json{{"mode", "run"},
                {"bodies", at.bodies},
                {"source", setup.source},
                {"backend", name_of(setup.config.backend)},  // as the benchmark's: "cpu" or "cuda"
                {"description", at.description},
                {"kernel", at.kernel},
                {"precision", name_of(setup.config.engine.precision)},
                {"integrator", setup.program.integrator},
                {"dt", blocks ? json(nullptr) : json(setup.program.dt)},  // hermite4: each body its own
                {"damping", driver::damping_json(setup.program)},
                {"softening", at.softening},
                {"units", driver::units_json(setup.units)},  // null: N-body units, no physical scale
                {"step", at.step},  // where the run ended (host counts: there after any failure)
                {"interrupted", r.stopped_by != 0},
                {"time", at.time},
                {"t_end", o.t_end ? json(*o.t_end) : json(nullptr)},  // asked for; time is where the run ended
                {"notices", [&] {
                   std::lock_guard<std::mutex> const guard(notices_mutex);
                   return json(notices);
                 }()},
                {"energy_warning", r.energy_warning.empty() ? json(nullptr) : json(r.energy_warning)},
                {"warnings", warnings},
                {"diagnostics_replaced", r.diagnostics_replaced.empty() ? json(nullptr) : json(r.diagnostics_replaced)},
                {"checkpoint_replaced", r.checkpoint_replaced.empty() ? json(nullptr) : json(r.checkpoint_replaced)}};
  };
  // The files a run wrote and did not write, as --json lists them whether the run ended well or not.
  auto outputs_json = [](const driver::RunResult& r) {
    json lost = json::array();
    for (auto const& f : r.outputs_not_written) lost.push_back({{"output", f.output}, {"path", f.path}, {"error", f.error}});
    return json{{"diagnostics_samples", r.diagnostics_samples},
                // A series that stopped early (a full disk): why, and the file its rows are in (null: none).
                {"diagnostics_failure", r.diagnostics_failure.empty() ? json(nullptr) : json(r.diagnostics_failure)},
                {"diagnostics_rows_in", r.diagnostics_failure.empty() || r.diagnostics_rows_in.empty()
                                            ? json(nullptr)
                                            : json(r.diagnostics_rows_in)},
                {"checkpoints_written", r.checkpoints_written},
                {"checkpoints_not_written", r.checkpoints_not_written},
                {"snapshots_written", r.snapshots_written},
                {"snapshots_not_written", r.snapshots_not_written},
                {"outputs_not_written", lost}};
  };
  // The keys of a failed run's report beside report_json's: what failed, and where its last sound state is (or why
  // there is none).
  auto failed_json = [&](const std::string& failure, const driver::RunResult& r, const std::string& no_state) {
    return json{{"failure", failure},
                {"checkpoint", r.saved_step ? json(o.checkpoint) : json(nullptr)},
                {"saved_step", r.saved_step ? json(*r.saved_step) : json(nullptr)},
                {"saved_state", r.saved_step ? json(r.saved_state()) : json(nullptr)},
                {"save_failure", r.saved_step ? json(nullptr) : json(no_state)},
                {"end", nullptr}};  // a failed run's end is not a sound state to measure
  };
  // The simulation; hermite4's start pass (each body's first forces and step) runs here, and a body that cannot
  // start stops the run before its first step: its --json says so too, with the keys every report has.
  StartCancel start_cancel;  // before the simulation, which holds its flag
  std::unique_ptr<multigpu::Simulation> made;
  try {
    made = start_interruptibly(start_cancel, [&](const std::atomic<bool>* cancel) {
      multigpu::SimulationConfig config = setup.config;
      config.cancel = cancel;
      return std::make_unique<multigpu::Simulation>(setup.bodies, setup.program, config, setup.clock, &setup.hermite);
    });
  } catch (const StoppedWhole& e) {
    if (!o.json.empty() && writes_outputs()) {
      driver::RunResult none;
      json j = report_json(none, {setup.bodies.size(), nullptr, nullptr, setup.config.softening, setup.clock.step,
                                  setup.clock.time(setup.program.dt)}, json::array());
      j.update(failed_json(e.what(), none, "the run stopped in its start pass, before its first step: the state it "
                                           "started from is its input's"));
      j.update({{"steps", 0}, {"wall_seconds", 0.0}, {"hermite4", nullptr}, {"start", nullptr}});
      j.update(outputs_json(none));
      try {
        write_json(o, j);
      } catch (const std::exception& written) {
        std::fprintf(stderr, "  --json %s not written either: %s\n", one_line(o.json).c_str(), one_line(written.what()).c_str());
      }
    }
    throw;
  }
  multigpu::Simulation& sim = *made;
  if (o.t_end) steps = driver::steps_for_time_limit(sim, *o.t_end, t_end_option, o.run.names);
  // Block steps: whether the time is already reached is known only now (the block time is the simulation's).
  if (o.t_end && blocks && steps == 0)
    notice(driver::already_at_notice(sim.time(), *o.t_end, t_end_option, setup.units) + "; no block steps, the outputs hold its state");
  // The scale the files state, and the time and velocity units that follow from it (the options' times are in them).
  std::string const units_line =
      setup.units.physical() ? "  units " + setup.units.describe() + ": " + setup.units.derived() + "\n" : "";
  if (!o.quiet && blocks) {
    auto const& h = *setup.program.hermite;
    std::printf("nbody run: %zu bod%s from %s\n  %s\n%s  %s, softening %g, eta %g, eta_start %g, dt_max %g, ",
                sim.bodies(), sim.bodies() == 1 ? "y" : "ies", setup.source.c_str(), sim.describe().c_str(),
                units_line.c_str(), setup.program.integrator.c_str(), sim.config().softening, h.eta, h.eta_start,
                h.dt_max);
    // The longest step, where --dt-max is no power of two (its notice says so too).
    if (double const top = sim::hermite::pow2_at_most(h.dt_max); top != h.dt_max) std::printf("longest step %g, ", top);
    if (o.t_end && steps == 0)  // (already past it: said above)
      std::printf("no block steps, already at time %s\n", setup.units.time_text(sim.time()).c_str());
    else if (o.t_end)
      std::printf("block steps to time %s\n", setup.units.time_text(*o.t_end).c_str());
    else
      std::printf("%llu block step%s\n", (unsigned long long)steps, steps == 1 ? "" : "s");
  } else if (!o.quiet) {
    std::printf("nbody run: %zu bod%s from %s\n  %s\n%s  %s, dt %g, softening %g, %llu step%s\n", sim.bodies(),
                sim.bodies() == 1 ? "y" : "ies", setup.source.c_str(), sim.describe().c_str(), units_line.c_str(),
                setup.program.integrator.c_str(), setup.program.dt, sim.config().softening, (unsigned long long)steps,
                steps == 1 ? "" : "s");
  }
  std::optional<Progress::TimeSpan> span;
  if (o.t_end && blocks) span = Progress::TimeSpan{sim.time(), *o.t_end};
  // Said by the run after the cadences it took up (outputs.said), which they may be about.
  if (std::string const text =
          driver::sample_dt_notice(sim, outputs.diagnostics_dt, o.run.names.setting("--diagnostics-dt"), "sample",
                                   setup.units);
      !text.empty())
    outputs.said.push_back(text);
  if (std::string const text = driver::sample_dt_notice(sim, outputs.snapshots.dt, o.run.names.setting("--snapshot-dt"),
                                                        "snapshot", setup.units);
      !text.empty())
    outputs.said.push_back(text);
  CliRunObserver observer(o, steps, span, notice);
  for (auto const& warning : setup.warnings) observer.warning(warning);  // (--json's "warnings")
  std::uint64_t const first_step = sim.steps_done();
  auto const run_began = std::chrono::steady_clock::now();
  // hermite4's counts when the run's clock starts: the start's force pass, counted but not timed.
  sim::hermite::HermiteCounters const timed_since = blocks ? sim.hermite_counters() : sim::hermite::HermiteCounters{};
  // A run that cannot go on still leaves a --json a script can read: the failure, and where its last sound state
  // is (or why there is none); the steps made, the files of the series written, and hermite4's figures where the
  // state can still be read (one rank: with several, a failure may have left the others where they cannot take part).
  auto here = [&] {
    return Where{sim.bodies(), sim.describe(), sim.kernel_name(), sim.config().softening, sim.steps_done(), sim.time()};
  };
  auto failure_json = [&](const std::string& failure, const driver::RunResult& r) {
    json hermite = nullptr;
    if (blocks && sim.ranks().size() == 1) {
      try {
        hermite = driver::hermite_run_json(sim, {}, timed_since, r.wall_seconds);
      } catch (const std::exception&) {  // a device that gave up: its state is not there to count
      }
    }
    try {
      json j = report_json(r, here(), observer.warnings());
      j.update(failed_json(failure, r, r.save_failure));
      j.update({{"steps", sim.steps_done() - first_step},
                {"wall_seconds", r.wall_seconds},
                {"hermite4", hermite},
                {"start", observer.start_json()}});
      j.update(outputs_json(r));
      write_json(o, j);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "  --json %s not written either: %s\n", one_line(o.json).c_str(), one_line(e.what()).c_str());
    }
  };
  // Rank 0 ending the job from a bounded wait (another rank stopped or hangs) leaves a --json too: why, and where the
  // last state kept is. What the run was doing is not there to read (the run is stopped where it waited, and may be
  // past that state): the report has the run's start and that state, and null for what only the run knows.
  json const description = sim.describe(), kernel = sim.kernel_name();  // (this thread's, read before the run)
  outputs.on_giving_up = [&](const driver::GaveUp& gave_up) {
    if (o.json.empty() || !writes_outputs()) return;
    driver::RunResult none;
    none.saved_step = gave_up.saved_step;
    try {
      json j = report_json(none,
                           {setup.bodies.size(), description, kernel, setup.config.softening,
                            gave_up.kept_step.value_or(setup.clock.step),
                            gave_up.kept_step ? gave_up.kept_time : setup.clock.time(setup.program.dt)},
                           json::array());
      j.update(failed_json(gave_up.why, none, gave_up.save_failure));
      j.update({{"steps", nullptr}, {"wall_seconds", nullptr}, {"hermite4", nullptr},
                {"start", observer.shared_start_json()}});
      j.update(outputs_json(none));
      // What only the stopped run knows (the files its series wrote, its warnings) is null, not a count of none; so
      // are its step and time where it kept no state.
      for (char const* key : {"checkpoints_written", "checkpoints_not_written", "snapshots_written",
                              "snapshots_not_written", "outputs_not_written", "diagnostics_samples",
                              "diagnostics_rows_in", "diagnostics_failure", "diagnostics_replaced", "checkpoint_replaced",
                              "energy_warning", "warnings"})
        if (j.contains(key)) j[key] = nullptr;
      if (!gave_up.kept_step) j["step"] = j["time"] = nullptr;
      write_json(o, j);
      std::fprintf(stderr, "rank 0: --json %s written\n", o.json.c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "  --json %s not written either: %s\n", one_line(o.json).c_str(), one_line(e.what()).c_str());
    }
  };
  driver::RunResult r;  // filled as the run goes: what it wrote is known even where it throws
  try {
    driver::run(setup, sim, outputs, steps, observer, r);
  } catch (const std::runtime_error& e) {
    // No sound state kept to save (no --checkpoint; several ranks, whose failures are JobFailure), or the end state
    // itself not finite. Bad input is not a failure of the run.
    if (!dynamic_cast<const RuntimeFailure*>(&e) && !dynamic_cast<const JobFailure*>(&e)) throw;
    observer.finish();
    r.steps = sim.steps_done() - first_step;
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_began).count();
    r.saved_step.reset();
    r.save_failure = o.checkpoint.empty() ? "no --checkpoint was given" : "no sound state was kept to save";
    failure_json(e.what(), r);
    throw;
  }
  observer.finish();
  if (r.failure) {
    if (writes_outputs()) {  // every rank fails alike (hermite4's floor, the one failure several ranks save)
      std::fprintf(stderr, "error: %s\n", one_line(*r.failure).c_str());
      if (r.saved_step)
        std::fprintf(stderr, "  checkpoint %s holds step %llu, %s%s\n", o.checkpoint.c_str(),
                     (unsigned long long)*r.saved_step, r.saved_state(), r.saved_at_failure ? "" : " before the failure");
      else
        std::fprintf(stderr, "  and the last sound state could not be saved either: %s\n", one_line(r.save_failure).c_str());
    }
    failure_json(*r.failure, r);
    return 1;
  }
  // Block steps end at --t-end, every body brought to it; where that finish could not be made (HermiteBlocks::
  // finish_at), at the last block time before it: said.
  if (o.t_end && !r.stopped_by && !r.stopped_by_visit) {
    std::string const text = driver::t_end_notice(sim, *o.t_end, t_end_option, setup.units);  // every rank takes part
    if (!text.empty()) notice(text);
  }
  std::optional<double> const e0 = r.initial_energy;
  auto lost_output = [&](const std::string& option) {
    return std::any_of(r.outputs_not_written.begin(), r.outputs_not_written.end(),
                       [&](auto const& f) { return f.output == option; });
  };
  bool const checkpoint_written = !o.checkpoint.empty() && !lost_output("--checkpoint");
  bool const save_written = !o.save.empty() && !lost_output("--save");
  if (!o.quiet) {
    if (checkpoint_written)
      std::printf("  checkpoint %s (step %llu)\n", o.checkpoint.c_str(), (unsigned long long)sim.steps_done());
    if (save_written)
      std::printf("  saved %s (%s)\n", o.save.c_str(),
                  driver::saves_hdf5_snapshot(o.save) ? "HDF5 snapshot, fp64"
                                                       : (name_of(o.save_format) + " tipsy").c_str());
    if (!o.diagnostics.empty() && r.diagnostics_failure.empty() && !lost_output("--diagnostics"))
      std::printf("  diagnostics %s (%llu sample%s by this run)\n", o.diagnostics.c_str(),
                  (unsigned long long)r.diagnostics_samples, r.diagnostics_samples == 1 ? "" : "s");
    if (r.end)
      print_diagnostics("end", *r.end, e0.value_or(r.end->total()));
    else
      std::printf("  end energy not computed after the interrupt (an O(N^2) pass)\n");
  }
  double const interactions = double(sim.program().drifts()) * double(sim.bodies()) * double(sim.bodies());
  double const wall = r.wall_seconds;
  json hermite = nullptr;
  // The time reached, with what it is in physical units where the run has them: "time 10.6 (4.999 Myr)".
  char reached[96];
  std::string const physical = setup.units.physical(sim.time());
  std::snprintf(reached, sizeof reached, physical.empty() ? "%.6g" : "%.6g (%s)", sim.time(), physical.c_str());
  if (blocks) {
    // Counts of this run, the start's force pass included (a restart's from zero).
    hermite = driver::hermite_run_json(sim, {}, timed_since, wall);
    if (!o.quiet && r.steps == 0)
      std::printf("  time %s, no block steps (%llu of the run)\n", reached, (unsigned long long)sim.steps_done());
    else if (!o.quiet) {
      // "14.8", "2411.3"; a short run's fraction to three figures ("0.000977"), not "0.0".
      double const per_body = hermite["force_evaluations_per_body"].get<double>();
      std::string const evaluations = fmt(per_body >= 0.1 || per_body == 0 ? "%.1f" : "%.3g", per_body);
      std::printf("  time %s after %llu block step%s (%llu of the run); %.3f s wall, %s force evaluations per body, "
                  "%.3e force+jerk interactions/s\n",
                  reached, (unsigned long long)r.steps, r.steps == 1 ? "" : "s", (unsigned long long)sim.steps_done(),
                  wall, evaluations.c_str(), hermite["interactions_per_second"].get<double>());
    }
  } else if (!o.quiet) {
    std::printf("  time %s after %llu step%s (step %llu of the run); %.3f s wall, %.2f steps/s, %.3e interactions/s\n",
                reached, (unsigned long long)r.steps, r.steps == 1 ? "" : "s", (unsigned long long)sim.steps_done(), wall,
                wall > 0 ? double(r.steps) / wall : 0.0, wall > 0 ? interactions * double(r.steps) / wall : 0.0);
  }
  // --json on its own too: one that cannot be written now costs only itself, and the report of the others follows.
  std::string json_failure;
  try {
    json j = report_json(r, here(), observer.warnings());
    j.update({{"failure", nullptr},
              {"checkpoint", checkpoint_written ? json(o.checkpoint) : json(nullptr)},  // the final one, as written
              {"hermite4", hermite},  // hermite4.dt_max: the longest of each body's own steps
              {"steps", r.steps},
              {"wall_seconds", wall},
              {"start", r.start ? diagnostics_json(*r.start, e0.value_or(r.start->total())) : json(nullptr)},
              {"end", r.end ? diagnostics_json(*r.end, e0.value_or(r.end->total())) : json(nullptr)}});
    j.update(outputs_json(r));
    write_json(o, j);
  } catch (const std::runtime_error& e) {
    json_failure = e.what();
  }
  note_unwritten({});
  // Outputs the user asked for are missing: the run's other outputs are whole, but the exit code says
  // that not everything was written (1), unless an interrupt's code says more.
  bool lost = false;
  // "error: 2 of 5 snapshots not written (a, b; see the warnings above)...": the first three named.
  auto report_lost = [&](const std::vector<std::string>& missing, std::uint64_t written, const char* what) {
    if (missing.empty() || !writes_outputs()) return;
    std::string names;
    for (std::size_t k = 0; k < std::min<std::size_t>(missing.size(), 3); ++k) names += (k ? ", " : "") + missing[k];
    if (missing.size() > 3) names += " and " + std::to_string(missing.size() - 3) + " more";
    std::fprintf(stderr, "error: %zu of %llu %s not written (%s; see the warnings above)%s\n", missing.size(),
                 (unsigned long long)(missing.size() + written), what, names.c_str(),
                 r.outputs_not_written.empty() ? "; the run and its final outputs are complete" : "");
    lost = true;
  };
  report_lost(r.checkpoints_not_written, r.checkpoints_written, "periodic checkpoints");
  report_lost(r.snapshots_not_written, r.snapshots_written, "snapshots");
  for (auto const& f : r.outputs_not_written) {
    if (writes_outputs())
      std::fprintf(stderr, "error: %s not written: %s\n", one_line(f.output).c_str(), one_line(f.error).c_str());
    lost = true;
  }
  if (!json_failure.empty()) {
    if (writes_outputs()) std::fprintf(stderr, "error: --json not written: %s\n", one_line(json_failure).c_str());
    lost = true;
  }
  if (!r.diagnostics_failure.empty() && writes_outputs()) {
    // The rows taken stay in the partial file, unless it went with its folder (or they never went there).
    std::string const& partial = r.diagnostics_rows_in;
    std::error_code ec;
    if (!partial.empty() && std::filesystem::exists(partial, ec))
      std::fprintf(stderr, "error: the diagnostics series %s is incomplete (%s); the rows taken are in %s\n",
                   one_line(o.diagnostics).c_str(), one_line(r.diagnostics_failure).c_str(), one_line(partial).c_str());
    else
      std::fprintf(stderr, "error: the diagnostics series %s is not written (%s)\n", one_line(o.diagnostics).c_str(),
                   one_line(r.diagnostics_failure).c_str());
    lost = true;
  }
  if (r.stopped_by) {
    bool const saved = save_written || checkpoint_written;
    if (writes_outputs()) {
      // With --t-end the count of steps is a bound, not a plan: the time reached says how far the run got.
      auto number_text = [&](double v) {  // and in physical units too: "25.2991 (3.772 Myr)"
        std::ostringstream text;
        text << v;
        if (setup.units.physical()) text << " (" << setup.units.physical(v) << ")";
        return text.str();
      };
      std::string const where = o.t_end ? std::to_string(r.steps) + (blocks ? " block steps" : " steps") +
                                              ", at time " + number_text(sim.time()) + " of " + number_text(*o.t_end)
                                        : std::to_string(r.steps) + " of " + std::to_string(steps) +
                                              (blocks ? " block steps" : " steps");
      std::fprintf(stderr, "%s after %s%s\n", Interrupted(r.stopped_by).what(), where.c_str(),
                   saved                  ? "; state saved"
                   : o.save.empty() && o.checkpoint.empty() ? " (no --checkpoint or --save given: state not written)"
                                                            : " (state not written: see the errors above)");
    }
    return interrupted_exit_code(r.stopped_by);
  }
  return lost ? 1 : 0;
}

namespace {

// hermite4's benchmark report (driver::BlockMeasurement): block steps by the wall clock, the work they did.
void print_block_benchmark(const driver::Measurement& m, const multigpu::Simulation& sim) {
  driver::BlockMeasurement const& b = *m.blocks;
  auto const& h = *sim.program().hermite;
  std::printf("  integrator    hermite4, eta %g, eta_start %g, dt_max %g; %llu warm-up + %llu timed block steps%s\n",
              h.eta, h.eta_start, h.dt_max, (unsigned long long)b.warmup_steps, (unsigned long long)b.block_steps,
              b.t_end ? (" (to time " + fmt("%g", *b.t_end) + ")").c_str() : "");
  std::printf("  block steps   %.4g /s, %.2f us a block step  (wall clock over %.4f s, one wait at the end)\n",
              b.block_steps_per_second, 1e3 * m.wall_mean_ms, b.wall_seconds);
  std::printf("  active        %.2f bodies a block on average  (%llu force evaluations)\n", b.mean_active,
              (unsigned long long)b.force_evaluations);
  std::printf("  interactions  %.4e force+jerk pairs /s  (%llu pairs: active bodies x N, summed / wall time)\n",
              b.interactions_per_second, (unsigned long long)b.interactions);
  std::printf("  GFLOP/s       %.1f  (at %d flops per pair)\n", m.gflops, driver::kHermiteFlopsPerInteraction);
  std::printf("  sim. time     %.6g to %.6g: %.4g time units /s\n", b.start_time, b.end_time, b.time_per_second);
  std::string levels;
  for (std::size_t k = 0; k < b.step_level_histogram.size(); ++k)
    if (b.step_level_histogram[k]) levels += " " + std::to_string(k) + ":" + std::to_string(b.step_level_histogram[k]);
  std::printf("  step levels  %s  (level: force evaluations; level k is dt_max's power of two x 2^-k)\n",
              levels.c_str());
  std::printf("  end state     %016llx  (FNV-1a of the Hermite state: the same on every layout of this build)\n",
              (unsigned long long)b.state_hash);
}

// A checkpoint given with no mode is most often a run to continue: the benchmark times steps from it, and says so.
std::string restart_timed(const Options& o) {
  return o.run.initial.checkpoint.empty() ? ""
                                          : ", which times steps from " + o.run.initial.checkpoint +
                                                "'s state and continues nothing (--run continues the run)";
}

}  // namespace

int run_benchmark_instead(const Options& o, const std::string& why) {
  if (!o.batch_refusal.empty())
    throw InputError(o.batch_refusal + "; " + why + ", where nbody would run the benchmark instead");
  // Options that do nothing in the chosen mode are refused, and here the benchmark is the mode: the viewer's settings
  // would be dropped unseen (a user who gave --paused expects a picture that waits).
  if (auto const& given = o.viewer_settings; !given.empty()) {
    throw InputError(spoken_list(given) + (given.size() == 1 ? " belongs" : " belong") + " to the viewer and would do nothing in "
                     "the headless benchmark; " + why + ", where nbody would run the benchmark instead (--offscreen "
                     "draws without a display)");
  }
  if (!o.quiet && writes_outputs())
    std::cerr << "notice: " << why << "; running the headless benchmark" << restart_timed(o) << "\n";
  return run_benchmark(o);
}

int run_benchmark(const Options& o) {
  // A benchmark that --steps, --warmup or --json chose in place of the default mode says what it does with a checkpoint.
  if (!o.mode_implied_by.empty() && !o.run.initial.checkpoint.empty() && !o.quiet && writes_outputs())
    std::cerr << "notice: " << o.mode_implied_by << " makes this the benchmark" << restart_timed(o) << "\n";
  driver::Setup setup = make_setup(o);
  bool const blocks = setup.program.hermite.has_value();
  // hermite4: a block step is mostly far shorter than a step of all N, and the wall clock times them as one run.
  std::uint64_t const steps = o.steps.value_or(blocks ? 1000 : 10);
  // Refused before the simulation is made (its memory, a large --load's copy), every rank alike, said once.
  agree(world(), [&] {
    if (o.t_end && !blocks)
      throw InputError(o.run.names.with("--t-end", fmt("%g", *o.t_end)) +  // as typed: "--t-end 1Myr"
                       ": --benchmark runs to a time with --integrator hermite4 only (" + setup.program.integrator +
                       " times --steps steps)");
    if (!blocks && steps > kMaxTimedSteps)  // (driver::measure holds to it too)
      throw InputError(o.run.names.with("--steps", std::to_string(steps)) + ": a benchmark times each of its steps, "
                       "at most " + std::to_string(kMaxTimedSteps) + " (a longer run: --run)");
  });
  say_setup_warnings(setup, setup.notices);
  // hermite4 from a checkpoint goes on from its per-body state (its bodies are at their own times).
  StartCancel start_cancel;
  auto const made = start_interruptibly(start_cancel, [&](const std::atomic<bool>* cancel) {
    multigpu::SimulationConfig config = setup.config;
    config.cancel = cancel;
    return std::make_unique<multigpu::Simulation>(setup.bodies, setup.program, config,
                                                  blocks ? setup.clock : multigpu::RunClock{0, setup.bodies.time},
                                                  blocks ? &setup.hermite : nullptr);
  });
  multigpu::Simulation& sim = *made;
  driver::Measurement const m = driver::measure(sim, o.warmup, steps, o.t_end, o.run.names);
  // What was said before the timing, and what the timing itself calls for, goes to --json too (and to the console
  // unless --quiet): a fallback to the CPU or threads sharing cores is part of what the numbers mean.
  json j = driver::benchmark_json(m, sim, setup.source, setup.units, o.warmup, steps);
  std::vector<std::string> notices = setup.notices;
  for (std::string const text : j["notices"]) {  // the timing's own
    notices.push_back(text);
    if (!o.quiet && writes_outputs()) std::cerr << "notice: " << text << "\n";
  }
  j["notices"] = notices;
  std::string const hw = driver::hardware_description(setup.config);
  std::printf("nbody benchmark\n");
  std::printf("  bodies        %zu, %s\n", sim.bodies(), setup.source.c_str());
  std::printf("  backend       %s\n", sim.describe().c_str());
  std::printf("  hardware      %s\n", hw.c_str());
  if (m.blocks) {
    print_block_benchmark(m, sim);
    write_json(o, j);
    return 0;
  }
  std::printf("  integrator    %s, dt %g; %llu warm-up + %llu timed steps\n", setup.program.integrator.c_str(),
              setup.program.dt, (unsigned long long)o.warmup, (unsigned long long)steps);
  std::printf("  step time     median %.4f ms  (min %.4f, max %.4f; wall-clock mean %.4f)\n", m.median_ms, m.min_ms,
              m.max_ms, m.wall_mean_ms);
  if (m.device_median_ms.size() > 1) {
    std::printf("  per device    ");
    for (double t : m.device_median_ms) std::printf("%.4f ", t);
    std::printf("ms (median interval between each device's step ends)\n");
  }
  std::printf("  interactions  %.4e /s  (force evaluations x N^2 / median step time)\n", m.interactions_per_s);
  std::printf("  GFLOP/s       %.1f  (at 20 flops per interaction, the CUDA samples' convention)\n", m.gflops);
  write_json(o, j);
  return 0;
}

int run_validate(const Options& o) {
  driver::Setup setup = make_setup(o);
  say_setup_warnings(setup, setup.notices);
  // In a process alone the work runs on a thread of its own, which the main thread waits for while it polls for a
  // signal: the simulation's start (its first forces are a whole step's work, which no check interrupts: 7 s at
  // N = 262,144 on two cores) and the reference alike. On a signal the work is left running and the process exits
  // from main (std::_Exit): --validate writes nothing before its results, so nothing is lost. The work owns what it
  // uses (moved or copied in): after an interrupt it may outlive this frame.
  // With several ranks the work makes collective calls, which a rank that left would leave the others waiting in:
  // it runs on the main thread, whose start, steps and reference each stop every rank at one point on a signal.
  std::string const source = setup.source;
  char const* const step_name = setup.program.hermite ? " block step" : " step";
  std::vector<std::string> const notices = setup.notices;
  json const backend = name_of(setup.config.backend), precision = name_of(setup.config.engine.precision);
  struct Validated {
    driver::ValidationResult result;
    std::string description, kernel;
  };
  auto work = [setup = std::move(setup), steps = o.steps.value_or(0), tolerance = o.tolerance]() -> Validated {
    multigpu::Simulation sim(setup.bodies, setup.program, setup.config);
    if (steps) driver::advance_interruptibly(sim, steps);  // validate on an evolved state if asked
    return {driver::validate_forces(sim, tolerance), sim.describe(), sim.kernel_name()};
  };
  auto const [r, description, kernel] = world().size() > 1 ? work() : finish_unless_interrupted(std::move(work));
  std::uint64_t const steps = o.steps.value_or(0);
  std::string const after =
      steps == 0 ? "" : ", after " + std::to_string(steps) + step_name + (steps == 1 ? "" : "s");
  std::printf("nbody validate: %zu bod%s from %s%s\n  %s\n", r.bodies, r.bodies == 1 ? "y" : "ies", source.c_str(),
              after.c_str(), description.c_str());
  std::printf("  %zu bod%s sampled against the fp64 CPU reference\n", r.samples, r.samples == 1 ? "y" : "ies");
  std::printf("  max relative error  %.3e\n  L2 relative error   %.3e  (tolerance %.1e)\n  %s\n", r.max_relative_error,
              r.l2_relative_error, r.tolerance,
              r.pass ? "PASS" : (r.finite ? "FAIL: above tolerance" : "FAIL: non-finite accelerations"));
  write_json(o, {{"mode", "validate"},
                 {"bodies", r.bodies},
                 {"steps", steps},
                 {"backend", backend},
                 {"description", description},
                 {"kernel", kernel},
                 {"precision", precision},
                 {"notices", notices},
                 {"samples", r.samples},
                 {"max_relative_error", r.max_relative_error},
                 {"l2_relative_error", r.l2_relative_error},
                 {"tolerance", r.tolerance},
                 {"pass", r.pass}});
  return r.pass ? 0 : 1;
}

int run_devices(const Options& o) {
  std::string why;
  auto const devices = gpu::devices(&why);
  json j = {{"mode", "devices"}, {"devices", json::array()}};
  if (devices.empty()) {
    std::printf("no CUDA devices: %s\n", why.c_str());
    j["reason"] = why;
    write_json(o, j);
    return 0;
  }
  std::printf("%zu CUDA device(s):\n", devices.size());
  for (auto const& d : devices) {
    std::printf("  %d: %s, %d SMs, %.1f GiB, compute capability %d.%d, %d MHz\n", d.ordinal, d.name.c_str(),
                d.multiprocessors, double(d.memory_bytes) / double(1ull << 30), d.major, d.minor, d.clock_mhz);
    j["devices"].push_back({{"ordinal", d.ordinal},
                            {"name", d.name},
                            {"multiprocessors", d.multiprocessors},
                            {"memory_bytes", d.memory_bytes},
                            {"compute_capability", std::to_string(d.major) + "." + std::to_string(d.minor)},
                            {"clock_mhz", d.clock_mhz}});
  }
  std::vector<int> ordinals;
  for (auto const& d : devices) ordinals.push_back(d.ordinal);
  auto const t = gpu::query_topology(ordinals);
  std::printf("peer access (row can access column):\n      ");
  for (int b : ordinals) std::printf("%4d", b);
  std::printf("\n");
  for (std::size_t a = 0; a < ordinals.size(); ++a) {
    std::printf("  %4d", ordinals[a]);
    for (std::size_t b = 0; b < ordinals.size(); ++b) std::printf("%4s", a == b ? "-" : t.can_access[a][b] ? "yes" : "no");
    std::printf("\n");
  }
  j["peer_access"] = t.can_access;
  write_json(o, j);
  return 0;
}

namespace {

// The step of every row: the one given, else the integrator's own; none for hermite4 (each body its own).
json comparison_dt(const Options& o) {
  sim::Integrator const integrator = o.run.physics.integrator;
  if (integrator == sim::Integrator::hermite4) return nullptr;
  return o.run.physics.dt > 0 ? o.run.physics.dt : sim::default_dt(integrator);
}

// What a comparison's rows were measured with, as both tables' --json begins (a benchmark's report has the same
// settings as numbers), so that two tables (fp32 and fp64, say) are told apart by their files alone; then its rows.
json comparison_json(const Options& o, const multigpu::SimulationConfig& probe, std::uint64_t warmup,
                     std::uint64_t steps, const std::vector<std::string>& notices, int stopped_by) {
  return {{"mode", "compare-threading"},
          {"integrator", name_of(o.run.physics.integrator)},
          {"backend", name_of(probe.backend)},
          {"precision", name_of(probe.engine.precision)},
          {"hardware", driver::hardware_description(probe)},
          {"dt", comparison_dt(o)},
          {"damping", driver::damping_json(sim::make_step_program(driver::integrator_params(o.run.physics)))},
          {"softening", probe.softening},
          {"units", driver::units_json(driver::units_of_start(o.run))},
          {"cpu_threads", probe.backend == sim::Backend::cpu ? json(driver::cpu_threads(probe)) : json(nullptr)},
          {"warmup_steps", warmup},
          {"timed_steps", steps},
          {"notices", notices},
          {"interrupted", stopped_by != 0},  // by a signal: the rows measured before it
          {"rows", json::array()}};
}

// The rows of the sizes measured whole: a comparison cut short by a signal may end in a size with fewer rows than its
// own, too few to say which way of driving the devices is fastest.
std::vector<driver::ComparisonRow> whole_sizes(const std::vector<driver::ComparisonRow>& rows) {
  std::vector<driver::ComparisonRow> whole = rows;
  std::size_t last = 0;  // the last size's rows
  while (last < rows.size() && rows[rows.size() - 1 - last].bodies == rows.back().bodies) ++last;
  if (last > 0 && last < rows.back().rows_of_size) whole.resize(rows.size() - last);
  return whole;
}

// hermite4's threading comparison: each row's block steps by the wall clock, the work they did, and whether
// its end state is bit for bit the first row's of its size (it must be: the same block steps on any layout).
int print_block_comparison(const Options& o, const std::vector<driver::ComparisonRow>& rows,
                           const multigpu::SimulationConfig& probe, std::uint64_t steps,
                           const std::vector<std::string>& notices, int stopped_by) {
  // The warm-up done (on a GPU at least 16 block steps: driver::BlockMeasurement::warmup_steps).
  std::uint64_t const warmup =
      !rows.empty() && rows[0].measurement.blocks ? rows[0].measurement.blocks->warmup_steps : o.warmup;
  std::printf("nbody compare-threading: %s backend, %s, hermite4, %llu warm-up + %llu timed block steps per row\n",
              name_of(probe.backend).c_str(), name_of(probe.engine.precision).c_str(), (unsigned long long)warmup,
              (unsigned long long)steps);
  std::printf("%-8s %-6s %4s %9s %13s %12s %11s %14s %8s %6s  %s\n", "model", "launch", "devs", "N", "block steps/s",
              "us a block", "mean active", "interactions/s", "speed-up", "eff.", "end state");
  std::ostringstream csv;
  csv << "model,launch,devices,bodies,block_steps_per_second,microseconds_per_block_step,mean_active_bodies,"
         "interactions_per_second,speedup,efficiency,state_hash,bitwise_agrees\n";
  json j = comparison_json(o, probe, warmup, steps, notices, stopped_by);
  std::vector<std::string> differ;
  for (auto const& r : rows) {
    driver::BlockMeasurement const b = r.measurement.blocks.value_or(driver::BlockMeasurement{});
    std::string const model = name_of(r.model), launch = name_of(r.launch);
    char hash[20];
    std::snprintf(hash, sizeof hash, "%016llx", (unsigned long long)b.state_hash);
    double const us = 1e3 * r.measurement.wall_mean_ms;
    std::printf("%-8s %-6s %4d %9zu %13.4g %12.2f %11.2f %14.4e %7.2fx %5.0f%%  %s%s\n", model.c_str(), launch.c_str(),
                r.devices, r.bodies, b.block_steps_per_second, us, b.mean_active, b.interactions_per_second, r.speedup,
                100 * r.efficiency, hash, r.agrees ? "" : " DIFFERS");
    csv << model << ',' << launch << ',' << r.devices << ',' << r.bodies << ',' << b.block_steps_per_second << ','
        << us << ',' << b.mean_active << ',' << b.interactions_per_second << ',' << r.speedup << ',' << r.efficiency
        << ',' << hash << ',' << (!r.compared ? "" : r.agrees ? "true" : "false") << "\n";
    json row = driver::block_steps_json(b, r.measurement.wall_mean_ms);
    row.update({{"model", model},
                {"launch", launch},
                {"devices", r.devices},
                {"bodies", r.bodies},
                {"speedup", driver::measured(r.speedup)},
                {"efficiency", driver::measured(r.efficiency)},
                {"bitwise_agrees", r.compared ? json(r.agrees) : json(nullptr)}});
    j["rows"].push_back(row);
    if (!r.agrees)
      differ.push_back(model + "/" + launch + " on " + std::to_string(r.devices) + " device(s) at N = " +
                       std::to_string(r.bodies));
  }
  std::printf("(speed-up and eff.: against the same model and launch on 1 device)\n");
  if (stopped_by) std::printf("(%s: only the rows measured before it)\n", Interrupted::what_came(stopped_by));
  std::vector<driver::ComparisonRow> const whole = whole_sizes(rows);
  std::printf("fastest, per N%s:\n", whole.size() < rows.size() ? " measured whole" : "");
  for (std::size_t k = 0; k < whole.size();) {
    std::size_t end = k;
    const driver::ComparisonRow* best = &whole[k];
    for (; end < whole.size() && whole[end].bodies == whole[k].bodies; ++end)
      if (whole[end].measurement.wall_mean_ms < best->measurement.wall_mean_ms) best = &whole[end];
    std::string const against = best->devices == 1 ? std::string()  // (itself: nothing to compare)
                                                   : fmt(" (%.2fx ", best->speedup) + name_of(best->model) + "/" +
                                                         name_of(best->launch) + " on one device)";
    std::printf("  N = %zu: %s/%s on %d device(s), %.2f us a block step%s.\n", best->bodies,
                name_of(best->model).c_str(), name_of(best->launch).c_str(), best->devices,
                1e3 * best->measurement.wall_mean_ms, against.c_str());
    k = end;
  }
  // Said before the tables are written: a table that cannot be written must not hide it.
  say_bitwise(differ, "hermite4's end state differs from the first row of its size",
              "every row of each N ended in the same state, bit for bit");
  write_table(o, csv.str(), j);
  return differ.empty() ? 0 : 1;
}

// The fixed steps' comparison: as print_block_comparison, with each row's median step and its devices' own.
int print_fixed_comparison(const Options& o, const std::vector<driver::ComparisonRow>& rows,
                           const multigpu::SimulationConfig& probe, std::uint64_t steps,
                           const std::vector<std::string>& notices, int stopped_by) {
  std::printf("nbody compare-threading: %s backend, %s, %llu warm-up + %llu timed steps per row\n",
              name_of(probe.backend).c_str(), name_of(probe.engine.precision).c_str(), (unsigned long long)o.warmup,
              (unsigned long long)steps);
  std::printf("%-8s %-6s %4s %9s %12s %14s %8s %6s %12s  %s\n", "model", "launch", "devs", "N", "median ms",
              "interactions/s", "speed-up", "eff.", "enqueue ms", "per-device median ms");
  std::ostringstream csv;
  // The columns are named as the JSON rows' keys.
  csv << "model,launch,devices,bodies,median_step_ms,interactions_per_second,speedup,efficiency,enqueue_ms_per_step,"
         "device_median_step_ms,steps_made,state_hash,bitwise_agrees\n";
  std::vector<std::string> differ;  // rows whose end state is not their size's
  json j = comparison_json(o, probe, o.warmup, steps, notices, stopped_by);
  for (auto const& r : rows) {
    driver::Measurement const& m = r.measurement;
    std::string per, per_csv;  // the table's to 4 decimals; the CSV's as its other columns are (6 digits)
    for (double t : m.device_median_ms) {
      per += fmt("%.4f ", t);
      std::ostringstream value;
      value << t;
      per_csv += (per_csv.empty() ? "" : " ") + value.str();
    }
    std::string const model = name_of(r.model), launch = name_of(r.launch);
    std::printf("%-8s %-6s %4d %9zu %12.4f %14.4e %7.2fx %5.0f%% %12.4f  %s\n", model.c_str(), launch.c_str(),
                r.devices, r.bodies, m.median_ms, m.interactions_per_s, r.speedup, 100 * r.efficiency,
                m.enqueue_ms_per_step, per.c_str());
    csv << model << ',' << launch << ',' << r.devices << ',' << r.bodies << ',' << m.median_ms << ',' << m.interactions_per_s << ','
        << r.speedup << ',' << r.efficiency << ',' << m.enqueue_ms_per_step << ",\"" << per_csv << "\","
        << m.steps_made << ',' << driver::state_hash_text(m.state_hash) << ','
        << (!r.compared ? "" : r.agrees ? "true" : "false") << "\n";  // (empty: no earlier row to agree with)
    if (!r.agrees) differ.push_back(model + "/" + launch + " on " + std::to_string(r.devices) + " device(s), N = " +
                                    std::to_string(r.bodies));
    j["rows"].push_back({{"model", model},
                         {"launch", launch},
                         {"devices", r.devices},
                         {"bodies", r.bodies},
                         {"median_step_ms", driver::measured(m.median_ms)},
                         {"interactions_per_second", driver::measured(m.interactions_per_s)},
                         {"speedup", driver::measured(r.speedup)},
                         {"efficiency", driver::measured(r.efficiency)},
                         {"enqueue_ms_per_step", driver::measured(m.enqueue_ms_per_step)},
                         {"device_median_step_ms", driver::measured(m.device_median_ms)},
                         {"steps_made", m.steps_made},
                         {"state_hash", driver::state_hash_text(m.state_hash)},
                         {"bitwise_agrees", r.compared ? json(r.agrees) : json(nullptr)}});
  }
  std::printf("(speed-up and eff.: against the same model and launch on 1 device)\n");
  if (stopped_by) std::printf("(%s: only the rows measured before it)\n", Interrupted::what_came(stopped_by));
  if (probe.backend == sim::Backend::cpu)
    std::printf("(CPU backend: host devices run their steps synchronously, so 'enqueue' is the whole step; they share "
                "this machine's cores, so more of them divide the same cores: eff. is against devices that add none)\n");
  std::vector<driver::ComparisonRow> const whole = whole_sizes(rows);
  if (whole.size() < rows.size()) std::printf("(the verdicts leave out N = %zu, cut short)\n", rows.back().bodies);
  print_verdicts(whole, probe.backend == sim::Backend::cuda);
  // Every row of a size that made as many steps ends in the same state, bit for bit, as the product holds; said
  // before the tables are written, as hermite4's rows are.
  say_bitwise(differ, "the end state differs from the first row of its size that made as many steps",
              "every row of each N that made as many steps ended in the same state, bit for bit");
  write_table(o, csv.str(), j);
  return differ.empty() ? 0 : 1;
}

}  // namespace

int run_compare_threading(const Options& o) {
  // hermite4: block steps, mostly far shorter than a step of all N (driver::measure times them as one run).
  bool const blocks = o.run.physics.integrator == sim::Integrator::hermite4;
  std::uint64_t const steps = o.steps.value_or(blocks ? 1000 : 10);
  std::vector<std::string> notices;
  multigpu::SimulationConfig probe;
  agree(world(), [&] { probe = driver::resolve_devices(o.run, 1024, &notices); });
  // By default small N, where a step is mostly launch overhead and the ways of driving the devices
  // differ, beside large N, where they do not (the CPU backend: the small sizes only).
  std::vector<std::size_t> const sizes =
      !o.sizes.empty() ? o.sizes
      : probe.backend == sim::Backend::cuda
          ? std::vector<std::size_t>{1024, 4096, 16384, 65536, 262144, 1048576}
          : std::vector<std::size_t>{1024, 4096, 16384};
  if (!o.quiet && writes_outputs())
    for (auto const& notice : notices) std::cerr << "notice: " << notice << "\n";
  // A signal cancels the simulation in hand at once (its first forces, a CPU step of a large N), as a benchmark's
  // start is: the comparison ends with Interrupted, not after the pass (hours at N = 10^8 on a few cores).
  std::atomic<bool> cancel{false};
  SignalWatch const watch{cancel};
  auto const compare = [&](auto&& on_row) {
    try {
      return driver::compare_threading(o.run, sizes, o.warmup, steps, on_row, &cancel);
    } catch (const sim::StepCancelled&) {
      throw_if_interrupted();
      throw;
    }
  };
  // A signal keeps the rows measured before it: they are reported and written, marked interrupted (a comparison
  // may take hours), and the exit code is the interrupt's. Where a rank alone saw the signal, the job ends at once.
  std::vector<driver::ComparisonRow> rows;
  int stopped_by = 0;
  bool every_rank = false;
  try {
    compare([&](const driver::ComparisonRow& r) {
      rows.push_back(r);
      if (!o.quiet && writes_outputs())
        std::fprintf(stderr, "  measured %s/%s, %d device(s), N = %zu: %.4f ms%s\n", name_of(r.model).c_str(),
                     name_of(r.launch).c_str(), r.devices, r.bodies,
                     r.measurement.blocks ? r.measurement.wall_mean_ms : r.measurement.median_ms,
                     r.measurement.blocks ? " a block step" : "");
    });
  } catch (const Interrupted& e) {
    if (rows.empty() || (world().size() > 1 && !e.every_rank)) throw;
    stopped_by = e.signal;
    every_rank = e.every_rank;
  }
  auto const report = [&] {
    return blocks ? print_block_comparison(o, rows, probe, steps, notices, stopped_by)
                  : print_fixed_comparison(o, rows, probe, steps, notices, stopped_by);
  };
  if (!stopped_by) return report();
  // Interrupted: the rows go out, and the process then ends as any interrupted mode does (main: a GPU's given-up
  // work is not waited for), its status the signal's, whether or not the table could be written.
  std::string outcome = "the table holds the " + std::to_string(rows.size()) + (rows.size() == 1 ? " row" : " rows") +
                        " measured before it";
  try {
    report();
  } catch (const std::runtime_error& e) {
    if (writes_outputs()) std::fprintf(stderr, "error: %s\n", one_line(e.what()).c_str());
    outcome = "its table is not written whole (above)";
  }
  say_at_interrupt(outcome);
  throw Interrupted(stopped_by, every_rank);
}

}  // namespace nbody::app
