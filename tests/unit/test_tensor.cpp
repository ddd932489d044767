#include <gtest/gtest.h>

#include <cstring>

#include "core/error.hpp"
#include "core/tensor.hpp"

namespace infermark {

TEST(Tensor, DTypeNamesRoundTripWithSizes) {
  for (auto d : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64, DType::kInt8, DType::kUInt8, DType::kInt16,
                 DType::kInt32, DType::kInt64, DType::kBool})
    EXPECT_EQ(parse_dtype(dtype_name(d)), d);
  EXPECT_EQ(dtype_size(DType::kFloat32), 4u);
  EXPECT_EQ(dtype_size(DType::kInt64), 8u);
  EXPECT_EQ(dtype_size(DType::kFloat16), 2u);
  EXPECT_THROW(parse_dtype("float8"), Error);
}

TEST(Tensor, ParsesShapes) {
  EXPECT_EQ(parse_shape("1x3x224x224", "--shape"), (std::vector<std::int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(parse_shape("4,128", "--shape"), (std::vector<std::int64_t>{4, 128}));
  EXPECT_EQ(parse_shape("7", "--shape"), (std::vector<std::int64_t>{7}));
}

TEST(Tensor, RejectsBadShapesNamingTheFlag) {
  for (const char* bad : {"", "1x", "x3", "1x0x2", "1x-3", "1xabc", "1.5x2"}) {
    try {
      parse_shape(bad, "--shape input=...");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--shape input"), std::string::npos) << e.what();
    }
  }
}

TEST(Tensor, FormatsDynamicDimsByName) {
  EXPECT_EQ(format_shape({-1, 3, 224, 224}, {"batch", "", "", ""}), "batchx3x224x224");
  EXPECT_EQ(format_shape({-1, 10}), "?x10");
  EXPECT_EQ(element_count({2, 3, 4}), 24u);
  EXPECT_TRUE((TensorSpec{"x", DType::kFloat32, {-1, 3}, {}}).is_dynamic());
  EXPECT_FALSE((TensorSpec{"x", DType::kFloat32, {1, 3}, {}}).is_dynamic());
}

}  // namespace infermark

#include <filesystem>
#include <fstream>

#include "core/npy.hpp"

namespace infermark {

TEST(Npy, RoundTripsEveryDType) {
  const auto path = std::filesystem::temp_directory_path() / "infermark_npy_roundtrip.npy";
  for (auto dtype : {DType::kFloat32, DType::kFloat16, DType::kFloat64, DType::kInt8, DType::kUInt8, DType::kInt16, DType::kInt32,
                     DType::kInt64, DType::kBool}) {
    Tensor t{"x", dtype, {2, 3}, {}};
    t.data.resize(6 * dtype_size(dtype));
    for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<std::byte>((i * 37) & 0x3F);
    write_npy(t, path);
    const auto back = read_npy(path, "x");
    EXPECT_EQ(back.dtype, dtype);
    EXPECT_EQ(back.shape, t.shape);
    EXPECT_EQ(back.data, t.data);
  }
  // The header is padded so the data starts on a 64-byte boundary, as NumPy writes it.
  EXPECT_EQ((std::filesystem::file_size(path) - 6 * dtype_size(DType::kBool)) % 64, 0u);
  std::filesystem::remove(path);
}

TEST(Npy, RejectsBadFilesNamingThem) {
  const auto path = std::filesystem::temp_directory_path() / "infermark_npy_bad.npy";
  std::ofstream(path) << "just text";
  try {
    read_npy(path, "x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ": not a .npy file"), std::string::npos) << e.what();
  }
  Tensor t{"x", DType::kFloat32, {4}, std::vector<std::byte>(16)};
  write_npy(t, path);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 4);
  EXPECT_THROW(read_npy(path, "x"), Error);
  EXPECT_THROW(read_npy(path.string() + ".absent", "x"), Error);
  std::filesystem::remove(path);
}

// Found by tests/fuzz/fuzz_npy: a version byte other than 1 read a 4-byte header length and
// allocated it (gigabytes), and a shape larger than the file's data was allocated before the read.
// Both are now errors naming the file, checked against the file's size before any allocation.
TEST(Npy, CorruptHeadersAreErrorsNotAllocations) {
  const auto path = std::filesystem::temp_directory_path() / "infermark_npy_corrupt.npy";
  const auto write = [&path](const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; };
  const auto message = [&path]() -> std::string {
    try {
      read_npy(path, "x");
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  write(std::string("\x93NUMPY\xaa\x01\x00\x76\x00\x7b{'descr': '<i8'}", 22));
  EXPECT_NE(message().find("unknown .npy format version 170"), std::string::npos) << message();
  write(std::string("\x93NUMPY\x02\x00\xff\xff\xff\x7f{}", 14));
  EXPECT_NE(message().find("truncated .npy header"), std::string::npos) << message();
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 4), }\n";
  write(std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header + "1234");
  EXPECT_NE(message().find("larger than the file's data"), std::string::npos) << message();
  const std::string big = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n";
  write(std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(big.size()) + '\0' + big + "1234");
  EXPECT_NE(message().find("needs more than the 4 bytes"), std::string::npos) << message();
  std::filesystem::remove(path);
}

TEST(Tensor, WidensHalfAndBfloat16) {
  Tensor half{"h", DType::kFloat16, {3}, std::vector<std::byte>(6)};
  const std::uint16_t values[3] = {0x3C00, 0xC000, 0x3555};  // 1, -2, ~0.3333
  std::memcpy(half.data.data(), values, 6);
  const auto d = to_doubles(half);
  EXPECT_DOUBLE_EQ(d[0], 1.0);
  EXPECT_DOUBLE_EQ(d[1], -2.0);
  EXPECT_NEAR(d[2], 1.0 / 3, 1e-3);
  Tensor bf{"b", DType::kBFloat16, {1}, std::vector<std::byte>(2)};
  const std::uint16_t one = 0x3F80;
  std::memcpy(bf.data.data(), &one, 2);
  EXPECT_DOUBLE_EQ(to_doubles(bf)[0], 1.0);
}

}  // namespace infermark
