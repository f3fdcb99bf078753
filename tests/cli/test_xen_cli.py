"""xen-config, xen-config check, disk size and prepare as users run them; example configs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli import cli
from halvm_prof.cli.convert import convert_profile
from tests.conftest import CORPUS

REPO = Path(__file__).resolve().parents[2]

#: The example configs in xen_configs/ and the command lines that make them.
EXAMPLES = {
    "app-p-hc.cfg": [
        "--kernel",
        "halvm-app.elf",
        "--memory",
        "64",
        "--name",
        "app",
        "--rts",
        "-p -hc -i0.5",
        "--prof-disk",
        "disk_images/app-prof.disk",
        "--hp-disk",
        "disk_images/app-hp.disk",
    ],
    "app-hT.cfg": [
        "--kernel",
        "halvm-app.elf",
        "--memory",
        "128",
        "--name",
        "app-heap",
        "--rts",
        "-hT -i0.1",
        "--hp-disk",
        "disk_images/app-hp.disk",
    ],
    "app-p.cfg": [
        "--kernel",
        "halvm-app.elf",
        "--memory",
        "32",
        "--name",
        "app-time",
        "--rts",
        "-p",
        "--prof-disk",
        "disk_images/app-prof.disk",
        "--vcpus",
        "2",
    ],
}


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_configs_are_what_the_tool_writes(name: str) -> None:
    code, out, err = run("xen-config", *EXAMPLES[name])
    assert code == 0, err
    assert out == (REPO / "xen_configs" / name).read_text()


def test_write_to_a_file_and_errors(tmp_path: Path) -> None:
    out = tmp_path / "vm.cfg"
    code, stdout, _ = run("xen-config", *EXAMPLES["app-p.cfg"], "-o", str(out))
    assert code == 0 and "wrote" in stdout and out.read_text().startswith("# A profiled")
    code, _, err = run(
        "xen-config", "--kernel", "k", "--memory", "64", "--rts", "-p -hc", "--prof-disk", "p.disk"
    )
    assert code == 1 and err.count("\n") == 1 and "--hp-disk" in err
    code, _, err = run(
        "xen-config", "--kernel", 'a"b', "--memory", "64", "--rts", "-p", "--prof-disk", "p.disk"
    )
    assert code == 1 and "cannot carry" in err
    assert run("xen-config", "--memory", "64")[0] == 2


def test_check_reports_lines_and_exit_codes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "vm.cfg"
    cfg.write_text(
        'kernel = "k"\nmemory = 64\nextra = "+RTS -hT -RTS"\ndisk = [ "hp.disk,raw,xvdp2,r" ]\n'
    )
    code, out, _ = run("xen-config", "check", str(cfg))
    assert code == 1
    assert f"{cfg}:4: error:" in out and "[read-only]" in out and "[disk-missing]" in out
    data = json.loads(run("xen-config", "check", str(cfg), "--json")[1])
    assert {p["code"] for p in data["problems"]} == {"read-only", "disk-missing"}
    assert run("disk", "create", "hp.disk", "--size", "1M")[0] == 0
    cfg.write_text(cfg.read_text().replace(',r"', ',rw"'))
    code, out, _ = run("xen-config", "check", str(cfg))
    assert code == 0 and "no problems found" in out


def test_disk_size(tmp_path: Path) -> None:
    code, out, _ = run(
        "disk",
        "size",
        "--rts",
        "-hc -i0.02",
        "--duration",
        "1h",
        "--from-sample",
        str(CORPUS / "leaky-hc.hp"),
        "--json",
    )
    (est,) = json.loads(out)
    assert code == 0 and est["device"] == "xvdp2" and est["suggested"] >= est["expected"] * 1.5
    code, out, _ = run("disk", "size", "--rts", "-p -hc", "--duration", "10m")
    assert code == 0 and "xvdp1" in out and "xvdp2" in out and "disk create --size" in out
    assert run("disk", "size", "--rts", "-p", "--duration", "later")[0] == 1


def test_prepare_then_run_then_convert(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("app.elf").write_bytes(b"\x7fELF CCS_MAIN")  # stands in for a profiled kernel
    code, out, err = run(
        "prepare", "app.elf", "--memory", "64", "--rts", "-p -hc", "--duration", "1m"
    )
    assert code == 0, err
    assert "xl create xen_configs/app.cfg" in out
    assert "convert-profile disk_images/app-hp.disk app-HaLVM.hp" in out
    assert run("xen-config", "check", "xen_configs/app.cfg", "--duration", "1m")[0] == 0
    # The "run": the runtime writes both profiles onto the disks prepare made.
    assert run("disk", "write", str(CORPUS / "leaky-hc.prof"), "disk_images/app-prof.disk")[0] == 0
    assert (
        run(
            "disk",
            "write",
            str(CORPUS / "leaky-hc.hp"),
            "disk_images/app-hp.disk",
            "--crash-after",
            "20",
        )[0]
        == 0
    )
    for disk, out_name, src in (
        ("app-prof", "HaLVM.prof", "leaky-hc.prof"),
        ("app-hp", "HaLVM.hp", "leaky-hc.hp"),
    ):
        r = CliRunner().invoke(convert_profile, [f"disk_images/{disk}.disk", out_name])
        assert r.exit_code == 0
        assert (CORPUS / src).read_bytes().startswith(Path(out_name).read_bytes())
    # prepare again refuses to replace its config, and then the disks that hold profiles.
    before = Path("disk_images/app-hp.disk").read_bytes()
    code, _, err = run("prepare", "app.elf", "--memory", "64", "--rts", "-p -hc")
    assert code == 1 and "already exists" in err
    Path("xen_configs/app.cfg").unlink()
    code, _, err = run("prepare", "app.elf", "--memory", "64", "--rts", "-p -hc")
    assert code == 1 and "holds a profile" in err
    assert Path("disk_images/app-hp.disk").read_bytes() == before
