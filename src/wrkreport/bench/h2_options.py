"""HTTP/2 in the plan: h2load as the load generator of the h2 setups, --streams (h2load -m), the script's h2 lines."""

from __future__ import annotations

import argparse

from ..core.display import argument
from ..core.errors import UsageError
from ..core.setups import SETUP_BY_ID, streams_of
from .profiles import ENV_LOAD_GENERATOR
from .values import parse_int, split_list

ENV_STREAMS = "BENCH_STREAMS"
H2LOAD = "h2load"
# The h2 setups get one request in flight per connection, as wrk's keep-alive HTTP/1.1: go-h2
# over go-http and nginx-h2 over go-h2 then compare what the protocols cost at equal
# concurrency (the connections). Their -mux twins (the same servers) get a multiplexed count,
# 10 streams per connection: what many streams on one connection do to the same ratios.
DEFAULT_STREAMS = (1, 10)
MAX_STREAMS = 128  # nginx's http2_max_concurrent_streams (Go's is 250): beyond it nginx's setups would get fewer than asked


def h2_options(parser: argparse.ArgumentParser) -> None:
    """Add --streams to run_bench.sh's parser."""
    parser.add_argument("--streams")


def streams_values(text: str | None, source: str) -> tuple[int, int]:
    """Return (streams of the h2 setups, streams of their -mux twins) from --streams: '1' -> (1, 10), '1,32' -> (1, 32).

    >>> streams_values(None, "--streams"), streams_values("4", "--streams"), streams_values("2,50", "--streams")
    ((1, 10), (4, 10), (2, 50))
    """
    if text is None:
        return DEFAULT_STREAMS
    items = split_list(text)
    if not 1 <= len(items) <= 2:
        raise UsageError(f"{source} {argument(text)}: one or two counts, e.g. 1 or 1,10 (the h2 setups', then their -mux twins')")
    values = [parse_int(item, f"{source} value" if len(items) > 1 else source, 1, maximum=MAX_STREAMS) for item in items]
    return values[0], values[1] if len(values) > 1 else DEFAULT_STREAMS[1]


def h2_plan(args: argparse.Namespace, env: dict[str, str], plan: dict) -> dict:
    """Return load_generator (h2load when an h2 setup is chosen and none was given), streams and streams_mux.

    wrk and ab speak no HTTP/2: naming either with an h2 setup is refused. In an h2load run
    every setup is loaded by h2load, the HTTP/1.1 ones with --h1 (one tool for both protocols).
    """
    h2 = [s for s in plan["setups"] if SETUP_BY_ID[s].h2]
    given = args.load_generator if args.load_generator is not None else env.get(ENV_LOAD_GENERATOR)
    generator = plan["load_generator"]
    if h2 and given is not None and given != H2LOAD:
        source = "--load-generator" if args.load_generator is not None else ENV_LOAD_GENERATOR
        raise UsageError(
            f"{source} {argument(given)} speaks no HTTP/2: the h2 setups are loaded with h2load (leave it out, or --load-generator h2load)"
        )
    if h2:
        generator = H2LOAD
    text, source = (args.streams, "--streams") if args.streams is not None else (env.get(ENV_STREAMS), ENV_STREAMS)
    streams, mux = streams_values(text, source)
    if any(SETUP_BY_ID[s].multiplexed for s in h2) and mux <= streams:
        raise UsageError(
            f"{source} {argument(text)}: the -mux setups need more streams than the others ({mux} is not more than {streams}); "
            "give two counts, e.g. --streams 1,10"
        )
    if text is not None and generator != H2LOAD:
        plan["warnings"].append(f"--streams {text} is h2load's (-m): this run is loaded with {generator}, which does not use it")
    return {"load_generator": generator, "streams": streams, "streams_mux": mux}


def h2load_args(plan: dict, setup: str) -> list[str]:
    """Return h2load's protocol options for a setup: -m STREAMS for an h2 setup (its -mux twin: the second count), --h1 -m 1 for the others (keep-alive, no pipelining)."""
    known = SETUP_BY_ID[setup]
    if not known.h2:
        return ["--h1", "-m", "1"]
    return ["-m", str(streams_of(setup, plan["streams"], plan["streams_mux"]))]


def h2_lines(plan: dict) -> list[str]:
    """Return the script's h2 lines: streams, streams_mux, h2_setups, and per setup its h2load protocol options."""
    lines = [f"streams {plan['streams']}", f"streams_mux {plan['streams_mux']}"]
    h2 = [s for s in plan["setups"] if SETUP_BY_ID[s].h2]
    if h2:
        lines.append(f"h2_setups {' '.join(h2)}")
    if plan["load_generator"] == H2LOAD:
        lines += [f"h2load.{s} {' '.join(h2load_args(plan, s))}" for s in plan["setups"]]
    return lines
