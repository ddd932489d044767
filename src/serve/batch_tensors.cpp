#include "serve/batch_tensors.hpp"

#include <numeric>

#include "core/error.hpp"

namespace infermark::serve {

std::int64_t batch_rows(const std::vector<Tensor>& inputs) {
  if (inputs.empty() || inputs.front().shape.empty()) return 1;
  return inputs.front().shape.front();
}

std::string batch_signature(const std::vector<Tensor>& inputs) {
  std::string signature;
  for (const auto& tensor : inputs) {
    signature += std::string(dtype_name(tensor.dtype)) + ":";
    for (std::size_t d = 1; d < tensor.shape.size(); ++d) signature += std::to_string(tensor.shape[d]) + "x";
    signature += ";";
  }
  return signature;
}

std::vector<Tensor> concatenate_batch(const std::vector<const std::vector<Tensor>*>& requests) {
  if (requests.size() == 1) return *requests.front();
  std::vector<Tensor> batch;
  const auto& first = *requests.front();
  for (std::size_t i = 0; i < first.size(); ++i) {
    Tensor stacked{first[i].name, first[i].dtype, first[i].shape, {}};
    stacked.shape[0] = 0;
    std::size_t bytes = 0;
    for (const auto* request : requests) bytes += (*request)[i].data.size();
    stacked.data.reserve(bytes);
    for (const auto* request : requests) {
      const auto& part = (*request)[i];
      stacked.shape[0] += part.shape[0];
      stacked.data.insert(stacked.data.end(), part.data.begin(), part.data.end());
    }
    batch.push_back(std::move(stacked));
  }
  return batch;
}

std::vector<std::vector<Tensor>> split_batch(const std::vector<Tensor>& outputs, const std::vector<std::int64_t>& rows) {
  const auto total = std::accumulate(rows.begin(), rows.end(), std::int64_t{0});
  std::vector<std::vector<Tensor>> parts(rows.size());
  for (const auto& output : outputs) {
    if (rows.size() == 1) {
      parts[0].push_back(output);
      continue;
    }
    if (output.shape.empty() || output.shape[0] != total)
      throw Error("output '" + output.name + "' has shape " + format_shape(output.shape) + ", not " + std::to_string(total) +
                  " rows for the batch: the model cannot be batched along dimension 0");
    const std::size_t row_bytes = output.data.size() / static_cast<std::size_t>(total);
    std::size_t offset = 0;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      Tensor part{output.name, output.dtype, output.shape, {}};
      part.shape[0] = rows[r];
      const auto bytes = row_bytes * static_cast<std::size_t>(rows[r]);
      part.data.assign(output.data.begin() + static_cast<std::ptrdiff_t>(offset),
                       output.data.begin() + static_cast<std::ptrdiff_t>(offset + bytes));
      offset += bytes;
      parts[r].push_back(std::move(part));
    }
  }
  return parts;
}

}  // namespace infermark::serve
