// What an OpenVINO LLM folder (*.ov: optimum-intel's export) says beside its IRs: sizes, end
// tokens and special tokens from config.json, generation_config.json and tokenizer.json.
#pragma once

#include <filesystem>
#include <set>
#include <string>

#include "backends/generator.hpp"

namespace infermark {

struct OvLlmFolder {
  std::filesystem::path model_xml, tokenizer_xml, detokenizer_xml;
  std::string architecture;  // config.json model_type, e.g. "llama"
  int context_length = 0;    // config.json max_position_embeddings
  int vocab_size = 0;
  std::set<TokenId> end_tokens;      // eos_token_id of generation_config.json, else config.json
  std::set<TokenId> special_tokens;  // tokenizer.json added_tokens marked special
  std::string parameters;            // the zoo manifest's architecture.n_params, "" without one
  std::string weight_compression;    // the zoo manifest's precision, "" without one
  bool chatml = false;               // the folder's chat template is ChatML (<|im_start|> turns)
};

// Throws infermark::Error naming the file and the field when the folder is not a usable export.
OvLlmFolder read_ov_llm_folder(const std::filesystem::path& folder);

}  // namespace infermark
