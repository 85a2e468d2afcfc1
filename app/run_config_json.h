// app/run_config_json.h - a RunConfig as JSON: how the viewer's rank 0 tells the other ranks of an
// MPI run what the user changed.
#pragma once

#include <nlohmann/json.hpp>

#include "driver/config.h"

namespace nbody::app {

nlohmann::json to_json(const driver::RunConfig& run);
// Throws RuntimeFailure for JSON that is not a RunConfig (only nbody writes it).
driver::RunConfig run_config_from_json(const nlohmann::json& j);

}  // namespace nbody::app
