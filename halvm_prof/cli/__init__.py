"""The command line: thin click commands over the library.

This package is the only place that imports click, and :func:`translate_errors` is the only
place that turns library errors into a one-line message and an exit code (1 for errors, 2 for
usage, as click does).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

import click

from halvm_prof import __version__
from halvm_prof.errors import HalvmProfError


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """Turn library and OS errors into ``click.ClickException`` (one line, exit 1)."""
    try:
        yield
    except (click.ClickException, click.exceptions.Exit, click.Abort):
        raise
    except HalvmProfError as e:
        raise click.ClickException(str(e)) from e
    except BrokenPipeError as e:
        # The reader of our stdout went away (e.g. `| head`): not an error of ours.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        raise click.exceptions.Exit(0) from e
    except KeyboardInterrupt as e:
        raise click.Abort() from e
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        raise click.ClickException(f"{where}{e.strerror or e}") from e
    except Exception as e:
        if os.environ.get("HALVM_PROF_DEBUG"):
            raise
        raise click.ClickException(
            f"internal error: {type(e).__name__}: {e} "
            "(please report it; HALVM_PROF_DEBUG=1 shows the traceback)"
        ) from e


class HalvmCommand(click.Command):
    """A command whose library errors become one-line messages."""

    def invoke(self, ctx: click.Context) -> Any:
        with translate_errors():
            return super().invoke(ctx)


class HalvmGroup(click.Group):
    """A group whose subcommands' library errors become one-line messages."""

    command_class = HalvmCommand

    def invoke(self, ctx: click.Context) -> Any:
        with translate_errors():
            return super().invoke(ctx)


class _RootGroup(HalvmGroup):
    """The ``halvm-prof`` group: its commands are imported on first use, so a start stays fast
    (``convert-profile`` imports none of them)."""

    _registered = False

    def _ensure(self) -> None:
        if not self._registered:
            type(self)._registered = True
            _register()

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._ensure()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        self._ensure()
        return super().get_command(ctx, cmd_name)


HalvmGroup.group_class = HalvmGroup


@click.group(cls=_RootGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="halvm-prof")
def cli() -> None:
    """Get GHC profiles out of HaLVM unikernels and make them understandable."""


def _register() -> None:
    # Imported here, on first use, so each command module can import this package's helpers.
    from halvm_prof.cli import convert, demo, disk
    from halvm_prof.cli import eventlog as eventlog_cli

    cli.add_command(disk.disk)
    cli.add_command(convert.extract)
    cli.add_command(demo.demo)
    cli.add_command(eventlog_cli.eventlog)
    from halvm_prof.cli import summary as summary_cli

    cli.add_command(summary_cli.summary)
    from halvm_prof.cli import sizing, xen

    disk.disk.add_command(sizing.size)
    cli.add_command(xen.xen_config)
    cli.add_command(xen.prepare)
    from halvm_prof.cli import export as export_cli

    cli.add_command(export_cli.export)
    from halvm_prof.cli import diff as diff_cli

    cli.add_command(diff_cli.diff)
    from halvm_prof.cli import report as report_cli

    cli.add_command(report_cli.report)
    from halvm_prof.cli import postmortem as postmortem_cli

    cli.add_command(postmortem_cli.postmortem)


def main() -> None:
    """Entry point of the ``halvm-prof`` command."""
    cli(prog_name="halvm-prof")
