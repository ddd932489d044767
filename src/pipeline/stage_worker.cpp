// `infermark pipeline-stage`: one stage of the processes mode in its own process.
#include <chrono>
#include <fstream>
#include <thread>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "pipeline/pipeline_run.hpp"
#include "pipeline/shm_ring.hpp"

namespace infermark::pipeline {

bool run_stage_worker(const BackendRegistry& registry, const std::filesystem::path& config_file, const std::atomic<bool>* stop) {
  std::ifstream in_file(config_file);
  if (!in_file) throw Error(config_file.string() + ": cannot read the stage configuration");
  const auto config = nlohmann::json::parse(in_file);
  const auto spec = stage_from_json(config.at("stage"));
  const int index = config.at("index");
  const auto inputs = stage_inputs_from_json(config.at("inputs"), config_file.string());
  std::optional<TextCropSettings> crops;
  if (!config.at("crops_after").is_null()) crops = text_crop_settings_from_json(config.at("crops_after"));
  const AbortCheck aborted = [stop] { return stop && stop->load(); };

  PipelineStage stage(registry, spec, index, inputs, config.at("previous"), crops);
  {
    const std::string info = config.at("info");
    std::ofstream(info + ".partial") << json_text(to_json(stage.description()), 2) << '\n';
    std::filesystem::rename(info + ".partial", info);
  }
  // A slot holds one message with this stage's outputs; their sizes are fixed by the first run.
  PipelineMessage sample;
  sample.tensors = stage.first_outputs();
  auto out = ShmRing::create(config.at("out"), config.at("queue_depth"), encoded_size(sample));
  auto in = ShmRing::open(config.at("in"), config.at("ring_wait_s"), aborted);

  std::vector<TensorView> views;
  while (auto slot = in->begin_read(aborted)) {
    auto message = decode(*slot, views);
    if (message.end_of_stream)
      in->end_read();
    else
      process(stage, message, views, [&] { in->end_read(); });  // the slot is free once fed
    auto target = out->begin_write(aborted);
    if (!target) return false;
    out->end_write(encode(message, *target));
    if (message.end_of_stream) {
      // Stay until the consumer has mapped the ring, which the owner unlinks on exit.
      while (out->size() > 0 && !aborted()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return true;
    }
  }
  return false;
}

}  // namespace infermark::pipeline
