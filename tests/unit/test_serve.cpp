// The serving pieces that need no network or framework: KServe v2 bodies, batch stacking, the
// dynamic batcher's policy, the A/B router and the model repository file.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "core/clock.hpp"
#include "kserve/kserve_codec.hpp"
#include "openai/openai_protocol.hpp"
#include "serve/batch_tensors.hpp"
#include "serve/dynamic_batcher.hpp"
#include "serve/generation_engine.hpp"
#include "serve/serve_config.hpp"
#include "serve/variant_router.hpp"
#include "unit/request_errors.hpp"

namespace infermark::serve {
namespace {

Tensor floats(const std::string& name, std::vector<std::int64_t> shape, float first) {
  Tensor t{name, DType::kFloat32, shape, {}};
  t.data.resize(element_count(shape) * sizeof(float));
  for (std::size_t i = 0; i < t.element_count(); ++i) t.as<float>()[i] = first + static_cast<float>(i);
  return t;
}

TEST(KServeCodec, ParsesJsonTensorsNestedOrFlat) {
  const auto request = kserve::parse_infer_request(
      R"({"id":"r1","inputs":[{"name":"x","shape":[2,2],"datatype":"FP32","data":[[1,2],[3,4.5]]},
                             {"name":"n","shape":[2],"datatype":"INT64","data":[7,-8]}],
          "outputs":[{"name":"y","parameters":{"binary_data":true}}]})",
      std::nullopt);
  EXPECT_EQ(request.id, "r1");
  ASSERT_EQ(request.inputs.size(), 2u);
  EXPECT_EQ(request.inputs[0].shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_FLOAT_EQ(request.inputs[0].as<float>()[3], 4.5f);
  EXPECT_EQ(request.inputs[1].as<std::int64_t>()[1], -8);
  ASSERT_EQ(request.outputs.size(), 1u);
  EXPECT_TRUE(request.outputs[0].binary);
}

TEST(KServeCodec, ParsesBinaryTensorsAfterTheJsonHeader) {
  const std::string header = R"({"inputs":[{"name":"x","shape":[1,3],"datatype":"FP32","parameters":{"binary_data_size":12}}]})";
  const float values[3] = {1.5f, -2.f, 3.25f};
  std::string body = header + std::string(reinterpret_cast<const char*>(values), sizeof(values));
  const auto request = kserve::parse_infer_request(body, header.size());
  ASSERT_EQ(request.inputs.size(), 1u);
  EXPECT_EQ(std::memcmp(request.inputs[0].data.data(), values, sizeof(values)), 0);
}

TEST(KServeCodec, HalfPrecisionJsonIsEncoded) {
  const auto request = kserve::parse_infer_request(
      R"({"inputs":[{"name":"h","shape":[3],"datatype":"FP16","data":[1.0,-0.5,65504]}]})", std::nullopt);
  const auto decoded = to_doubles(request.inputs[0]);
  EXPECT_EQ(decoded, (std::vector<double>{1.0, -0.5, 65504.0}));
}

TEST(KServeCodec, BadBodiesNameTheField) {
  int status = 0;
  EXPECT_NE(request_error([] { kserve::parse_infer_request("{", std::nullopt); }, &status).find("not a JSON object"),
            std::string::npos);
  EXPECT_EQ(status, 400);
  EXPECT_NE(request_error([] {
              kserve::parse_infer_request(R"({"inputs":[{"name":"x","shape":[2],"datatype":"FP32","data":[1]}]})", std::nullopt);
            }).find("input 'x'.data: 1 values for shape 2"),
            std::string::npos);
  EXPECT_NE(request_error([] {
              kserve::parse_infer_request(R"({"inputs":[{"name":"x","shape":[1],"datatype":"BYTES","data":["a"]}]})",
                                          std::nullopt);
            }).find("'BYTES' is not supported"),
            std::string::npos);
  EXPECT_NE(request_error([] {
              kserve::parse_infer_request(R"({"inputs":[{"name":"x","shape":[1],"datatype":"INT32","data":[1.5]}]})",
                                          std::nullopt);
            }).find("must be integers"),
            std::string::npos);
  const std::string header = R"({"inputs":[{"name":"x","shape":[2],"datatype":"FP32","parameters":{"binary_data_size":8}}]})";
  EXPECT_NE(
      request_error([&] { kserve::parse_infer_request(header + "1234", header.size()); }).find("binary data ends after 4 of 8"),
      std::string::npos);
  EXPECT_NE(request_error([&] { kserve::parse_infer_request(header, header.size() + 10); }).find("exceeds the body"),
            std::string::npos);
}

TEST(KServeCodec, InputsAreCheckedAgainstTheModel) {
  const std::vector<TensorSpec> specs{{"a", DType::kFloat32, {-1, 3}, {"batch", ""}}, {"b", DType::kInt64, {-1}, {"", ""}}};
  std::vector<Tensor> given{Tensor{"b", DType::kInt64, {2}, std::vector<std::byte>(16)}, floats("a", {2, 3}, 0)};
  const auto ordered = kserve::match_inputs(given, specs);
  EXPECT_EQ(ordered[0].name, "a");
  EXPECT_EQ(ordered[1].name, "b");
  EXPECT_NE(request_error([&] {
              kserve::match_inputs({floats("a", {2, 4}, 0), given[0]}, specs);
            }).find("dimension 1"),
            std::string::npos);
  EXPECT_NE(request_error([&] {
              kserve::match_inputs({floats("a", {2, 3}, 0)}, specs);
            }).find("input 'b': missing"),
            std::string::npos);
  EXPECT_NE(request_error([&] {
              kserve::match_inputs({floats("a", {2, 3}, 0), given[0], floats("c", {1}, 0)}, specs);
            }).find("input 'c': the model has no such input"),
            std::string::npos);
  EXPECT_NE(request_error([&] {
              kserve::match_inputs({floats("a", {2, 3}, 0), floats("b", {2}, 0)}, specs);
            }).find("datatype FP32, the model expects INT64"),
            std::string::npos);
}

TEST(KServeCodec, ResponseCarriesBinaryOutputsAfterTheJson) {
  kserve::InferRequest request;
  request.outputs = {{"y", true}};
  const auto encoded = kserve::encode_infer_response({"m", "1", "id7"}, {floats("y", {1, 2}, 1)}, request);
  ASSERT_TRUE(encoded.json_length.has_value());
  const auto header = nlohmann::json::parse(encoded.body.substr(0, *encoded.json_length));
  EXPECT_EQ(header["id"], "id7");
  EXPECT_EQ(header["outputs"][0]["parameters"]["binary_data_size"], 8);
  float back[2];
  std::memcpy(back, encoded.body.data() + *encoded.json_length, 8);
  EXPECT_FLOAT_EQ(back[1], 2.f);
  request.outputs = {{"nope", false}};
  EXPECT_NE(request_error([&] {
              kserve::encode_infer_response({"m", "1", ""}, {floats("y", {1}, 0)}, request);
            }).find("output 'nope'"),
            std::string::npos);
}

TEST(BatchTensors, StackAndSplitRoundTrip) {
  const std::vector<Tensor> a{floats("x", {1, 2}, 0)}, b{floats("x", {2, 2}, 10)};
  EXPECT_EQ(batch_signature(a), batch_signature(b));
  EXPECT_NE(batch_signature(a), batch_signature({floats("x", {1, 3}, 0)}));
  const auto stacked = concatenate_batch({&a, &b});
  EXPECT_EQ(stacked[0].shape, (std::vector<std::int64_t>{3, 2}));
  EXPECT_FLOAT_EQ(stacked[0].as<float>()[2], 10.f);
  const auto parts = split_batch(stacked, {1, 2});
  EXPECT_EQ(parts[1][0].shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_FLOAT_EQ(parts[1][0].as<float>()[0], 10.f);
  EXPECT_THROW(split_batch({floats("y", {5, 1}, 0)}, {1, 2}), Error);  // rows do not add up
}

PendingInference pending(std::int64_t rows, std::vector<int>& order, int tag, const std::string& signature = "s") {
  PendingInference p;
  p.rows = rows;
  p.signature = signature;
  p.enqueued_ns = mono_now_ns();
  p.done = [&order, tag](InferenceResult) { order.push_back(tag); };
  return p;
}

TEST(DynamicBatcher, GathersCompatibleRequestsUpToTheMaximum) {
  DynamicBatcher batcher({4, std::chrono::microseconds(0), {}, 16});
  std::vector<int> order;
  for (int i = 0; i < 3; ++i) {
    auto p = pending(2, order, i);
    ASSERT_TRUE(batcher.submit(p));
  }
  auto other = pending(1, order, 9, "other-shape");
  ASSERT_TRUE(batcher.submit(other));
  auto first = batcher.next_batch();
  ASSERT_EQ(first.size(), 2u);  // 2 + 2 rows = the maximum of 4
  auto second = batcher.next_batch();
  ASSERT_EQ(second.size(), 1u);  // the third 2-row request; the other shape cannot join it
  EXPECT_EQ(second[0].signature, "s");
  auto third = batcher.next_batch();
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third[0].signature, "other-shape");
}

TEST(DynamicBatcher, WaitsForTheQueueDelayThenSendsWhatItHas) {
  DynamicBatcher batcher({8, std::chrono::microseconds(20'000), {}, 16});
  std::vector<int> order;
  auto p = pending(1, order, 0);
  batcher.submit(p);
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    auto q = pending(1, order, 1);
    batcher.submit(q);
  });
  const auto batch = batcher.next_batch();
  late.join();
  // The second request arrived well within the delay, so both ran together (the delay is long
  // enough that a slow machine still meets it; no timing is asserted).
  EXPECT_EQ(batch.size(), 2u);
}

TEST(DynamicBatcher, PreferredSizeSendsWithoutWaiting) {
  DynamicBatcher batcher({8, std::chrono::microseconds(60'000'000), {2}, 16});
  std::vector<int> order;
  for (int i = 0; i < 2; ++i) {
    auto p = pending(1, order, i);
    batcher.submit(p);
  }
  EXPECT_EQ(batcher.next_batch().size(), 2u);  // would block for a minute without the preferred size
}

TEST(DynamicBatcher, BoundedQueueRefusesAndCloseDrains) {
  DynamicBatcher batcher({1, std::chrono::microseconds(0), {}, 2});
  std::vector<int> order;
  auto a = pending(1, order, 0), b = pending(1, order, 1), c = pending(1, order, 2);
  EXPECT_TRUE(batcher.submit(a));
  EXPECT_TRUE(batcher.submit(b));
  EXPECT_FALSE(batcher.submit(c));
  EXPECT_TRUE(static_cast<bool>(c.done));  // refused requests are left to the caller to answer
  batcher.close();
  EXPECT_EQ(batcher.next_batch().size(), 1u);
  EXPECT_EQ(batcher.next_batch().size(), 1u);
  EXPECT_TRUE(batcher.next_batch().empty());
}

TEST(VariantRouter, WeightedSplitFollowsTheWeights) {
  VariantRouter router({90, 10});
  int second = 0;
  for (int i = 0; i < 10000; ++i) second += router.pick("") == 1;
  EXPECT_GT(second, 800);
  EXPECT_LT(second, 1200);
}

TEST(VariantRouter, StickyKeysStayOnOneVariant) {
  VariantRouter router({50, 50});
  int second = 0;
  for (int user = 0; user < 1000; ++user) {
    const auto key = "user-" + std::to_string(user);
    const auto first = router.pick(key);
    for (int again = 0; again < 3; ++again) EXPECT_EQ(router.pick(key), first);
    second += first == 1;
  }
  EXPECT_GT(second, 400);  // keys still spread over both
  EXPECT_LT(second, 600);
}

std::filesystem::path write_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path;
}

TEST(ServeConfig, ReadsModelsVariantsAndBatching) {
  const auto file = write_file("serve_ok.yaml", R"(
server: {http_port: 9000}
models:
  - name: resnet50
    file: resnet50.onnx
    batching: {max_batch_size: 8, max_queue_delay_us: 500, preferred_batch_sizes: [4, 8]}
    timeout_ms: 250
    variants:
      - {name: ort, backend: onnxruntime, weight: 90, threads: 2}
      - {name: ov, backend: openvino, weight: 10, instances: 2, shadow: {to: ort, share: 0.5}}
)");
  const auto config = load_serve_config(file);
  EXPECT_EQ(config.http_port, 9000);
  EXPECT_EQ(config.grpc_port, 8001);  // the default when the file does not say
  ASSERT_EQ(config.models.size(), 1u);
  const auto& model = config.models[0];
  EXPECT_EQ(model.file, file.parent_path() / "resnet50.onnx");  // relative to the file
  EXPECT_EQ(model.batching.max_batch_size, 8);
  EXPECT_EQ(model.batching.preferred_batch_sizes, (std::vector<std::int64_t>{4, 8}));
  ASSERT_EQ(model.variants.size(), 2u);
  EXPECT_EQ(model.variants[1].instances, 2);
  ASSERT_TRUE(model.variants[1].shadow.has_value());
  EXPECT_EQ(model.variants[1].shadow->to, "ort");
}

TEST(ServeConfig, MistakesNameTheField) {
  auto error_of = [](const std::string& yaml) {
    try {
      load_serve_config(write_file("serve_bad.yaml", yaml));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of("models:\n  - {name: m, file: m.onnx, variants: [{backend: onnxruntime, wieght: 2}]}\n")
                .find("unknown key 'wieght'"),
            std::string::npos);
  EXPECT_NE(error_of("models:\n  - {name: m, file: m.onnx, variants: [{backend: nosuch}]}\n").find("nosuch"), std::string::npos);
  EXPECT_NE(error_of("models:\n  - {name: m, file: m.onnx, variants: [{backend: onnxruntime, shadow: {to: x}}]}\n")
                .find("shadow: 'to' names no variant"),
            std::string::npos);
  EXPECT_NE(error_of("models:\n  - {name: m, file: m.onnx, batching: {max_batch_size: 4, preferred_batch_sizes: [8]},"
                     " variants: [{backend: onnxruntime}]}\n")
                .find("preferred_batch_sizes: 8"),
            std::string::npos);
  EXPECT_NE(error_of("models:\n  - {name: m, file: m.onnx, variants: [{backend: onnxruntime, weight: 0}]}\n")
                .find("weights add up to 0"),
            std::string::npos);
  EXPECT_NE(error_of("server: {grpc_port: -2}\nmodels:\n  - {name: m, file: m.onnx, variants: [{backend: onnxruntime}]}\n")
                .find("grpc_port must be a port"),
            std::string::npos);
  EXPECT_NE(error_of("server: {http_port: 9000, grpc_port: 9000}\nmodels:\n  - {name: m, file: m.onnx, variants: [{backend: "
                     "onnxruntime}]}\n")
                .find("grpc_port and http_port are both 9000"),
            std::string::npos);
  EXPECT_NE(error_of("models:\n  - {name: m, file: m.onnx, inline_below_us: -1, variants: [{backend: onnxruntime}]}\n")
                .find("inline_below_us must not be negative"),
            std::string::npos);
}

// The message of the infermark::Error `fn` throws, or "" when it throws none.
template <typename Fn>
std::string parse_error(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(OpenAiProtocol, ParsesCompletionAndChatRequests) {
  const auto completion = openai::parse_completion_request(
      R"({"model":"m","prompt":"hi","max_tokens":5,"temperature":0,"seed":7,"stop":["\n"],"stream":true,
          "stream_options":{"include_usage":true},"user":"ignored"})",
      false);
  EXPECT_EQ(completion.prompt, "hi");
  EXPECT_EQ(completion.max_tokens, 5);
  EXPECT_EQ(completion.sampling.temperature, 0.f);
  EXPECT_TRUE(completion.seed_given);
  EXPECT_EQ(completion.sampling.seed, 7u);
  EXPECT_EQ(completion.stop, (std::vector<std::string>{"\n"}));
  EXPECT_TRUE(completion.stream && completion.include_usage);
  const auto chat = openai::parse_completion_request(
      R"({"model":"m","messages":[{"role":"system","content":"be brief"},
          {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],"max_completion_tokens":3})",
      true);
  ASSERT_EQ(chat.messages.size(), 2u);
  EXPECT_EQ(chat.messages[1].content, "ab");
  EXPECT_EQ(chat.max_tokens, 3);
  EXPECT_EQ(chat.sampling.temperature, 1.f);  // OpenAI's default
}

TEST(OpenAiProtocol, BadRequestsNameTheField) {
  EXPECT_NE(parse_error([] { openai::parse_completion_request(R"({"prompt":"x"})", false); }).find("model"), std::string::npos);
  EXPECT_NE(parse_error([] {
              openai::parse_completion_request(R"({"model":"m","prompt":"x","max_tokens":0})", false);
            }).find("max_tokens"),
            std::string::npos);
  EXPECT_NE(parse_error([] { openai::parse_completion_request(R"({"model":"m","prompt":"x","n":3})", false); }).find("n:"),
            std::string::npos);
  EXPECT_NE(parse_error([] { openai::parse_completion_request(R"({"model":"m","prompt":["a","b"]})", false); }).find("prompt"),
            std::string::npos);
  EXPECT_NE(parse_error([] {
              openai::parse_completion_request(R"({"model":"m","messages":[{"content":"x"}]})", true);
            }).find("messages[0].role"),
            std::string::npos);
}

// The client writes what the server reads: one request type for both sides of the protocol.
TEST(OpenAiProtocol, TheClientsRequestBodyParsesBackToTheSameRequest) {
  openai::CompletionRequest asked;
  asked.chat = true;
  asked.model = "llama";
  asked.messages = {{"user", "hello there"}};
  asked.max_tokens = 12;
  asked.sampling.temperature = 0;
  asked.sampling.seed = 9;
  asked.seed_given = true;
  asked.stream = true;
  asked.include_usage = true;
  const auto body = openai::completion_request_body(asked, true, {{"grammar", "root ::= [a-z]+"}});
  const auto json = nlohmann::json::parse(body);
  EXPECT_TRUE(json["ignore_eos"].get<bool>());
  EXPECT_EQ(json["grammar"], "root ::= [a-z]+");
  const auto read = openai::parse_completion_request(body, true);
  EXPECT_EQ(read.model, "llama");
  ASSERT_EQ(read.messages.size(), 1u);
  EXPECT_EQ(read.messages[0].content, "hello there");
  EXPECT_EQ(read.max_tokens, 12);
  EXPECT_EQ(read.sampling.temperature, 0.f);
  EXPECT_EQ(read.sampling.seed, 9u);
  EXPECT_TRUE(read.stream && read.include_usage);
}

// The client reads what the server writes: text, usage and errors, streamed or whole.
TEST(OpenAiProtocol, TheClientReadsTheServersAnswers) {
  openai::CompletionRequest chat;
  chat.chat = true;
  chat.include_usage = true;
  const openai::CompletionIdentity identity{"chatcmpl-1", "m", 0, "v"};
  const auto event_json = [](const std::string& event) {  // "data: {...}\n\n"
    return nlohmann::json::parse(event.substr(6, event.size() - 8));
  };
  EXPECT_FALSE(
      openai::read_answer_piece(event_json(openai::stream_event(chat, identity, "", std::nullopt, true)), true).has_text);
  EXPECT_TRUE(openai::read_answer_piece(event_json(openai::stream_event(chat, identity, "hi", std::nullopt)), true).has_text);
  const auto usage = openai::read_answer_piece(event_json(openai::usage_event(chat, identity, 4, 7)), true);
  EXPECT_EQ(usage.prompt_tokens, 4);
  EXPECT_EQ(usage.completion_tokens, 7);
  openai::CompletionRequest completion;
  const auto whole = openai::read_answer_piece(
      nlohmann::json::parse(openai::completion_body(completion, {"cmpl-1", "m", 0, "v"}, "text", FinishReason::kStop, 2, 3)),
      false);
  EXPECT_TRUE(whole.has_text);
  EXPECT_EQ(whole.completion_tokens, 3);
  const auto error = openai::read_answer_piece(nlohmann::json::parse(openai::openai_error_body(404, "no such model")), false);
  ASSERT_TRUE(error.error);
  EXPECT_NE(error.error->find("no such model"), std::string::npos);
}

TEST(OpenAiProtocol, InvalidUtf8InModelOutputIsReplacedNotFatal) {
  openai::CompletionRequest request;
  const auto body =
      openai::completion_body(request, {"cmpl-1", "m", 0, "v"}, std::string("ok\xff\xfe"), FinishReason::kLength, 1, 2);
  const auto parsed = nlohmann::json::parse(body);
  EXPECT_EQ(parsed["choices"][0]["text"], "ok\xEF\xBF\xBD\xEF\xBF\xBD");  // U+FFFD twice
  EXPECT_EQ(parsed["usage"]["total_tokens"], 3);
}

TEST(OpenAiProtocol, IgnoreEosAndMinTokensBarEndTokens) {
  const auto plain = openai::parse_completion_request(R"({"model":"m","prompt":"x","max_tokens":8})", false);
  EXPECT_EQ(plain.sampling.min_tokens, 0);
  const auto ignoring = openai::parse_completion_request(R"({"model":"m","prompt":"x","max_tokens":8,"ignore_eos":true})", false);
  EXPECT_EQ(ignoring.sampling.min_tokens, 8);  // every one of max_tokens
  const auto at_least = openai::parse_completion_request(
      R"({"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":8,"min_tokens":3})", true);
  EXPECT_EQ(at_least.sampling.min_tokens, 3);
  EXPECT_TRUE(at_least.ignored_fields.empty());
  EXPECT_NE(parse_error([] {
              openai::parse_completion_request(R"({"model":"m","prompt":"x","max_tokens":8,"min_tokens":9})", false);
            }).find("min_tokens: 9 is outside 0..8"),
            std::string::npos);
  EXPECT_NE(parse_error([] {
              openai::parse_completion_request(R"({"model":"m","prompt":"x","ignore_eos":"yes"})", false);
            }).find("ignore_eos: must be true or false"),
            std::string::npos);
}

TEST(OpenAiProtocol, FieldsWithNoEffectAreAcceptedAndNamed) {
  const auto request =
      openai::parse_completion_request(R"({"model":"m","prompt":"x","user":"u","top_k":5,"logprobs":2,"temperature":0})", false);
  EXPECT_EQ(request.ignored_fields, (std::vector<std::string>{"logprobs", "top_k", "user"}));
}

TEST(ServeMetricsIgnoredFields, CountedByNameLoggedOnceAndBounded) {
  ServeMetrics metrics;
  EXPECT_TRUE(metrics.count_ignored_field("user"));
  EXPECT_FALSE(metrics.count_ignored_field("user"));  // logged once
  for (std::size_t i = 1; i < ServeMetrics::kMaxIgnoredFieldNames; ++i) metrics.count_ignored_field("f" + std::to_string(i));
  EXPECT_TRUE(metrics.count_ignored_field("one_too_many"));  // the first "(other)"
  EXPECT_FALSE(metrics.count_ignored_field("and_another"));  // shares it
  const auto text = metrics.scrape();
  EXPECT_NE(text.find("infermark_openai_ignored_fields_total{field=\"user\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("infermark_openai_ignored_fields_total{field=\"(other)\"} 2"), std::string::npos);
  EXPECT_EQ(text.find("one_too_many"), std::string::npos);  // a client cannot grow the series without bound
}

// Emits a scripted token sequence per slot: 1 is the end token, anything else is the text "x".
// Like an engine that cannot bar end tokens, so the serving side's own rule is what is tested.
class EndTokenScript final : public Generator {
 public:
  explicit EndTokenScript(std::vector<TokenId> script) : script_(std::move(script)) {}
  int context_length() const override { return 64; }
  int vocab_size() const override { return 4; }
  int max_slots() const override { return 1; }
  GenerationBatching batching() const override { return GenerationBatching::kContinuous; }
  std::vector<TokenId> prompt_vocabulary() const override { return {2}; }
  void start(int, const std::vector<TokenId>&, int) override { next_ = 0; }
  void set_sampling(int, const Sampling& sampling) override { min_tokens_seen = sampling.min_tokens; }
  void step(const std::function<void(const GeneratedToken&)>& on_token) override {
    on_token({0, script_.at(next_++ % script_.size())});
  }
  void finish(int) override {}
  std::vector<EffectiveSetting> effective_settings() const override { return {}; }
  std::string token_piece(TokenId) const override { return "x"; }
  bool is_end_of_generation(TokenId token) const override { return token == 1; }
  std::atomic<int> min_tokens_seen{-1};

 private:
  std::vector<TokenId> script_;
  std::size_t next_ = 0;
};

StreamChunk generate_until_done(GenerationEngine& engine, int max_tokens, int min_tokens, std::string* text) {
  GenerationRequest request;
  request.prompt = {2, 2};
  request.max_tokens = max_tokens;
  request.sampling.min_tokens = min_tokens;
  request.channel = std::make_shared<TokenChannel>();
  auto channel = request.channel;
  EXPECT_TRUE(engine.submit(std::move(request)));
  std::promise<void> ended;
  std::function<void(std::vector<StreamChunk>)> collect;
  StreamChunk last;
  collect = [&](std::vector<StreamChunk> chunks) {
    for (auto& chunk : chunks) {
      *text += chunk.text;
      if (chunk.done) {
        last = chunk;
        ended.set_value();
        return;
      }
    }
    channel->next(collect);
  };
  channel->next(collect);
  EXPECT_EQ(ended.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  return last;
}

TEST(GenerationText, EndTokensEndARequestOnlyAfterItsMinTokens) {
  ServeMetrics metrics;
  ModelSpec model;
  model.name = "m";
  VariantSpec variant;
  variant.name = "v";
  variant.backend = "scripted";
  auto script = std::make_unique<EndTokenScript>(std::vector<TokenId>{2, 1, 2, 2, 1, 2, 2, 2});
  auto* generator = script.get();
  GenerationEngine engine(std::move(script), model, variant, metrics.generation("m", "v"));
  std::string text;
  auto plain = generate_until_done(engine, 8, 0, &text);
  EXPECT_EQ(plain.finish, FinishReason::kStop);  // the first end token ends it
  EXPECT_EQ(plain.completion_tokens, 2);
  EXPECT_EQ(text, "x");
  EXPECT_EQ(generator->min_tokens_seen, 0);  // the request's sampling reached the engine
  text.clear();
  auto at_least = generate_until_done(engine, 8, 3, &text);
  EXPECT_EQ(at_least.finish, FinishReason::kStop);  // the end token at 2 is passed over, the one at 5 ends it
  EXPECT_EQ(at_least.completion_tokens, 5);
  EXPECT_EQ(text, "xxx");  // an end token passed over is not text
  EXPECT_EQ(generator->min_tokens_seen, 3);
  text.clear();
  auto all = generate_until_done(engine, 8, 8, &text);  // ignore_eos
  EXPECT_EQ(all.finish, FinishReason::kLength);
  EXPECT_EQ(all.completion_tokens, 8);
  EXPECT_EQ(text, "xxxxxx");
}

TEST(GenerationText, SplitUtf8CharactersAreHeldBack) {
  EXPECT_EQ(complete_utf8_prefix("abc"), 3u);
  EXPECT_EQ(complete_utf8_prefix("ab\xC3"), 2u);             // first byte of a 2-byte character
  EXPECT_EQ(complete_utf8_prefix("ab\xC3\xA9"), 4u);         // é complete
  EXPECT_EQ(complete_utf8_prefix("a\xE2\x82"), 1u);          // 2 of 3 bytes of €
  EXPECT_EQ(complete_utf8_prefix("a\xF0\x9F\x98\x80"), 5u);  // a 4-byte emoji, complete
  EXPECT_EQ(complete_utf8_prefix("a\x80\x80\x80\x80"), 5u);  // stray continuation bytes do not stall the stream
}

TEST(TokenChannel, DeliversWhatIsPendingOrWaitsForIt) {
  TokenChannel channel;
  StreamChunk piece;
  piece.text = "a";
  channel.push(piece);
  std::vector<StreamChunk> got;
  channel.next([&](std::vector<StreamChunk> chunks) { got = std::move(chunks); });
  ASSERT_EQ(got.size(), 1u);  // already there: delivered at once
  got.clear();
  channel.next([&](std::vector<StreamChunk> chunks) { got = std::move(chunks); });
  EXPECT_TRUE(got.empty());  // nothing yet: waits
  StreamChunk last;
  last.done = true;
  channel.push(last);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].done);
}

}  // namespace
}  // namespace infermark::serve
