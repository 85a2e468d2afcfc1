// app/run_config_json.cpp - RunConfig <-> JSON, every field; enums by their names.
#include "app/run_config_json.h"

#include "core/errors.h"

namespace nbody::app {
namespace {

template <class E>
E enum_from(const nlohmann::json& j) {
  auto const e = from_name<E>(j.get<std::string>());
  if (!e) throw RuntimeFailure("run configuration: unknown name '" + j.get<std::string>() + "'");
  return *e;
}

}  // namespace

nlohmann::json to_json(const driver::RunConfig& r) {
  auto const& i = r.initial;
  auto const& p = r.physics;
  auto const& d = r.devices;
  auto const& g = r.given;
  return {{"initial",
           {{"scenario", name_of(i.scenario)}, {"bodies", i.bodies}, {"seed", i.seed}, {"eccentricity", i.eccentricity},
            {"snapshot", i.snapshot}, {"checkpoint", i.checkpoint}}},
          {"physics",
           {{"integrator", name_of(p.integrator)}, {"dt", p.dt}, {"damping", p.damping}, {"softening", p.softening}}},
          {"devices",
           {{"backend", name_of(d.backend)}, {"count", d.count}, {"gpus", d.gpus}, {"weights", d.weights},
            {"threading", name_of(d.threading)}, {"launch", name_of(d.launch)}, {"exchange", name_of(d.exchange)}, {"cpu_threads", d.cpu_threads},
            {"precision", name_of(d.precision)}, {"kernel", d.kernel ? name_of(*d.kernel) : std::string()},
            {"block_size", d.block_size}, {"fp64_rsqrt", name_of(d.fp64_rsqrt)}}},
          {"given",
           {{"integrator", g.integrator}, {"dt", g.dt}, {"damping", g.damping}, {"softening", g.softening},
            {"precision", g.precision}}}};
}

driver::RunConfig run_config_from_json(const nlohmann::json& j) {
  try {
    driver::RunConfig r;
    auto const& i = j.at("initial");
    r.initial.scenario = enum_from<sim::Scenario>(i.at("scenario"));
    r.initial.bodies = i.at("bodies").get<std::size_t>();
    r.initial.seed = i.at("seed").get<std::uint64_t>();
    r.initial.eccentricity = i.at("eccentricity").get<double>();
    r.initial.snapshot = i.at("snapshot").get<std::string>();
    r.initial.checkpoint = i.at("checkpoint").get<std::string>();
    auto const& p = j.at("physics");
    r.physics.integrator = enum_from<sim::Integrator>(p.at("integrator"));
    r.physics.dt = p.at("dt").get<double>();
    r.physics.damping = p.at("damping").get<double>();
    r.physics.softening = p.at("softening").get<double>();
    auto const& d = j.at("devices");
    r.devices.backend = enum_from<driver::BackendChoice>(d.at("backend"));
    r.devices.count = d.at("count").get<int>();
    r.devices.gpus = d.at("gpus").get<std::vector<int>>();
    r.devices.weights = d.at("weights").get<std::vector<double>>();
    r.devices.threading = enum_from<multigpu::Threading>(d.at("threading"));
    r.devices.launch = enum_from<multigpu::Launch>(d.at("launch"));
    r.devices.exchange = enum_from<multigpu::ExchangeMode>(d.at("exchange"));
    r.devices.cpu_threads = d.at("cpu_threads").get<int>();
    r.devices.precision = enum_from<Precision>(d.at("precision"));
    if (!d.at("kernel").get<std::string>().empty()) r.devices.kernel = enum_from<sim::Kernel>(d.at("kernel"));
    r.devices.block_size = d.at("block_size").get<int>();
    r.devices.fp64_rsqrt = enum_from<sim::Fp64Rsqrt>(d.at("fp64_rsqrt"));
    auto const& g = j.at("given");
    r.given.integrator = g.at("integrator").get<bool>();
    r.given.dt = g.at("dt").get<bool>();
    r.given.damping = g.at("damping").get<bool>();
    r.given.softening = g.at("softening").get<bool>();
    r.given.precision = g.at("precision").get<bool>();
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeFailure(std::string("run configuration: ") + e.what());
  }
}

}  // namespace nbody::app
