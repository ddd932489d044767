#include "harness/model_tokenizer.hpp"

#include <fmt/core.h>

#include "core/error.hpp"

namespace infermark::harness {

std::unique_ptr<ModelTokenizer> ModelTokenizer::open(const BackendRegistry& registry, const std::filesystem::path& model,
                                                     const std::string& flag) {
  const auto where = flag + " " + model.string();
  if (!std::filesystem::exists(model)) throw Error(where + ": does not exist");
  if (!is_language_model(model))
    throw Error(where + ": not a language model whose tokenizer infermark opens (a .gguf file, a .genai or .ov folder)");
  const auto format = model_format(model);
  std::string tried;
  for (const auto& name : known_backend_names()) {
    if (!backend_reads(name, format)) continue;
    if (!registry.is_available(name)) {
      tried += (tried.empty() ? "" : ", ") + name + " (not built)";
      continue;
    }
    std::unique_ptr<ModelTokenizer> tokenizer(new ModelTokenizer());
    try {
      tokenizer->backend_ = registry.load(name);
      require_generators(**tokenizer->backend_, model);
      SessionOptions options;
      options.expected_concurrency = 1;
      options.extras["ctx"] = "64";  // the tokenizer is all that is used: no room for a real sequence
      tokenizer->generator_ = (*tokenizer->backend_)->open_generator(model, options);
      tokenizer->added_ = tokenizer->generator_->tokenize("").size();
    } catch (const Error& e) {
      throw Error(where + ": " + name + " cannot open its tokenizer: " + e.what());
    }
    const auto info = (*tokenizer->backend_)->info();
    tokenizer->description_ = fmt::format("{} {} tokenizer of {}", info.framework, info.version, model.filename().string());
    return tokenizer;
  }
  throw Error(where + ": no generation backend reads " + format + " models here" + (tried.empty() ? "" : " (" + tried + ")"));
}

ModelTokenizer::~ModelTokenizer() {
  generator_.reset();  // before the backend's library goes
}

int ModelTokenizer::count(const std::string& text) const {
  if (text.empty()) return 0;
  std::lock_guard lock(mutex_);
  const auto tokens = generator_->tokenize(text).size();
  return static_cast<int>(tokens > added_ ? tokens - added_ : 0);
}

}  // namespace infermark::harness
