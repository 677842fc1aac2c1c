"""Traffic rules of an endpoint, kept to Azure ML's, and the pure routing decisions.

- `traffic` maps deployment names to integer percentages 0..100 that sum to 100, or are all 0
  (nothing is routed; requests must name a deployment in the `azureml-model-deployment` header).
  Deployments left out of the map get 0.
- `mirror_traffic` copies a percentage of live requests to at most one deployment, whose response
  is discarded. The percentage is 0..50 and the mirror target must have no live traffic.
- Every named deployment must exist.
"""

from __future__ import annotations

from collections.abc import Collection

from pydantic import BaseModel, ConfigDict, Field

MAX_MIRROR_PERCENT = 50


class TrafficSettings(BaseModel):
    """Live traffic weights and mirror percentages, by deployment name."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    traffic: dict[str, int] = Field(
        default_factory=dict,
        description="deployment -> percent of live requests; sum 100, or all 0",
    )
    mirror_traffic: dict[str, int] = Field(
        default_factory=dict,
        description="deployment -> percent of live requests copied to it (response discarded)",
    )

    def weight(self, name: str) -> int:
        return self.traffic.get(name, 0)

    def mirror(self, name: str) -> int:
        return self.mirror_traffic.get(name, 0)


def check_traffic(settings: TrafficSettings, deployments: Collection[str]) -> list[str]:
    """Every broken rule, as a message that says what to fix; empty when the settings are valid."""
    problems = []
    unknown = sorted((set(settings.traffic) | set(settings.mirror_traffic)) - set(deployments))
    if unknown:
        problems.append(
            f"no deployment named {', '.join(unknown)} (existing: {', '.join(sorted(deployments)) or 'none'}):"
            " create it with PUT /deployments/{name} first"
        )
    bad = {n: w for n, w in settings.traffic.items() if not 0 <= w <= 100}
    if bad:
        problems.append(f"traffic weights must be 0..100, got {bad}")
    total = sum(settings.traffic.values())
    if total not in (0, 100):
        problems.append(f"traffic weights must sum to 100 (or all be 0), got {total}")
    mirrored = {n: p for n, p in settings.mirror_traffic.items() if p != 0}
    if len(mirrored) > 1:
        problems.append(f"mirror_traffic may name one deployment, got {sorted(mirrored)}")
    bad = {n: p for n, p in mirrored.items() if not 0 <= p <= MAX_MIRROR_PERCENT}
    if bad:
        problems.append(f"mirror_traffic percentages must be 0..{MAX_MIRROR_PERCENT}, got {bad}")
    live = sorted(n for n in mirrored if settings.weight(n) > 0)
    if live:
        problems.append(
            f"cannot mirror to {', '.join(live)}: it has live traffic; set its traffic to 0 first"
        )
    if mirrored and total == 0:
        problems.append("mirror_traffic needs live traffic to copy: set traffic first")
    return problems


def route(settings: TrafficSettings, draw: float) -> str | None:
    """The deployment that serves a request, for a uniform `draw` in [0, 100); None when no traffic.

    Deployments are taken in name order, so the same draw always picks the same deployment.
    """
    cumulative = 0
    for name in sorted(settings.traffic):
        cumulative += settings.traffic[name]
        if draw < cumulative:
            return name
    return None


def mirror_target(settings: TrafficSettings, draw: float) -> str | None:
    """The deployment a live request is copied to, for a uniform `draw` in [0, 100)."""
    for name, percent in sorted(settings.mirror_traffic.items()):
        if draw < percent:
            return name
    return None


def without(settings: TrafficSettings, name: str) -> TrafficSettings:
    """The settings with `name` left out (used when a deployment without traffic is deleted)."""
    return TrafficSettings(
        traffic={n: w for n, w in settings.traffic.items() if n != name},
        mirror_traffic={n: p for n, p in settings.mirror_traffic.items() if n != name},
    )
