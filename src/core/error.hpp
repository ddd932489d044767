// The one exception type infermark raises for user-facing failures. Its message is meant to be
// printed as is: it names the file, flag or backend involved and the cause.
#pragma once

#include <stdexcept>
#include <string>

namespace infermark {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace infermark
