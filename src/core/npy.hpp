// NumPy .npy files (format 1.0/2.0, little-endian, C order): user-supplied inputs, and the
// outputs each backend produced, saved beside its result for cross-checking and inspection.
#pragma once

#include <filesystem>

#include "core/tensor.hpp"

namespace infermark {

// Throws infermark::Error naming the file and the cause (missing, not .npy, Fortran order,
// big-endian or unsupported dtype, truncated data).
Tensor read_npy(const std::filesystem::path& path, const std::string& tensor_name);
// The shape alone, from the header, without reading the data; the same errors for a bad header.
std::vector<std::int64_t> read_npy_shape(const std::filesystem::path& path);

void write_npy(const Tensor& tensor, const std::filesystem::path& path);

}  // namespace infermark
