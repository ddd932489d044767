// The system under test for in-process frameworks: lanes map onto request slots of one session
// when the framework allows concurrent requests on a session, otherwise onto one session per lane.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "loadgen/system_under_test.hpp"

namespace infermark::harness {

class LocalSystem final : public loadgen::SystemUnderTest {
 public:
  // Takes the already opened `first` session; opens more from `backend` when the framework's
  // session cannot serve `lanes` concurrent requests, or when `separate_sessions` asks for copies.
  LocalSystem(Backend& backend, const std::filesystem::path& model, const SessionOptions& options,
              std::unique_ptr<Session> first, const std::vector<Tensor>& inputs, int lanes, bool separate_sessions = false);

  int lanes() const override { return lanes_; }
  void issue(int lane) override {
    const auto& route = routes_[static_cast<std::size_t>(lane)];
    route.session->run(route.slot);
  }

  Session& primary() { return *sessions_.front(); }
  // "one session, 4 request slots" or "4 sessions (the framework's session serves one request at a time)".
  std::string sharing() const;

 private:
  struct Route {
    Session* session;
    int slot;
  };
  std::vector<std::unique_ptr<Session>> sessions_;
  std::vector<Route> routes_;
  int lanes_;
};

}  // namespace infermark::harness
