"""./run_bench.sh --variant (issue 20), for real: a second nginx without upstream keep-alive beside the run's, twins measured in the same rounds, the A/B figure built and compared; bad specs refused before anything starts."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from helpers import USED_PORTS, alive_as, assert_nothing_left, free_port_block, latest_run, needs_tools, port_args, port_is_free, run_script
from wrkreport.parsers import parse_file
from wrkreport.parsers.histogram import hist_file_name

NAMES = ("go-http", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix", "go-fcgi-tcp")
OFFSET = 100
TWIN = "nginx-http~nokeep"


def variant_ports() -> dict[str, int]:
    """Return a free block of the run's ports whose + 100 (the nginx twins') are free and reserved too."""
    return free_port_block(NAMES, 18100, 18800, USED_PORTS, offsets=(OFFSET,))


def directives(conf: str) -> str:
    return "\n".join(line.split("#", 1)[0] for line in conf.splitlines())


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("nokeep", "no variant name"),
        ("No:no-upstream-keepalive", "bad name"),
        ("x:keepalive-off", "unknown option"),
        ("x:nginx=/no/such/nginx", "is not an executable file"),
        ("x:pin-server=9999", "CPU 9999 is not available here"),
    ],
)
def test_a_bad_variant_is_exit_2_with_one_line_and_nothing_started(workdirs, spec, reason):
    out, tmp = workdirs
    done = run_script(["--quick", "--out", str(out), "--variant", spec], tmp, timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert (
        len(lines) == 1
        and lines[0].startswith("run_bench.sh: --variant ")
        and reason in lines[0]
        and "expected NAME:OPT[,OPT...]" in lines[0]
    )
    assert not out.exists() and list(tmp.iterdir()) == []


@pytest.mark.slow
@needs_tools
def test_a_variant_run_measures_twins_in_the_same_rounds_and_builds_the_ab_figure(workdirs, tmp_path):
    out, tmp = workdirs
    ports = variant_ports()
    args = [
        "--setups",
        "go-http,nginx-http",
        "--gomaxprocs",
        "1,2",
        "--blocks",
        "2",
        "--rounds-per-block",
        "1",
        "--duration",
        "1",
        "--warmup",
        "0",
        "--rates",
        "off",
        "--seed",
        "5",
        "--variant",
        "nokeep:no-upstream-keepalive",
        "--out",
        str(out),
        *port_args(ports),
    ]
    done = run_script(args, tmp, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "the variant's nginx (nokeep)" in done.stderr
    run, manifest = latest_run(out)
    twin_port = ports["nginx-http"] + OFFSET

    # The twin's files, named like any setup's: a header capture per GOMAXPROCS, per block and round its wrk, CPU and histogram.
    for n in (1, 2):
        capture = (run / f"{TWIN}.gomaxprocs-{n}.headers.txt").read_bytes()
        assert capture.startswith(b"HTTP/1.1 200 ") and len(capture) == 141
        for block in (1, 2):
            stem = f"{TWIN}.gomaxprocs-{n}.block-{block}.run-{block}"
            result = parse_file(run / f"{stem}.wrk.txt")
            assert result.requests > 0 and result.non_2xx_3xx == 0 and result.url == f"http://127.0.0.1:{twin_port}/"
            assert (run / hist_file_name(f"{stem}.wrk.txt")).is_file()
            pids = next(p for p in manifest["passes"] if (p["gomaxprocs"], p["block"]) == (n, block))["pids"]
            cpu = json.loads((run / f"{stem}.cpu.json").read_text())
            assert pids["variant_nginx"] not in (None, pids["nginx"]) and cpu["processes"]["nginx"]["pids"][0] == pids["variant_nginx"]
            original = json.loads((run / f"nginx-http.gomaxprocs-{n}.block-{block}.run-{block}.cpu.json").read_text())
            assert pids["variant_nginx"] not in original["processes"]["nginx"]["pids"]

    # The manifest: the variant, the twin among the setups, in every block's shuffled rounds with the others.
    variant = manifest["variant"]
    assert (variant["name"], variant["options"], variant["upstream_keepalive"]) == ("nokeep", ["no-upstream-keepalive"], False)
    assert variant["nginx_version"] == manifest["versions"]["nginx"] and variant["setups"] == {"nginx-http": TWIN}
    params = manifest["parameters"]
    assert (
        params["setups"] == ["go-http", "nginx-http", TWIN] and params["ports"][TWIN] == twin_port and params["upstream_keepalive"] is True
    )
    assert all(sorted(order) == sorted(params["setups"]) for p in manifest["passes"] for order in p["order"])
    assert all(p["cells"][TWIN]["header_bytes"] == 141 for p in manifest["passes"])
    measured = {(m["setup"], m["gomaxprocs"], m["block"]) for m in manifest["measurements"]}
    assert measured == {(s, n, b) for s in params["setups"] for n in (1, 2) for b in (1, 2)}

    # Its own nginx.conf: the twin's port, no upstream keep-alive; the run's keeps it.
    twin_conf, conf = directives((run / "nginx-variant.conf").read_text()), directives((run / "nginx.conf").read_text())
    assert f"listen 127.0.0.1:{twin_port};" in twin_conf and f"server 127.0.0.1:{ports['go-http']};" in twin_conf
    assert "keepalive 300;" not in twin_conf and "proxy_http_version" not in twin_conf
    assert "keepalive 300;" in conf and str(twin_port) not in conf
    assert (run / "logs" / "nginx-variant-error.gomaxprocs-1.log").is_file()

    # Nothing left running: both nginx masters and workers, Go, their ports.
    assert_nothing_left(manifest, ports, tmp)
    for entry in manifest["passes"]:
        assert not alive_as(entry["pids"]["variant_nginx"], "nginx")
        assert all(not alive_as(worker, "nginx") for worker in entry["pids"]["variant_nginx_workers"])
    assert port_is_free(twin_port)

    # wrkreport build: the A/B figure per GOMAXPROCS, in results.json, on the page and in the summary.
    wrkreport = [sys.executable, "-m", "wrkreport"]
    built = subprocess.run([*wrkreport, "build", str(run), "--out", str(tmp_path / "report")], capture_output=True, text=True, check=False)
    assert built.returncode in (0, 1) and "Traceback" not in built.stderr, built.stderr
    data = json.loads((tmp_path / "report" / "results.json").read_text())
    records = data["variant_ratios"]
    assert [(r["setup"], r["twin"], r["gomaxprocs"], r["blocks"], r["unit"]) for r in records] == [
        ("nginx-http", TWIN, n, 2, "block") for n in (1, 2)
    ]
    assert all(0.1 < r["ratio"] < 2 and r["ci_low"] < r["ratio"] < r["ci_high"] for r in records)
    page = (tmp_path / "report" / "index.html").read_text()
    sentence = re.compile(
        r"With variant nokeep \(no-upstream-keepalive\), nginx-http&#39;s throughput at GOMAXPROCS=1 is [0-9.]+ \([0-9.]+-[0-9.]+\) of the original&#39;s"
    )
    assert sentence.search(page), page[page.find('id="variant"') - 50 : page.find('id="variant"') + 600]
    assert "With variant nokeep (no-upstream-keepalive), nginx-http's throughput at GOMAXPROCS=2 is" in built.stdout
    print("\n" + "\n".join(line for line in built.stdout.splitlines() if line.startswith("With variant")))

    # wrkreport compare RUN: A the run's nginx-http, B its twin, drift cancelling.
    compared = subprocess.run(
        [*wrkreport, "compare", str(run), "--out", str(tmp_path / "cmp")], capture_output=True, text=True, check=False
    )
    assert compared.returncode in (0, 1) and "Traceback" not in compared.stderr, compared.stderr
    assert "Drift cancels" in compared.stdout and "B: the same run: their twins through variant nokeep" in compared.stdout
    assert json.loads((tmp_path / "cmp" / "compare.json").read_text())["in_run"] is True
