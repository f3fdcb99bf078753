"""Pipes and FIFOs as inputs, and names that would drive the terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.inputs.source import open_source
from halvm_prof.render.summary import render_summary
from tests.conftest import CORPUS
from tests.sources import summary_of

HP = CORPUS / "leaky-hc.hp"
PROF = CORPUS / "leaky-hc.prof"
ROOT = Path(__file__).resolve().parents[2]


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    "args",
    [["summary"], ["export", "--to", "folded"], ["report", "-o", "OUT"], ["diff", str(HP)]],
    ids=["summary", "export", "report", "diff"],
)
def test_a_pipe_input_is_read_once_or_refused_never_read_as_empty(
    tmp_path: Path, args: list[str]
) -> None:
    """`summary <(cat x.hp)` said "0 complete samples" and exited 0."""
    source = PROF if args[0] == "export" else HP
    data = source.read_bytes()
    read_fd, write_fd = os.pipe()
    # Fed by a thread, as `<(cat x.hp)` is fed by cat: the pipe may hold less than the file.
    import threading

    def feed() -> None:
        with os.fdopen(write_fd, "wb") as w:
            w.write(data)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        argv = [a.replace("OUT", str(tmp_path / "r.html")) for a in args]
        argv = [argv[0], f"/dev/fd/{read_fd}", *argv[1:]]
        code, out, err = run(*argv)
    finally:
        feeder.join(10)
        os.close(read_fd)
    if code == 1:  # refused: one clear line
        assert err.count("\n") == 1 and "pipe" in err, err
        return
    assert code == 0, err
    if args[0] == "summary":
        with open_source(source) as whole:
            assert out == render_summary(summary_of(whole, 10))
    if args[0] == "diff":
        assert "no change" in out


@pytest.mark.parametrize("command", [["summary"], ["extract", "-o", "OUT"], ["disk", "info"]])
def test_a_fifo_fed_once_does_not_hang(tmp_path: Path, command: list[str]) -> None:
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(
        ["sh", "-c", f'cat "{HP}" > "{fifo}"'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        argv = [a.replace("OUT", str(tmp_path / "o.hp")) for a in command]
        at = 2 if argv[0] == "disk" else 1
        proc = subprocess.run(
            [sys.executable, "-m", "halvm_prof", *argv[:at], str(fifo), *argv[at:]],
            capture_output=True,
            text=True,
            timeout=30,
            cwd=ROOT,
            env=os.environ | {"PYTHONPATH": str(ROOT)},
        )
    finally:
        # Let the writer finish: open the FIFO for reading once, then reap it.
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        os.close(fd)
        writer.kill()
        writer.wait()
    if command[0] == "summary" and proc.returncode == 0:  # read once, as a stream
        assert "7 complete" in proc.stdout, proc.stdout
        return
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert "pipe or FIFO" in proc.stderr


def test_terminal_escapes_in_job_and_program_names_are_not_printed_raw(tmp_path: Path) -> None:
    hp = tmp_path / "esc.hp"
    hp.write_text(HP.read_text().replace('JOB "', 'JOB "\x1b]0;title\x07\x1b[31m', 1))
    lines = PROF.read_text().split("\n")
    at = next(i for i, line in enumerate(lines) if "Time and Allocation Profiling Report" in line)
    lines[at + 2] = "\x1b[2J" + lines[at + 2].lstrip()
    prof = tmp_path / "esc.prof"
    prof.write_text("\n".join(lines))
    for path in (hp, prof):
        code, out, err = run("summary", path)
        assert code == 0, err
        assert "\x1b" not in out and "\x07" not in out
        assert "\\x1b" in out


def _with_fifo_fed(
    tmp_path: Path, source: Path, argv: list[str]
) -> subprocess.CompletedProcess[str]:
    """Run halvm-prof with ``argv`` (FIFO in it) while ``source`` is written into the FIFO."""
    fifo = tmp_path / "in.fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    writer = subprocess.Popen(
        ["sh", "-c", f'cat "{source}" > "{fifo}"'],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        return subprocess.run(
            [sys.executable, "-m", "halvm_prof", *(a.replace("FIFO", str(fifo)) for a in argv)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
            env=os.environ | {"PYTHONPATH": str(ROOT)},
        )
    finally:
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # lets a writer nobody read finish
        os.close(fd)
        writer.kill()
        writer.wait()


@pytest.mark.parametrize("flag", ["--hp-disk", "--prof-disk"])
def test_postmortem_of_a_fifo_names_it(tmp_path: Path, flag: str) -> None:
    """`postmortem --hp-disk FIFO` printed `Error: Illegal seek`, naming no file."""
    proc = _with_fifo_fed(tmp_path, HP, ["postmortem", flag, "FIFO"])
    assert "Illegal seek" not in proc.stdout + proc.stderr
    assert f"{tmp_path / 'in.fifo'}" in proc.stdout and "pipe or FIFO" in proc.stdout


@pytest.mark.parametrize("sample", [HP, PROF], ids=["hp", "prof"])
def test_a_sample_profile_may_be_a_fifo(tmp_path: Path, sample: Path) -> None:
    """`disk size --from-sample FIFO` (and xen-config check, prepare) printed `Error: Illegal
    seek`: a sample is read once, front to back, and measures as the file does."""
    argv = ["disk", "size", "--rts", "-p -hc -i0.5", "--duration", "10m", "--json"]
    fed = _with_fifo_fed(tmp_path, sample, [*argv, "--from-sample", "FIFO"])
    assert fed.returncode == 0, fed.stderr
    direct = CliRunner().invoke(cli, [*argv, "--from-sample", str(sample)])
    assert fed.stdout == direct.stdout.replace(str(sample), str(tmp_path / "in.fifo"))
    cfg = tmp_path / "vm.cfg"
    cfg.write_text('kernel = "k"\nmemory = 64\nextra = "+RTS -hT -RTS"\n')
    fed = _with_fifo_fed(
        tmp_path, sample, ["xen-config", "check", str(cfg), "--from-sample", "FIFO"]
    )
    assert "Illegal seek" not in fed.stdout + fed.stderr and "Traceback" not in fed.stderr
