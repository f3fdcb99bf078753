"""xen-config, xen-config check and disk size as users run them; the example configs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.xen import libxlutil
from tests.conftest import CORPUS, DATA

REPO = Path(__file__).resolve().parents[2]

#: The example configs in xen_configs/ and the command lines that make them.
EXAMPLES = {
    "app-p-hc.cfg": "--kernel halvm-app.elf --memory 64 --name app --rts=-p_-hc_-i0.5"
    " --prof-disk disk_images/app-prof.disk --hp-disk disk_images/app-hp.disk",
    "app-hT.cfg": "--kernel halvm-app.elf --memory 128 --name app-heap --rts=-hT_-i0.1"
    " --hp-disk disk_images/app-hp.disk",
    "app-p.cfg": "--kernel halvm-app.elf --memory 32 --name app-time --rts=-p"
    " --prof-disk disk_images/app-prof.disk --vcpus 2",
}


def args(line: str) -> list[str]:
    return [a.replace("_", " ") if a.startswith("--rts=") else a for a in line.split()]


def run(*argv: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(argv))
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_configs_are_what_the_tool_writes(name: str) -> None:
    code, out, err = run("xen-config", *args(EXAMPLES[name]))
    assert code == 0, err
    assert out == (REPO / "xen_configs" / name).read_text(encoding="utf-8")


def test_examples_are_all_listed() -> None:
    assert sorted(p.name for p in (REPO / "xen_configs").glob("*.cfg")) == sorted(EXAMPLES)


def test_write_to_a_file_and_errors(tmp_path: Path) -> None:
    out = tmp_path / "vm.cfg"
    code, stdout, _ = run("xen-config", *args(EXAMPLES["app-p.cfg"]), "-o", str(out))
    assert code == 0 and "wrote" in stdout and out.read_text().startswith("# A profiled")
    code, _, err = run("xen-config", *args(EXAMPLES["app-p.cfg"]), "-o", str(out))
    assert code == 1 and "already exists" in err
    assert run("xen-config", *args(EXAMPLES["app-p.cfg"]), "-o", str(out), "--force")[0] == 0
    code, _, err = run(
        "xen-config", "--kernel", "k", "--memory", "64", "--rts", "-p -hc", "--prof-disk", "p.disk"
    )
    assert code == 1 and err.count("\n") == 1 and "--hp-disk" in err
    code, _, err = run(
        "xen-config", "--kernel", 'a"b', "--memory", "64", "--rts", "-p", "--prof-disk", "p.disk"
    )
    assert code == 1 and "cannot carry" in err and err.count("\n") == 1
    code, _, err = run("xen-config", "--kernel", "k", "--memory", "64", "--rts", "-hc -hy")
    assert code == 1 and "multiple heap profile options" in err
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
    # A kernel that is not there stops xl before anything runs: an error, not a warning.
    assert f"{cfg}:1: error: kernel 'k' does not exist" in out and "[kernel-missing]" in out
    data = json.loads(run("xen-config", "check", str(cfg), "--json")[1])
    assert {p["code"] for p in data["problems"]} == {"read-only", "disk-missing", "kernel-missing"}
    (tmp_path / "k").write_bytes(b"\x7fELF")
    assert data["ok"] is False and data["xen_parser"] == libxlutil.available()
    assert run("disk", "create", "hp.disk", "--size", "1M")[0] == 0
    cfg.write_text(cfg.read_text().replace(',r"', ',rw"'))
    code, out, _ = run("xen-config", "check", str(cfg))
    assert code == 0 and "no problems found" in out
    # A 1 MiB disk (255 blocks after its status sector) takes 253 4-KiB censuses after the first:
    # 25.3 s at one census every 0.1 s.
    code, out, _ = run("xen-config", "check", str(cfg), "--duration", "10m")
    assert code == 1 and "[disk-fills]" in out and "after about 25.3s" in out
    code, _, err = run("xen-config", "check", str(tmp_path / "none.cfg"))
    assert code == 1 and "no such file" in err


def test_check_a_crafted_syntax_error() -> None:
    code, out, _ = run("xen-config", "check", str(DATA / "xen" / "syntax-crlf.cfg"))
    assert code == 1 and ":3: error: syntax error: a carriage return" in out


def test_disk_size() -> None:
    sample = str(CORPUS / "leaky-hc.hp")
    code, out, _ = run(
        "disk", "size", "--rts", "-hc -i0.02", "--duration", "1h", "--from-sample", sample, "--json"
    )
    (est,) = json.loads(out)
    assert code == 0 and est["device"] == "xvdp2" and est["suggested"] >= est["expected"] * 1.5
    code, out, _ = run("disk", "size", "--rts", "-p -hc", "--duration", "10m")
    assert code == 0 and "xvdp1" in out and "xvdp2" in out and "disk create --size" in out
    code, _, err = run("disk", "size", "--rts", "-p", "--duration", "later")
    assert code == 1 and "not a duration" in err
    code, _, err = run("disk", "size", "--rts", "-hT -i0", "--duration", "1m")
    assert code == 1 and "every major GC" in err
    # Flags that write no profile are an error that says what each flag does instead.
    code, out, err = run("disk", "size", "--rts", "-l", "--duration", "1m")
    assert code == 1 and out == "" and err.count("\n") == 1
    assert "'-l' ask for no profile: -l writes an eventlog, for which a HaLVM has no disk" in err
    code, _, err = run("disk", "size", "--rts", "-N2 -hcMain", "--duration", "1m")
    assert code == 1 and "-N2 sets the number of capabilities; -hcMain only narrows" in err


def test_memory_past_what_xen_gives_a_domain_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`prepare --memory 99999999999999999` wrote that number into the config."""
    monkeypatch.chdir(tmp_path)  # prepare writes into the current folder
    kernel = tmp_path / "app.elf"
    kernel.write_bytes(b"\x7fELF")
    for argv in (
        ["prepare", str(kernel), "--rts", "-hc", "--duration", "1m"],
        ["xen-config", "--kernel", str(kernel), "--rts", "-hc", "--hp-disk", "hp.disk"],
    ):
        code, _, err = run(*argv, "--memory", "99999999999999999")
        assert code == 2 and "--memory" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.elf"]
    from halvm_prof.errors import ConfigError
    from halvm_prof.xen.generate import MAX_MEMORY, ConfigSpec, render_config

    with pytest.raises(ConfigError, match="more than Xen gives a domain"):
        render_config(ConfigSpec("k", MAX_MEMORY + 1, "-hc", "d", None, "hp.disk", 1))


def test_postmortem_of_a_config_naming_no_disk_names_the_config(tmp_path: Path) -> None:
    """An empty --config said only 'no disk to look at', naming no file."""
    for text, said in (("", "the file is empty"), ("memory = 64\n", "names no profiling disk")):
        cfg = tmp_path / "vm.cfg"
        cfg.write_text(text)
        code, _, err = run("postmortem", "--config", str(cfg))
        assert code == 1 and err.count("\n") == 1, err
        assert f"{cfg}:" in err and said in err and "names no profiling disk" in err
