#include "core/tensor.hpp"

#include <array>
#include <charconv>
#include <utility>

#include "core/error.hpp"

namespace infermark {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t size;
};

constexpr std::array<DTypeInfo, 10> kDTypes{{
    {DType::kFloat32, "float32", 4}, {DType::kFloat16, "float16", 2}, {DType::kBFloat16, "bfloat16", 2},
    {DType::kFloat64, "float64", 8}, {DType::kInt8, "int8", 1},       {DType::kUInt8, "uint8", 1},
    {DType::kInt16, "int16", 2},     {DType::kInt32, "int32", 4},     {DType::kInt64, "int64", 8},
    {DType::kBool, "bool", 1},
}};

const DTypeInfo& info(DType dtype) {
  for (const auto& entry : kDTypes)
    if (entry.dtype == dtype) return entry;
  throw Error("unknown dtype enum value");
}

}  // namespace

std::string_view dtype_name(DType dtype) { return info(dtype).name; }
std::size_t dtype_size(DType dtype) { return info(dtype).size; }

DType parse_dtype(std::string_view name) {
  for (const auto& entry : kDTypes)
    if (entry.name == name) return entry.dtype;
  throw Error("unknown dtype '" + std::string(name) + "'");
}

bool TensorSpec::is_dynamic() const {
  for (auto d : shape)
    if (d < 0) return true;
  return false;
}

std::size_t element_count(const std::vector<std::int64_t>& shape) {
  std::size_t n = 1;
  for (auto d : shape) n *= static_cast<std::size_t>(d < 0 ? 0 : d);
  return n;
}

std::size_t Tensor::element_count() const { return infermark::element_count(shape); }

std::string format_shape(const std::vector<std::int64_t>& shape, const std::vector<std::string>& dim_names) {
  std::string out;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += 'x';
    if (shape[i] >= 0)
      out += std::to_string(shape[i]);
    else
      out += (i < dim_names.size() && !dim_names[i].empty()) ? dim_names[i] : "?";
  }
  return out;
}

std::vector<std::int64_t> parse_shape(std::string_view text, std::string_view what) {
  auto fail = [&](std::string_view why) {
    return Error(std::string(what) + ": shape '" + std::string(text) + "' " + std::string(why) +
                 " (expected positive sizes like 1x3x224x224)");
  };
  std::vector<std::int64_t> shape;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto end = text.find_first_of("x,", pos);
    if (end == std::string_view::npos) end = text.size();
    auto part = text.substr(pos, end - pos);
    std::int64_t value = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size()) throw fail("is not a list of integers");
    if (value <= 0) throw fail("has a size below 1");
    shape.push_back(value);
    pos = end + 1;
  }
  return shape;
}

}  // namespace infermark
