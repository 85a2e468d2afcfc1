// python/bindings.cpp - nbody._nbody: the Python module's native half. It only translates: Python
// values into the driver's typed configuration (driver::RunConfig, with the command line's names
// from core/enum_names.h and bounds from core/bounds.h), calls into the same libraries the command
// line uses (driver::make_setup, multigpu::Simulation, driver/steering.h, the checkpoint and tipsy
// writers), and results back into NumPy arrays and dicts. python/nbody/__init__.py is the public face.
#include <Python.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/atomic_file.h"
#include "core/bounds.h"
#include "core/clock.h"
#include "core/version.h"
#include "core/enum_names.h"
#include "core/errors.h"
#include "core/interrupt.h"
#include "core/output_path.h"
#include "core/ranks.h"
#include "driver/benchmark.h"
#include "driver/checkpoints.h"
#include "driver/config.h"
#include "driver/course.h"
#include "driver/run.h"
#include "driver/setup.h"
#include "driver/steering.h"
#include "gpu/devices.h"
#include "mpi/mpi_ranks.h"
#include "multigpu/simulation.h"
#include "sim/io/checkpoint.h"
#include "sim/io/tipsy.h"
#include "sim/physics/diagnostics.h"
#include "sim/physics/scenarios.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace nbody::python {
namespace {

// The command line's limits on counts it shares with Python (app/options.cpp).
constexpr long long kMaxThreads = 1024;
constexpr double kMaxWeight = 1e12;
// Steps between two looks at Python's signals, in wall time: Ctrl-C is answered within about this
// long, or one step where a step takes longer; short enough to feel immediate, long enough that the
// look (taking the GIL) costs nothing measurable.
constexpr double kSignalCheckSeconds = 0.05;

// A value as a message quotes it: a NumPy scalar as the Python number it holds (NumPy 2 writes np.float64(0.1)).
std::string shown(nb::handle value) {
  nb::object v = nb::borrow(value);
  if (nb::hasattr(v, "dtype") && nb::hasattr(v, "ndim") && nb::hasattr(v, "item") && nb::cast<int>(v.attr("ndim")) == 0)
    v = v.attr("item")();
  return nb::cast<std::string>(nb::repr(v));
}

// JSON text as Python's objects (dicts, lists, numbers, None), as json.loads reads it.
nb::object from_json(const std::string& text) { return nb::module_::import_("json").attr("loads")(text); }

[[noreturn]] void type_error(const std::string& key, const std::string& expected, nb::handle value) {
  throw nb::type_error((key + ": expected " + expected + ", got " + shown(value) + " (" +
                        nb::cast<std::string>(nb::type_name(value.type())) + ")")
                           .c_str());
}

// A whole number (a Python int or a NumPy integer; not a bool) within [min, max].
long long whole(nb::handle value, const std::string& key, long long min, long long max) {
  if (PyBool_Check(value.ptr()) || !PyIndex_Check(value.ptr())) type_error(key, "a whole number", value);
  int overflow = 0;
  nb::object index = nb::steal(PyNumber_Index(value.ptr()));
  if (!index.is_valid()) throw nb::python_error();
  long long const v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0 || v < min || v > max)
    throw InputError(key + "=" + shown(value) + ": must be a whole number from " + std::to_string(min) + " to " +
                     std::to_string(max));
  return v;
}

// A real number (int, float, NumPy scalar; not a bool).
double real(nb::handle value, const std::string& key) {
  if (PyBool_Check(value.ptr()) || !(PyFloat_Check(value.ptr()) || PyIndex_Check(value.ptr()) ||
                                     PyObject_HasAttrString(value.ptr(), "__float__")))
    type_error(key, "a number", value);
  double const v = PyFloat_AsDouble(value.ptr());
  if (v == -1.0 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw nb::python_error();  // an int past a double's range, say
    PyErr_Clear();  // an array of one or more values (np.array([0.01])): not a number
    type_error(key, "a number", value);
  }
  return v;
}

// One of E's names, as the command line takes them ("precision='fp16': valid: fp32, fp64").
template <class E>
E named(nb::handle value, const std::string& key) {
  if (!nb::isinstance<nb::str>(value)) type_error(key, "a name (" + valid_names<E>() + ")", value);
  std::string const text = nb::cast<std::string>(value);
  auto const e = from_name<E>(text);
  if (!e) throw InputError(key + "='" + text + "': valid: " + valid_names<E>());
  return *e;
}

std::vector<nb::handle> items(nb::handle value, const std::string& key, const char* expected) {
  if (nb::isinstance<nb::str>(value) || !PySequence_Check(value.ptr())) type_error(key, expected, value);
  std::vector<nb::handle> out;
  for (nb::handle item : value) out.push_back(item);
  if (out.empty()) throw InputError(key + "=" + shown(value) + ": the list is empty");
  return out;
}

// The settings a simulation is made with (scenario and count only at the start); each name is the
// keyword of nbody.Simulation, its meaning the command line's option of the same name.
const char* const kStartKeys[] = {"scenario", "n", "seed", "eccentricity"};
const char* const kSettingKeys[] = {"integrator", "dt",       "damping", "softening", "precision",  "backend",
                                    "numgpus",    "gpus",     "weights", "threading", "launch",     "exchange",
                                    "kernel",     "block_size", "fp64_rsqrt", "threads",    "mass_unit",  "length_unit",
                                    "eta",        "eta_start",  "dt_max"};

bool is_one_of(const std::string& key, const char* const* begin, const char* const* end) {
  return std::find_if(begin, end, [&](const char* k) { return key == k; }) != end;
}

// Fills `run` from `options` (keyword -> value; None: the default, or unchanged). `start`: the
// scenario keys are allowed too. `restart`: the integrator is the checkpoint's unless `options` names one, so what
// depends on it is checked once the file is read (driver::make_setup). dt and dt_max may be text with a unit
// ("1kyr"), taken in the units `options` names, else `units_now` (a running simulation's), else those of the file
// `run` starts from (set before this call).
void apply_options(driver::RunConfig& run, const nb::dict& options, bool start, bool restart = false,
                   const sim::Units* units_now = nullptr) {
  run.names.keywords = true;  // the library's messages name settings as this module's keywords
  driver::InitialConditions& ic = run.initial;
  driver::PhysicsChoice& physics = run.physics;
  driver::DeviceChoice& dev = run.devices;
  std::optional<long long> numgpus;
  std::optional<std::vector<int>> gpus;
  std::optional<std::string> mass_unit, length_unit;
  std::string softening_shown, eccentricity_shown, seed_shown;
  std::vector<std::pair<std::string, std::string>> times_in_units;  // dt or dt_max, and the text given
  for (auto [k, value] : options) {
    std::string const key = nb::cast<std::string>(k);
    bool const start_key = is_one_of(key, std::begin(kStartKeys), std::end(kStartKeys));
    if (!start_key && !is_one_of(key, std::begin(kSettingKeys), std::end(kSettingKeys)))
      throw nb::type_error(("unexpected keyword argument '" + key + "'").c_str());  // the package names the one meant
    if (start_key && !start)
      throw nb::type_error(("'" + key + "' is where a simulation starts; it cannot change while it runs").c_str());
    if (value.is_none()) continue;
    if ((key == "dt" || key == "dt_max") && nb::isinstance<nb::str>(value)) {
      std::string const text = nb::cast<std::string>(value);
      if (!sim::physical_time(text))
        throw InputError(key + "=" + shown(value) + ": not a time; give a number in the simulation's units, or text " +
                         "with a unit (" + sim::kTimeUnitNames + "), e.g. '1kyr'");
      times_in_units.emplace_back(key, text);
      continue;
    }
    if (key == "scenario") ic.scenario = named<sim::Scenario>(value, key);
    else if (key == "n") ic.bodies = std::size_t(whole(value, key, 1, (long long)kMaxBodies));
    else if (key == "seed") {
      ic.seed = std::uint64_t(whole(value, key, 0, std::numeric_limits<long long>::max()));
      seed_shown = shown(value);
    }
    else if (key == "eccentricity") {
      double const e = real(value, key);
      if (!(e >= 0 && e < 1)) throw InputError("eccentricity=" + shown(value) + ": must be a number in [0, 1)");
      ic.eccentricity = e;
      eccentricity_shown = shown(value);
    } else if (key == "integrator") {
      sim::Integrator const integrator = named<sim::Integrator>(value, key);
      // A switch to or from hermite4 (which has no dt: its step is dt_max's) takes the new integrator's default step
      // unless dt is named; between the integrators of one fixed step the step stays, as a restart's does on the
      // command line.
      bool const dt_named = options.contains("dt") && !options["dt"].is_none();
      bool const blocks_change =
          (integrator == sim::Integrator::hermite4) != (physics.integrator == sim::Integrator::hermite4);
      if (blocks_change && !dt_named) physics.dt = 0.0;
      physics.integrator = integrator;
      run.given.integrator = true;
    } else if (key == "dt") {
      run.names.typed.erase("--dt");
      double const dt = real(value, key);
      if (auto const why = dt_problem(dt); !why.empty()) throw InputError("dt=" + shown(value) + ": " + why);
      physics.dt = dt;
      run.given.dt = true;
    } else if (key == "damping") {
      double const d = real(value, key);
      if (auto const why = damping_problem(d); !why.empty()) throw InputError("damping=" + shown(value) + ": " + why);
      physics.damping = d;
      run.given.damping = true;
    } else if (key == "softening") {
      double const s = real(value, key);
      // The precision's own lower bound is checked with the device choice (driver::resolve_devices).
      if (!(std::isfinite(s) && s >= 0 && s <= kMaxSoftening))
        throw InputError("softening=" + shown(value) +
                         ": must be a positive length of at most 1e12 (or 0, no softening, with integrator='hermite4')");
      physics.softening = s;
      run.given.softening = true;
      softening_shown = shown(value);
    } else if (key == "precision") {
      dev.engine.precision = named<Precision>(value, key);
      run.given.precision = true;
    } else if (key == "backend") dev.backend = named<driver::BackendChoice>(value, key);
    else if (key == "numgpus") numgpus = whole(value, key, 1, kMaxDevices);
    else if (key == "gpus") {
      std::vector<int> list;
      for (nb::handle g : items(value, key, "a list of GPU numbers"))
        list.push_back(int(whole(g, key, 0, std::numeric_limits<int>::max())));
      gpus = list;
    } else if (key == "weights") {
      dev.weights.clear();
      for (nb::handle w : items(value, key, "a list of relative shares")) {
        double const v = real(w, key);
        if (!(std::isfinite(v) && v > 0 && v <= kMaxWeight))
          throw InputError("weights=" + shown(value) + ": " + shown(w) + " is not a relative share in (0, 1e+12]");
        dev.weights.push_back(v);
      }
    } else if (key == "threading") dev.threading = named<multigpu::Threading>(value, key);
    else if (key == "launch") dev.launch = named<multigpu::Launch>(value, key);
    else if (key == "exchange") dev.exchange = named<multigpu::ExchangeMode>(value, key);
    else if (key == "kernel") dev.engine.kernel = named<sim::Kernel>(value, key);
    else if (key == "block_size") dev.engine.block_size = int(whole(value, key, 1, 1024));
    else if (key == "fp64_rsqrt") dev.engine.fp64_rsqrt = named<sim::Fp64Rsqrt>(value, key);
    else if (key == "threads") dev.engine.cpu_threads = int(whole(value, key, 1, kMaxThreads));
    else if (key == "eta" || key == "eta_start" || key == "dt_max") {
      // hermite4's, with the command line's bounds (core/bounds.h) and the keyword's name in the message.
      if (key == "dt_max") run.names.typed.erase("--dt-max");
      double const v = real(value, key);
      std::string why = key == "dt_max" ? dt_max_problem(v) : eta_problem(v);
      if (!why.empty()) throw InputError(key + "=" + shown(value) + why.substr(why.find(':')));
      if (key == "eta") physics.hermite.eta = v, run.given.eta = true;
      else if (key == "eta_start") physics.hermite.eta_start = v, run.given.eta_start = true;
      else physics.hermite.dt_max = v, run.given.dt_max = true;
    } else if (key == "mass_unit" || key == "length_unit") {
      if (!nb::isinstance<nb::str>(value))
        type_error(key, key == "mass_unit" ? "a mass and a unit (e.g. '1e5Msun')" : "a length and a unit (e.g. '1pc')",
                   value);
      std::string const text = nb::cast<std::string>(value);
      // Empty is refused as itself, not taken for a unit not given (which blamed the other one).
      if (text.find_first_not_of(' ') == std::string::npos)
        throw InputError(key + "=" + shown(value) + ": the unit is empty; give e.g. " +
                         (key == "mass_unit" ? "'1e5Msun'" : "'1pc'"));
      (key == "mass_unit" ? mass_unit : length_unit) = text;
    }
  }
  if (run.given.softening && physics.softening == 0.0 && physics.integrator != sim::Integrator::hermite4 &&
      (!restart || run.given.integrator)) {
    // A softening of 0 this call did not name is hermite4's, kept from before: the integrator named is what is new.
    if (softening_shown.empty() && options.contains("integrator"))
      throw InputError("integrator='" + name_of(physics.integrator) + "': the softening is 0 (hermite4's none), which " +
                       name_of(physics.integrator) + " cannot take; give softening= too (e.g. 0.01)");
    throw InputError("softening=" + (softening_shown.empty() ? std::string("0") : softening_shown) +
                     ": must be a positive length of at most 1e12; 0 (no "
                     "softening) only with integrator='hermite4'");
  }
  if (!eccentricity_shown.empty() && ic.scenario != sim::Scenario::two_body)
    throw InputError("eccentricity=" + eccentricity_shown + ": applies to scenario='two-body' only (this one's is '" +
                     name_of(ic.scenario) + "')");
  // two-body places its two bodies: a seed would draw nothing.
  if (!seed_shown.empty() && ic.scenario == sim::Scenario::two_body)
    throw InputError("seed=" + seed_shown + " does nothing with scenario='two-body': its two bodies are placed, not " +
                     "drawn; leave seed out");
  // The files' units, as --mass-unit and --length-unit (both or neither; the run stays G = 1).
  if (mass_unit || length_unit) {
    run.units = sim::parse_units(mass_unit.value_or(""), length_unit.value_or(""), run.names);
    run.given.units = run.units.physical();
  }
  if (!times_in_units.empty()) {
    sim::Units const units = mass_unit || length_unit || !units_now ? driver::units_of_start(run) : *units_now;
    for (auto const& [key, text] : times_in_units) {
      double const v = driver::typed_time(key == "dt" ? "--dt" : "--dt-max", text, units, run.names);
      if (key == "dt") physics.dt = v, run.given.dt = true;
      else physics.hermite.dt_max = v, run.given.dt_max = true;
      run.names.typed[key == "dt" ? "--dt" : "--dt-max"] = text;
    }
  }
  if (numgpus && gpus && std::size_t(*numgpus) != gpus->size())
    throw InputError("numgpus=" + std::to_string(*numgpus) + " and gpus with " + std::to_string(gpus->size()) +
                     " GPUs disagree; give one of them");
  if (gpus) {
    dev.gpus = *gpus;
    dev.count = int(gpus->size());
  } else if (numgpus) {
    dev.gpus.clear();
    dev.count = int(*numgpus);
  }
}

// A NumPy array that owns `values` (rows x cols, or a vector when cols is 0).
template <class T>
nb::ndarray<nb::numpy, T> to_numpy(std::vector<T> values, std::size_t rows, std::size_t cols) {
  auto* heap = new std::vector<T>(std::move(values));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  if (cols == 0) return nb::ndarray<nb::numpy, T>(heap->data(), {rows}, owner);
  return nb::ndarray<nb::numpy, T>(heap->data(), {rows, cols}, owner);
}

nb::ndarray<nb::numpy, double> vec3(const Vec3d& v) { return to_numpy<double>({v.x, v.y, v.z}, 3, 0); }

// Runs `work` (which touches nothing of Python's: no object, no reference count) on a thread of its own while this
// one, which holds the GIL, looks at Python's signals every kSignalCheckSeconds, and raises Ctrl-C (or a signal a
// script made a KeyboardInterrupt) once the work has given up. Python's signal handlers only set a flag that this
// thread must look at, so a long call made here directly would answer Ctrl-C only once it ended. The work is asked
// to give up through `cancel` where given (a flag of its own, which no other thread's work reads: a start), else
// through the process's interrupt (request_interrupt, which the engines' passes and the steps look for). `alone`:
// with several ranks the work runs here, the GIL released, as a collective call (one rank giving up alone would
// leave the others waiting).
template <class F>
auto watching_signals(F&& work, bool alone, std::atomic<bool>* cancel = nullptr) -> decltype(work()) {
  if (!alone) {
    nb::gil_scoped_release unlocked;
    return work();
  }
  if (!cancel) clear_interrupt();
  auto result = std::async(std::launch::async, std::forward<F>(work));
  std::optional<nb::python_error> interrupt;
  for (;;) {
    bool ready = false;
    {
      nb::gil_scoped_release unlocked;
      ready = result.wait_for(std::chrono::duration<double>(kSignalCheckSeconds)) == std::future_status::ready;
    }
    if (ready) break;
    if (!interrupt && PyErr_CheckSignals() != 0) {
      interrupt.emplace();  // the KeyboardInterrupt, raised once the work has given up
      if (cancel)
        cancel->store(true);
      else
        request_interrupt();
    }
  }
  try {
    auto value = result.get();
    if (!cancel) clear_interrupt();
    if (!interrupt) return value;
  } catch (...) {
    if (!cancel) clear_interrupt();
    if (!interrupt) throw;  // the work's own failure
  }
  interrupt->restore();  // what the work made or failed at (having given up) is dropped for the KeyboardInterrupt
  throw nb::python_error();
}

// An (n, 3) array of row(i) for each body i: a copy.
template <class Row>
nb::ndarray<nb::numpy, double> rows3(std::size_t n, Row row) {
  std::vector<double> v(3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    Vec3d const r = row(i);
    v[3 * i] = r.x, v[3 * i + 1] = r.y, v[3 * i + 2] = r.z;
  }
  return to_numpy(std::move(v), n, 3);
}

// The ranks a simulation spans: those of the caller's MPI communicator (`comm`, its MPI_Comm as an
// integer; python/nbody/__init__.py takes it from mpi4py), or null for world(), which is this
// process alone: the module never starts MPI itself (mpi4py does).
std::unique_ptr<Ranks> ranks_for(const std::optional<std::uintptr_t>& comm) {
  if (!comm) return nullptr;
  nb::gil_scoped_release unlocked;  // collective: the other ranks may arrive later
  return mpi::ranks_for_handle(*comm);
}

const Ranks& spanned(const std::unique_ptr<Ranks>& ranks) { return ranks ? *ranks : world(); }

using Rows3 = nb::ndarray<const double, nb::shape<-1, 3>, nb::c_contig, nb::device::cpu>;
using Column = nb::ndarray<const double, nb::shape<-1>, nb::c_contig, nb::device::cpu>;

// One simulation and what continues it: the setup it came from (settings and origin; its bodies
// live in the simulation), the settings as given, the energy baseline.
class Engine {
 public:
  static std::unique_ptr<Engine> create(const nb::dict& options, std::optional<std::uintptr_t> comm) {
    driver::RunConfig run;
    run.devices.engine.precision = Precision::fp64;  // Python's default: the state a script reads is fp64 throughout
    apply_options(run, options, true);
    return made(std::move(run), comm, [](const driver::RunConfig& r, const std::atomic<bool>* cancel) {
      return driver::make_setup(r, cancel);
    });
  }

  // `given_time`: a number in the simulation's units, or text with a unit ("1Myr") in the units `options` names.
  static std::unique_ptr<Engine> from_arrays(Rows3 positions, Rows3 velocities, Column masses, nb::object given_time,
                                             const nb::dict& options, std::optional<std::uintptr_t> comm) {
    driver::RunConfig run;
    run.devices.engine.precision = Precision::fp64;
    apply_options(run, options, false);
    double const time = nb::isinstance<nb::str>(given_time)
                            ? driver::typed_time("--time", nb::cast<std::string>(given_time), run.units, run.names)
                            : nb::cast<double>(given_time);
    // The times a run can have, as the file readers hold theirs to (core/bounds.h), in Python's words.
    if (auto const why = time_problem(time); !why.empty()) throw InputError("time=" + shortest(time) + ": " + why);
    sim::BodySet bodies = to_bodies(positions, velocities, masses);
    bodies.time = time;
    return made(std::move(run), comm, [&](const driver::RunConfig& r, const std::atomic<bool>*) {
      return driver::setup_from_bodies(r, std::move(bodies), "arrays");
    });
  }

  static std::unique_ptr<Engine> load(const std::string& path, const nb::dict& options,
                                      std::optional<std::uintptr_t> comm) {
    driver::RunConfig run;
    run.devices.engine.precision = Precision::fp64;
    run.initial.snapshot = path;  // where a time given with a unit takes its units from
    apply_options(run, options, false);
    return made(std::move(run), comm, [](const driver::RunConfig& r, const std::atomic<bool>* cancel) {
      return driver::make_setup(r, cancel);
    });
  }

  // A checkpoint continued: every setting from the file unless `options` names it (then with a
  // notice, as --restart does).
  static std::unique_ptr<Engine> restart(const std::string& path, const nb::dict& options,
                                         std::optional<std::uintptr_t> comm) {
    driver::RunConfig run;
    run.initial.checkpoint = path;  // where a time given with a unit takes its units from
    apply_options(run, options, false, true);
    return made(std::move(run), comm, [](const driver::RunConfig& r, const std::atomic<bool>* cancel) {
      return driver::make_setup(r, cancel);
    });
  }

  // What an engine is made of, made without the GIL: the setup (its bodies moved into the simulation), the
  // simulation (its start: the first forces), the energy baseline (a checkpoint's, else the energy now, as the
  // command line's --run: measured anew past step 0, where a series from before begins again) and a restart's
  // recorded end (continued_end, decided on the file's state).
  struct Parts {
    driver::Setup setup;
    std::unique_ptr<multigpu::Simulation> sim;
    double e0 = 0;
    driver::ContinuedEnd continued;
  };
  static Parts make_parts(driver::Setup setup, const std::atomic<bool>* cancel) {
    Parts p;
    setup.config.cancel = cancel;
    p.sim = std::make_unique<multigpu::Simulation>(setup.bodies, setup.program, setup.config, setup.clock,
                                                   &setup.hermite);
    setup.bodies = sim::BodySet{};  // the simulation holds the state now
    if (!setup.run.initial.checkpoint.empty()) p.continued = driver::continued_end(setup);
    if (!setup.initial_energy && p.sim->steps_done() > 0) setup.baseline_step = p.sim->steps_done();
    p.e0 = setup.initial_energy ? *setup.initial_energy : p.sim->diagnostics().total();
    p.setup = std::move(setup);
    return p;
  }

  // The engine of `run` on the communicator's ranks (or this process alone): its parts made on every rank without
  // the GIL (a failure on any rank is thrown on every rank: agree), the engine itself here, with it.
  template <class MakeSetup>
  static std::unique_ptr<Engine> made(driver::RunConfig run, const std::optional<std::uintptr_t>& comm,
                                      MakeSetup&& make_setup) {
    auto ranks = ranks_for(comm);
    run.devices.ranks = ranks.get();
    bool const alone = spanned(ranks).size() == 1;
    // The bodies made, the first forces and the energy: minutes for millions of bodies on the CPU, so Ctrl-C is
    // looked for meanwhile, alone (the simulation is then made on another thread and used on this one, as the CUDA
    // engines allow: each sets its device before its work). They give up on a flag of their own, as the command
    // line's start does (the generation, the CPU engines' force and potential passes), never on the process's
    // interrupt, which another thread's run may be using; it is lowered once the simulation is made, so that no step
    // after it is cancelled part-way, and lives as long as the engine, whose simulation points to it.
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    Parts parts = watching_signals(
        [&]() {
          driver::Setup setup;
          agree(spanned(ranks), [&] { setup = make_setup(run, cancel.get()); });
          return make_parts(std::move(setup), cancel.get());
        },
        alone, cancel.get());
    cancel->store(false);
    return std::make_unique<Engine>(std::move(parts), run, std::move(ranks), std::move(cancel));
  }

  // With `ranks` (a communicator's), every rank makes the engine with the same arguments, and
  // each call that reads or writes the state is collective: every rank makes it, in the same order.
  Engine(Parts parts, const driver::RunConfig& run, std::unique_ptr<Ranks> ranks,
         std::shared_ptr<std::atomic<bool>> cancel)
      : ranks_(std::move(ranks)), run_(run), source_(run.initial), cancel_(std::move(cancel)) {
    notices_ = parts.setup.notices;
    notices_.insert(notices_.end(), parts.setup.warnings.begin(), parts.setup.warnings.end());
    setup_warnings_ = parts.setup.warnings;
    sim_ = std::move(parts.sim);
    setup_ = std::move(parts.setup);
    source_.unkept = setup_.run.initial.unkept;  // what the file loaded holds that a save over it would lose
    continued_ = parts.continued;
    continued_at_ = sim_->steps_done();
    continued_blocks_ = sim_->block_steps();
    remember_settings();
    e0_ = parts.e0;
  }

  // Enqueues `steps` steps with the GIL released. On a GPU the last of them may still be running
  // when this returns, as after multigpu::Simulation::advance: every read of the state waits for
  // them (synchronize() alone too), and a loop of step() calls keeps the GPU busy without a round
  // trip per step. One step costs the engine's enqueue and a look at Python's signals, nothing
  // else: no clock, no wait. Longer calls go in chunks of about kSignalCheckSeconds, each waited
  // for before the next is enqueued, so Ctrl-C raises KeyboardInterrupt within about a chunk, after
  // a whole step, the state intact (steps already enqueued still complete).
  void advance(std::uint64_t steps) {
    Busy busy(*this, true);
    if (steps == 0) return;
    same_call("step(" + std::to_string(steps) + ")");
    invalidate();
    if (steps == 1 && sim_->ranks().size() == 1) {  // with several ranks, the ranks agree on Ctrl-C below
      {
        nb::gil_scoped_release unlocked;
        sim_->advance(1);
      }
      if (PyErr_CheckSignals() != 0) throw nb::python_error();
      return;
    }
    std::uint64_t done = 0, chunk = 1;
    while (done < steps) {
      std::uint64_t const n = std::min(chunk, steps - done);
      bool const last = done + n == steps;
      double seconds = 0;
      {
        nb::gil_scoped_release unlocked;
        auto const t0 = Clock::now();
        sim_->advance(n);
        if (!last) sim_->synchronize();  // bounds the steps queued ahead of a Ctrl-C
        seconds = seconds_since(t0);
      }
      done += n;
      bool const signalled = PyErr_CheckSignals() != 0;
      double const per_step = seconds / double(n);
      chunk = std::max<std::uint64_t>(1, std::uint64_t(kSignalCheckSeconds / std::max(per_step, 1e-9)));
      if (sim_->block_steps()) chunk = std::min(chunk, 2 * n);  // block steps' costs differ by up to N times
      Ranks const& ranks = sim_->ranks();
      if (ranks.size() > 1) {
        // Every rank stops after the same step (a signal seen by any stops all) and steps chunks of
        // the same size (the smallest proposed), so that none waits for a step another will not take.
        int any = 0;
        {
          nb::gil_scoped_release unlocked;
          any = ranks.max(signalled ? 1 : 0);
          chunk = std::uint64_t(-ranks.max(-int(std::min<std::uint64_t>(chunk, std::uint64_t(1) << 30))));
        }
        if (any && !signalled) PyErr_SetNone(PyExc_KeyboardInterrupt);
        if (any) throw nb::python_error();
      } else if (signalled) {
        throw nb::python_error();
      }
    }
  }

  // Waits for the steps enqueued so far (a failure in one of them is raised here).
  void synchronize() {
    Busy busy(*this);
    nb::gil_scoped_release unlocked;
    sim_->synchronize();
  }

  // `steps` timed steps after `warmup`, measured as `nbody --benchmark` measures them
  // (driver::measure) and reported with its JSON keys (driver::benchmark_json), on a copy of the
  // current state with the same settings: this simulation is neither advanced nor changed. The
  // copy runs on a thread of its own while this one looks at Python's signals: Ctrl-C abandons it
  // and raises KeyboardInterrupt.
  nb::object benchmark(std::uint64_t steps, std::uint64_t warmup) {
    Busy busy(*this);
    if (steps < 1 || steps > kMaxSteps) throw InputError("steps=" + std::to_string(steps) + ": must be from 1 to 1e15");
    if (warmup > kMaxSteps) throw InputError("warmup=" + std::to_string(warmup) + ": must be at most 1e15");
    same_call("benchmark(steps=" + std::to_string(steps) + ", warmup=" + std::to_string(warmup) + ")");
    if (!sim_->block_steps() && steps > kMaxTimedSteps)  // before the copy (driver::measure says it too)
      throw InputError("steps=" + std::to_string(steps) + ": a benchmark times each of its steps, at most " +
                       std::to_string(kMaxTimedSteps) + " (a longer run: run())");
    // The state, the clock and hermite4's per-body state (each body at its own time, with its step): the copy goes
    // on as this simulation would, block structure included, as `nbody --benchmark --restart` of its checkpoint.
    std::shared_ptr<const driver::Setup> same;
    {
      nb::gil_scoped_release unlocked;
      same = std::make_shared<const driver::Setup>(driver::with_settings(setup_, *sim_, run_, nullptr));
    }
    sim::StepProgram const program = sim_->program();
    multigpu::SimulationConfig const config = sim_->config();
    std::string const source = setup_.source;
    sim::Units const units = setup_.units;
    SettingNames const names = run_.names;
    std::string const text = watching_signals(
        [=]() -> std::string {
          multigpu::Simulation copy(same->bodies, program, config, same->clock, &same->hermite);
          driver::Measurement const m = driver::measure(copy, warmup, steps, std::nullopt, names);
          return driver::benchmark_json(m, copy, source, units, warmup, steps).dump();
        },
        true);
    return from_json(text);
  }

  // `steps` steps through driver::run, the loop of the command line, with its outputs (a dict: the
  // keys of driver::RunOutputs) and `callback(self)` after every `every` steps of this run; a true
  // answer stops the run there. Python's signals are looked at between the loop's chunks (about
  // 0.2 s): Ctrl-C stops the run as a signal stops `nbody --run` (its outputs written), and then
  // raises KeyboardInterrupt. Returns what the run did (steps, samples, files not written...).
  nb::dict run(std::uint64_t steps, nb::object callback, std::uint64_t every, nb::object self, const nb::dict& outputs) {
    // A time limit that steps_to() set is this run's alone, refused outputs included.
    // Busy first: a call refused as busy (from the callback, another thread) leaves the running run's limit alone.
    Busy busy(*this, true);
    struct ClearTimeLimit {
      multigpu::Simulation* sim;
      ~ClearTimeLimit() {
        if (sim) sim->set_time_limit(INFINITY);
      }
    } const clear_time_limit{sim_.get()};
    {
      // What every rank's run must be alike: its steps, callback and outputs (not the script's frame for warnings).
      std::string call = "run(steps=" + std::to_string(steps);
      for (auto [key, value] : outputs) {
        std::string const k = nb::cast<std::string>(key);
        if (!value.is_none() && k != "warn_level" && k != "typed") call += ", " + k + "=" + shown(value);
      }
      same_call(call + (callback.is_none() ? "" : ", callback, every=" + std::to_string(every)) + ")");
    }
    last_run_ = nb::none();
    driver::RunOutputs o;
    o.summary = false;
    o.state_stays = true;  // the script holds the state after the run
    // (source_: what the simulation was made from, which a configure() keeps; bodies set since start another course.)
    o.from_checkpoint = !source_.checkpoint.empty();
    o.course = setup_.course;
    o.units = setup_.units;
    o.names = run_.names;
    std::string precision_shown;  // snapshot_precision, as given
    std::set<std::string> given;  // the outputs' keywords given (not None)
    for (auto [key, value] : outputs) {
      std::string const k = nb::cast<std::string>(key);
      if (value.is_none()) continue;
      if (k == "checkpoint") o.checkpoint = nb::cast<std::string>(value);
      else if (k == "checkpoint_every") o.checkpoint_every = nb::cast<std::uint64_t>(value);
      else if (k == "checkpoint_dt") o.checkpoint_dt = nb::cast<double>(value);
      else if (k == "save") {
        o.save = nb::cast<std::string>(value);
        driver::check_save(o.save, run_.names.with_text("--save", o.save), "");
      }
      else if (k == "diagnostics") o.diagnostics = nb::cast<std::string>(value);
      else if (k == "diagnostics_every") o.diagnostics_every = nb::cast<std::uint64_t>(value);
      else if (k == "diagnostics_dt") o.diagnostics_dt = nb::cast<double>(value);
      else if (k == "snapshots") o.snapshots.base = nb::cast<std::string>(value);
      else if (k == "snapshot_every") o.snapshots.every = nb::cast<std::uint64_t>(value);
      else if (k == "snapshot_dt") o.snapshots.dt = nb::cast<double>(value);
      else if (k == "end_time") o.end_time = nb::cast<double>(value);  // run(t_end=...): its checkpoints record it
      else if (k == "warn_level") warn_level_ = nb::cast<int>(value);  // the script's frame: see warn_level_
      else if (k == "typed") {  // the times given with a unit, as typed: {"diagnostics_dt": "0.5Myr"}
        for (auto [name, text] : nb::cast<nb::dict>(value)) {
          std::string option = "--" + nb::cast<std::string>(name);
          std::replace(option.begin(), option.end(), '_', '-');
          o.names.typed[option] = nb::cast<std::string>(text);
        }
        continue;
      }
      else if (k == "snapshot_precision") {
        std::string const name = nb::cast<std::string>(value);
        auto const p = from_name<Precision>(name);
        if (!p) throw InputError("snapshot_precision='" + name + "': valid: " + valid_names<Precision>());
        o.snapshots.precision = *p;
        precision_shown = name;
      } else {
        throw InputError("run: no output '" + k + "'");
      }
      given.insert(k);
    }
    // The names the command line refuses, refused first as it refuses them (core/output_path.h, driver/checkpoints.h).
    for (auto const& [option, path] : {std::pair<const char*, const std::string*>{"--checkpoint", &o.checkpoint},
                                       {"--save", &o.save}, {"--diagnostics", &o.diagnostics},
                                       {"--snapshots", &o.snapshots.base}})
      if (auto const problem = path_name_problem(*path); !path->empty() && !problem.empty())
        throw InputError(run_.names.with_text(option, *path) + ": " + problem);
    if (!o.checkpoint.empty())
      driver::check_checkpoint_name(o.checkpoint, run_.names.with_text("--checkpoint", o.checkpoint));
    if (!o.snapshots.base.empty())
      driver::check_snapshots_name(o.snapshots.base, run_.names.with_text("--snapshots", o.snapshots.base));
    // A cadence named, 0 included (none between the start and the end): not the run before's.
    // (Python passes the times typed with a unit after the others: each named as typed from here on.)
    o.checkpoint_cadence_named = given.count("checkpoint_every") || given.count("checkpoint_dt");
    o.snapshot_cadence_named = given.count("snapshot_every") || given.count("snapshot_dt");
    o.snapshot_precision_named = !precision_shown.empty();
    if (given.count("checkpoint_every") && o.checkpoint.empty())
      throw InputError("checkpoint_every=" + std::to_string(o.checkpoint_every) + ": give checkpoint too");
    if (o.checkpoint_dt > 0 && o.checkpoint.empty())
      throw InputError(o.names.with("--checkpoint-dt", shown(nb::cast(o.checkpoint_dt))) + ": give checkpoint too");
    if (given.count("checkpoint_dt") && given.count("checkpoint_every"))
      throw InputError(o.names.with("--checkpoint-dt", shown(nb::cast(o.checkpoint_dt))) + " and checkpoint_every=" +
                       std::to_string(o.checkpoint_every) + " both given; give one of them");
    if (o.diagnostics_every && o.diagnostics.empty())
      throw InputError("diagnostics_every=" + std::to_string(o.diagnostics_every) + ": give diagnostics too");
    if (o.diagnostics_dt > 0 && o.diagnostics.empty())
      throw InputError(o.names.with("--diagnostics-dt", shown(nb::cast(o.diagnostics_dt))) + ": give diagnostics too");
    if (o.diagnostics_dt > 0 && o.diagnostics_every)
      throw InputError(o.names.with("--diagnostics-dt", shown(nb::cast(o.diagnostics_dt))) + " and diagnostics_every=" +
                       std::to_string(o.diagnostics_every) + " both given; give one of them");
    if (!precision_shown.empty() && o.snapshots.base.empty())
      throw InputError("snapshot_precision='" + precision_shown + "': give snapshots too");
    if (given.count("snapshot_every") && o.snapshots.base.empty())
      throw InputError("snapshot_every=" + std::to_string(o.snapshots.every) + ": give snapshots too");
    if (o.snapshots.dt > 0 && o.snapshots.base.empty())
      throw InputError(o.names.with("--snapshot-dt", shown(nb::cast(o.snapshots.dt))) + ": give snapshots too");
    if (given.count("snapshot_dt") && given.count("snapshot_every"))
      throw InputError(o.names.with("--snapshot-dt", shown(nb::cast(o.snapshots.dt))) + " and snapshot_every=" +
                       std::to_string(o.snapshots.every) + " both given; give one of them");
    // A run from a checkpoint, or after a run of the script, writes its series as that run did, where it names no
    // cadence of its own.
    // Steps made since by step() are the same simulation's: its series go on at those cadences. (The digest of the
    // rows before the step they were recorded at is of no other step.)
    if (setup_.continued_cadences.at_step != sim_->steps_done()) setup_.continued_cadences.diagnostics_digest.clear();
    setup_.continued_cadences.at_step = sim_->steps_done();
    driver::take_up_cadences(setup_, sim_->block_steps(), sim_->steps_done(), steps, o);
    // The files, where rank 0 writes them (as the command line checks them): every rank then hears its answer, so
    // that a folder one rank sees otherwise sends none alone into the run's first collective call.
    std::vector<std::string> output_notices;  // said by the run, with its others
    {
      nb::gil_scoped_release unlocked;
      agree(sim_->ranks(), [&] {
        if (sim_->ranks().rank() != 0) return;
        for (auto const& [option, path] : {std::pair<const char*, const std::string*>{"--checkpoint", &o.checkpoint},
                                           {"--save", &o.save}, {"--diagnostics", &o.diagnostics}})
          if (!path->empty())
            check_output_path(*path, option, run_.names,
                              driver::bytes_named_after(option, o.checkpoint_every || o.checkpoint_dt > 0));
        check_distinct_outputs({{"checkpoint", o.checkpoint}, {"save", o.save}, {"diagnostics", o.diagnostics}});
        driver::check_outputs_spare_tipsy_units(o.save, {{"checkpoint", o.checkpoint}, {"diagnostics", o.diagnostics}},
                                                run_.names);
        spare_source({{"checkpoint", o.checkpoint}, {"save", o.save}, {"diagnostics", o.diagnostics}}, "checkpoint",
                     "save", &o.snapshots);
        output_notices = driver::check_run_outputs(o, sim_->steps_done(), sim_->steps_done() + steps, {}, run_.names);
        driver::check_tipsy_save(o.save, run_.names.with_text("--save", o.save), setup_.units);
      });
    }

    o.said.insert(o.said.end(), output_notices.begin(), output_notices.end());
    if (std::string const notice = driver::series_names_notice(o, sim_->steps_done() + steps); !notice.empty())
      o.said.push_back(notice);
    // Said by the run after the cadences it took up (o.said), which they may be about.
    if (std::string const notice = driver::sample_dt_notice(*sim_, o.diagnostics_dt, o.names.setting("--diagnostics-dt"),
                                                                  "sample", setup_.units);
        !notice.empty())
      o.said.push_back(notice);
    if (std::string const notice =
            driver::sample_dt_notice(*sim_, o.snapshots.dt, o.names.setting("--snapshot-dt"), "snapshot", setup_.units);
        !notice.empty())
      o.said.push_back(notice);
    PythonRun observer(*this, std::move(callback), every, std::move(self));
    setup_.initial_energy = e0_;  // the baseline the energy error is measured from
    driver::RunResult r;  // filled as the run goes: what it wrote is known even where it throws
    std::uint64_t const first_step = sim_->steps_done();
    bool const blocks = sim_->block_steps();
    sim::hermite::HermiteCounters const counts_before =
        blocks ? sim_->hermite_counters() : sim::hermite::HermiteCounters{};
    std::exception_ptr failed;  // a failure with no sound state kept: what the run did is kept before it is raised
    std::string failure;
    auto const began = std::chrono::steady_clock::now();
    {
      nb::gil_scoped_release unlocked;
      try {
        run_checkpoint_ = o.checkpoint;
        run_save_ = o.save;
        struct Forget {
          std::string& checkpoint;
          std::string& save;
          ~Forget() {
            checkpoint.clear();
            save.clear();
          }
        } const forget{run_checkpoint_, run_save_};
        driver::run(setup_, *sim_, o, steps, observer, r);
      } catch (const std::runtime_error& e) {
        invalidate();
        clear_interrupt();
        if (!dynamic_cast<const RuntimeFailure*>(&e) && !dynamic_cast<const JobFailure*>(&e)) throw;
        failed = std::current_exception();
        failure = e.what();
      } catch (...) {
        invalidate();
        clear_interrupt();
        throw;
      }
    }
    if (failed) {
      r.steps = sim_->steps_done() - first_step;
      r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      r.failure = failure;
      r.saved_step.reset();
      r.save_failure = o.checkpoint.empty() ? "no checkpoint was given" : "no sound state was kept to save";
      // With several ranks a failure may have left the others where they cannot take part in the state's hash.
      bool const countable = blocks && sim_->ranks().size() == 1;
      last_run_ = outcome(r, o, countable ? hermite_outcome(counts_before, r.wall_seconds) : nb::none(),
                          observer.warnings, false);
      std::rethrow_exception(failed);
    }
    invalidate();
    clear_interrupt();
    if (sim_->ranks().size() > 1) {
      warn_after_run(observer);
      raise_everywhere(observer);
    }
    // A warning made an error stopped the run by the interrupt, not by the callback's answer; so did a signal that came
    // while the callback ran.
    if (observer.by_warning || observer.by_signal) r.stopped_by_visit = false;
    // The next run from here continues this one's series as a restart from its checkpoint would: at its cadence.
    setup_.continued_cadences = r.cadences;  // (counted in this run's steps: block steps where it ran hermite4)
    setup_.continued_cadences.at_step = sim_->steps_done();
    setup_.continued_cadences.source = "the last run";
    // What the run did is kept before a callback's exception, Ctrl-C or a failure is raised: the files it wrote are
    // what the user needs to know then (last_run).
    // Interrupted: stopped before its end by a signal (Ctrl-C, or one a job script made a KeyboardInterrupt), on this
    // rank or another; not by a warning the filter made an error, which stops it the same way.
    bool const interrupted = (r.stopped_by != 0 && !observer.by_warning) || observer.by_signal;
    last_run_ = outcome(r, o, blocks ? hermite_outcome(counts_before, r.wall_seconds) : nb::none(), observer.warnings,
                        interrupted);
    // A failure is raised before a warning made an error (which last_run's warnings keep).
    if (observer.error && !(r.failure && observer.by_warning)) observer.error->restore(), throw nb::python_error();
    if (r.failure) {
      std::string text = *r.failure;
      if (r.saved_step)
        text += "; " + o.checkpoint + " holds step " + std::to_string(*r.saved_step) + ", " + r.saved_state();
      throw RuntimeFailure(text);
    }
    return nb::borrow<nb::dict>(last_run_);
  }

  // Several ranks: a callback that raised, or a KeyboardInterrupt (a signal to one rank), stopped the run on every rank
  // (the ranks agree on stopping), but only there would `run` raise: the others would go on alone to a call the first
  // has left. Each rank says what it raises, and a rank that raises nothing raises the first rank's: a KeyboardInterrupt
  // as itself, a callback's exception as a RuntimeError naming the rank, its type and its words. Collective; the GIL
  // held.
  template <class Observer>
  void raise_everywhere(Observer& observer) {
    std::string mine;
    if (observer.error && !observer.by_warning) {
      if (observer.error->matches(PyExc_KeyboardInterrupt)) {
        mine = "KeyboardInterrupt";
      } else {
        // Said whatever the exception holds: one that cannot be shown (its __str__ raises, a name not in UTF-8) must
        // not keep this rank from the exchange below, nor replace its own exception.
        nb::handle const value = observer.error->value();
        mine = "an exception";
        try {
          mine = nb::cast<std::string>(nb::handle(value.type()).attr("__name__"));
          nb::object const text = nb::steal(PyObject_Str(value.ptr()));
          nb::object const bytes = text.is_valid() ? nb::steal(PyUnicode_AsEncodedString(text.ptr(), "utf-8",
                                                                                          "backslashreplace"))
                                                   : nb::object();
          if (bytes.is_valid()) mine += ": " + std::string(PyBytes_AsString(bytes.ptr()));
        } catch (...) {
        }
        PyErr_Clear();
      }
    }
    std::vector<std::string> said;
    {
      nb::gil_scoped_release unlocked;
      said = sim_->ranks().all_gather(mine);
    }
    if (observer.error) return;
    for (std::size_t r = 0; r < said.size(); ++r) {
      if (said[r].empty()) continue;
      if (said[r] == "KeyboardInterrupt") {
        PyErr_SetNone(PyExc_KeyboardInterrupt);
        observer.by_signal = true;
      } else {
        std::string const text = "rank " + std::to_string(r) + "'s run callback raised " + said[r] +
                                 "; the run stopped there on every rank";
        PyErr_SetString(PyExc_RuntimeError, text.c_str());
      }
      observer.error.emplace();
      return;
    }
  }

  // Several ranks: the run's warnings, given once it has returned, by rank 0 (as the command line prints them); one
  // that the filter makes an error is raised on every rank (rank 0's text), so that no rank goes on to a collective
  // call that the others have left. Collective; the GIL held.
  template <class Observer>
  void warn_after_run(Observer& observer) {
    std::string raised;
    if (sim_->ranks().rank() == 0 && !observer.error) {
      for (std::string const& w : observer.warnings) {
        if (PyErr_WarnEx(PyExc_RuntimeWarning, w.c_str(), warn_level_) == 0) continue;
        PyErr_Clear();
        raised = w;
        break;
      }
    }
    std::vector<std::string> said;
    {
      nb::gil_scoped_release unlocked;
      said = sim_->ranks().all_gather(raised);
    }
    if (said[0].empty() || observer.error) return;
    PyErr_SetString(PyExc_RuntimeWarning, said[0].c_str());
    observer.error.emplace();
    observer.by_warning = true;
  }

  // What run() did, as a dict (None before the first run, and for a run refused or ended before its loop).
  nb::object last_run() const { return last_run_; }

  // This run's hermite4 figures, as the command line's --json has them (driver::hermite_run_json); None where the
  // state cannot be read any more (a device gave up).
  nb::object hermite_outcome(const sim::hermite::HermiteCounters& before, double wall) {
    nlohmann::json j;
    try {
      nb::gil_scoped_release unlocked;
      j = driver::hermite_run_json(*sim_, before, before, wall);
    } catch (const std::exception&) {
      return nb::none();
    }
    return from_json(j.dump());
  }

  static nb::dict outcome(const driver::RunResult& r, const driver::RunOutputs& o, nb::object hermite,
                          const std::vector<std::string>& warnings, bool interrupted) {
    nb::dict out;
    out["warnings"] = warnings;
    out["interrupted"] = interrupted;
    out["hermite4"] = hermite;
    out["steps"] = r.steps;
    out["wall_seconds"] = r.wall_seconds;
    out["stopped_by_callback"] = r.stopped_by_visit;
    out["diagnostics_samples"] = r.diagnostics_samples;
    out["checkpoints_written"] = r.checkpoints_written;
    out["checkpoints_not_written"] = r.checkpoints_not_written;
    out["snapshots_written"] = r.snapshots_written;
    out["snapshots_not_written"] = r.snapshots_not_written;
    nb::list lost;  // the final checkpoint or tipsy file that could not be written
    for (auto const& f : r.outputs_not_written) {
      nb::dict d;
      d["output"] = f.output;
      d["path"] = f.path;
      d["error"] = f.error;
      lost.append(d);
    }
    out["outputs_not_written"] = lost;
    out["diagnostics_failure"] = r.diagnostics_failure.empty() ? nb::none() : nb::cast(r.diagnostics_failure);
    out["diagnostics_rows_in"] = r.diagnostics_rows_in.empty() ? nb::none() : nb::cast(r.diagnostics_rows_in);
    out["diagnostics_replaced"] = r.diagnostics_replaced.empty() ? nb::none() : nb::cast(r.diagnostics_replaced);
    out["checkpoint_replaced"] = r.checkpoint_replaced.empty() ? nb::none() : nb::cast(r.checkpoint_replaced);
    out["energy_warning"] = r.energy_warning.empty() ? nb::none() : nb::cast(r.energy_warning);
    out["failure"] = r.failure ? nb::cast(*r.failure) : nb::none();
    out["saved_step"] = r.saved_step ? nb::cast(*r.saved_step) : nb::none();
    out["saved_state"] = r.saved_step ? nb::cast(std::string(r.saved_state())) : nb::none();
    out["save_failure"] = r.failure && !r.saved_step ? nb::cast(r.save_failure) : nb::none();
    // The final checkpoint where there is one: not where it could not be written.
    bool const checkpoint_lost = std::any_of(r.outputs_not_written.begin(), r.outputs_not_written.end(),
                                             [](auto const& f) { return f.output == "checkpoint"; });
    out["checkpoint"] = o.checkpoint.empty() || checkpoint_lost ? nb::none() : nb::cast(o.checkpoint);
    return out;
  }

  // For a run that names no end: while nothing has stepped since a restart's checkpoint, the end of the run that file
  // continues, (t_end, None, notice) or (None, steps, notice) with the notice given, or (None, None, why not) where it
  // records an end this run cannot count (driver::continued_end); None otherwise.
  nb::object continued_end() {
    Busy busy(*this);
    // Settings changed since (configure) keep it, but for a switch between fixed and block steps, which count
    // steps otherwise; a step made since ends it.
    driver::ContinuedEnd const& c = continued_;
    if (c.notice.empty() || sim_->steps_done() != continued_at_ || (c.steps && sim_->block_steps() != continued_blocks_))
      return nb::none();
    if (c.t_end || c.steps) notices_.push_back(c.notice);  // else the run is refused, the notice its reason
    return nb::make_tuple(c.t_end ? nb::cast(*c.t_end) : nb::none(), c.steps ? nb::cast(*c.steps) : nb::none(),
                          c.notice);
  }

  // How messages name t_end: "t_end=5", or as typed where it was given in a unit (`typed`: "10Myr"; else "").
  NamedSetting t_end_named(const std::string& typed) const {
    NamedSetting named = run_.names.setting("--t-end");
    named.typed = typed;
    return named;
  }

  // Steps from now until the time reaches `t_end` (0 if it has): driver::steps_to_time. hermite4 ends at t_end
  // exactly with `finish`, else at the last block time at or before it.
  std::uint64_t steps_to(double t_end, const std::string& typed, bool finish) {
    Busy busy(*this);
    NamedSetting const named = t_end_named(typed);
    // A new simulation goes forward from its start, as nbody --t-end does: a time before it is a mistake. One that
    // has stepped, or continues a checkpoint, is at most already there (a notice).
    if (source_.checkpoint.empty() && sim_->steps_done() == 0)
      driver::refuse_t_end_before_start(sim_->time(), t_end, named,
                                        bodies_set_ ? std::string("the bodies set") : setup_.source, setup_.units);
    // hermite4's block steps have no fixed length: the simulation stops at t_end (the next run() clears it).
    std::uint64_t const steps = driver::steps_for_time_limit(*sim_, t_end, named, run_.names, finish);
    if (steps == 0 && sim_->time() >= (sim_->block_steps() ? t_end : driver::reach_of(t_end))) {
      notices_.push_back(driver::already_at_notice(sim_->time(), t_end, named, setup_.units) + "; no steps");
    }
    return steps;
  }

  // After a run to `t_end`: where hermite4's block steps ended, when that is before it (driver::t_end_notice), as a
  // notice.
  void note_end(double t_end, const std::string& typed) {
    Busy busy(*this);
    NamedSetting const named = t_end_named(typed);
    std::string notice;
    {
      nb::gil_scoped_release unlocked;
      notice = driver::t_end_notice(*sim_, t_end, named, setup_.units);
    }
    if (!notice.empty()) notices_.push_back(notice);
  }

  // The state's arrays as read-only NumPy views of the host copy of this step (state()), no copy
  // of their own: every read at one step shares that memory, and each array keeps it alive, with
  // this step's values, after the simulation has moved on (the next state goes to new memory).
  nb::ndarray<nb::numpy, const double> positions() {
    Busy busy(*this);
    sim::BodySet const& s = state();
    return view(&s.pos_mass.data()->x, {s.size(), 3}, {4, 1});
  }
  nb::ndarray<nb::numpy, const double> velocities() {
    Busy busy(*this);
    sim::BodySet const& s = state();
    return view(&s.velocity.data()->x, {s.size(), 3}, {3, 1});
  }
  nb::ndarray<nb::numpy, const double> masses() {
    Busy busy(*this);
    sim::BodySet const& s = state();
    return view(&s.pos_mass.data()->w, {s.size()}, {4});
  }
  // The engine's own positions on its GPU, without a copy: a read-only (N, 3) DLPack tensor over
  // the (x, y, z, m) rows of the current buffer (strides 4, 1), with what __cuda_array_interface__
  // (version 3) says of the same memory. Valid for this state only (generation): the next step
  // writes the other buffer and then makes it the current one, a change of settings or bodies
  // frees it. Only for one GPU in one process: several devices each hold their own copy.
  nb::tuple device_positions() {
    Busy busy(*this);
    multigpu::SimulationConfig const& c = sim_->config();
    if (c.backend != sim::Backend::cuda)
      throw InputError("device_positions: the simulation runs on the CPU (backend " + name_of(c.backend) +
                       "); its state is in host memory: read positions instead");
    if (sim_->block_steps())
      throw InputError("device_positions: hermite4 keeps no position array on the device (read positions)");
    if (sim_->all_slices().size() != 1)
      throw InputError("device_positions: the simulation spans " + std::to_string(sim_->all_slices().size()) +
                       " devices, each with its own copy of the positions; a device view needs numgpus=1 in one "
                       "process (or read positions)");
    {
      nb::gil_scoped_release unlocked;
      sim_->synchronize();  // the view needs no stream: the state is complete when it is handed out
    }
    std::size_t const n = sim_->bodies();
    std::size_t const item = sim_->bytes_per_body() / 4;  // a Real4 row: 4 items of the run's precision
    nb::dlpack::dtype const type = item == 8 ? nb::dtype<double>() : nb::dtype<float>();
    void* data = const_cast<void*>(sim_->current_positions(0));
    int const ordinal = sim_->device_ordinal(0);
    nb::ndarray<nb::array_api, nb::ro> tensor(data, {n, 3}, nb::find(this), {4, 1}, type, nb::device::cuda::value,
                                              ordinal);
    nb::dict interface;
    interface["shape"] = nb::make_tuple(n, 3);
    interface["typestr"] = item == 8 ? "<f8" : "<f4";
    interface["data"] = nb::make_tuple(reinterpret_cast<std::uintptr_t>(data), true);
    interface["strides"] = nb::make_tuple(4 * item, item);
    interface["version"] = 3;
    interface["stream"] = nb::none();
    return nb::make_tuple(tensor, interface, generation_, ordinal);
  }
  std::uint64_t generation() const { return generation_; }
  // What making the simulation warns of (other units than its checkpoint's), once: a RuntimeWarning from rank 0, as a
  // run's warnings are, and where the script's filter makes it an error, that error raised on every rank alike (every
  // rank made the simulation, and each goes on to the same next call). Collective with several ranks.
  void warn_of_setup(int stacklevel) {
    std::vector<std::string> const taken = std::exchange(setup_warnings_, {});
    std::string raised;
    if (sim_->ranks().rank() == 0)
      for (std::string const& w : taken) {
        if (PyErr_WarnEx(PyExc_RuntimeWarning, w.c_str(), stacklevel) == 0) continue;
        PyErr_Clear();
        raised = w;
        break;
      }
    if (sim_->ranks().size() > 1) {
      nb::gil_scoped_release unlocked;
      raised = sim_->ranks().all_gather(raised).front();
    }
    if (raised.empty()) return;
    PyErr_SetString(PyExc_RuntimeWarning, raised.c_str());
    throw nb::python_error();
  }

  nb::ndarray<nb::numpy, std::uint8_t> types() {
    Busy busy(*this);
    sim::BodySet const& s = state();
    std::vector<std::uint8_t> v(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) v[i] = std::uint8_t(s.type[i]);
    return to_numpy(std::move(v), s.size(), 0);
  }

  // Each body's time step: hermite4's own (a power of two, at most dt_max's; the start criterion's before the first
  // block step), else the run's dt, every body's alike. A copy: hermite4's steps are read from the engines anew.
  nb::ndarray<nb::numpy, double> time_steps() {
    Busy busy(*this);
    std::size_t const n = sim_->bodies();
    if (!sim_->block_steps()) return to_numpy(std::vector<double>(n, sim_->program().dt), n, 0);
    same_call("a read of the time steps");
    sim::hermite::HermiteState h;
    {
      nb::gil_scoped_release unlocked;
      sim::BodySet own_times;
      sim_->hermite_state(own_times, h);
    }
    return to_numpy(std::move(h.step), n, 0);
  }

  // New positions, velocities or masses (an empty array: keep them) for the same bodies, at the same
  // step and time: the simulation is rebuilt around them, and the energy baseline measured anew.
  void set_bodies(std::optional<Rows3> positions, std::optional<Rows3> velocities, std::optional<Column> masses) {
    Busy busy(*this, true);
    same_call(std::string("an assignment of ") + (positions ? "positions" : velocities ? "velocities" : "masses"));
    sim::BodySet next = state();
    std::size_t const n = next.size();
    auto check_rows = [&](std::size_t rows, const char* name) {
      if (rows != n)
        throw InputError(std::string(name) + ": " + std::to_string(rows) + " rows for a simulation of " +
                         std::to_string(n) + " bodies");
    };
    if (positions) {
      check_rows(positions->shape(0), "positions");
      for (std::size_t i = 0; i < n; ++i)
        next.pos_mass[i] = {(*positions)(i, 0), (*positions)(i, 1), (*positions)(i, 2), next.pos_mass[i].w};
    }
    if (velocities) {
      check_rows(velocities->shape(0), "velocities");
      for (std::size_t i = 0; i < n; ++i) next.velocity[i] = {(*velocities)(i, 0), (*velocities)(i, 1), (*velocities)(i, 2)};
    }
    if (masses) {
      check_rows(masses->shape(0), "masses");
      for (std::size_t i = 0; i < n; ++i) next.pos_mass[i].w = (*masses)(i);
    }
    nb::gil_scoped_release unlocked;
    agree(sim_->ranks(), [&] {
      if (auto const why = driver::bodies_problem(next); !why.empty()) throw InputError(why);
      driver::check_no_shared_positions(next, sim_->config().softening, positions ? "positions" : "the state",
                                        run_.names);
    });
    auto rebuilt = std::make_unique<multigpu::Simulation>(next, sim_->program(), sim_->config(), sim_->clock());
    double const e0 = rebuilt->diagnostics().total();
    sim_ = std::move(rebuilt);
    bodies_set_ = true;  // another course from here: not the checkpoint's
    setup_.course = driver::branch_course(setup_.course, sim_->steps_done(), "bodies set", &next);
    setup_.course_from = sim_->steps_done();
    setup_.branched.reset();  // no setting changed back returns to the bodies before
    e0_ = e0;
    setup_.baseline_step = sim_->steps_done();  // new bodies, a new baseline: a series from before begins again
    if (masses)
      if (std::string notice = driver::massless_notice(next, "the bodies set"); !notice.empty())
        notices_.push_back(std::move(notice));
    invalidate();
    cached_ = std::make_shared<sim::BodySet>(std::move(next));
    state_valid_ = true;
  }

  // Other settings (dt, softening, integrator, devices, threading...) from the next step on, the
  // state and the clock kept bit for bit (driver/steering.h). Nothing changes when it throws.
  void configure(const nb::dict& options) {
    Busy busy(*this, true);
    same_call("configure(" + shown(options) + ")");
    driver::RunConfig run = run_;
    apply_options(run, options, false, false, &setup_.units);
    // What this change names that means nothing to the integrator it leaves (damping or dt with hermite4...) is
    // refused as the constructor refuses it; what earlier settings named is not this change's.
    driver::RunConfig named = run_;
    named.given = driver::GivenSettings{};
    named.devices.engine.kernel.reset();
    named.devices.engine.block_size = 0;
    named.devices.engine.fp64_rsqrt = sim::Fp64Rsqrt::series;
    apply_options(named, options, false, false, &setup_.units);
    driver::check_integrator_options(named);
    std::vector<std::string> notices;
    if (std::string const notice = driver::dt_max_notice(named); !notice.empty()) notices.push_back(notice);
    // Said where this change names what it depends on, not again at every later change.
    if (named.given.eta || named.given.precision || named.given.integrator)
      if (std::string const notice = driver::eta_notice(named); !notice.empty()) notices.push_back(notice);
    // From hermite4 (no fixed step) back to a fixed step, dt not named: the step the simulation had before hermite4,
    // where it had one, else the integrator's default; said either way.
    if (sim_->block_steps() && run.physics.integrator != sim::Integrator::hermite4 &&
        !(options.contains("dt") && !options["dt"].is_none())) {
      run.physics.dt = last_fixed_dt_.value_or(sim::default_dt(run.physics.integrator));
      notices.push_back("dt=" + shortest(run.physics.dt) +
                        (last_fixed_dt_ ? ", the step before hermite4"
                                        : ", " + name_of(run.physics.integrator) + "'s default (it had no fixed step)") +
                        " (dt= sets another)");
    }
    nb::gil_scoped_release unlocked;
    driver::Setup next = driver::with_settings(setup_, *sim_, run, &notices);
    bool const softening_changed = next.config.softening != sim_->config().softening;
    auto rebuilt = std::make_unique<multigpu::Simulation>(next.bodies, next.program, next.config, next.clock, &next.hermite);
    next.bodies = sim::BodySet{};
    // Another softening is another potential: the energy error is measured from the state it starts at.
    if (softening_changed) e0_ = rebuilt->diagnostics().total();
    sim_ = std::move(rebuilt);
    setup_ = std::move(next);
    if (softening_changed) setup_.baseline_step = sim_->steps_done();  // a series begun before measures another
    run_ = run;
    remember_settings();
    notices_.insert(notices_.end(), notices.begin(), notices.end());
  }

  double energy() {
    Busy busy(*this);
    same_call("energy()");
    nb::gil_scoped_release unlocked;
    return sim_->diagnostics().total();
  }

  nb::dict diagnostics() {
    Busy busy(*this);
    same_call("diagnostics()");
    sim::Diagnostics d;
    {
      nb::gil_scoped_release unlocked;
      d = sim_->diagnostics();
    }
    nb::dict out;
    out["time"] = sim_->time();
    out["step"] = sim_->steps_done();
    out["kinetic"] = d.kinetic;
    out["potential"] = d.potential;
    out["total"] = d.total();
    out["initial_energy"] = e0_;
    out["relative_energy_error"] = sim::relative_energy_error(d, e0_);
    out["momentum"] = vec3(d.momentum);
    out["angular_momentum"] = vec3(d.angular_momentum);
    out["centre_of_mass"] = vec3(d.centre_of_mass);
    out["mass"] = d.mass;
    out["virial_ratio"] = d.virial_ratio();
    out["lagrangian_fractions"] = to_numpy<double>({sim::kLagrangianFractions.begin(), sim::kLagrangianFractions.end()}, 3, 0);
    out["lagrangian_radii"] = to_numpy<double>({d.lagrangian_radii.begin(), d.lagrangian_radii.end()}, 3, 0);
    return out;
  }

  // Whether PATH is the output `run_path` of this simulation's run (its checkpoint, its save), from that run's
  // callback: the run holds its lock.
  bool runs_output(const std::string& path, const std::string& run_path) const {
    std::error_code ec_path, ec_run;
    return in_callback_ && !run_path.empty() &&
           std::filesystem::weakly_canonical(path, ec_path) == std::filesystem::weakly_canonical(run_path, ec_run) &&
           !ec_path && !ec_run;
  }
  bool runs_checkpoint(const std::string& path) const { return runs_output(path, run_checkpoint_); }
  // The lock a write of PATH from the run's callback holds as the run, or null: a checkpoint() of the run's checkpoint,
  // a save() of its save (not a snapshot over the checkpoint the run goes on from).
  const WriterLock* run_lock_of(const std::string& path, bool checkpoint) const {
    if (checkpoint) return runs_checkpoint(path) ? run_lock_ : nullptr;
    return runs_output(path, run_save_) ? run_save_lock_ : nullptr;
  }

  // A method's file it may not write, as the call: "Simulation.save('out/'): is a directory; name a file in it"; judged
  // where rank 0 writes, every rank hearing its answer: a file system's state, such as the lock of
  // the run's checkpoint that rank 0 holds, is no other rank's to judge. `own`: the lock of the run's output the path
  // is, written from its callback (run_lock_of), or null.
  void refuse_output_path_on_rank0(const std::string& method, const std::string& path, const WriterLock* own = nullptr) {
    std::string const call = method + "(" + shown(nb::str(path.c_str())) + ")";  // with the GIL held
    nb::gil_scoped_release unlocked;
    agree(sim_->ranks(), [&] {
      if (sim_->ranks().rank() != 0) return;
      CheckpointWrite const as_run(own);
      if (auto const problem = output_path_problem(path); !problem.empty()) throw InputError(call + ": " + problem);
    });
  }

  // format: a tipsy byte order, "" for the default (and for an HDF5 snapshot, which has none). Returns the warnings
  // (a tipsy file whose readers will take other units: driver::save_tipsy), which are notices too.
  std::vector<std::string> save(const std::string& path, const std::string& format) {
    Busy busy(*this);
    auto const f = from_name<sim::TipsyFormat>(format.empty() ? "standard" : format);
    if (!f) throw InputError("format='" + format + "': valid: " + valid_names<sim::TipsyFormat>());
    std::string const call = "Simulation.save(" + shown(nb::str(path.c_str())) + ")";  // with the GIL held
    same_call("save(" + shown(nb::str(path.c_str())) + (format.empty() ? "" : ", format='" + format + "'") + ")");
    driver::check_save(path, call, format.empty() ? "" : "format='" + format + "'");
    const WriterLock* const own = run_lock_of(path, false);  // the run's own save, from its callback
    refuse_output_path_on_rank0("Simulation.save", path, own);
    // Not over the file the simulation was made from, but a file of its kind over the one it was loaded from.
    spare_source({{"Simulation.save", path}}, "", "Simulation.save");
    if (driver::saves_hdf5_snapshot(path)) {
      sim::BodySet const& s = state();
      nb::gil_scoped_release unlocked;
      CheckpointWrite const as_run(own);
      driver::write_snapshot(path, setup_, *sim_, Precision::fp64, &s);
      // On every rank, each of which holds the state: a filter that makes the warning an error raises on every rank
      // alike (nbody/__init__.py's _warn_of_end).
      std::string const why = driver::start_problem(s);
      if (why.empty()) return {};
      notices_.push_back(call + ": " + why);
      return {notices_.back()};
    }
    sim::BodySet const& s = state();
    nb::gil_scoped_release unlocked;
    Ranks const& ranks = sim_->ranks();  // with several, rank 0 writes and every rank learns how it went
    agree(ranks, [&] {
      driver::check_finite(s, sim_->steps_done(), run_.names);
      if (ranks.rank() == 0) driver::check_tipsy_save(path, call, setup_.units);
    });
    driver::TipsySaved saved = [&] {
      CheckpointWrite const as_run(own);
      return driver::save_tipsy(path, call, s, sim_->config().softening, *f, setup_.units, ranks);
    }();
    for (std::string& text : saved.notices) notices_.push_back(std::move(text));
    for (std::string const& text : saved.warnings) notices_.push_back(text);
    return saved.warnings;  // said as warnings too
  }

  // What save() (`checkpoint` false) or checkpoint() at PATH would replace that its readers would miss, as a warning
  // (driver::replaced_state_warning), or "": asked before the write, so that a warning made an error writes nothing.
  std::string replaced_state(const std::string& path, bool checkpoint) {
    Busy busy(*this);
    std::string const method = checkpoint ? "Simulation.checkpoint" : "Simulation.save";
    std::string const given = method + "(" + shown(nb::str(path.c_str())) + ")";
    // A path the write would refuse is refused first, as the write would: the warning is of a file it goes on to
    // replace.
    if (checkpoint)
      driver::check_checkpoint_name(path, given);
    else
      driver::check_save(path, given, "");
    refuse_output_path_on_rank0(method, path, run_lock_of(path, checkpoint));
    if (!checkpoint && !driver::saves_hdf5_snapshot(path)) return {};  // a tipsy file: bodies for another code
    nb::gil_scoped_release unlocked;
    if (checkpoint) driver::refuse_series_checkpoint(path, given, setup_, *sim_, run_.names);  // before any warning
    return driver::replaced_state_warning(path, given, checkpoint, setup_, *sim_, run_.names);
  }

  void checkpoint(const std::string& path) {
    Busy busy(*this);
    same_call("checkpoint(" + shown(nb::str(path.c_str())) + ")");
    driver::check_checkpoint_name(path, "Simulation.checkpoint(" + shown(nb::str(path.c_str())) + ")");
    bool const runs_it = runs_checkpoint(path);
    refuse_output_path_on_rank0("Simulation.checkpoint", path, runs_it ? run_lock_ : nullptr);
    // Not over the file the simulation was made from, but a checkpoint over the checkpoint it continues.
    spare_source({{"Simulation.checkpoint", path}}, "Simulation.checkpoint", "");
    std::string const given = "Simulation.checkpoint(" + shown(nb::str(path.c_str())) + ")";
    nb::gil_scoped_release unlocked;
    driver::refuse_series_checkpoint(path, given, setup_, *sim_, run_.names);
    if (runs_it) {
      CheckpointWrite const own(run_lock_);  // as the run, which holds the path's lock
      driver::write_checkpoint(path, setup_, *sim_, e0_);
    } else {
      driver::write_checkpoint_once(path, given, setup_, *sim_, e0_);
    }
  }

  std::vector<std::string> take_notices() {
    Busy busy(*this);
    std::vector<std::string> n;
    n.swap(notices_);
    return n;
  }

  // Every reader takes its turn too: the simulation may be replaced by a change (configure).
  double time() {
    Busy busy(*this);
    return sim_->time();
  }
  std::uint64_t steps() {
    Busy busy(*this);
    return sim_->steps_done();
  }
  std::size_t bodies() {
    Busy busy(*this);
    return sim_->bodies();
  }
  // hermite4: none (each body takes its own step; dt_max bounds them).
  std::optional<double> dt() {
    Busy busy(*this);
    if (sim_->block_steps()) return std::nullopt;
    return sim_->program().dt;
  }
  // hermite4's settings (what configure() sets; the defaults while another integrator runs).
  double eta() {
    Busy busy(*this);
    return run_.physics.hermite.eta;
  }
  double eta_start() {
    Busy busy(*this);
    return run_.physics.hermite.eta_start;
  }
  double dt_max() {
    Busy busy(*this);
    return run_.physics.hermite.dt_max;
  }
  double softening() {
    Busy busy(*this);
    return sim_->config().softening;
  }
  double damping() {
    Busy busy(*this);
    return setup_.damping;
  }
  double initial_energy() {
    Busy busy(*this);
    return e0_;
  }
  std::string integrator() {
    Busy busy(*this);
    return sim_->program().integrator;
  }
  std::string precision() {
    Busy busy(*this);
    return name_of(sim_->config().engine.precision);
  }
  std::string backend() {
    Busy busy(*this);
    return name_of(sim_->config().backend);
  }
  std::string threading() {
    Busy busy(*this);
    return name_of(sim_->config().threading);
  }
  std::string launch() {
    Busy busy(*this);
    return name_of(sim_->config().launch);
  }
  std::string kernel() {
    Busy busy(*this);
    auto const& c = sim_->config();
    return name_of(c.engine.kernel.value_or(sim::default_kernel(c.backend)));
  }
  std::optional<int> threads() {  // none: every core
    Busy busy(*this);
    int const t = sim_->config().engine.cpu_threads;
    return t > 0 ? std::optional<int>(t) : std::nullopt;
  }
  std::size_t device_count() {
    Busy busy(*this);
    return sim_->config().devices.size();
  }
  std::string describe() {
    Busy busy(*this);
    return sim_->describe();
  }
  std::string source() {
    Busy busy(*this);
    return setup_.source;
  }
  // A time given as text in a physical unit ("10Myr": run's t_end and the series' times), in the simulation's units,
  // within the setting's range (driver::typed_time).
  double time_in_units(const std::string& text, const std::string& name) {
    Busy busy(*this);
    if (!sim::physical_time(text))
      throw InputError(name + "=" + shown(nb::str(text.c_str())) + ": not a time; give a number in the simulation's "
                       "units, or text with a unit (" + sim::kTimeUnitNames + "), e.g. '10Myr'");
    std::string option = "--" + name;
    std::replace(option.begin(), option.end(), '_', '-');
    return driver::typed_time(option, text, setup_.units, run_.names);
  }

  // A time as messages give it: its shortest exact form, and in physical units that too (Units::time_text).
  std::string time_text(double time) {
    Busy busy(*this);
    return setup_.units.time_text(time);
  }

  // What the files call one unit (--mass-unit, --length-unit) and what follows from it; None in N-body units.
  nb::object units() {
    Busy busy(*this);
    sim::Units const& u = setup_.units;
    if (!u.physical()) return nb::none();
    nb::dict d;
    d["mass"] = u.mass;
    d["length"] = u.length;
    d["mass_g"] = u.mass_g;
    d["length_cm"] = u.length_cm;
    d["time_s"] = u.time_s();
    d["velocity_km_s"] = u.velocity_cm_per_s() / 1e5;
    return d;
  }

 private:
  // Calls from two Python threads at once would race on the simulation while one runs without the
  // GIL: the second is refused.
  // One call at a time. Inside run()'s callback the simulation may be read (the run waits for the
  // callback), not stepped or changed (`changes`).
  struct Busy {
    explicit Busy(Engine& e, bool changes = false) : engine(e) {
      if (engine.in_callback_) {
        if (changes)
          throw InputError("the simulation cannot be stepped or changed inside its run callback; return True to "
                           "stop the run, then change it");
        nested = true;
        return;
      }
      if (engine.busy_.exchange(true))
        throw RuntimeFailure("this simulation is busy in another thread (one call at a time)");
    }
    ~Busy() {
      if (!nested) engine.busy_ = false;
    }
    Engine& engine;
    bool nested = false;
  };

  // driver::run as Python follows it: the callback as visit(), Python's signals at each chunk.
  class PythonRun : public driver::RunObserver {
   public:
    PythonRun(Engine& engine, nb::object callback, std::uint64_t every, nb::object self)
        : engine_(engine), callback_(std::move(callback)), every_(every), self_(std::move(self)) {}
    ~PythonRun() override {
      nb::gil_scoped_acquire locked;  // the Python objects go with the GIL held
      callback_.reset();
      self_.reset();
    }
    void progress(std::uint64_t, std::uint64_t, double) override {
      nb::gil_scoped_acquire locked;
      if (!error && PyErr_CheckSignals() != 0) stop_with_python_error();
    }
    // This engine's run's own lock, whatever runs meanwhile (a callback may run another simulation, whose callback
    // checkpoints this one): its callback's checkpoint() of the run's file writes as the run.
    void checkpoint_locked(const WriterLock* lock) override { engine_.run_lock_ = lock; }
    void save_locked(const WriterLock* lock) override { engine_.run_save_lock_ = lock; }
    void notice(const std::string& text) override { engine_.notices_.push_back(text); }  // sim.notices, the log
    // What the command line prints as "warning: ..." (an output lost, a run that does not resolve its orbits): in
    // last_run's "warnings", and a RuntimeWarning at the line that called Simulation.run (warn_level_). One
    // process: when it happens, and where the warnings filter makes it an error, the run stops as at Ctrl-C and
    // raises it. Several ranks: once the run has returned (Engine::warn_after_run), so that every rank raises alike.
    void warning(const std::string& text) override {
      warnings.push_back(text);
      if (engine_.sim_->ranks().size() > 1) return;
      nb::gil_scoped_acquire locked;
      if (!error && PyErr_WarnEx(PyExc_RuntimeWarning, text.c_str(), engine_.warn_level_) != 0) {
        stop_with_python_error();
        by_warning = true;
      }
    }
    // Another run's checkpoint, or a series replaced whole: a warning, when it is known (before the first step), so
    // that a filter that makes it an error stops the run before it replaces anything.
    void replaces(const std::string& text) override { warning(text); }
    // A final checkpoint or save not written: in last_run's "warnings" and "outputs_not_written", raised as
    // nbody.OutputNotWrittenError once the run has ended (Simulation.run), on every rank alike; not a RuntimeWarning too.
    void output_not_written(const driver::OutputNotWritten& lost) override {
      warnings.push_back(lost.output + " not written: " + lost.error);
    }
    std::vector<std::string> warnings;
    bool by_warning = false;  // `error` is a warning that the filter made an error
    bool by_signal = false;   // `error` is a KeyboardInterrupt that came while the callback ran (a signal's)
    std::uint64_t visit_every() const override { return callback_.is_none() ? 0 : every_; }
    bool visit(multigpu::Simulation& sim) override {
      nb::gil_scoped_acquire locked;
      // Several ranks: one whose run is already stopping (a signal seen between visits) calls no callback, and the
      // others must not either: their callback's calls (a read of the state) would meet that rank's vote to stop.
      if (sim.ranks().size() > 1) {
        int any = 0;
        {
          nb::gil_scoped_release unlocked;
          any = sim.ranks().max(error ? 1 : 0);
        }
        if (any) return true;
      } else if (error) {
        return true;
      }
      engine_.invalidate();
      engine_.in_callback_ = true;
      bool stop = false;
      try {
        stop = nb::cast<bool>(nb::bool_(callback_(self_)));
      } catch (nb::python_error& e) {
        by_signal = e.matches(PyExc_KeyboardInterrupt);  // Ctrl-C, or a signal a job script made one
        error.emplace(std::move(e));
        stop = true;
      }
      engine_.in_callback_ = false;
      return stop;
    }
    bool visit_failed() const override { return error.has_value(); }
    std::optional<nb::python_error> error;  // raised once the run has ended

   private:
    void stop_with_python_error() {
      error.emplace();  // takes the raised exception (KeyboardInterrupt) out of the interpreter
      request_interrupt();
    }
    Engine& engine_;
    nb::object callback_;
    std::uint64_t every_;
    nb::object self_;
  };

  static sim::BodySet to_bodies(const Rows3& positions, const Rows3& velocities, const Column& masses) {
    std::size_t const n = positions.shape(0);
    if (velocities.shape(0) != n || masses.shape(0) != n)
      throw InputError("positions, velocities and masses have " + std::to_string(n) + ", " +
                       std::to_string(velocities.shape(0)) + " and " + std::to_string(masses.shape(0)) +
                       " rows; give one row per body in each");
    sim::BodySet b;
    b.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      b.pos_mass[i] = {positions(i, 0), positions(i, 1), positions(i, 2), masses(i)};
      b.velocity[i] = {velocities(i, 0), velocities(i, 1), velocities(i, 2)};
      b.type[i] = sim::BodyType::star;
    }
    return b;
  }

  // The host copy of the current state, downloaded once per state: into the last one's memory,
  // unless an array handed out still holds that (a view of it must keep its values).
  const sim::BodySet& state() {
    if (!state_valid_) {
      same_call("a read of the state (positions, velocities, masses or types)");
      if (!cached_ || cached_.use_count() > 1) cached_ = std::make_shared<sim::BodySet>();
      nb::gil_scoped_release unlocked;
      sim_->state(*cached_);
      state_valid_ = true;
    }
    return *cached_;
  }

  // Under MPI the calls the ranks make together (a step, a run, a read of the state, a change, an output) are made by
  // every rank, with the same arguments, in the same order: a call one rank alone makes would meet another call's
  // messages, of other sizes, in the MPI library (a crash, or memory overwritten). Each such call first agrees on what
  // it is, in an exchange every call makes alike, and a difference is raised on every rank, naming both calls.
  void same_call(const std::string& call) {
    Ranks const& ranks = sim_->ranks();
    if (ranks.size() < 2) return;
    std::vector<std::string> calls;
    {
      nb::gil_scoped_release unlocked;
      calls = ranks.all_gather(call);
    }
    for (std::size_t r = 1; r < calls.size(); ++r)
      if (calls[r] != calls[0])
        throw InputError("rank " + std::to_string(r) + " calls " + calls[r] + " where rank 0 calls " + calls[0] +
                         ": under MPI every rank makes the same calls of a simulation, with the same arguments, in "
                         "the same order (each is collective)");
  }

  // The state changed (a step, a rebuild): the host copy is stale, and so is a device view.
  void invalidate() {
    state_valid_ = false;
    ++generation_;
  }

  // A read-only NumPy array over `data` (in cached_, strides in elements) that holds cached_.
  nb::ndarray<nb::numpy, const double> view(const double* data, std::initializer_list<std::size_t> shape,
                                            std::initializer_list<std::int64_t> strides) {
    static_assert(sizeof(Real4<double>) == 4 * sizeof(double) && sizeof(Vec3d) == 3 * sizeof(double),
                  "the views' strides assume packed rows");
    auto* holder = new std::shared_ptr<const sim::BodySet>(cached_);
    nb::capsule owner(holder, [](void* p) noexcept { delete static_cast<std::shared_ptr<const sim::BodySet>*>(p); });
    return nb::ndarray<nb::numpy, const double>(data, shape, owner, strides);
  }

  // Refuses an output that would replace the file the simulation was made from (driver::check_outputs_spare_inputs).
  void spare_source(const std::vector<std::pair<std::string, std::string>>& outputs,
                    const std::string& checkpoint_option, const std::string& save_option,
                    const driver::SnapshotSeries* snapshots = nullptr) const {
    driver::RunConfig made = run_;
    made.initial = source_;
    driver::check_outputs_spare_inputs(made, outputs, checkpoint_option, save_option, snapshots, "--snapshots");
  }

  // What the simulation resolved (the integrator's default dt, the scenario's softening) becomes
  // the setting kept: a later change of one setting leaves the others as they run now.
  void remember_settings() {
    // hermite4 has no dt of its own (the program's is dt_max): a dt would refuse every later change.
    run_.physics.dt = sim_->block_steps() ? 0.0 : sim_->program().dt;
    if (!sim_->block_steps()) last_fixed_dt_ = sim_->program().dt;
    if (sim_->program().hermite) run_.physics.hermite = *sim_->program().hermite;
    run_.physics.softening = sim_->config().softening;
    if (run_.physics.softening == 0.0) run_.given.softening = true;  // hermite4's none, not "the scenario's"
    run_.physics.damping = setup_.damping;
    run_.physics.integrator = *from_name<sim::Integrator>(sim_->program().integrator);
    run_.devices.engine.precision = sim_->config().engine.precision;
    run_.initial = driver::InitialConditions{};
    invalidate();
  }

  // The ranks of a caller's communicator (null: world()), which run_ and the simulation point to:
  // first, so that it goes last.
  std::unique_ptr<Ranks> ranks_;
  driver::RunConfig run_;
  driver::InitialConditions source_;  // what the simulation was made from: its checkpoint or tipsy file, if any
  bool bodies_set_ = false;           // set_bodies() gave it other bodies than source_'s
  driver::Setup setup_;
  driver::ContinuedEnd continued_;  // a restart's recorded end (continued_end), while nothing has stepped
  std::uint64_t continued_at_ = 0;
  bool continued_blocks_ = false;
  std::optional<double> last_fixed_dt_;  // the last fixed step the simulation ran, for a switch back from hermite4
  std::shared_ptr<std::atomic<bool>> cancel_;  // the start's (made()), which the simulation's config points to
  std::unique_ptr<multigpu::Simulation> sim_;
  double e0_ = 0;
  nb::object last_run_ = nb::none();  // run()'s outcome
  std::vector<std::string> notices_;
  // The stack level of the script's line that called run() or integrate() (the first frame outside the package), for
  // the run's RuntimeWarnings, as the package counts it from the frame that calls Engine.run.
  int warn_level_ = 2;
  std::shared_ptr<sim::BodySet> cached_;  // state(); shared with the arrays that view it
  bool state_valid_ = false;
  std::uint64_t generation_ = 0;  // counts the states: a device view is of one of them
  std::vector<std::string> setup_warnings_;  // warn_of_setup()
  bool in_callback_ = false;  // run() is calling its callback: reads only
  std::string run_checkpoint_;  // the checkpoint path of the run under way, whose lock that run holds
  const WriterLock* run_lock_ = nullptr;  // that lock, while the run runs (null: none held)
  std::string run_save_;                       // the save path of the run under way, whose lock it holds
  const WriterLock* run_save_lock_ = nullptr;  // that lock, while the run runs
  std::atomic<bool> busy_{false};
};

nb::list devices() {
  std::string why_none;
  auto const list = gpu::devices(&why_none);
  std::vector<int> ordinals;
  for (auto const& d : list) ordinals.push_back(d.ordinal);
  gpu::Topology const topology = ordinals.empty() ? gpu::Topology{} : gpu::query_topology(ordinals);
  nb::list out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    auto const& d = list[i];
    nb::dict g;
    g["ordinal"] = d.ordinal;
    g["name"] = d.name;
    g["multiprocessors"] = d.multiprocessors;
    g["memory_bytes"] = d.memory_bytes;
    g["compute_capability"] = nb::make_tuple(d.major, d.minor);
    g["clock_mhz"] = d.clock_mhz;
    g["uuid"] = d.uuid;
    nb::list peers;
    for (std::size_t j = 0; j < list.size(); ++j)
      if (j != i && topology.can_access.at(i).at(j)) peers.append(list[j].ordinal);
    g["peers"] = peers;
    out.append(g);
  }
  return out;
}

std::string why_no_devices() {
  std::string why;
  if (gpu::devices(&why).empty()) return why;
  return {};
}

}  // namespace
}  // namespace nbody::python

NB_MODULE(_nbody, m) {
  using nbody::python::Engine;
  m.doc() = "nbody's native engine; use the nbody package (nbody.Simulation) instead.";
  m.attr("__version__") = nbody::kVersion;  // the command line's --version, a checkpoint's Code
  // The settings' keywords, for the package's check of a misspelt one (it names the one meant), and the start's.
  nb::list settings;
  for (const char* key : nbody::python::kSettingKeys) settings.append(key);
  m.attr("SETTING_KEYWORDS") = nb::tuple(settings);
  nb::list start;
  for (const char* key : nbody::python::kStartKeys) start.append(key);
  m.attr("START_KEYWORDS") = nb::tuple(start);  // where a simulation starts: nbody.Simulation's alone
  // Bad input is a ValueError with the library's one-line message; a failure of the machine a
  // RuntimeError; an interrupt seen by the library (a signal it recorded) a KeyboardInterrupt.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const nbody::InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const nbody::Interrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const nbody::RuntimeFailure& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const nbody::JobFailure& e) {  // a failure on any rank of a communicator, on every rank
      PyErr_SetString(e.exit_code == 2 ? PyExc_ValueError : PyExc_RuntimeError, e.what());
    }
  });
  nb::class_<Engine>(m, "Engine")
      .def_static("create", &Engine::create, "options"_a, "comm"_a.none() = nb::none())
      .def_static("from_arrays", &Engine::from_arrays, "positions"_a, "velocities"_a, "masses"_a, "time"_a, "options"_a,
                  "comm"_a.none() = nb::none())
      .def_static("load", &Engine::load, "path"_a, "options"_a, "comm"_a.none() = nb::none())
      .def_static("restart", &Engine::restart, "path"_a, "options"_a, "comm"_a.none() = nb::none())
      .def("advance", &Engine::advance, "steps"_a)
      .def("synchronize", &Engine::synchronize)
      .def("benchmark", &Engine::benchmark, "steps"_a, "warmup"_a)
      .def("note_end", &Engine::note_end, "t_end"_a, "typed"_a)
      .def_prop_ro("last_run", &Engine::last_run)
      .def("device_positions", &Engine::device_positions)
      .def_prop_ro("generation", &Engine::generation)
      .def("warn_of_setup", &Engine::warn_of_setup, "stacklevel"_a)
      .def("run", &Engine::run, "steps"_a, "callback"_a.none(), "every"_a, "self"_a, "outputs"_a)
      .def("steps_to", &Engine::steps_to, "t_end"_a, "typed"_a, "finish"_a)
      .def("continued_end", &Engine::continued_end)
      .def("positions", &Engine::positions)
      .def("velocities", &Engine::velocities)
      .def("masses", &Engine::masses)
      .def("types", &Engine::types)
      .def("time_steps", &Engine::time_steps)
      .def("set_bodies", &Engine::set_bodies, "positions"_a.none(), "velocities"_a.none(), "masses"_a.none())
      .def("configure", &Engine::configure, "options"_a)
      .def("energy", &Engine::energy)
      .def("diagnostics", &Engine::diagnostics)
      .def("save", &Engine::save, "path"_a, "format"_a)
      .def("checkpoint", &Engine::checkpoint, "path"_a)
      .def("replaced_state", &Engine::replaced_state, "path"_a, "checkpoint"_a)
      .def("take_notices", &Engine::take_notices)
      .def_prop_ro("time", &Engine::time)
      .def_prop_ro("steps", &Engine::steps)
      .def_prop_ro("bodies", &Engine::bodies)
      .def_prop_ro("dt", &Engine::dt)
      .def_prop_ro("eta", &Engine::eta)
      .def_prop_ro("eta_start", &Engine::eta_start)
      .def_prop_ro("dt_max", &Engine::dt_max)
      .def_prop_ro("softening", &Engine::softening)
      .def_prop_ro("damping", &Engine::damping)
      .def_prop_ro("initial_energy", &Engine::initial_energy)
      .def_prop_ro("integrator", &Engine::integrator)
      .def_prop_ro("precision", &Engine::precision)
      .def_prop_ro("backend", &Engine::backend)
      .def_prop_ro("threading", &Engine::threading)
      .def_prop_ro("launch", &Engine::launch)
      .def_prop_ro("kernel", &Engine::kernel)
      .def_prop_ro("threads", &Engine::threads)
      .def_prop_ro("device_count", &Engine::device_count)
      .def_prop_ro("description", &Engine::describe)
      .def_prop_ro("source", &Engine::source)
      .def_prop_ro("units", &Engine::units)
      .def("time_text", &Engine::time_text, "time"_a)
      .def("time_in_units", &Engine::time_in_units, "text"_a, "name"_a);
  m.def("devices", &nbody::python::devices);
  m.def("why_no_devices", &nbody::python::why_no_devices);
  m.def("cuda_built", &nbody::sim::cuda_built);
  m.def("checkpoints_built", &nbody::sim::checkpoints_built);
  m.def("mpi_built", &nbody::mpi::mpi_built);
  m.def("mpi_library_version", &nbody::mpi::library_version);
  m.def("names", [](const std::string& what) -> std::vector<std::string> {
    using namespace nbody;
    // Every keyword that takes a name from a list (save's is its format), in one table: the refusal lists them.
    static const std::vector<std::pair<std::string, std::vector<std::string>>> lists{
        {"scenario", all_names<sim::Scenario>()},         {"integrator", all_names<sim::Integrator>()},
        {"precision", all_names<Precision>()},            {"backend", all_names<driver::BackendChoice>()},
        {"threading", all_names<multigpu::Threading>()},  {"launch", all_names<multigpu::Launch>()},
        {"exchange", all_names<multigpu::ExchangeMode>()}, {"kernel", all_names<sim::Kernel>()},
        {"fp64_rsqrt", all_names<sim::Fp64Rsqrt>()},      {"snapshot_precision", all_names<Precision>()},
        {"format", all_names<sim::TipsyFormat>()}};
    std::string listed;
    for (auto const& [name, names] : lists) {
      if (name == what) return names;
      listed += (listed.empty() ? "" : ", ") + name;
    }
    throw nbody::InputError("no names for '" + what + "': the keywords that take a name from a list are " + listed);
  });
}
