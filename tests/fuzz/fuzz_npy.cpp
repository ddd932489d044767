// .npy files given with --input NAME=FILE.npy: any bytes read into a tensor or give an
// infermark::Error naming the file, never a crash or another throw.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/infermark-fuzz-npy-" + std::to_string(getpid()) + ".npy";
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    const auto tensor = infermark::read_npy(path, "input");
    (void)tensor;
  } catch (const infermark::Error&) {}
  return 0;
}
