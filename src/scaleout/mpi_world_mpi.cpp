// World over MPI: initialised on first use when an MPI launcher started this process, finalised
// when the process ends. Collectives are MPI's own (barrier, gather, broadcast, allreduce).
// MPI's C API only: the deprecated C++ bindings need their own library.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "scaleout/mpi_world.hpp"

namespace infermark::scaleout {

namespace {

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string("MPI ") + what + ": " + std::string(text, static_cast<std::size_t>(length)));
}

std::int64_t wall_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

bool built_with_mpi() { return true; }

World& World::get() {
  static World world;
  return world;
}

World::World() : host_(this_host_name()) {
  if (launched_ranks() <= 1) return;  // a plain process: no MPI runtime to start
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    int provided = 0;
    // Only the main thread calls MPI; load and sweep threads never do.
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "init");
    initialised_mpi_ = true;
  }
  // Errors come back as codes (then exceptions), not as an abort deep inside a collective.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "size");
}

World::~World() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (initialised_mpi_ && !finalized) MPI_Finalize();
}

void World::barrier() {
  if (distributed()) check(MPI_Barrier(MPI_COMM_WORLD), "barrier");
}

void World::idle_barrier(double poll_s) {
  if (!distributed()) return;
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ibarrier(MPI_COMM_WORLD, &request), "barrier");
  const auto pause = std::chrono::duration<double>(poll_s);
  for (int done = 0;;) {
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "barrier");
    if (done) return;
    std::this_thread::sleep_for(pause);
  }
}

std::vector<std::string> World::gather(const std::string& mine) {
  if (!distributed()) return {mine};
  long long length = static_cast<long long>(mine.size());
  std::vector<long long> lengths(is_root() ? static_cast<std::size_t>(size_) : 0);
  check(MPI_Gather(&length, 1, MPI_LONG_LONG, lengths.data(), 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), "gather (sizes)");
  std::vector<int> counts, offsets;
  std::string all;
  if (is_root()) {
    long long total = 0;
    for (const auto n : lengths) {
      if (total + n > INT32_MAX) throw Error("MPI gather: the ranks' results exceed 2 GiB together");
      counts.push_back(static_cast<int>(n));
      offsets.push_back(static_cast<int>(total));
      total += n;
    }
    all.resize(static_cast<std::size_t>(total));
  }
  check(MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, all.data(), counts.data(), offsets.data(), MPI_CHAR, 0,
                    MPI_COMM_WORLD),
        "gather");
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < counts.size(); ++i)
    texts.push_back(all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(counts[i])));
  return texts;
}

std::string World::broadcast(const std::string& from_root) {
  if (!distributed()) return from_root;
  long long length = is_root() ? static_cast<long long>(from_root.size()) : 0;
  check(MPI_Bcast(&length, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), "broadcast (size)");
  if (length > INT32_MAX) throw Error("MPI broadcast: over 2 GiB");
  std::string text = is_root() ? from_root : std::string(static_cast<std::size_t>(length), '\0');
  check(MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, 0, MPI_COMM_WORLD), "broadcast");
  return text;
}

double World::sum(double mine) {
  double total = mine;
  if (distributed()) check(MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "sum");
  return total;
}

double World::max(double mine) {
  double most = mine;
  if (distributed()) check(MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "max");
  return most;
}

bool World::all(bool mine) {
  int in = mine ? 1 : 0, out = in;
  if (distributed()) check(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD), "all");
  return out != 0;
}

std::int64_t World::common_start_ns(double lead_s) {
  const auto lead_ns = static_cast<std::int64_t>(lead_s * 1e9);
  if (!distributed()) return mono_now_ns() + lead_ns;
  barrier();
  long long wall_start = is_root() ? wall_now_ns() + lead_ns : 0;
  check(MPI_Bcast(&wall_start, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), "start time");
  // The same wall-clock instant on this host's monotonic clock.
  return mono_now_ns() + (static_cast<std::int64_t>(wall_start) - wall_now_ns());
}

void World::abort(int exit_code) {
  if (distributed()) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::exit(exit_code);
}

}  // namespace infermark::scaleout
