#include "loadgen/system_under_test.hpp"

#include <future>

#include "core/error.hpp"

namespace infermark::loadgen {

void SystemUnderTest::start(const Query&, Completion&, std::function<void(bool)>) {
  throw Error("this system under test runs queries on lanes (issue), not asynchronously (start)");
}

void start_and_wait(SystemUnderTest& system, const Query& query, Completion& completion) {
  std::promise<bool> finished;
  system.start(query, completion, [&finished](bool succeeded) { finished.set_value(succeeded); });
  if (!finished.get_future().get()) throw Error("query " + std::to_string(query.id) + " failed");
}

}  // namespace infermark::loadgen
