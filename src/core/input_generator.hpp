// Deterministic inputs for a model: concrete shapes from its declared specs (batch and --shape
// overrides fill dynamic dimensions) and seeded random values, identical for every backend.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/shape_range.hpp"
#include "core/tensor.hpp"

namespace infermark {

struct InputRequest {
  std::int64_t batch = 1;
  std::map<std::string, std::vector<std::int64_t>> shape_overrides;  // from --shape name=AxBxC
  std::map<std::string, std::string> files;                          // from --input name=file.npy: user data, used as is
  std::uint64_t seed = 42;
  // Integer inputs (token ids, indices) are drawn from [0, int_high), or from the input's own
  // [low, high) range where one is given (the model manifest's value_range).
  std::int64_t int_high = 100;
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> int_ranges;
  VaryingShapes varying;  // from --shape-range: inputs whose shapes change from query to query
};

// The concrete shape of one input. Throws infermark::Error naming the input, the dimension and
// the flag that fixes it when the shape cannot be determined or conflicts with the model.
std::vector<std::int64_t> resolve_shape(const TensorSpec& spec, const InputRequest& request);

// One tensor per spec: the user's .npy file where given, otherwise seeded random data (floats
// standard normal, integers uniform in [0, int_high), bools 0/1). Throws infermark::Error for an
// override or file that names no input of the model, or a file whose dtype or shape does not fit.
std::vector<Tensor> generate_inputs(const std::vector<TensorSpec>& specs, const InputRequest& request);

// The input sets of a run: one when no shape varies, else `varying.sets` of them, each with its
// drawn shapes and its own seeded data, made before anything is timed. Throws infermark::Error
// naming --shape-range for a range that names no input or does not fit the model's fixed dims.
std::vector<std::vector<Tensor>> generate_input_sets(const std::vector<TensorSpec>& specs, const InputRequest& request);

}  // namespace infermark
