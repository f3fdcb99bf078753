"""xl domain configs: our own reader of Xen's syntax (keeping line numbers) and a quoting writer.

The reader follows Xen 4.17's ``libxlu_cfg`` lexer and grammar exactly, so that a config gets
the same verdict here as in ``xl create``; the tests prove it against Xen's own library:

- settings are ``key = value`` or ``key += value``, ended by a new line or ``;``; keys are
  ``[a-z][._0-9a-z]*`` (no capitals); ``#`` comments run to a new line, which they need;
- a value is a string in double or single quotes (backslash escapes, no new line), a number
  (``[0-9][0-9a-fx]*``, kept as text as Xen does: ``memory = "64"`` means 64 too) or a list in
  brackets, which may nest, span lines and end with a comma;
- the last setting of a key wins; ``+=`` joins strings, or lists, to the earlier value;
- anything else (a carriage return, ``-1``, ``64M``, a capital) is an error.

Disk specs (``xl-disk-configuration(5)``) are read as ``libxlu_disk`` reads them: positional
``target,format,vdev,access``, ``key=value`` parameters, ``target=`` taking the rest, and the
old ``file:``/``phy:``/``tap:aio:`` prefixes after which the format is not given.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Literal

from halvm_prof.errors import ConfigError
from halvm_prof.files.input import open_input

#: A value as Xen keeps it: every atom is text (numbers too); lists may nest.
Value = str | list["Value"]

_HINT = 'xl\'s syntax: key = "string" | number | [ list ], one setting per line'
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1
_SPACE = " \t\n\v\f\r"  # C isspace()


@dataclass(slots=True)
class Setting:
    """A key's value as Xen keeps it, where it stands, and every line that set it."""

    key: str
    value: Value
    line: int
    op: Literal["=", "+="] = "="
    item_lines: list[int] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Disk:
    """A ``disk = [...]`` entry as xl reads it.

    ``format`` is Xen's name (``raw``, ``qcow2``, ...; ``raw`` when not given), ``access`` is
    ``rw`` or ``ro``. ``error`` is why xl refuses the spec (then it starts no domain at all).
    """

    spec: str
    target: str
    format: str
    vdev: str
    access: str
    line: int
    cdrom: bool = False
    error: str | None = None

    @property
    def readwrite(self) -> bool:
        return self.access == "rw"


@dataclass(slots=True)
class XlConfig:
    """A parsed xl config: settings by key (the last one of each key wins)."""

    path: str | None
    settings: dict[str, Setting]

    def get(self, key: str) -> Value | None:
        s = self.settings.get(key)
        return s.value if s else None

    def line(self, key: str) -> int | None:
        s = self.settings.get(key)
        return s.line if s else None

    def get_string(self, key: str) -> str | None:
        """The key's text, or None when it is absent or a list (xl ignores it then)."""
        v = self.get(key)
        return v if isinstance(v, str) else None

    def get_long(self, key: str) -> int | None:
        """The key as a number as xl reads it (C ``strtol``, base 0), or None if xl cannot."""
        s = self.settings.get(key)
        if s is None or not isinstance(s.value, str) or s.op == "+=":
            return None
        return c_strtol(s.value)

    @property
    def kernel(self) -> str | None:
        return self.get_string("kernel")

    @property
    def memory(self) -> int | None:
        """Memory in MiB, or None when absent or not a number xl accepts."""
        return self.get_long("memory")

    @property
    def extra(self) -> str | None:
        return self.get_string("extra")

    def command_line(self) -> tuple[str | None, str | None]:
        """The kernel command line xl builds, and the key it comes from (``cmdline`` wins)."""
        cmdline, root, extra = (self.get_string(k) for k in ("cmdline", "root", "extra"))
        if cmdline is not None:
            return cmdline, "cmdline"
        if root is not None:
            return (f"root={root} {extra}" if extra is not None else f"root={root}"), "root"
        return extra, "extra" if extra is not None else None

    def disks(self) -> list[Disk]:
        """The disks xl attaches: the list's string items up to the first that is not one."""
        s = self.settings.get("disk")
        if s is None or not isinstance(s.value, list):
            return []
        out = []
        for item, line in zip(s.value, s.item_lines, strict=True):
            if not isinstance(item, str):
                break
            out.append(parse_disk(item, line))
        return out


def c_strtol(text: str) -> int | None:
    """``strtol(text, &end, 0)`` accepting only when all of ``text`` is read, as xl does."""
    m = re.fullmatch(r"[ \t\n\v\f\r]*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)", text)
    if m is None:
        return None
    digits = m.group(2)
    base = 16 if digits[:2].lower() == "0x" else 8 if digits.startswith("0") else 10
    n = int(digits, base) * (-1 if m.group(1) == "-" else 1)
    return n if _LONG_MIN <= n <= _LONG_MAX else None


# One alternative per rule of Xen's lexer; each has a single possible match where it matches,
# so Python's first match is flex's longest one.
_TOKEN = re.compile(
    r"""(?P<ws>[ \t]+)|(?P<nl>\n|\#[^\n]*\n)
    |(?P<str>"(?:[^"\\\n]|\\[^\n])*"|'(?:[^'\\\n]|\\[^\n])*')
    |(?P<ident>[a-z][._0-9a-z]*)|(?P<num>[0-9][0-9a-fx]*)|(?P<op>\+=|[=\[\],;])""",
    re.VERBOSE,
)
_ESCAPES = {
    '"': '"',
    "'": "'",
    "\\": "\\",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
}


def _strtoul10_length(text: str) -> int:
    """How many characters C ``strtoul(text, &end, 10)`` reads (0 when it finds no digit)."""
    m = re.match(r"[ \t\n\v\f\r]*[+-]?[0-9]+", text)
    return m.end() if m else 0


def _dequote(token: str) -> str:
    """A quoted string's text, escapes applied as Xen 4.17 applies them.

    Xen's numeric escapes are broken: ``\\x..`` is always an error, and ``\\1..`` style
    ones vanish from the text; both are reproduced here because they decide Xen's verdict.
    """
    body, out, i = token[1:-1], [], 0
    while i < len(body):
        c = body[i]
        i += 1
        if c != "\\":
            out.append(c)
            continue
        nc = body[i]
        i += 1
        if nc in _ESCAPES:
            out.append(_ESCAPES[nc])
        elif nc == "x":
            raise ValueError("Xen cannot read a \\x escape in a string")
        elif "0" <= nc <= "7":
            n = _strtoul10_length(body[i : i + 3])
            if n <= 1:
                raise ValueError("Xen cannot read a numeric escape in a string")
            i += n
        else:
            raise ValueError(f"Xen knows no escape \\{nc} in a string")
    return "".join(out)


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str  # nl, str, ident, num, op, end
    text: str
    line: int
    value: str = ""


def _tokens(text: str, path: str | None) -> list[_Tok]:
    out: list[_Tok] = []
    pos, line = 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None and pos == len(text) - 1:
            # Xen's lexer reports a bad character only with what follows it: a bad last
            # character of the file is silently dropped (a lone "#" at the end, say).
            break
        if m is None:
            raise ConfigError(
                f"syntax error: {_what_is_wrong(text, pos)}", path=path, line=line, hint=_HINT
            )
        kind = m.lastgroup or ""
        if kind == "str":
            try:
                value = _dequote(m.group())
            except ValueError as e:
                raise ConfigError(
                    f"syntax error: {e}", path=path, line=line, hint="write the character itself"
                ) from e
            out.append(_Tok(kind, m.group(), line, value))
        elif kind != "ws":
            out.append(_Tok(kind, m.group(), line, m.group()))
        if kind == "nl":
            line += 1
        pos = m.end()
    out.append(_Tok("end", "", line))
    return out


def _what_is_wrong(text: str, pos: int) -> str:
    c = text[pos]
    near = re.match(r"[^ \t\n]*", text[pos:])
    word = near.group() if near else c
    if c == "\r":
        return "a carriage return (Windows line ends), which Xen rejects; convert with dos2unix"
    if c == "#":
        return "a comment at the very end without a new line, which Xen rejects"
    if c in "\"'":
        return f"a string that is not closed on its line: {word!r}"
    if c.isupper() and c.isascii():
        return f"{word!r}: setting names are lower case"
    if c in "+-.():":
        return f"unexpected {word!r} (arbitrary Python is no longer accepted by xl)"
    return f"unexpected {word!r}"


#: The deepest list nesting read (xl's own settings nest two deep at most).
MAX_NESTING = 32


class _Parser:
    """Recursive descent over Xen's grammar (``libxlu_cfg_y.y``)."""

    def __init__(self, toks: list[_Tok], path: str | None) -> None:
        self.toks = toks
        self.i = 0
        self.path = path
        self.settings: dict[str, Setting] = {}

    def peek(self) -> _Tok:
        return self.toks[self.i]

    def take(self) -> _Tok:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def fail(self, tok: _Tok, what: str) -> ConfigError:
        return ConfigError(f"syntax error: {what}", path=self.path, line=tok.line, hint=_HINT)

    def skip_newlines(self) -> None:
        while self.peek().kind == "nl":
            self.i += 1

    def parse(self) -> dict[str, Setting]:
        while (tok := self.take()).kind != "end":
            if tok.kind == "nl" or tok.text == ";":
                continue
            if tok.kind != "ident":
                raise self.fail(tok, f"expected a setting name, found {_show(tok)}")
            op = self.take()
            if op.text not in ("=", "+="):
                raise self.fail(op, f"expected '=' after {tok.text}, found {_show(op)}")
            start = self.peek()
            item_lines: list[int] = []
            value = self.value(item_lines)
            end = self.peek()
            if end.kind not in ("nl", "end") and end.text != ";":
                raise self.fail(end, f"unexpected {_show(end)} after the value of {tok.text}")
            self.store(tok, "=" if op.text == "=" else "+=", value, start.line, item_lines)
        return self.settings

    def value(self, item_lines: list[int] | None = None, depth: int = 0) -> Value:
        tok = self.take()
        if tok.kind in ("str", "num"):
            return tok.value
        if tok.text != "[":
            raise self.fail(tok, f"expected a value, found {_show(tok)}")
        if depth >= MAX_NESTING:
            # Bounds every walk over a value (ours recurse), and no xl setting nests past 2.
            raise self.fail(tok, f"lists nested more than {MAX_NESTING} deep")
        items: list[Value] = []
        self.skip_newlines()
        while self.peek().text != "]":
            item_tok = self.peek()
            if item_tok.kind not in ("str", "num") and item_tok.text != "[":
                raise self.fail(item_tok, f"unexpected {_show(item_tok)} in a list")
            items.append(self.value(depth=depth + 1))
            if item_lines is not None:
                item_lines.append(item_tok.line)
            self.skip_newlines()
            sep = self.peek()
            if sep.text == ",":
                self.i += 1
                self.skip_newlines()
            elif sep.text != "]":
                raise self.fail(sep, f"expected ',' or ']' in a list, found {_show(sep)}")
        self.i += 1
        return items

    def store(
        self, key: _Tok, op: Literal["=", "+="], value: Value, line: int, item_lines: list[int]
    ) -> None:
        old = self.settings.get(key.text)
        lines = [*old.lines, key.line] if old else [key.line]
        if op == "+=" and old is not None:
            if isinstance(old.value, list) != isinstance(value, list):
                raise self.fail(key, f"{key.text} += cannot add a list to a string or the reverse")
            if isinstance(old.value, list) and isinstance(value, list):
                value = old.value + value
                item_lines = old.item_lines + item_lines
            elif isinstance(old.value, str) and isinstance(value, str):
                value = old.value + value
        self.settings[key.text] = Setting(key.text, value, line, op, item_lines, lines)


def _show(tok: _Tok) -> str:
    if tok.kind == "end":
        return "the end of the file"
    if tok.kind == "nl":
        return "the end of the line"
    return repr(tok.text)


def parse_config(text: str | bytes, path: str | os.PathLike[str] | None = None) -> XlConfig:
    """Parse xl config ``text``; a syntax error is a ConfigError naming the line."""
    where = os.fspath(path) if path is not None else None
    raw = text if isinstance(text, bytes) else text.encode("utf-8")
    # Xen's lexer is 8-bit: one character per byte; text is decoded back from UTF-8 afterwards.
    toks = _tokens(raw.decode("latin-1"), where)
    settings = _Parser(toks, where).parse()
    for s in settings.values():
        s.value = _from_latin1(s.value)
    return XlConfig(where, settings)


def _from_latin1(value: Value) -> Value:
    if isinstance(value, str):
        # surrogateescape: a disk path that is not UTF-8 still names its file.
        return value.encode("latin-1").decode("utf-8", "surrogateescape")
    return [_from_latin1(v) for v in value]


#: The largest config read. Real xl configs are a few hundred bytes; the cap keeps a disk
#: image, /dev/zero or /dev/urandom given as the config from being read whole.
MAX_CONFIG_BYTES = 256 << 10


def read_config_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the config at ``path``: a regular file of at most 256 KiB, else refused."""
    with open_input(path) as stream:
        st = os.fstat(stream.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(
                "is not a regular file (a device or FIFO); an xl config is a small text file",
                path=path,
                hint="name the config file",
            )
        data = stream.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"is {max(st.st_size, len(data))} bytes; an xl config is at most "
            f"{MAX_CONFIG_BYTES >> 10} KiB (is this a disk image or another file?)",
            path=path,
            hint="name the config file",
        )
    return data


#: The one rule for a file a config names (kernel, disk image), stated for help texts and hints.
PATH_RULE = "relative paths in an xl config are read from the current folder, as xl reads them"


def config_file(target: str) -> str:
    """The file ``target`` (a kernel or disk path in a config) names when xl runs here.

    xl opens relative paths from the folder it runs in, never from the config's folder, so
    every command reads them the same way (``xen-config check``, ``postmortem --config``).
    The path is made absolute, so reports name the file wherever they are read.
    """
    return os.path.abspath(target)


def missing_hint(target: str, config: str | os.PathLike[str] | None = None) -> str:
    """What to do when ``target`` is not there: the rule, and where the file is if it is
    beside the config (then the user is in the wrong folder, not missing the file)."""
    if config is not None and not os.path.isabs(target):
        folder = os.path.dirname(os.fspath(config)) or "."
        if os.path.exists(os.path.join(folder, target)) and os.path.abspath(folder) != os.getcwd():
            return f"{PATH_RULE}; it is in {folder}: run from there"
    return PATH_RULE


def read_config(path: str | os.PathLike[str]) -> XlConfig:
    """Read the xl config file at ``path`` (kernel, memory, extra, disks...)."""
    return parse_config(read_config_bytes(path), path)


# --- disk specs --------------------------------------------------------------------------------

_FORMATS = ("raw", "qcow", "qcow2", "vhd", "empty", "qed")
_KEYWORD = re.compile(
    r"(format|access|backend|backendtype|specification|vdev|script|colo-host|colo-port"
    r"|colo-export|active-disk|hidden-disk)=([^,]*),?"
)
# "trusted"/"untrusted" are in Xen's lexer source but not in the lexer 4.17 ships (tested); 4.20's
# reads them as flags. We follow 4.17 (tests/unit/test_xen_xlcfg.py::_TRUSTED).
_FLAG = re.compile(
    r"(cdrom|devtype=cdrom|devtype=disk|direct-io-safe|discard|no-discard|colo|no-colo),?"
)
_FORMAT_PREFIX = re.compile(r"(raw|qcow2?|vhd):")
_OTHER_PREFIX = re.compile(r"(iscsi|e?nbd|drbd|tapdisk|tap2?|aio|ioemu|file|phy):")
_UNKNOWN_PREFIX = re.compile(r"[a-z][a-z0-9]*:")
_POSITIONAL = re.compile(r"[^=,]*,|[^=,]+,?")


class _DiskError(Exception):
    pass


@dataclass(slots=True)
class _DiskParse:
    target: str | None = None
    format: str | None = None
    vdev: str | None = None
    access: str = "rw"
    access_set: bool = False
    cdrom: bool = False
    prefix: bool = False

    def set_format(self, value: str) -> None:
        name = value or "raw"
        if name not in _FORMATS:
            raise _DiskError(f"unknown format {value!r} (xl knows {', '.join(_FORMATS)})")
        if self.format is not None and self.format != name:
            raise _DiskError(f"format given twice ({self.format!r} and {name!r})")
        self.format = name

    def set_access(self, value: str) -> None:
        if value in ("r", "ro"):
            self.access = "ro"
        elif value in ("rw", "w", ""):
            self.access = "rw"
        else:
            raise _DiskError(f"unknown access {value!r} (use rw or ro)")

    def save(self, what: Literal["target", "vdev"], value: str) -> None:
        if getattr(self, what):  # an empty one may be replaced, as in Xen
            raise _DiskError(f"{what} given twice")
        setattr(self, what, value)

    def vdev_and_devtype(self, text: str) -> bool:
        vdev, colon, devtype = text.rpartition(":")
        if not colon:
            return False
        self.save("vdev", vdev)
        if devtype not in ("cdrom", "disk"):
            raise _DiskError(f"unknown device type {devtype!r} after ':'")
        self.cdrom = devtype == "cdrom"
        return True

    def positional(self, text: str) -> None:
        if self.target is None:
            self.save("target", text)
        elif not self.prefix and self.format is None:
            if not self.target and self.vdev_and_devtype(text):
                self.format = "empty"
            else:
                self.set_format(text)
        elif self.vdev is None:
            if not self.vdev_and_devtype(text):
                self.save("vdev", text)
        elif not self.access_set:
            self.access_set = True
            self.set_access(text)
        else:
            raise _DiskError(f"too many fields: {text!r} after target, format, vdev and access")


def _strip_comma(text: str) -> str:
    return text[:-1] if text.endswith(",") else text


def parse_disk(spec: str, line: int) -> Disk:
    """Read one disk spec as xl does; a spec xl refuses gets ``error`` set."""
    d = _DiskParse()
    error = None
    try:
        _scan_disk(spec, d)
        if d.cdrom:
            d.access = "ro"
            if not d.target:
                d.format = "empty"
        if d.vdev is None:
            raise _DiskError("no vdev (device name) given")
        if d.target is None and not d.cdrom:
            raise _DiskError("no target (image path) given")
    except _DiskError as e:
        error = str(e)
    return Disk(
        spec, d.target or "", d.format or "raw", d.vdev or "", d.access, line, d.cdrom, error
    )


def _line_length(text: str, start: int = 0) -> int:
    """How far flex's ``.*`` reaches from ``start``: up to a new line."""
    end = text.find("\n", start)
    return len(text) if end < 0 else end


def _candidate(
    out: list[tuple[int, int, str, str]],
    m: re.Match[str] | None,
    order: int,
    rule: str,
    length: int | None = None,
) -> None:
    if m is not None:
        out.append((length if length is not None else m.end(), -order, rule, m.group()))


def _scan_disk(spec: str, d: _DiskParse) -> None:
    pos = 0
    while pos < len(spec):
        rest = spec[pos:]
        # Flex takes the longest match, the earlier rule on a tie; rules with trailing context
        # ("/.*") count the context in their length, so they win over the positional rule.
        # Each candidate: (length counted by flex, -rule order, rule, text it consumes).
        candidates: list[tuple[int, int, str, str]] = []
        add = functools.partial(_candidate, candidates)
        if m := re.match(r"[ \t\n]+", rest):
            add(m, 0, "space", _line_length(rest, m.end()))
        add(re.match(r"format=[^,]*,?", rest), 1, "format")
        add(_FLAG.match(rest), 2, "flag")
        add(re.match(r"devtype=[^,]*,?", rest), 3, "devtype")
        add(_KEYWORD.match(rest), 4, "keyword")
        add(re.match(r"target=[^\n]*", rest), 5, "target")
        add(re.match(r"[a-z][-a-z0-9]*=[^,],?", rest), 6, "unknown")
        add(_FORMAT_PREFIX.match(rest), 7, "format-prefix", _line_length(rest))
        add(_OTHER_PREFIX.match(rest), 8, "prefix", _line_length(rest))
        if m := _UNKNOWN_PREFIX.match(rest):
            after = rest[m.end() : m.end() + 1]
            # "[^a-z0-9].*": any character but a letter or digit, a new line too, then the line
            alnum = re.match(r"[a-z0-9]", after)
            reach = _line_length(rest, m.end() + 1) if after and not alnum else m.end()
            add(m, 9, "unknown-prefix", reach)
        add(_POSITIONAL.match(rest), 10, "positional")
        if not candidates and len(rest) == 1:
            break  # as in the config lexer, a bad last character is dropped unreported
        if not candidates and rest[1] == "\n":
            raise _DiskError("xl exits on this spec (its disk lexer jams on a new line)")
        if not candidates:
            raise _DiskError(f"bad disk syntax near {rest!r}")
        _, _, rule, text = max(candidates)
        _apply_disk_rule(rule, text, d)
        pos += len(text)


def _apply_disk_rule(rule: str, text: str, d: _DiskParse) -> None:
    """Apply the rule that won at the current position to the text it matched."""
    word = _strip_comma(text)
    key, _, value = word.partition("=")
    if rule == "space":
        return
    if rule == "target":
        d.save("target", value)
    elif rule in ("prefix", "format-prefix"):
        d.prefix = True
        if rule == "format-prefix":
            d.set_format(text[:-1])
    elif rule == "unknown-prefix":
        raise _DiskError(f"unknown prefix {text!r}")
    elif rule == "flag":
        if word in ("cdrom", "devtype=cdrom"):
            d.cdrom = True
        elif word == "devtype=disk":
            d.cdrom = False
    elif rule == "positional":
        d.positional(word)
    elif rule == "devtype":
        raise _DiskError(f"unknown devtype {value!r}")
    elif rule == "unknown":
        raise _DiskError(f"unknown parameter {key!r}")
    elif rule == "format":
        d.set_format(value)
    elif key == "access":
        d.set_access(value)
    elif key == "vdev":
        d.save("vdev", value)
    elif key == "backendtype" and value not in ("phy", "tap", "qdisk", "standalone"):
        raise _DiskError(f"unknown backendtype {value!r}")
    elif key == "specification" and value not in ("xen", "virtio"):
        raise _DiskError(f"unknown specification {value!r}")
    elif key == "colo-port" and not re.match(r"[ \t\n\v\f\r]*[+-]?0*[1-9]", value):
        raise _DiskError(f"bad colo-port {value!r}")


# --- writing -----------------------------------------------------------------------------------

_UNSAFE = re.compile(r"[\"\\\x00-\x1f\x7f]")


def quote(value: str, what: str) -> str:
    """``value`` as an xl double-quoted string, or a ConfigError if it cannot be written safely.

    Xen could read escapes, but a quote, backslash or control character in a path or a flag
    is almost always a mistake, and escapes are where Xen's own reader is broken.
    """
    if m := _UNSAFE.search(value):
        raise ConfigError(
            f"{what} {value!r} holds {m.group()!r}, which an xl config string cannot carry",
            hint="rename the file or choose a value without quotes, backslashes or newlines",
        )
    return f'"{value}"'


def disk_spec(target: str, vdev: str, access: str = "rw", fmt: str = "raw") -> str:
    """A disk spec that xl reads back as exactly these values, or a ConfigError.

    The short positional form is used when it reads back right; otherwise ``target=`` goes last,
    where it takes the rest of the spec (commas, ``=`` and ``:`` included).
    """
    intended = (target, fmt, vdev, access)
    for spec in (
        f"{target},{fmt},{vdev},{access}",
        f"format={fmt},vdev={vdev},access={access},target={target}",
    ):
        d = parse_disk(spec, 0)
        if d.error is None and (d.target, d.format, d.vdev, d.access) == intended:
            return spec
    raise ConfigError(
        f"disk path {target!r} cannot be written in an xl disk spec",
        hint="use a path without leading spaces, a trailing comma or a new line",
    )
