"""Tests of wrkreport.bench.h2_options and the h2 setups in the plan: --setups h2, h2load, --streams."""

from __future__ import annotations

import subprocess

import pytest

from helpers import REPO, plan
from wrkreport.bench.parameters import plan_lines
from wrkreport.bench.rate_options import rate_setups
from wrkreport.core.errors import UsageError
from wrkreport.core.setups import H2_SETUP_IDS, SETUP_BY_ID, TLS_SETUP_IDS, baseline_of


def test_the_h2_setups_and_what_they_divide_by():
    assert H2_SETUP_IDS == ("go-h2", "nginx-h2", "nginx-h2-unix", "go-h2-mux", "nginx-h2-mux", "nginx-h2-unix-mux")
    assert [SETUP_BY_ID[s].default_port for s in H2_SETUP_IDS] == [8446, 8447, 8448] * 2
    assert baseline_of("nginx-h2") == baseline_of("nginx-h2-unix") == "go-h2" and baseline_of("go-h2") == "go-http"
    # the -mux ones: the same servers, more streams; Go's over go-h2, nginx's over Go's in the same mode
    assert [SETUP_BY_ID[s].served_by for s in H2_SETUP_IDS[3:]] == ["go-h2", "nginx-h2", "nginx-h2-unix"]
    assert baseline_of("go-h2-mux") == "go-h2" and baseline_of("nginx-h2-mux") == baseline_of("nginx-h2-unix-mux") == "go-h2-mux"
    assert all(SETUP_BY_ID[s].tls and SETUP_BY_ID[s].kind == "h2" for s in H2_SETUP_IDS[:3])  # the TLS setups' key, version, resumption
    assert all(SETUP_BY_ID[s].kind == "multiplexed h2" for s in H2_SETUP_IDS[3:])
    # the HTTP/1.1 TLS setups only: --setups tls and the page's TLS section are unchanged
    assert TLS_SETUP_IDS == ("go-https", "nginx-https", "nginx-https-unix", "go-https-new", "nginx-https-new", "nginx-https-unix-new")
    assert "+http_v2" in SETUP_BY_ID["nginx-h2"].nginx_modules and "+http_ssl" in SETUP_BY_ID["nginx-h2-unix"].nginx_modules


def test_setups_h2_selects_go_http_and_the_h2_setups_loaded_with_h2load():
    p = plan("--setups", "h2")
    assert p["setups"] == ["go-http", *H2_SETUP_IDS]
    assert p["load_generator"] == "h2load" and p["streams"] == 1 and p["streams_mux"] == 10
    assert p["urls"]["go-h2"] == "https://127.0.0.1:8446/" and p["urls"]["nginx-h2-unix"] == "https://127.0.0.1:8448/"
    assert p["needed_ports"] == {"go-http": 8080, "go-fcgi-tcp": 9001, "go-h2": 8446, "nginx-h2": 8447, "nginx-h2-unix": 8448}
    lines = plan_lines(p)
    # go-http with --h1 and one request in flight: HTTP/1.1 keep-alive, measured by the same tool
    assert "h2load.go-http --h1 -m 1" in lines and "h2load.nginx-h2 -m 1" in lines and "h2load.nginx-h2-unix-mux -m 10" in lines
    assert "raw_suffix .h2load.txt" in lines and "streams 1" in lines and f"h2_setups {' '.join(H2_SETUP_IDS)}" in lines
    assert rate_setups(p["setups"]) == ["go-http", "go-h2", "nginx-h2", "nginx-h2-unix"]  # vegeta has no stream count
    assert "tls 1" in lines and "tls_key ecdsa-p256" in lines  # the TLS setups' key machinery, shared


def test_setups_tls_is_unchanged_by_the_h2_setups():
    p = plan("--setups", "tls")
    assert p["load_generator"] == "wrk" and not any(SETUP_BY_ID[s].h2 for s in p["setups"])
    assert p["setups"] == ["go-http", *TLS_SETUP_IDS]


def test_streams_is_h2loads_m_for_the_h2_setups_only():
    p = plan("--setups", "go-http,go-h2", "--streams", "10", "--threads", "1")
    assert p["streams"] == 10 and "h2load.go-h2 -m 10" in plan_lines(p) and "h2load.go-http --h1 -m 1" in plan_lines(p)
    assert plan("--setups", "h2", env={"BENCH_STREAMS": "4"})["streams"] == 4
    p = plan("--setups", "h2", "--streams", "2,32")
    assert (p["streams"], p["streams_mux"]) == (2, 32) and "h2load.go-h2-mux -m 32" in plan_lines(p)
    assert plan("--setups", "go-http", "--load-generator", "h2load")["load_generator"] == "h2load"  # HTTP/1.1 only, with h2load --h1
    warned = plan("--streams", "10")
    assert warned["load_generator"] == "wrk" and any("--streams 10 is h2load's" in w for w in warned["warnings"])


@pytest.mark.parametrize(
    "argv, env, message",
    [
        (
            ["--setups", "h2", "--load-generator", "wrk"],
            {},
            "--load-generator 'wrk' speaks no HTTP/2: the h2 setups are loaded with h2load (leave it out, or --load-generator h2load)",
        ),
        (
            ["--setups", "nginx-h2"],
            {"BENCH_LOAD_GENERATOR": "ab"},
            "BENCH_LOAD_GENERATOR 'ab' speaks no HTTP/2: the h2 setups are loaded with h2load (leave it out, or --load-generator h2load)",
        ),
        (
            ["--setups", "h2", "--streams", "10"],
            {},
            "--streams '10': the -mux setups need more streams than the others (10 is not more than 10); give two counts, e.g. --streams 1,10",
        ),
        (
            ["--setups", "h2", "--streams", "1,2,3"],
            {},
            "--streams '1,2,3': one or two counts, e.g. 1 or 1,10 (the h2 setups', then their -mux twins')",
        ),
        (["--setups", "h2", "--streams", "0"], {}, "--streams must be at least 1, not 0"),
        (["--setups", "h2", "--streams", "129"], {}, "--streams must be at most 128, not '129'"),
        (
            ["--setups", "h2", "--client-hosts", "local,10.0.0.9"],
            {},
            "--load-generator h2load writes no latency histogram, so several --client-hosts cannot be merged exactly; use wrk",
        ),
        (
            ["--setups", "h2", "--app", "app {port}"],
            {},
            "--app is measured with wrk: --load-generator h2load (the h2 setups' h2load too) does not take it yet",
        ),
    ],
)
def test_bad_h2_options_are_usage_errors(argv, env, message):
    with pytest.raises(UsageError) as excinfo:
        plan(*argv, env=env)
    assert str(excinfo.value) == message


def test_wrk_with_an_h2_setup_is_one_line_and_exit_2():
    out = subprocess.run(
        [str(REPO / "run_bench.sh"), "--setups", "h2", "--load-generator", "wrk"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "speaks no HTTP/2" in out.stderr
