"""Tests of wrkreport.bench.vegeta_build: the pinned module built with go into the cache, reused when it says the pin, refused when the build fails; its version for the manifest."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from rate_servers import vegeta_or_skip
from wrkreport.bench import vegeta_build
from wrkreport.bench.vegeta_build import (
    VEGETA_MODULE,
    VEGETA_VERSION,
    VegetaBuildError,
    build_vegeta,
    go_environment,
    install_argv,
    record_vegeta_version,
    vegeta_path,
    vegeta_version,
)

ROOT = Path(__file__).resolve().parent.parent


def script(path: Path, text: str) -> Path:
    """Write an executable shell script and return its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_the_pin_is_one_module_at_one_version_and_the_build_stays_in_the_cache(tmp_path):
    assert VEGETA_MODULE == "github.com/tsenart/vegeta/v12" and VEGETA_VERSION.startswith("v12.")
    assert vegeta_path(tmp_path) == tmp_path / f"vegeta-{VEGETA_VERSION}" / "vegeta"
    argv = install_argv("go")
    assert argv == ["go", "install", "-trimpath", "-ldflags", f"-X main.Version={VEGETA_VERSION}", f"{VEGETA_MODULE}@{VEGETA_VERSION}"]
    env = go_environment(tmp_path / "d", tmp_path / "bin")
    for name in ("GOPATH", "GOMODCACHE", "GOCACHE"):
        assert Path(env[name]).is_relative_to(tmp_path / "d"), name
    assert env["GOBIN"] == str(tmp_path / "bin") and env["GOTOOLCHAIN"] == "local" and "-modcacherw" in env["GOFLAGS"]


def test_the_cache_is_xdg_cache_home_or_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert vegeta_build.cache_root() == tmp_path / "wrkreport"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert vegeta_build.cache_root() == tmp_path / "home" / ".cache" / "wrkreport"


def test_a_cached_binary_that_says_the_pin_is_reused_without_go(tmp_path):
    binary = script(vegeta_path(tmp_path), f'echo "Version: {VEGETA_VERSION}"; echo "Commit: "; echo "Runtime: go1.26.8 linux/amd64"\n')
    said = []
    assert build_vegeta(tmp_path, go=str(tmp_path / "no-go"), say=said.append) == binary
    assert said == [f"vegeta {VEGETA_VERSION}: using {binary}"]


def test_a_cached_binary_of_another_version_is_rebuilt_and_a_failed_build_says_why(tmp_path):
    script(vegeta_path(tmp_path), 'echo "Version: v12.12.0"\n')
    go = script(tmp_path / "go", 'echo "go: module lookup disabled by GOPROXY=off" >&2; exit 1\n')
    said = []
    with pytest.raises(VegetaBuildError) as caught:
        build_vegeta(tmp_path, go=str(go), say=said.append)
    assert str(caught.value) == (
        f"go install {VEGETA_MODULE}@{VEGETA_VERSION} failed (exit 1): go: module lookup disabled by GOPROXY=off "
        "(the module comes from the Go module proxy, see go env GOPROXY)"
    )
    assert said and said[0].startswith(f"building vegeta {VEGETA_VERSION} ({VEGETA_MODULE}) with {go} into {tmp_path}")
    assert [p.name for p in vegeta_path(tmp_path).parent.iterdir() if p.name.startswith(".build-")] == []  # the staging dir is gone


def test_a_build_that_installs_a_binary_without_the_pin_is_refused(tmp_path):
    go = script(tmp_path / "go", 'printf \'#!/bin/sh\\necho "Version: "\\n\' > "$GOBIN/vegeta"; chmod +x "$GOBIN/vegeta"\n')
    with pytest.raises(VegetaBuildError, match=r"was built but `vegeta -version` does not say"):
        build_vegeta(tmp_path, go=str(go))


def test_the_version_for_the_manifest(tmp_path):
    binary = script(tmp_path / "vegeta", 'echo "Version: v12.13.0"; echo "Commit: "; echo "Runtime: go1.26.8 linux/amd64"; echo "Date: "\n')
    assert vegeta_version(binary) == ("12.13.0", "Version: v12.13.0; Runtime: go1.26.8 linux/amd64")
    manifest = {"versions": {"wrk": "4.1.0"}, "version_lines": {}}
    record_vegeta_version(manifest, binary)
    assert manifest["versions"] == {"wrk": "4.1.0", "vegeta": "12.13.0"}
    assert manifest["version_lines"]["vegeta"] == "Version: v12.13.0; Runtime: go1.26.8 linux/amd64"
    assert vegeta_version(tmp_path / "absent") == (None, None)
    assert vegeta_version(script(tmp_path / "plain", 'echo "Version: "\n')) == (None, "Version:")


@pytest.mark.slow
def test_the_real_build_says_the_pinned_version_and_the_module_it_came_from():
    binary = vegeta_or_skip()
    assert binary == vegeta_path(vegeta_build.cache_root())
    version, line = vegeta_version(binary)
    assert version == VEGETA_VERSION.removeprefix("v") and line.startswith(f"Version: {VEGETA_VERSION}; Runtime: go")
    go = vegeta_build.find_go()
    info = subprocess.run([go, "version", "-m", str(binary)], capture_output=True, text=True, check=True).stdout
    assert f"\tmod\t{VEGETA_MODULE}\t{VEGETA_VERSION}\t" in info  # the Go build info: the module, at the pin, from the proxy


@pytest.mark.slow
def test_the_command_line_prints_the_binary(tmp_path):
    binary = vegeta_or_skip()
    cache = tmp_path / "cache"
    shutil.copytree(binary.parent, vegeta_path(cache).parent, ignore=shutil.ignore_patterns("go", ".build-*"))
    done = subprocess.run(
        [sys.executable, "-m", "wrkreport.bench.vegeta_build", "--cache", str(cache), "--go", "/nonexistent/go"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=False,
    )
    assert done.returncode == 0 and done.stdout == f"{vegeta_path(cache)}\n" and "using" in done.stderr
    failed = subprocess.run(
        [sys.executable, "-m", "wrkreport.bench.vegeta_build", "--cache", str(tmp_path / "empty"), "--go", "/bin/false"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=False,
    )
    assert failed.returncode == 2 and failed.stdout == "" and "Traceback" not in failed.stderr
    assert (
        failed.stderr.strip().splitlines()[-1].startswith(f"[run_bench] error: go install {VEGETA_MODULE}@{VEGETA_VERSION} failed (exit 1)")
    )


def built_here_before(go: str) -> Path:
    """Return where this test keeps the arm64 binary it built, keyed by what decides the build: bench/vegeta_build.py's
    source, the pinned version and the go toolchain (`go version`). The build compiles Go's standard library for arm64
    from an empty build cache, 96 s of a 2-core machine: it runs again only when one of them changed."""
    toolchain = subprocess.run([go, "version"], capture_output=True, text=True).stdout
    key = hashlib.sha256(Path(vegeta_build.__file__).read_bytes() + f"{VEGETA_VERSION}\n{toolchain}".encode()).hexdigest()[:16]
    return vegeta_build.cache_root() / "tests" / f"cross-arm64-{key}" / "vegeta"


@pytest.mark.slow
def test_a_real_build_for_another_architecture_from_the_native_builds_module_cache(tmp_path, monkeypatch):
    from wrkreport.bench.vegeta_build import build_vegeta_for, cross_dir, find_go, is_cross_build

    native = vegeta_or_skip()  # its module cache holds the sources: GOPROXY=off, nothing is downloaded
    cache = tmp_path / "cache"
    (cache / native.parent.name / "go").mkdir(parents=True)
    (cache / native.parent.name / "go" / "mod").symlink_to(native.parent / "go" / "mod")
    monkeypatch.setenv("GOPROXY", "off")  # after the module cache, which the build reads first as its proxy
    kept = built_here_before(find_go())
    if is_cross_build(find_go(), kept, "arm64"):  # built by this test from the same code, version and go: placed, not rebuilt
        print(f"the arm64 build of this code is kept in {kept}: its binary checked and reused, not built again")
        cross_dir(cache, "arm64", {}).mkdir(parents=True)
        shutil.copy2(kept, cross_dir(cache, "arm64", {}) / "vegeta")
    said = []
    binary = build_vegeta_for("arm64", {}, cache=cache, say=said.append)
    assert binary == cross_dir(cache, "arm64", {}) / "vegeta"
    assert binary.read_bytes()[:4] == b"\x7fELF" and binary.read_bytes()[18] == 183, "an ELF for aarch64 (e_machine 183)"
    shown = subprocess.run([find_go(), "version", "-m", str(binary)], capture_output=True, text=True).stdout
    assert f"\tmod\t{VEGETA_MODULE}\t{VEGETA_VERSION}" in shown and "\tbuild\tGOARCH=arm64" in shown and "CGO_ENABLED=0" in shown
    assert build_vegeta_for("arm64", {}, cache=cache, say=said.append) == binary, "reused once built"
    assert said[-1] == f"vegeta {VEGETA_VERSION} for linux/arm64: using {binary}"
    if not is_cross_build(find_go(), kept, "arm64"):
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(binary, kept)
