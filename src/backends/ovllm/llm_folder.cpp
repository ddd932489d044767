#include "backends/ovllm/llm_folder.hpp"

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace infermark {
namespace {

nlohmann::json read_json(const std::filesystem::path& file, bool required) {
  std::ifstream in(file);
  if (!in) {
    if (!required) return nlohmann::json::object();
    throw Error(file.string() + ": missing (an OpenVINO LLM folder needs it; build one with infermark zoo build)");
  }
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error(file.string() + ": not valid JSON (" + e.what() + ")");
  }
}

std::filesystem::path required_file(const std::filesystem::path& folder, const char* name) {
  const auto file = folder / name;
  if (!std::filesystem::is_regular_file(file))
    throw Error(file.string() +
                ": missing (an OpenVINO LLM folder holds openvino_model.xml, openvino_tokenizer.xml and "
                "openvino_detokenizer.xml; build one with infermark zoo build)");
  return file;
}

void add_token_ids(const nlohmann::json& ids, std::set<TokenId>& into) {
  if (ids.is_array())
    for (const auto& id : ids) into.insert(id.get<TokenId>());
  else if (ids.is_number_integer())
    into.insert(ids.get<TokenId>());
}

bool chat_template_is_chatml(const std::filesystem::path& folder) {
  for (const auto* name : {"chat_template.jinja", "tokenizer_config.json"}) {
    std::ifstream in(folder / name);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("<|im_start|>") != std::string::npos) return true;
  }
  return false;
}

}  // namespace

OvLlmFolder read_ov_llm_folder(const std::filesystem::path& given) {
  const auto folder = given.has_filename() ? given : given.parent_path();
  if (!std::filesystem::is_directory(folder))
    throw Error(folder.string() + ": an OpenVINO LLM is a folder (openvino_model.xml, openvino_tokenizer.xml, config.json)");
  OvLlmFolder m;
  m.model_xml = required_file(folder, "openvino_model.xml");
  m.tokenizer_xml = required_file(folder, "openvino_tokenizer.xml");
  m.detokenizer_xml = required_file(folder, "openvino_detokenizer.xml");
  const auto config_file = folder / "config.json";
  const auto config = read_json(config_file, true);
  try {
    m.architecture = config.at("model_type").get<std::string>();
    m.context_length = config.at("max_position_embeddings").get<int>();
    m.vocab_size = config.at("vocab_size").get<int>();
    add_token_ids(config.value("eos_token_id", nlohmann::json()), m.end_tokens);
  } catch (const nlohmann::json::exception& e) {
    throw Error(config_file.string() + ": " + e.what());
  }
  const auto generation = read_json(folder / "generation_config.json", false);
  if (generation.contains("eos_token_id")) {
    m.end_tokens.clear();
    add_token_ids(generation["eos_token_id"], m.end_tokens);
  }
  for (const auto& added : read_json(folder / "tokenizer.json", true).value("added_tokens", nlohmann::json::array()))
    if (added.value("special", false)) m.special_tokens.insert(added.at("id").get<TokenId>());
  if (m.context_length < 2 || m.vocab_size < 1)
    throw Error(config_file.string() + ": max_position_embeddings or vocab_size is not positive");
  m.chatml = chat_template_is_chatml(folder);
  std::ifstream manifest_in(folder.parent_path() / (folder.stem().string() + ".json"));
  if (manifest_in) {
    const auto manifest = nlohmann::json::parse(manifest_in, nullptr, false);
    if (!manifest.is_discarded()) {
      const auto count = manifest.value("/architecture/n_params"_json_pointer, nlohmann::json());
      if (count.is_number_integer()) m.parameters = std::to_string(count.get<long long>());
      m.weight_compression = manifest.value("precision", "");
    }
  }
  return m;
}

}  // namespace infermark
