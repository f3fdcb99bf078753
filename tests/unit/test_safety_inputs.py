"""Hostile inputs: declared sizes, file names that are not UTF-8, text that is not one line."""

from __future__ import annotations

import io
import os
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.disk.image import create_image
from halvm_prof.errors import FormatError, InputError
from halvm_prof.formats.eventlog.layout import MAX_DECLARED, read_header
from halvm_prof.xen.check import check_file
from tests.conftest import CORPUS

HP = CORPUS / "leaky-hc.hp"
PROF = CORPUS / "leaky-hc.prof"


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


class CountingStream(io.BytesIO):
    """A stream that remembers how many bytes were asked of it."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.taken = 0

    def read(self, n: int | None = -1) -> bytes:
        got = super().read(n)
        self.taken += len(got)
        return got


def _declaration(desc_len: int, extra_len: int = 0) -> bytes:
    return b"etb\0" + struct.pack(">HHI", 0, 8, desc_len) + b"x" * min(desc_len, 100)


@pytest.mark.parametrize("field", ["description", "extra field"])
def test_an_eventlog_declaring_a_4gb_field_is_refused_without_reading_on(field: str) -> None:
    if field == "description":
        decl = b"etb\0" + struct.pack(">HHI", 0, 8, 0xFFFFFFF0)
    else:
        decl = b"etb\0" + struct.pack(">HHI", 0, 8, 3) + b"abc" + struct.pack(">I", 0xFFFFFFF0)
    stream = CountingStream(b"hdrb" + b"hetb" + decl + bytes(8 << 20))
    with pytest.raises(FormatError, match=f"4294967280-byte {field}"):
        read_header(stream, "x.eventlog")
    assert stream.taken <= 1 << 16  # the first chunk, not the 8 MB behind it


def test_an_eventlog_header_that_never_ends_is_refused() -> None:
    one = b"etb\0" + struct.pack(">HHI", 0, 8, 10) + b"0123456789" + struct.pack(">I", 0) + b"ete\0"
    stream = CountingStream(b"hdrb" + b"hetb" + one * 100_000)  # 2.6 MB of declarations
    with pytest.raises(FormatError, match="header goes on past"):
        read_header(stream, "x.eventlog")
    assert stream.taken <= 1 << 20


def test_commands_on_a_4gb_declaration_are_one_line(tmp_path: Path) -> None:
    log = tmp_path / "big.eventlog"
    log.write_bytes(b"hdrb" + b"hetb" + b"etb\0" + struct.pack(">HHI", 0, 8, MAX_DECLARED + 1))
    cases: list[list[str | Path]] = [
        ["eventlog", "show", log],
        ["eventlog", "stats", log],
        ["summary", log],
    ]
    for args in cases:
        code, _, err = run(*args)
        assert code == 1 and err.count("\n") == 1 and "declares" in err, (args, err)


def _non_utf8(tmp_path: Path, name: bytes, source: Path) -> Path:
    path = Path(os.fsdecode(bytes(tmp_path) + b"/" + name))
    path.write_bytes(source.read_bytes())
    return path


def test_report_of_files_named_in_non_utf8(tmp_path: Path) -> None:
    hp = _non_utf8(tmp_path, b"caf\xe9.hp", HP)
    prof = _non_utf8(tmp_path, b"caf\xe9.prof", PROF)
    out = tmp_path / "r.html"
    code, _, err = run("report", hp, prof, "-o", out)
    assert code == 0, err
    assert "caf\ufffd.hp" in out.read_text(encoding="utf-8")


def test_a_non_utf8_disk_path_in_a_config_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    create_image(os.fsdecode(b"d\xe9.disk"), 1 << 20)
    cfg = tmp_path / "run.cfg"
    cfg.write_bytes(
        b'name = "x"\nkernel = "k"\nmemory = 64\nextra = "-- +RTS -hc -RTS"\n'
        b'disk = ["d\xe9.disk,raw,xvdp2,w"]\n'
    )
    result = check_file(cfg)
    codes = {p.code for p in result.problems}
    assert "disk-missing" not in codes and "xen-disagrees" not in codes, result.problems


def test_errors_are_one_printable_line() -> None:
    err = InputError("no such file", path="a\nb\x1b[31m.hp", hint="check the path")
    text = str(err)
    assert "\n" not in text and "\x1b" not in text and "a\\nb\\x1b[31m.hp" in text
    long = InputError("x" * 5000, path="p")
    assert len(str(long)) < 400 and "5000 characters" in str(long)


def test_an_error_naming_long_real_paths_keeps_what_to_do() -> None:
    # Two paths of a deep build folder (~150 characters each): the message was cut at 300
    # characters, before its end, which says what to do.
    folder = "/home/someone/src/payments-service/dist-newstyle/build/x86_64-linux/ghc-9.6.6/x-1.0"
    cfg = f"{folder}/vm/config/halvm-guest.cfg"
    err = InputError(
        f"image 'prof.disk' does not exist: relative paths are read from the current folder, "
        f"as xl reads them; it is in {folder}/vm/config: run from there",
        path=cfg,
        line=4,
    )
    assert str(err).startswith(f"{cfg}:4: image") and str(err).endswith(": run from there")
    # A 30 KB word is still cut, in its middle: both ends and the rest of the line stay.
    huge = InputError(f"no such file {'d/' * 15000}HaLVM.hp: check the name", path="p")
    assert len(str(huge)) < 400 and "(30009 characters)" in str(huge)
    assert str(huge).endswith("d/d/HaLVM.hp: check the name")


def test_a_path_with_a_newline_is_a_one_line_error(tmp_path: Path) -> None:
    code, _, err = run("summary", tmp_path / "no\nsuch.hp")
    assert code == 1 and err.count("\n") == 1, err


@pytest.mark.parametrize("what", ["/dev/zero", "stdin"])
def test_eventlog_show_of_an_endless_non_eventlog_stream_stops_at_its_start(what: str) -> None:
    # eventlog show reads any input as an eventlog; an input that cannot seek is copied to a
    # temporary file first, which for /dev/zero or a pipe of zeros never ended (nor the disk).
    import subprocess
    import sys

    argv = [sys.executable, "-m", "halvm_prof", "eventlog", "show"]
    if what == "stdin":
        with open("/dev/zero", "rb") as zeros:
            done = subprocess.run(
                [*argv, "-"], stdin=zeros, capture_output=True, text=True, timeout=20
            )
        name = "<stdin>"
    else:
        done = subprocess.run([*argv, what], capture_output=True, text=True, timeout=20)
        name = what
    assert done.returncode == 1
    assert done.stderr.startswith(f"Error: {name} at byte 0: expected the header begin marker")
    assert len(done.stderr.splitlines()) == 1
