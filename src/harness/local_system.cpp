#include "harness/local_system.hpp"

#include "core/error.hpp"

namespace infermark::harness {

LocalSystem::LocalSystem(Backend& backend, const std::filesystem::path& model, const SessionOptions& options,
                         std::unique_ptr<Session> first, const std::vector<std::vector<Tensor>>& input_sets, int lanes,
                         result::SessionSharing sessions, bool few_shapes)
    : lanes_(lanes), set_count_(input_sets.size() > 1 ? input_sets.size() : 0), library_(input_sets) {
  if (set_count_ > 0 && !first->capabilities().varying_shapes)
    throw Error("backend '" + backend.info().name + "' (" + backend.info().framework +
                ") cannot run inputs whose shapes change between queries (--shape-range)");
  const auto bind = [&](Session& session, int slots) {
    if (set_count_ == 0)
      session.set_inputs(input_sets.front(), slots);
    else
      session.set_input_sets(input_sets, slots, few_shapes);
  };
  const bool shared = sessions == result::SessionSharing::kShared && first->max_slots() >= lanes;
  sessions_.push_back(std::move(first));
  if (shared) {
    bind(*sessions_.front(), lanes);
    for (int i = 0; i < lanes; ++i) routes_.push_back({sessions_.front().get(), i});
  } else {
    bind(*sessions_.front(), 1);
    for (int i = 1; i < lanes; ++i) {
      sessions_.push_back(backend.open(model, options));
      bind(*sessions_.back(), 1);
    }
    for (auto& session : sessions_) routes_.push_back({session.get(), 0});
  }
  if (set_count_ == 0) return;
  for (const auto& route : routes_)
    for (std::size_t set = 0; set < set_count_; ++set) route.session->run_set(route.slot, set);
}

std::string LocalSystem::sharing() const {
  if (lanes_ == 1) return "one session";
  if (sessions_.size() == 1) return "one session, " + std::to_string(lanes_) + " concurrent request slots";
  return std::to_string(sessions_.size()) + " separate sessions, one per lane";
}

}  // namespace infermark::harness
