"""Tests of wrkreport.bench.variant (--variant in the driver's helper, issue 20): the spec, the plan's twins and ports, the variant's nginx.conf, its PIDs and CPU."""

from __future__ import annotations

import argparse
import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import run_helper
from wrkreport.bench.allocation import next_block
from wrkreport.bench.commands.preflight import cmd_render_nginx
from wrkreport.bench.cpu import pids_for, pinning_of
from wrkreport.bench.manifest import new_pass
from wrkreport.bench.parameters import build_plan, plan_lines
from wrkreport.bench.profiles import VERDICT_BLOCKS_EXPECTED
from wrkreport.bench.variant import variant_record
from wrkreport.core import stats
from wrkreport.core.errors import UsageError
from wrkreport.core.setups import SETUP_BY_ID, split_twin, twin_id

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = REPO / "templates" / "nginx.conf.tmpl"
CAPTURED = Path(__file__).parent / "fixtures" / "wrk"
FAKE_WRK = (
    "import sys, time\nend = time.process_time() + 0.1\nwhile time.process_time() < end: pass\nsys.stdout.write(open(sys.argv[1]).read())\n"
)


def plan(*argv: str, env: dict | None = None) -> dict:
    """Return build_plan for these options, seed 7, on 2 CPUs."""
    return build_plan(list(argv), {"BENCH_SEED": "7", **(env or {})}, Path("/repo"), 2, 1000, None)


def fake_nginx(tmp_path: Path) -> Path:
    """Return an executable file standing in for another nginx build."""
    path = tmp_path / "sbin" / "nginx"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\necho 'nginx version: nginx/1.27.3' >&2\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# --- the spec -------------------------------------------------------------------------------


def test_a_variant_adds_a_twin_after_each_nginx_setup_on_its_port_plus_100():
    p = plan("--setups", "go-http,nginx-http,nginx-fcgi-unix", "--variant", "nokeep:no-upstream-keepalive")
    assert p["setups"] == ["go-http", "nginx-http", "nginx-http~nokeep", "nginx-fcgi-unix", "nginx-fcgi-unix~nokeep"]
    assert p["ports"]["nginx-http~nokeep"] == 8181 and p["ports"]["nginx-fcgi-unix~nokeep"] == 8183
    assert p["needed_ports"]["nginx-http~nokeep"] == 8181 and "nginx-fcgi-tcp~nokeep" not in p["ports"]
    assert p["urls"]["nginx-http~nokeep"] == "http://127.0.0.1:8181/"
    assert p["variant"] == {
        "name": "nokeep",
        "options": ["no-upstream-keepalive"],
        "nginx": None,
        "upstream_keepalive": False,
        "pin_server": None,
    }
    assert p["upstream_keepalive"] is True  # the run's own nginx keeps it
    lines = plan_lines(p)
    assert "vnginx_setups nginx-http~nokeep nginx-fcgi-unix~nokeep" in lines and "nginx_setups nginx-http nginx-fcgi-unix" in lines
    assert "needs.nginx-http~nokeep vnginx go" in lines and "variant_name nokeep" in lines
    assert p["measurements"] == 2 * 5 * VERDICT_BLOCKS_EXPECTED * 3  # the verdict rule's expected blocks of 3 rounds of the 5 setups
    assert plan("--variant", "nokeep:no-upstream-keepalive")["measurements"] == 2 * 7 * VERDICT_BLOCKS_EXPECTED * 3


def test_the_variant_comes_from_bench_variant_too_and_another_nginx_and_cpus(tmp_path):
    binary = fake_nginx(tmp_path)
    p = plan("--setups", "go-http,nginx-http", env={"BENCH_VARIANT": f"new:nginx={binary},pin-server=1"})
    assert p["variant"]["nginx"] == str(binary) and p["variant"]["pin_server"] == "1"
    assert p["variant"]["options"] == [f"nginx={binary}", "pin-server=1"]
    assert f"variant_nginx {binary}" in plan_lines(p) and "variant_pin_server 1" in plan_lines(p)
    record = variant_record(p, None)
    assert (record["name"], record["nginx"], record["nginx_version"], record["upstream_keepalive"]) == ("new", str(binary), "1.27.3", True)
    assert record["setups"] == {"nginx-http": "nginx-http~new"} and record["port_offset"] == 100


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("nokeep", "no variant name"),
        ("NoKeep:no-upstream-keepalive", "bad name 'NoKeep'"),
        ("a-b:no-upstream-keepalive", "bad name 'a-b'"),
        ("abcdefghijklmnopq:no-upstream-keepalive", "bad name"),
        ("x:", "an empty option"),
        ("x:no-upstream-keepalive,", "an empty option"),
        ("x:keepalive", "unknown option 'keepalive'"),
        ("x:no-upstream-keepalive=1", "unknown option 'no-upstream-keepalive=1'"),
        ("x:nginx", "unknown option 'nginx'"),
        ("x:nginx=/no/such/nginx", "nginx='/no/such/nginx' is not an executable file"),
        ("x:nginx=/etc", "is not an executable file"),
        ("x:pin-server=9", "CPU 9 is not available here"),
        ("x:pin-server=a", "is not a CPU list"),
        ("x:no-upstream-keepalive,no-upstream-keepalive", "no-upstream-keepalive given twice"),
        ("x:pin-server=0,pin-server=1", "pin-server given twice"),
        ("x:a=b;rm -rf /", "unknown option"),
    ],
)
def test_a_bad_spec_is_a_usage_error_naming_it_and_the_syntax(spec, reason):
    with pytest.raises(UsageError) as caught:
        plan("--variant", spec)
    message = str(caught.value)
    assert reason in message and "expected NAME:OPT[,OPT...]" in message and "\n" not in message


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (("--setups", "go-http", "--variant", "x:no-upstream-keepalive"), "no nginx setup"),
        (("--no-upstream-keepalive", "--variant", "x:no-upstream-keepalive"), "nothing would differ"),
        (("--pin-server", "1", "--variant", "x:pin-server=1"), "nothing would differ"),
        (("--port", "nginx-http=65500", "--variant", "x:no-upstream-keepalive"), "above 65535"),
        (("--port", "nginx-fcgi-tcp=8181", "--variant", "x:no-upstream-keepalive"), "both given port 8181"),
        (("--setups", "go-http,nginx-http~x"), "unknown setup 'nginx-http~x'"),  # a twin comes with --variant only
    ],
)
def test_a_variant_that_cannot_run_or_would_change_nothing_is_refused(argv, reason):
    with pytest.raises(UsageError, match=reason):
        plan(*argv)


# --- twin ids ----------------------------------------------------------------------------------


def test_only_well_formed_twins_of_nginx_setups_are_setups():
    assert "nginx-http~nokeep" in SETUP_BY_ID and SETUP_BY_ID.get("nginx-static~v2").server == "vnginx"
    twin = SETUP_BY_ID["nginx-https-new~b"]
    assert (twin.served_by, twin.baseline, twin.tls, twin.new_connection, twin.variant) == (
        "nginx-https~b",
        "go-https-new",
        True,
        True,
        "b",
    )
    for hostile in ("go-http~x", "nginx-http~", "nginx-http~../x", "nginx-http~A", "nginx-http~x~y", "nginx-http~x y", "nope~x", "~x"):
        assert hostile not in SETUP_BY_ID and SETUP_BY_ID.get(hostile) is None
        with pytest.raises(KeyError):
            SETUP_BY_ID[hostile]
    assert split_twin("nginx-http~nokeep") == ("nginx-http", "nokeep") and split_twin("go-http") == ("go-http", None)
    assert twin_id("nginx-http", "nokeep") == "nginx-http~nokeep"


# --- the variant's nginx.conf ---------------------------------------------------------------


def render(tmp_path: Path, *argv: str, variant: bool) -> str:
    """Return nginx.conf or, with variant, nginx-variant.conf as render-nginx writes them for a run with these options."""
    (tmp_path / "fastcgi_params").write_text("fastcgi_param  QUERY_STRING $query_string;\n")
    p = plan(*argv)
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    manifest = {
        "nginx_V": f"nginx version: nginx/1.22.1\nconfigure arguments: --conf-path={tmp_path}/nginx.conf",
        "parameters": p,
        "variant": variant_record(p, None),
    }
    (run / "manifest.json").write_text(json.dumps(manifest))
    out = tmp_path / ("nginx-variant.conf" if variant else "nginx.conf")
    prefix = "/tmp/w/nginx-variant" if variant else "/tmp/w/nginx"
    args = argparse.Namespace(
        run=str(run),
        template=str(TEMPLATE),
        prefix=prefix,
        socket="/tmp/w/go.sock",
        user=None,
        group=None,
        rlimit=1024,
        http_socket="/tmp/w/gohttp.sock",
        listen_address="127.0.0.1",
        fastcgi_params=None,
        variant=variant,
        out=str(out),
    )
    assert cmd_render_nginx(args) == 0
    return out.read_text()


def directives(conf: str) -> str:
    return "\n".join(line.split("#", 1)[0] for line in conf.splitlines())


def test_the_variant_nginx_conf_has_the_twins_ports_its_own_prefix_and_no_upstream_keepalive(tmp_path):
    argv = ("--setups", "go-http,nginx-http,nginx-fcgi-tcp", "--variant", "nokeep:no-upstream-keepalive")
    original, twin = directives(render(tmp_path, *argv, variant=False)), directives(render(tmp_path, *argv, variant=True))
    assert "listen 127.0.0.1:8081;" in original and "keepalive 300;" in original and "8181" not in original
    assert "listen 127.0.0.1:8181;" in twin and "listen 127.0.0.1:8182;" in twin and "listen 127.0.0.1:8081;" not in twin
    assert "keepalive 300;" not in twin and "fastcgi_keep_conn off;" in twin and "proxy_http_version" not in twin
    assert "server 127.0.0.1:8080;" in twin and "server 127.0.0.1:9001;" in twin  # the same Go server behind both
    assert "pid /tmp/w/nginx-variant/nginx.pid;" in twin and "/tmp/w/nginx/" not in twin


def test_a_variant_of_another_binary_renders_the_run_s_settings(tmp_path):
    binary = fake_nginx(tmp_path)
    twin = directives(render(tmp_path, "--setups", "go-http,nginx-http", "--variant", f"new:nginx={binary}", variant=True))
    assert "listen 127.0.0.1:8181;" in twin and "keepalive 300;" in twin and 'proxy_set_header Connection "";' in twin


# --- PIDs and CPU ------------------------------------------------------------------------------


def test_a_twin_counts_the_variant_nginx_and_its_original_the_runs():
    pids = {"go": 1, "nginx": 2, "nginx_workers": [3], "variant_nginx": 4, "variant_nginx_workers": [5, 6]}
    assert pids_for(pids, "nginx-http") is pids
    assert pids_for(pids, "nginx-http~nokeep") == {**pids, "nginx": 4, "nginx_workers": [5, 6]}
    manifest = {"parameters": plan("--variant", "x:no-upstream-keepalive"), "passes": [], "variant": {"name": "x"}}
    assert new_pass(manifest, 1)["pids"]["variant_nginx_workers"] == []
    assert "variant_nginx" not in new_pass({"parameters": plan(), "passes": []}, 1)["pids"]


def test_with_app_b_a_twin_counts_the_second_builds_session_as_its_app():
    pids = {"nginx": 2, "nginx_workers": [3], "variant_nginx": 4, "variant_nginx_workers": [5], "app": 10, "app_b": 20}
    assert pids_for(pids, "app") is pids and pids_for(pids, "nginx-app")["app"] == 10
    assert pids_for(pids, "app~b")["app"] == 20
    assert pids_for(pids, "nginx-app~b") == {**pids, "nginx": 4, "nginx_workers": [5], "app": 20}
    with_variant = {
        k: v for k, v in pids.items() if k != "app_b"
    }  # --app --variant: the twin is the variant's nginx in front of the same app
    assert pids_for(with_variant, "nginx-app~v")["app"] == 10


def test_a_twin_s_cpu_record_names_its_nginx_s_own_cpus():
    params = {"pin_client": "0", "pin_server": None}
    assert pinning_of(params) == {"client": "0", "server": None}
    assert pinning_of(params, {"pin_server": "1"}) == {"client": "0", "server": None, "variant_nginx": "1"}
    assert pinning_of({"pin_client": None, "pin_server": None}, {"pin_server": "1"}) == {
        "client": None,
        "server": None,
        "variant_nginx": "1",
    }
    assert pinning_of({"pin_client": None, "pin_server": "1"}, {"pin_server": "1"}) == {"client": None, "server": "1"}


def test_the_stopping_rule_measures_a_twin_and_its_original_in_the_same_blocks():
    wide, narrow = stats.Interval(1.0, 0.8, 1.2, 9, "block", 7), stats.Interval(1.0, 0.99, 1.01, 9, "block", 7)
    found = {
        (1, 100, "nginx-http~x", "rps"): wide,
        (1, 100, "nginx-http", "rps"): narrow,
        (1, 100, "nginx-fcgi-tcp", "rps"): narrow,
        (1, 100, "nginx-fcgi-tcp~x", "rps"): narrow,
    }
    assert next_block(found, {1: 7}, [1], "go-http", 0.05, 7)[1] == ("go-http", "nginx-http", "nginx-http~x")


def test_pass_ready_records_the_variant_nginx_and_measure_counts_it_for_the_twin(tmp_path):
    plan_file = tmp_path / "plan.json"
    done = run_helper(
        "plan",
        "--root",
        str(tmp_path),
        "--save",
        str(plan_file),
        "--",
        "--out",
        str(tmp_path / "raw"),
        "--quick",
        "--setups",
        "go-http,nginx-http",
        "--variant",
        "nokeep:no-upstream-keepalive",
    )
    assert done.returncode == 0, done.stderr
    run = Path(run_helper("init", "--plan", str(plan_file), "--command-line", "x").stdout.strip())
    assert json.loads((run / "manifest.json").read_text())["variant"]["options"] == ["no-upstream-keepalive"]
    assert run_helper("pass-start", "--run", str(run), "--gomaxprocs", "1").returncode == 0
    busy = "import time\nwhile True: time.sleep(0.001)"
    nginx, variant = (subprocess.Popen([sys.executable, "-c", busy]) for _ in range(2))
    name = "nginx-http~nokeep.gomaxprocs-1.block-1.run-1.wrk.txt"
    try:
        ready = run_helper(
            "pass-ready", "--run", str(run), "--gomaxprocs", "1", "--nginx-pid", str(nginx.pid), "--variant-nginx-pid", str(variant.pid)
        )
        assert ready.returncode == 0, ready.stderr
        assert "variant_nginx_workers" in ready.stdout.splitlines()
        measured = run_helper(
            "measure",
            "--run",
            str(run),
            "--gomaxprocs",
            "1",
            "--setup",
            "nginx-http~nokeep",
            "--repeat",
            "1",
            "--block",
            "1",
            "--round",
            "1",
            "--file",
            name,
            "--cpu-file",
            name.replace(".wrk.txt", ".cpu.json"),
            "--stderr",
            str(tmp_path / "e"),
            "--",
            sys.executable,
            "-c",
            FAKE_WRK,
            str(CAPTURED / "wrk-4.1.0__latency.txt"),
        )
        assert measured.returncode == 0, measured.stderr
        bad = run_helper(
            "measure",
            "--run",
            str(run),
            "--gomaxprocs",
            "1",
            "--setup",
            "nginx-http~../x",
            "--repeat",
            "1",
            "--file",
            "f",
            "--cpu-file",
            "c",
            "--stderr",
            str(tmp_path / "e"),
            "--",
            "true",
        )
        assert bad.returncode == 2 and "is not a setup" in bad.stderr
    finally:
        for process in (nginx, variant):
            process.kill()
            process.wait()
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["passes"][0]["pids"]["variant_nginx"] == variant.pid
    cpu = json.loads((run / name.replace(".wrk.txt", ".cpu.json")).read_text())
    assert cpu["setup"] == "nginx-http~nokeep" and cpu["processes"]["nginx"]["pids"] == [variant.pid]
    assert manifest["measurements"][0]["url"] == "http://127.0.0.1:8181/"


def test_with_a_server_host_nginx_names_a_binary_there_and_pin_server_is_refused():
    p = plan("--server-host", "root@10.231.0.2", "--setups", "go-http,nginx-http", "--variant", "new:nginx=/opt/nginx/sbin/../sbin/nginx")
    assert p["variant"]["nginx"] == "/opt/nginx/sbin/nginx"  # not here: checked on the target (variant.sh, `nginx -V` there)
    assert "nginx-http~new" in p["setups"] and "variant_nginx /opt/nginx/sbin/nginx" in plan_lines(p)
    record = variant_record(p, "/usr/sbin/nginx")
    assert (record["nginx"], record["nginx_version"], record["nginx_V"]) == (
        "/opt/nginx/sbin/nginx",
        None,
        None,
    )  # target-record fills them
    for spec, reason in (
        ("new:nginx=opt/nginx", "with --server-host, nginx= needs the absolute path of an nginx binary on that host"),
        ("pinned:pin-server=0", "pin-server names this machine's CPUs; it cannot pin the variant's nginx on --server-host"),
    ):
        with pytest.raises(UsageError) as caught:
            plan("--server-host", "root@10.231.0.2", "--variant", spec)
        assert reason in str(caught.value)
