// llama.cpp (built by scripts/setup) on the tiny random-weights Llama GGUF the zoo exports:
// generation through sequence slots, continuous batching, and its errors on bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "backends/generator.hpp"
#include "backends/registry.hpp"
#include "core/error.hpp"
#include "harness/measure_cell.hpp"
#include "harness/model_tokenizer.hpp"
#include "loadgen/service_targets.hpp"
#include "report/zoo_accuracy.hpp"

namespace infermark {
namespace {

const std::filesystem::path kModels = INFERMARK_MODELS_DIR;
const std::filesystem::path kTinyLlama = kModels / "llama-tiny.gguf";

class LlamaCppBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!registry().is_available("llamacpp")) GTEST_SKIP() << "llamacpp is not built in this configuration";
  }
  static const BackendRegistry& registry() {
    static BackendRegistry r{INFERMARK_PLUGIN_DIR};
    return r;
  }
  static Backend& backend() {
    static auto loaded = registry().load("llamacpp");
    return **loaded;
  }
  static std::unique_ptr<Generator> open(int slots, int ctx = 128) {
    SessionOptions options;
    options.intra_op_threads = 1;
    options.expected_concurrency = slots;
    options.extras["ctx"] = std::to_string(ctx);
    return backend().open_generator(kTinyLlama, options);
  }
  // Greedy tokens for `prompt` on `slot`, stepping until `count` tokens came back.
  static std::vector<TokenId> generate(Generator& generator, int slot, const std::vector<TokenId>& prompt, int count) {
    std::vector<TokenId> out;
    generator.start(slot, prompt, count);
    while (static_cast<int>(out.size()) < count)
      generator.step([&](const GeneratedToken& t) {
        if (t.slot == slot) out.push_back(t.token);
      });
    generator.finish(slot);
    return out;
  }
  static std::filesystem::path scratch(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / "infermark-llamacpp-test";
    std::filesystem::create_directories(dir);
    return dir / name;
  }
  static std::string open_error(const std::filesystem::path& model) {
    try {
      backend().open_generator(model, SessionOptions{});
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(LlamaCppBackendTest, ReportsTheModelAndItsSettings) {
  const auto generator = open(4, 96);
  EXPECT_EQ(generator->vocab_size(), 512);     // the tiny export's vocabulary
  EXPECT_GE(generator->context_length(), 96);  // llama.cpp pads the KV cache; the padded size is what it reports
  EXPECT_EQ(generator->max_slots(), 4);
  const auto vocabulary = generator->prompt_vocabulary();
  EXPECT_GT(vocabulary.size(), 100u);
  EXPECT_LT(vocabulary.size(), 512u);  // control and byte tokens are left out
  std::map<std::string, EffectiveSetting> settings;
  for (const auto& s : generator->effective_settings()) settings[s.key] = s;
  EXPECT_EQ(settings.at("intra_op_threads").effective, "1");  // llama.cpp's default is 4
  EXPECT_EQ(settings.at("intra_op_threads").state, SettingState::kVerified) << settings.at("intra_op_threads").note;
  EXPECT_EQ(settings.at("sequence_slots").effective, "4");
  EXPECT_EQ(settings.at("architecture").effective, "llama");
  EXPECT_FALSE(settings.at("precision").applied());  // the GGUF file fixes the weights' precision
}

TEST_F(LlamaCppBackendTest, GreedyDecodingIsRepeatableAndAFreedSlotStartsClean) {
  const auto generator = open(1);
  const auto vocabulary = generator->prompt_vocabulary();
  const std::vector<TokenId> prompt(vocabulary.begin(), vocabulary.begin() + 20);
  const auto first = generate(*generator, 0, prompt, 12);
  const auto second = generate(*generator, 0, prompt, 12);  // same slot, after finish()
  ASSERT_EQ(first.size(), 12u);
  EXPECT_EQ(first, second);
  for (auto token : first) EXPECT_TRUE(token >= 0 && token < 512);
}

TEST_F(LlamaCppBackendTest, SequencesBatchedTogetherDecodeAsTheyDoAlone) {
  const auto generator = open(2);
  const auto vocabulary = generator->prompt_vocabulary();
  const std::vector<TokenId> a(vocabulary.begin(), vocabulary.begin() + 16);
  const std::vector<TokenId> b(vocabulary.begin() + 30, vocabulary.begin() + 40);
  const auto alone_a = generate(*generator, 0, a, 8);
  const auto alone_b = generate(*generator, 1, b, 8);
  // Both in flight at once; b joins one step after a started (continuous batching).
  std::vector<TokenId> together_a, together_b;
  int steps = 0;
  generator->start(0, a, 8);
  auto collect = [&](const GeneratedToken& t) { (t.slot == 0 ? together_a : together_b).push_back(t.token); };
  generator->step(collect);
  ++steps;
  generator->start(1, b, 8);
  while (together_a.size() < 8 || together_b.size() < 8) {
    generator->step(collect);
    ++steps;
  }
  EXPECT_EQ(steps, 9);  // a's 8 tokens overlap b's, not one after the other (16)
  EXPECT_EQ(together_a, alone_a);
  EXPECT_EQ(together_b, alone_b);
  EXPECT_THROW(generator->start(0, a, 4), Error);  // still busy until finish()
  generator->finish(0);
  generator->finish(1);
}

// --opt prefix_cache=on: a prompt starts from the longest prefix a slot's cells hold (its own, or
// another slot's through the unified KV buffer) and generates what it does from an empty cache.
TEST_F(LlamaCppBackendTest, PrefixCacheReusesHeldPrefixesAndGeneratesWhatAFreshStartDoes) {
  SessionOptions options;
  options.intra_op_threads = 1;
  options.expected_concurrency = 2;
  options.extras = {{"ctx", "128"}, {"prefix_cache", "on"}};
  const auto cached = backend().open_generator(kTinyLlama, options);
  std::map<std::string, EffectiveSetting> settings;
  for (const auto& s : cached->effective_settings()) settings[s.key] = s;
  EXPECT_EQ(settings.at("prefix_cache").effective, "on (any slot's prefix, 4 more stored)");
  EXPECT_EQ(settings.at("sequence_slots").effective, "2");  // the store's sequences are not slots
  EXPECT_GE(cached->context_length(), 128);                 // per sequence, not the whole shared buffer
  EXPECT_EQ(settings.at("kv_unified").effective, "on");
  const auto plain = open(2);
  const auto vocabulary = cached->prompt_vocabulary();
  const std::vector<TokenId> prefix(vocabulary.begin(), vocabulary.begin() + 24);
  auto with = [&](std::size_t from, std::size_t to) {
    auto prompt = prefix;
    prompt.insert(prompt.end(), vocabulary.begin() + static_cast<std::ptrdiff_t>(from),
                  vocabulary.begin() + static_cast<std::ptrdiff_t>(to));
    return prompt;
  };
  const auto a = with(40, 48), b = with(60, 66);
  // a cold; b on the other slot from a's prefix; a again from its own whole prompt (the last token
  // decoded again); the bare prefix, shorter than what slot 1 holds; b on slot 0, which held a.
  const std::vector<std::pair<int, std::vector<TokenId>>> requests{{0, a}, {1, b}, {0, a}, {1, prefix}, {0, b}};
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const auto& [slot, prompt] = requests[i];
    EXPECT_EQ(generate(*cached, slot, prompt, 8), generate(*plain, slot, prompt, 8)) << "request " << i;
  }
  // a: 0; b: a's 24-token prefix from slot 0; a: 31 of its 32 (the last is decoded again); the
  // prefix: 23 of its 24 from slot 1's own b; b on slot 0: 29 of its 30 from the store.
  EXPECT_EQ(cached->prompt_tokens_reused(), 0u + 24 + 31 + 23 + 29);
  EXPECT_EQ(plain->prompt_tokens_reused(), 0u);
  // While slot 0 decodes a, slot 1 starts b from the prefix slot 0 has already prefilled.
  std::vector<TokenId> first, second;
  auto collect = [&](const GeneratedToken& t) { (t.slot == 0 ? first : second).push_back(t.token); };
  cached->start(0, a, 8);
  cached->step(collect);
  cached->start(1, b, 8);
  while (first.size() < 8 || second.size() < 8) cached->step(collect);
  cached->finish(0);
  cached->finish(1);
  EXPECT_EQ(cached->prompt_tokens_reused(), 107u + 31 + 29);  // both from the store
  EXPECT_EQ(first, generate(*plain, 0, a, 8));
  EXPECT_EQ(second, generate(*plain, 1, b, 8));
}

// More prompts than slots: the store keeps the last prefix_cache_entries of them, least recently
// used replaced first.
TEST_F(LlamaCppBackendTest, PrefixCacheStoreKeepsMorePromptsThanSlotsAndDropsTheLeastRecentlyUsed) {
  const auto vocabulary = open(1)->prompt_vocabulary();
  const auto prompt = [&](std::size_t from) {
    return std::vector<TokenId>(vocabulary.begin() + static_cast<std::ptrdiff_t>(from),
                                vocabulary.begin() + static_cast<std::ptrdiff_t>(from + 20));
  };
  const auto a = prompt(0), b = prompt(25), c = prompt(50);
  for (const auto& [entries, reused] : std::vector<std::pair<std::string, std::uint64_t>>{{"4", 19}, {"2", 0}, {"0", 0}}) {
    SessionOptions options;
    options.intra_op_threads = 1;
    options.expected_concurrency = 1;
    options.extras = {{"ctx", "64"}, {"prefix_cache", "on"}, {"prefix_cache_entries", entries}};
    const auto generator = backend().open_generator(kTinyLlama, options);
    const auto first_a = generate(*generator, 0, a, 4);
    generate(*generator, 0, b, 4);
    generate(*generator, 0, c, 4);
    EXPECT_EQ(generate(*generator, 0, a, 4), first_a) << entries << " entries";
    // a again: from the store with room for it (19 of 20); evicted by b and c with 2 entries.
    EXPECT_EQ(generator->prompt_tokens_reused(), reused) << entries << " entries";
  }
}

// The zoo's F16, Q8_0 and Q4_0 copies (llama-quantize) load, generate, and report their own type.
TEST_F(LlamaCppBackendTest, QuantisedCopiesGenerateAndReportTheirType) {
  for (const auto& [suffix, type] :
       std::vector<std::pair<std::string, std::string>>{{"_fp16", "F16"}, {"_q8_0", "Q8_0"}, {"_q4_0", "Q4_0"}}) {
    const auto file = kModels / ("llama-tiny" + suffix + ".gguf");
    ASSERT_TRUE(std::filesystem::exists(file)) << file << ": scripts/setup builds it";
    SessionOptions options;
    options.intra_op_threads = 1;
    options.extras["ctx"] = "64";
    const auto generator = backend().open_generator(file, options);
    std::map<std::string, EffectiveSetting> settings;
    for (const auto& s : generator->effective_settings()) settings[s.key] = s;
    EXPECT_NE(settings.at("precision").effective.find(type), std::string::npos) << settings.at("precision").effective;
    const auto vocabulary = generator->prompt_vocabulary();
    const auto tokens = generate(*generator, 0, std::vector<TokenId>(vocabulary.begin(), vocabulary.begin() + 10), 6);
    EXPECT_EQ(tokens.size(), 6u) << file;
  }
}

// Each copy's manifest carries what quantisation cost against the F32 file (llama-perplexity's KL
// divergence over the exporter's corpus); fewer bits must cost more. The floors and tolerances
// leave room around what scripts/setup's copies measure: top-1 agreement 0.999 (F16), 0.981
// (Q8_0), 0.812 (Q4_0); perplexity ratio 1.000002, 1.000114, 0.998243.
TEST_F(LlamaCppBackendTest, QuantisedCopiesCarryTheirCostAgainstTheBaseFile) {
  struct Expected {
    std::string precision;
    double least_top1;
    double ppl_tolerance;
  };
  std::map<std::string, double> kld, top1;
  for (const auto& [precision, least_top1, ppl_tolerance] :
       std::vector<Expected>{{"fp16", 0.99, 0.001}, {"q8_0", 0.95, 0.002}, {"q4_0", 0.70, 0.01}}) {
    const auto file = kModels / ("llama-tiny_" + precision + ".gguf");
    const auto note = report::zoo_accuracy_note(file);
    EXPECT_NE(note.find("against its F32 original (llama.cpp llama-perplexity"), std::string::npos) << note;
    EXPECT_NE(note.find("logits top-1 "), std::string::npos) << note;
    std::ifstream in(kModels / ("llama-tiny_" + precision + ".json"));
    const auto figures = nlohmann::json::parse(in).at("accuracy").at("by_format").at("gguf").at("outputs").at(0);
    top1[precision] = figures.at("top1_agreement").get<double>();
    EXPECT_GE(top1[precision], least_top1) << precision;
    EXPECT_NEAR(figures.at("ppl_ratio").get<double>(), 1.0, ppl_tolerance) << precision;
    kld[precision] = figures.at("kld_mean").get<double>();
    EXPECT_GE(kld[precision], 0.0);
  }
  EXPECT_LT(kld["fp16"], kld["q4_0"]);
  EXPECT_LT(kld["q8_0"], kld["q4_0"]);
  EXPECT_GT(top1["fp16"], top1["q8_0"]);
  EXPECT_GT(top1["q8_0"], top1["q4_0"]);
}

TEST_F(LlamaCppBackendTest, RefusesAPromptLongerThanTheContext) {
  const auto generator = open(1, 64);
  const int context = generator->context_length();
  const std::vector<TokenId> prompt(static_cast<std::size_t>(context - 5), generator->prompt_vocabulary().front());
  try {
    generator->start(0, prompt, 10);
    FAIL() << "a request 5 tokens longer than the context fit";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the context of " + std::to_string(context) + " tokens"), std::string::npos)
        << e.what();
  }
}

TEST_F(LlamaCppBackendTest, NamesTheFileAndCauseOfABadModel) {
  const auto text = scratch("not_a_model.gguf");
  std::ofstream(text) << "this is not a GGUF file\n";
  auto message = open_error(text);
  EXPECT_NE(message.find("not_a_model.gguf"), std::string::npos) << message;
  EXPECT_NE(message.find("not a GGUF file"), std::string::npos) << message;

  const auto truncated = scratch("truncated.gguf");
  {
    std::ifstream in(kTinyLlama, std::ios::binary);
    std::vector<char> head(4096);
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    std::ofstream(truncated, std::ios::binary).write(head.data(), static_cast<std::streamsize>(head.size()));
  }
  message = open_error(truncated);
  EXPECT_NE(message.find("truncated.gguf"), std::string::npos) << message;
  EXPECT_NE(message.find("llama.cpp cannot load"), std::string::npos) << message;

  // A well-formed GGUF (v3: magic, version, tensor count, one key) of an architecture llama.cpp lacks.
  const auto alien = scratch("alien_arch.gguf");
  {
    std::ofstream out(alien, std::ios::binary);
    auto u32 = [&](std::uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
    auto u64 = [&](std::uint64_t v) { out.write(reinterpret_cast<const char*>(&v), 8); };
    auto str = [&](const std::string& s) {
      u64(s.size());
      out.write(s.data(), static_cast<std::streamsize>(s.size()));
    };
    out.write("GGUF", 4);
    u32(3);
    u64(0);
    u64(1);
    str("general.architecture");
    u32(8);  // GGUF_TYPE_STRING
    str("no-such-architecture");
  }
  message = open_error(alien);
  EXPECT_NE(message.find("alien_arch.gguf"), std::string::npos) << message;
  EXPECT_NE(message.find("no-such-architecture"), std::string::npos) << message;
}

TEST_F(LlamaCppBackendTest, TensorSessionsAreRefusedWithAPointerToGeneration) {
  try {
    backend().open(kTinyLlama, SessionOptions{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("generation"), std::string::npos) << e.what();
  }
}

TEST_F(LlamaCppBackendTest, MeasuresAGenerationCellWithServingMetrics) {
  result::CellRequest cell;
  cell.backend = "llamacpp";
  cell.model = kTinyLlama;
  cell.options.intra_op_threads = 1;
  cell.scenario.name = loadgen::Scenario::kConcurrency;
  cell.scenario.concurrency = 3;
  cell.scenario.warmup_queries = 2;
  cell.scenario.max_queries = 7;
  cell.scenario.prompt_tokens = 24;
  cell.scenario.output_tokens = 6;
  const auto result = harness::measure_cell(registry(), cell);
  ASSERT_EQ(result.status, infermark::result::CellStatus::kOk) << result.error;
  ASSERT_TRUE(result.generation.has_value());
  const auto& g = *result.generation;
  EXPECT_EQ(g.requests, 7u);
  EXPECT_EQ(g.output_tokens.total, 42);
  EXPECT_EQ(g.prompt_tokens.total, 7 * 24);
  EXPECT_EQ(g.concurrency, 3);
  ASSERT_TRUE(g.ttft_ms && g.itl_ms);
  EXPECT_EQ(g.ttft_ms->count, 7u);
  EXPECT_EQ(g.itl_ms->count, 7u * 5);
  EXPECT_GT(g.decode_tokens_per_s, 0);
  ASSERT_TRUE(result.latency_ms.has_value());
  EXPECT_EQ(result.latency_ms->count, 7u);
  EXPECT_LE(g.ttft_ms->max, result.latency_ms->max);  // first token before the last
  EXPECT_EQ(g.ttft_from, "issue");
}

// The real generator under open-loop load: Poisson arrivals wait for one of two sequence slots,
// TTFT runs from the scheduled arrival, and the SLO verdict and goodput are computed.
TEST_F(LlamaCppBackendTest, RunsTheServerScenarioWithSlosAndGoodput) {
  result::CellRequest cell;
  cell.backend = "llamacpp";
  cell.model = kTinyLlama;
  cell.options.intra_op_threads = 1;
  cell.scenario.name = loadgen::Scenario::kServer;
  cell.scenario.concurrency = 2;
  cell.scenario.qps = 8;
  cell.scenario.duration_s = 2;
  cell.scenario.warmup_queries = 2;
  cell.scenario.prompt_tokens = 16;
  cell.scenario.output_tokens = 4;
  cell.scenario.ttft_ms = 10'000;
  cell.scenario.tpot_ms = 10'000;
  const auto result = harness::measure_cell(registry(), cell);
  ASSERT_EQ(result.status, infermark::result::CellStatus::kOk) << result.error;
  ASSERT_EQ(result.phases.size(), 1u);
  const auto phase = infermark::result::to_json(result.phases[0]);  // as the result file has it
  EXPECT_GT(phase.at("completed").get<int>(), 3);
  ASSERT_TRUE(phase.contains("generation")) << phase.dump();
  EXPECT_EQ(phase.at("generation").at("requests"), phase.at("completed"));
  EXPECT_EQ(phase.at("generation").at("output_tokens"), 4 * phase.at("completed").get<int>());
  ASSERT_TRUE(result.generation.has_value());
  EXPECT_NE(result.generation->ttft_from.find("scheduled arrival"), std::string::npos);
  ASSERT_TRUE(result.analysis.sla.has_value());
  const auto& sla = *result.analysis.sla;
  EXPECT_TRUE(sla.ttft && sla.tpot) << loadgen::to_json(result.analysis).dump();
  // Generous targets: every completed request is good, so goodput equals throughput.
  EXPECT_EQ(sla.good_queries, phase.at("completed").get<std::uint64_t>());
  EXPECT_GT(result.generation->goodput_rps.value_or(0), 0);
  // Every request's latencies are kept, and the same rule over them gives the same goodput.
  const auto& kept = result.generation->request_latencies;
  ASSERT_EQ(kept.size(), result.generation->requests);
  const loadgen::ServiceTargets targets{0, 10'000'000'000, 10'000'000'000};
  EXPECT_EQ(static_cast<std::uint64_t>(std::count_if(kept.begin(), kept.end(), [&](const auto& r) { return meets(targets, r); })),
            sla.good_queries);
}

// `load --tokenizer`: the model's own tokenizer counts a text's tokens, without what it adds to
// every text (the BOS), the same from several threads.
TEST_F(LlamaCppBackendTest, ModelTokenizerCountsATextsOwnTokens) {
  const auto tokenizer = harness::ModelTokenizer::open(registry(), kTinyLlama, "--tokenizer");
  EXPECT_NE(tokenizer->describe().find("llama.cpp"), std::string::npos) << tokenizer->describe();
  EXPECT_NE(tokenizer->describe().find("llama-tiny.gguf"), std::string::npos) << tokenizer->describe();
  const auto generator = open(1);
  const std::string text = "the quick brown fox jumps over the lazy dog";
  const auto with_bos = generator->tokenize(text).size();
  EXPECT_EQ(static_cast<std::size_t>(tokenizer->count(text)), with_bos - generator->tokenize("").size());
  EXPECT_GT(tokenizer->count(text), 3);
  EXPECT_EQ(tokenizer->count(""), 0);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i)
        if (tokenizer->count(text) != tokenizer->count(text + "")) ++wrong;
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  // Bad input names the flag and the file.
  for (const auto& [model, why] : std::vector<std::pair<std::filesystem::path, std::string>>{
           {kModels / "no-such.gguf", "does not exist"}, {kModels / "tiny_cnn.onnx", "not a language model"}}) {
    try {
      harness::ModelTokenizer::open(registry(), model, "--tokenizer");
      ADD_FAILURE() << model << " opened";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--tokenizer " + model.string() + ": " + why), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace infermark
