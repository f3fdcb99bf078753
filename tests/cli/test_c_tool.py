"""``convert-profile DISK FILE`` runs without click (:mod:`halvm_prof.cli.c_tool`): it must say
and write exactly what the click command says and writes, for every outcome."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from halvm_prof.disk.image import create_image
from halvm_prof.disk.layout import encode_status
from halvm_prof.disk.writer import write_profile
from tests.conftest import CORPUS

ROOT = Path(__file__).resolve().parents[2]

# The plain form notes in the file named by $CLICK_SEEN whether click was imported at exit.
PLAIN = (
    "import atexit, os, sys\n"
    "seen = os.environ.get('CLICK_SEEN')\n"
    "if seen:\n"
    "    atexit.register(lambda: open(seen, 'w').write(str('click' in sys.modules)))\n"
    "from halvm_prof.cli.c_tool import main; main()"
)
CLICK = "from halvm_prof.cli.convert import convert_profile_main as m; m()"


def _run(
    code: str, *args: str | Path, seen: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if seen is not None:
        env["CLICK_SEEN"] = str(seen)
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env=env,
    )


def _crashed(tmp: Path) -> Path:
    disk = tmp / "crashed.disk"
    create_image(disk, 1 << 20)
    write_profile(CORPUS / "leaky-hc.hp", disk, crash_after=5000)
    return disk


def _cases(tmp: Path) -> dict[str, tuple[list[str | Path], Path | None]]:
    """Name -> (arguments, the output file whose bytes both runs must leave alike)."""
    hp_disk, prof_disk = (
        ROOT / "disk_images" / "demo-hp.disk",
        ROOT / "disk_images" / "demo-prof.disk",
    )
    other_disk = tmp / "other.disk"
    shutil.copyfile(prof_disk, other_disk)
    blank = tmp / "blank.disk"
    create_image(blank, 1 << 16)
    cut = tmp / "cut.disk"
    cut.write_bytes(encode_status(1 << 30, True, 8))
    existing = tmp / "existing.hp"
    existing.write_text("old\n")
    return {
        "clean heap profile": ([hp_disk, tmp / "new.hp"], tmp / "new.hp"),
        "clean time profile": ([prof_disk, tmp / "new.prof"], tmp / "new.prof"),
        "over an ordinary file": ([hp_disk, existing], existing),
        "crashed": ([_crashed(tmp), tmp / "rec.hp"], tmp / "rec.hp"),
        "onto a disk that holds a profile": ([hp_disk, other_disk], other_disk),
        "onto itself": ([other_disk, other_disk], other_disk),
        "blank disk": ([blank, tmp / "b.out"], tmp / "b.out"),
        "cut disk": ([cut, tmp / "c.out"], tmp / "c.out"),
        "arguments swapped": ([CORPUS / "leaky-hc.hp", tmp / "s.out"], tmp / "s.out"),
        "into a missing folder": ([hp_disk, tmp / "nowhere" / "x.hp"], None),
    }


@pytest.mark.parametrize(
    "case",
    [
        "clean heap profile",
        "clean time profile",
        "over an ordinary file",
        "crashed",
        "onto a disk that holds a profile",
        "onto itself",
        "blank disk",
        "cut disk",
        "arguments swapped",
        "into a missing folder",
    ],
)
def test_the_plain_form_says_and_writes_what_the_click_command_does(
    tmp_path: Path, case: str
) -> None:
    results: list[tuple[int, str, str, bytes | None, list[str]]] = []
    seen = tmp_path / "click-seen"
    for form in (PLAIN, CLICK):
        work = tmp_path / ("plain" if form is PLAIN else "click")
        work.mkdir()
        args, output = _cases(work)[case]
        done = _run(form, *args, seen=seen if form is PLAIN else None)
        out, err = (s.replace(str(work), "WORK") for s in (done.stdout, done.stderr))
        written = output.read_bytes() if output is not None and output.exists() else None
        listing = sorted(p.name for p in work.iterdir())
        results.append((done.returncode, out, err, written, listing))
    assert results[0] == results[1]
    assert seen.read_text() == "False", "the plain form went to click"
    code, _, err, _, _ = results[0]
    assert code in (0, 1), err
    assert (err.count("\n") == 1) if code else err == "", err


@pytest.mark.parametrize(
    "args",
    [["--raw"], ["--force"], ["-"], ["--help"], ["--version"], []],
    ids=["raw", "force", "stdout", "help", "version", "no output"],
)
def test_every_other_command_line_goes_to_the_click_command(
    tmp_path: Path, args: list[str]
) -> None:
    disk = ROOT / "disk_images" / "demo-hp.disk"
    full: list[str | Path] = (
        [disk, *args] if args in (["-"], []) else [disk, tmp_path / "o.hp", *args]
    )
    if args == ["--help"] or args == ["--version"]:
        full = [*args]
    plain = _run(PLAIN, *full)
    click = _run(CLICK, *full)
    assert (plain.returncode, plain.stdout, plain.stderr) == (
        click.returncode,
        click.stdout,
        click.stderr,
    )


def test_completion_is_left_to_click() -> None:
    env = dict(os.environ, _CONVERT_PROFILE_COMPLETE="bash_source")
    done = subprocess.run(
        [sys.executable, "-c", PLAIN, "a", "b"], capture_output=True, text=True, env=env
    )
    assert "complete" in done.stdout, done.stdout + done.stderr
