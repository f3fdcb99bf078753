"""The command line: thin click commands over the library.

This package is the only place that imports click, and :func:`translate_errors` is the only
place that turns library errors into a one-line message and an exit code (1 for errors, 2 for
usage, as click does).
"""

from __future__ import annotations

import contextlib
import importlib
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


#: Command name -> (module under halvm_prof.cli, attribute). A command's module is imported only
#: when that command runs (or help lists it), so ``summary`` does not pay for jinja2, construct
#: or libxlutil at every start.
_COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("demo", "demo"),
    "diff": ("diff", "diff"),
    "disk": ("disk", "disk"),
    "eventlog": ("eventlog", "eventlog"),
    "export": ("export", "export"),
    "extract": ("convert", "extract"),
    "live": ("live", "live"),
    "perf": ("perf", "perf"),
    "postmortem": ("postmortem", "postmortem"),
    "prepare": ("xen", "prepare"),
    "record": ("perf", "record"),
    "report": ("report", "report"),
    "run": ("live", "run"),
    "runs": ("runs", "runs"),
    "summary": ("summary", "summary"),
    "xen-config": ("xen", "xen_config"),
}


class _RootGroup(HalvmGroup):
    """The ``halvm-prof`` group, loading each command from :data:`_COMMANDS` on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in _COMMANDS:
            return None
        module_name, attribute = _COMMANDS[cmd_name]
        module = importlib.import_module(f"halvm_prof.cli.{module_name}")
        command = getattr(module, attribute)
        assert isinstance(command, click.Command)
        return command


HalvmGroup.group_class = HalvmGroup


@click.group(cls=_RootGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="halvm-prof")
def cli() -> None:
    """Get GHC profiles out of HaLVM unikernels and make them understandable."""


def main() -> None:
    """Entry point of the ``halvm-prof`` command."""
    from halvm_prof.fileio import install_signal_cleanup

    install_signal_cleanup()
    cli(prog_name="halvm-prof")
