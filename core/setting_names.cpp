// core/setting_names.cpp - the command line's names of settings as Python's.
#include "core/setting_names.h"

namespace nbody {

namespace {

// Python's name of one "--word-word" option: the two with no keyword (--restart, --load) by their methods, --bodies
// by its keyword, the rest with '_' for '-'.
std::string keyword_of(const std::string& option) {
  if (option == "--bodies") return "n";
  if (option == "--restart") return "Simulation.restart";
  if (option == "--load") return "Simulation.load";
  std::string out;
  for (std::size_t i = 2; i < option.size(); ++i) out += option[i] == '-' ? '_' : option[i];
  return out;
}

}  // namespace

std::string SettingNames::name(const std::string& option) const {
  if (!keywords) return option;
  // Every "--word-word" in it ("--mass-unit and --length-unit" names two).
  std::string out;
  for (std::size_t i = 0; i < option.size();) {
    if (option.compare(i, 2, "--") == 0 && (i == 0 || option[i - 1] == ' ')) {
      std::size_t const end = option.find(' ', i);
      std::size_t const stop = end == std::string::npos ? option.size() : end;
      out += keyword_of(option.substr(i, stop - i));
      i = stop;
    } else {
      out += option[i++];
    }
  }
  return out;
}

std::string SettingNames::entry(const std::string& option) const {
  if (keywords && option == "--checkpoint") return "Simulation.checkpoint";
  return name(option);
}

std::string SettingNames::with(const std::string& option, const std::string& value) const {
  if (typed.count(option)) return setting(option).with(value);
  if (!keywords) return option + " " + value;
  // An entry point with its argument is a call: "Simulation.restart('run.h5')".
  if (std::string const method = name(option); method.rfind("Simulation.", 0) == 0) return method + "(" + value + ")";
  // One keyword: "eta_start=0.5"; several ("--mass-unit and --length-unit"): "mass_unit and length_unit (...)".
  return name(option) + (option.find(' ') == std::string::npos ? "=" + value : " (" + value + ")");
}

NamedSetting SettingNames::setting(const std::string& option) const {
  auto const t = typed.find(option);
  return {name(option), t == typed.end() ? std::string() : t->second, keywords};
}

std::string NamedSetting::with(const std::string& value) const {
  if (!typed.empty()) return keyword ? name + "='" + typed + "'" : name + " " + typed;
  return name + (keyword ? "=" : " ") + value;
}

std::string SettingNames::with_text(const std::string& option, const std::string& value) const {
  return keywords ? with(option, "'" + value + "'") : with(option, value);
}

std::string SettingNames::quoted(const std::string& option, const std::string& value) const {
  return keywords ? with(option, "'" + value + "'") : option + " '" + value + "'";
}

std::string spoken_list(const std::vector<std::string>& names) {
  std::string list;
  for (std::size_t k = 0; k < names.size(); ++k)
    list += (k == 0 ? "" : k + 1 == names.size() ? " and " : ", ") + names[k];
  return list;
}

}  // namespace nbody
