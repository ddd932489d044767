#include "report/recommend_figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "core/model_manifest.hpp"
#include "report/generation_table.hpp"
#include "stats/agreement_measure.hpp"

namespace infermark::report {
namespace {

using nlohmann::json;

// A pipeline's modes run the same stages: each is judged against the serial mode's outputs.
void fill_pipeline_accuracy(const result::PipelineRecord& p, CellFigures& f) {
  f.accuracy_measure = AccuracyMeasure::kAgreement;
  if (p.mode == result::PipelineMode::kSerial) {
    f.accuracy_loss = 0.0;
    f.accuracy_source = "0 for the serial mode, the pipeline's reference";
  } else if (p.max_abs_diff_vs_serial && *p.max_abs_diff_vs_serial == 0.0) {
    f.accuracy_loss = 0.0;
    f.accuracy_source = "0: the last outputs equal the serial mode's";
  } else {
    f.accuracy_source = p.max_abs_diff_vs_serial ? fmt::format("the last outputs differ from the serial mode's by up to {:.3g}",
                                                               *p.max_abs_diff_vs_serial)
                                                 : "the last outputs were not compared with the serial mode's";
  }
}

void fill_agreement_accuracy(const result::RunResult& r, CellFigures& f) {
  if (r.pipeline && !r.cross_check) {
    fill_pipeline_accuracy(*r.pipeline, f);
    return;
  }
  if (!r.cross_check) {
    f.accuracy_source = "no cross-check in the result (no reference backend ran)";
    return;
  }
  const auto& check = *r.cross_check;
  if (check.is_reference) {
    f.accuracy_loss = 0.0;
    f.accuracy_source = "0 for the cross-check reference itself";
    f.accuracy_measure = AccuracyMeasure::kAgreement;
    return;
  }
  std::optional<double> worst;
  std::string measure;
  for (const auto& o : check.outputs) {
    if (!o.comparable) {
      f.accuracy_source = fmt::format("output '{}' not comparable with {}: {}", o.output, check.reference_backend, o.note);
      return;
    }
    // By the output's kind where the manifest gave one (report/agreement_measure), as the table shows.
    const auto figure = stats::agreement_figure(o, kind_of(r.model.output_kinds, o.output));
    const double loss = 1.0 - figure.agreement;
    if (!worst || loss > *worst) {
      worst = loss;
      measure = "1 - " + stats::agreement_measure_name(figure.measure);
    }
  }
  if (!worst) {
    f.accuracy_source = "the cross-check compared no outputs";
    return;
  }
  f.accuracy_loss = std::max(0.0, *worst);
  f.accuracy_source = measure + " with " + check.reference_backend;
  f.accuracy_measure = AccuracyMeasure::kAgreement;
}

// A language model by its perplexity against its family's higher-precision cell; others against
// labels where the cell and its family's FP32 reference were judged on the same labelled inputs;
// otherwise by agreement with the cross-check reference.
void fill_accuracy(const result::RunResult& r, const LabelAccuracyLoss* labels, const PerplexityLoss* perplexity,
                   CellFigures& f) {
  if (r.label_accuracy) {
    f.label_top1 = r.label_accuracy->top1;
    f.label_samples = r.label_accuracy->samples;
  }
  if (perplexity) {
    f.accuracy_loss = std::max(0.0, perplexity->increase());
    f.accuracy_source = perplexity->describe();
    f.accuracy_measure = AccuracyMeasure::kPerplexity;
    return;
  }
  if (r.generation && !labels) {
    f.accuracy_source = r.generation->perplexity ? "no higher-precision cell of the model family scored the same text"
                                                 : "no perplexity in the result (run with --perplexity-text)";
    return;
  }
  if (!labels) {
    fill_agreement_accuracy(r, f);
    return;
  }
  f.accuracy_loss = std::max(0.0, labels->loss_points()) / 100.0;
  f.accuracy_source = labels->describe();
  f.accuracy_measure = AccuracyMeasure::kLabels;
  f.label_points_per_sample = labels->points_per_sample();
}

void fill_energy(const result::RunResult& r, CellFigures& f) {
  if (!r.resources) {
    f.energy_source = f.power_source = "no resource samples in the result";
    return;
  }
  const auto& summary = r.resources->summary;
  f.energy_source = f.power_source = summary.energy.source;
  if (summary.energy.available && r.resources->inferences_per_joule) f.inferences_per_joule = *r.resources->inferences_per_joule;
  f.average_watts = probes::mean_watts(summary.energy, summary.duration_s);  // over the span the joules cover
}

void fill_generation(const result::RunResult& r, CellFigures& f) {
  if (!r.generation) return;
  f.generation = true;
  if (r.generation->ttft_ms) f.ttft_p99_ms = r.generation->ttft_ms->at(99).value;
  if (r.generation->tpot_ms) f.tpot_p99_ms = r.generation->tpot_ms->at(99).value;
  f.parameters = model_parameters(r);
  f.gb_per_billion_parameters = gb_per_billion_parameters(r);
}

// FLOPs of one inference: --model-gflops, else the zoo manifest beside the model file (found
// from the recorded model path, so relative to where `run` was started).
void fill_model_gflops(const result::RunResult& r, const Constraints& c, CellFigures& f) {
  if (c.model_gflops) {
    f.model_gflops = *c.model_gflops;
    f.gflops_source = "--model-gflops";
    return;
  }
  const auto manifest = manifest_path(r.model.path);
  std::ifstream in(manifest);
  if (!in) return;
  const auto j = json::parse(in, nullptr, false);
  if (!j.is_object() || !j.value("gflops_per_inference", json()).is_number()) return;
  f.model_gflops = j["gflops_per_inference"].get<double>();
  f.gflops_source = "zoo manifest " + manifest.string();
}

}  // namespace

const char* accuracy_measure_name(AccuracyMeasure measure) {
  switch (measure) {
    case AccuracyMeasure::kNone:
      return "none";
    case AccuracyMeasure::kLabels:
      return "top-1 vs labels";
    case AccuracyMeasure::kAgreement:
      return "agreement with the reference backend";
    case AccuracyMeasure::kPerplexity:
      return "perplexity above the family's higher-precision cell";
  }
  return "";
}

CellFigures figures_of(const result::RunResult& r, const Constraints& c, const LabelAccuracyLoss* labels,
                       const PerplexityLoss* perplexity) {
  CellFigures f;
  f.p99_ms = r.latency_ms->at(99).value;
  f.inferences_per_s = r.throughput.inferences_per_s;
  // A searched SLA capacity says what a machine sustains; a closed-loop rate only what one run did.
  if (r.analysis.search) {
    f.qps = r.analysis.search->max_qps_within_sla * static_cast<double>(r.scenario.batch);
    f.qps_source = r.scenario.batch == 1 ? "max QPS within the SLA (searched)"
                                         : fmt::format("max QPS within the SLA (searched) x batch {}", r.scenario.batch);
  } else {
    f.qps = r.throughput.inferences_per_s;
    f.qps_source = "measured inferences/s";
  }
  f.peak_rss_mb = r.memory.peak_rss_mb;
  fill_accuracy(r, labels, perplexity, f);
  fill_energy(r, f);
  fill_generation(r, f);
  fill_model_gflops(r, c, f);
  return f;
}

}  // namespace infermark::report
