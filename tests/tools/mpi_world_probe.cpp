// Run under `mpirun -np N`: checks World's collectives across real MPI ranks (rank order of
// gather, broadcast from rank 0, sums, the common start) and exits 0 only when all hold.
#include <fmt/core.h>

#include <string>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "scaleout/mpi_world.hpp"

int main() {
  try {
    auto& world = infermark::scaleout::World::get();
    int failures = 0;
    const auto expect = [&](bool ok, const std::string& what) {
      if (!ok) {
        fmt::print(stderr, "rank {}: {}\n", world.rank(), what);
        ++failures;
      }
    };
    const int n = world.size();
    expect(n == infermark::scaleout::launched_ranks(), "size differs from the launcher's rank count");
    const auto texts = world.gather("rank " + std::to_string(world.rank()) + std::string(world.rank() * 1000, 'x'));
    if (world.is_root()) {
      expect(static_cast<int>(texts.size()) == n, "gather did not return one text per rank");
      for (int r = 0; r < static_cast<int>(texts.size()); ++r)
        expect(texts[r].starts_with("rank " + std::to_string(r) + (r ? "x" : "")) && texts[r].size() == 6 + r * 1000u + (r > 9),
               "gather out of rank order or cut short at rank " + std::to_string(r));
    } else {
      expect(texts.empty(), "a rank other than 0 got gathered texts");
    }
    expect(world.broadcast(world.is_root() ? "from zero" : "ignored") == "from zero", "broadcast did not carry rank 0's text");
    expect(world.sum(world.rank() + 1.0) == n * (n + 1) / 2.0, "sum is wrong");
    expect(world.max(world.rank()) == n - 1.0, "max is wrong");
    expect(world.all(true) && !world.all(world.rank() != 0), "all is wrong");
    const auto start = world.common_start_ns(0.2);
    expect(start > infermark::mono_now_ns(), "the common start is not ahead");
    infermark::scaleout::sleep_until(start);
    expect(world.sum(failures) == 0, "another rank failed");
    if (world.is_root() && failures == 0) fmt::print("{} ranks on {}: collectives agree\n", n, world.host());
    return failures == 0 ? 0 : 1;
  } catch (const infermark::Error& e) {
    fmt::print(stderr, "mpi_world_probe: {}\n", e.what());
    return 2;
  }
}
