// What the KServe v2 HTTP front reads from a request before routing it: the path's segments and
// the binary tensor extension's header length. Pure text functions (fuzzed with Beast's parser in
// tests/fuzz/fuzz_http_request.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace infermark::kserve {

// "/v2/models/m/infer?x=1" -> {"v2", "models", "m", "infer"}: the query dropped, empty segments skipped.
std::vector<std::string> split_path(std::string_view target);

// The Inference-Header-Content-Length value: nullopt when absent (empty); throws RequestError 400
// when it is not a byte count.
std::optional<std::size_t> parse_header_length(std::string_view field);

}  // namespace infermark::kserve
