// The MPI job this process belongs to, if any: its rank, the number of ranks, and the few
// collective operations scale-out needs (barrier, gather to rank 0, broadcast from it, sums). MPI
// is optional at build time (-DINFERMARK_WITH_MPI=AUTO|ON|OFF); without it, a process started by
// an MPI launcher with more than one rank is refused with how to enable MPI, and a plain process
// is a world of one. Only the main thread calls these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace infermark::scaleout {

// gethostname(), or "unknown-host".
std::string this_host_name();

// Whether this infermark was built with MPI.
bool built_with_mpi();

// The number of ranks the launcher (mpirun, srun, the MPI Operator's mpirun) started, read from
// its environment; 1 when not started by one.
int launched_ranks();

// Whether an MPI launcher started this process, `mpirun -np 1` included (its environment says so).
bool launched_by_mpi();

class World {
 public:
  // The process's world, initialising MPI on first use when launched by an MPI launcher. Throws
  // infermark::Error when launched with several ranks by an infermark built without MPI (the
  // message says how to build with it), or when MPI fails to start.
  static World& get();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool distributed() const { return size_ > 1; }
  bool is_root() const { return rank_ == 0; }
  // This rank's host name (gethostname), for results and messages.
  const std::string& host() const { return host_; }

  void barrier();
  // A barrier that sleeps between checks, for ranks that may wait minutes for another rank's work:
  // MPI's blocking wait spins a core, which a rank still measuring on the same host would lose.
  void idle_barrier(double poll_s = 0.02);
  // Rank 0 gets every rank's text in rank order; the others get an empty vector.
  std::vector<std::string> gather(const std::string& mine);
  // Every rank gets rank 0's text (what the others pass is ignored).
  std::string broadcast(const std::string& from_root);
  double sum(double mine);
  double max(double mine);
  bool all(bool mine);  // true on every rank when every rank passed true

  // A monotonic instant (this host's clock) at which every rank starts together: rank 0 picks a
  // wall-clock time `lead_s` ahead and broadcasts it; each rank converts it to its own monotonic
  // clock. Hosts' wall clocks must be synchronised (NTP, PTP) for ranks on different hosts.
  std::int64_t common_start_ns(double lead_s = 0.5);

  // Ends every rank of the job at once (a rank that cannot go on would otherwise leave the others
  // waiting in a collective forever).
  [[noreturn]] void abort(int exit_code);

  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

 private:
  World();
  int rank_ = 0;
  int size_ = 1;
  bool initialised_mpi_ = false;
  std::string host_;
};

// Sleeps until the monotonic instant `at_ns` (from World::common_start_ns).
void sleep_until(std::int64_t at_ns);

}  // namespace infermark::scaleout
