"""gzip and zstd profiles are read as they are, through the entrance: told by their magic bytes,
decompressed as they are read (memory bounded whatever they hold), the same figures as the
plain file; cut or damaged ones are one line naming the file."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.errors import FormatError, InputError
from halvm_prof.inputs.source import open_source
from tests.conftest import CORPUS, DATA

PURS = DATA / "public" / "ghc-prof-purs.prof.gz"
REPO = Path(__file__).resolve().parents[2]


def _zstd(data: bytes, frames: int = 1) -> bytes:
    """``data`` as zstd frames (the CLI's default: a checksum per frame)."""
    c = zstandard.ZstdCompressor(write_checksum=True)
    step = -(-len(data) // frames)
    return b"".join(c.compress(data[i : i + step]) for i in range(0, len(data), step))


def _summary(path: Path, *args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, ["summary", str(path), *args])
    return r.exit_code, r.stdout, r.stderr


def test_the_public_gzipped_report_reads_as_the_plain_one(tmp_path: Path) -> None:
    # Was 'is not a GHC profile'.
    plain = tmp_path / "purs.prof"
    plain.write_bytes(gzip.decompress(PURS.read_bytes()))
    got = _summary(PURS, "--json")
    assert got[0] == 0, got
    assert json.loads(got[1]) == json.loads(_summary(plain, "--json")[1])


@pytest.mark.parametrize(
    "name", ["leaky-hc.hp", "leaky-hc.prof", "leaky-pj.prof", "parfib-N2.eventlog"]
)
@pytest.mark.parametrize("packed", ["gz", "zst", "zst3"])
def test_each_kind_reads_the_same_compressed(name: str, packed: str, tmp_path: Path) -> None:
    data = (CORPUS / name).read_bytes()
    squeezed = tmp_path / f"{name}.{packed[:3]}"
    # Several gzip members or zstd frames are one file, read in turn.
    if packed == "gz":
        half = len(data) // 2
        squeezed.write_bytes(gzip.compress(data[:half]) + gzip.compress(data[half:]))
    else:
        squeezed.write_bytes(_zstd(data, 3 if packed == "zst3" else 1))
    want = _summary(CORPUS / name, "--json")
    got = _summary(squeezed, "--json")
    assert got[0] == want[0] == 0, got
    mine, theirs = json.loads(got[1]), json.loads(want[1])
    mine.pop("path", None), theirs.pop("path", None)
    assert mine == theirs
    with open_source(squeezed) as src, open_source(CORPUS / name) as plain:
        assert src.kind == plain.kind and not src.seekable


def test_a_compressed_stream_on_stdin_is_read_too() -> None:
    data = gzip.compress((CORPUS / "leaky-hc.hp").read_bytes())
    r = CliRunner().invoke(cli, ["summary", "-", "--json"], input=data)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == json.loads(_summary(CORPUS / "leaky-hc.hp", "--json")[1])


@pytest.mark.parametrize("packed", ["gz", "zst"])
@pytest.mark.parametrize("damage", ["cut", "flipped"])
def test_a_cut_or_damaged_compressed_file_is_one_line(
    packed: str, damage: str, tmp_path: Path
) -> None:
    data = (CORPUS / "leaky-hc.hp").read_bytes()
    blob = bytearray(gzip.compress(data) if packed == "gz" else _zstd(data))
    if damage == "cut":
        del blob[len(blob) * 2 // 3 :]
    else:
        blob[len(blob) // 2] ^= 0x55
    bad = tmp_path / f"leaky-hc.hp.{packed}"
    bad.write_bytes(bytes(blob))
    code, out, err = _summary(bad)
    assert code == 1 and out == "" and "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith(f"Error: {bad} at byte ") and "data is cut short or damaged" in err
    kind = "gzip" if packed == "gz" else "zstd"
    assert f"test it with `{kind} -t`" in err
    with pytest.raises(FormatError), open_source(bad) as src:
        list(src.heap_samples())


def test_compressed_twice_is_refused() -> None:
    twice = io.BytesIO(gzip.compress(gzip.compress((CORPUS / "leaky-hc.hp").read_bytes())))
    with pytest.raises(InputError, match=r"is compressed twice \(gzip inside gzip or zstd\)"):
        open_source(twice, name="x.hp.gz.gz")


def test_memory_stays_flat_however_much_a_compressed_file_holds(tmp_path: Path) -> None:
    # 64 MiB of real censuses (leaky-hc's, again and again) in a zstd file of a few KB:
    # streamed, the summary's memory is that of the plain file's, not of what the file holds.
    text = (CORPUS / "leaky-hc.hp").read_text()
    head, _, body = text.partition("BEGIN_SAMPLE")
    census = "BEGIN_SAMPLE" + body
    times = 64 * 2**20 // len(census)
    bomb = tmp_path / "big.hp.zst"
    with bomb.open("wb") as f, zstandard.ZstdCompressor().stream_writer(f) as w:
        w.write(head.encode())
        block = census.encode()
        for _ in range(times):
            w.write(block)
    assert bomb.stat().st_size < 2**20
    probe = (
        "import resource, subprocess, sys\n"
        "r = subprocess.run([sys.executable, '-m', 'halvm_prof', 'summary', sys.argv[1], "
        "'--json'], capture_output=True, text=True)\n"
        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "sys.stdout.write(r.stdout)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(bomb)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
        check=True,
    )
    first, _, rest = done.stdout.partition("\n")
    code, rss_kib = map(int, first.split())
    assert code == 0, done.stdout
    # Every census counted (GHC's exit census included, once per copy).
    assert json.loads(rest)["samples"] == times * census.count("BEGIN_SAMPLE")
    assert rss_kib < 120 * 1024, rss_kib
