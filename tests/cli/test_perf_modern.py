"""``record``, ``perf report`` and ``perf merge`` of GHC 9.6 and 9.10 ``-g`` programs, built and
run in their chroots (``tests/ghcchroot.py``): names decoded, lines and source spans read from
their DWARF, samples merged with their own eventlog."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from tests.conftest import DATA, require_program
from tests.ghc_programs import built, copy_into
from tests.ghcchroot import GHC96, GHC910, Chroot
from tests.unit.test_z_names import z_encoded

WORK = DATA / "perf" / "Work.hs"


def _run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def _record(chroot: Chroot, debug: str, folder: Path) -> tuple[Path, Path, Path]:
    """Work built with ``-O1 <debug>`` in ``folder`` (under the chroot) and recorded there:
    the binary, perf.data and the program's eventlog, as the host sees them."""
    copy_into(built(WORK, ["-O1", debug, "-rtsopts"], chroot.ghc, name="work"), folder)
    log = folder / "work.eventlog"
    code, _, err = _run(
        "record", "-F", "2000", "-o", str(folder / "rec"), "--",
        *chroot.command(["./work", "1", "+RTS", "-l", f"-ol{chroot.inside(log)}", "-RTS"], folder),
    )  # fmt: skip
    assert code == 0, err
    return folder / "work", folder / "rec" / "perf.data", log


@pytest.mark.parametrize("chroot", [GHC96, GHC910], ids=["ghc9.6", "ghc9.10"])
def test_record_report_and_merge_a_modern_g3_program(chroot: Chroot) -> None:
    require_program("perf", "linux-perf")
    with chroot.work_dir(prefix="halvm-perf-") as folder:
        binary, data, log = _record(chroot, "-g3", folder)
        code, out, err = _run("perf", "report", str(binary), str(data), "--json")
        assert code == 0, err
        report = json.loads(out)
        names = {f["name"] for f in report["functions"]}
        assert {"Main.collatz", "Main.$sgo8", "evacuate"} <= names, names
        # Every Haskell name decoded: no z-encoding, no label GHC's DWARF gives a procedure.
        # (test_z_names' rule: a C name of the runtime such as resizeNurseriesEach has "zN").
        for name in names:
            assert not z_encoded(name) and not re.search(r"\.L[0-9]{6,}", name), name
        assert any(x["file"] == "Work.hs" for x in report["lines"])
        assert report["spans"] and all(s["file"] == "Work.hs" for s in report["spans"][:3])
        # The binary perf recorded is named as the chroot saw it, after the wrapper's own
        # (unshare's, mapped first): not here, which is said in one line; --binary names it.
        code, _, err = _run("perf", "merge", str(data), str(log))
        assert code == 1 and len(err.strip().splitlines()) == 1, err
        assert f"({chroot.inside(binary)} is not there)" in err and "--binary" in err
        code, out, err = _run("perf", "merge", "--binary", str(binary), str(data), str(log),
                              "--json")  # fmt: skip
        assert code == 0, err
        merged = json.loads(out)
        assert merged["alignment"]["method"] == "wall-clock" and merged["confidence"] >= 0.9


def test_a_modern_g_binary_without_source_notes_says_how_to_get_them() -> None:
    require_program("perf", "linux-perf")
    with GHC96.work_dir(prefix="halvm-perf-") as folder:
        binary, data, _ = _record(GHC96, "-g", folder)
        code, out, err = _run("perf", "report", str(binary), str(data), "--json")
        assert code == 0, err
        report = json.loads(out)
        assert report["lines"] and not report["spans"]
        assert "only with -g3" in err
