#include "harness/local_system.hpp"

namespace infermark::harness {

LocalSystem::LocalSystem(Backend& backend, const std::filesystem::path& model, const SessionOptions& options,
                         std::unique_ptr<Session> first, const std::vector<Tensor>& inputs, int lanes,
                         bool separate_sessions)
    : lanes_(lanes) {
  const bool shared = !separate_sessions && first->max_slots() >= lanes;
  sessions_.push_back(std::move(first));
  if (shared) {
    sessions_.front()->set_inputs(inputs, lanes);
    for (int i = 0; i < lanes; ++i) routes_.push_back({sessions_.front().get(), i});
    return;
  }
  sessions_.front()->set_inputs(inputs, 1);
  for (int i = 1; i < lanes; ++i) {
    sessions_.push_back(backend.open(model, options));
    sessions_.back()->set_inputs(inputs, 1);
  }
  for (auto& session : sessions_) routes_.push_back({session.get(), 0});
}

std::string LocalSystem::sharing() const {
  if (lanes_ == 1) return "one session";
  if (sessions_.size() == 1) return "one session, " + std::to_string(lanes_) + " concurrent request slots";
  return std::to_string(sessions_.size()) + " separate sessions, one per lane";
}

}  // namespace infermark::harness
