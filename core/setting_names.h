// core/setting_names.h - how a message names a setting or an entry point: as the command line spells it, or as
// Python does. Every layer that explains an error in terms of what the user gave (the driver, the file readers,
// the units) takes one, so that each front end's users read their own spelling.
#pragma once

#include <string>

namespace nbody {

// The command line's spelling is the reference: a message is written with it ("--eta-start", "--restart") and
// turned into Python's where `keywords` is set.
//  - a setting: "--eta-start" is "eta_start", "--bodies" is "n";
//  - an entry point that reads or writes a file: "--restart" is "Simulation.restart", "--load" is
//    "Simulation.load", "--checkpoint" is "Simulation.checkpoint".
struct SettingNames {
  bool keywords = false;
  std::string name(const std::string& option) const;  // "--eta-start" or "eta_start"
  std::string with(const std::string& option, const std::string& value) const;  // "--eta-start 0.5", "eta_start=0.5"
  std::string with_text(const std::string& option, const std::string& value) const;  // "... hermite4", "...='hermite4'"
  // A text value as given, quoted either way: "--mass-unit '1e5Msun'", "mass_unit='1e5Msun'".
  std::string quoted(const std::string& option, const std::string& value) const;
};

}  // namespace nbody
