#include "cli/worker_launch.hpp"

#include "result/cell_json.hpp"

namespace infermark::cli {

std::vector<std::string> worker_argv(const result::CellRequest& cell, const std::filesystem::path& result_path) {
  const auto cell_file = std::filesystem::path(result_path).replace_extension(".cell");
  result::write_cell(cell, cell_file);
  return {std::filesystem::read_symlink("/proc/self/exe").string(),
          "worker",
          "--cell",
          cell_file.string(),
          "--result",
          result_path.string()};
}

}  // namespace infermark::cli
