#include "stats/output_agreement.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace infermark::stats {
namespace {

double cosine(const std::vector<double>& a, const std::vector<double>& b) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  if (na == 0 && nb == 0) return 1.0;
  if (na == 0 || nb == 0) return 0.0;
  return dot / (std::sqrt(na) * std::sqrt(nb));
}

// Rows are all leading axes flattened; classes are the last axis.
std::optional<double> top1(const std::vector<double>& a, const std::vector<double>& b, const std::vector<std::int64_t>& shape) {
  if (shape.size() < 2 || shape.back() < 2) return std::nullopt;
  const auto classes = static_cast<std::size_t>(shape.back());
  const std::size_t rows = a.size() / classes;
  if (rows == 0) return std::nullopt;
  std::size_t same = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const auto begin_a = a.begin() + static_cast<std::ptrdiff_t>(r * classes);
    const auto begin_b = b.begin() + static_cast<std::ptrdiff_t>(r * classes);
    const auto arg_a = std::max_element(begin_a, begin_a + static_cast<std::ptrdiff_t>(classes)) - begin_a;
    const auto arg_b = std::max_element(begin_b, begin_b + static_cast<std::ptrdiff_t>(classes)) - begin_b;
    same += arg_a == arg_b;
  }
  return static_cast<double>(same) / static_cast<double>(rows);
}

// One cosine per vector along the last axis (rank >= 3 only): mean and least.
std::pair<std::optional<double>, std::optional<double>> vector_cosines(const std::vector<double>& a, const std::vector<double>& b,
                                                                       const std::vector<std::int64_t>& shape) {
  if (shape.size() < 3 || shape.back() < 2 || a.empty()) return {};
  const auto width = static_cast<std::size_t>(shape.back());
  const std::size_t rows = a.size() / width;
  double sum = 0, least = 1.0;
  for (std::size_t r = 0; r < rows; ++r) {
    const auto offset = static_cast<std::ptrdiff_t>(r * width), end = offset + static_cast<std::ptrdiff_t>(width);
    const double c = cosine({a.begin() + offset, a.begin() + end}, {b.begin() + offset, b.begin() + end});
    sum += c;
    least = std::min(least, c);
  }
  return {sum / static_cast<double>(rows), least};
}

OutputAgreement compare_one(const Tensor& reference, const Tensor* candidate) {
  OutputAgreement agreement{reference.name, true, "", 0, 0, 0, std::nullopt, std::nullopt, std::nullopt};
  agreement.comparable = candidate && candidate->shape == reference.shape;
  if (!candidate)
    agreement.note = "the candidate has no output of this name";
  else if (!agreement.comparable)
    agreement.note = "shape " + format_shape(candidate->shape) + " differs from the reference's " + format_shape(reference.shape);
  if (!agreement.comparable) return agreement;
  const auto a = to_doubles(reference), b = to_doubles(*candidate);
  double sum_abs = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double diff = std::fabs(a[i] - b[i]);
    agreement.max_abs_error = std::max(agreement.max_abs_error, diff);
    sum_abs += diff;
  }
  agreement.mean_abs_error = a.empty() ? 0.0 : sum_abs / static_cast<double>(a.size());
  agreement.cosine_similarity = cosine(a, b);
  agreement.top1_agreement = top1(a, b, reference.shape);
  std::tie(agreement.vector_cosine_mean, agreement.vector_cosine_min) = vector_cosines(a, b, reference.shape);
  return agreement;
}

}  // namespace

std::vector<OutputAgreement> compare_outputs(const std::vector<Tensor>& reference, const std::vector<Tensor>& candidate) {
  std::vector<OutputAgreement> result;
  for (const auto& ref : reference) {
    const auto it = std::find_if(candidate.begin(), candidate.end(), [&](const Tensor& t) { return t.name == ref.name; });
    result.push_back(compare_one(ref, it == candidate.end() ? nullptr : &*it));
  }
  return result;
}

}  // namespace infermark::stats
