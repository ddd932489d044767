#include "loadgen/system_under_test.hpp"

#include "core/error.hpp"

namespace infermark::loadgen {

void SystemUnderTest::start(const Query&, Completion&, std::function<void(bool)>) {
  throw Error("this system under test runs queries on lanes (issue), not asynchronously (start)");
}

}  // namespace infermark::loadgen
