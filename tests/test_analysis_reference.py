"""Tests of wrkreport.analysis.reference: the 2012 Go-vs-Node study's ratios and bytes per response, worked out
here by hand from the figures in shared/reference/go-vs-node-2012.md."""

from __future__ import annotations

import statistics

import pytest

from wrkreport.analysis import reference

# The study's table, copied from the reference text (not from the package data).
AB_GO_1 = [8427.78, 7980.73, 7509.63, 8242.47, 8898.19]
AB_NODE_1 = [7185.91, 7484.97, 7388.25, 7411.80, 7571.10]
WB_GO_ALL = [750418, 750492, 749128, 749720, 753080]
WB_NODE_ALL = [791932, 786516, 797336, 783182, 785206]


def test_study_ratios_are_node_over_go_geometric_means_per_mode_and_tool():
    ratios = {(r.mode, r.load_generator): r for r in reference.study_ratios()}
    assert list(ratios) == [("1", "ab"), ("all", "ab"), ("1", "webbench"), ("all", "webbench")]
    ab = ratios[("1", "ab")]
    assert ab.ratio == pytest.approx(statistics.geometric_mean(AB_NODE_1) / statistics.geometric_mean(AB_GO_1))
    assert (ab.unit, ab.go_bytes_per_response) == ("requests/s", None)  # ab's totals are not in the study
    wb = ratios[("all", "webbench")]
    assert wb.ratio == pytest.approx(statistics.geometric_mean(WB_NODE_ALL) / statistics.geometric_mean(WB_GO_ALL))
    assert wb.ratio > 1 > ab.ratio  # the study's "about the same": Node ahead with webbench on all CPUs only
    assert wb.label == f"{wb.ratio:.3f} (webbench, all CPUs)"


def test_webbench_counters_give_110_and_88_bytes_per_response():
    # 849060 / (463124 / 60) and 634453 / (432582 / 60), as the reference works them out for one run.
    one_cpu = next(r for r in reference.study_ratios() if (r.mode, r.load_generator) == ("1", "webbench"))
    assert round(one_cpu.go_bytes_per_response) == 110 and round(one_cpu.node_bytes_per_response) == 88
    note = reference.study_note()
    assert "about 110 bytes per response and Node about 88" in note and "same-response check" in note


@pytest.mark.parametrize(("mode", "gomaxprocs", "matches"), [("1", 1, True), ("1", 2, False), ("all", 1, False), ("all", 8, True)])
def test_one_cpu_matches_gomaxprocs_1_and_all_cpus_the_rest(mode, gomaxprocs, matches):
    ratio = next(r for r in reference.study_ratios() if r.mode == mode)
    assert ratio.matches(gomaxprocs) is matches
