"""The disk commands and convert-profile as users run them."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from pyfakefs.fake_filesystem import FakeFilesystem

from halvm_prof.cli.app import cli
from halvm_prof.cli.convert import convert_profile
from halvm_prof.disk.layout import DATA_OFFSET, encode_status
from tests.conftest import CORPUS

HP = CORPUS / "leaky-hd.hp"
PROF = CORPUS / "leaky-hc.prof"


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def convert(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(convert_profile, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def one_line_error(code: int, err: str) -> str:
    assert code == 1
    assert err.startswith("Error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def test_create_makes_a_sparse_zeroed_image(tmp_path: Path) -> None:
    disk = tmp_path / "prof.disk"
    code, out, _ = run("disk", "create", disk, "--size", "64M")
    assert code == 0 and "64.0 MiB" in out
    st = disk.stat()
    assert st.st_size == 64 << 20
    assert st.st_blocks * 512 < 1 << 20  # sparse: nearly nothing allocated
    assert stat.S_IMODE(st.st_mode) & 0o044  # readable like any plain file


def test_create_keeps_a_disk_holding_a_profile_unless_forced(tmp_path: Path) -> None:
    disk = tmp_path / "hp.disk"
    assert run("disk", "write", HP, disk)[0] == 0
    before = disk.read_bytes()
    code, _, err = run("disk", "create", disk, "--size", "1M")
    assert "holds a profile" in one_line_error(code, err) and disk.read_bytes() == before
    assert run("disk", "create", disk, "--size", "1M", "--force")[0] == 0
    assert not any(disk.read_bytes())


def test_create_keeps_other_files_and_replaces_blank_disks(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("precious")
    code, _, err = run("disk", "create", notes, "--size", "1M")
    assert "not a blank disk" in one_line_error(code, err) and notes.read_text() == "precious"
    blank = tmp_path / "blank.disk"
    assert run("disk", "create", blank, "--size", "1M")[0] == 0
    assert run("disk", "create", blank, "--size", "2M")[0] == 0
    assert blank.stat().st_size == 2 << 20


@pytest.mark.parametrize("size", ["abc", "0", "12X", "-5M"])
def test_create_rejects_bad_sizes(tmp_path: Path, size: str) -> None:
    code, _, err = run("disk", "create", tmp_path / "d", "--size", size)
    one_line_error(code, err)
    assert not (tmp_path / "d").exists()


def test_write_refuses_to_replace_a_profile(tmp_path: Path) -> None:
    disk = tmp_path / "d.disk"
    assert run("disk", "write", PROF, disk)[0] == 0
    code, _, err = run("disk", "write", HP, disk)
    assert "holds a profile" in one_line_error(code, err)
    assert run("disk", "write", HP, disk, "--force")[0] == 0


def test_clean_conversion_matches_the_c_tool(tmp_path: Path) -> None:
    disk, out = tmp_path / "prof.disk", tmp_path / "HaLVM.prof"
    run("disk", "write", PROF, disk)
    code, stdout, _ = convert(disk, out)
    assert code == 0
    assert stdout == f"Transferring {PROF.stat().st_size} bytes\n"
    assert out.read_bytes() == PROF.read_bytes()


def test_crashed_heap_disk_warns_and_recovers(tmp_path: Path) -> None:
    disk, out = tmp_path / "hp.disk", tmp_path / "HaLVM.hp"
    code, stdout, _ = run("disk", "write", HP, disk, "--word", "4", "--crash-after", "30")
    assert code == 0 and "crashed after 30 sector writes" in stdout
    code, stdout, _ = convert(disk, out)
    lines = stdout.splitlines()
    assert code == 0
    assert lines[0] == "WARNING: Profile not cleanly closed."
    assert lines[-1] == f"Transferring {out.stat().st_size} bytes"
    samples = out.read_bytes().count(b"\nEND_SAMPLE ")
    assert f"Recovered {samples} complete heap samples" in lines
    assert HP.read_bytes().startswith(out.read_bytes())


def test_extract_json_report(tmp_path: Path) -> None:
    disk, out = tmp_path / "hp.disk", tmp_path / "x.hp"
    run("disk", "write", HP, disk, "--crash-after", "30")
    code, stdout, _ = run("extract", disk, "-o", out, "--json")
    report = json.loads(stdout)
    assert code == 0
    assert report["output"] == str(out)
    assert report["bytes_written"] == out.stat().st_size
    assert report["closed"] is False and report["header"] == "ok" and report["word"] == 8
    assert report["recovered_samples"] == out.read_bytes().count(b"\nEND_SAMPLE ")
    committed = report["committed_size"]
    assert report["dropped_bytes"] >= committed - report["bytes_written"] >= 0
    assert list(report) == sorted(report)


def test_info_text_and_json(tmp_path: Path) -> None:
    disk = tmp_path / "hp.disk"
    run("disk", "write", HP, disk, "--word", "4")
    code, stdout, _ = run("disk", "info", disk)
    assert code == 0
    assert "4 bytes (i386 guest)" in stdout and "ok (64 of 64 copies agree)" in stdout
    assert f"{HP.read_bytes().count(b'END_SAMPLE')} complete heap samples" in stdout
    info = json.loads(run("disk", "info", disk, "--json")[1])
    assert info["closed"] is True and info["committed_size"] == HP.stat().st_size
    assert info["kind"] == "hp" and info["header"] == "ok" and info["past_commit_bytes"] == 0
    # A repaired header says so.
    with open(disk, "r+b") as f:
        f.write(b"\xff" * 8)
    info = json.loads(run("disk", "info", disk, "--json")[1])
    assert (info["header"], info["agreeing"], info["pairs"]) == ("repaired", 63, 64)
    code, stdout, _ = convert(disk, tmp_path / "o.hp")
    assert "repaired" in stdout and code == 0


def test_info_describes_a_corrupt_disk_without_failing(tmp_path: Path) -> None:
    disk = tmp_path / "r.disk"
    disk.write_bytes(os.urandom(512) + HP.read_bytes()[:2000])
    code, stdout, _ = run("disk", "info", disk)
    assert code == 0 and "corrupt" in stdout


def test_info_of_random_bytes_is_one_line_and_exit_1(tmp_path: Path) -> None:
    disk = tmp_path / "r.disk"
    disk.write_bytes(os.urandom(4096))
    err = one_line_error(*run("disk", "info", disk)[::2])
    assert "not a HaLVM profiling disk" in err


def test_the_disk_is_only_read(tmp_path: Path) -> None:
    disk = tmp_path / "hp.disk"
    run("disk", "write", HP, disk, "--crash-after", "20")
    disk.chmod(0o444)
    before = disk.read_bytes(), disk.stat().st_mtime_ns
    assert convert(disk, tmp_path / "out.hp")[0] == 0
    assert run("extract", disk, "-o", tmp_path / "o2")[0] == 0
    assert (disk.read_bytes(), disk.stat().st_mtime_ns) == before


def test_output_onto_the_disk_itself_is_refused(tmp_path: Path) -> None:
    disk = tmp_path / "hp.disk"
    run("disk", "write", HP, disk)
    before = disk.read_bytes()
    code, _, err = convert(disk, disk)
    assert "disk being read" in one_line_error(code, err) and disk.read_bytes() == before


def test_failed_conversion_leaves_the_old_output(tmp_path: Path) -> None:
    out = tmp_path / "HaLVM.hp"
    out.write_text("old")
    bad = tmp_path / "bad.disk"
    bad.write_bytes(bytes(DATA_OFFSET + 100))
    code, _, err = convert(bad, out)
    assert "holds no profile" in one_line_error(code, err)
    assert out.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["HaLVM.hp", "bad.disk"]


@pytest.mark.parametrize(
    "content",
    [b"", b"\0" * 100, bytes(1 << 16), os.urandom(1 << 16), encode_status(1 << 30, True, 8)],
    ids=["empty", "short", "zeroed", "random", "short-of-header"],
)
def test_bad_images_fail_fast_in_a_real_process(tmp_path: Path, content: bytes) -> None:
    disk = tmp_path / "bad.disk"
    disk.write_bytes(content)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from halvm_prof.cli.c_tool import main; main()",
            str(disk),
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=20,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "bad.disk" in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert convert(tmp_path / "only-one-arg").__getitem__(0) == 2
    assert run("disk", "write", HP, tmp_path / "d", "--word", "3")[0] == 2
    assert run("disk", "write", HP, tmp_path / "d", "--crash-after", "0")[0] == 2


def test_missing_and_unreadable_inputs(fs: FakeFilesystem) -> None:
    fs.create_file("/work/hp.disk", contents=b"x" * 600)
    code, _, err = convert("/nowhere.disk", "/work/out")
    assert "/nowhere.disk: no such file" in one_line_error(code, err)
    code, _, err = convert("/work", "/work/out")
    assert "/work: is a folder, not a file" in one_line_error(code, err)
    code, _, err = convert("/work/hp.disk", "/missing-dir/out")
    one_line_error(code, err)
    code, _, err = run("disk", "create", "/missing-dir/x.disk", "--size", "1M")
    assert "/missing-dir" in one_line_error(code, err)


def test_info_on_a_fake_file_system(fs: FakeFilesystem) -> None:
    fs.create_file("/d/hp.disk", contents=encode_status(3, True, 8) + b"JOB" + bytes(600))
    code, stdout, _ = run("disk", "info", "/d/hp.disk", "--json")
    info = json.loads(stdout)
    assert code == 0 and info["kind"] == "hp" and info["recoverable_bytes"] == 3
    assert convert("/d/hp.disk", "/d/out.hp")[0] == 0
    with open("/d/out.hp", "rb") as f:
        assert f.read() == b"JOB"


@pytest.mark.parametrize(
    ("name", "looks"),
    [
        ("leaky-hc.prof", ".prof text report"),
        ("leaky-hc.hp", "heap profile (.hp)"),
        ("leaky-hT.eventlog", "GHC eventlog"),
    ],
)
def test_swapped_convert_profile_arguments_are_told_apart(
    tmp_path: Path, name: str, looks: str
) -> None:
    # `convert-profile HaLVM.prof prof.disk` instead of `convert-profile prof.disk HaLVM.prof`.
    profile = tmp_path / name
    profile.write_bytes((CORPUS / name).read_bytes())
    disk = tmp_path / "prof.disk"
    assert run("disk", "create", disk, "--size", "1M")[0] == 0
    code, out, err = convert(profile, disk)
    msg = one_line_error(code, err)
    assert f"{profile}: this looks like a {looks}, not a disk image" in msg
    assert "the disk image comes first: convert-profile DISK FILE" in msg and out == ""
    # A profile shorter than a sector is told apart the same way.
    short = tmp_path / "short.hp"
    short.write_bytes(b'JOB "x"\n')
    assert "this looks like a heap profile (.hp)" in one_line_error(*convert(short, disk)[::2])
    code, out, _ = run("extract", profile, "-o", tmp_path / "out")
    assert code == 1 and not (tmp_path / "out").exists()


def test_convert_profile_version() -> None:
    from halvm_prof import __version__

    code, out, err = convert("--version")
    assert code == 0 and out == f"convert-profile (halvm-prof), version {__version__}\n", err


@pytest.mark.parametrize("kind", ["hp", "prof", "html", "text", "short"])
def test_write_keeps_a_file_that_is_no_disk_image(tmp_path: Path, kind: str) -> None:
    """`disk write` over a .hp, a report or any text wrote its sectors in place (issue 33)."""
    given = {
        "hp": Path(HP).read_bytes(),
        "prof": Path(PROF).read_bytes(),
        "html": b"<!doctype html><html><body>report</body></html>\n" * 200,
        "text": b"precious notes\n" * 100,
        "short": b"x",
    }[kind]
    target = tmp_path / f"victim.{kind}"
    target.write_bytes(given)
    code, _, err = run("disk", "write", HP, target)
    line = one_line_error(code, err)
    assert "not a disk image" in line and "victim" in line and "--force" in line
    assert target.read_bytes() == given
    # --force passes this check (the file may then be too small for the profile).
    code, _, err = run("disk", "write", HP, target, "--force")
    assert "not a disk image" not in err


def test_write_goes_onto_a_blank_disk(tmp_path: Path) -> None:
    blank = tmp_path / "blank.disk"
    assert run("disk", "create", blank, "--size", "1M")[0] == 0
    assert run("disk", "write", HP, blank)[0] == 0


@pytest.mark.parametrize(
    "size", ["99999999999G", str(2**63 - 1), str(2**64), "2000T", "9" * 40 + "T"]
)
def test_create_refuses_a_size_no_disk_has_in_one_line(tmp_path: Path, size: str) -> None:
    """`disk create --size 99999999999G` (and 2**63-1, 2**64) was an internal OverflowError."""
    disk = tmp_path / "huge.disk"
    code, _, err = run("disk", "create", disk, "--size", size)
    line = one_line_error(code, err)
    assert "larger than halvm-prof makes" in line and "huge.disk" in line
    assert not disk.exists()


def test_disk_size_never_suggests_a_disk_create_refuses(tmp_path: Path) -> None:
    code, out, err = run("disk", "size", "--rts", "-p -hc -i0.000001", "--duration", "99999999999h")
    line = one_line_error(code, err)
    assert "more than a disk halvm-prof makes" in line and "-i" in line
    assert "disk create" not in out
