#include "backends/backend.hpp"

#include "backends/generator.hpp"

namespace infermark {
namespace {

// The defaults of the optional methods: reached only by a caller that did not check the capability.
[[noreturn]] void undeclared(const std::string& method, const std::string& capability) {
  throw Error(method + " called on a session that does not declare the capability '" + capability +
              "' (check Session::capabilities() first)");
}

}  // namespace

void Session::overwrite_input(std::size_t /*index*/, std::span<const std::byte> /*data*/) {
  undeclared("overwrite_input", "in_place_inputs");
}

void Session::set_input_sets(const std::vector<std::vector<Tensor>>& /*sets*/, int /*slots*/, bool /*few_shapes*/) {
  undeclared("set_input_sets", "varying_shapes");
}

void Session::run_set(int /*slot*/, std::size_t /*set*/) { undeclared("run_set", "varying_shapes"); }

std::unique_ptr<Generator> Backend::open_generator(const std::filesystem::path& model, const SessionOptions& /*options*/) {
  require_generators(*this, model);
  throw Error(info().framework + " declares generators but does not implement open_generator (" + model.string() + ")");
}

void require_generators(const Backend& backend, const std::filesystem::path& model) {
  if (!backend.capabilities().generators)
    throw Error(backend.info().framework + " cannot generate text (" + model.string() + "): it is not an LLM backend");
}

}  // namespace infermark
