// tests/rejection.h - the assertion that bad input is refused with the right words (core layer only,
// so every test can use it).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/errors.h"

namespace nbody::test {

// Passes when f() throws an InputError whose message contains `words`; fails, saying what happened,
// when it throws another message or nothing at all.
template <class F>
::testing::AssertionResult rejected_with(F&& f, const std::string& words) {
  try {
    f();
  } catch (const InputError& e) {
    if (std::string(e.what()).find(words) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "message '" << e.what() << "' lacks '" << words << "'";
  }
  return ::testing::AssertionFailure() << "accepted; expected an error with '" << words << "'";
}

}  // namespace nbody::test
