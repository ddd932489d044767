// A framework's exception becomes the cell's failure with a readable cause: the message a corrupted
// model file produced (tests/e2e/test_corrupt_models_cli.cpp) came with line breaks around it, and
// one that is not a std::exception must not end the worker.
#include <gtest/gtest.h>

#include <stdexcept>

#include "harness/measure_cell.hpp"

namespace {

using infermark::harness::measure_in_stages;
using infermark::result::CellRequest;
using infermark::result::CellStatus;

CellRequest request() {
  CellRequest r;
  r.backend = "libtorch";
  r.model = "broken.pt";
  return r;
}

infermark::result::RunResult failing_with(const std::function<void()>& raise) {
  return measure_in_stages(request(), {}, [&](auto&, auto&, const auto& enter) {
    enter("loading the model");
    raise();
  });
}

TEST(MeasureInStages, AFrameworkMessageLosesItsSurroundingLineBreaks) {
  const auto result = failing_with([] { throw std::runtime_error("\nUnknown type name 'Conv2d':\n  File \"code/x.py\"\n\n"); });
  EXPECT_EQ(result.status, CellStatus::kFailed);
  EXPECT_EQ(result.error, "libtorch: Unknown type name 'Conv2d':\n  File \"code/x.py\" (while loading the model)");
}

TEST(MeasureInStages, AnEmptyMessageStillSaysWhatFailed) {
  const auto result = failing_with([] { throw std::runtime_error(" \n"); });
  EXPECT_EQ(result.status, CellStatus::kFailed);
  EXPECT_EQ(result.error, "libtorch: an exception without a message (while loading the model)");
}

TEST(MeasureInStages, AnExceptionOfAnotherTypeIsTheCellsFailure) {
  const auto result = failing_with([] { throw 42; });
  EXPECT_EQ(result.status, CellStatus::kFailed);
  EXPECT_EQ(result.error, "libtorch: an exception that is not a std::exception (while loading the model)");
}

}  // namespace
