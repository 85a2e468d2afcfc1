// core/enum_names.h - enums a user names (on the command line, in a file): one table per enum gives
// its names, so parsing, printing and the list of valid names come from one place.
//
// An enum E takes part by declaring, in its own namespace, a function that argument-dependent
// lookup finds:
//     constexpr const auto& enum_names(E) { return kTable; }   // kTable: std::array<EnumName<E>, K>
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nbody {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

// The name of `value` ("?" for a value outside the table).
template <class E>
std::string name_of(E value) {
  for (auto const& entry : enum_names(E{}))
    if (entry.value == value) return entry.name;
  return "?";
}

// The value named `text` exactly, or nothing.
template <class E>
std::optional<E> from_name(std::string_view text) {
  for (auto const& entry : enum_names(E{}))
    if (text == entry.name) return entry.value;
  return std::nullopt;
}

// Every name, in table order.
template <class E>
std::vector<std::string> all_names() {
  std::vector<std::string> names;
  for (auto const& entry : enum_names(E{})) names.emplace_back(entry.name);
  return names;
}

// "a, b, c": the valid names, as error messages list them.
template <class E>
std::string valid_names() {
  std::string s;
  for (auto const& entry : enum_names(E{})) s += (s.empty() ? "" : ", ") + std::string(entry.name);
  return s;
}

}  // namespace nbody
