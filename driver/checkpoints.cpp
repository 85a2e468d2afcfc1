// driver/checkpoints.cpp - checkpoint records, series names, finite-state check, snapshots.
#include "driver/checkpoints.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/atomic_file.h"
#include "core/bounds.h"
#include "core/errors.h"
#include "core/output_path.h"
#include "core/ranks.h"
#include "sim/io/checkpoint.h"

namespace nbody::driver {

sim::RunRecord run_record(const Setup& setup, const multigpu::Simulation& sim, std::optional<double> initial_energy,
                          const RunEnd& end, const OutputCadences& cadences) {
  sim::RunRecord r;
  multigpu::RunClock const clock = sim.clock();
  r.step = clock.step;
  r.start_time = clock.start_time;
  r.dt_since_step = clock.dt_since_step;
  r.dt_since_time = clock.dt_since_time;
  r.precision = sim.config().engine.precision;
  r.integrator = sim.program().integrator;
  r.dt = sim.program().dt;
  r.softening = sim.config().softening;
  r.damping = setup.damping;
  r.scenario = setup.scenario;
  r.seed = setup.seed;
  r.initial_energy = initial_energy;
  r.units = setup.units;
  r.hermite = sim.program().hermite;
  r.end_time = end.time;
  r.end_step = end.time ? std::nullopt : end.step;
  auto const record = [](const Cadence& c, std::optional<std::uint64_t>& every, std::optional<double>& dt) {
    if (c.dt > 0)
      dt = c.dt;
    else if (c.every > 0)
      every = c.every;
  };
  record(cadences.diagnostics, r.diagnostics_every, r.diagnostics_dt);
  record(cadences.checkpoints, r.checkpoint_every, r.checkpoint_dt);
  record(cadences.snapshots, r.snapshot_every, r.snapshot_dt);
  r.diagnostics_digest = cadences.diagnostics_digest;
  r.course = setup.course;
  return r;
}

std::string series_path(const std::string& path, std::uint64_t step) {
  std::size_t const slash = path.find_last_of('/');
  std::size_t const dot = path.find_last_of('.');
  bool const has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  char digits[32];
  std::snprintf(digits, sizeof digits, "_%08llu", static_cast<unsigned long long>(step));
  return has_extension ? path.substr(0, dot) + digits + path.substr(dot) : path + digits;
}

void check_finite(const sim::BodySet& state, std::uint64_t step, const SettingNames& names) {
  for (std::size_t i = 0; i < state.size(); ++i) {
    auto const& p = state.pos_mass[i];
    auto const& v = state.velocity[i];
    if (std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z) && std::isfinite(v.x) && std::isfinite(v.y) &&
        std::isfinite(v.z))
      continue;
    std::ostringstream s;
    s << "the state is no longer finite at step " << step << " (time " << state.time << "): body " << i
      << " has position (" << p.x << ", " << p.y << ", " << p.z << "), velocity (" << v.x << ", " << v.y << ", "
      << v.z << "); the steps are too long or the softening too small for this system (" << names.name("--dt")
      << ", or hermite4's " << names.name("--eta") << "; " << names.name("--softening") << ")";
    throw RuntimeFailure(s.str());
  }
}

sim::hermite::HermiteState hermite_state_of(multigpu::Simulation& sim) {
  sim::hermite::HermiteState hermite;
  if (!sim.block_steps()) return hermite;
  sim::BodySet own;
  sim.hermite_state(own, hermite);
  hermite.position.resize(own.size());
  hermite.velocity = own.velocity;
  for (std::size_t i = 0; i < own.size(); ++i) hermite.position[i] = {own.pos_mass[i].x, own.pos_mass[i].y, own.pos_mass[i].z};
  return hermite;
}

void write_checkpoint(const std::string& path, const Setup& setup, multigpu::Simulation& sim,
                      std::optional<double> initial_energy, const RunEnd& end, const OutputCadences& cadences,
                      const sim::BodySet* given) {
  std::optional<sim::BodySet> downloaded;
  if (!given) given = &downloaded.emplace(sim.state());  // every rank takes part; rank 0 writes
  sim::BodySet const& state = *given;
  // hermite4: each body at its own time and its Hermite state too, to continue bit for bit.
  sim::hermite::HermiteState const hermite = hermite_state_of(sim);
  // Every rank sees the same state and the outcome of rank 0's write: one message, a clean end.
  agree(sim.ranks(), [&] {
    check_finite(state, sim.steps_done(), setup.run.names);
    if (sim.ranks().rank() == 0)
      sim::write_checkpoint(path, state, run_record(setup, sim, initial_energy, end, cadences),
                            sim.block_steps() ? &hermite : nullptr);
  });
}

std::unique_ptr<WriterLock> lock_checkpoint(const Ranks& ranks, const std::string& path, const std::string& given) {
  std::unique_ptr<WriterLock> lock;
  agree(ranks, [&] {
    if (ranks.rank() == 0) lock = std::make_unique<WriterLock>(path, given);
  });
  return lock;
}

void write_checkpoint_once(const std::string& path, const std::string& given, const Setup& setup,
                           multigpu::Simulation& sim, std::optional<double> initial_energy) {
  std::unique_ptr<WriterLock> const lock = lock_checkpoint(sim.ranks(), path, given);
  CheckpointWrite const own(lock.get());
  write_checkpoint(path, setup, sim, initial_energy);
}

double write_snapshot(const std::string& path, const Setup& setup, multigpu::Simulation& sim, Precision precision,
                      const sim::BodySet* state, bool stopped, std::string* start_problem_of) {
  std::optional<sim::BodySet> downloaded;
  if (!state) state = &downloaded.emplace(sim.state());  // every rank takes part; rank 0 writes
  // hermite4's own steps, each body's (as a checkpoint's /Hermite/Steps), for the file's TimeStep.
  sim::hermite::HermiteState own;
  if (sim.block_steps()) {
    sim::BodySet own_times;
    sim.hermite_state(own_times, own);
  }
  agree(sim.ranks(), [&] {
    check_finite(*state, sim.steps_done(), setup.run.names);
    if (sim.ranks().rank() != 0) return;
    sim::RunRecord record = run_record(setup, sim, std::nullopt);
    record.stopped = stopped;
    sim::write_snapshot(path, *state, record, precision, own.started() ? &own.step : nullptr);
  });
  if (start_problem_of) *start_problem_of = start_problem(*state, precision == Precision::fp32);
  return sim::snapshot_coordinate_rounding(*state, precision);
}

bool saves_hdf5_snapshot(const std::string& path) {
  std::string const ext = lower_extension(path);
  return ext == ".h5" || ext == ".hdf5";
}

namespace {

// What is at a tipsy file's units path: nothing, a file (through a link too; a link to nothing counts as one, which
// its readers pass over as they would a file they cannot open), or something else (a folder, a FIFO): no parameter
// file, which its readers pass over, and which nbody cannot replace with one.
enum class ParamBeside { none, file, not_a_file };
ParamBeside param_beside(const std::string& param) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::file_type const link = fs::symlink_status(param, ec).type(), target = fs::status(param, ec).type();
  if (link == fs::file_type::not_found) return ParamBeside::none;
  return target == fs::file_type::regular || target == fs::file_type::not_found ? ParamBeside::file
                                                                                : ParamBeside::not_a_file;
}

std::optional<std::string> file_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream text;
  text << f.rdbuf();
  return text.str();
}

}  // namespace

std::string start_problem(const sim::BodySet& state, bool float32) {
  for (std::size_t i = 0; i < state.size(); ++i) {
    Real4<double> const& p = state.pos_mass[i];
    Vec3d const& v = state.velocity[i];
    double const values[7] = {p.w, p.x, p.y, p.z, v.x, v.y, v.z};
    for (int c = 0; c < 7; ++c)
      if (std::string const why =
              body_value_problem(kBodyFields[c], float32 ? double(float(values[c])) : values[c], c == 0);
          !why.empty())
        return "body " + std::to_string(i) + "'s " + why + ": the file starts no nbody run (other programs read it; " +
               "a checkpoint continues the run)";
  }
  return {};
}

TipsySaved save_tipsy(const std::string& path, const std::string& save_given, const sim::BodySet& state,
                      double softening, sim::TipsyFormat format, const sim::Units& units, const Ranks& ranks) {
  TipsySaved said;
  agree(ranks, [&] {
    if (ranks.rank() != 0) return;
    std::string const param = sim::tipsy_param_path(path);
    std::error_code ec;
    ParamBeside const beside = param_beside(param);
    bool const not_a_file = beside == ParamBeside::not_a_file, there = beside == ParamBeside::file;
    bool const ours = sim::is_nbody_tipsy_param(param);
    // The parameter file goes first, and comes back as it was where the tipsy file then cannot be written: the pair on
    // disk always states the units of the values beside it.
    std::optional<std::string> const before = ours ? file_text(param) : std::nullopt;
    // Where even that fails (the machine failing twice), the error says that the two disagree.
    auto put_back = [&](const std::string& why) {
      try {
        std::error_code gone;
        if (before)
          write_text_file(param, *before, "the tipsy file's units");
        else if (!std::filesystem::remove(param, gone) && gone)
          throw RuntimeFailure(gone.message());
      } catch (const std::exception& e) {
        throw RuntimeFailure(why + "; and " + param + " could not be put back as it was (" + e.what() + "): it " +
                             "states other units than " + path + "'s values are in");
      }
    };
    bool const states_units = units.physical() && !not_a_file && (!there || ours);
    if (states_units) {
      sim::write_tipsy_param(param, path, units);
    } else if (!units.physical() && ours && !std::filesystem::remove(param, ec)) {
      throw InputError(save_given + ": " + param + ", which states the units of the tipsy file this one replaces, " +
                       "cannot be removed (" + ec.message() + "), and its readers would take this run's values in " +
                       "them: remove it, or save under another name");
    }
    try {
      sim::write_tipsy(path, state, softening, format);
    } catch (const std::exception& e) {
      if (states_units || ours) put_back(e.what());
      throw;
    }
    if (std::string const order = sim::tipsy_order_notice(state, path); !order.empty()) said.notices.push_back(order);
    if (!units.physical()) {
      if (ours) {
        said.notices.push_back(save_given + ": " + param + ", which stated the units of the tipsy file replaced, is " +
                               "removed: this run has none (N-body units)");
      } else if (there) {
        said.warnings.push_back(save_given + ": " + param + " beside it is another program's parameter file: pynbody " +
                                "and yt will take units from it for this run's values, which have none (N-body units)");
        return;
      }
      // With its own removed too: the readers then go on to the folder's other parameter files.
      if (auto const other = sim::nearest_other_param_file(param))
        said.warnings.push_back(save_given + (other->above ? ": the folder above holds " : ": its folder holds ") +
                                other->path + ", from which pynbody " + (other->above ? "takes" : "and yt may take") +
                                " units for this run's values, which have none (N-body units)");
      return;
    }
    if (not_a_file) {
      said.warnings.push_back(save_given + ": tipsy holds no units, and " + param + ", where nbody states them (" +
                              units.describe() + ") for pynbody and yt, is not a file (a folder?): they will read " +
                              "this run's values without units (rename it for the next save, or save to a name " +
                              "ending in .h5, which holds its units itself)");
      return;
    }
    if (!states_units) {
      said.warnings.push_back(save_given + ": tipsy holds no units, and " + param + ", where nbody states them (" +
                              units.describe() + ") for pynbody and yt, is another program's file, which is kept: " +
                              "they will take their units from it; a save named .h5 holds its units itself");
      return;
    }
    said.notices.push_back(save_given + ": tipsy holds no units; " + param + " beside it states this run's (" +
                           units.describe() + ") for pynbody and yt");
    if (std::string const other = sim::other_param_file(param); !other.empty())
      said.warnings.push_back(save_given + ": its folder holds " + other + " beside " + param + ": pynbody may take " +
                              "either file's units, and yt neither unless told (pynbody.load's paramfile, yt.load's " +
                              "parameter_file)");
  });
  // What rank 0 found, said on every rank: a front end that makes a warning an error (Python's filter) then stops every
  // rank alike, none going on alone to a collective call.
  if (ranks.size() > 1) {
    auto pack = [](const std::vector<std::string>& texts) {
      std::string packed;
      for (std::string const& t : texts) packed += t + '\x1e';
      return packed;
    };
    auto unpack = [](const std::string& packed) {
      std::vector<std::string> texts;
      std::size_t from = 0;
      for (std::size_t at; (at = packed.find('\x1e', from)) != std::string::npos; from = at + 1)
        texts.push_back(packed.substr(from, at - from));
      return texts;
    };
    std::string const rank0 = ranks.all_gather(pack(said.notices) + '\x1d' + pack(said.warnings)).front();
    std::size_t const split = rank0.find('\x1d');
    said.notices = unpack(rank0.substr(0, split));
    said.warnings = unpack(rank0.substr(split + 1));
  }
  // The state is every rank's: the file holds it in float32, which is what its next reader takes.
  if (std::string const why = start_problem(state, true); !why.empty())
    said.warnings.push_back(save_given + ": " + why);
  return said;
}

void check_outputs_spare_tipsy_units(const std::string& save,
                                     const std::vector<std::pair<std::string, std::string>>& outputs,
                                     const SettingNames& names) {
  if (save.empty() || saves_hdf5_snapshot(save)) return;
  std::string const param = sim::tipsy_param_path(save);
  for (auto const& [option, path] : outputs) {
    if (path.empty() || option == names.name("--save")) continue;
    try {
      check_distinct_outputs({{names.name("--save"), param}, {option, path}});
    } catch (const InputError&) {
      throw InputError(names.with_text(option, path) + ": " + names.with_text("--save", save) + " states its units in " +
                       param + " beside it; give " + option + " another file");
    }
  }
}

void check_tipsy_save(const std::string& path, const std::string& save_given, const sim::Units& units) {
  if (path.empty() || saves_hdf5_snapshot(path) || !units.physical()) return;
  std::string const param = sim::tipsy_param_path(path);
  if (std::string const problem = name_length_problem(param); !problem.empty())
    throw InputError(save_given + ": its units go to " + param + " beside it, which cannot be written: " + problem);
  ParamBeside const beside = param_beside(param);
  if (beside == ParamBeside::not_a_file) {
    std::string what = output_path_problem(param);  // what is there: "is a directory", "is a FIFO", ...
    what = what.substr(0, what.find(';'));          // (not its advice for an output of that name)
    throw InputError(save_given + ": its units go to " + param + " beside it, which " +
                     (what.empty() ? std::string("is not a regular file") : what) +
                     ": rename it, or save to a name ending in .h5, which holds its units itself");
  }
  if (beside == ParamBeside::file && !sim::is_nbody_tipsy_param(param)) return;  // another program's: kept, warned of
  if (std::string const problem = output_path_problem(param); !problem.empty())
    throw InputError(save_given + ": its units go to " + param + " beside it, which cannot be written: " + problem);
}

void refuse_param_name(const std::string& path, const std::string& given, const char* what, const char* instead) {
  if (lower_extension(path) == ".param")
    throw InputError(given + ": " + what + " named .param, which pynbody and yt would read as a parameter file " +
                     "(they take every *.param of its folder for one); name it otherwise (" + instead + ", say)");
}

namespace {

struct NamedFormat {
  const char* ending;
  const char* names;  // what a reader takes a file of this ending for
};

// Endings of the formats nbody does not write: a save or checkpoint named so would be read as what it is not.
constexpr NamedFormat kOtherFormats[] = {
    {".csv", "a CSV table"},      {".tsv", "a tab-separated table"}, {".txt", "a text file"},
    {".json", "a JSON file"},     {".jsonl", "JSON lines"},     {".yaml", "a YAML file"},
    {".npy", "a NumPy array"},    {".npz", "NumPy arrays"},     {".fits", "a FITS file"},
    {".png", "an image"},         {".mp4", "a video"},          {".gz", "a gzip archive"},
    {".zip", "a zip archive"},    {".tar", "a tar archive"},    {".pkl", "a Python pickle"}};
// HDF endings other than the two nbody writes HDF5 snapshots to.
constexpr NamedFormat kOtherHdf[] = {{".hdf", "an HDF file"},       {".hdf4", "an HDF4 file"}, {".h4", "an HDF4 file"},
                                     {".he5", "an HDF-EOS5 file"}, {".nc", "a netCDF file"}};
constexpr NamedFormat kTipsy[] = {{".bin", "a tipsy file"}, {".tipsy", "a tipsy file"}, {".std", "a tipsy file"}};

template <std::size_t N>
const NamedFormat* named_format(const std::string& ext, const NamedFormat (&formats)[N]) {
  for (NamedFormat const& f : formats)
    if (ext == f.ending) return &f;
  return nullptr;
}

// `path` without its ending, and `ending` in its place.
std::string renamed(const std::string& path, const std::string& ext, const char* ending) {
  return path.substr(0, path.size() - ext.size()) + ending;
}

}  // namespace

void check_report_name(const std::string& path, const std::string& given, bool json) {
  std::string const ext = lower_extension(path);
  const char* const instead = json ? ".json" : ".csv";
  auto refuse = [&](const char* names) {
    // run.json.gz: the name without its last ending is the one to give (not run.json.json).
    std::string const stem = path.substr(0, path.size() - ext.size());
    std::string const better = lower_extension(stem) == instead ? stem : renamed(path, ext, instead);
    throw InputError(given + ": " + (json ? "the report is a JSON document" : "the table is CSV") + ", and " + ext +
                     " names " + names + "; name it " + better +
                     (json ? (ext == ".csv" || ext == ".tsv" ? " (--csv writes the table)" : "")
                           : (ext == ".json" ? " (--json writes the JSON report)" : "")));
  };
  if (ext == (json ? ".json" : ".csv") || ext == ".txt") return;  // a text file either way
  if (ext == ".h5" || ext == ".hdf5") refuse("an HDF5 file");
  if (const NamedFormat* other = named_format(ext, kOtherFormats)) refuse(other->names);
  if (const NamedFormat* other = named_format(ext, kOtherHdf)) refuse(other->names);
  if (const NamedFormat* tipsy = named_format(ext, kTipsy)) refuse(tipsy->names);
}

void check_checkpoint_name(const std::string& path, const std::string& given) {
  refuse_param_name(path, given, "an HDF5 checkpoint", "run.h5");
  // A checkpoint already there under such a name (an older nbody's, a job script's) is continued in place as before.
  if (sim::is_nbody_checkpoint(path)) return;
  std::string const ext = lower_extension(path);
  if (const NamedFormat* tipsy = named_format(ext, kTipsy))
    throw InputError(given + ": a checkpoint is an HDF5 file, and " + ext + " names " + tipsy->names + "; name it " +
                     renamed(path, ext, ".h5") + " (a save writes tipsy files)");
  if (const NamedFormat* other = named_format(ext, kOtherFormats))
    throw InputError(given + ": a checkpoint is an HDF5 file, and " + ext + " names " + other->names + "; name it " +
                     renamed(path, ext, ".h5"));
}

void check_snapshots_name(const std::string& base, const std::string& given) {
  std::string const ext = lower_extension(base);
  const NamedFormat* other = named_format(ext, kTipsy);
  if (!other) other = named_format(ext, kOtherFormats);
  if (!other) other = named_format(ext, kOtherHdf);
  if (!other) return;
  std::string const stem = base.substr(0, base.size() - ext.size());
  throw InputError(given + ": snapshots are HDF5 files named after BASE and their step (" + stem +
                   "_00000100.hdf5), and " + ext + " names " + other->names + "; give " + stem + " or " + stem +
                   ".h5 (" + stem + "_00000100.h5)");
}

void check_save(const std::string& path, const std::string& save_given, const std::string& format_given) {
  refuse_param_name(path, save_given, "a tipsy file", "run.bin");
  std::string const ext = lower_extension(path);
  if (const NamedFormat* other = named_format(ext, kOtherHdf))
    throw InputError(save_given + ": " + ext + " names " + other->names + ", and only names ending in .h5 or .hdf5 " +
                     "are HDF5 snapshots (any other is a tipsy file); name it " + renamed(path, ext, ".h5") +
                     " for an HDF5 snapshot, or " + renamed(path, ext, ".bin") + " for tipsy");
  if (const NamedFormat* other = named_format(ext, kOtherFormats))
    throw InputError(save_given + ": " + ext + " names " + other->names + ", and this would be a tipsy file " +
                     "(binary); name it " + renamed(path, ext, ".h5") + " for an HDF5 snapshot, or " +
                     renamed(path, ext, ".bin") + " for tipsy");
  if (!saves_hdf5_snapshot(path)) return;
  std::string const what = save_given + " is an HDF5 snapshot (its name ends in " + path.substr(path.rfind('.')) + ")";
  if (!sim::checkpoints_built())
    throw InputError(what + ", which needs HDF5, and this nbody was built without it; name a tipsy file (any other "
                            "ending), or rebuild with libhdf5-dev");
  if (!format_given.empty())
    throw InputError(format_given + ": a tipsy file's byte order, and " + what +
                     "; leave the format out, or name a tipsy file (any other ending)");
}

namespace {

// "out/snap" -> ("out/snap_", ".hdf5"); "out/snap.h5" -> ("out/snap_", ".h5").
std::pair<std::string, std::string> snapshot_name(const std::string& base) {
  for (const char* ending : {".hdf5", ".h5"}) {
    std::string const e = ending;
    if (base.size() > e.size() && base.compare(base.size() - e.size(), e.size(), e) == 0 &&
        base[base.size() - e.size() - 1] != '/')
      return {base.substr(0, base.size() - e.size()) + "_", e};
  }
  return {base + "_", ".hdf5"};
}

// Looking at every name of a long series would cost more than the run's start; beyond this many,
// the names that exist are found by reading the folder instead.
constexpr std::uint64_t kSeriesNamesChecked = 10000;

// Where a series' file name holds its step: "out/run_00000100.h5" is "out/run_", the digits, ".h5".
// Found from the series' own naming, so the two cannot disagree.
struct SeriesName {
  std::string prefix, suffix;  // file names only, without the folder
};

SeriesName series_name(const std::function<std::string(std::uint64_t)>& path_of) {
  namespace fs = std::filesystem;
  std::string const zeros = fs::path(path_of(0)).filename().string();
  std::string const ones = fs::path(path_of(11111111)).filename().string();
  std::size_t start = 0;
  while (start < zeros.size() && zeros[start] == ones[start]) ++start;
  return {zeros.substr(0, start), zeros.substr(std::min(zeros.size(), start + 8))};
}

// The step a file name of the series stands for, if it is one.
std::optional<std::uint64_t> series_step(const std::function<std::string(std::uint64_t)>& path_of,
                                         const SeriesName& n, const std::string& file) {
  if (file.size() <= n.prefix.size() + n.suffix.size() || file.compare(0, n.prefix.size(), n.prefix) != 0 ||
      file.compare(file.size() - n.suffix.size(), n.suffix.size(), n.suffix) != 0)
    return std::nullopt;
  std::string const digits = file.substr(n.prefix.size(), file.size() - n.prefix.size() - n.suffix.size());
  if (digits.size() > 19 || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  std::uint64_t const step = std::stoull(digits);
  if (std::filesystem::path(path_of(step)).filename().string() != file) return std::nullopt;  // "_0100"
  return step;
}

// The steps of the series' files that their folder holds (regular files only where `regular`), in folder order.
std::vector<std::uint64_t> series_steps_in_folder(const std::function<std::string(std::uint64_t)>& path_of,
                                                  bool regular) {
  namespace fs = std::filesystem;
  SeriesName const name = series_name(path_of);
  fs::path const folder = fs::path(path_of(0)).parent_path();  // every name of the series shares it
  std::vector<std::uint64_t> steps;
  std::error_code ec;
  for (fs::directory_iterator it(folder.empty() ? fs::path(".") : folder, ec), end; !ec && it != end; it.increment(ec)) {
    auto const step = series_step(path_of, name, it->path().filename().string());
    std::error_code type_ec;
    if (step && (!regular || it->is_regular_file(type_ec))) steps.push_back(*step);
  }
  return steps;
}

}  // namespace

void check_outputs_spare_inputs(const RunConfig& run, const std::vector<std::pair<std::string, std::string>>& outputs,
                                const std::string& checkpoint_option, const std::string& save_option,
                                const SnapshotSeries* snapshots, const std::string& option) {
  std::string const& loaded = run.initial.snapshot;
  bool const hdf5 = !loaded.empty() && sim::is_nbody_snapshot(loaded);
  check_outputs_spare_input(outputs, run.names.name("--restart"), run.initial.checkpoint, checkpoint_option);
  // The save replaces the file loaded only with a file of its kind.
  std::string const saved = [&] {
    for (auto const& [name, path] : outputs)
      if (name == save_option) return path;
    return std::string();
  }();
  // A file that holds what nbody does not keep (a tipsy file's gas temperatures, each body's own eps; another
  // program's snapshot), as the setup that read it found: a save over it would lose that. (Before the setup, when
  // the front end checks its outputs first, nothing is known of it yet: the setup's check says it.)
  std::error_code same_ec;
  if (!run.initial.unkept.empty() && !saved.empty() && std::filesystem::equivalent(loaded, saved, same_ec))
    throw InputError(save_option + " " + saved + ": the " + run.names.name("--load") + " file, which holds what " +
                     "nbody does not keep (" + run.initial.unkept + "): a save over it would lose that; give " +
                     save_option + " another file");
  check_outputs_spare_input(outputs, run.names.name("--load"), loaded,
                            hdf5 == saves_hdf5_snapshot(saved) ? save_option : "");
  if (!hdf5 || !snapshots || !snapshots->enabled()) return;
  // Is the snapshot loaded a file of the series (its name one of the series', and the same file)?
  auto const path_of = [&](std::uint64_t step) { return snapshots->path(step); };
  std::optional<std::uint64_t> const step =
      series_step(path_of, series_name(path_of), std::filesystem::path(loaded).filename().string());
  std::error_code ec;
  if (step && std::filesystem::equivalent(path_of(*step), loaded, ec))
    throw InputError(run.names.with_text(option, snapshots->base) + ": a file of this series would replace " +
                     loaded + ", the " + run.names.name("--load") + " file the run starts from; name another series");
}

std::string snapshot_base_with_other_ending(const std::string& base) {
  auto const [prefix, ending] = snapshot_name(base);
  return prefix.substr(0, prefix.size() - 1) + (ending == ".hdf5" ? ".h5" : ".hdf5");
}

std::string SnapshotSeries::path(std::uint64_t step) const {
  auto const [prefix, suffix] = snapshot_name(base);
  char digits[32];
  std::snprintf(digits, sizeof digits, "%08llu", static_cast<unsigned long long>(step));
  return prefix + digits + suffix;
}

void check_step_series(const std::function<std::string(std::uint64_t)>& path_of, std::uint64_t every,
                       std::uint64_t first, std::uint64_t last, const std::vector<std::uint64_t>& also,
                       const std::string& what, const std::vector<std::pair<std::string, std::string>>& others) {
  namespace fs = std::filesystem;
  auto due = [&](std::uint64_t step) {
    return (every && step > first && step <= last && step % every == 0) ||
           std::find(also.begin(), also.end(), step) != also.end();
  };
  std::vector<std::uint64_t> steps = also;
  std::uint64_t const first_due = every ? (first / every + 1) * every : 0;
  std::uint64_t const count = every && last >= first_due ? (last - first_due) / every + 1 : 0;
  SeriesName const name = series_name(path_of);
  if (count <= kSeriesNamesChecked) {
    for (std::uint64_t k = 0; k < count; ++k) steps.push_back(first_due + k * every);
  } else {
    // The first and the last: the last has the longest name (a step past 99,999,999 has more digits).
    steps.push_back(first_due);
    steps.push_back(last / every * every);
    for (std::uint64_t step : series_steps_in_folder(path_of, false))
      if (due(step)) steps.push_back(step);
  }
  for (std::uint64_t step : steps) check_output_path(path_of(step), what);
  // Another output named like a file of the series would be replaced by it, or replace it.
  for (auto const& [option, path] : others) {
    if (path.empty()) continue;
    auto const step = series_step(path_of, name, fs::path(path).filename().string());
    if (step && due(*step)) check_distinct_outputs({{what, path_of(*step)}, {option, path}});
  }
}

std::vector<std::string> series_temporary_files(const std::function<std::string(std::uint64_t)>& path_of) {
  SeriesName const name = series_name(path_of);
  return temporary_files_in(std::filesystem::path(path_of(0)).parent_path().string(),
                            [&](const std::string& file) { return series_step(path_of, name, file).has_value(); });
}

std::vector<std::string> series_files_after(const std::function<std::string(std::uint64_t)>& path_of,
                                            std::uint64_t first) {
  std::vector<std::uint64_t> steps = series_steps_in_folder(path_of, true);
  steps.erase(std::remove_if(steps.begin(), steps.end(), [&](std::uint64_t step) { return step <= first; }),
              steps.end());
  std::sort(steps.begin(), steps.end());
  std::vector<std::string> paths;
  for (std::uint64_t step : steps) paths.push_back(path_of(step));
  return paths;
}

std::vector<std::uint64_t> series_steps_within(const std::function<std::string(std::uint64_t)>& path_of,
                                               std::uint64_t first, std::uint64_t last) {
  std::vector<std::uint64_t> steps = series_steps_in_folder(path_of, true);
  steps.erase(std::remove_if(steps.begin(), steps.end(), [&](std::uint64_t step) { return step < first || step > last; }),
              steps.end());
  std::sort(steps.begin(), steps.end());
  return steps;
}

std::optional<std::uint64_t> series_latest_through(const std::function<std::string(std::uint64_t)>& path_of,
                                                   std::uint64_t last) {
  std::optional<std::uint64_t> latest;
  for (std::uint64_t step : series_steps_in_folder(path_of, true))
    if (step <= last && (!latest || step > *latest)) latest = step;
  return latest;
}

std::string series_lock_name(const std::function<std::string(std::uint64_t)>& path_of) {
  // The name core/atomic_file.h gives any file of the series, so that an output named as one of them (another run's
  // --save c_00000100.h5) finds the lock the series' writer holds.
  std::string const first = path_of(0);
  return series_lock_name_of(first).value_or(first);
}

std::vector<WrittenSeries> written_series(const SnapshotSeries& snapshots, const std::string& checkpoint,
                                          std::uint64_t every, double dt, const SettingNames& names) {
  std::vector<WrittenSeries> series;
  if (snapshots.enabled())
    series.push_back({[snapshots](std::uint64_t k) { return snapshots.path(k); },
                      names.with_text("--snapshots", snapshots.base)});
  if (!checkpoint.empty() && (every || dt > 0))
    series.push_back({[checkpoint](std::uint64_t k) { return series_path(checkpoint, k); },
                      names.with_text("--checkpoint", checkpoint) + "'s periodic checkpoints"});
  return series;
}

}  // namespace nbody::driver
