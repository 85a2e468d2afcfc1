// app/run_config_json.cpp - RunConfig <-> JSON, every field; enums by their names.
#include "app/run_config_json.h"

#include <optional>
#include <type_traits>

#include "core/errors.h"

namespace nbody::app {
namespace {

template <class E>
E enum_from(const nlohmann::json& j) {
  auto const e = from_name<E>(j.get<std::string>());
  if (!e) throw RuntimeFailure("run configuration: unknown name '" + j.get<std::string>() + "'");
  return *e;
}

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

// One engine setting (sim::for_each_engine_setting) as JSON: an enum by its name, an unset optional
// as "", a number as itself.
template <class T>
nlohmann::json setting_to_json(const T& value) {
  if constexpr (std::is_enum_v<T>) return name_of(value);
  else if constexpr (IsOptional<T>::value) return value ? setting_to_json(*value) : nlohmann::json("");
  else return value;
}

template <class T>
void setting_from_json(const nlohmann::json& j, T& value) {
  if constexpr (std::is_enum_v<T>) value = enum_from<T>(j);
  else if constexpr (IsOptional<T>::value) {
    if (j.is_string() && j.get<std::string>().empty()) value.reset();
    else setting_from_json(j, value.emplace());
  } else value = j.get<T>();
}

}  // namespace

nlohmann::json to_json(const driver::RunConfig& r) {
  auto const& i = r.initial;
  auto const& p = r.physics;
  auto const& d = r.devices;
  auto const& g = r.given;
  nlohmann::json devices{{"backend", name_of(d.backend)}, {"count", d.count}, {"gpus", d.gpus}, {"weights", d.weights},
                         {"threading", name_of(d.threading)}, {"launch", name_of(d.launch)},
                         {"exchange", name_of(d.exchange)}};
  sim::for_each_engine_setting(d.engine,
                               [&](const char* name, const auto& value) { devices[name] = setting_to_json(value); });
  return {{"initial",
           {{"scenario", name_of(i.scenario)}, {"bodies", i.bodies}, {"seed", i.seed}, {"eccentricity", i.eccentricity},
            {"snapshot", i.snapshot}, {"checkpoint", i.checkpoint}}},
          {"physics",
           {{"integrator", name_of(p.integrator)}, {"dt", p.dt}, {"damping", p.damping}, {"softening", p.softening},
            {"eta", p.hermite.eta}, {"eta_start", p.hermite.eta_start}, {"dt_max", p.hermite.dt_max}}},
          {"devices", devices},
          {"given",
           {{"integrator", g.integrator}, {"dt", g.dt}, {"damping", g.damping}, {"softening", g.softening},
            {"precision", g.precision}, {"eta", g.eta}, {"eta_start", g.eta_start}, {"dt_max", g.dt_max}}}};
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
    // hermite4's settings: absent from configurations saved before it, which keep the defaults.
    r.physics.hermite.eta = p.value("eta", r.physics.hermite.eta);
    r.physics.hermite.eta_start = p.value("eta_start", r.physics.hermite.eta_start);
    r.physics.hermite.dt_max = p.value("dt_max", r.physics.hermite.dt_max);
    auto const& d = j.at("devices");
    r.devices.backend = enum_from<driver::BackendChoice>(d.at("backend"));
    r.devices.count = d.at("count").get<int>();
    r.devices.gpus = d.at("gpus").get<std::vector<int>>();
    r.devices.weights = d.at("weights").get<std::vector<double>>();
    r.devices.threading = enum_from<multigpu::Threading>(d.at("threading"));
    r.devices.launch = enum_from<multigpu::Launch>(d.at("launch"));
    r.devices.exchange = enum_from<multigpu::ExchangeMode>(d.at("exchange"));
    sim::for_each_engine_setting(r.devices.engine,
                                 [&](const char* name, auto& value) { setting_from_json(d.at(name), value); });
    auto const& g = j.at("given");
    r.given.integrator = g.at("integrator").get<bool>();
    r.given.dt = g.at("dt").get<bool>();
    r.given.damping = g.at("damping").get<bool>();
    r.given.softening = g.at("softening").get<bool>();
    r.given.precision = g.at("precision").get<bool>();
    r.given.eta = g.value("eta", false);
    r.given.eta_start = g.value("eta_start", false);
    r.given.dt_max = g.value("dt_max", false);
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeFailure(std::string("run configuration: ") + e.what());
  }
}

}  // namespace nbody::app
