// Framework-neutral tensors: element types, declared specs (with dynamic dimensions) and owned
// host buffers. Backends translate these to and from their own tensor types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace infermark {

enum class DType { kFloat32, kFloat16, kBFloat16, kFloat64, kInt8, kUInt8, kInt16, kInt32, kInt64, kBool };

std::string_view dtype_name(DType dtype);
std::size_t dtype_size(DType dtype);
// Throws infermark::Error for an unknown name.
DType parse_dtype(std::string_view name);

// A dimension below zero is dynamic; `dim_names` keeps the model's symbolic names where it has them.
constexpr std::int64_t kDynamicDim = -1;

struct TensorSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;
  std::vector<std::string> dim_names;  // same length as shape, "" where unnamed

  bool is_dynamic() const;
};

struct Tensor {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> data;

  std::size_t element_count() const;
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(data.data());
  }
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(data.data());
  }
};

std::size_t element_count(const std::vector<std::int64_t>& shape);
// Replaces `tensor`'s bytes with `data` in place (its buffer does not move, so framework tensors
// wrapping it see the new values). Throws infermark::Error naming the tensor when sizes differ.
void overwrite_data(Tensor& tensor, std::span<const std::byte> data);
// Every element widened to double (half and bfloat16 decoded), for comparing outputs.
std::vector<double> to_doubles(const Tensor& tensor);
// "1x3x224x224"; dynamic dimensions print as their name or "?".
std::string format_shape(const std::vector<std::int64_t>& shape, const std::vector<std::string>& dim_names = {});
// Parses "1x3x224x224" (also accepts ","); throws infermark::Error naming `what` on bad input.
std::vector<std::int64_t> parse_shape(std::string_view text, std::string_view what);

}  // namespace infermark
