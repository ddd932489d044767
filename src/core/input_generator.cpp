#include "core/input_generator.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/npy.hpp"
#include "core/random.hpp"

namespace infermark {
namespace {

std::uint16_t float_to_half(float value) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  std::uint32_t sign = (x >> 16) & 0x8000u;
  int exponent = static_cast<int>((x >> 23) & 0xFF) - 127 + 15;
  std::uint32_t mantissa = x & 0x7FFFFFu;
  if (exponent <= 0) return static_cast<std::uint16_t>(sign);  // flush tiny values to zero
  if (exponent >= 31) return static_cast<std::uint16_t>(sign | 0x7C00u);
  return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(exponent) << 10) | (mantissa >> 13));
}

std::uint16_t float_to_bfloat16(float value) { return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(value) >> 16); }

template <typename T>
void fill_with(Tensor& tensor, auto&& draw) {
  T* out = tensor.as<T>();
  for (std::size_t i = 0; i < tensor.element_count(); ++i) out[i] = static_cast<T>(draw());
}

void fill(Tensor& tensor, SeededRandom& random, std::int64_t int_low, std::int64_t int_high) {
  auto normal = [&] { return random.normal(); };
  auto integer = [&] {
    return int_low + static_cast<std::int64_t>(random.next() % static_cast<std::uint64_t>(int_high - int_low));
  };
  switch (tensor.dtype) {
    case DType::kFloat32:
      fill_with<float>(tensor, normal);
      break;
    case DType::kFloat64:
      fill_with<double>(tensor, normal);
      break;
    case DType::kFloat16:
      fill_with<std::uint16_t>(tensor, [&] { return float_to_half(static_cast<float>(random.normal())); });
      break;
    case DType::kBFloat16:
      fill_with<std::uint16_t>(tensor, [&] { return float_to_bfloat16(static_cast<float>(random.normal())); });
      break;
    case DType::kInt8:
      fill_with<std::int8_t>(tensor, [&] { return integer() % 128; });
      break;
    case DType::kUInt8:
      fill_with<std::uint8_t>(tensor, [&] { return integer() % 256; });
      break;
    case DType::kInt16:
      fill_with<std::int16_t>(tensor, integer);
      break;
    case DType::kInt32:
      fill_with<std::int32_t>(tensor, integer);
      break;
    case DType::kInt64:
      fill_with<std::int64_t>(tensor, integer);
      break;
    case DType::kBool:
      fill_with<std::uint8_t>(tensor, [&] { return random.next() & 1u; });
      break;
  }
}

std::string dim_label(const TensorSpec& spec, std::size_t i) {
  std::string label = "dimension " + std::to_string(i);
  if (i < spec.dim_names.size() && !spec.dim_names[i].empty()) label += " ('" + spec.dim_names[i] + "')";
  return label;
}

// `where` names the flag that supplied the shape, for the error message.
std::vector<std::int64_t> check_override(const TensorSpec& spec, const std::vector<std::int64_t>& shape,
                                         const std::string& where) {
  if (shape.size() != spec.shape.size())
    throw Error(where + ": input '" + spec.name + "' has rank " + std::to_string(spec.shape.size()) + " (" +
                format_shape(spec.shape, spec.dim_names) + "), not " + std::to_string(shape.size()));
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (spec.shape[i] >= 0 && spec.shape[i] != shape[i])
      throw Error(where + ": " + dim_label(spec, i) + " of input '" + spec.name + "' is fixed at " +
                  std::to_string(spec.shape[i]) + " in the model");
  return shape;
}

void check_known_input(const std::vector<TensorSpec>& specs, const std::string& name, const std::string& flag) {
  for (const auto& spec : specs)
    if (spec.name == name) return;
  std::string names;
  for (const auto& spec : specs) names += (names.empty() ? "" : ", ") + spec.name;
  throw Error(flag + " " + name + "=...: the model has no input named '" + name + "' (inputs: " + names + ")");
}

Tensor load_user_input(const TensorSpec& spec, const std::string& file) {
  auto tensor = read_npy(file, spec.name);
  const auto where = "--input " + spec.name + "=" + file;
  if (tensor.dtype != spec.dtype)
    throw Error(where + ": the file holds " + std::string(dtype_name(tensor.dtype)) + " but input '" + spec.name + "' takes " +
                std::string(dtype_name(spec.dtype)));
  check_override(spec, tensor.shape, where + " (shape " + format_shape(tensor.shape) + ")");
  return tensor;
}

}  // namespace

std::vector<std::int64_t> resolve_shape(const TensorSpec& spec, const InputRequest& request) {
  if (auto it = request.shape_overrides.find(spec.name); it != request.shape_overrides.end())
    return check_override(spec, it->second, "--shape " + spec.name + "=" + format_shape(it->second));
  std::vector<std::int64_t> shape = spec.shape;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] >= 0) continue;
    if (i == 0) {
      shape[i] = request.batch;
      continue;
    }
    throw Error("input '" + spec.name + "' (" + format_shape(spec.shape, spec.dim_names) + ") has dynamic " + dim_label(spec, i) +
                "; give its size with --shape " + spec.name + "=" + format_shape(shape, spec.dim_names));
  }
  if (!shape.empty() && spec.shape[0] >= 0 && request.batch != 1 && spec.shape[0] != request.batch)
    throw Error("--batch " + std::to_string(request.batch) + ": input '" + spec.name + "' has a fixed batch dimension of " +
                std::to_string(spec.shape[0]));
  return shape;
}

std::vector<Tensor> generate_inputs(const std::vector<TensorSpec>& specs, const InputRequest& request) {
  for (const auto& [name, shape] : request.shape_overrides) check_known_input(specs, name, "--shape");
  for (const auto& [name, file] : request.files) check_known_input(specs, name, "--input");
  if (request.int_high < 1) throw Error("integer input range must be at least 1");
  std::vector<Tensor> tensors;
  SeededRandom random(request.seed);
  for (const auto& spec : specs) {
    if (auto file = request.files.find(spec.name); file != request.files.end()) {
      tensors.push_back(load_user_input(spec, file->second));
      continue;
    }
    Tensor tensor{spec.name, spec.dtype, resolve_shape(spec, request), {}};
    tensor.data.resize(tensor.element_count() * dtype_size(spec.dtype));
    const auto range = request.int_ranges.find(spec.name);
    if (range != request.int_ranges.end())
      fill(tensor, random, range->second.first, range->second.second);
    else
      fill(tensor, random, 0, request.int_high);
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

std::vector<std::vector<Tensor>> generate_input_sets(const std::vector<TensorSpec>& specs, const InputRequest& request) {
  if (!request.varying.active()) return {generate_inputs(specs, request)};
  for (const auto& [name, range] : request.varying.ranges) {
    check_known_input(specs, name, "--shape-range");
    if (request.shape_overrides.count(name)) throw Error("--shape and --shape-range both give input '" + name + "'; keep one");
    if (request.files.count(name)) throw Error("--input and --shape-range both give input '" + name + "'; keep one");
    const auto& spec = *std::find_if(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == name; });
    const auto where = "--shape-range " + name + "=" + format_shape_range(range);
    if (range.size() != spec.shape.size())
      throw Error(where + ": input '" + name + "' has rank " + std::to_string(spec.shape.size()) + " (" +
                  format_shape(spec.shape, spec.dim_names) + "), not " + std::to_string(range.size()));
    for (std::size_t i = 0; i < range.size(); ++i)
      if (spec.shape[i] >= 0 && (range[i].low != spec.shape[i] || range[i].high != spec.shape[i]))
        throw Error(where + ": " + dim_label(spec, i) + " of input '" + name + "' is fixed at " + std::to_string(spec.shape[i]) +
                    " in the model, so it cannot vary");
  }
  std::vector<std::vector<Tensor>> sets;
  const auto draws = draw_shapes(request.varying, request.seed);
  for (std::size_t s = 0; s < draws.size(); ++s) {
    InputRequest one = request;
    one.varying = {};
    one.seed = request.seed + s;  // different data per set, reproducible from the seed
    for (const auto& [name, shape] : draws[s]) one.shape_overrides[name] = shape;
    sets.push_back(generate_inputs(specs, one));
  }
  return sets;
}

}  // namespace infermark
