"""Tests for report/ratepage.py's method sentence: what each setup's added latency is over."""

from __future__ import annotations

from wrkreport.report.ratepage import other_baselines_clause


def test_a_plain_or_app_run_needs_no_aside():
    assert other_baselines_clause({"go-http", "nginx-http", "nginx-fcgi-unix"}) == ""
    assert other_baselines_clause({"app", "nginx-app", "nginx-app-unix"}) == ""
    assert other_baselines_clause({"go-http", "go-https", "go-h2"}) == ""  # Go's own TLS and h2 are over go-http


def test_nginx_in_front_of_gos_own_tls_or_h2_is_over_that():
    assert (
        other_baselines_clause({"go-http", "go-https", "nginx-https", "nginx-https-unix"})
        == "(nginx's TLS setups: - go-https, as their ratios), "
    )
    assert (
        other_baselines_clause({"go-http", "go-h2", "nginx-h2", "nginx-h2-unix"}) == "(nginx-h2, nginx-h2-unix: - go-h2, as their ratios), "
    )
    both = other_baselines_clause({"go-http", "go-https", "nginx-https", "go-h2", "nginx-h2", "nginx-https~x"})
    assert both == "(nginx's TLS setups: - go-https; nginx-h2: - go-h2, as their ratios), "
