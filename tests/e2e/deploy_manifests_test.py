"""Offline checks of deploy/: the Kubernetes manifests, the Dockerfile and the runtime layout it
copies. No container runtime or cluster is needed: manifests are parsed and cross-checked
(selectors, ports, probes, shutdown timing, security), the ConfigMap's model repository is
served by the real `infermark serve`, which must answer every probe path, and
deploy/stage_runtime.sh (what the Dockerfile's build stage runs) is run on the local build and
the result served with its own libraries only. kubectl renders the kustomization offline; its
client-side dry run needs a cluster to discover kinds and is skipped without one. The MPI
Operator's job (mpijob-sweep.yaml, outside the kustomization) is cross-checked against the
Dockerfile's sweep stage, and its study against a dry run of the real `infermark sweep`.

Usage: deploy_manifests_test.py INFERMARK MODELS_DIR
"""

import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import tritonclient.grpc as triton_grpc

try:
    import yaml
except ImportError:  # Debian's python3-yaml, when the venv lacks PyYAML
    sys.path.append("/usr/lib/python3/dist-packages")
    import yaml

from serve_support import http, infer_body, start_grpc_server, stop_server
import unittest_main

INFERMARK, MODELS = sys.argv[1], sys.argv[2]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEPLOY = os.path.join(ROOT, "deploy")
KUBERNETES = os.path.join(DEPLOY, "kubernetes")
IMAGE_PREFIX = "/opt/infermark"  # where deploy/Dockerfile puts deploy/stage_runtime.sh's output
API_VERSIONS = {"ConfigMap": "v1", "Service": "v1", "Deployment": "apps/v1", "PodDisruptionBudget": "policy/v1",
                "ServiceMonitor": "monitoring.coreos.com/v1"}
# Packages debian:bookworm-slim already holds (apt needs them): libraries from these need no install.
SLIM_BASE_PACKAGES = {"libc6", "libgcc-s1", "libstdc++6", "zlib1g"}


# Manifests outside the serving kustomization: the MPI Operator's sweep needs the operator's CRD.
MPIJOB_FILE = os.path.join(KUBERNETES, "mpijob-sweep.yaml")


def manifest_files():
    """The serving manifests (what kustomization.yaml applies)."""
    return sorted(f for f in glob.glob(os.path.join(KUBERNETES, "*.yaml"))
                  if os.path.basename(f) not in ("kustomization.yaml", os.path.basename(MPIJOB_FILE)))


def load_manifests():
    documents = []
    for path in manifest_files():
        with open(path) as f:
            documents += [(os.path.basename(path), doc) for doc in yaml.safe_load_all(f) if doc is not None]
    return documents


def parse_dockerfile(path):
    """[{"from": image, "name": alias, "instructions": [(INSTRUCTION, arguments)]}] per stage."""
    with open(path) as f:
        text = f.read()
    lines, current = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):  # a comment inside a continued instruction
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        lines.append(current + stripped)
        current = ""
    stages = []
    for line in lines:
        instruction, _, arguments = line.partition(" ")
        instruction = instruction.upper()
        if instruction == "FROM":
            found = re.fullmatch(r"(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", arguments.strip(), re.IGNORECASE)
            stages.append({"from": found.group(1), "name": found.group(2), "instructions": []})
        else:
            stages[-1]["instructions"].append((instruction, arguments.strip()))
    return stages


def instructions(stage, name):
    return [arguments for instruction, arguments in stage["instructions"] if instruction == name]


def quantity(value):
    """A Kubernetes CPU or memory quantity as a number (cores or bytes)."""
    units = {"m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 1e3, "M": 1e6, "G": 1e9}
    found = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(value))
    return float(found.group(1)) * units.get(found.group(2), 1)


class Deploy:
    """deploy/ read once: the manifests by kind, the Deployment's pod and container, the Dockerfile's stages."""

    def __init__(self):
        self.documents = load_manifests()
        self.by_kind = {}
        for _, doc in self.documents:
            self.by_kind.setdefault(doc.get("kind"), []).append(doc)
        self.deployment = self.by_kind["Deployment"][0]
        self.pod = self.deployment["spec"]["template"]
        self.container = self.pod["spec"]["containers"][0]
        self.service = self.by_kind["Service"][0]
        self.config_map = self.by_kind["ConfigMap"][0]
        self.stages = parse_dockerfile(os.path.join(DEPLOY, "Dockerfile"))

    def container_port(self, port):
        """The containerPort a probe's or Service's port (a name or a number) means; None if none."""
        for declared in self.container.get("ports", []):
            if port in (declared.get("name"), declared["containerPort"]):
                return declared["containerPort"]
        return None

    def serve_config(self):
        """The model repository in the ConfigMap file the Deployment's --config names."""
        args = self.container["args"]
        config_path = args[args.index("--config") + 1]
        mounts = {m["name"]: m["mountPath"] for m in self.container["volumeMounts"]}
        for volume in self.pod["spec"]["volumes"]:
            if volume.get("configMap", {}).get("name") != self.config_map["metadata"]["name"]:
                continue
            for item in volume["configMap"].get("items", []):
                if os.path.join(mounts[volume["name"]], item["path"]) == config_path:
                    return yaml.safe_load(self.config_map["data"][item["key"]])
        raise AssertionError(f"--config {config_path} is no file of the mounted ConfigMap")


class Manifests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.deploy = Deploy()
        for name in ("documents", "by_kind", "deployment", "pod", "container", "service", "config_map", "stages"):
            setattr(cls, name, getattr(cls.deploy, name))  # self.container rather than self.deploy.container

    def test_every_manifest_parses_with_required_fields(self):
        self.assertEqual(sorted(self.by_kind), sorted(API_VERSIONS))
        names = set()
        for file, doc in self.documents:
            where = f"{file}: {doc.get('kind')}"
            for field in ("apiVersion", "kind", "metadata"):
                self.assertIn(field, doc, where)
            self.assertEqual(doc["apiVersion"], API_VERSIONS[doc["kind"]], where)
            self.assertRegex(doc["metadata"].get("name", ""), r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", where)
            self.assertNotIn((doc["kind"], doc["metadata"]["name"]), names, f"{where}: defined twice")
            names.add((doc["kind"], doc["metadata"]["name"]))
            self.assertNotIn("namespace", doc["metadata"], f"{where}: leave the namespace to kubectl -n")

    def test_kustomization_lists_every_manifest(self):
        with open(os.path.join(KUBERNETES, "kustomization.yaml")) as f:
            kustomization = yaml.safe_load(f)
        self.assertEqual(sorted(kustomization["resources"]), sorted(os.path.basename(f) for f in manifest_files()))
        if not shutil.which("kubectl"):
            self.skipTest("kubectl not installed: the kustomization was not rendered")
        rendered = subprocess.run(["kubectl", "kustomize", KUBERNETES], capture_output=True, text=True, timeout=60)
        self.assertEqual(rendered.returncode, 0, rendered.stderr)
        kinds = sorted(doc["kind"] for doc in yaml.safe_load_all(rendered.stdout) if doc)
        self.assertEqual(kinds, sorted(kind for kind in API_VERSIONS))

    def test_selectors_match_the_pod_labels(self):
        labels = self.pod["metadata"]["labels"]
        selectors = {"Deployment": self.deployment["spec"]["selector"]["matchLabels"],
                     "Service": self.service["spec"]["selector"],
                     "PodDisruptionBudget": self.by_kind["PodDisruptionBudget"][0]["spec"]["selector"]["matchLabels"]}
        for kind, selector in selectors.items():
            self.assertTrue(selector, kind)
            self.assertLessEqual(selector.items(), labels.items(), f"{kind} selector {selector} vs pod labels {labels}")
        monitor = self.by_kind["ServiceMonitor"][0]["spec"]
        self.assertLessEqual(monitor["selector"]["matchLabels"].items(), self.service["metadata"]["labels"].items())

    def test_ports_agree_everywhere(self):
        config = self.deploy.serve_config()
        port, grpc_port = config["server"]["http_port"], config["server"]["grpc_port"]
        self.assertEqual(config["server"]["host"], "0.0.0.0", "a pod must listen beyond loopback")
        self.assertEqual(sorted(p["containerPort"] for p in self.container["ports"]), sorted([port, grpc_port]))
        self.assertEqual((self.deploy.container_port("http"), self.deploy.container_port("grpc")), (port, grpc_port))
        targets = {service_port["name"]: self.deploy.container_port(service_port["targetPort"])
                   for service_port in self.service["spec"]["ports"]}
        self.assertEqual(targets, {"http": port, "grpc": grpc_port}, "Service ports and their targets")
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            self.assertEqual(self.deploy.container_port(self.container[probe]["httpGet"]["port"]), port, probe)
        annotations = self.pod["metadata"]["annotations"]
        self.assertEqual(annotations["prometheus.io/scrape"], "true")
        self.assertEqual(int(annotations["prometheus.io/port"]), port)
        service_port_names = {p["name"] for p in self.service["spec"]["ports"]}
        for endpoint in self.by_kind["ServiceMonitor"][0]["spec"]["endpoints"]:
            self.assertIn(endpoint["port"], service_port_names, "ServiceMonitor port names no Service port")
        runtime = self.stages[-1]
        self.assertLessEqual({str(port), str(grpc_port)}, set(" ".join(instructions(runtime, "EXPOSE")).split()))
        self.assertIn(f":{port}/", " ".join(instructions(runtime, "HEALTHCHECK")))

    def test_shutdown_resources_and_security(self):
        config = self.deploy.serve_config()
        pre_stop = self.container["lifecycle"]["preStop"]["exec"]["command"]
        self.assertEqual(pre_stop[0], "sleep")
        grace = self.pod["spec"]["terminationGracePeriodSeconds"]
        self.assertGreater(grace, config["server"]["drain_s"] + float(pre_stop[1]),
                           "the kubelet would SIGKILL the server before its drain ends")
        resources = self.container["resources"]
        for kind in ("cpu", "memory"):
            self.assertLessEqual(quantity(resources["requests"][kind]), quantity(resources["limits"][kind]), kind)
        self.assertLessEqual(config["server"]["io_threads"], quantity(resources["limits"]["cpu"]))
        security = self.pod["spec"]["securityContext"]
        self.assertTrue(security["runAsNonRoot"])
        user = instructions(self.stages[-1], "USER")[-1].split(":")[0]
        self.assertEqual(str(security["runAsUser"]), user, "the pod's user is the image's")
        self.assertFalse(self.container["securityContext"]["allowPrivilegeEscalation"])

    def test_dockerfile_stages(self):
        self.assertGreaterEqual(len(self.stages), 2)
        build, runtime = self.stages[0], self.stages[-1]
        self.assertRegex(build["from"], r"^debian:(bookworm|12)(\.\d+)?$")
        self.assertTrue(build["name"])
        run = "\n".join(instructions(build, "RUN"))
        for step in ("scripts/setup", "cmake --preset release", "cmake --build --preset release",
                     f"deploy/stage_runtime.sh {IMAGE_PREFIX}"):
            self.assertIn(step, run)
        self.assertRegex(runtime["from"], r"^debian:(bookworm|12)(\.\d+)?-slim$")
        self.assertIn(f"--from={build['name']} {IMAGE_PREFIX} {IMAGE_PREFIX}", instructions(runtime, "COPY"))
        user = instructions(runtime, "USER")
        self.assertTrue(user and user[-1].split(":")[0] not in ("0", "root"), f"USER {user}")
        self.assertIn(f"LD_LIBRARY_PATH={IMAGE_PREFIX}/lib", " ".join(instructions(runtime, "ENV")))
        entrypoint = json.loads(instructions(runtime, "ENTRYPOINT")[-1])
        self.assertEqual(entrypoint, [f"{IMAGE_PREFIX}/bin/infermark", "serve"])
        healthcheck = instructions(runtime, "HEALTHCHECK")[-1]
        self.assertIn(self.container["readinessProbe"]["httpGet"]["path"], healthcheck)
        self.assertIn("curl", runtime_packages(runtime))

    def test_dockerignore_keeps_host_artifacts_out(self):
        with open(os.path.join(ROOT, ".dockerignore")) as f:
            ignored = {line.strip() for line in f if line.strip() and not line.startswith("#")}
        for path in (".git", "third_party", ".venv", "models", "web/node_modules"):
            self.assertIn(path, ignored)
        self.assertTrue({"build", "build*"} & ignored)

    def test_kubectl_client_dry_run(self):
        if not shutil.which("kubectl"):
            self.skipTest("kubectl not installed")
        failures = []
        for path in manifest_files():
            applied = subprocess.run(["kubectl", "apply", "--dry-run=client", "--validate=false",
                                      "--request-timeout=10s", "-f", path], capture_output=True, text=True, timeout=60)
            output = applied.stdout + applied.stderr
            if applied.returncode != 0 and re.search(r"connection refused|unable to recognize|couldn't get current server "
                                                     r"API group list|no configuration has been provided", output):
                self.skipTest(f"kubectl's client dry run needs a cluster for discovery, and none answers: "
                              f"{output.strip().splitlines()[-1]}")
            if applied.returncode != 0 and "no matches for kind \"ServiceMonitor\"" in output:
                continue  # a cluster without the Prometheus Operator
            if applied.returncode != 0:
                failures.append(f"{os.path.basename(path)}: {output.strip()}")
        self.assertEqual(failures, [])


class MpiJobSweep(unittest.TestCase):
    """deploy/kubernetes/mpijob-sweep.yaml: the Kubeflow MPI Operator's v2beta1 MPIJob, its study
    ConfigMap and results claim, against deploy/Dockerfile's sweep stage and the real infermark."""

    @classmethod
    def setUpClass(cls):
        with open(MPIJOB_FILE) as f:
            cls.by_kind = {doc["kind"]: doc for doc in yaml.safe_load_all(f) if doc}
        cls.job = cls.by_kind["MPIJob"]
        cls.replicas = cls.job["spec"]["mpiReplicaSpecs"]
        cls.launcher = cls.replicas["Launcher"]["template"]["spec"]["containers"][0]
        cls.worker_pod = cls.replicas["Worker"]["template"]["spec"]
        cls.worker = cls.worker_pod["containers"][0]
        cls.sweep_stage = next(s for s in parse_dockerfile(os.path.join(DEPLOY, "Dockerfile")) if s["name"] == "sweep")

    def mount_of(self, path):
        """The worker volume mounted at the folder holding `path`, and the mount."""
        for mount in self.worker["volumeMounts"]:
            if path == mount["mountPath"] or path.startswith(mount["mountPath"].rstrip("/") + "/"):
                volume = next(v for v in self.worker_pod["volumes"] if v["name"] == mount["name"])
                return volume, mount
        self.fail(f"no worker volume holds {path}")

    def test_kinds_and_api_versions(self):
        self.assertEqual({kind: doc["apiVersion"] for kind, doc in self.by_kind.items()},
                         {"ConfigMap": "v1", "PersistentVolumeClaim": "v1", "MPIJob": "kubeflow.org/v2beta1"})
        self.assertEqual(sorted(self.replicas), ["Launcher", "Worker"])
        self.assertEqual(self.replicas["Launcher"]["replicas"], 1)
        self.assertGreaterEqual(self.replicas["Worker"]["replicas"], 2)
        self.assertEqual(self.job["spec"]["mpiImplementation"], "OpenMPI")
        for doc in self.by_kind.values():
            self.assertNotIn("namespace", doc["metadata"])

    def test_launcher_runs_the_image_infermark_on_every_slot(self):
        command = self.launcher["command"] + self.launcher["args"]
        self.assertEqual(command[0], "mpirun")
        ranks = int(command[command.index("-np") + 1])
        self.assertEqual(ranks, self.replicas["Worker"]["replicas"] * self.job["spec"]["slotsPerWorker"])
        self.assertEqual(self.job["spec"]["slotsPerWorker"], 1, "one rank per worker pod")
        binary = f"{IMAGE_PREFIX}/bin/infermark"
        self.assertEqual(command[command.index(binary) + 1], "sweep")
        # Without it mpirun pins each rank (and the worker processes it starts) to one core.
        self.assertEqual(command[command.index("--bind-to") + 1], "none")
        self.assertEqual(command[command.index("-x") + 1], "LD_LIBRARY_PATH")
        self.assertIn(f"LD_LIBRARY_PATH={IMAGE_PREFIX}/lib", " ".join(instructions(self.sweep_stage, "ENV")))
        self.assertEqual(self.launcher["image"], self.worker["image"])

    def test_study_and_results_are_mounted_on_every_worker(self):
        args = self.launcher["args"]
        study, out = args[args.index("sweep") + 1], args[args.index("--out") + 1]
        volume, mount = self.mount_of(study)
        config_map = self.by_kind["ConfigMap"]
        self.assertEqual(volume["configMap"]["name"], config_map["metadata"]["name"])
        self.assertIn(os.path.relpath(study, mount["mountPath"]), config_map["data"])
        volume, mount = self.mount_of(out)
        claim = self.by_kind["PersistentVolumeClaim"]
        self.assertEqual(volume["persistentVolumeClaim"]["claimName"], claim["metadata"]["name"])
        self.assertFalse(mount.get("readOnly", False))
        self.assertIn("ReadWriteMany", claim["spec"]["accessModes"], "rank 0 may land on any worker")

    def test_the_study_is_one_infermark_sweep_accepts(self):
        config_map = self.by_kind["ConfigMap"]
        text = config_map["data"]["study.yaml"].replace(f"{IMAGE_PREFIX}/models", MODELS)
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "study.yaml")
            with open(path, "w") as f:
                f.write(text)
            done = subprocess.run([INFERMARK, "sweep", path, "--dry-run", "--out", folder], capture_output=True, text=True,
                                  timeout=60)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertRegex(done.stdout, r"study \S+: [1-9]\d* cells")

    def test_workers_run_the_images_sshd_as_its_user(self):
        user = instructions(self.sweep_stage, "USER")[-1].split(":")[0]
        for container in (self.launcher, self.worker):
            self.assertEqual(str(container["securityContext"]["runAsUser"]), user)
            self.assertFalse(container["securityContext"]["allowPrivilegeEscalation"])
        command = self.worker["command"] + self.worker["args"]
        self.assertEqual(command[0], "/usr/sbin/sshd")
        sshd_config = command[command.index("-f") + 1]
        run = "\n".join(instructions(self.sweep_stage, "RUN"))
        self.assertIn(f"> {sshd_config}", run, "the sweep stage writes the sshd configuration the workers use")
        self.assertTrue(sshd_config.startswith(self.job["spec"]["sshAuthMountPath"].rsplit("/", 1)[0] + "/"))
        self.assertIn(f"useradd --create-home --uid {user}", run)
        # sshd as non-root cannot bind port 22: server and client agree on another.
        ports = re.findall(r"Port (\d+)", run)
        self.assertEqual(len(set(ports)), 1, ports)
        self.assertGreater(int(ports[0]), 1024)

    def test_sweep_stage_has_mpi_ssh_and_the_runtime_libraries(self):
        stages = parse_dockerfile(os.path.join(DEPLOY, "Dockerfile"))
        self.assertEqual(stages[-1]["name"], "runtime", "a plain docker build still makes the serve image")
        packages = runtime_packages(self.sweep_stage)
        self.assertLessEqual({"openmpi-bin", "openssh-server", "openssh-client"}, packages)
        self.assertLessEqual(runtime_packages(stages[-1]) - {"curl"}, packages)
        build = stages[0]["name"]
        self.assertIn(f"--from={build} {IMAGE_PREFIX} {IMAGE_PREFIX}", instructions(self.sweep_stage, "COPY"))

    def test_not_in_the_serving_kustomization(self):
        with open(os.path.join(KUBERNETES, "kustomization.yaml")) as f:
            self.assertNotIn(os.path.basename(MPIJOB_FILE), yaml.safe_load(f)["resources"])


def runtime_packages(stage):
    """Packages the stage's apt-get install lines name."""
    packages = set()
    for command in instructions(stage, "RUN"):
        for part in command.split("&&"):
            words = shlex.split(part)
            if "install" in words and "apt-get" in words:
                packages |= {w for w in words[words.index("install") + 1:] if not w.startswith("-")}
    return packages


def owning_package(library):
    """The Debian package of a library path (usrmerge: tried under /lib and /usr/lib)."""
    candidates = {library, os.path.realpath(library)}
    for path in list(candidates):
        if path.startswith("/usr/lib/"):
            candidates.add(path[len("/usr"):])
        elif path.startswith("/lib/"):
            candidates.add("/usr" + path)
    for path in sorted(candidates):
        found = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
        if found.returncode == 0:
            return found.stdout.split(":")[0]
    return None


class AgainstTheRealServer(unittest.TestCase):
    """What can only be checked by running infermark: the manifests' model repository and probe
    paths, and the runtime layout the image gets."""

    @classmethod
    def setUpClass(cls):
        cls.deploy = Deploy()
        cls.workdir = tempfile.mkdtemp(prefix="infermark-deploy-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.workdir, ignore_errors=True)

    def check_serving(self, address, grpc_address, variants):
        container = self.deploy.container
        paths = {container[probe]["httpGet"]["path"] for probe in ("startupProbe", "readinessProbe", "livenessProbe")}
        paths.add(re.search(r"https?://[^/\s]+(/\S*)", instructions(self.deploy.stages[-1], "HEALTHCHECK")[-1]).group(1))
        paths.add(self.deploy.pod["metadata"]["annotations"]["prometheus.io/path"])
        paths |= {endpoint["path"] for endpoint in self.deploy.by_kind["ServiceMonitor"][0]["spec"]["endpoints"]}
        for path in sorted(paths):
            status, _, body = http(address, "GET", path, timeout=10)
            self.assertEqual(status, 200, f"GET {path}: {body[:200]!r}")
        body = infer_body(np.random.default_rng(11).random((1, 3, 32, 32), dtype=np.float32))
        for variant in variants:
            status, headers, text = http(address, "POST", "/v2/models/tiny_cnn/infer", body, {"X-Model-Variant": variant})
            self.assertEqual((status, headers.get("X-Model-Variant")), (200, variant), text[:300])
        with triton_grpc.InferenceServerClient(grpc_address) as client:
            self.assertTrue(client.is_server_ready())
            self.assertTrue(client.is_model_ready("tiny_cnn"))

    def test_configmap_model_repository_serves_and_answers_every_probe(self):
        config = self.deploy.serve_config()
        for model in config["models"]:  # the image's model paths, pointed at the local models
            model["file"] = os.path.join(os.path.abspath(MODELS), os.path.basename(model["file"]))
            for variant in model["variants"]:
                if "model" in variant:
                    variant["model"] = os.path.join(os.path.abspath(MODELS), os.path.basename(variant["model"]))
        path = os.path.join(self.workdir, "models.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(config, f)
        process, address, grpc_address = start_grpc_server(
            INFERMARK, ["--config", path, "--host", "127.0.0.1", "--port", "0", "--grpc-port", "0"], timeout=60)
        try:
            self.check_serving(address, grpc_address, [v["name"] for v in config["models"][0]["variants"]])
        finally:
            code = stop_server(process)
        self.assertEqual(code, 0)

    def test_staged_runtime_serves_with_its_own_libraries(self):
        stage = os.path.join(self.workdir, "stage")
        staged = subprocess.run([os.path.join(DEPLOY, "stage_runtime.sh"), stage, os.path.dirname(INFERMARK), MODELS],
                                capture_output=True, text=True, timeout=120)
        self.assertEqual(staged.returncode, 0, staged.stdout + staged.stderr)
        environment = {k: v for k, v in os.environ.items() if k != "INFERMARK_BACKEND_PATH"}
        environment["LD_LIBRARY_PATH"] = os.path.join(stage, "lib")

        # Every library resolves from the stage or from Debian packages the runtime stage installs.
        needed, missing = set(), []
        for root, _, files in os.walk(stage):
            for name in files:
                path = os.path.join(root, name)
                with open(path, "rb") as f:
                    if f.read(4) != b"\x7fELF":
                        continue
                listed = subprocess.run(["ldd", path], capture_output=True, text=True, env=environment).stdout
                missing += [f"{name}: {line.strip()}" for line in listed.splitlines() if "not found" in line]
                for library in re.findall(r"=> (/\S+)", listed):
                    if not library.startswith(stage):
                        needed.add(library)
        self.assertEqual(missing, [])
        packages = {library: owning_package(library) for library in needed}
        self.assertNotIn(None, packages.values(), f"libraries from no Debian package: {packages}")
        installed = runtime_packages(self.deploy.stages[-1]) | SLIM_BASE_PACKAGES
        self.assertLessEqual(set(packages.values()), installed,
                             f"the runtime stage lacks {sorted(set(packages.values()) - installed)}")

        # The image's default command, on loopback and any port, from the stage.
        command = json.loads(instructions(self.deploy.stages[-1], "CMD")[-1])
        command = [arg.replace(IMAGE_PREFIX, stage) for arg in command]
        command[command.index("--host") + 1] = "127.0.0.1"
        command[command.index("--port") + 1] = "0"
        process, address, grpc_address = start_grpc_server(os.path.join(stage, "bin", "infermark"), command, timeout=60,
                                                           env=environment)
        try:
            self.check_serving(address, grpc_address, ["onnxruntime", "openvino"])
            with open(f"/proc/{process.pid}/maps") as f:
                mapped = {line.split()[-1] for line in f if ".so" in line and line.split()[-1].startswith("/")}
            outside = sorted(path for path in mapped if not path.startswith(stage) and
                             not path.startswith(("/usr/lib/", "/lib/", "/usr/lib64/", "/lib64/")))
            self.assertEqual(outside, [], "loaded from outside the stage and the system")
            for library in ("libonnxruntime.so.1", "libopenvino_intel_cpu_plugin.so", "libopenvino_onnx_frontend.so"):
                self.assertTrue(any(os.path.basename(p).startswith(library) and p.startswith(stage) for p in mapped),
                                f"{library} not loaded from the stage")
        finally:
            code = stop_server(process)
        self.assertEqual(code, 0)


if __name__ == "__main__":
    unittest_main.main()
