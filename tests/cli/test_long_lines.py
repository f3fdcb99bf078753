"""Every reader bounds the lines and strings it reads: a ``.hp`` JOB line or band name, a
``.prof`` with no newline, a ``-pj`` string or number longer than any GHC writes is refused in
one line naming the file and line, before it is held whole. The probe saw 396-643 MB (and 55 s
for a ``-pj`` string) on 120 MB single-line files."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from tests.conftest import CORPUS, THOROUGH

REPO = Path(__file__).resolve().parents[2]
HEADER = b'DATE "x"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'


def job_line(n: int) -> bytes:
    return b'JOB "' + b"x" * n + b'"\n' + HEADER + b"BEGIN_SAMPLE 0.0\nmain\t10\nEND_SAMPLE 0.0\n"


def band_name(n: int) -> bytes:
    return b'JOB "t"\n' + HEADER + b"BEGIN_SAMPLE 0.0\n" + b"y" * n + b"\t10\nEND_SAMPLE 0.0\n"


def prof_without_newline(n: int) -> bytes:
    prof = (CORPUS / "leaky-hc.prof").read_bytes()
    return prof[: prof.index(b"\n")] + b" " + b"z" * n


def _in_pj(key: bytes, filler: Callable[[int], bytes]) -> Callable[[int], bytes]:
    def make(n: int) -> bytes:
        pj = (CORPUS / "leaky-pj.prof").read_bytes()
        at = pj.index(key) + len(key)
        return pj[:at] + filler(n) + pj[at:]

    return make


MAKERS: dict[str, tuple[str, Callable[[int], bytes], int]] = {
    # name: (suffix, maker, line of the error)
    "hp-job": (".hp", job_line, 1),
    "hp-band": (".hp", band_name, 6),
    "prof-no-newline": (".prof", prof_without_newline, 1),
    "pj-program": (".prof", _in_pj(b'"program": "', lambda n: b"p" * n), 2),
    "pj-label": (".prof", _in_pj(b'"label": "', lambda n: b"l" * n), 12),
    "pj-escaped-quotes": (".prof", _in_pj(b'"label": "', lambda n: b'\\"' * (n // 2)), 12),
    "pj-number": (".prof", _in_pj(b'"total_alloc":', lambda n: b"1" * n), 10),
}


@pytest.mark.parametrize("pure", ["0", "1"])
@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_a_line_or_string_no_ghc_writes_is_one_line_naming_the_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, pure: str
) -> None:
    monkeypatch.setenv("HALVM_PROF_PURE", pure)
    suffix, make, line = MAKERS[kind]
    path = tmp_path / f"long{suffix}"
    path.write_bytes(make(3 << 20))
    r = CliRunner().invoke(cli, ["summary", str(path)])
    assert r.exit_code == 1, r.output
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and f"{path}:{line}:" in lines[0], r.stderr
    assert "MiB, which GHC never writes" in lines[0]


def test_a_sample_for_disk_sizing_with_a_long_line_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "long.hp"
    path.write_bytes(band_name(3 << 20))
    r = CliRunner().invoke(
        cli, ["disk", "size", "--rts", "-hc -i1", "--duration", "10m", "--from-sample", str(path)]
    )
    assert r.exit_code == 1, r.output
    assert f"{path}:6:" in r.stderr and len(r.stderr.splitlines()) == 1


def test_ghc_files_still_read(tmp_path: Path) -> None:
    for name in ("leaky-hc.hp", "leaky-hc.prof", "leaky-pj.prof"):
        assert CliRunner().invoke(cli, ["summary", str(CORPUS / name)]).exit_code == 0


#: The size of the long line or string in the memory test, and the peak the command may reach.
LONG = 32 << 20
PEAK_MIB = 80

_PEAK = (
    "import resource, subprocess, sys\n"
    "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,"
    " timeout=300).returncode\n"
    "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


# Two kinds of input in the quick run (each is a 32 MB line read by a command of its own); the
# others under CI=true.
@pytest.mark.parametrize(
    "kind", [pytest.param(k, marks=() if i < 2 else THOROUGH) for i, k in enumerate(sorted(MAKERS))]
)
def test_memory_stays_bounded_on_a_long_single_line(tmp_path: Path, kind: str) -> None:
    """The command's peak RSS, read by a parent that has no other child: under PEAK_MIB for a
    32 MB line or string (before: about 4 times the line)."""
    suffix, make, _ = MAKERS[kind]
    path = tmp_path / f"long{suffix}"
    path.write_bytes(make(LONG))
    out = subprocess.run(
        [sys.executable, "-c", _PEAK, sys.executable, "-m", "halvm_prof", "summary", str(path)],
        capture_output=True,
        text=True,
        timeout=360,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        check=True,
    ).stdout.split()
    rc, peak_kib = int(out[0]), int(out[1])
    assert rc == 1
    assert peak_kib < PEAK_MIB * 1024, f"{kind}: {peak_kib // 1024} MiB"
