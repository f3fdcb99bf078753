"""Every command that reads an eventlog, a ``.hp``, a ``.prof`` or a perf.data reads the gzip or
zstd file as it reads the plain one: the same output, byte for byte but for the file's name.

A compressed file cannot seek, yet some commands read their input twice (``postmortem``
counts a heap profile's censuses and then reads them; ``perf merge -o X.eventlog`` places the
samples and then copies the log) or out of order (an eventlog in time order, perf.data by
sections): the entrance decompresses a compressed file again from its start for a second
pass, and copies it into a temporary file for reads out of order. The large eventlog is a real
GHC 9.0 run whose data section is over the 8 MiB the time-ordered pass keeps in memory
(``KEEP_BYTES``); it is made in the test's folder, never committed.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest
import zstandard
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.errors import InputError
from halvm_prof.formats.eventlog.reader import KEEP_BYTES
from halvm_prof.inputs.source import open_source
from tests import ghc_programs
from tests.conftest import CORPUS, DATA, THOROUGH, made_once, require_system
from tests.readers import eventlog_reader

PERF = DATA / "perf"
DISKS = Path(__file__).resolve().parents[2] / "disk_images"

PACKERS: dict[str, Callable[[bytes], bytes]] = {
    "gz": lambda data: gzip.compress(data, compresslevel=1),
    "zst": lambda data: zstandard.ZstdCompressor(level=1, write_checksum=True).compress(data),
}


def _packed(plain: Path, suffix: str, folder: Path) -> Path:
    out = folder / f"{plain.name}.{suffix}"
    out.write_bytes(PACKERS[suffix](plain.read_bytes()))
    return out


def _run(*args: str | Path, cwd: Path | None = None) -> tuple[int, bytes, str]:
    """Exit code, standard output and error of one command, in ``cwd`` when given."""
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        r = CliRunner().invoke(cli, [str(a) for a in args])
    finally:
        os.chdir(old)
    return r.exit_code, r.stdout_bytes, r.stderr


def _same(
    args: Callable[[Path, Path], list[str | Path]],
    plain: Path,
    packed: Path,
    folder: Path,
    outputs: tuple[str, ...] = (),
) -> None:
    """The command ``args(input, out_folder)`` writes the same on ``packed`` as on ``plain``:
    its standard output and each of ``outputs`` (files in its output folder), with the
    compressed file's name read as the plain one's."""
    assert _written(args, packed, folder, outputs) == _written(args, plain, folder, outputs)


def _written(
    args: Callable[[Path, Path], list[str | Path]],
    given: Path,
    folder: Path,
    outputs: tuple[str, ...] = (),
) -> list[str]:
    """The digests of what ``args(given, out_folder)`` writes, the input's name made INPUT."""
    out = Path(tempfile.mkdtemp(prefix="out-", dir=folder))
    code, stdout, err = _run(*args(given, out))
    assert code == 0 and "Traceback" not in err, (given.name, err, stdout[-2000:])
    written = [stdout, *((out / name).read_bytes() for name in outputs)]
    names = (os.fsencode(str(given)), os.fsencode(str(out)), os.fsencode(given.name))
    for name in names:
        written = [w.replace(name, b"INPUT") for w in written]
    return [hashlib.sha256(w).hexdigest() for w in written]


@pytest.fixture(params=sorted(PACKERS))
def suffix(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# Inputs that some commands read twice: small real files of the corpus and perf fixtures.


def test_postmortem_of_compressed_files_reads_them_twice(suffix: str, tmp_path: Path) -> None:
    # Was 'not readable: is a stream that can be read only once' for a .hp and a heap eventlog.
    for name in ("leaky-hc.hp", "leaky-hT.eventlog"):
        packed = _packed(CORPUS / name, suffix, tmp_path)
        _same(
            lambda f, _o: ["postmortem", f, CORPUS / "leaky-hc.prof"],
            CORPUS / name,
            packed,
            tmp_path,
        )
        code, out, _ = _run("postmortem", packed)
        assert code == 0 and b"not readable" not in out and b"complete census" in out


def test_a_census_of_a_compressed_eventlog_exports(suffix: str, tmp_path: Path) -> None:
    # The large log's censuses are few and depend on the machine's load (GHC takes one at a
    # major collection once the interval has passed in the mutator), so a -hT log of the
    # corpus is the one whose census is exported.
    plain = CORPUS / "leaky-hT.eventlog"
    _same(
        lambda f, o: ["export", f, "--to", "pprof", "--census", "peak", "-o", o / "h.pb.gz"],
        plain,
        _packed(plain, suffix, tmp_path),
        tmp_path,
        ("h.pb.gz",),
    )


def test_eventlog_show_of_a_compressed_log(suffix: str, tmp_path: Path) -> None:
    # Was 'expected the header begin marker "hdrb", found 0x1f8b...'.
    plain = CORPUS / "parfib-N2.eventlog"
    _same(lambda f, _o: ["eventlog", "show", f], plain, _packed(plain, suffix, tmp_path), tmp_path)


def test_perf_merge_into_an_eventlog_of_a_compressed_log(suffix: str, tmp_path: Path) -> None:
    # Was 'is a stream that can be read only once, and this command needs it twice'. Named
    # apart from the run's own name for it, which the log holds (-olwork.eventlog).
    plain = tmp_path / "log.eventlog"
    plain.write_bytes((PERF / "work.eventlog").read_bytes())
    _same(
        lambda f, o: [
            "perf", "merge", PERF / "work.perf.data", f, "--binary", PERF / "work",
            "-o", o / "merged.eventlog",
        ],
        plain,
        _packed(plain, suffix, tmp_path),
        tmp_path,
        ("merged.eventlog",),
    )  # fmt: skip
    # Its Perfetto trace (the log in time order), and both inputs compressed.
    packed_data = _packed(PERF / "work.perf.data", suffix, tmp_path)
    for data in (PERF / "work.perf.data", packed_data):

        def trace(f: Path, o: Path, data: Path = data) -> list[str | Path]:
            return ["perf", "merge", data, f, "--binary", PERF / "work", "-o", o / "m.pftrace"]

        _same(trace, plain, tmp_path / f"log.eventlog.{suffix}", tmp_path, ("m.pftrace",))


def test_compressed_perf_data(suffix: str, tmp_path: Path) -> None:
    # Was 'is a perf.data stream, and perf.data is read in any order, not front to back'.
    plain = PERF / "work.perf.data"
    packed = _packed(plain, suffix, tmp_path)
    binary = PERF / "work"
    _same(lambda f, _o: ["perf", "report", binary, f, "--top", "8"], plain, packed, tmp_path)
    _same(
        lambda f, _o: ["perf", "merge", f, PERF / "work.eventlog", "--binary", binary, "--json"],
        plain,
        packed,
        tmp_path,
    )
    _same(lambda f, _o: ["perf", "annotate", f, "--binary", binary], plain, packed, tmp_path)
    # The copy it was read from is not left behind.
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == [packed.name]


def test_runs_add_of_compressed_files_stores_the_plain_files_digests(
    suffix: str, tmp_path: Path
) -> None:
    """A run's files are known by the digest of what they hold: the same, decompressed again
    for a second pass or not."""
    store = f"sqlite://{tmp_path / 'runs.sqlite'}"
    plain = [CORPUS / "leaky-hc.hp", CORPUS / "leaky-hc.prof", CORPUS / "leaky-hT.eventlog"]
    packed = [_packed(p, suffix, tmp_path) for p in plain]
    files = []
    for run, given in enumerate((plain, packed), 1):
        assert _run("runs", "add", *given, "--store", store)[0] == 0
        code, out, _ = _run("runs", "show", str(run), "--json", "--store", store)
        assert code == 0
        files.append([(f["size"], f["sha256"]) for f in json.loads(out)["files"]])
    assert files[0] == files[1] and len(files[0]) == 3


def test_a_second_pass_over_a_compressed_file_hashes_it_anew(suffix: str, tmp_path: Path) -> None:
    plain = CORPUS / "leaky-hc.hp"
    packed = _packed(plain, suffix, tmp_path)
    data = plain.read_bytes()
    with open_source(packed, digest=True) as source:
        first = list(source.heap_samples())
        assert list(source.heap_samples()) == first and len(first) > 5
        assert source.digest() == (len(data), hashlib.sha256(data).hexdigest())


@pytest.mark.parametrize(
    "body",
    [
        b"".join(b"BEGIN_SAMPLE %d\nband\t%d\nEND_SAMPLE %d\n" % (t, 100 * t, t) for t in range(9)),
        b"BEGIN_SAMPLE 0\nband\t 12\nEND_SAMPLE 0\n",  # a form the scanner leaves to Python
    ],
)
def test_a_compressed_hp_is_scanned_by_the_compiled_scanner_else_read_again(
    suffix: str, body: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiled scanner reads a compressed file as it reads a plain one (ten times faster
    than the Python reader on 64 MiB: benchmarks/bench_compressed.py); a file it leaves is read
    by the Python reader, decompressed again from its start."""
    from halvm_prof.folds import heap_scan

    require_system(heap_scan._scanner_class() is not None, "the compiled .hp scanner")
    plain = tmp_path / "p.hp"
    plain.write_bytes(b'JOB "j"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n' + body)
    packed = _packed(plain, suffix, tmp_path)
    scans: list[bool] = []
    real = heap_scan.scan_hp

    def spy(stream: IO[bytes]) -> heap_scan.HeapScan | None:
        got = real(stream)
        scans.append(got is not None)
        return got

    monkeypatch.setattr(heap_scan, "scan_hp", spy)
    stats = []
    for given in (plain, packed):
        with open_source(given) as source:
            stats.append(source.band_stats().accumulator.stats())
    assert stats[0] == stats[1] and stats[0]
    assert scans[0] == scans[1] == (b" 12" not in body)


def test_disk_write_and_size_of_compressed_profiles(suffix: str, tmp_path: Path) -> None:
    # Was 'is not a profile a HaLVM writes on a disk' and 'is not a heap profile or .prof
    # report'. The disk written is the plain profile's, byte for byte.
    hp, prof = CORPUS / "leaky-hc.hp", CORPUS / "leaky-hc.prof"
    disks = []
    for given in (hp, _packed(hp, suffix, tmp_path)):
        disk = tmp_path / f"{given.name}.disk"
        code, _, err = _run("disk", "write", given, disk)
        assert code == 0 and err == "", err
        disks.append(disk.read_bytes())
    assert disks[0] == disks[1]
    _packed(prof, suffix, tmp_path)
    _same(
        lambda f, _o: [
            "disk", "size", "--rts", "-p -hc -i0.5", "--duration", "10m", "--from-sample", f,
            "--from-sample", f.with_name(f.name.replace("hp", "prof")),
        ],
        hp,
        tmp_path / f"{hp.name}.{suffix}",
        tmp_path,
    )  # fmt: skip


def test_a_compressed_pipe_read_twice_is_still_one_line(suffix: str) -> None:
    """A pipe cannot be decompressed again: a second pass is the one-line refusal."""

    class Pipe(io.BytesIO):
        def seekable(self) -> bool:
            return False

    data = PACKERS[suffix]((CORPUS / "leaky-hc.hp").read_bytes())
    with open_source(Pipe(data), name="pipe") as source:
        assert len(list(source.heap_samples())) > 5
        with pytest.raises(InputError, match="can be read only once"):
            source.heap_samples()


def test_live_follows_a_compressed_file(suffix: str, tmp_path: Path) -> None:
    # Was 'is compressed; a profile being written is followed as its program writes it': live
    # follows it through its decompressor (tests/unit/test_follow.py, tests/live), and with
    # --exit-when-done ends once the profile it holds is closed.
    for name in ("leaky-hc.hp", "leaky-hT.eventlog"):
        packed = _packed(CORPUS / name, suffix, tmp_path)
        code, out, err = _run("live", packed, "--no-open", "--exit-when-done")
        assert code == 0 and err == "", err
        assert out.decode().startswith("http://127.0.0.1:")


def test_a_compressed_disk_image_is_one_line_saying_so(suffix: str, tmp_path: Path) -> None:
    # Was 'is a disk image given as a stream' (a path was given), or the status sector
    # 'damaged beyond repair' (disk info, extract, postmortem).
    packed = _packed(DISKS / "demo-hp.disk", suffix, tmp_path)
    kind = {"gz": "gzip", "zst": "zstd"}[suffix]
    said = f"{packed}: is {kind}-compressed; a disk image is read at many offsets"
    commands: list[list[str | Path]] = [
        ["summary", packed],
        ["report", packed, "-o", tmp_path / "r.html"],
        ["disk", "info", packed],
        ["extract", packed, "-o", tmp_path / "x.hp"],
        ["live", packed],
    ]
    for args in commands:
        code, out, err = _run(*args)
        assert code == 1 and out == b"" and err.count("\n") == 1, (args, err)
        assert err.startswith(f"Error: {said}") and f"({kind} -dc FILE > IMAGE)" in err, err
    code, out, err = _run("postmortem", "--hp-disk", packed)
    assert code == 1 and said.split(": ", 1)[1] in out.decode(), out
    assert [p.name for p in tmp_path.iterdir()] == [packed.name]


# A real eventlog whose data section is over KEEP_BYTES, and every command that reads one.


@pytest.fixture(scope="module")
def large_log() -> Iterator[Path]:
    """GcHeavy (collecting every 16 KB allocated) on two capabilities with time-profile samples
    (thousands) and a cost-centre heap profile (none to a few censuses, as the load goes):
    about 17 MB of events, over KEEP_BYTES. Run once for the whole run."""
    exe = ghc_programs.build("GcHeavy", Path())
    with made_once("large-log") as (folder, fill):
        if fill:
            flags = ["-p", "-hc", "-l", "-A16k", "-i0.01", "-N2"]
            subprocess.run(
                [exe, "60000", "+RTS", *flags, "-RTS"], cwd=folder, check=True, capture_output=True
            )
            log = folder / f"{exe.name}.eventlog"
            with eventlog_reader(log) as reader:
                list(reader.iter_raw())
                assert reader.header is not None
                data = log.stat().st_size - reader.header.data_offset
            assert data > KEEP_BYTES, data
            for suffix, pack in PACKERS.items():
                log.with_name(f"{log.name}.{suffix}").write_bytes(pack(log.read_bytes()))
    yield folder / f"{exe.name}.eventlog"


#: What each command wrote of the plain large log: the same for both compressions.
_OF_PLAIN: dict[Callable[[Path, Path], list[str | Path]], list[str]] = {}


@pytest.mark.parametrize(
    ("args", "outputs"),
    [
        # The quick run reads small compressed files (the tests above); this 17 MB log, made
        # by a GHC program and packed twice, under CI=true.
        pytest.param(lambda f, _o: ["eventlog", "stats", f], (), marks=THOROUGH),
        pytest.param(lambda f, _o: ["eventlog", "stats", f, "--json"], (), marks=THOROUGH),
        pytest.param(lambda f, _o: ["eventlog", "show", f], (), marks=THOROUGH),
        pytest.param(lambda f, _o: ["summary", f, "--json"], (), marks=THOROUGH),
        pytest.param(lambda f, o: ["report", f, "-o", o / "r.html"], ("r.html",), marks=THOROUGH),
        # Ten seconds and more each (the traces of 38,000 collections): under CI, or --runslow.
        pytest.param(
            lambda f, o: ["export", f, "--to", "perfetto", "-o", o / "t.pftrace"],
            ("t.pftrace",),
            marks=pytest.mark.slow,
        ),
        pytest.param(
            lambda f, o: ["export", f, "--to", "chrome-trace", "-o", o / "t.json"],
            ("t.json",),
            marks=pytest.mark.slow,
        ),
        pytest.param(
            lambda f, o: ["export", f, "--to", "speedscope", "-o", o / "s.json"],
            ("s.json",),
            marks=THOROUGH,
        ),
        pytest.param(
            lambda f, o: ["export", f, "--to", "pprof", "-o", o / "t.pb.gz"],
            ("t.pb.gz",),
            marks=THOROUGH,
        ),
        pytest.param(lambda f, _o: ["diff", f, f, "--json"], (), marks=THOROUGH),
        pytest.param(lambda f, _o: ["postmortem", f], (), marks=THOROUGH),
        pytest.param(
            lambda f, o: ["runs", "add", f, "--json", "--store", f"sqlite://{o / 'runs.sqlite'}"],
            (),
            marks=THOROUGH,
        ),
    ],
    ids=[
        "stats", "stats-json", "show", "summary", "report", "perfetto", "chrome-trace",
        "speedscope", "pprof-samples", "diff", "postmortem", "runs-add",
    ],
)  # fmt: skip
def test_every_eventlog_command_on_a_large_compressed_log(
    args: Callable[[Path, Path], list[str | Path]],
    outputs: tuple[str, ...],
    suffix: str,
    large_log: Path,
    tmp_path: Path,
) -> None:
    packed = large_log.with_name(f"{large_log.name}.{suffix}")
    if args not in _OF_PLAIN:
        _OF_PLAIN[args] = _written(args, large_log, tmp_path, outputs)
    assert _written(args, packed, tmp_path, outputs) == _OF_PLAIN[args]


def _flipped_deflate(plain: Path, folder: Path) -> Path:
    """``plain`` gzipped with one bit flipped in its first deflate block's code table, which
    zlib refuses with its own ``zlib.error`` (the member's checksum is never reached)."""
    blob = bytearray(gzip.compress(plain.read_bytes()))
    blob[20] ^= 0x01
    out = folder / f"{plain.name}.gz"
    out.write_bytes(bytes(blob))
    return out


@pytest.mark.parametrize(
    ("name", "command"),
    [
        ("leaky-hc.hp", ["summary", "{}"]),
        ("leaky-hc.hp", ["report", "{}", "-o", "{out}/r.html"]),
        ("leaky-hc.hp", ["diff", "{}", CORPUS / "leaky-hc.hp"]),
        ("leaky-hc.hp", ["export", "{}", "--to", "pprof", "-o", "{out}/h.pb.gz"]),
        ("leaky-hc.hp", ["runs", "add", "{}", "--store", "sqlite:///{out}/runs.sqlite"]),
        ("leaky-hc.hp", ["hunt", "--from", "{}"]),
        ("leaky-hc.prof", ["summary", "{}"]),
        ("parfib-N2.eventlog", ["eventlog", "stats", "{}"]),
        ("parfib-N2.eventlog", ["export", "{}", "--to", "perfetto", "-o", "{out}/t.pftrace"]),
    ],
)
def test_damaged_deflate_data_is_one_line_in_every_command(
    name: str, command: list[str | Path], tmp_path: Path
) -> None:
    # Was 'internal error: Error -3 while decompressing data' (zlib.error was not caught).
    bad = _flipped_deflate(CORPUS / name, tmp_path)
    args = [str(a).replace("{}", str(bad)).replace("{out}", str(tmp_path)) for a in command]
    code, _out, err = _run(*args)
    assert code == 1 and "internal error" not in err and "Traceback" not in err, err
    assert "gzip data is cut short or damaged" in err and str(bad) in err, err


def test_damaged_deflate_data_of_perf_data_is_one_line(tmp_path: Path) -> None:
    bad = _flipped_deflate(PERF / "work-cut.perf.data", tmp_path)
    code, _out, err = _run("perf", "report", PERF / "work", bad)
    assert code == 1 and "internal error" not in err, err
    assert "gzip data is cut short or damaged" in err, err
