#include "core/tensor.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
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
    {DType::kFloat32, "float32", 4},
    {DType::kFloat16, "float16", 2},
    {DType::kBFloat16, "bfloat16", 2},
    {DType::kFloat64, "float64", 8},
    {DType::kInt8, "int8", 1},
    {DType::kUInt8, "uint8", 1},
    {DType::kInt16, "int16", 2},
    {DType::kInt32, "int32", 4},
    {DType::kInt64, "int64", 8},
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

void overwrite_data(Tensor& tensor, std::span<const std::byte> data) {
  if (data.size() != tensor.data.size())
    throw Error("input '" + tensor.name + "': " + std::to_string(data.size()) + " bytes given, " +
                std::to_string(tensor.data.size()) + " bound (" + format_shape(tensor.shape) + " " +
                std::string(dtype_name(tensor.dtype)) + ")");
  std::copy(data.begin(), data.end(), tensor.data.begin());
}

namespace {

double half_to_double(std::uint16_t h) {
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

double bfloat16_to_double(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

template <typename T>
void widen(const Tensor& t, std::vector<double>& out) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(t.as<T>()[i]);
}

}  // namespace

std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> out(t.element_count());
  switch (t.dtype) {
    case DType::kFloat32:
      widen<float>(t, out);
      break;
    case DType::kFloat64:
      widen<double>(t, out);
      break;
    case DType::kInt8:
      widen<std::int8_t>(t, out);
      break;
    case DType::kUInt8:
      widen<std::uint8_t>(t, out);
      break;
    case DType::kBool:
      widen<std::uint8_t>(t, out);
      break;
    case DType::kInt16:
      widen<std::int16_t>(t, out);
      break;
    case DType::kInt32:
      widen<std::int32_t>(t, out);
      break;
    case DType::kInt64:
      widen<std::int64_t>(t, out);
      break;
    case DType::kFloat16:
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = half_to_double(t.as<std::uint16_t>()[i]);
      break;
    case DType::kBFloat16:
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = bfloat16_to_double(t.as<std::uint16_t>()[i]);
      break;
  }
  return out;
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
