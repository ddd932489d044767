// Studies: YAML text -> the study model -> its cells (every model x backend x axis combination,
// first axis turning fastest), each cell's `run` options, and errors that point at the line and
// column of what is wrong.
#include "study/study.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "cli/run_flags.hpp"
#include "core/error.hpp"
#include "harness/run_options.hpp"
#include "probes/environment.hpp"

namespace infermark::study {
namespace {

// The message of the infermark::Error that parsing `yaml` as studies/s.yaml throws, or "".
std::string study_error(const std::string& yaml) {
  try {
    parse_study(yaml, "studies/s.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> names(const std::vector<StudyCell>& cells) {
  std::vector<std::string> out;
  for (const auto& c : cells) out.push_back(c.name);
  return out;
}

TEST(Study, ParsesTheModel) {
  const auto study = parse_study(R"(name: small
description: threads against batch
models: [m/tiny_cnn.onnx, m/tiny_head.onnx]
backends: [onnxruntime, openvino]
base: {scenario: concurrency, concurrency: 2}
axes:
  threads: [1, 2]
  batch: [1, 4, 16]
)",
                                 "studies/small.yaml");
  EXPECT_EQ(study.file, "studies/small.yaml");
  EXPECT_EQ(study.name, "small");
  EXPECT_EQ(study.description, "threads against batch");
  EXPECT_EQ(study.models, (std::vector<std::string>{"m/tiny_cnn.onnx", "m/tiny_head.onnx"}));
  EXPECT_EQ(study.backends, (std::vector<std::string>{"onnxruntime", "openvino"}));
  EXPECT_EQ(study.base, (std::map<std::string, std::string>{{"concurrency", "2"}, {"scenario", "concurrency"}}));
  EXPECT_EQ(study.base_origins.at("concurrency"), "studies/small.yaml:5:44");
  ASSERT_EQ(study.axes.size(), 2u);  // in the file's order, not alphabetical
  EXPECT_EQ(study.axes[0].flag, "threads");
  EXPECT_EQ(study.axes[0].values, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(study.axes[0].origins, (std::vector<std::string>{"studies/small.yaml:7:13", "studies/small.yaml:7:16"}));
  EXPECT_EQ(study.axes[1].flag, "batch");
  EXPECT_EQ(study.axes[1].values, (std::vector<std::string>{"1", "4", "16"}));
  EXPECT_EQ(summary_header(study), "# Study small\n\nthreads against batch\n\n");
  EXPECT_EQ(study_folder("results", study), "results/study-small");
}

TEST(Study, ExpandsEveryCombinationFirstAxisFastest) {
  const auto study = parse_study(R"(models: [m/tiny_cnn.onnx, m/tiny_head.onnx]
backends: [onnxruntime, openvino]
axes:
  threads: [1, 2]
  batch: [1, 4, 16]
)",
                                 "s.yaml");
  EXPECT_EQ(study.name, "s");                         // the file's stem
  const auto cells = expand(study, {"onnxruntime"});  // named backends are taken as given
  ASSERT_EQ(cells.size(), 2u * 2u * 2u * 3u);
  const auto all = names(cells);
  EXPECT_EQ(std::vector<std::string>(all.begin(), all.begin() + 6),
            (std::vector<std::string>{"tiny_cnn.onnxruntime.threads-1.batch-1", "tiny_cnn.onnxruntime.threads-2.batch-1",
                                      "tiny_cnn.onnxruntime.threads-1.batch-4", "tiny_cnn.onnxruntime.threads-2.batch-4",
                                      "tiny_cnn.onnxruntime.threads-1.batch-16", "tiny_cnn.onnxruntime.threads-2.batch-16"}));
  EXPECT_EQ(cells[6].name, "tiny_cnn.openvino.threads-1.batch-1");
  EXPECT_EQ(cells[12].name, "tiny_head.onnxruntime.threads-1.batch-1");
  EXPECT_EQ(cells.back().name, "tiny_head.openvino.threads-2.batch-16");
  EXPECT_EQ(cells.back().model, "m/tiny_head.onnx");
  EXPECT_EQ(cells.back().backend, "openvino");
  EXPECT_EQ(cells[3].settings, (std::vector<std::pair<std::string, std::string>>{{"threads", "2"}, {"batch", "4"}}));
  EXPECT_EQ(cells[3].origins, (std::vector<std::string>{"s.yaml:4:16", "s.yaml:5:14"}));
  EXPECT_EQ(settings_text(cells[3]), "threads=2, batch=4");
  // Every name is distinct: each cell keeps its own result file.
  auto sorted = all;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end());
}

TEST(Study, WithoutBackendsEveryAvailableOneThatReadsTheModel) {
  const auto study = parse_study("models: [a.onnx, b.pt]\n", "s.yaml");
  const auto cells = expand(study, {"onnxruntime", "libtorch", "openvino"});
  EXPECT_EQ(names(cells), (std::vector<std::string>{"a.onnxruntime", "a.openvino", "b.libtorch"}));
  EXPECT_EQ(settings_text(cells[0]), "-");
  EXPECT_TRUE(expand(study, {"tflite"}).empty());
  // Named backends too are paired only with the models they read.
  const auto named = parse_study("models: [a.onnx, b.pt]\nbackends: [onnxruntime, libtorch]\n", "s.yaml");
  EXPECT_EQ(names(expand(named, {"onnxruntime"})), (std::vector<std::string>{"a.onnxruntime", "b.libtorch"}));
  // One network in two formats on one backend: two cells, two result files.
  const auto formats = parse_study("models: [m/r.onnx, m/r.xml, m/s.onnx]\nbackends: [openvino]\n", "s.yaml");
  EXPECT_EQ(names(expand(formats, {"openvino"})), (std::vector<std::string>{"r-onnx.openvino", "r-xml.openvino", "s.openvino"}));
  // The same stem on different backends keeps the plain names (existing study folders resume).
  const auto apart = parse_study("models: [m/r.onnx, m/r.pt]\nbackends: [onnxruntime, libtorch]\n", "s.yaml");
  EXPECT_EQ(names(expand(apart, {"onnxruntime"})), (std::vector<std::string>{"r.onnxruntime", "r.libtorch"}));
  // `model:` with one value is accepted as well.
  EXPECT_EQ(parse_study("model: a.onnx\n", "s.yaml").models, std::vector<std::string>{"a.onnx"});
}

TEST(Study, ServersAreColumnsUnderEveryAxis) {
  const auto study = parse_study(R"(models: [m/tiny_cnn.onnx]
backends: [onnxruntime]
servers:
  - {url: http://127.0.0.1:8000, model: tiny_cnn}
  - {url: "127.0.0.1:8001", protocol: kserve-grpc, model: tiny_cnn}
axes:
  concurrency: [1, 4]
)",
                                 "s.yaml");
  ASSERT_EQ(study.servers.size(), 2u);
  EXPECT_EQ(study.servers[0].protocol, "kserve");  // the default, as `load`
  EXPECT_EQ(study.servers[1].origin, "s.yaml:5:5");
  const auto cells = expand(study, {});
  EXPECT_EQ(names(cells), (std::vector<std::string>{"tiny_cnn.onnxruntime.concurrency-1", "tiny_cnn.onnxruntime.concurrency-4",
                                                    "tiny_cnn.remote-kserve-127.0.0.1_8000.concurrency-1",
                                                    "tiny_cnn.remote-kserve-127.0.0.1_8000.concurrency-4",
                                                    "tiny_cnn.remote-kserve-grpc-127.0.0.1_8001.concurrency-1",
                                                    "tiny_cnn.remote-kserve-grpc-127.0.0.1_8001.concurrency-4"}));
  EXPECT_FALSE(cells[0].server);
  ASSERT_TRUE(cells[4].server);
  EXPECT_EQ(cells[4].backend, "remote");
  EXPECT_EQ(cells[4].model, "127.0.0.1:8001");
  EXPECT_EQ(cells[4].server->protocol, "kserve-grpc");
  // A study of servers alone needs no models.
  EXPECT_EQ(expand(parse_study("servers: [{url: http://h:1, model: m}]\n", "s.yaml"), {"onnxruntime"}).size(), 1u);
}

TEST(Study, ValuesBecomeSafeFileStems) {
  const auto study = parse_study(
      "models: [a.onnx]\nbackends: [onnxruntime]\naxes:\n  shape: [\"input=1x3x32x32\"]\n"
      "  opt: [\"mode=a b/c\"]\n",
      "s.yaml");
  const auto cells = expand(study, {});
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].name, "a.onnxruntime.shape-input_1x3x32x32.opt-mode_a_b_c");
  EXPECT_EQ(cells[0].settings[1], (std::pair<std::string, std::string>{"opt", "mode=a b/c"}));
}

TEST(Study, ThreadsAsMultiplesOfTheCoresAreResolvedAndDeduplicated) {
  const int cores = probes::capture_environment().physical_cores;
  const auto study = parse_study("models: [a.onnx]\naxes:\n  threads: [1, 1x, 2x, 2]\n  batch: [1, 1]\n", "s.yaml");
  std::vector<std::string> expected;
  for (const auto& v :
       {std::string("1"), std::to_string(std::max(1, cores)), std::to_string(std::max(1, 2 * cores)), std::string("2")})
    if (std::find(expected.begin(), expected.end(), v) == expected.end()) expected.push_back(v);
  EXPECT_EQ(study.axes[0].values, expected);
  EXPECT_EQ(study.axes[0].origins.size(), expected.size());
  EXPECT_EQ(study.axes[1].values, (std::vector<std::string>{"1", "1"}));  // only threads are resolved
  EXPECT_EQ(study_error("models: [a.onnx]\naxes:\n  threads: [2, fourx]\n"),
            "studies/s.yaml:3:16: threads fourx: expected a count or a multiple of the physical cores such as 1.5x");
  for (const std::string bad : {"nanx", "infx", "1e300x", "-2x"})
    EXPECT_NE(study_error("models: [a.onnx]\naxes:\n  threads: [" + bad + "]\n").find("threads " + bad + ": expected a count"),
              std::string::npos)
        << bad;
}

TEST(Study, SearchAxesAreOrderedWhereEveryValueIsANumber) {
  const auto study = parse_study("models: [a.onnx]\naxes:\n  threads: [1, 2, 4]\n  opt: [a=1, a=2]\n  batch: [1, 8]\n", "s.yaml");
  const auto axes = search_axes(study);
  ASSERT_EQ(axes.size(), 3u);
  EXPECT_EQ(axes[0].size, 3u);
  EXPECT_TRUE(axes[0].ordered);
  EXPECT_EQ(axes[1].size, 2u);
  EXPECT_FALSE(axes[1].ordered);
  EXPECT_TRUE(axes[2].ordered);
  // The search's grid index is the cell's position within its (model, backend) group.
  const auto cells = expand(study, {"onnxruntime"});
  EXPECT_EQ(cells[grid_index(axes, {2, 1, 1})].name, "a.onnxruntime.threads-4.opt-a_2.batch-8");
}

TEST(Study, ScoresOnlyMeasuredCells) {
  result::RunResult r;
  r.status = infermark::result::CellStatus::kOk;
  EXPECT_FALSE(score_of(r).measured);  // no latency
  r.latency_ms = stats::summarize(std::vector<double>{1, 2, 3, 4, 100});
  r.throughput.inferences_per_s = 250;
  const auto score = score_of(r);
  EXPECT_TRUE(score.measured);
  EXPECT_EQ(score.throughput, 250);
  EXPECT_EQ(score.p99_ms, r.latency_ms->at(99).value);
  EXPECT_GT(score.p99_ms, 4);
  r.status = infermark::result::CellStatus::kCrashed;
  EXPECT_FALSE(score_of(r).measured);
  EXPECT_EQ(score_of(r).throughput, 0);
}

TEST(Study, ErrorsPointAtTheLineAndColumn) {
  EXPECT_EQ(study_error("models: [a.onnx]\naxes:\n  threads: [1, 2\n"),
            "studies/s.yaml:4:1: YAML syntax error: end of sequence flow not found");
  EXPECT_EQ(study_error("models: [a.onnx]\nwibble: 3\n"),
            "studies/s.yaml:2:1: unknown key 'wibble' (a study has name, description, models, backends, servers, base, axes)");
  EXPECT_EQ(study_error("models: [a.onnx]\nbackends: [onnxruntime, tensorflowz]\n")
                .rfind("studies/s.yaml:2:25: unknown backend 'tensorflowz'", 0),
            0u)
      << study_error("models: [a.onnx]\nbackends: [onnxruntime, tensorflowz]\n");
  EXPECT_EQ(study_error("models: [a.onnx]\naxes:\n  batch: []\n"), "studies/s.yaml:3:10: axis 'batch' has no values");
  EXPECT_EQ(study_error("models: [a.onnx]\naxes:\n  batch: [[1, 2]]\n"),
            "studies/s.yaml:3:11: 'batch' takes a single value here");
  EXPECT_EQ(study_error("models: [a.onnx]\naxes: [threads, batch]\n"),
            "studies/s.yaml:2:7: 'axes' must map run flags to lists of values");
  EXPECT_EQ(study_error("models: [a.onnx]\nbase: 3\n"), "studies/s.yaml:2:7: 'base' must map run flags to values");
  EXPECT_EQ(study_error("models: [a.onnx]\nbase: {batch: [1, 2]}\n"), "studies/s.yaml:2:15: 'batch' takes a single value here");
  EXPECT_EQ(study_error("models: {a: 1}\n"), "studies/s.yaml:1:9: 'models' must be a value or a list of values");
  EXPECT_EQ(study_error("backends: [onnxruntime]\n"), "studies/s.yaml: no 'models' (list of model files) and no 'servers'");
  EXPECT_EQ(study_error("servers: http://h:1\n"), "studies/s.yaml:1:10: 'servers' must be a list of {url, protocol, model}");
  EXPECT_EQ(study_error("servers: [{model: m}]\n"), "studies/s.yaml:1:11: the server has no 'url'");
  EXPECT_EQ(study_error("servers: [{url: http://h:1, port: 3}]\n"),
            "studies/s.yaml:1:29: unknown key 'port' (a server has url, protocol, model)");
  EXPECT_EQ(study_error("- a.onnx\n"), "studies/s.yaml: a study is a YAML mapping with name, models, backends and axes");
  EXPECT_EQ(study_error("models: [a.onnx]\n"), "");
}

TEST(Study, LoadsFromAFile) {
  const auto dir = std::filesystem::temp_directory_path() / "infermark_test_study";
  std::filesystem::create_directories(dir);
  const auto file = dir / "file_study.yaml";
  std::ofstream(file) << "models: [a.onnx]\nbackends: [onnxruntime]\naxes:\n  batch: [1, 2]\n";
  const auto study = load_study(file);
  EXPECT_EQ(study.name, "file_study");
  EXPECT_EQ(study.axes.at(0).origins, (std::vector<std::string>{file.string() + ":4:11", file.string() + ":4:14"}));
  try {
    load_study(dir / "missing.yaml");
    FAIL() << "a missing file loads";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), (dir / "missing.yaml").string() + ": cannot read the study file");
  }
}

// A cell's settings are `run` flags: parsed by the same definitions, checked before anything runs.
TEST(StudyCellOptions, BaseAndAxisFlagsBecomeTheCellsRunOptions) {
  const auto study = parse_study(R"(models: [m/tiny_cnn.onnx]
backends: [onnxruntime]
base: {scenario: concurrency, concurrency: 2, seed: 9}
axes:
  threads: [1, 3]
  batch: [2, 8]
)",
                                 "s.yaml");
  const auto cells = expand(study, {});
  ASSERT_EQ(cells.size(), 4u);
  const auto options = cli::cell_options(study, cells[3]);  // threads 3, batch 8
  EXPECT_EQ(options.model, "m/tiny_cnn.onnx");
  EXPECT_EQ(options.threads, std::vector<int>{3});
  EXPECT_EQ(options.batch, 8);
  EXPECT_EQ(options.seed, 9u);
  EXPECT_EQ(options.scenario.name, loadgen::Scenario::kConcurrency);
  const auto cell = harness::to_cell(options, cells[3].backend, harness::thread_counts(options).front());
  EXPECT_EQ(cell.options.intra_op_threads, 3);
  EXPECT_EQ(cell.inputs.batch, 8);
  EXPECT_EQ(cell.scenario.concurrency, 2);
  EXPECT_EQ(cell.scenario.seed, 9u);
}

TEST(StudyCellOptions, ABadValueNamesItsLineColumnCellAndFlag) {
  const auto study =
      parse_study("models: [m/tiny_cnn.onnx]\nbackends: [onnxruntime]\naxes:\n  threads: [1]\n  batch: [4, 0]\n", "s.yaml");
  const auto cells = expand(study, {});
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_NO_THROW(cli::cell_options(study, cells[0]));
  try {
    cli::cell_options(study, cells[1]);
    FAIL() << "batch 0 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "s.yaml:5:14: cell tiny_cnn.onnxruntime.threads-1.batch-0: --batch: 0 must be above 0");
  }
  const auto base = parse_study("models: [a.onnx]\nbackends: [onnxruntime]\nbase:\n  precision: int3\n", "s.yaml");
  try {
    cli::cell_options(base, expand(base, {}).at(0));
    FAIL() << "precision int3 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("s.yaml:4:14: cell a.onnxruntime: --precision", 0), 0u) << e.what();
  }
  const auto unknown = parse_study("models: [a.onnx]\nbackends: [onnxruntime]\naxes:\n  turbo: [on]\n", "s.yaml");
  try {
    cli::cell_options(unknown, expand(unknown, {}).at(0));
    FAIL() << "an unknown flag accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("s.yaml:4:11: cell a.onnxruntime.turbo-on: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace infermark::study
