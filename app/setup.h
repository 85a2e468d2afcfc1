// app/setup.h - turning options into bodies, a step program and a simulation configuration.
#pragma once

#include <string>

#include "app/options.h"
#include "multigpu/simulation.h"
#include "sim/physics/body_set.h"
#include "sim/physics/integrator.h"

namespace nbody::app {

struct Setup {
  sim::BodySet bodies;
  sim::StepProgram program;
  multigpu::SimulationConfig config;
  std::string source;  // "plummer (seed 42)" or the loaded file
};

// Prints notices (backend fallback) to stderr unless quiet. Throws InputError for bad input:
// unknown names, a missing or corrupt file, more GPUs than visible, too little memory.
Setup make_setup(const Options& options, std::size_t bodies);

// Backend and device list only (no bodies): used by make_setup and --compare-threading.
multigpu::SimulationConfig make_config(const Options& options, std::size_t bodies);

// The available bytes of host memory (MemAvailable), or 0 if unknown.
std::size_t available_host_memory();

// Writes `text` whole or not at all (write_file_atomically).
void write_text_file(const std::string& path, const std::string& text);

}  // namespace nbody::app
