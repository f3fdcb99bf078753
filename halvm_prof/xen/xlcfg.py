"""xl domain configs: our own reader (keeping line numbers) and a quoting writer.

The syntax is Xen's (``xl.cfg(5)``, ``libxlu_cfg``): ``key = value`` settings separated by new
lines or ``;``, ``#`` comments, strings in double or single quotes, whole numbers, and lists in
brackets that may span lines and end with a comma. ``key += value`` appends.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from halvm_prof.errors import ConfigError
from halvm_prof.fileio import open_input

Scalar = str | int


@dataclass(slots=True)
class Setting:
    """One key's value and where it stands (list items keep their own lines)."""

    key: str
    value: Scalar | list[Scalar]
    line: int
    item_lines: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Disk:
    """A ``disk = [...]`` entry (xl-disk-configuration(5): positional or key=value)."""

    spec: str
    target: str
    format: str
    vdev: str
    access: str
    line: int


@dataclass(slots=True)
class XlConfig:
    path: str | None
    settings: dict[str, Setting]

    def get(self, key: str) -> Scalar | list[Scalar] | None:
        s = self.settings.get(key)
        return s.value if s else None

    def line(self, key: str) -> int | None:
        s = self.settings.get(key)
        return s.line if s else None

    @property
    def kernel(self) -> str | None:
        v = self.get("kernel")
        return v if isinstance(v, str) else None

    @property
    def memory(self) -> int | None:
        v = self.get("memory")
        return v if isinstance(v, int) else None

    @property
    def extra(self) -> str | None:
        v = self.get("extra")
        return v if isinstance(v, str) else None

    def disks(self) -> list[Disk]:
        s = self.settings.get("disk")
        if s is None:
            return []
        items = s.value if isinstance(s.value, list) else [s.value]
        lines = s.item_lines or [s.line] * len(items)
        return [parse_disk(str(item), line) for item, line in zip(items, lines, strict=False)]


_TOKEN = re.compile(
    r"""(?P<ws>[ \t\r]+)|(?P<comment>\#[^\n]*)|(?P<nl>\n)|(?P<str>"[^"\n]*"|'[^'\n]*')
    |(?P<num>0[xX][0-9a-fA-F]+|\d+)|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<op>\+=|=|\[|\]|,|;)""",
    re.VERBOSE,
)


def _tokens(text: str, path: str | None) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    pos, line = 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            near = text[pos : pos + 10].split("\n")[0]
            what = "an unterminated string" if text[pos] in "\"'" else f"unexpected {near!r}"
            raise ConfigError(
                f"syntax error: {what}",
                path=path,
                line=line,
                hint='xl\'s syntax: key = "string" | number | [ list ]',
            )
        kind = m.lastgroup or ""
        if kind == "nl":
            out.append(("nl", "\n", line))
            line += 1
        elif kind not in ("ws", "comment"):
            out.append((kind, m.group(), line))
        pos = m.end()
    out.append(("nl", "\n", line))
    return out


def _scalar(kind: str, text: str) -> Scalar:
    return text[1:-1] if kind == "str" else int(text, 0)


def parse_config(text: str, path: str | os.PathLike[str] | None = None) -> XlConfig:
    """Parse xl config ``text``; a syntax error is a ConfigError naming the line."""
    where = os.fspath(path) if path is not None else None
    toks = _tokens(text, where)
    settings: dict[str, Setting] = {}
    i = 0

    def fail(line: int, what: str) -> ConfigError:
        return ConfigError(
            f"syntax error: {what}",
            path=where,
            line=line,
            hint='xl\'s syntax: key = "string" | number | [ list ]',
        )

    while i < len(toks):
        kind, text_, line = toks[i]
        if kind == "nl" or (kind == "op" and text_ == ";"):
            i += 1
            continue
        if kind != "ident":
            raise fail(line, f"expected a setting name, found {text_!r}")
        key = text_
        if i + 1 >= len(toks) or toks[i + 1][1] not in ("=", "+="):
            raise fail(line, f"expected '=' after {key}")
        append = toks[i + 1][1] == "+="
        i += 2
        kind, text_, vline = toks[i]
        value: Scalar | list[Scalar]
        item_lines: list[int] = []
        if kind in ("str", "num"):
            value = _scalar(kind, text_)
            i += 1
        elif text_ == "[":
            items: list[Scalar] = []
            i += 1
            expect_item = True
            while True:
                if i >= len(toks):
                    raise fail(vline, "a list that is never closed with ']'")
                kind, text_, iline = toks[i]
                if kind == "nl":
                    i += 1
                elif text_ == "]":
                    i += 1
                    break
                elif kind in ("str", "num") and expect_item:
                    items.append(_scalar(kind, text_))
                    item_lines.append(iline)
                    expect_item = False
                    i += 1
                elif text_ == "," and not expect_item:
                    expect_item = True
                    i += 1
                else:
                    raise fail(iline, f"unexpected {text_!r} in a list")
            value = items
        else:
            raise fail(vline, f"expected a value for {key}")
        if i < len(toks) and toks[i][0] != "nl" and toks[i][1] != ";":
            raise fail(toks[i][2], f"unexpected {toks[i][1]!r} after the value of {key}")
        old = settings.get(key)
        if append and old is not None:
            merged = (old.value if isinstance(old.value, list) else [old.value]) + (
                value if isinstance(value, list) else [value]
            )
            old.value = merged
            old.item_lines += item_lines or [vline]
        else:
            settings[key] = Setting(key, value, line, item_lines)
    return XlConfig(where, settings)


def read_config(path: str | os.PathLike[str]) -> XlConfig:
    """Read the xl config file at ``path``."""
    with open_input(path) as stream:
        return parse_config(stream.read().decode("utf-8", "replace"), path)


_DISK_KEYS = ("target", "format", "vdev", "access")


def parse_disk(spec: str, line: int) -> Disk:
    """Split a disk spec: positional ``target,format,vdev,access`` and/or ``key=value`` parts."""
    fields = {"format": "raw", "access": "rw", "target": "", "vdev": ""}
    positional = 0
    for part in (p.strip() for p in spec.split(",")):
        if "=" in part:
            k, _, v = part.partition("=")
            k = k.strip()
            if k == "devtype":
                continue
            fields[k] = v.strip()
        elif part:
            if positional < len(_DISK_KEYS):
                fields[_DISK_KEYS[positional]] = part
            positional += 1
    return Disk(spec, fields["target"], fields["format"], fields["vdev"], fields["access"], line)


_UNSAFE = re.compile(r"[\"\\\n\r\x00-\x1f\x7f]")


def quote(value: str, what: str) -> str:
    """``value`` as an xl double-quoted string, or a ConfigError if it cannot be written safely."""
    if m := _UNSAFE.search(value):
        raise ConfigError(
            f"{what} {value!r} holds {m.group()!r}, which an xl config string cannot carry",
            hint="rename the file or choose a value without quotes, backslashes or newlines",
        )
    return f'"{value}"'
