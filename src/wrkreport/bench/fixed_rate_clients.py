"""One fixed-rate measurement on every --client-hosts client at once: vegeta at each one's share of the rate, each one's results kept, their CPU time.

The open-loop counterpart of commands/clients.measure_on_clients, for the fixed-rate phase
with --client-hosts. In order:

1. once per run (`clients-vegeta`, install_vegeta): the vegeta built here (static:
   vegeta_build builds with CGO_ENABLED=0; for a client of another architecture, built
   for its own) is copied into each remote client's private work dir over its ssh master, its sha256 checked there against this copy's, and one
   targets file per setup written beside it (`targets.<setup>`: `GET URL`). Nothing is
   installed outside that dir, which `clients-down` removes;
2. per measurement: each client gets its share of the rate (core.rate_result.rate_shares: the
   remainder to the first ones, so the shares add up to the rate) and of the connection
   cap (-max-connections, split as wrk's -c), and all start together through the agents
   (remote_clients.measuring.run_all, the same barrier as wrk): a remote agent answers
   with `vegeta encode --to csv` of its results (made after its CPU time was taken), the
   local one (`local`) writes its gob here;
3. each client's results are kept gzip'd, `<stem>.client-<i>.vegeta.csv.gz` (with one
   client, the single-machine name `<stem>.vegeta.csv.gz`), the servers' CPU time read
   around the whole attack as for wrk, and vegeta's own per client in the .cpu.json.

A client whose vegeta fails, or whose session is lost, fails the measurement: the entry
keeps `file` null and a one-line `problem` naming the client (the reader never merges
fewer clients). Standard library only.
"""

from __future__ import annotations

import datetime
import gzip
import hashlib
import os
import platform
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..core.rate_result import rate_shares
from ..parsers.vegeta import SUFFIX
from .cpu import cpu_record
from .fixed_rate import Attack, attack_argv, encode_csv_gz, last_words
from .manifest import write_json_atomic
from .remote_clients.measuring import ClientRun, connection_share, run_all, start_skew_ms, wrk_usage
from .remote_clients.state import ClientError, Clients, on_client, said
from .server_machine import GOARCH
from .values import iso_ms
from .vegeta_build import VegetaBuildError, build_vegeta_for

VEGETA_NAME = "vegeta"  # the copy in each remote client's work dir
COPY_TIMEOUT_S = 300
ENCODE_FAILED = "vegeta encode exit"  # the agent's line when encoding its results failed there


@dataclass
class ClientsRate:
    """How a fixed-rate measurement on the clients went: the signal that stopped it, else its manifest entry and progress."""

    signal: int | None
    entry: dict | None = None
    progress: str = ""


def install_script(directory: str, digest: str, urls: dict[str, str], headers: dict[str, list[str]] | None = None) -> str:
    """Return the script run on a client after the copy: check its sha256, make it the work dir's vegeta, write the targets files
    (headers: per setup, the lines after `GET URL`, --app-header's for the app setups), run it once."""
    headers = headers or {}
    d = shlex.quote(directory)
    lines = [
        f"cd {d} || exit 1",
        "chmod 0700 vegeta.part || exit 1",
        'got=$(sha256sum vegeta.part 2>&1) || { echo "cannot check it: $got"; exit 1; }',
        f'[ "${{got%% *}}" = {digest} ] || {{ echo "it arrived damaged: sha256 ${{got%% *}}, not {digest}"; exit 1; }}',
        f"mv vegeta.part {VEGETA_NAME} || exit 1",
        *(
            f"printf '%s\\n' {' '.join(shlex.quote(line) for line in (f'GET {url}', *headers.get(setup, ())))} > {shlex.quote('targets.' + setup)} || exit 1"
            for setup, url in sorted(urls.items())
        ),
        f'./{VEGETA_NAME} -version >/dev/null 2>&1 || {{ echo "it does not run there: $(./{VEGETA_NAME} -version 2>&1 | head -c 200)"; exit 1; }}',
    ]
    return "\n".join(lines) + "\n"


def binary_for(vegeta: Path, arch: str | None, built: dict, log: Callable[[str], None]) -> Path:
    """Return the vegeta for a client's `uname -m`: this one for this machine's architecture, else one built for its own (vegeta_build.build_vegeta_for)."""
    here = GOARCH.get(platform.machine())
    if arch is None or (arch in GOARCH and GOARCH[arch] == here):
        return Path(vegeta)
    if arch not in GOARCH:
        raise ClientError(
            f"a {arch} machine (uname -m): vegeta cannot be built for it here (known: {', '.join(sorted(GOARCH))}); --rates off runs without it"
        )
    if arch not in built:
        try:
            built[arch] = build_vegeta_for(*GOARCH[arch], cache=Path(vegeta).parent.parent, say=log)
        except VegetaBuildError as exc:
            raise ClientError(f"a {arch} machine: {exc}") from None
    return built[arch]


def install_vegeta(
    state: Clients, vegeta: Path, urls: dict[str, str], log: Callable[[str], None], headers: dict[str, list[str]] | None = None
) -> None:
    """Copy vegeta (built for each one's architecture) into every remote client's work dir, sha256 checked there, with a targets file per setup
    (headers: per setup, the --app-header's it sends); raise ClientError naming the client."""
    built: dict[str, Path] = {}
    for client in state.clients:
        if not client.remote:
            continue
        try:
            path = binary_for(vegeta, (state.facts.get(client.label) or {}).get("arch"), built, log)
        except ClientError as exc:
            raise ClientError(f"{client.label} ({client.host}): {exc}") from None
        binary = path.read_bytes()
        digest = hashlib.sha256(binary).hexdigest()
        copied = on_client(state, client, f"cat > {shlex.quote(client.dir + '/vegeta.part')}", stdin=binary, timeout=COPY_TIMEOUT_S)
        if copied.returncode != 0:
            raise ClientError(f"{client.label} ({client.host}): cannot copy vegeta to {client.dir}: {said(copied)}")
        done = on_client(state, client, install_script(client.dir, digest, urls, headers), timeout=COPY_TIMEOUT_S)
        if done.returncode != 0:
            raise ClientError(f"{client.label} ({client.host}): vegeta copied to {client.dir}, but {said(done)}")
        log(f"{client.label} ({client.host}): vegeta copied to {client.dir} (sha256 {digest[:12]}... checked there)")


def client_runs(state: Clients, vegeta: Path, attack: Attack, setup: str, stem: str, work_dir: Path, keep: bool = True) -> list[ClientRun]:
    """Return one vegeta run per client at its share of the rate and of the connection cap (keep: its results kept, else discarded)."""
    count = len(state.clients)
    runs = []
    for index, (client, rate) in enumerate(zip(state.clients, rate_shares(attack.rate, count))):
        cap = attack.max_connections
        mine = replace(attack, rate=rate, max_connections=None if cap is None else max(1, connection_share(cap, index, count)))
        if client.remote:
            binary, targets = f"{client.dir}/{VEGETA_NAME}", f"{client.dir}/targets.{setup}"
        else:
            binary, targets = str(vegeta), str(work_dir / f"targets.{setup}")
            Path(targets).write_text(attack.target)
        argv = attack_argv(binary, mine, Path(targets)) + ([] if keep else ["-output", "/dev/null"])
        name = f"{stem}.{client.label}"
        out = work_dir / f"{name}.{'csv' if client.remote else 'gob'}" if keep else None
        runs.append(
            ClientRun(
                client, name, argv, out, work_dir / f"{name}.err", None, generator="vegeta", duration_s=mine.duration_s + mine.timeout_s
            )
        )
    return runs


def rate_of_run(run: ClientRun) -> int:
    """Return the rate a client's vegeta was given (its -rate R/1s)."""
    return int(run.argv[run.argv.index("-rate") + 1].split("/")[0])


def keep_results(vegeta: Path, run: ClientRun, dest: Path) -> str | None:
    """Write one client's results to dest as gzip'd CSV (atomically); return why not, or None when kept."""
    why = f"{run.client.label} ({run.client.host})"
    if run.status != 0:
        return f"{why}: vegeta attack exit {run.status}: {last_words(run.err) or 'no message'}"
    if run.out is None or not run.out.is_file() or not run.out.stat().st_size:
        return f"{why}: vegeta wrote no results{': ' + last_words(run.err) if last_words(run.err) else ''}"
    if not run.client.remote:
        problem = encode_csv_gz(vegeta, run.out, dest)
        return f"{why}: {problem}" if problem else None
    if run.err.is_file() and run.err.read_text(errors="replace").startswith(ENCODE_FAILED):
        return f"{why}: {last_words(run.err)}"
    tmp = dest.with_name(f".{dest.name}.tmp-{os.getpid()}")
    try:
        with (
            open(run.out, "rb") as text,
            open(tmp, "wb") as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as packed,
        ):
            shutil.copyfileobj(text, packed, 1 << 20)
        os.replace(tmp, dest)
    except OSError as exc:
        return f"{why}: could not keep its results: {exc}"
    finally:
        tmp.unlink(missing_ok=True)
    return None


def ms_time(ms: int) -> datetime.datetime:
    """Return a UTC datetime from epoch milliseconds."""
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)


def measure_rate_on_clients(
    state: Clients,
    vegeta: Path,
    attack: Attack,
    setup: str,
    run_dir: Path,
    work_dir: Path,
    stem: str,
    ids: dict,
    snapshot: Callable[[], dict],
    target: tuple[int, int | None] | None,
    pinning: dict | None,
) -> ClientsRate:
    """Run one fixed-rate measurement on every client at once; keep each one's results and the .cpu.json; return its entry (see the module's docstring)."""
    runs = client_runs(state, vegeta, attack, setup, stem, work_dir)
    several = len(runs) > 1
    try:
        before = snapshot()
        stopped = run_all(state, runs)
        after = snapshot()
        if stopped is not None:
            return ClientsRate(stopped)
        files, problems = [], []
        for run in runs:
            dest = run_dir / (f"{stem}.{run.client.label}{SUFFIX}" if several else f"{stem}{SUFFIX}")
            problem = keep_results(vegeta, run, dest)
            files.append(None if problem else dest.name)
            problems.append(problem)
    finally:
        for run in runs:
            for path in (run.out, run.err):
                if path is not None:
                    path.unlink(missing_ok=True)
    started, ended = ms_time(min(run.started_ms for run in runs)), ms_time(max(run.ended_ms for run in runs))
    problem = next((p for p in problems if p), None)
    cpu_file = None
    if problem is None:
        if any(run.client.remote for run in runs):
            cores = [((state.facts.get(run.client.label) or {}).get("machine") or {}).get("usable_cores") for run in runs]
            usage = wrk_usage(runs, sum(c for c in cores if isinstance(c, int)) or len(runs))
        else:  # `--client-hosts local`: vegeta here, as without the option
            usage = {"user_s": runs[0].user_s, "system_s": runs[0].system_s, "pids": [runs[0].pid], "threads": os.cpu_count()}
        cpu_file = f"{stem}.cpu.json"
        write_json_atomic(
            run_dir / cpu_file,
            cpu_record({"file": files[0], **ids}, before, after, usage, (ended - started).total_seconds(), pinning, target),
        )
    entry = {
        **ids,
        "rate": attack.rate,
        "file": files[0] if problem is None else None,
        "cpu_file": cpu_file,
        "url": attack.url,
        "command": runs[0].command,
        "exit_code": next((run.status for run in runs if run.status), 0),
        "started_at": iso_ms(started),
        "ended_at": iso_ms(ended),
        **({"problem": problem} if problem else {}),
    }
    if several:
        entry["clients"] = [
            {
                "client": run.client.label,
                "host": run.client.host,
                "rate": rate_of_run(run),
                "file": file,
                "exit_code": run.status,
                "command": run.command,
                "started_at": iso_ms(ms_time(run.started_ms)),
                "ended_at": iso_ms(ms_time(run.ended_ms)),
                **({"problem": p} if p else {}),
            }
            for run, file, p in zip(runs, files, problems)
        ]
    else:
        entry.update(client=runs[0].client.label, host=runs[0].client.host)
    skew = start_skew_ms(runs)
    return ClientsRate(None, entry, f" ({len(runs)} clients, start skew {skew} ms)" if several else "")


def warm_up_on_clients(state: Clients, vegeta: Path, attack: Attack, setup: str, work_dir: Path) -> tuple[int | None, list[str]]:
    """Run vegeta on every client at once at its share of the rate, results discarded; return (the signal that stopped it, each failed client's line)."""
    runs = client_runs(state, vegeta, attack, setup, "warm-up", work_dir, keep=False)
    try:
        stopped = run_all(state, runs)
        failed = [f"{run.client.label} ({run.client.host}): vegeta exit {run.status}: {last_words(run.err)}" for run in runs if run.status]
    finally:
        for run in runs:
            run.err.unlink(missing_ok=True)
    return stopped, failed
