// Result files as `infermark report`, `compare` and `recommend` read them (report/result_set.cpp:
// JSON text, then run_result_from_json). Any bytes load into a result, are skipped as not JSON, or
// are an infermark::Error naming the file; never a crash or another throw.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "result/run_result.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  try {
    const auto result = infermark::result::run_result_from_json(json, "fuzz.json");
    (void)result;
  } catch (const infermark::Error&) {}
  return 0;
}
