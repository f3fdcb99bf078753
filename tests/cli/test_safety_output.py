"""What an output path may be, and the one overwrite policy of every command that writes.

Commands that could hang (a FIFO) run in a child with a timeout, so a regression fails instead
of stopping the suite.
"""

from __future__ import annotations

import os
import pty
import shutil
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.files.output import TEMP_MARK, atomic_write
from tests.conftest import CORPUS, DATA
from tests.unit.test_xen import build_ghc_programs

HP = CORPUS / "leaky-hc.hp"
PROF = CORPUS / "leaky-hc.prof"
PERF = DATA / "perf"
ROOT = Path(__file__).resolve().parents[2]


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def child(*args: str | Path, timeout: float = 20) -> subprocess.CompletedProcess[bytes]:
    """Run ``halvm-prof ARGS`` in a child process (``TimeoutExpired`` means it hung)."""
    return subprocess.run(
        [sys.executable, "-m", "halvm_prof", *map(str, args)],
        capture_output=True,
        timeout=timeout,
        cwd=ROOT,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
        stdin=subprocess.DEVNULL,
    )


def one_line_error(code: int, err: str) -> str:
    assert code == 1, err
    assert err.startswith("Error: ") and err.count("\n") == 1, err
    return err


def profile_disk(tmp_path: Path, name: str = "hp.disk") -> Path:
    disk = tmp_path / name
    assert run("disk", "write", HP, disk)[0] == 0
    return disk


def _writers(tmp_path: Path) -> dict[str, Callable[[Path], list[str | Path]]]:
    """Every command that writes an output, as argument lists for a given output path."""
    disk = profile_disk(tmp_path, "source.disk")
    cfg = tmp_path / "run.cfg"
    cfg.write_text('name = "x"\nkernel = "k"\nmemory = 64\n')
    return {
        "report": lambda out: ["report", HP, "-o", out],
        "export": lambda out: ["export", PROF, "--to", "folded", "-o", out],
        "extract": lambda out: ["extract", disk, "-o", out, "--force"],
        "convert-profile": lambda out: ["convert-profile", disk, out],
        "postmortem": lambda out: ["postmortem", "--hp-disk", disk, "-o", out],
        "perf report": lambda out: [
            "perf",
            "report",
            PERF / "work",
            PERF / "work.perf.data",
            "--export",
            out,
            "--to",
            "folded",
        ],
        "perf merge": lambda out: [
            "perf",
            "merge",
            PERF / "work.perf.data",
            PERF / "work.eventlog",
            "--binary",
            PERF / "work",
            "--perfetto",
            out,
        ],
        "xen-config": lambda out: [
            "xen-config",
            "--kernel",
            "k",
            "--memory",
            "64",
            "--rts",
            "-hc",
            "--hp-disk",
            "hp.disk",
            "-o",
            out,
            "--force",
        ],
    }


def _invoke(args: list[str | Path]) -> tuple[int, str, str]:
    if args[0] == "convert-profile":
        from halvm_prof.cli.convert import convert_profile

        result = CliRunner().invoke(convert_profile, [str(a) for a in args[1:]])
        return result.exit_code, result.stdout, result.stderr
    return run(*args)


#: The commands that write an output file a user may already have (a device, a linked file).
WRITERS = [
    "report",
    "export",
    "extract",
    "convert-profile",
    "postmortem",
    "xen-config",
    "perf report",
    "perf merge",
]


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
@pytest.mark.parametrize("command", WRITERS)
def test_a_device_output_is_written_through_never_replaced(tmp_path: Path, command: str) -> None:
    node = tmp_path / "null"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
    code, _, err = _invoke(_writers(tmp_path)[command](node))
    assert code == 0, err
    assert stat.S_ISCHR(node.lstat().st_mode)
    assert not [p for p in tmp_path.iterdir() if TEMP_MARK in p.name]


def test_a_fifo_output_without_reader_is_refused_at_once(tmp_path: Path) -> None:
    disk = profile_disk(tmp_path)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    cases: list[list[str | Path]] = [["extract", disk, "-o", fifo], ["convert-profile", disk, fifo]]
    for args in cases:
        if args[0] == "convert-profile":
            proc = subprocess.run(
                [sys.executable, "-c", "from halvm_prof.cli.c_tool import main; main()",
                 *map(str, args[1:])],
                capture_output=True, timeout=20, cwd=ROOT, stdin=subprocess.DEVNULL,
                env=os.environ | {"PYTHONPATH": str(ROOT)},
            )  # fmt: skip
        else:
            proc = child(*args)
        err = one_line_error(proc.returncode, proc.stderr.decode())
        assert "nobody is reading" in err
        assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_fifo_output_with_a_reader_gets_the_profile(tmp_path: Path) -> None:
    disk = profile_disk(tmp_path)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as f:
            got.append(f.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    # The reader must be waiting before the writer opens the FIFO without blocking.
    for _ in range(200):
        proc = child("extract", disk, "-o", fifo)
        if proc.returncode == 0:
            break
        assert b"nobody is reading" in proc.stderr
    reader.join(10)
    assert got == [HP.read_bytes()]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_symlink_output_replaces_its_target_and_stays_a_link(tmp_path: Path) -> None:
    target = tmp_path / "real.html"
    target.write_text("old")
    link = tmp_path / "link.html"
    link.symlink_to(target.name)
    assert run("report", HP, "-o", link)[0] == 0
    assert link.is_symlink()
    assert target.read_text().startswith("<!DOCTYPE html>")


def test_a_dangling_symlink_output_is_refused_as_cp_does(tmp_path: Path) -> None:
    link = tmp_path / "link.html"
    link.symlink_to("nowhere/real.html")
    err = one_line_error(*run("report", HP, "-o", link)[::2])
    assert "does not exist" in err
    assert link.is_symlink()


@pytest.mark.parametrize("command", ["report", "export", "postmortem", "perf report", "perf merge"])
def test_a_disk_holding_a_profile_is_never_replaced_without_force(
    tmp_path: Path, command: str
) -> None:
    victim = profile_disk(tmp_path, "victim.disk")
    before = victim.read_bytes()
    args = _writers(tmp_path)[command](victim)
    err = one_line_error(*_invoke(args)[::2])
    assert "still holds a profile" in err
    assert victim.read_bytes() == before
    assert _invoke([*args, "--force"])[0] == 0
    assert victim.read_bytes() != before


def test_extract_keeps_an_existing_file_unless_forced_as_its_help_says(tmp_path: Path) -> None:
    disk = profile_disk(tmp_path)
    out = tmp_path / "existing.hp"
    out.write_text("keep me")
    err = one_line_error(*run("extract", disk, "-o", out)[::2])
    assert "already exists" in err and out.read_text() == "keep me"
    assert run("extract", disk, "-o", out, "--force")[0] == 0
    assert out.read_bytes() == HP.read_bytes()
    _, out_text, _ = run("extract", "--help")
    assert "Replace an existing output" in out_text


def test_an_input_is_never_the_output_even_with_force(tmp_path: Path) -> None:
    hp = tmp_path / "a.hp"
    hp.write_bytes(HP.read_bytes())
    err = one_line_error(*run("report", hp, "-o", hp, "--force")[::2])
    assert "is also an input" in err
    assert hp.read_bytes() == HP.read_bytes()


def test_no_output_is_a_file_the_command_reads_or_names_even_with_force(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    # runs report: the store it reads (was replaced by the page).
    store = tmp_path / "runs.sqlite"
    url = f"sqlite:///{store}"
    assert run("runs", "add", PROF, "--store", url)[0] == 0
    before = store.read_bytes()
    err = one_line_error(*run("runs", "report", "-o", store, "--store", url, "--force")[::2])
    assert f"{store}: is also an input" in err and store.read_bytes() == before
    # xen-config: the kernel and disks the config names (were replaced by the config).
    kernel, disk = tmp_path / "app.elf", tmp_path / "app-prof.disk"
    kernel.write_bytes(b"\x7fELF a kernel")
    disk.write_bytes(b"\0" * 4096)
    config: list[str | Path] = ["xen-config", "--kernel", kernel, "--memory", "64", "--rts", "-p"]
    config += ["--prof-disk", disk, "--force"]
    for named in (kernel, disk):
        err = one_line_error(*run(*config, "-o", named)[::2])
        assert f"{named}: is also an input" in err
    assert kernel.read_bytes() == b"\x7fELF a kernel" and disk.read_bytes() == b"\0" * 4096
    # prepare: the kernel it reads, as one of the disks it makes (was made a blank disk).
    shutil.copy(build_ghc_programs()["profiled"], tmp_path / "vm-prof.disk")
    before = (tmp_path / "vm-prof.disk").read_bytes()
    prepare = ["prepare", "vm-prof.disk", "--name", "vm", "--memory", "64", "--rts", "-p -hc"]
    err = one_line_error(*run(*prepare, "--disk-dir", ".", "--force")[::2])
    assert f"{tmp_path / 'vm-prof.disk'}: is also an input" in err
    assert (tmp_path / "vm-prof.disk").read_bytes() == before
    assert not (tmp_path / "xen_configs").exists()


def test_the_rename_never_removes_the_old_output_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out.txt"
    out.write_text("old")
    removed: list[str] = []
    real_unlink = os.unlink

    def unlink(path: str | os.PathLike[str], *a: object, **k: object) -> None:
        removed.append(os.fspath(path))
        real_unlink(path)

    monkeypatch.setattr(os, "unlink", unlink)
    with atomic_write(out) as f:
        f.write("new")
    assert out.read_text() == "new"
    assert str(out) not in removed  # a reader always finds the old or the new file


# The child writes half the file, sends itself the signal, and finishes the file if it lives on.
_SIGNALLED_WRITER = (
    "import os, sys\n"
    "from halvm_prof.files.output import atomic_write, install_signal_cleanup\n"
    "install_signal_cleanup()\n"
    "with atomic_write(sys.argv[1]) as f:\n"
    "    f.write('half'); f.flush()\n"
    "    os.kill(os.getpid(), int(sys.argv[2]))\n"
    "    f.write(' and the rest')\n"
)


def _signalled_writer(
    out: Path, signum: int, disposition: signal.Handlers
) -> subprocess.CompletedProcess[bytes]:
    """Run the writer with ``signum``'s disposition set in the child, whatever ours is: under
    ``nohup`` (or a CI runner that ignores SIGHUP) the test process ignores SIGHUP, and a child
    inherits that through exec."""

    def dispose() -> None:
        signal.signal(signum, disposition)

    return subprocess.run(
        [sys.executable, "-c", _SIGNALLED_WRITER, str(out), str(int(signum))],
        timeout=20,
        cwd=ROOT,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
        capture_output=True,
        preexec_fn=dispose,
    )


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_remove_the_temporary_file(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "out.txt"
    out.write_text("old")
    proc = _signalled_writer(out, signum, signal.SIG_DFL)
    assert proc.returncode == -signum, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]
    assert out.read_text() == "old"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_an_ignored_signal_stays_ignored_and_the_output_is_written_whole(
    tmp_path: Path, signum: int
) -> None:
    # nohup ignores SIGHUP so that the command outlives its terminal: the clean-up handler must
    # not take that over and die of a hang-up the user asked to survive.
    out = tmp_path / "out.txt"
    out.write_text("old")
    proc = _signalled_writer(out, signum, signal.SIG_IGN)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]
    assert out.read_text() == "half and the rest"


def test_dash_writes_extract_and_convert_profile_to_stdout(tmp_path: Path) -> None:
    disk = profile_disk(tmp_path)
    proc = child("extract", disk, "-o", "-")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == HP.read_bytes()
    assert b"wrote" in proc.stderr
    assert not (ROOT / "-").exists() and not (tmp_path / "-").exists()


def test_dash_writes_report_html_to_a_pipe(tmp_path: Path) -> None:
    proc = child("report", HP, "-o", "-")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(b"<!DOCTYPE html>")
    assert not (ROOT / "-").exists()


def test_dash_refuses_an_html_page_onto_a_terminal(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "halvm_prof", "report", str(HP), "-o", "-"],
            stdout=follower,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            timeout=20,
            cwd=ROOT,
            env=os.environ | {"PYTHONPATH": str(ROOT)},
        )
    finally:
        os.close(follower)
        os.close(leader)
    err = one_line_error(proc.returncode, proc.stderr.decode())
    assert "terminal" in err


def test_dash_export_and_xen_config_print(tmp_path: Path) -> None:
    code, out, _ = run("export", PROF, "-o", "-")
    assert code == 0 and out and not Path("-").exists()
    code, out, _ = run(
        "xen-config", "--kernel", "k", "--memory", "64", "--rts", "-hc", "--hp-disk", "d", "-o", "-"
    )
    assert code == 0 and "memory" in out and not Path("-").exists()


def test_disk_create_and_write_refuse_a_fifo_without_opening_it(tmp_path: Path) -> None:
    fifo = tmp_path / "disk.fifo"
    os.mkfifo(fifo)
    cases: list[list[str | Path]] = [
        ["disk", "create", fifo, "--size", "1M"],
        ["disk", "write", HP, fifo],
    ]
    for args in cases:
        proc = child(*args)
        err = one_line_error(proc.returncode, proc.stderr.decode())
        assert "FIFO" in err
        assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_disk_write_from_an_endless_stream_stops_at_the_disk_end(tmp_path: Path) -> None:
    disk = tmp_path / "new.disk"
    assert run("disk", "create", disk, "--size", "1M")[0] == 0
    # An endless stream that begins as a heap profile (one of zeros alone is no profile).
    fifo = tmp_path / "endless.fifo"
    os.mkfifo(fifo)
    end = os.open(fifo, os.O_RDWR)  # read-write: opening does not wait for a reader
    try:
        writer = subprocess.Popen(["sh", "-c", f'cat "{HP}"; exec cat /dev/zero'], stdout=end)
    finally:
        os.close(end)
    try:
        proc = child("disk", "write", fifo, disk, timeout=30)
    finally:
        writer.kill()
        writer.wait()
    err = one_line_error(proc.returncode, proc.stderr.decode())
    assert "larger than the disk" in err
    assert disk.stat().st_size == 1 << 20
    zeros = tmp_path / "zeros.disk"
    proc = child("disk", "write", "/dev/zero", zeros, timeout=30)
    err = one_line_error(proc.returncode, proc.stderr.decode())
    assert "is not a profile a HaLVM writes on a disk: this looks like an empty file" in err
    assert not zeros.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
@pytest.mark.parametrize("command", WRITERS)
def test_a_replaced_output_keeps_its_mode_and_owner_and_a_broken_link_is_said(
    tmp_path: Path, command: str
) -> None:
    # Was mode 0644 and root's, the link silently left holding the old content.
    out = tmp_path / "private.out"
    out.write_text("old")
    os.chown(out, 4321, 4322)
    out.chmod(0o640)
    other = tmp_path / "other-name.out"
    os.link(out, other)
    code, _, err = _invoke(_writers(tmp_path)[command](out))
    assert code == 0, err
    st = out.stat()
    assert stat.S_IMODE(st.st_mode) == 0o640 and (st.st_uid, st.st_gid) == (4321, 4322)
    assert out.read_bytes() != b"old" and other.read_text() == "old"
    assert f"note: {out} had 1 other hard link, which keeps the old content" in err, err
    assert st.st_nlink == 1


def test_a_replaced_output_of_our_own_keeps_its_mode_and_no_note_is_said(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    out.write_text("old")
    out.chmod(0o600)
    code, _, err = run("report", HP, "-o", out)
    assert code == 0 and "note:" not in err, err
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


@pytest.mark.parametrize("command", WRITERS)
def test_an_output_ending_with_a_slash_names_a_folder(tmp_path: Path, command: str) -> None:
    out = tmp_path / "out.file"
    args = [f"{a}/" if a == out else a for a in _writers(tmp_path)[command](out)]
    code, _, err = _invoke(args)
    # Was 'wrote out.file/', the file out.file written.
    assert code == 1 and "ends with a slash, which names a folder" in err, err
    assert err.count("\n") == 1 and not out.exists()


@pytest.mark.skipif(not Path("/sys/kernel/profiling").is_file(), reason="no /sys/kernel/profiling")
@pytest.mark.parametrize("command", WRITERS)
def test_an_output_under_sys_is_one_line(tmp_path: Path, command: str) -> None:
    sysfs = Path("/sys/kernel/profiling")
    before = sysfs.read_bytes()
    code, _, err = _invoke(_writers(tmp_path)[command](sysfs))
    # Was 'internal error: ValueError: a status sector has 512 bytes, not 2'.
    assert code == 1 and "internal error" not in err and err.count("\n") == 1, err
    assert err.startswith("Error: /sys/kernel/") and sysfs.read_bytes() == before
