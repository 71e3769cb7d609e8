"""vegeta: the open-loop load generator, a Go module pinned here, built once into a cache directory; its version for the manifest.

The fixed-rate phase runs `vegeta attack` at a fixed rate. vegeta is not taken
from the machine's PATH or a distribution package: `go install` builds the module
github.com/tsenart/vegeta/v12 at VEGETA_VERSION (its one pin) with the Go toolchain the
run already builds gohello with, into

    $XDG_CACHE_HOME/wrkreport/vegeta-<version>/vegeta      (~/.cache/wrkreport/... by default)

with GOBIN, GOPATH, GOMODCACHE and GOCACHE all under that directory, so nothing else of
the user's Go set-up is read or written and `rm -rf` of the directory undoes it (the
module cache is made writable with -modcacherw; the build cache, ~150 MB, is removed after
the build). A binary already there that says the
pinned version is reused; a new one is built into a temporary directory and renamed into
place, so a half-built binary is never reused. GOTOOLCHAIN=local: the toolchain at hand,
never one downloaded. `-X main.Version=<version>` stamps the version `vegeta -version`
prints (a plain `go install` leaves it empty), which is what the manifest records.

    python3 -m wrkreport.bench.vegeta_build [--cache DIR] [--go GO]   # prints the binary's path

For --client-hosts of another architecture, build_vegeta_for cross-builds the same pin
(GOOS=linux GOARCH=..) into cache/vegeta-<version>-linux-<arch>/, reading the native
build's module cache first as its proxy, and checks it with `go version -m` (it cannot
run here).

Standard library only, like the rest of wrkreport.bench.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from .machine import command_output

VEGETA_MODULE = "github.com/tsenart/vegeta/v12"
VEGETA_VERSION = "v12.13.0"  # the pin: the newest v12 tag on proxy.golang.org (2025-10-31) when chosen
GO_FALLBACK = "/usr/local/go/bin/go"  # where the official Go tarball installs, often not on root's PATH
VERSION_LINE = re.compile(r"^Version: v?(?P<version>[0-9]+\.[0-9]+\.[0-9]+\S*)$", re.M)
RUNTIME_LINE = re.compile(r"^Runtime: (?P<runtime>\S+ \S+)$", re.M)
BUILD_TIMEOUT_S = 900  # a first build downloads the module and its dependencies


class VegetaBuildError(Exception):
    """vegeta could not be built or does not run; the message says why in one line."""


def cache_root() -> Path:
    """Return wrkreport's cache directory: $XDG_CACHE_HOME/wrkreport, else ~/.cache/wrkreport."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "wrkreport"


def vegeta_dir(cache: Path, version: str = VEGETA_VERSION) -> Path:
    """Return the directory of one pinned vegeta build: cache/vegeta-<version>."""
    return cache / f"vegeta-{version}"


def vegeta_path(cache: Path, version: str = VEGETA_VERSION) -> Path:
    """Return where the pinned vegeta binary lives in the cache."""
    return vegeta_dir(cache, version) / "vegeta"


def find_go() -> str | None:
    """Return the go command: on PATH, else the official tarball's /usr/local/go/bin/go, else None."""
    return shutil.which("go") or (GO_FALLBACK if os.access(GO_FALLBACK, os.X_OK) else None)


def go_environment(directory: Path, gobin: Path) -> dict[str, str]:
    """Return the environment of the build: every Go directory under directory, the local toolchain, no cgo."""
    return {
        **os.environ,
        "GOBIN": str(gobin),
        "GOPATH": str(directory / "go" / "path"),
        "GOMODCACHE": str(directory / "go" / "mod"),
        "GOCACHE": str(directory / "go" / "build"),
        "GOFLAGS": "-modcacherw",  # the module cache can be deleted without chmod
        "GOTOOLCHAIN": "local",
        "CGO_ENABLED": "0",
    }


def install_argv(go: str, version: str = VEGETA_VERSION) -> list[str]:
    """Return the go install command of the pinned module, its version stamped into the binary."""
    return [go, "install", "-trimpath", "-ldflags", f"-X main.Version={version}", f"{VEGETA_MODULE}@{version}"]


def vegeta_version(binary: str | Path) -> tuple[str | None, str | None]:
    """Return (version, version line) of a vegeta binary from `vegeta -version`, as tool_versions does for wrk.

    The version is the number without its v ('12.13.0'); the line joins the Version and
    Runtime lines ('Version: v12.13.0; Runtime: go1.26.8 linux/amd64'). (None, None) when
    it does not run; (None, first line) when it prints no version.
    """
    text = command_output([str(binary), "-version"])
    if not text:
        return None, None
    version, runtime = VERSION_LINE.search(text), RUNTIME_LINE.search(text)
    if version is None:
        return None, text.splitlines()[0]
    line = f"Version: v{version['version']}" + (f"; Runtime: {runtime['runtime']}" if runtime else "")
    return version["version"], line


def record_vegeta_version(manifest: dict, binary: str | Path) -> None:
    """Add vegeta's version and version line to a manifest's versions and version_lines (docs/raw-format.md)."""
    version, line = vegeta_version(binary)
    manifest.setdefault("versions", {})["vegeta"] = version
    manifest.setdefault("version_lines", {})["vegeta"] = line


def is_pinned_build(binary: Path, version: str = VEGETA_VERSION) -> bool:
    """Return True when binary is an executable vegeta that says the pinned version."""
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        return False
    return vegeta_version(binary)[0] == version.removeprefix("v")


def build_vegeta(
    cache: Path | None = None, go: str | None = None, say: Callable[[str], None] = lambda line: None, version: str = VEGETA_VERSION
) -> Path:
    """Return the path of the pinned vegeta, building it into the cache first when it is not there (saying what it does)."""
    cache = cache_root() if cache is None else cache
    binary = vegeta_path(cache, version)
    if is_pinned_build(binary, version):
        say(f"vegeta {version}: using {binary}")
        return binary
    go = go or find_go()
    if go is None:
        raise VegetaBuildError(f"cannot build vegeta {version}: no go command (on PATH or at {GO_FALLBACK})")
    directory = vegeta_dir(cache, version)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".build-", dir=directory))
    except OSError as exc:
        raise VegetaBuildError(f"cannot build vegeta {version}: cannot create a directory in {directory} ({exc.strerror or exc})") from None
    try:
        argv = install_argv(go, version)
        say(f"building vegeta {version} ({VEGETA_MODULE}) with {go} into {directory}: {' '.join(argv[1:])}")
        try:
            done = subprocess.run(
                argv,
                env=go_environment(directory, staging),
                cwd=directory,
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise VegetaBuildError(f"go install {VEGETA_MODULE}@{version} did not finish: {exc}") from None
        if done.returncode != 0:
            last = " ".join((done.stderr or done.stdout).split())[-400:]
            raise VegetaBuildError(
                f"go install {VEGETA_MODULE}@{version} failed (exit {done.returncode}): {last} "
                "(the module comes from the Go module proxy, see go env GOPROXY)"
            )
        os.replace(staging / "vegeta", binary)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(directory / "go" / "build", ignore_errors=True)  # ~150 MB of compiled packages, needed only to build again
    if not is_pinned_build(binary, version):
        raise VegetaBuildError(f"{binary} was built but `vegeta -version` does not say {version}: {vegeta_version(binary)[1]!r}")
    say(f"vegeta {version}: built {binary}")
    return binary


def cross_dir(cache: Path, goarch: str, goenv: dict[str, str], version: str = VEGETA_VERSION) -> Path:
    """Return the directory of the pinned vegeta built for another architecture: cache/vegeta-<version>-linux-<goarch>[v<GOARM>]."""
    return cache / f"vegeta-{version}-linux-{goarch}{'v' + goenv['GOARM'] if goenv.get('GOARM') else ''}"


def cross_environment(directory: Path, goarch: str, goenv: dict[str, str], modcache: Path) -> dict[str, str]:
    """Return the environment of a build for linux/goarch: go_environment's, without GOBIN (go refuses it for another
    architecture), with the native build's module cache (the same sources: nothing downloaded again once that one is built)."""
    env = {**go_environment(directory, directory), "GOOS": "linux", "GOARCH": goarch, "GOMODCACHE": str(modcache), **goenv}
    # That cache first, as a proxy (go's own file layout), so nothing is asked of the network it already holds.
    env["GOPROXY"] = f"{(modcache / 'cache' / 'download').as_uri()},{os.environ.get('GOPROXY') or 'https://proxy.golang.org,direct'}"
    del env["GOBIN"]  # the binary lands in GOPATH/bin/linux_<goarch>/
    return env


def is_cross_build(go: str, binary: Path, goarch: str, version: str = VEGETA_VERSION) -> bool:
    """Return True when binary is the pinned module built for goarch (`go version -m`: it cannot run here)."""
    text = command_output([go, "version", "-m", str(binary)]) if binary.is_file() else None
    return bool(text) and f"\tmod\t{VEGETA_MODULE}\t{version}" in text and f"\tbuild\tGOARCH={goarch}\n" in text + "\n"


def build_vegeta_for(
    goarch: str,
    goenv: dict[str, str],
    cache: Path | None = None,
    go: str | None = None,
    say: Callable[[str], None] = lambda line: None,
    version: str = VEGETA_VERSION,
) -> Path:
    """Return the pinned vegeta built (static) for linux/goarch, for clients of another architecture; built into its own cache dir when not there."""
    cache = cache_root() if cache is None else cache
    go = go or find_go()
    if go is None:
        raise VegetaBuildError(f"cannot build vegeta {version} for {goarch}: no go command (on PATH or at {GO_FALLBACK})")
    directory = cross_dir(cache, goarch, goenv, version)
    binary = directory / "vegeta"
    if is_cross_build(go, binary, goarch, version):
        say(f"vegeta {version} for linux/{goarch}: using {binary}")
        return binary
    argv = install_argv(go, version)
    say(f"building vegeta {version} for linux/{goarch} with {go} into {directory}: {' '.join(argv[1:])}")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        modcache = vegeta_dir(cache, version) / "go" / "mod"
        done = subprocess.run(
            argv,
            env=cross_environment(directory, goarch, goenv, modcache),
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            raise VegetaBuildError(
                f"go install {VEGETA_MODULE}@{version} for linux/{goarch} failed (exit {done.returncode}): "
                + " ".join((done.stderr or done.stdout).split())[-400:]
            )
        os.replace(directory / "go" / "path" / "bin" / f"linux_{goarch}" / "vegeta", binary)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise VegetaBuildError(f"could not build vegeta {version} for linux/{goarch}: {exc}") from None
    finally:
        shutil.rmtree(directory / "go" / "build", ignore_errors=True)
    if not is_cross_build(go, binary, goarch, version):
        raise VegetaBuildError(f"{binary} was built but `go version -m` does not say {VEGETA_MODULE} {version} for {goarch}")
    say(f"vegeta {version} for linux/{goarch}: built {binary}")
    return binary


def main(argv: list[str] | None = None) -> int:
    """Build (or find) the pinned vegeta and print its path; progress on stderr; exit 2 with one line on failure."""
    parser = argparse.ArgumentParser(prog="python3 -m wrkreport.bench.vegeta_build", description=__doc__.splitlines()[0])
    parser.add_argument("--cache", help="the cache directory (default: $XDG_CACHE_HOME/wrkreport or ~/.cache/wrkreport)")
    parser.add_argument("--go", help="the go command (default: go on PATH, else /usr/local/go/bin/go)")
    args = parser.parse_args(argv)
    try:
        binary = build_vegeta(Path(args.cache) if args.cache else None, args.go, lambda line: print(f"[run_bench] {line}", file=sys.stderr))
    except VegetaBuildError as exc:
        print(f"[run_bench] error: {exc}", file=sys.stderr)
        return 2
    print(binary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
