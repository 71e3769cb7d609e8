"""Tests of wrkreport.bench.rate_options: --rates and BENCH_RATES, the fixed-rate phase's plan and the time it takes out of --max-time."""

from __future__ import annotations

import doctest
import json
import math
from pathlib import Path

import pytest
from scipy import stats

from helpers import plan
from wrkreport.bench import rate_options as rateplan
from wrkreport.bench.commands.rate_phase import rates_for, slowest_rate
from wrkreport.bench.profiles import MEASUREMENT_OVERHEAD_S, PASS_OVERHEAD_S, RATE_OVERHEAD_S, SEARCH_STEPS_EXPECTED
from wrkreport.bench.rate_options import parse_rates, rate_parameters, rate_phase_seconds, round_rate
from wrkreport.core.errors import UsageError

TLS_RUN = Path(__file__).parent / "fixtures" / "runs" / "tls-both-modes"


def test_the_doctests_hold():
    assert doctest.testmod(rateplan).failed == 0


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2000", ([2000], [])),
        ("5000, 2000,5000", ([2000, 5000], [])),
        ("25%,50%,75%", ([], [0.25, 0.5, 0.75])),
        ("2000,50%", ([2000], [0.5])),
        ("10000000", ([10_000_000], [])),
    ],
)
def test_rates_are_req_per_s_or_shares(text, expected):
    assert parse_rates(text, "--rates") == expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("abc", "--rates value must be a whole number, not 'abc'"),
        ("0", "--rates value must be at least 1, not 0"),
        ("-5", "--rates value must be a whole number, not '-5'"),
        ("2.5", "--rates value must be a whole number, not '2.5'"),
        ("10000001", "--rates value must be at most 10000000, not '10000001'"),
        ("150%", "--rates value must be a percentage above 0 and at most 100"),
        ("0%", "--rates value must be a percentage above 0 and at most 100"),
        ("", "--rates needs at least one rate"),
        (",", "--rates needs at least one rate"),
    ],
)
def test_a_bad_rate_is_a_one_line_usage_error(text, message):
    with pytest.raises(UsageError) as raised:
        parse_rates(text, "--rates")
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


def test_the_default_profile_runs_one_rate_at_a_quarter_of_the_slowest_setup_in_four_blocks_and_no_search():
    p = plan()
    assert (p["rates"], p["rate_shares"], p["rate_blocks"], p["rate_blocks_max"], p["rate_duration_s"], p["rate_phase"]) == (
        [],
        [0.25],
        4,
        4,
        1,
        True,
    )
    assert p["slo"] is None and "capacity_search 0" in rateplan.rate_lines(p)  # the capacity search only on request
    per_setup = p["rate_warmup_s"] + MEASUREMENT_OVERHEAD_S + p["rate_duration_s"] + RATE_OVERHEAD_S
    assert rate_phase_seconds(p) == pytest.approx(len(p["gomaxprocs"]) * 4 * (PASS_OVERHEAD_S + len(p["setups"]) * per_setup))
    assert p["rate_blocks_expected"] == 4 and p["rate_phase_s"] == round(rate_phase_seconds(p, 4))


def test_slo_runs_one_rate_at_a_quarter_of_the_slowest_setup_then_the_search_in_four_to_twelve_blocks_then_the_checks():
    p = plan("--slo", "p99=10ms")
    assert (p["rates"], p["rate_shares"], p["rate_blocks"], p["rate_duration_s"], p["rate_phase"]) == ([], [0.25], 4, 1, True)
    assert p["slo"] == {"percentile": 99, "ms": 10.0}
    per_setup = p["rate_warmup_s"] + MEASUREMENT_OVERHEAD_S + (1 + SEARCH_STEPS_EXPECTED) * (p["rate_duration_s"] + RATE_OVERHEAD_S)
    # after the last block's search, per setup a 10-s check at the capacity judged by its seconds (8 of 10 within) and, after a
    # miss, lower (3 at most): 2 counted on (the first at a typical second's rate nearly always misses 8 of 10)
    assert (p["check_duration_s"], p["check_tries"], p["check_share"]) == (10, 3, 0.9)
    checks = len(p["setups"]) * 2 * (10 + RATE_OVERHEAD_S)
    assert rate_phase_seconds(p) == pytest.approx(len(p["gomaxprocs"]) * (4 * (PASS_OVERHEAD_S + len(p["setups"]) * per_setup) + checks))
    # What the throughput blocks leave it: its expected 6 blocks (the default --max-time covers the targets).
    assert (p["rate_blocks_expected"], p["rate_blocks_max"]) == (6, 12) and p["rate_phase_s"] == round(rate_phase_seconds(p, 6))
    assert set(rate_parameters(p)) == set(rateplan.RATE_PARAMETERS)


def test_a_plan_counts_on_the_blocks_its_most_scattered_setup_needs():
    """Issue 44: the FastCGI front ends' capacities scatter more than nginx's; a plan with them counts on more blocks, so the time it
    announces and its default --max-time hold them (the FastCGI run of 2026-11-29 announced 6 blocks and needed more than 8)."""
    slo = ("--slo", "p99=10ms")
    default, fcgi, h2 = plan(*slo), plan("--setups", "go-http,caddy-fcgi-tcp", *slo), plan("--setups", "h2", *slo)
    assert default["rate_blocks_expected"] == 6 and fcgi["rate_blocks_expected"] == 11 and h2["rate_blocks_expected"] == 12
    assert plan("--setups", "go-http,caddy-fcgi-tcp,haproxy-fcgi-unix", *slo)["rate_blocks_expected"] == 12  # 22 for +/-15%: the ceiling
    assert fcgi["rate_phase_s"] == round(rate_phase_seconds(fcgi, 11)) and fcgi["max_time_s"] == round(1.25 * fcgi["targets_s"])
    assert (
        plan("--setups", "go-http,haproxy-fcgi-unix", "--capacity-precision", "50", *slo)["rate_blocks_expected"] == 6
    )  # never below the profile's
    assert plan("--setups", "go-http,haproxy-fcgi-unix", "--blocks", "3", *slo)["rate_blocks_expected"] == 4  # a fixed design: its least
    assert plan("--setups", "go-http,haproxy-fcgi-unix")["rate_blocks_expected"] == 4  # no objective, no capacity: the least
    for spread in (0.05, 0.115, 0.15, 0.197, 0.3):  # the count is where the t interval's upper end reaches the target
        b = rateplan.blocks_for_spread(spread, 15, 4, 12)
        assert b == 12 or math.expm1(stats.t.ppf(0.975, b - 1) * spread / math.sqrt(b)) <= 0.15
        assert b == 4 or math.expm1(stats.t.ppf(0.975, b - 2) * spread / math.sqrt(b - 1)) > 0.15


def test_the_new_connection_setups_are_not_in_the_phase():
    # --setups tls: go-http and the three keep-alive TLS setups are; the -new ones (handshakes per second) are not.
    p = plan("--setups", "tls", "--slo", "off")
    per_setup = p["rate_warmup_s"] + MEASUREMENT_OVERHEAD_S + p["rate_duration_s"] + RATE_OVERHEAD_S
    assert len(p["setups"]) == 7 and rateplan.rate_setups(p["setups"]) == ["go-http", "go-https", "nginx-https", "nginx-https-unix"]
    assert rate_phase_seconds(p) == pytest.approx(len(p["gomaxprocs"]) * 4 * (PASS_OVERHEAD_S + 4 * per_setup))  # no objective: no checks


@pytest.mark.parametrize(
    "options, env, expected",
    [
        ((), {}, None),  # the capacity search only on request
        (("--slo", "p99=10ms"), {}, {"percentile": 99, "ms": 10.0}),
        (("--slo", "p99=2ms"), {}, {"percentile": 99, "ms": 2.0}),
        (("--slo", "p50=500us"), {}, {"percentile": 50, "ms": 0.5}),
        (("--slo", "p99.9=20ms"), {"BENCH_SLO": "p90=1ms"}, {"percentile": 99.9, "ms": 20.0}),
        ((), {"BENCH_SLO": "p90=1ms"}, {"percentile": 90, "ms": 1.0}),
        (("--slo", "off"), {}, None),
        (("--rates", "off"), {}, None),  # no phase, no search
    ],
)
def test_slo_option_environment_and_off(options, env, expected):
    p = plan(*options, env=env)
    assert p["slo"] == expected
    assert ("capacity_search 1" in rateplan.rate_lines(p)) == (expected is not None)


def test_the_search_takes_time_out_of_the_phase():
    assert plan("--slo", "p99=10ms")["rate_phase_s"] > plan()["rate_phase_s"] == plan("--slo", "off")["rate_phase_s"] > 0


@pytest.mark.parametrize(
    "options, env, message",
    [
        (("--slo", "p101=5ms"), {}, "--slo 'p101=5ms': the percentile must be one of p50, p90, p99, p99.9"),
        (("--slo", "p99=fast"), {}, "--slo 'p99=fast': expected PERCENTILE=DURATION"),
        (("--slo", "p99=-1ms"), {}, "--slo 'p99=-1ms': expected PERCENTILE=DURATION"),
        (("--slo", "p99=0ms"), {}, "--slo 'p99=0ms': the duration must be above 0"),
        ((), {"BENCH_SLO": "p99"}, "BENCH_SLO 'p99': expected PERCENTILE=DURATION"),
    ],
)
def test_a_bad_slo_is_a_one_line_usage_error(options, env, message):
    with pytest.raises(UsageError) as raised:
        plan(*options, env=env)
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


def test_the_share_is_of_the_slowest_keep_alive_setup():
    # A real run of both connection modes: the -new setups' few hundred handshakes per second set no rate.
    manifest = json.loads((TLS_RUN / "manifest.json").read_text())
    manifest["parameters"].update(rates=[], rate_shares=[0.25])
    slowest = slowest_rate(TLS_RUN, manifest, 1, {})
    assert slowest is not None and not slowest[0].endswith("-new") and slowest[1] > 1000
    rates, said = rates_for(TLS_RUN, manifest, 1, {})
    assert rates == [round_rate(0.25 * slowest[1])] and f"({slowest[0]})" in said


def test_option_beats_environment_and_off_turns_the_phase_off():
    assert plan("--rates", "2000,5000", env={"BENCH_RATES": "100"})["rates"] == [2000, 5000]
    assert plan(env={"BENCH_RATES": "100,10%"})["rates"] == [100]
    off = plan("--rates", "off")
    assert (off["rate_phase"], off["rate_blocks"], off["rates"], off["rate_shares"], off["rate_phase_s"]) == (False, 0, [], [], 0)
    assert plan(env={"BENCH_RATES": "off"})["rate_phase"] is False


def test_more_rates_take_more_time():
    assert plan("--rates", "1000,2000,3000")["rate_phase_s"] > plan("--rates", "1000")["rate_phase_s"] > 0


def test_the_environment_names_itself_in_its_error():
    with pytest.raises(UsageError, match="^BENCH_RATES value must be a whole number, not 'x'$"):
        plan(env={"BENCH_RATES": "x"})


def test_a_profile_without_the_phase_runs_it_once_when_asked():
    assert plan("--profile", "article")["rate_phase"] is False
    asked = plan("--profile", "article", "--rates", "2000")
    assert (asked["rate_phase"], asked["rate_blocks"], asked["rates"]) == (True, 1, [2000])


def test_round_rate():
    assert [round_rate(r) for r in (6234.5, 87.2, 0.3, 1.0, 99.6, 12_345_678)] == [6200, 87, 1, 1, 100, 12_000_000]
