#include "cli/backend_listing.hpp"

#include <exception>

namespace infermark::cli {

std::vector<BackendListing> list_backends(const BackendRegistry& registry) {
  std::vector<BackendListing> listing;
  for (const auto& name : known_backend_names()) {
    BackendListing entry{name, registry.is_available(name), {}, {}};
    if (entry.built) {
      try {
        entry.info = (*registry.load(name))->info();
      } catch (const std::exception& e) {
        entry.error = e.what();
      }
    }
    listing.push_back(std::move(entry));
  }
  return listing;
}

}  // namespace infermark::cli
