"""The pure traffic rules and routing decisions."""

from __future__ import annotations

import pytest

from serving.metrics import percentile
from serving.traffic import TrafficSettings, check_traffic, mirror_target, route

NAMES = ("blue", "green")


@pytest.mark.parametrize(
    ("traffic", "mirror", "problem"),
    [
        ({"blue": 90}, {}, "sum to 100"),
        ({"blue": 120, "green": -20}, {}, "0..100"),
        ({"red": 100}, {}, "no deployment named red"),
        ({"blue": 100}, {"green": 60}, "0..50"),
        ({"blue": 50, "green": 50}, {"green": 10}, "cannot mirror to green"),
        ({}, {"green": 10}, "needs live traffic"),
    ],
)
def test_broken_rules_are_reported(traffic: dict, mirror: dict, problem: str) -> None:
    problems = check_traffic(TrafficSettings(traffic=traffic, mirror_traffic=mirror), NAMES)
    assert any(problem in p for p in problems), problems


def test_valid_settings_pass() -> None:
    assert (
        check_traffic(TrafficSettings(traffic={"blue": 100}, mirror_traffic={"green": 50}), NAMES)
        == []
    )
    assert check_traffic(TrafficSettings(traffic={"blue": 0, "green": 0}), NAMES) == []


def test_route_follows_the_weights() -> None:
    settings = TrafficSettings(traffic={"blue": 80, "green": 20})
    picks = [route(settings, draw / 10) for draw in range(1000)]
    assert picks.count("blue") == 800 and picks.count("green") == 200
    assert route(TrafficSettings(), 10.0) is None


def test_mirror_target_takes_its_share() -> None:
    settings = TrafficSettings(traffic={"blue": 100}, mirror_traffic={"green": 10})
    assert [mirror_target(settings, d) for d in (0.0, 9.9, 10.0, 99.9)] == [
        "green",
        "green",
        None,
        None,
    ]


def test_percentile_nearest_rank() -> None:
    assert percentile([], 50) is None
    assert percentile(list(map(float, range(1, 101))), 95) == 95.0
