"""The ``halvm-prof`` group and what makes every command's errors one line.

:func:`translate_errors` is the only place that turns library errors into a one-line message
(:func:`halvm_prof.cli.plain.error_message`) and an exit code (1 for errors, 2 for usage, as
click does).
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
from halvm_prof.cli.plain import DEBUG, error_message
from halvm_prof.errors import HalvmProfError, InputError


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """Turn library and OS errors into ``click.ClickException`` (one line, exit 1)."""
    try:
        yield
    except (click.ClickException, click.exceptions.Exit, click.Abort):
        raise
    except HalvmProfError as e:
        raise click.ClickException(error_message(e)) from e
    except BrokenPipeError as e:
        # The reader of our stdout went away (e.g. `| head`): not an error of ours.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        raise click.exceptions.Exit(0) from e
    except KeyboardInterrupt as e:
        raise click.Abort() from e
    except OSError as e:
        raise click.ClickException(error_message(e)) from e
    except Exception as e:
        if os.environ.get(DEBUG):
            raise
        raise click.ClickException(error_message(e)) from e


class _OneLinePath(click.Path):
    """``click.Path`` whose refusals are one-line errors naming the path, with exit 1: a path
    that is missing or a folder is a fault in what the user gave, not a usage mistake (click
    would print its usage block and exit 2)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as e:
            raise click.ClickException(str(_path_error(value, self, e))) from e


def _path_error(value: Any, kind: click.Path, e: click.BadParameter) -> InputError:
    path = os.fsdecode(value)
    if not os.path.lexists(path):
        what = "folder" if not kind.file_okay else "file"
        return InputError(f"no such {what}", path=path, hint="check the path")
    if os.path.isdir(path) and not kind.dir_okay:
        return InputError("is a folder, not a file", path=path, hint="name a file")
    if not os.path.isdir(path) and not kind.file_okay:
        return InputError("is not a folder", path=path, hint="name a folder")
    return InputError(e.format_message(), path=path)


def one_line_paths(command: click.Command) -> click.Command:
    """Make every path parameter of ``command`` (and its subcommands) refuse in one line."""
    for param in command.params:
        if type(param.type) is click.Path:
            param.type.__class__ = _OneLinePath
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            one_line_paths(sub)
    return command


class HalvmCommand(click.Command):
    """A command whose library errors become one-line messages, and whose notes on the outputs
    it replaced (``files.output.notes_to``: a hard link broken, an owner not kept) go to
    standard error."""

    def invoke(self, ctx: click.Context) -> Any:
        with translate_errors(), _output_notes():
            return super().invoke(ctx)


class HalvmGroup(click.Group):
    """A group whose subcommands' library errors become one-line messages, and their notes on
    outputs lines on standard error."""

    command_class = HalvmCommand

    def invoke(self, ctx: click.Context) -> Any:
        with translate_errors(), _output_notes():
            return super().invoke(ctx)


def _output_notes() -> contextlib.AbstractContextManager[None]:
    from halvm_prof.cli.common import to_stderr
    from halvm_prof.files.output import notes_to

    return notes_to(to_stderr)


#: Command name -> (module under halvm_prof.cli, attribute, the command's short help). A
#: command's module is imported only when that command runs, so ``summary`` does not pay for
#: jinja2, construct or libxlutil at every start, and ``halvm-prof --help`` lists the commands
#: from here without importing any (tests/cli/test_help.py holds each help equal to the
#: command's own).
_COMMANDS: dict[str, tuple[str, str, str]] = {
    "demo": (
        "demo",
        "demo",
        "Write bundled real GHC profiles onto HaLVM disks in DIRECTORY, crash one, recover both.",
    ),
    "diff": (
        "diff",
        "diff",
        "Compare two cost-centre (.prof) or two heap profiles (.hp, eventlog, disk image); or, "
        "with --against, one file with a stored run.",
    ),
    "disk": (
        "disk",
        "disk",
        "Create, write and inspect HaLVM profiling disk images.",
    ),
    "eventlog": (
        "eventlog",
        "eventlog",
        "Read GHC eventlogs (+RTS -l): print their events, or sum them up.",
    ),
    "export": (
        "export",
        "export",
        "Export FILE: a cost-centre profile (.prof, text or -pj) as flame-graph input, an "
        "eventlog's runtime timeline (--to perfetto or chrome-trace), or any profile as pprof "
        "(--to pprof: a .prof, an eventlog's time-profile samples, a heap census of a .hp, "
        "eventlog or disk).",
    ),
    "extract": (
        "convert",
        "extract",
        "Extract the profile on DISK into OUTPUT, recovering what a crash left.",
    ),
    "hunt": (
        "hunt",
        "hunt",
        "Hunt a leak: run a profiled program (after --) under the heap profiling modes that say "
        "what is kept, who made it, who holds it and whether it is used again, and give a "
        "verdict per suspect with its fix and how sure it is; or, with --from, read the "
        "profiles a user already has.",
    ),
    "live": (
        "live",
        "live",
        "Watch SOURCE while it is written: a .hp file, an eventlog file or FIFO, a HaLVM heap "
        "disk, or unix:PATH / tcp:HOST:PORT streaming an eventlog.",
    ),
    "perf": (
        "perf",
        "perf",
        "Flat profiles of perf.data files of GHC programs, and their place on the eventlog.",
    ),
    "postmortem": (
        "postmortem",
        "postmortem",
        "Judge a run from its profiling disks, or the .hp, .prof and eventlog FILES it left: "
        "closed or crashed, what was recovered, the trend.",
    ),
    "prepare": (
        "xen",
        "prepare",
        "Create sized disks and the xl config for a profiled run of KERNEL, and say what to run.",
    ),
    "record": (
        "perf",
        "record",
        "Run PROGRAM under perf (cpu-clock, CLOCK_MONOTONIC) into a run folder, or attach to a "
        "running one with --pid.",
    ),
    "report": (
        "report",
        "report",
        "Write one self-contained HTML report of FILES (.hp, .prof, eventlog) to OUTPUT.",
    ),
    "run": (
        "live",
        "run",
        "Start a GHC program (after --) with a heap profile and an eventlog, and watch it live.",
    ),
    "runs": (
        "runs",
        "runs",
        "Keep every run's figures; list, compare and chart them across runs.",
    ),
    "snapshot": (
        "snapshot",
        "snapshot",
        "Read a heap snapshot (taken by the HalvmSnapshot module): each root's retained size, "
        "what holds most and through which path, thunks against evaluated data; diff two; "
        "write the module.",
    ),
    "summary": (
        "summary",
        "summary",
        "Summarise FILE: a heap profile (.hp or eventlog), a cost-centre report (.prof), a "
        "ticky-ticky report (+RTS -r) or a HaLVM profiling disk.",
    ),
    "xen-config": (
        "xen",
        "xen_config",
        "Write the xl config of a profiled HaLVM run (or `check` an existing one).",
    ),
}


class _RootGroup(HalvmGroup):
    """The ``halvm-prof`` group, loading each command from :data:`_COMMANDS` on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in _COMMANDS:
            return None
        from halvm_prof.collector import few_collections

        module_name, attribute, _ = _COMMANDS[cmd_name]
        # A command's imports make tens of thousands of objects (classes, functions) and no
        # garbage: the cycle collector, run every 700, was a few percent of a short command.
        with few_collections():
            module = importlib.import_module(f"halvm_prof.cli.{module_name}")
        command = getattr(module, attribute)
        assert isinstance(command, click.Command)
        return one_line_paths(command)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help``, as click writes it, from :data:`_COMMANDS`."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names))
        # A bare Command shortens the help exactly as the real one would.
        rows = [
            (name, click.Command(name, help=_COMMANDS[name][2]).get_short_help_str(limit))
            for name in names
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


HalvmGroup.group_class = HalvmGroup


@click.group(cls=_RootGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="halvm-prof")
def cli() -> None:
    """Get GHC profiles out of HaLVM unikernels and make them understandable."""


def main() -> None:
    """Entry point of the ``halvm-prof`` command."""
    from halvm_prof.files.output import install_signal_cleanup, remove_stale_temporaries_near

    install_signal_cleanup()
    remove_stale_temporaries_near(sys.argv[1:])
    cli(prog_name="halvm-prof")
