// tests/gtest_main.cpp - GoogleTest's main, plus: exit code 77 when every test that ran was
// skipped (no GPU, too few GPUs), which CTest's SKIP_RETURN_CODE reports as "skipped".
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int const status = RUN_ALL_TESTS();
  auto const& unit = *::testing::UnitTest::GetInstance();
  if (status == 0 && unit.skipped_test_count() > 0 && unit.successful_test_count() == 0) return 77;
  return status;
}
