// `infermark env`: the machine and library versions every result records.
#include <fmt/core.h>

#include "cli/backend_listing.hpp"
#include "cli/commands.hpp"
#include "cli/env_command.hpp"
#include "core/json_text.hpp"
#include "probes/environment.hpp"

namespace infermark::cli {

void define_env_flags(CLI::App& cmd, EnvOptions& o) { cmd.add_flag("--json", o.as_json, "Print JSON instead of text"); }

void add_env_command(CLI::App& app, int& /*exit_code*/) {
  auto* cmd = app.add_subcommand("env", "Show the environment recorded with every result");
  static EnvOptions o;
  define_env_flags(*cmd, o);
  cmd->callback([] {
    auto env = probes::capture_environment();
    for (const auto& b : list_backends(BackendRegistry(default_plugin_dir())))
      if (b.built && b.error.empty()) env.libraries[b.info.framework] = b.info.version;
    const auto json = probes::to_json(env);
    if (o.as_json) {
      fmt::print("{}\n", json_text(json, 2));
      return;
    }
    for (const auto& [key, value] : json.items())
      fmt::print("{:<20} {}\n", key, value.is_string() ? value.get<std::string>() : json_text(value));
  });
}

}  // namespace infermark::cli
