"""Jobs in the fake workspace: submission, status the test scripts, cancel, and run history.

Run history (`<region>.api.azureml.ms/history/v1.0/...`) is what `jobs.stream` polls and
`jobs.download` asks for outputs; its base URL comes from the workspace's `discoveryUrl`."""

from __future__ import annotations

import copy
import re
from typing import Any

from tests.azureml import fake_shapes as shapes
from tests.azureml.fake_http import RecordedRequest, Reply
from tests.azureml.fake_shapes import error
from tests.azureml.fake_workspace import Route, WorkspaceState, arm_routes, route

_MUTABLE_JOB_FIELDS = frozenset({"tags", "description", "displayName", "properties", "isArchived"})


class JobsPart(WorkspaceState):
    """Command jobs and their run history."""

    # ---- what tests drive

    def set_job_status(self, name: str, status: str) -> None:
        with self._lock:
            self._status_plans.pop(name, None)
            self.jobs[name]["properties"]["status"] = status

    def progress_job(self, name: str, *statuses: str) -> None:
        """Each next read of the job's status (ARM GET or run-history details) takes the next of
        `statuses`; the last one stays."""
        with self._lock:
            self._status_plans[name] = list(statuses)

    def fail_job(self, name: str, code: str, message: str, *before: str) -> None:
        """The job reads as each of `before` (like `progress_job`), then Failed with run
        history's error `{"code": code, "message": message}` (what `jobs.stream` raises)."""
        with self._lock:
            self.job_errors[name] = {"code": code, "message": message}
        self.progress_job(name, *before, "Failed")

    def write_log(self, job: str, log_name: str, text: str) -> None:
        """Append to a job log that run history lists (`user_logs/std_log.txt` is streamed)."""
        with self._lock:
            logs = self.logs.setdefault(job, {})
            logs[log_name] = logs.get(log_name, "") + text

    def write_job_output(self, job: str, output: str, files: dict[str, bytes]) -> None:
        """Write files where the service puts a uri_folder output: `azureml/<job>/<output>/` on
        the default datastore."""
        container = self._blob().service().get_container_client(self.container)
        if not container.exists():
            container.create_container()
        for relative, content in files.items():
            container.upload_blob(f"azureml/{job}/{output}/{relative}", content, overwrite=True)

    # ---- routes

    def _job_routes(self) -> list[Route]:
        name = "/jobs/(?P<name>[^/]+)"
        history = re.escape("/history/v1.0" + shapes.WORKSPACE_ID)
        api, logs = re.escape(shapes.API_HOST), re.escape(shapes.LOG_HOST)
        return [
            *arm_routes(
                shapes.WORKSPACE_ID,
                [
                    ("PUT", name, self._put_job),
                    ("GET", name, self._get_job),
                    ("POST", f"{name}/cancel", self._cancel_job),
                ],
            ),
            route("GET", api, "/discovery", self._discovery),
            route("GET", api, history + "/runs/(?P<name>[^/]+)/details", self._run_details),
            route("POST", api, history + "/rundata", self._run_data),
            route(
                "GET",
                logs,
                r"/azureml/ExperimentRun/dcid\.(?P<name>[^/]+)/(?P<log>.+)",
                self._log_content,
            ),
        ]

    # ---- ARM: jobs

    def _job_status(self, name: str) -> str:
        properties = self.jobs[name]["properties"]
        plan = self._status_plans.get(name)
        if plan:
            properties["status"] = plan.pop(0) if len(plan) > 1 else plan[0]
        return str(properties["status"])

    def _put_job(self, request: RecordedRequest, name: str) -> Reply:
        properties = copy.deepcopy(request.body["properties"])
        absent = shapes.missing(shapes.job_references(properties), self._exists)
        if absent:
            return error(
                400, "UserError", f"job references what does not exist: {', '.join(absent)}"
            )
        if name in self.jobs:
            return self._update_job(name, properties)
        properties.update(status="Starting", services=shapes.job_services(name))
        for output in (properties.get("outputs") or {}).values():
            output.setdefault("mode", "ReadWriteMount")
        self.jobs[name] = shapes.arm_resource(f"/jobs/{name}", name, "jobs", properties)
        return Reply(201, self.jobs[name])

    def _update_job(self, name: str, properties: dict[str, Any]) -> Reply:
        """A PUT on an existing job may change only its tags, description and the like."""
        stored = self.jobs[name]["properties"]
        fixed = sorted(
            k for k, v in properties.items() if k not in _MUTABLE_JOB_FIELDS and v != stored.get(k)
        )
        if fixed:
            return error(409, "UserError", f"job {name} exists; cannot change {', '.join(fixed)}")
        stored.update({k: v for k, v in properties.items() if k in _MUTABLE_JOB_FIELDS})
        return Reply(200, self.jobs[name])

    def _get_job(self, request: RecordedRequest, name: str) -> Reply:
        if name not in self.jobs:
            return error(404, "UserError", f"job {name} not found")
        self._job_status(name)
        return Reply(200, self.jobs[name])

    def _cancel_job(self, request: RecordedRequest, name: str) -> Reply:
        """Cancel an active job (CancelRequested, then Canceled); a finished one stays as it is."""
        if name not in self.jobs:
            return error(404, "UserError", f"job {name} not found")
        properties = self.jobs[name]["properties"]
        self._status_plans.pop(name, None)
        if properties["status"] in shapes.TERMINAL_JOB_STATUSES:
            return Reply(202, headers=self._start_operation(lambda: None))
        properties["status"] = "CancelRequested"
        cancelled = self._start_operation(lambda: properties.update(status="Canceled"))
        return Reply(202, headers=cancelled)

    # ---- data plane: discovery and run history

    def _discovery(self, request: RecordedRequest) -> Reply:
        return Reply(200, shapes.discovery_document())

    def _run_details(self, request: RecordedRequest, name: str) -> Reply:
        if name not in self.jobs:
            return error(404, "UserError", f"run {name} not found")
        compute = self.jobs[name]["properties"].get("computeId") or ""
        logs = {log: f"{shapes.log_url(name, log)}?sv=fake-sas" for log in self.logs.get(name, {})}
        details = {
            "runId": name,
            "status": self._job_status(name),
            "target": compute.rsplit("/", 1)[-1],
            "logFiles": logs,
            "warnings": [],
        }
        if details["status"] == "Failed" and name in self.job_errors:
            details["error"] = {"error": self.job_errors[name]}
        return Reply(200, details)

    def _run_data(self, request: RecordedRequest) -> Reply:
        """Run metadata without registered outputs: the SDK then looks for a named output under
        `azureml/<job>/<output>/` on the default datastore, where the service writes it."""
        name = request.body["runId"]
        if name not in self.jobs:
            return error(404, "UserError", f"run {name} not found")
        run = {"runId": name, "status": self.jobs[name]["properties"]["status"], "outputs": {}}
        return Reply(200, {"runMetadata": run})

    def _log_content(self, request: RecordedRequest, name: str, log: str) -> Reply:
        text = self.logs.get(name, {}).get(log)
        if text is None:
            return error(404, "BlobNotFound", f"log {log} not found")
        return Reply(200, raw=text.encode(), headers={"Content-Type": "text/plain; charset=utf-8"})
