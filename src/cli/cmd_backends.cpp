// `infermark backends`: which frameworks are built in, with the versions actually loaded.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "cli/backend_listing.hpp"
#include "cli/backends_command.hpp"
#include "cli/commands.hpp"
#include "core/json_text.hpp"

namespace infermark::cli {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

void print_table(const std::vector<BackendListing>& listing) {
  fmt::print("{:<12} {:<13} {:<44} {:<18} {}\n", "backend", "framework", "version", "formats", "devices");
  for (const auto& b : listing) {
    if (!b.built)
      fmt::print("{:<12} {}\n", b.name, "not built into this infermark");
    else if (!b.error.empty())
      fmt::print("{:<12} {}\n", b.name, "failed to load: " + b.error);
    else
      fmt::print("{:<12} {:<13} {:<44} {:<18} {}\n", b.name, b.info.framework, b.info.version, join(b.info.formats),
                 join(b.info.devices));
  }
  fmt::print("\nOptions (--opt KEY=VALUE):\n");
  for (const auto& b : listing) {
    if (!b.built || !b.error.empty()) continue;
    if (b.info.options.empty()) fmt::print("  {:<12} none\n", b.name);
    for (const auto& o : b.info.options)
      fmt::print("  {:<12} {}={} (default {}): {}\n", b.name, o.key, o.values, o.default_value, o.description);
  }
}

nlohmann::json options_json(const std::vector<OptionDoc>& options) {
  auto out = nlohmann::json::array();
  for (const auto& o : options)
    out.push_back({{"key", o.key}, {"values", o.values}, {"default", o.default_value}, {"description", o.description}});
  return out;
}

nlohmann::json to_json(const std::vector<BackendListing>& listing) {
  auto out = nlohmann::json::array();
  for (const auto& b : listing)
    out.push_back({{"name", b.name},
                   {"built", b.built},
                   {"error", b.error},
                   {"framework", b.info.framework},
                   {"version", b.info.version},
                   {"formats", b.info.formats},
                   {"devices", b.info.devices},
                   {"notes", b.info.notes},
                   {"options", options_json(b.info.options)}});
  return out;
}

}  // namespace

void define_backends_flags(CLI::App& cmd, BackendsOptions& o) {
  cmd.add_flag("--json", o.as_json, "Print JSON instead of a table");
}

void add_backends_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("backends", "List the frameworks built into infermark, with versions and formats");
  static BackendsOptions o;
  define_backends_flags(*cmd, o);
  cmd->callback([&exit_code] {
    BackendRegistry registry(default_plugin_dir());
    const auto listing = list_backends(registry);
    o.as_json ? fmt::print("{}\n", json_text(to_json(listing), 2)) : print_table(listing);
    for (const auto& b : listing)
      if (b.built && !b.error.empty()) exit_code = 1;
  });
}

}  // namespace infermark::cli
