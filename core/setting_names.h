// core/setting_names.h - how a message names a setting or an entry point: as the command line spells it, or as
// Python does. Every layer that explains an error in terms of what the user gave (the driver, the file readers,
// the units) takes one, so that each front end's users read their own spelling.
#pragma once

#include <map>
#include <string>

namespace nbody {

// The command line's spelling is the reference: a message is written with it ("--eta-start", "--restart") and
// turned into Python's where `keywords` is set.
//  - name(): a setting or an output, as Python's keyword: "--eta-start" is "eta_start", "--bodies" is "n",
//    "--checkpoint" is run()'s "checkpoint"; the options with no keyword are the methods that take their file:
//    "--restart" is "Simulation.restart", "--load" is "Simulation.load";
//  - entry(): what reads or writes a file, as a method: also "--checkpoint" is "Simulation.checkpoint" (for "a file
//    written by ...").
struct SettingNames {
  bool keywords = false;
  // The settings given as text that became a number (a time with a unit: "--dt" -> "1kyr"): with() names them as
  // typed, not as the number it was taken to be in the run's units, which a user did not write.
  std::map<std::string, std::string> typed = {};
  std::string name(const std::string& option) const;   // "--eta-start" or "eta_start"
  std::string entry(const std::string& option) const;  // "--checkpoint" or "Simulation.checkpoint"
  // "--eta-start 0.5", "eta_start=0.5"; an entry point as a call: "--restart run.h5", "Simulation.restart(run.h5)".
  // A setting of `typed` with its text instead of `value`: "--dt 1kyr", "dt='1kyr'".
  std::string with(const std::string& option, const std::string& value) const;
  std::string with_text(const std::string& option, const std::string& value) const;  // "... hermite4", "...='hermite4'"
  // How a message that adds the value itself names a setting: "--t-end" or "t_end=" (a value to follow), or, for one
  // of `typed`, with its text ("--t-end 10Myr", "t_end='10Myr'"), which the value is not to follow.
  std::string named(const std::string& option) const;
  // A text value as given, quoted either way: "--mass-unit '1e5Msun'", "mass_unit='1e5Msun'".
  std::string quoted(const std::string& option, const std::string& value) const;
};

}  // namespace nbody
