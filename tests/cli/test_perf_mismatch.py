"""``perf merge`` and ``perf report`` refuse files that do not belong together, in one line,
before any figure is printed (real recordings of ``tests/data/perf``, README there)."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from halvm_prof.cli.app import cli
from tests.conftest import DATA, THOROUGH

PERF = DATA / "perf"
BINARY = str(PERF / "work")


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def _one_line_error(code: int, out: str, err: str) -> str:
    assert code == 1, (out, err)
    assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_merge_with_the_eventlog_of_another_run_is_refused() -> None:
    # work.perf.data (-N1) with the eventlog of the -N2 run: a real eventlog, the wrong one.
    other = str(PERF / "work-n2.eventlog")
    for extra in ([], ["--binary", BINARY], ["--json", "--binary", BINARY]):
        err = _one_line_error(*run("perf", "merge", str(PERF / "work.perf.data"), other, *extra))
        assert f"{other}: is not of the run work.perf.data recorded: none of its OS threads" in err
        assert "give the eventlog written by the run perf recorded" in err
    # The right pairs still merge, with every sample inside the run but a few at its edges.
    for stem in ("work", "work-n2", "work-late"):
        code, out, err = run("perf", "merge", str(PERF / f"{stem}.perf.data"),
                             str(PERF / f"{stem}.eventlog"), "--binary", BINARY)  # fmt: skip
        assert code == 0, err
        assert "inside the eventlog's run" in out


def test_merge_with_an_empty_eventlog_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.eventlog"
    empty.write_bytes(b"")
    err = _one_line_error(
        *run("perf", "merge", str(PERF / "work.perf.data"), str(empty), "--binary", BINARY)
    )
    assert f"{empty}: is empty" in err
    # As every other command refuses it.
    assert run("eventlog", "stats", str(empty))[0] == 1


def test_merge_and_report_with_the_wrong_binary_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copy(BINARY, other)
    data = str(PERF / "work.perf.data")
    for args in (
        ["perf", "report", str(other), data],
        ["perf", "merge", data, str(PERF / "work.eventlog"), "--binary", str(other)],
    ):
        err = _one_line_error(*run(*args))
        assert f"{other}: no process in work.perf.data ran this program" in err


@THOROUGH  # a rebuild and two readings of the binary: 9 s of CPU
def test_a_binary_rebuilt_at_the_recorded_path_is_refused_unless_forced(tmp_path: Path) -> None:
    from tests.conftest import require_program
    from tests.ghc_programs import build

    require_program("perf", "linux-perf")
    prog = tmp_path / "prog" / "ticker"
    prog.parent.mkdir()
    shutil.copy(build("Ticker", tmp_path), prog)
    rec = tmp_path / "rec"
    assert run("record", "-o", str(rec), "--", str(prog), "3")[0] == 0
    data = str(rec / "perf.data")
    original = prog.read_bytes()
    # The recorded program, read when no --binary is given, is an input: never the output.
    err = _one_line_error(*run("perf", "annotate", data, "-o", str(prog), "--force"))
    assert "is also an input" in err and prog.read_bytes() == original  # was replaced
    # Rebuilt at its recorded path (another program's bytes: another build id).
    shutil.copy(build("Leaky", tmp_path), prog)
    for args in (["perf", "annotate", data], ["perf", "report", str(prog), data]):
        # Was a full, wrong annotation with the mismatch only a note.
        err = _one_line_error(*run(*args))
        assert "is not the binary that was profiled" in err and "or --force to use this one" in err
        assert err.count("build id") == 1 and " has " in err, err
        code, _out, err = run(*args, "--force")
        assert code == 0 and "symbols may be wrong" in err, err
