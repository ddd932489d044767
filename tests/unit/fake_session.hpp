// A session with a controlled service time, for testing the load generator's own logic only.
#pragma once

#include <chrono>
#include <thread>

#include "backends/backend.hpp"

namespace infermark::testing {

class FakeSession final : public Session {
 public:
  explicit FakeSession(std::chrono::microseconds service_time = std::chrono::microseconds(0)) : service_time_(service_time) {}
  const std::vector<TensorSpec>& input_specs() const override { return specs_; }
  const std::vector<TensorSpec>& output_specs() const override { return specs_; }
  void set_inputs(const std::vector<Tensor>&) override {}
  void run() override {
    ++runs;
    if (service_time_.count() > 0) std::this_thread::sleep_for(service_time_);
  }
  std::vector<Tensor> outputs() override { return {}; }
  std::vector<EffectiveSetting> effective_settings() const override { return {}; }
  int runs = 0;

 private:
  std::chrono::microseconds service_time_;
  std::vector<TensorSpec> specs_;
};

}  // namespace infermark::testing
