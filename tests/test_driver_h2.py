"""run_bench.sh with the HTTP/2 setups (issue 34): real nginx, h2load, curl, openssl and Go on 127.0.0.1.

One short run checks several things at once (CI time): every h2 port negotiated h2 by ALPN
(the driver's probe, recorded per setup; a fallback to HTTP/1.1 would skip the setup, see
test_bench_h2_answers), the h2 answers, h2load's options, the ratios' divisors, the page's
HTTP/2 section, and that nothing is left running. Same rules as tests/test_driver.py.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from helpers import (
    BASE_PORT_NAMES,
    SCRIPT,
    USED_PORTS,
    assert_nothing_left,
    free_port_block,
    latest_run,
    missing_tools,
    port_args,
    script_env,
)

H2 = ("go-h2", "nginx-h2", "nginx-h2-unix")
MUX = ("go-h2-mux", "nginx-h2-mux", "nginx-h2-unix-mux")  # the same servers and ports, more streams per connection
PORT_NAMES = (*BASE_PORT_NAMES, *H2)
MISSING = missing_tools("nginx", "h2load", "curl", "go", "openssl")
needs_tools = pytest.mark.skipif(bool(MISSING), reason=f"needs nginx, h2load, curl, go and openssl; missing: {', '.join(MISSING)}")


@pytest.mark.slow
@needs_tools
def test_h2_setups_negotiate_h2_are_loaded_by_h2load_and_divide_by_go_h2(workdirs, tmp_path):
    out, tmp = workdirs
    ports = free_port_block(PORT_NAMES, 19100, 19900, USED_PORTS)
    # the fixed-rate phase at one rate, no capacity search (--slo off): what vegeta's h2 needs checking, in a few seconds
    args = [
        "--quick",
        "--gomaxprocs",
        "1",
        "--seed",
        "3",
        "--setups",
        "h2",
        "--streams",
        "1,4",
        "--slo",
        "off",
        "--out",
        str(out),
        *port_args(ports),
    ]
    done = subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, env=script_env(tmp), timeout=240, check=False)
    assert done.returncode == 0, done.stderr
    run, manifest = latest_run(out)
    params = manifest["parameters"]
    assert params["load_generator"] == "h2load" and (params["streams"], params["streams_mux"]) == (1, 4) and manifest["versions"]["h2load"]
    probes = manifest["tls"]["setups"]
    assert {s: (p["alpn"], p["protocol"], p["error"]) for s, p in probes.items()} == {s: ("h2", "TLSv1.3", None) for s in (*H2, *MUX)}
    cells = manifest["passes"][0]["cells"]
    for setup in (*H2, *MUX):
        assert (run / f"{setup}.gomaxprocs-1.headers.txt").read_bytes().startswith(b"HTTP/2 200"), setup
        assert cells[setup]["error"] is None and cells[setup]["body_bytes"] == 12 and cells[setup]["tls"]["alpn"] == "h2"
    assert cells["nginx-h2"]["headers_changed"] == ["Server (changed)"]  # Server: nginx; Date is not compared
    commands = {m["setup"]: m["command"] for m in manifest["measurements"]}
    assert set(commands) == {"go-http", *H2, *MUX}
    assert "--h1" in commands["go-http"] and "-m 1" in commands["go-http"]
    for setup in (*H2, *MUX):
        assert ("-m 4" if setup in MUX else "-m 1") in commands[setup] and "--h1" not in commands[setup]
        text = next(run.glob(f"{setup}.gomaxprocs-1.*.h2load.txt")).read_text()
        assert "Application protocol: h2" in text, setup  # h2load itself negotiated h2 on every h2 port
    assert "Application protocol: http/1.1" in next(run.glob("go-http.gomaxprocs-1.*.h2load.txt")).read_text()
    rates = {m["setup"]: m["command"] for m in manifest["fixed_rate_measurements"]}
    assert set(rates) == {"go-http", *H2} and "-http2=false" in rates["go-http"]
    assert all("-http2=true" in rates[s] for s in H2)  # vegeta's HTTP/2 client for the h2 setups (nginx logs HTTP/2.0 for it)
    assert_nothing_left(manifest, ports, tmp)

    report = tmp_path / "report"
    built = subprocess.run(
        [sys.executable, "-m", "wrkreport", "build", str(run), "--out", str(report)], capture_output=True, text=True, check=False
    )
    assert "Traceback" not in built.stderr and built.returncode == 0, built.stderr
    results = json.loads((report / "results.json").read_text())
    ratios = {r["setup"]: r for r in results["ratios"] if r["metric"] == "requests_per_sec"}
    assert {s: r["baseline"] for s, r in ratios.items()} == {
        "go-http": "go-http",
        "go-h2": "go-http",
        "nginx-h2": "go-h2",
        "nginx-h2-unix": "go-h2",
        "go-h2-mux": "go-h2",
        "nginx-h2-mux": "go-h2-mux",
        "nginx-h2-unix-mux": "go-h2-mux",
    }
    assert all(ratios[s]["ratio"] > 0 for s in (*H2, *MUX)), ratios
    assert not [c for c in results["checks"] if c["status"] == "fail"]
    page = (report / "index.html").read_text()
    assert 'id="h2"' in page and re.search(r"nginx terminating h2 (keeps [0-9]+%|serves [0-9.]+x)", page)
    assert "with 1 stream per connection;" in page and "with 4 streams per connection (h2load)." in page  # both stream counts in the answer
    assert (
        "-m 1, 1 stream(s) in flight per connection, and -m 4 for the -mux setups" in page
        and "vegeta&#39;s HTTP/2 client (-http2=true" in page
    )
