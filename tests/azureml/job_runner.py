"""Run an exported Azure ML command job (`job.yml`) on this machine the way Azure ML runs it.

What Azure ML does on each node of a command job, and what `run_job` does here:

- **Code.** The job's `code:` folder (relative to the YAML) is snapshotted into the node's working
  directory (`AZUREML_CR_EXECUTION_WORKING_DIR_PATH`, `.../exe/wd`), and the command runs there.
  Here: a copy of the staged folder; the Python of this virtualenv, but with every tunegate
  checkout removed from `sys.path` (the editable install's `.pth` and `PYTHONPATH`), so only the
  staged code is importable, as in the job's container.
- **Inputs and outputs.** Each input is mounted (`ro_mount`: read-only) or downloaded under the
  data capability's folder (`AZUREML_CR_DATA_CAPABILITY_PATH`); each `upload` output is a local
  folder on the node, uploaded to the output's location when the job ends (every node's folder,
  to the same place); a `rw_mount` output is its location itself, written as the job goes (here:
  the folder given for it, shared by every node). `${{inputs.NAME}}` / `${{outputs.NAME}}` in the command become those paths,
  and the same paths are in `AZURE_ML_INPUT_NAME` / `AZURE_ML_OUTPUT_NAME`; a literal input (a
  number or string, e.g. a hyperparameter) becomes its value. Here: a read-only
  copy of the local folder given for each input (file modes; root ignores them, so whatever
  changed in a `ro_mount` input is also found afterwards: `JobRun.input_changes`, a failed run,
  as a write to a read-only mount fails the job); each node's output folder is copied into the
  folder given for each output after the job, and `JobRun.node_outputs` says what each node
  wrote.
- **Variables.** The image's environment, the job's `environment_variables`, and the run's
  context: `AZUREML_RUN_ID`, `AZUREML_ARM_SUBSCRIPTION`, `AZUREML_ARM_RESOURCEGROUP`,
  `AZUREML_ARM_WORKSPACE_NAME`, `AZUREML_ARM_PROJECT_NAME` (the experiment), `AZUREML_CR_*`,
  `MLFLOW_TRACKING_URI` / `MLFLOW_EXPERIMENT_NAME` / `MLFLOW_RUN_ID` (the job is the MLflow run).
  Here the tracking URI is a file store under the job's folder (the real one is the workspace's
  `azureml://` URI, which needs the service); the run is created in it when mlflow is installed.
- **Distribution** (`distribution: {type: pytorch, process_count_per_instance: P}` on
  `instance_count: N` nodes): Azure ML starts the command P times on each node and "sets the
  `MASTER_ADDR`, `MASTER_PORT`, `WORLD_SIZE`, and `NODE_RANK` environment variables on each node,
  and sets the process-level `RANK` and `LOCAL_RANK` environment variables" (Distributed GPU
  training guide (SDK v2), PyTorch section: learn.microsoft.com/azure/machine-learning/
  how-to-train-distributed-gpu; MicrosoftDocs/azure-ai-docs
  articles/machine-learning/how-to-train-distributed-gpu.md). WORLD_SIZE is N*P, RANK is
  NODE_RANK*P + LOCAL_RANK. Here every node is a set of processes on this machine: MASTER_ADDR
  127.0.0.1, MASTER_PORT a free port.
- **The command** runs in a shell (`bash -c`), so `$NODE_RANK` and the like expand on the node.
  Each process's output goes to its own log (Azure ML: `user_logs/std_log_process_N.txt`).

The variable names of the run context, the `AZUREML_CR_*` folders and the
`AZURE_ML_INPUT_`/`AZURE_ML_OUTPUT_` bindings are those of a job pod's specification captured from
Azure ML's common runtime (the lifecycler's `execution_environment` and the data capability's
`environment_names`), in Tomáš Kubica's blog post "Kubernetes pro velká data a strojové učení -
proč AzureML nebo Apache Spark používá projekt Volcano?" (2022, tkubica12/tkubica12.github.io).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
_BINDING = re.compile(r"\$\{\{\s*(inputs|outputs)\.([A-Za-z0-9_]+)\s*\}\}")
# Variables of the machine running the tests that a node does not have.
_NOT_ON_A_NODE = (
    "PYTHONPATH",
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "NODE_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
    "MLFLOW_TRACKING_URI",
    "MLFLOW_RUN_ID",
    "MLFLOW_EXPERIMENT_ID",
    "MLFLOW_EXPERIMENT_NAME",
)
# Fake but well-formed workspace identifiers.
SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
RESOURCE_GROUP = "tunegate-rg"
WORKSPACE = "tunegate-ws"

# Loaded by every Python process of the job (from a folder on PYTHONPATH): drops tunegate
# checkouts from sys.path, so the staged code is the only tunegate code importable, and, when
# TUNEGATE_JOB_WRITES is set, records each file a process opens for writing under the outputs.
_SITECUSTOMIZE = """\
import os, sys

_hidden = set(filter(None, os.environ.get("TUNEGATE_JOB_HIDE_PATHS", "").split(os.pathsep)))
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") not in _hidden]

_log = os.environ.get("TUNEGATE_JOB_WRITES")
_roots = tuple(filter(None, os.environ.get("TUNEGATE_JOB_OUTPUTS", "").split(os.pathsep)))
if _log and _roots:
    _who = os.environ.get("RANK", "launcher") + ":" + str(os.getpid())

    def _record(event, args):
        if event != "open" or not isinstance(args[0], (str, bytes, os.PathLike)):
            return
        mode, flags = args[1], args[2]
        writing = (mode is not None and any(c in mode for c in "wax+")) or (
            mode is None and flags & (os.O_WRONLY | os.O_RDWR)
        )
        path = os.path.abspath(os.fsdecode(args[0]))
        if writing and path.startswith(_roots) and not path.startswith(_log):
            with open(_log + "/" + _who, "a") as out:
                out.write(path + "\\n")

    sys.addaudithook(_record)
"""


@dataclass
class JobRun:
    """What happened when a job's command ran here."""

    returncodes: list[int]  # one per process, in order of (node rank, local rank)
    logs: list[Path]  # one per process, same order
    outputs: dict[str, Path]  # output name: the folder every node's output was uploaded to
    node_outputs: dict[int, dict[str, list[str]]]  # node rank: output name: files it wrote
    writes: dict[str, list[str]] = field(default_factory=dict)  # RANK (or "launcher"): files
    input_changes: dict[str, list[str]] = field(default_factory=dict)  # ro_mount input: paths
    command: str = ""  # node 0's command after substitution
    env: list[dict[str, str]] = field(default_factory=list)  # each process's variables

    @property
    def ok(self) -> bool:
        """Azure ML would report success: every process exited 0 and no read-only input was
        written to (which fails on a mount)."""
        return all(code == 0 for code in self.returncodes) and not self.input_changes

    def log(self, process: int = 0) -> str:
        return self.logs[process].read_text(errors="replace")

    def tails(self, chars: int = 4000) -> str:
        """The end of every process's log, for an assertion message."""
        logs = "\n".join(
            f"--- process {i} (exit {code}) ---\n{self.log(i)[-chars:]}"
            for i, code in enumerate(self.returncodes)
        )
        return logs + (
            f"\nwritten to read-only inputs: {self.input_changes}" * bool(self.input_changes)
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_job(
    job_yml: Path,
    inputs: dict[str, Path],
    outputs: dict[str, Path],
    workdir: Path,
    *,
    timeout: float = 600,
    record_writes: bool = False,
) -> JobRun:
    """Run `job_yml`'s command on every node of the job, here, as Azure ML would; wait for it.

    `inputs` / `outputs`: a local folder for each of the job's inputs / outputs. `workdir`: where
    the nodes' folders go. When one process fails the others are stopped, as a failed process
    fails the job. `record_writes`: say which process opened which output file for writing
    (Python-level opens: files written by native code, e.g. safetensors, are not seen).
    """
    job = yaml.safe_load(job_yml.read_text())
    if job.get("type") != "command":
        raise ValueError(f"{job_yml}: not a command job")
    literals = {n: v for n, v in (job.get("inputs") or {}).items() if not isinstance(v, dict)}
    missing = (set(job.get("inputs") or {}) - set(inputs) - set(literals)) | (
        set(job.get("outputs") or {}) - set(outputs)
    )
    if missing:
        raise ValueError(f"no local folder given for {sorted(missing)}")
    code = (job_yml.parent / job["code"]).resolve()
    nodes = int((job.get("resources") or {}).get("instance_count", 1))
    distribution = job.get("distribution") or {}
    if distribution and distribution.get("type") != "pytorch":
        raise NotImplementedError(f"distribution {distribution.get('type')!r}")
    per_node = int(distribution.get("process_count_per_instance", 1))
    run_id = f"{job.get('name', 'job')}_{uuid.uuid4().hex[:8]}"
    rendezvous = {
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(free_port()),
        "WORLD_SIZE": str(nodes * per_node),
    }
    support = _support_folder(workdir)
    context = _run_context(job, run_id, workdir)

    processes: list[tuple[subprocess.Popen[bytes], Path]] = []
    envs: list[dict[str, str]] = []
    node_folders: dict[int, dict[str, Path]] = {}
    read_only: dict[str, tuple[Path, dict[str, tuple[int, int]]]] = {}
    commands: list[str] = []
    try:
        for node in range(nodes):
            base = workdir / f"node-{node}"
            working_dir = base / "exe" / "wd"
            shutil.copytree(code, working_dir, ignore=shutil.ignore_patterns("__pycache__"))
            data = base / "cap" / "data-capability" / "wd"
            paths: dict[tuple[str, str], Path | str] = {}
            for name, spec in (job.get("inputs") or {}).items():
                if name in literals:  # a literal input: its value, in the command and variable
                    paths["inputs", name] = str(literals[name])
                    continue
                paths["inputs", name] = _mount_input(inputs[name], data / f"INPUT_{name}", spec)
                if (spec or {}).get("mode", "ro_mount") == "ro_mount":
                    folder = paths["inputs", name]
                    read_only[f"{name}@node-{node}"] = (folder, _snapshot(folder))
            uploaded: dict[str, Path] = {}
            for name, spec in (job.get("outputs") or {}).items():
                mode = (spec or {}).get("mode", "rw_mount")
                if mode == "rw_mount":  # every node writes the output's one location
                    paths["outputs", name] = Path(outputs[name])
                    Path(outputs[name]).mkdir(parents=True, exist_ok=True)
                    continue
                if mode != "upload":
                    raise NotImplementedError(f"output {name}: mode {mode!r}")
                paths["outputs", name] = uploaded[name] = data / name
                uploaded[name].mkdir(parents=True)
            node_folders[node] = uploaded
            command = _BINDING.sub(
                lambda m, p=paths: str(p[m.group(1), m.group(2)]), job["command"]
            )
            commands.append(command)
            node_env = {
                **_image_environment(support, record_writes, node_folders[node].values()),
                **{k: str(v) for k, v in (job.get("environment_variables") or {}).items()},
                **context,
                "AZUREML_CR_EXECUTION_WORKING_DIR_PATH": str(working_dir),
                "AZUREML_CR_DATA_CAPABILITY_PATH": str(data),
                **{
                    f"AZURE_ML_{kind[:-1].upper()}_{name}": str(path)
                    for (kind, name), path in paths.items()
                },
                **rendezvous,
                "NODE_RANK": str(node),
            }
            for local in range(per_node):
                env = {**node_env, "RANK": str(node * per_node + local), "LOCAL_RANK": str(local)}
                log = base / "user_logs" / f"std_log_process_{local}.txt"
                log.parent.mkdir(parents=True, exist_ok=True)
                with log.open("wb") as out:
                    process = subprocess.Popen(
                        ["bash", "-c", command],
                        cwd=working_dir,
                        env=env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                processes.append((process, log))
                envs.append(env)
        returncodes = _wait(processes, timeout)
    finally:
        for process, _ in processes:
            _stop(process)
        for folder, _ in read_only.values():
            _writable(folder)
    input_changes = {
        key: changed
        for key, (folder, before) in read_only.items()
        if (changed := sorted(set(before.items()) ^ set(_snapshot(folder).items())))
    }

    node_outputs: dict[int, dict[str, list[str]]] = {}
    for node, folders in node_folders.items():  # the upload: every node's files, same place
        node_outputs[node] = {}
        for name, folder in folders.items():
            files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
            node_outputs[node][name] = files
            shutil.copytree(folder, outputs[name], dirs_exist_ok=True)
    return JobRun(
        returncodes=returncodes,
        logs=[log for _, log in processes],
        outputs=dict(outputs),
        node_outputs=node_outputs,
        writes=_writes(support / "writes", node_folders) if record_writes else {},
        input_changes={k: sorted({path for path, _ in v}) for k, v in input_changes.items()},
        command=commands[0],
        env=envs,
    )


def _support_folder(workdir: Path) -> Path:
    support = workdir / "support"
    (support / "python").mkdir(parents=True, exist_ok=True)
    (support / "writes").mkdir(exist_ok=True)
    (support / "python" / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    return support


def _image_environment(support: Path, record_writes: bool, outputs: Any) -> dict[str, str]:
    """The container's own variables: this machine's, less what a node would not have, with this
    virtualenv's `python`, `accelerate` and `torchrun` first on PATH (the image's Python)."""
    env = {k: v for k, v in os.environ.items() if k not in _NOT_ON_A_NODE}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = str(support / "python")  # only the sitecustomize above
    env["TUNEGATE_JOB_HIDE_PATHS"] = os.pathsep.join(_checkouts())
    if record_writes:
        env["TUNEGATE_JOB_WRITES"] = str(support / "writes")
        env["TUNEGATE_JOB_OUTPUTS"] = os.pathsep.join(str(p) for p in outputs)
    return env


def _checkouts() -> list[str]:
    """Folders on this Python's path that hold tunegate's own packages (this checkout, and the
    one the virtualenv's editable install points at)."""
    found = {os.path.realpath(ROOT)}
    for entry in sys.path:
        if entry and (Path(entry) / "trainer" / "train.py").is_file():
            found.add(os.path.realpath(entry))
    return sorted(found)


def _run_context(job: dict[str, Any], run_id: str, workdir: Path) -> dict[str, str]:
    """The variables of the run a job is: workspace, experiment, run, MLflow tracking."""
    experiment = job.get("experiment_name") or "Default"
    workspace_scope = (
        f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{RESOURCE_GROUP}"
        f"/providers/Microsoft.MachineLearningServices/workspaces/{WORKSPACE}"
    )
    experiment_id = str(uuid.uuid5(uuid.NAMESPACE_URL, experiment))
    context = {
        "AZUREML_RUN_ID": run_id,
        "AZUREML_ROOT_RUN_ID": run_id,
        "AZUREML_ARM_SUBSCRIPTION": SUBSCRIPTION,
        "AZUREML_ARM_RESOURCEGROUP": RESOURCE_GROUP,
        "AZUREML_ARM_WORKSPACE_NAME": WORKSPACE,
        "AZUREML_ARM_PROJECT_NAME": experiment,
        "AZUREML_EXPERIMENT_ID": experiment_id,
        "AZUREML_WORKSPACE_ID": str(uuid.uuid5(uuid.NAMESPACE_URL, WORKSPACE)),
        "AZUREML_WORKSPACE_SCOPE": workspace_scope,
        "AZUREML_EXPERIMENT_SCOPE": f"{workspace_scope}/experiments/{experiment}",
        "AZUREML_CR_CORRELATION_ID": run_id,
        "AZUREML_CR_AZUREML_CONTEXT": json.dumps(
            {
                "subscription_id": SUBSCRIPTION,
                "resource_group": RESOURCE_GROUP,
                "workspace_name": WORKSPACE,
                "experiment_name": experiment,
                "experiment_id": experiment_id,
                "run_id": run_id,
                "root_run_id": run_id,
            }
        ),
        "MLFLOW_TRACKING_URI": (workdir / "mlruns").resolve().as_uri(),
        "MLFLOW_EXPERIMENT_NAME": experiment,
    }
    try:
        import mlflow
    except ImportError:  # the trainer then says it does not log to MLflow
        return context
    mlflow.set_tracking_uri(context["MLFLOW_TRACKING_URI"])
    experiment_id = mlflow.set_experiment(experiment).experiment_id
    with mlflow.start_run(run_name=run_id) as run:  # Azure ML creates the run before the job
        context |= {"MLFLOW_RUN_ID": run.info.run_id, "MLFLOW_EXPERIMENT_ID": experiment_id}
    return context


def _mount_input(source: Path, target: Path, spec: dict[str, Any] | None) -> Path:
    mode = (spec or {}).get("mode", "ro_mount")
    if mode not in ("ro_mount", "download"):
        raise NotImplementedError(f"input mode {mode!r}")
    if not source.is_dir():
        raise ValueError(f"{source}: an input is a local folder here")
    shutil.copytree(source, target)
    if mode == "ro_mount":
        for path in [target, *target.rglob("*")]:
            path.chmod(0o555 if path.is_dir() else 0o444)
    return target


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every path under `folder`: (size, modification time)."""
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in folder.rglob("*")
    }


def _writable(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


def _wait(processes: list[tuple[subprocess.Popen[bytes], Path]], timeout: float) -> list[int]:
    """Wait for every process; when one fails (or time is up) stop the others."""
    deadline = time.monotonic() + timeout
    while True:
        codes = [p.poll() for p, _ in processes]
        if all(c is not None for c in codes):
            return [int(c) for c in codes if c is not None]
        if any(c not in (None, 0) for c in codes) or time.monotonic() > deadline:
            for process, _ in processes:
                _stop(process)
            return [p.wait() for p, _ in processes]
        time.sleep(0.2)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End a process and everything it started (its own session): SIGTERM, SIGKILL after 10 s;
    whatever of its session outlived it, SIGKILL."""
    try:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:  # nothing of it left
        pass
    process.wait()


def _writes(folder: Path, node_folders: dict[int, dict[str, Path]]) -> dict[str, list[str]]:
    """RANK (or "launcher"): the output files its processes opened for writing, relative to the
    node's output folder."""
    roots = [p for folders in node_folders.values() for p in folders.values()]
    writes: dict[str, set[str]] = {}
    for record in folder.iterdir():
        rank = record.name.split(":")[0]
        for line in record.read_text().splitlines():
            root = next(r for r in roots if line.startswith(str(r)))
            writes.setdefault(rank, set()).add(str(Path(line).relative_to(root)))
    return {rank: sorted(files) for rank, files in writes.items()}
