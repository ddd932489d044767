// Stacking requests into one batch along dimension 0 and splitting the batch's outputs back, as
// a dynamic batcher does. Requests batch together only when every input matches beyond dim 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace infermark::serve {

// Rows a request contributes: dimension 0 of its first input (1 for a scalar input).
std::int64_t batch_rows(const std::vector<Tensor>& inputs);
// Identical for requests that may share a batch: dtypes and shapes without dimension 0.
std::string batch_signature(const std::vector<Tensor>& inputs);
// One tensor per input, requests stacked along dimension 0 in order.
std::vector<Tensor> concatenate_batch(const std::vector<const std::vector<Tensor>*>& requests);
// Outputs split along dimension 0, `rows[i]` rows for request i. Throws infermark::Error naming
// the output when its dimension 0 is not the batch's total rows (a model that mixes rows).
std::vector<std::vector<Tensor>> split_batch(const std::vector<Tensor>& outputs, const std::vector<std::int64_t>& rows);

}  // namespace infermark::serve
