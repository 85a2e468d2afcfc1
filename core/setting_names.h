// core/setting_names.h - how a message names a setting or an entry point: as the command line spells it, or as
// Python does. Every layer that explains an error in terms of what the user gave (the driver, the file readers,
// the units) takes one, so that each front end's users read their own spelling.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace nbody {

// One setting as a message names it beside its value: an option as the front end spells it, as typed where it was
// given as text that became a number (a time in a unit), or a value's source that is no option (a file's attribute,
// "c.h5's Header/EndTime"). SettingNames::setting() makes one; a layer that words a setting's value takes one.
struct NamedSetting {
  std::string name = {};  // "--t-end", "t_end", "c.h5's Header/EndTime": the setting without its value
  std::string typed = {};  // the text its value was given as ("10Myr"), or "" where the value is its number
  bool keyword = false;  // Python's spelling: name=value, name='typed'
  // "--t-end 5", "t_end=5", "--t-end 10Myr", "t_end='10Myr'", "c.h5's Header/EndTime 5": `value` where nothing was
  // typed, else the text typed.
  std::string with(const std::string& value) const;
};

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
  // A setting for a layer that words its value itself (NamedSetting::with): the option's name, and its text if typed.
  NamedSetting setting(const std::string& option) const;
  // A text value as given, quoted either way: "--mass-unit '1e5Msun'", "mass_unit='1e5Msun'".
  std::string quoted(const std::string& option, const std::string& value) const;
};

// Names as a sentence lists them: "a", "a and b", "a, b and c" ("" for none).
std::string spoken_list(const std::vector<std::string>& names);

}  // namespace nbody
