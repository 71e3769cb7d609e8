"""Tests of wrkreport.parsers.schema: the latency objective a run recorded (parameters.slo) is kept when it is one --slo can give, left out with a reason otherwise."""

from __future__ import annotations

import pytest

from wrkreport.core.capacity import PERCENTILES, slo_of
from wrkreport.parsers.schema import MANIFEST_FIELDS, SLO_PERCENTILES, checked


def test_the_schema_knows_the_percentiles_the_search_takes():
    assert sorted(SLO_PERCENTILES) == sorted(PERCENTILES.values())


@pytest.mark.parametrize(
    "slo",
    [
        {"percentile": 99, "ms": 5},
        {"percentile": 99.9, "ms": 0.5},
        {"percentile": 50, "ms": 0.25},
        {"percentile": 90, "ms": 2.0},
        None,  # --slo off
    ],
)
def test_an_objective_the_driver_writes_is_kept_as_it_is(slo):
    data, problems = checked({"parameters": {"slo": slo}}, MANIFEST_FIELDS)
    assert problems == [] and data["parameters"]["slo"] == slo
    assert (slo_of(slo) is None) == (slo is None)


@pytest.mark.parametrize(
    "slo, kept, problem",
    [
        ({"percentile": 101, "ms": 5}, {"ms": 5}, "parameters.slo.percentile: expected one of 50, 90, 99, 99.9, found 101"),
        ({"percentile": "99", "ms": 5}, {"ms": 5}, "parameters.slo.percentile: expected one of 50, 90, 99, 99.9, found '99'"),
        ({"percentile": True, "ms": 5}, {"ms": 5}, "parameters.slo.percentile: expected one of 50, 90, 99, 99.9, found True"),
        ({"percentile": 99, "ms": -1}, {"percentile": 99}, "parameters.slo.ms: expected a number above 0, found -1"),
        ({"percentile": 99, "ms": 0}, {"percentile": 99}, "parameters.slo.ms: expected a number above 0, found 0"),
        ({"percentile": 99, "ms": "5ms"}, {"percentile": 99}, "parameters.slo.ms: expected a number above 0, found '5ms'"),
        (
            {"percentile": 99, "ms": 1e12},
            {"percentile": 99},
            "parameters.slo.ms: expected a number above 0 up to 1e+10, found 1000000000000.0",
        ),
        ({"percentile": 99}, {"percentile": 99}, "parameters.slo.ms: missing"),
    ],
)
def test_a_wrong_objective_loses_the_wrong_part_with_its_reason_and_gives_no_capacity(slo, kept, problem):
    data, problems = checked({"parameters": {"slo": slo}}, MANIFEST_FIELDS)
    assert problems == [problem] and data["parameters"]["slo"] == kept
    assert slo_of(data["parameters"]["slo"]) is None  # what is left is no objective: no capacity is computed


def test_an_objective_that_is_not_an_object_is_left_out():
    data, problems = checked({"parameters": {"slo": "p99=5ms"}}, MANIFEST_FIELDS)
    assert problems == ["parameters.slo: expected an object, found 'p99=5ms'"] and "slo" not in data["parameters"]
