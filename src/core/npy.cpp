#include "core/npy.hpp"

#include <array>
#include <cstring>
#include <fstream>
#include <regex>

#include "core/error.hpp"

namespace infermark {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::uint32_t kMaxHeaderBytes = 10000;

struct NpyType {
  DType dtype;
  const char* descr;
};

constexpr std::array<NpyType, 10> kNpyTypes{{{DType::kFloat32, "<f4"},
                                             {DType::kFloat16, "<f2"},
                                             {DType::kFloat64, "<f8"},
                                             {DType::kInt8, "|i1"},
                                             {DType::kUInt8, "|u1"},
                                             {DType::kInt16, "<i2"},
                                             {DType::kInt32, "<i4"},
                                             {DType::kInt64, "<i8"},
                                             {DType::kBool, "|b1"},
                                             // bfloat16 has no NumPy dtype; ml_dtypes writes it as V2 raw bytes
                                             {DType::kBFloat16, "<V2"}}};

const char* descr_of(DType dtype) {
  for (const auto& t : kNpyTypes)
    if (t.dtype == dtype) return t.descr;
  throw Error("no .npy type for " + std::string(dtype_name(dtype)));
}

DType dtype_of(const std::string& descr, const std::filesystem::path& path) {
  for (const auto& t : kNpyTypes)
    if (descr == t.descr || (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == std::string(t.descr).substr(1)))
      return t.dtype;
  throw Error(path.string() + ": .npy dtype '" + descr + "' is not supported (little-endian numbers and bool only)");
}

std::string header_field(const std::string& header, const std::string& key, const std::string& pattern,
                         const std::filesystem::path& path) {
  std::smatch match;
  if (!std::regex_search(header, match, std::regex("'" + key + "'\\s*:\\s*" + pattern)))
    throw Error(path.string() + ": .npy header has no readable '" + key + "'");
  return match[1];
}

// Dimensions as written; each must fit the bytes the file holds (`limit`), so a corrupt header
// cannot overflow or ask for more memory than the file could fill.
std::vector<std::int64_t> parse_npy_shape(const std::string& text, std::uint64_t limit, const std::filesystem::path& path) {
  std::vector<std::int64_t> shape;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] < '0' || text[i] > '9') {
      ++i;
      continue;
    }
    std::uint64_t dim = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      dim = dim * 10 + static_cast<std::uint64_t>(text[i] - '0');
      if (dim > limit) throw Error(path.string() + ": .npy shape (" + text + ") is larger than the file's data");
    }
    shape.push_back(static_cast<std::int64_t>(dim));
  }
  return shape;
}

// What a .npy header says, with `in` left at the first data byte.
struct NpyHeader {
  DType dtype;
  std::vector<std::int64_t> shape;
  std::uint64_t data_bytes;  // in the file after the header
};

NpyHeader read_header(std::ifstream& in, const std::filesystem::path& path) {
  if (!in) throw Error(path.string() + ": cannot open (no such file or not readable)");
  char magic[6];
  unsigned char version[2];
  if (!in.read(magic, 6) || std::memcmp(magic, kMagic, 6) != 0) throw Error(path.string() + ": not a .npy file (bad magic)");
  in.read(reinterpret_cast<char*>(version), 2);
  if (!in || version[0] < 1 || version[0] > 3)
    throw Error(path.string() + ": unknown .npy format version " + std::to_string(version[0]) + " (1, 2 or 3 expected)");
  std::uint32_t header_len = 0;
  if (version[0] == 1) {
    unsigned char len[2];
    in.read(reinterpret_cast<char*>(len), 2);
    header_len = len[0] | (len[1] << 8);
  } else {
    unsigned char len[4];
    in.read(reinterpret_cast<char*>(len), 4);
    header_len = len[0] | (len[1] << 8) | (len[2] << 16) | (static_cast<std::uint32_t>(len[3]) << 24);
  }
  const auto header_at = static_cast<std::uint64_t>(in.tellg());
  const auto file_size = static_cast<std::uint64_t>(std::filesystem::file_size(path));
  if (!in || header_at > file_size || header_len > file_size - header_at) throw Error(path.string() + ": truncated .npy header");
  // NumPy's own reader refuses headers over 10000 bytes by default; so does this one.
  if (header_len > kMaxHeaderBytes)
    throw Error(path.string() + ": .npy header of " + std::to_string(header_len) + " bytes (at most " +
                std::to_string(kMaxHeaderBytes) + ")");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) throw Error(path.string() + ": truncated .npy header");
  if (header_field(header, "fortran_order", "(True|False)", path) == "True")
    throw Error(path.string() + ": Fortran-ordered arrays are not supported; save with np.ascontiguousarray");
  const auto dtype = dtype_of(header_field(header, "descr", "'([^']+)'", path), path);
  const std::uint64_t data_bytes = file_size - header_at - header_len;
  return {dtype, parse_npy_shape(header_field(header, "shape", "\\(([^)]*)\\)", path), data_bytes, path), data_bytes};
}

}  // namespace

std::vector<std::int64_t> read_npy_shape(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return read_header(in, path).shape;
}

Tensor read_npy(const std::filesystem::path& path, const std::string& tensor_name) {
  std::ifstream in(path, std::ios::binary);
  const auto header = read_header(in, path);
  Tensor tensor;
  tensor.name = tensor_name;
  tensor.dtype = header.dtype;
  tensor.shape = header.shape;
  const auto data_bytes = header.data_bytes;
  std::uint64_t needed = dtype_size(tensor.dtype);
  for (const auto d : tensor.shape) {
    if (d != 0 && needed > data_bytes / static_cast<std::uint64_t>(d)) {
      needed = data_bytes + 1;  // more than the file holds: reported below without multiplying further
      break;
    }
    needed *= static_cast<std::uint64_t>(d);
  }
  if (needed > data_bytes)
    throw Error(path.string() + ": truncated .npy data (the shape " + format_shape(tensor.shape) + " needs more than the " +
                std::to_string(data_bytes) + " bytes after the header)");
  tensor.data.resize(tensor.element_count() * dtype_size(tensor.dtype));
  if (!in.read(reinterpret_cast<char*>(tensor.data.data()), static_cast<std::streamsize>(tensor.data.size())))
    throw Error(path.string() + ": truncated .npy data (expected " + std::to_string(tensor.data.size()) + " bytes for shape " +
                format_shape(tensor.shape) + ")");
  return tensor;
}

void write_npy(const Tensor& tensor, const std::filesystem::path& path) {
  std::string shape;
  for (auto d : tensor.shape) shape += std::to_string(d) + ",";
  if (tensor.shape.size() > 1) shape.pop_back();  // (3,) for rank 1, (2,3) otherwise
  std::string header =
      "{'descr': '" + std::string(descr_of(tensor.dtype)) + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n' must be a multiple of 64.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(path.string() + ": cannot write");
  const std::uint16_t len = static_cast<std::uint16_t>(header.size());
  const char version[2] = {1, 0};
  const char len_bytes[2] = {static_cast<char>(len & 0xFF), static_cast<char>(len >> 8)};
  out.write(kMagic, 6).write(version, 2).write(len_bytes, 2).write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(tensor.data.data()), static_cast<std::streamsize>(tensor.data.size()));
  if (!out) throw Error(path.string() + ": write failed");
}

}  // namespace infermark
