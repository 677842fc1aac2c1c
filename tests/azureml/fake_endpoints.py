"""Managed online endpoints and deployments in the fake workspace, and their scoring URI.

Checked as the service checks them: traffic must name existing deployments and sum to 0 or
100, mirror traffic goes to one deployment at up to 50%, a deployment's model, environment and
code must exist, and a deployment taking live traffic cannot be deleted."""

from __future__ import annotations

import copy
import re

from tests.azureml import fake_shapes as shapes
from tests.azureml.fake_http import RecordedRequest, Reply
from tests.azureml.fake_shapes import error, found
from tests.azureml.fake_workspace import Route, WorkspaceState, arm_routes, route, succeed

_SCORING_HOST = r"(?P<name>[^.]+)\." + re.escape(f"{shapes.LOCATION}.inference.ml.azure.com")


class OnlineEndpointsPart(WorkspaceState):
    """Online endpoints, their keys, deployments and deployment logs, and scoring."""

    def _endpoint_routes(self) -> list[Route]:
        endpoint = "/onlineEndpoints/(?P<name>[^/]+)"
        deployment = f"{endpoint}/deployments/(?P<deployment>[^/]+)"
        return [
            *arm_routes(
                shapes.WORKSPACE_ID,
                [
                    ("GET", endpoint, self._get_endpoint),
                    ("PUT", endpoint, self._put_endpoint),
                    ("POST", f"{endpoint}/listKeys", self._list_keys),
                    ("GET", f"{endpoint}/deployments", self._list_deployments),
                    ("GET", deployment, self._get_deployment),
                    ("PUT", deployment, self._put_deployment),
                    ("DELETE", deployment, self._delete_deployment),
                    ("POST", f"{deployment}/getLogs", self._get_deployment_logs),
                ],
            ),
            route("POST", _SCORING_HOST, "/score", self._score),
        ]

    # ---- endpoints

    def _get_endpoint(self, request: RecordedRequest, name: str) -> Reply:
        return found(self.endpoints.get(name), f"online endpoint {name}")

    def _put_endpoint(self, request: RecordedRequest, name: str) -> Reply:
        body = copy.deepcopy(request.body)
        properties = body["properties"]
        deployments = {d for (e, d) in self.deployments if e == name}
        problems = shapes.traffic_errors(properties, deployments)
        if problems:
            return error(400, "BadArgument", "; ".join(problems))
        existing = self.endpoints.get(name)
        host = f"{name}.{shapes.LOCATION}.inference.ml.azure.com"
        properties.setdefault("traffic", {})
        properties.update(
            scoringUri=f"https://{host}/score",
            swaggerUri=f"https://{host}/swagger.json",
            provisioningState="Updating" if existing else "Creating",
        )
        path = f"/onlineEndpoints/{name}"
        resource = shapes.arm_resource(path, name, "onlineEndpoints", properties)
        resource.update(
            location=body.get("location", shapes.LOCATION),
            tags=body.get("tags", {}),
            kind="Managed",
            identity=shapes.system_identity(4),
        )
        if existing is not None:
            resource["systemData"]["createdAt"] = existing["systemData"]["createdAt"]
        self.endpoints[name] = resource
        keys = {"primaryKey": f"{name}-key-1", "secondaryKey": f"{name}-key-2"}
        self.endpoint_keys.setdefault(name, keys)
        headers = self._start_operation(lambda: succeed(resource))
        return Reply(200 if existing else 201, resource, headers)

    def _list_keys(self, request: RecordedRequest, name: str) -> Reply:
        if name not in self.endpoints:
            return error(404, "ResourceNotFound", f"online endpoint {name} not found")
        return Reply(200, self.endpoint_keys[name])

    # ---- deployments

    def _list_deployments(self, request: RecordedRequest, name: str) -> Reply:
        return Reply(200, {"value": [r for (e, _), r in self.deployments.items() if e == name]})

    def _get_deployment(self, request: RecordedRequest, name: str, deployment: str) -> Reply:
        return found(self.deployments.get((name, deployment)), f"deployment {name}/{deployment}")

    def _put_deployment(self, request: RecordedRequest, name: str, deployment: str) -> Reply:
        if name not in self.endpoints:
            return error(404, "ResourceNotFound", f"online endpoint {name} not found")
        body = copy.deepcopy(request.body)
        properties = body["properties"]
        absent = shapes.missing(shapes.deployment_references(properties), self._exists)
        if absent:
            missing = ", ".join(absent)
            return error(400, "UserError", f"deployment references what does not exist: {missing}")
        existing = self.deployments.get((name, deployment))
        properties.setdefault("scaleSettings", {"scaleType": "Default"})
        properties["provisioningState"] = "Updating" if existing else "Creating"
        path = f"/onlineEndpoints/{name}/deployments/{deployment}"
        resource = shapes.arm_resource(path, deployment, "onlineEndpoints/deployments", properties)
        resource.update(
            location=body.get("location", shapes.LOCATION),
            tags=body.get("tags", {}),
            kind="Managed",
            sku=body.get("sku", {"name": "Default", "capacity": 1}),
        )
        self.deployments[(name, deployment)] = resource
        headers = self._start_operation(lambda: succeed(resource))
        return Reply(200 if existing else 201, resource, headers)

    def _delete_deployment(self, request: RecordedRequest, name: str, deployment: str) -> Reply:
        """Delete a deployment that takes no live traffic (the service refuses otherwise)."""
        resource = self.deployments.get((name, deployment))
        if resource is None:
            return Reply(204)
        share = (self.endpoints[name]["properties"].get("traffic") or {}).get(deployment, 0)
        if share:
            message = f"deployment {deployment} takes {share}% of traffic; set it to 0 first"
            return error(400, "BadArgument", message)
        resource["properties"]["provisioningState"] = "Deleting"
        headers = self._start_operation(lambda: self._forget_deployment(name, deployment))
        return Reply(202, headers=headers)

    def _forget_deployment(self, name: str, deployment: str) -> None:
        self.deployments.pop((name, deployment), None)

    def _get_deployment_logs(self, request: RecordedRequest, name: str, deployment: str) -> Reply:
        if (name, deployment) not in self.deployments:
            return error(404, "ResourceNotFound", f"deployment {name}/{deployment} not found")
        default = f"{deployment}: scoring server started\n"
        lines = self.deployment_logs.get((name, deployment), default).splitlines()
        tail = (request.body or {}).get("tail")
        return Reply(200, {"content": "\n".join(lines[-tail:] if tail else lines)})

    # ---- scoring

    def _score(self, request: RecordedRequest, name: str) -> Reply:
        """Key auth, then the deployment named in `azureml-model-deployment`, else the one with
        the most traffic (the service splits by weight; the fake stays deterministic)."""
        if name not in self.endpoints:
            return self._unexpected(request)
        keys = self.endpoint_keys[name].values()
        if request.headers.get("authorization") not in {f"Bearer {key}" for key in keys}:
            return error(401, "Unauthorized", "missing or wrong endpoint key")
        traffic = self.endpoints[name]["properties"].get("traffic") or {}
        heaviest = max(traffic, key=lambda d: traffic[d], default="")
        deployment = request.headers.get("azureml-model-deployment") or heaviest
        if (name, deployment) not in self.deployments:
            return error(404, "DeploymentNotFound", f"no deployment {deployment!r} on {name}")
        return Reply(200, self.scorer(deployment, request.body))
