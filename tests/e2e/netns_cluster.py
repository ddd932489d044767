"""Separate hosts on one machine for the scale-out tests: Linux network namespaces joined by veth
pairs to a bridge (tests/e2e/netns_cluster.sh), each with its own address and host name. Open MPI
reaches them as remote nodes through the script as its remote-shell agent, so ranks talk over TCP
between the namespaces' addresses, as on a real cluster. Root only: skip (77) otherwise."""

import os
import subprocess
import sys
import tempfile

from unittest_main import SKIP  # ctest's SKIP_RETURN_CODE for the Python end-to-end tests

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "netns_cluster.sh")


def available():
    """Why the cluster cannot be built here, or None."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "unshare", "mpirun"):
        if subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True).returncode != 0:
            return f"{tool} is not installed"
    return None


class Cluster:
    """`hosts` namespaces host-0 .. host-(hosts-1) on subnet 10.78.<cluster_id>.0/24; host k is at
    10.78.<cluster_id>.(10+k). Use as a context manager: everything is removed on exit."""

    def __init__(self, cluster_id, hosts):
        self.id = str(cluster_id)
        self.hosts = hosts
        self.addresses = []
        self.subnet = f"10.78.{self.id}.0/24"
        self._hostfile = None

    def __enter__(self):
        out = subprocess.run([SCRIPT, "up", self.id, str(self.hosts)], capture_output=True, text=True, check=True)
        self.addresses = out.stdout.split()
        return self

    def __exit__(self, *exc):
        subprocess.run([SCRIPT, "down", self.id], capture_output=True)
        if self._hostfile:
            os.unlink(self._hostfile)

    def address(self, k):
        return self.addresses[k]

    def launcher(self, k):
        """A command prefix that runs a program on host k (its namespace and host name)."""
        return [SCRIPT, "exec", self.id, str(k)]

    def mpirun(self, ranks_on, program):
        """mpirun's argument list for one rank on each host of `ranks_on` (host indices), over TCP
        between the namespaces, running `program` (a list)."""
        if self._hostfile:
            os.unlink(self._hostfile)
        with tempfile.NamedTemporaryFile("w", suffix=".hosts", delete=False) as f:
            for k in ranks_on:
                f.write(f"{self.address(k)} slots=1\n")
            self._hostfile = f.name
        # --bind-to none: each rank stands for a whole host, whose cores its cells may use.
        return ["mpirun", "--allow-run-as-root", "--bind-to", "none", "-np", str(len(ranks_on)), "--hostfile", self._hostfile,
                "--mca", "plm_rsh_agent", f"{SCRIPT} agent", "--mca", "oob_tcp_if_include", self.subnet,
                "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", self.subnet, *program]


def skip_unless_available():
    why = available()
    if why:
        print(f"SKIP: {why}")
        sys.exit(SKIP)
