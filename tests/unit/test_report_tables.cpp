// The comparison tables of `run` and `report`: spread beside the mean, the relative column
// (fastest P50 = 1.00×), inferences/J only where energy was measured, and results from several
// machines kept apart with a framework × machine matrix.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/markdown_table.hpp"
#include "report/ab_table.hpp"
#include "report/cell_labels.hpp"
#include "report/comparison_table.hpp"
#include "report/html_report.hpp"
#include "report/markdown_report.hpp"
#include "report/relative_speed.hpp"
#include "unit/synthetic_results.hpp"

namespace {

namespace fs = std::filesystem;
namespace report = infermark::report;
namespace result = infermark::result;
namespace stats = infermark::stats;
using infermark::result::RunResult;
using infermark::testing::CellSpec;
using infermark::testing::latency_samples;
using infermark::testing::synthetic_result;

RunResult cell(const std::string& backend, double median_ms, std::uint64_t seed) {
  return synthetic_result(latency_samples(400, median_ms, seed, 0.02), CellSpec{backend}).result;
}

RunResult failed(const std::string& backend) {
  RunResult r;
  r.backend.name = backend;
  r.model.name = "resnet50";
  r.status = result::CellStatus::kFailed;
  r.error = backend + ": cannot load the model";
  return r;
}

void with_energy(RunResult& r, double joules, double inferences) {
  r.resources.emplace();
  r.resources->inferences = inferences;
  r.resources->summary.energy = {true, "rapl:package-0", joules};
  r.resources->inferences_per_joule = inferences / joules;
}

void without_energy(RunResult& r, const std::string& why) {
  r.resources.emplace();
  r.resources->inferences = 100;
  r.resources->summary.energy = {false, why, std::nan("")};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::size_t characters(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

TEST(RelativeSpeed, FastestIsOneAndOthersAreTheirP50Ratio) {
  const RunResult fast = cell("openvino", 2.0, 1), slow = cell("onnxruntime", 3.0, 2), broken = failed("opencv");
  const auto speeds = report::relative_speeds({&slow, &broken, &fast});
  ASSERT_TRUE(speeds[0] && speeds[2]);
  EXPECT_FALSE(speeds[1].has_value());
  EXPECT_DOUBLE_EQ(speeds[2]->ratio, 1.0);
  EXPECT_FALSE(speeds[2]->range.has_value());
  const auto& p50_slow = slow.latency_ms->at(50);
  const auto& p50_fast = fast.latency_ms->at(50);
  EXPECT_DOUBLE_EQ(speeds[0]->ratio, p50_slow.value / p50_fast.value);
  ASSERT_TRUE(speeds[0]->range.has_value());
  EXPECT_DOUBLE_EQ(speeds[0]->range->low, p50_slow.ci95->low / p50_fast.ci95->high);
  EXPECT_DOUBLE_EQ(speeds[0]->range->high, p50_slow.ci95->high / p50_fast.ci95->low);
  EXPECT_LE(speeds[0]->range->low, speeds[0]->ratio);
  EXPECT_GE(speeds[0]->range->high, speeds[0]->ratio);
  EXPECT_EQ(report::relative_text(speeds[2]), "1.00×");
  EXPECT_EQ(report::relative_text(speeds[1]), "-");
  EXPECT_EQ(report::relative_text(report::RelativeSpeed{1.625, stats::Interval{1.55, 1.7}}), "1.62× slower (1.55–1.70)");
  EXPECT_EQ(report::relative_text(report::RelativeSpeed{2.0, std::nullopt}), "2.00× slower");
}

TEST(RelativeSpeed, NoCompletedCellMeansNoComparison) {
  const RunResult a = failed("onnxruntime"), b = failed("openvino");
  for (const auto& speed : report::relative_speeds({&a, &b})) EXPECT_FALSE(speed.has_value());
}

TEST(ComparisonTable, MeanWithSpreadAndRelativeColumnAligned) {
  const auto table = report::comparison_table({cell("onnxruntime", 3.0, 2), cell("openvino", 2.0, 1), failed("opencv")});
  const RunResult ort = cell("onnxruntime", 3.0, 2);
  EXPECT_NE(table.find(fmt::format("{:.3f} ± {:.3f}", ort.latency_ms->mean, ort.latency_ms->stddev)), std::string::npos) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\| openvino .*\| +1\.00× \|)"))) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\| onnxruntime .*\| 1\.[45]\d× slower \(\d\.\d\d–\d\.\d\d\) \|)"))) << table;
  // Every table line is as wide as the header, "±" and "×" counted as one character.
  const auto lines = lines_of(table);
  for (std::size_t i = 1; i < 5; ++i) EXPECT_EQ(characters(lines[i]), characters(lines[0])) << lines[i];
}

TEST(ComparisonTable, RelativeColumnComparesCellsOfOneModelOnly) {
  RunResult other = cell("onnxruntime", 10.0, 3);
  other.model.name = "bert";
  const auto table = report::comparison_table({cell("onnxruntime", 3.0, 2), other});
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n') >= 4, true);
  EXPECT_EQ(table.find("slower"), std::string::npos) << table;  // each is the fastest of its model
}

TEST(ComparisonTable, InferencesPerJouleWhereMeasuredAndDashWithAFootnoteElsewhere) {
  RunResult measured = cell("openvino", 2.0, 1), unmeasured = cell("onnxruntime", 3.0, 2);
  with_energy(measured, 4.0, 1000.0);
  without_energy(unmeasured, "RAPL not readable: /sys/class/powercap does not exist (no powercap driver)");
  const auto table = report::comparison_table({measured, unmeasured});
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\| inferences/J \|)"))) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\| openvino .*\| +250\.0 \|)"))) << table;
  EXPECT_NE(table.find("inferences/J not measured here for 1 of 2 cells: RAPL not readable: /sys/class/powercap does not exist "
                       "(no powercap driver); it needs readable RAPL counters"),
            std::string::npos)
      << table;
}

TEST(ComparisonTable, NoEnergyAnywhereOmitsTheColumnAndSaysWhyOnce) {
  RunResult a = cell("openvino", 2.0, 1), b = cell("onnxruntime", 3.0, 2);
  without_energy(a, "no RAPL here");
  without_energy(b, "no RAPL here");
  const auto table = report::comparison_table({a, b});
  EXPECT_EQ(table.find("| inferences/J"), std::string::npos) << table;
  EXPECT_NE(table.find("inferences/J not measured here for 2 of 2 cells: no RAPL here;"), std::string::npos) << table;
  EXPECT_EQ(report::scenario_notes({a, b}).find("energy"), std::string::npos);  // said once, under the table
}

TEST(ComparisonTable, EnergyNoteKeepsSignificantDigitsOfASmallSpan) {
  RunResult r = cell("openvino", 2.0, 1);
  with_energy(r, 0.04, 100.0);
  EXPECT_NE(report::scenario_notes({r}).find("energy: 0.04000 J, 2500 inferences/J (rapl:package-0)"), std::string::npos)
      << report::scenario_notes({r});
}

TEST(MarkdownReport, SummaryHasSpreadRelativeAndEnergyColumns) {
  auto a = synthetic_result(latency_samples(400, 2.0, 1, 0.02), CellSpec{"openvino"});
  auto b = synthetic_result(latency_samples(400, 4.0, 2, 0.02), CellSpec{"onnxruntime"});
  with_energy(a.result, 2.0, 1000.0);
  without_energy(b.result, "RAPL not readable: permission denied");
  const auto md = report::markdown_report({a, b});
  EXPECT_NE(md.find("Measured on unknown host (Test CPU)."), std::string::npos) << md;
  EXPECT_TRUE(std::regex_search(
      md, std::regex(R"(\| mean ± sd ms \| P50 ms \| P99 ms \| +relative P50 \| inferences/s \| peak MB \| inferences/J \|)")))
      << md;
  EXPECT_TRUE(std::regex_search(md, std::regex(R"(\| openvino t2 .*\| +1\.00× \|.*\| +500\.0 \|)"))) << md;
  EXPECT_TRUE(std::regex_search(md, std::regex(R"(\| onnxruntime t2 .*\| (1\.9\d|2\.0\d)× slower .*\| +- \|)"))) << md;
  EXPECT_NE(md.find("- inferences/J not measured here for 1 of 2 cells: RAPL not readable: permission denied;"),
            std::string::npos)
      << md;
}

// Two machines' results, derived from a real result file by changing only its host and CPU.
class HardwareMatrix : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test: ctest runs this fixture's tests in parallel.
    dir_ = fs::temp_directory_path() /
           ("infermark_hardware_matrix_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ifstream in(fs::path(INFERMARK_SOURCE_DIR) / "tests/fuzz/corpus/fuzz_result_json/tiny_cnn.onnxruntime.json");
    original_ = nlohmann::json::parse(in);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& file, const std::string& host, const std::string& cpu) const {
    auto json = original_;
    json["environment"]["hostname"] = host;
    json["environment"]["cpu_model"] = cpu;
    std::ofstream(dir_ / file) << json.dump();
  }

  fs::path dir_;
  nlohmann::json original_;
};

TEST_F(HardwareMatrix, ResultsFromTwoMachinesGetAMatrixAndTablesPerMachine) {
  write("a.json", "edge-box", "Intel Core i5-8250U");
  write("b.json", "cloud-vm", "AMD EPYC 7B13");
  const auto results = report::load_results({dir_.string()});
  ASSERT_EQ(results.size(), 2u);
  const auto md = report::markdown_report(results);
  const auto& r = results[0].result;
  const auto figures = fmt::format("{:.2f} / {:.2f} / {:.1f}", r.latency_ms->at(50).value, r.latency_ms->at(99).value,
                                   r.throughput.inferences_per_s);
  EXPECT_NE(md.find("### Framework × machine (P50 ms / P99 ms / inferences/s)"), std::string::npos) << md;
  EXPECT_TRUE(std::regex_search(
      md, std::regex(R"(\| framework \\ machine +\| cloud-vm \(AMD EPYC 7B13\) +\| edge-box \(Intel Core i5-8250U\) +\|)")))
      << md;
  EXPECT_NE(md.find("| " + report::cell_label(r) + " "), std::string::npos) << md;
  const auto matrix_row = md.substr(md.find("| " + report::cell_label(r) + " "));
  EXPECT_EQ(lines_of(matrix_row)[0].find(figures) != std::string::npos, true) << matrix_row;
  EXPECT_NE(lines_of(matrix_row)[0].find(figures, lines_of(matrix_row)[0].find(figures) + 1), std::string::npos) << matrix_row;
  const auto first = md.find("### Measured on cloud-vm (AMD EPYC 7B13)"),
             second = md.find("### Measured on edge-box (Intel Core i5-8250U)");
  ASSERT_NE(first, std::string::npos) << md;
  ASSERT_NE(second, std::string::npos) << md;
  // Each machine's summary compares its own cells: a lone cell is its machine's fastest.
  EXPECT_NE(md.substr(first, second - first).find("1.00×"), std::string::npos) << md;
  EXPECT_NE(md.substr(second).find("1.00×"), std::string::npos) << md;
  EXPECT_NE(md.find("Machines (results come from different machines!)"), std::string::npos) << md;
}

TEST_F(HardwareMatrix, OneMachineNamesItAndHasNoMatrix) {
  write("a.json", "edge-box", "Intel Core i5-8250U");
  write("b.json", "edge-box", "Intel Core i5-8250U");
  const auto md = report::markdown_report(report::load_results({dir_.string()}));
  EXPECT_NE(md.find("Measured on edge-box (Intel Core i5-8250U).\n"), std::string::npos) << md;
  EXPECT_EQ(md.find("Framework × machine"), std::string::npos) << md;
}

TEST_F(HardwareMatrix, CsvKeepsItsColumnsAndAddsEnergyAndMachineAtTheEnd) {
  write("a.json", "edge-box", "Intel Core i5-8250U");
  const auto csv = report::csv_report(report::load_results({dir_.string()}));
  const auto lines = lines_of(csv);
  EXPECT_EQ(lines[0],
            "model,backend,version,threads,precision,batch,scenario,status,p50_ms,p99_ms,mean_ms,inferences_per_s,peak_rss_mb,"
            "energy_per_inference,agreement,file,inferences_per_j,machine");
  EXPECT_TRUE(lines[1].ends_with(",-,edge-box (Intel Core i5-8250U)")) << lines[1];  // the fixture measured no energy
}

TEST(MarkdownReport, LlmCellsFromTwoMachinesGetOneGenerationTablePerMachine) {
  std::vector<report::LoadedResult> cells;
  for (const auto& [host, tokens_per_s] : {std::pair{"gpu-box", 120.0}, std::pair{"laptop", 15.0}}) {
    auto cell = synthetic_result(latency_samples(50, 40.0, 7), CellSpec{"llamacpp", "4", "llama-tiny"});
    cell.result.environment["hostname"] = host;
    cell.result.generation.emplace();
    cell.result.generation->output_tokens_per_s = tokens_per_s;
    cells.push_back(cell);
  }
  const auto md = report::markdown_report(cells);
  const auto gpu = md.find("### LLM serving (generation scenario) on gpu-box (Test CPU)");
  const auto laptop = md.find("### LLM serving (generation scenario) on laptop (Test CPU)");
  ASSERT_NE(gpu, std::string::npos) << md;
  ASSERT_NE(laptop, std::string::npos) << md;
  ASSERT_LT(gpu, laptop);
  // Each machine's table holds its own cell only.
  const auto gpu_table = md.substr(gpu, laptop - gpu), laptop_table = md.substr(laptop);
  EXPECT_TRUE(std::regex_search(gpu_table, std::regex(R"(\| llamacpp .*\| +120\.0 \|)"))) << md;
  EXPECT_EQ(gpu_table.find("15.00"), std::string::npos) << md;
  EXPECT_TRUE(std::regex_search(laptop_table, std::regex(R"(\| llamacpp .*\| +15\.00 \|)"))) << md;
  EXPECT_EQ(laptop_table.find("120.0"), std::string::npos) << md;
  EXPECT_NE(md.find("Machines (results come from different machines!): gpu-box (Test CPU), 0 logical cores; laptop (Test CPU)"),
            std::string::npos)
      << md;
}

}  // namespace

namespace {

// Two variants of an `infermark serve` session (control: the larger weight) and an in-process
// cell, which is no variant of it.
std::vector<report::LoadedResult> serve_session() {
  const auto variant = [](const std::string& name, double median_ms, double weight, std::uint64_t seed) {
    return synthetic_result(latency_samples(400, median_ms, seed, 0.05),
                            {.backend = name, .origin = result::ResultOrigin::kServed, .weight = weight});
  };
  return {variant("ort", 2.0, 0.9, 1), variant("ov", 3.0, 0.1, 2),
          synthetic_result(latency_samples(400, 1.0, 3, 0.05), CellSpec{"openvino"})};
}

TEST(AbTable, EachServedVariantAgainstTheControl) {
  const auto ab = report::ab_comparison(serve_session());
  EXPECT_EQ(ab.control, "ort");
  EXPECT_EQ(ab.control_requests, 400);
  ASSERT_EQ(ab.rows.size(), 1u);  // the in-process cell is no variant
  EXPECT_EQ(ab.rows[0].variant, "ov");
  EXPECT_NEAR(ab.rows[0].p50.change_pct, 50.0, 5.0);
  EXPECT_EQ(ab.rows[0].p50.verdict, report::Verdict::kRegression);
  const auto md = report::ab_table(serve_session());
  EXPECT_NE(md.find("### A/B on live traffic (against the control 'ort', 400 requests)"), std::string::npos) << md;
  EXPECT_TRUE(std::regex_search(md, std::regex(R"(\| ov +\| +400 \| +\+\d+\.\d% \[)"))) << md;
}

// The HTML report gets the A/B comparison as rows for its sortable tables, not Markdown for a <pre>.
TEST(HtmlReport, TheAbSectionIsRowsOfASortableTable) {
  const auto web = fs::temp_directory_path() / "infermark_html_ab_test";
  fs::remove_all(web);
  fs::create_directories(web / "node_modules/chart.js/dist");
  for (const char* file : {"report_template.html", "report_scenarios.js", "report_llm.js"})
    fs::copy_file(fs::path(INFERMARK_SOURCE_DIR) / "web" / file, web / file);
  std::ofstream(web / "node_modules/chart.js/package.json") << R"({"jsdelivr": "dist/chart.umd.js"})";
  std::ofstream(web / "node_modules/chart.js/dist/chart.umd.js") << "/* chart library stand-in */";
  const auto html = report::render_html_report(serve_session(), web);
  fs::remove_all(web);

  const std::string open = R"(<script type="application/json" id="infermark-data">)";
  const auto begin = html.find(open) + open.size();
  ASSERT_NE(html.find(open), std::string::npos);
  const auto data = nlohmann::json::parse(html.substr(begin, html.find("</script>", begin) - begin));
  const auto& group = data["groups"][0];
  EXPECT_FALSE(group.contains("ab_markdown"));
  ASSERT_TRUE(group.contains("ab")) << group.dump();
  EXPECT_EQ(group["ab"]["control"], "ort");
  ASSERT_EQ(group["ab"]["rows"].size(), 1u);
  EXPECT_EQ(group["ab"]["rows"][0]["variant"], "ov");
  EXPECT_EQ(group["ab"]["rows"][0]["p50"]["verdict"], "regression");
  EXPECT_TRUE(group["ab"]["rows"][0]["p50"]["change_pct"].is_number());
  // The page renders those rows with the sortable table every other section uses.
  EXPECT_NE(html.find(R"(sortableTable("ab", AB_COLUMNS)"), std::string::npos);
  EXPECT_EQ(html.find(R"(el("pre")"), std::string::npos);
}

// A framework that ran another thread count than asked (OpenVINO caps at the cores): the label
// says so, so cells asked for 3 and 4 threads never read alike, in either labelling.
TEST(CellLabel, NamesAThreadCountTheFrameworkDidNotApply) {
  RunResult asked3 = cell("openvino", 5.0, 1), asked4 = cell("openvino", 5.0, 2), applied = cell("openvino", 5.0, 3);
  asked3.effective_settings = {
      {"intra_op_threads", "3", "2", infermark::SettingState::kNotApplied, "OpenVINO chose a different thread count"}};
  asked4.effective_settings = {
      {"intra_op_threads", "4", "2", infermark::SettingState::kNotApplied, "OpenVINO chose a different thread count"}};
  applied.effective_settings = {{"intra_op_threads", "2", "2", infermark::SettingState::kVerified, ""}};
  EXPECT_EQ(report::cell_label(asked3), "openvino t2 (asked 3)");
  EXPECT_EQ(report::cell_label(asked4), "openvino t2 (asked 4)");
  EXPECT_EQ(report::cell_label(applied), "openvino t2");
  const std::vector<report::LoadedResult> loaded{{asked3, "a.json"}, {asked4, "b.json"}, {applied, "c.json"}};
  const auto labels = report::label_cells(loaded);
  EXPECT_EQ(labels.cells[0].text, "openvino t2 (asked 3)");
  EXPECT_EQ(labels.cells[1].text, "openvino t2 (asked 4)");
  EXPECT_EQ(labels.cells[2].text, "openvino t2");
}

}  // namespace
