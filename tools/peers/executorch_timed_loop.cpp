// Peer for infermark's executorch numbers on the same libraries: a plain timed loop over
// ExecuTorch's runtime API, as its executor_runner drives it, against third_party/executorch's
// libraries (the executorch wheel's). The program's "forward" method with its planned memory,
// the thread pool at THREADS, each timed run the input set (Method::set_input copies it into the
// planned memory, as infermark's backend does) and Method::execute. Compiled by
// tools/peers/edge_fidelity.py. Prints {"p50_ms", "mean_ms", "runs", "threads"} as JSON (timed_loop.hpp).
//   executorch_timed_loop MODEL.pte INPUT.raw N C H W THREADS WARMUP RUNS
#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/extension/memory_allocator/malloc_memory_allocator.h>
#include <executorch/extension/tensor/tensor_ptr_maker.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "backends/executorch/executorch_threadpool.hpp"
#include "timed_loop.hpp"

namespace et = executorch::runtime;

int main(int argc, char** argv) {
  auto args = parse_loop_arguments(argc, argv, "MODEL.pte");
  const auto& shape = args.shape;
  auto& data = args.input;
  const int threads = args.threads, warmup = args.warmup, runs = args.runs;
  et::runtime_init();
  auto* pool = executorch::extension::threadpool::get_threadpool();
  pool->_unsafe_reset_threadpool(static_cast<std::uint32_t>(threads));
  auto loader = executorch::extension::FileDataLoader::from(args.model);
  if (!loader.ok()) return 1;
  auto program = et::Program::load(&loader.get());
  if (!program.ok()) return 1;
  auto meta = program->method_meta("forward");
  if (!meta.ok()) return 1;
  std::vector<std::vector<std::uint8_t>> planned;
  std::vector<et::Span<std::uint8_t>> spans;
  for (std::size_t id = 0; id < meta->num_memory_planned_buffers(); ++id)
    planned.emplace_back(static_cast<std::size_t>(meta->memory_planned_buffer_size(id).get()));
  for (auto& buffer : planned) spans.emplace_back(buffer.data(), buffer.size());
  et::HierarchicalAllocator planned_memory({spans.data(), spans.size()});
  executorch::extension::MallocMemoryAllocator method_allocator, temp_allocator;
  et::MemoryManager memory(&method_allocator, &planned_memory, &temp_allocator);
  auto method = program->load_method("forward", &memory);
  if (!method.ok()) return 1;
  auto input = executorch::extension::from_blob(data.data(), {shape.begin(), shape.end()});
  const auto once = [&] {
    if (method->set_input(et::EValue(*input), 0) != et::Error::Ok || method->execute() != et::Error::Ok) std::exit(1);
  };
  print_timed_loop(once, warmup, runs, ", \"threads\": " + std::to_string(pool->get_thread_count()));
  return 0;
}
