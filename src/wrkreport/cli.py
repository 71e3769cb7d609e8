"""CLI: options -> one library call -> output -> exit code. The only place that prints or exits."""

from __future__ import annotations

import sys

import click

from . import __version__
from .errors import WrkreportError

CONTEXT = {"help_option_names": ["-h", "--help"]}


# Each command is a thin function returning its exit status; `main` is the only exit.


def fail(message: str) -> None:
    """Print one `wrkreport: ...` line on stderr."""
    click.echo(f"wrkreport: {message}", err=True)


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, prog_name="wrkreport")
def cli() -> None:
    """Parse wrk results and report what nginx in front of Go costs.

    Example:

        ./run_bench.sh && wrkreport build
    """


def main() -> None:
    """Run the CLI; turn any library error into one line and an exit status."""
    try:
        status = cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        fail("aborted")
        sys.exit(130)
    except click.ClickException as exc:
        fail(exc.format_message())
        sys.exit(exc.exit_code)
    except WrkreportError as exc:
        fail(exc.message())
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    # Commands return their exit status (0, 1 or 2); None means success (e.g. --help).
    sys.exit(status if isinstance(status, int) else 0)
