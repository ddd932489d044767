// What the load generator drives, in MLPerf LoadGen's terms the "system under test": a number of
// independent lanes, each able to run one query at a time. Local sessions and remote servers
// both implement it, so every scenario works on both.
#pragma once

namespace infermark::loadgen {

class SystemUnderTest {
 public:
  virtual ~SystemUnderTest() = default;
  // Lanes that may run queries at the same time (clients, infer requests, connections).
  virtual int lanes() const = 0;
  // Runs one query on `lane` and returns when it completes; throws when the query fails.
  virtual void issue(int lane) = 0;
};

}  // namespace infermark::loadgen
