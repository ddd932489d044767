// For the serving tests: what a call refused with a RequestError said.
#pragma once

#include <string>

#include "kserve/kserve_codec.hpp"

namespace infermark::serve {

// The message of the RequestError `fn` throws ("" when it throws none); its status in `status`.
template <typename Fn>
std::string request_error(Fn fn, int* status = nullptr) {
  try {
    fn();
  } catch (const kserve::RequestError& e) {
    if (status) *status = e.status();
    return e.what();
  }
  return "";
}

}  // namespace infermark::serve
