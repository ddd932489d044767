// The system under test for in-process frameworks: lanes map onto request slots of one session
// when the framework allows concurrent requests on a session, otherwise onto one session per lane.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "loadgen/input_set_library.hpp"
#include "loadgen/system_under_test.hpp"
#include "result/session_sharing.hpp"

namespace infermark::harness {

class LocalSystem final : public loadgen::SystemUnderTest {
 public:
  // Takes the already opened `first` session; opens more from `backend` when the framework's
  // session cannot serve `lanes` concurrent requests, or when `sessions` asks for separate copies.
  LocalSystem(Backend& backend, const std::filesystem::path& model, const SessionOptions& options, std::unique_ptr<Session> first,
              const std::vector<Tensor>& inputs, int lanes, result::SessionSharing sessions = result::SessionSharing::kShared)
      : LocalSystem(backend, model, options, std::move(first), std::vector<std::vector<Tensor>>{inputs}, lanes, sessions) {}
  // Varying shapes: more than one input set, each query running the set its sample names. Every set
  // runs once per lane before measuring, so the first sight of a shape (a kernel compiled for it)
  // is not timed; what queries then pay is the change of shape. `few_shapes`: see Session. Throws
  // infermark::Error, before binding anything, when the session does not declare varying shapes.
  LocalSystem(Backend& backend, const std::filesystem::path& model, const SessionOptions& options, std::unique_ptr<Session> first,
              const std::vector<std::vector<Tensor>>& input_sets, int lanes, result::SessionSharing sessions,
              bool few_shapes = false);

  int lanes() const override { return lanes_; }
  const loadgen::InputSetLibrary& samples() const override { return library_; }
  void issue(int lane, const loadgen::Query& query, loadgen::Completion&) override {
    const auto& route = routes_[static_cast<std::size_t>(lane)];
    if (set_count_ == 0) return route.session->run(route.slot);
    route.session->run_set(route.slot, query.sample);
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
  std::size_t set_count_ = 0;  // 0: one fixed input set bound with set_inputs
  loadgen::InputSetLibrary library_;
};

}  // namespace infermark::harness
