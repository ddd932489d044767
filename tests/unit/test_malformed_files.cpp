// Malformed pipeline, model repository and result files that the fuzz targets found escaping as
// yaml-cpp or nlohmann exceptions (docs/fuzzing.md): each must be an infermark::Error naming the
// file, which the CLI prints, not an exception that ends the program.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "pipeline/pipeline_file.hpp"
#include "result/run_result.hpp"
#include "serve/serve_config.hpp"

namespace infermark {
namespace {

// Throws infermark::Error whose message names `file`, or fails.
template <typename Parse>
void expect_error_naming(const std::string& file, Parse parse) {
  try {
    parse();
    ADD_FAILURE() << "no error for " << file;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
  }
}

const std::string kStages =
    "pipeline:\n  stages:\n    - {model: a.onnx, backend: onnxruntime}\n    - {model: b.onnx, backend: onnxruntime}\n";

TEST(MalformedFiles, PipelineListsAndMapsWhereValuesBelongAreErrors) {
  // fuzz_pipeline_yaml: `modes: [serial, processe:]` holds a map; yaml-cpp threw its bad conversion.
  for (const std::string tail : {"modes: [serial, processe:]\n", "modes: {serial: 1}\n", "? [a, b]\n: 1\n"})
    expect_error_naming("p.yaml", [&] { pipeline::parse_pipeline(kStages + tail, "p.yaml"); });
  expect_error_naming("p.yaml", [] {
    pipeline::parse_pipeline(
        "pipeline:\n  stages:\n    - {model: a.onnx, backend: onnxruntime, opt: {k: [1, 2]}}\n"
        "    - {model: b.onnx, backend: onnxruntime}\n",
        "p.yaml");
  });
  EXPECT_EQ(pipeline::parse_pipeline(kStages + "modes: serial\n", "p.yaml").modes,
            std::vector<result::PipelineMode>{result::PipelineMode::kSerial});
}

TEST(MalformedFiles, PipelineHandoffsAndTextChecksAreCheckedWithTheFileNamed) {
  const std::string crops =
      "pipeline:\n  handoff: text-crops\n  stages:\n    - {model: d.onnx, backend: onnxruntime}\n"
      "    - {model: r.onnx, backend: openvino}\n";
  const std::string check = "input: {x: photos.npy}\ntext_check: {labels: t.json, characters: c.txt}\n";
  const auto spec = pipeline::parse_pipeline(crops + check, "p.yaml");
  EXPECT_EQ(spec.handoff, pipeline::Handoff::kTextCrops);
  EXPECT_EQ(spec.inputs.files.at("x"), "photos.npy");
  ASSERT_TRUE(spec.text_check);
  EXPECT_EQ(spec.text_check->labels, "t.json");
  // Stage 1 hands on crops; the recogniser is bound at their size, not fed the photos.
  EXPECT_TRUE(pipeline::crops_after(spec, 0));
  EXPECT_FALSE(pipeline::crops_after(spec, 1));
  const auto rec = pipeline::stage_inputs(spec, 1);
  EXPECT_TRUE(rec.request.files.empty());
  EXPECT_EQ(*rec.first_input_shape, (std::vector<std::int64_t>{8, 3, 48, 320}));
  for (const std::string& bad :
       std::vector<std::string>{kStages + "  handoff: crops\n",                               // unknown handoff
                                kStages + check,                                              // a text check without text-crops
                                crops + "text_check: {labels: t.json, characters: c.txt}\n",  // ... or without an input file
                                crops + "    - {model: x.onnx, backend: onnxruntime}\n" + check,   // text-crops joins two stages
                                crops + "  text_crops: {max_lines: 0}\n",                          // no lines to hand on
                                crops + "  text_crops: {threshold: 2}\n",                          // outside (0, 1)
                                crops + "  text_crops: {lines: 4}\n",                              // unknown key
                                crops + "input: {x: photos.npy}\ntext_check: {labels: t.json}\n",  // no characters
                                crops + check + "batch: 4\n"})  // a batch beside per-sample inputs
    expect_error_naming("p.yaml", [&] { pipeline::parse_pipeline(bad, "p.yaml"); });
}

TEST(MalformedFiles, ModelRepositoryKeysAndOptionsMustBeValues) {
  // fuzz_serve_config: a variant whose key is a map (`precision: fp32,!opt: {...}`).
  const std::string head = "models:\n  - name: m\n    file: m.onnx\n    variants:\n      - ";
  for (const std::string variant :
       {"{backend: onnxruntime, {a: 1}: 2}", "{backend: onnxruntime, opt: {k: {x: 1}}}", "{backend: onnxruntime, opt: [1]}"})
    expect_error_naming("r.yaml", [&] { serve::parse_serve_config(head + variant + "\n", "r.yaml"); });
  // fuzz_serve_config (3-minute run): `batching: rrr`, a section that is a single value; yaml-cpp's
  // operator[] threw "operator[] call on a scalar".
  for (const std::string section : {"batching: rrr\n", "breaker: [1, 2]\n"})
    expect_error_naming("r.yaml", [&] {
      serve::parse_serve_config(
          "models:\n  - name: m\n    file: m.onnx\n    " + section + "    variants:\n      - {backend: onnxruntime}\n", "r.yaml");
    });
  expect_error_naming("r.yaml",
                      [&] { serve::parse_serve_config("server: 8000\n" + head + "{backend: onnxruntime}\n", "r.yaml"); });
  const auto config = serve::parse_serve_config(head + "{backend: onnxruntime, opt: {k: v}}\n", "r.yaml");
  EXPECT_EQ(config.models.at(0).variants.at(0).options.at("k"), "v");
}

TEST(MalformedFiles, ResultSchemaFieldsOfTheWrongTypeAreErrors) {
  // {"schema": 1}: nlohmann's value("schema", "") threw type_error.302 before the reader's catch.
  for (const auto* text : {R"({"schema": 1})", R"({"schema": "infermark.run-result", "schema_version": "x"})",
                           R"({"schema": "infermark.run-result", "schema_version": 1e300})"})
    expect_error_naming("r.json", [&] { result::run_result_from_json(nlohmann::json::parse(text), "r.json"); });
}

TEST(MalformedFiles, ResultIntegersOutOfRangeAreErrorsNotUndefinedCasts) {
  // fuzz_result_json (3-minute run): "size_bytes": 7.6e107 went through nlohmann's get<long long>(),
  // a float-to-integer cast out of range (UBSan: undefined behaviour).
  auto result = result::to_json(result::RunResult{});
  EXPECT_NO_THROW(result::run_result_from_json(result, "r.json"));
  for (const auto* pointer : {"/model/size_bytes", "/scenario/batch", "/scenario/seed", "/settings/requested/intra_op_threads"})
    for (const double value : {7.6e107, -1e300, -2.5}) {
      if (value == -2.5 && std::string(pointer) != "/scenario/seed") continue;  // negative is in range of the signed fields
      auto broken = result;
      broken[nlohmann::json::json_pointer(pointer)] = value;
      expect_error_naming("r.json", [&] { result::run_result_from_json(broken, "r.json"); });
    }
  result["scenario"]["batch"] = 8.0;  // an integral float still reads
  EXPECT_EQ(result::run_result_from_json(result, "r.json").scenario.batch, 8);
}

}  // namespace
}  // namespace infermark
