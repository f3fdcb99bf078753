"""pprof's ``profile.proto``, gzip-compressed: what Grafana Pyroscope, Parca and ``go tool pprof``
take.

Schema: https://github.com/google/pprof/blob/main/proto/profile.proto. The messages are
declared here as a descriptor and built into classes by the ``protobuf`` runtime at first use:
generated ``_pb2`` code is tied to the runtime's major version, and compiling the ``.proto`` at
install time would need ``protoc`` on every machine that installs us.

:class:`PprofBuilder` takes stacks (root first, as every reader here gives them) with one value
per sample type and interns strings, functions and locations as the format asks.
"""

from __future__ import annotations

import gzip
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from halvm_prof.analysis.weights import frame_name, self_weights
from halvm_prof.folds.census import stack_of_band
from halvm_prof.folds.samples import TimeSamples
from halvm_prof.formats.stacks import is_cut
from halvm_prof.model import CostCentreProfile, HeapSample
from halvm_prof.render.speedscope import frame_of

# (field name, number, type, repeated, message type) per message of profile.proto.
_INT64, _UINT64, _BOOL, _STRING, _MESSAGE = 3, 4, 8, 9, 11
_SCHEMA: dict[str, list[tuple[str, int, int, bool, str]]] = {
    "Profile": [
        ("sample_type", 1, _MESSAGE, True, "ValueType"),
        ("sample", 2, _MESSAGE, True, "Sample"),
        ("mapping", 3, _MESSAGE, True, "Mapping"),
        ("location", 4, _MESSAGE, True, "Location"),
        ("function", 5, _MESSAGE, True, "Function"),
        ("string_table", 6, _STRING, True, ""),
        ("drop_frames", 7, _INT64, False, ""),
        ("keep_frames", 8, _INT64, False, ""),
        ("time_nanos", 9, _INT64, False, ""),
        ("duration_nanos", 10, _INT64, False, ""),
        ("period_type", 11, _MESSAGE, False, "ValueType"),
        ("period", 12, _INT64, False, ""),
        ("comment", 13, _INT64, True, ""),
        ("default_sample_type", 14, _INT64, False, ""),
    ],
    "ValueType": [("type", 1, _INT64, False, ""), ("unit", 2, _INT64, False, "")],
    "Sample": [
        ("location_id", 1, _UINT64, True, ""),
        ("value", 2, _INT64, True, ""),
        ("label", 3, _MESSAGE, True, "Label"),
    ],
    "Label": [
        ("key", 1, _INT64, False, ""),
        ("str", 2, _INT64, False, ""),
        ("num", 3, _INT64, False, ""),
        ("num_unit", 4, _INT64, False, ""),
    ],
    "Mapping": [
        ("id", 1, _UINT64, False, ""),
        ("memory_start", 2, _UINT64, False, ""),
        ("memory_limit", 3, _UINT64, False, ""),
        ("file_offset", 4, _UINT64, False, ""),
        ("filename", 5, _INT64, False, ""),
        ("build_id", 6, _INT64, False, ""),
        ("has_functions", 7, _BOOL, False, ""),
        ("has_filenames", 8, _BOOL, False, ""),
        ("has_line_numbers", 9, _BOOL, False, ""),
        ("has_inline_frames", 10, _BOOL, False, ""),
    ],
    "Location": [
        ("id", 1, _UINT64, False, ""),
        ("mapping_id", 2, _UINT64, False, ""),
        ("address", 3, _UINT64, False, ""),
        ("line", 4, _MESSAGE, True, "Line"),
        ("is_folded", 5, _BOOL, False, ""),
    ],
    "Line": [
        ("function_id", 1, _UINT64, False, ""),
        ("line", 2, _INT64, False, ""),
        ("column", 3, _INT64, False, ""),
    ],
    "Function": [
        ("id", 1, _UINT64, False, ""),
        ("name", 2, _INT64, False, ""),
        ("system_name", 3, _INT64, False, ""),
        ("filename", 4, _INT64, False, ""),
        ("start_line", 5, _INT64, False, ""),
    ],
}
_PACKAGE = "perftools.profiles"


@cache
def message_class(name: str) -> Any:
    """The protobuf class of the message ``name`` of profile.proto (``"Profile"``, ...)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    proto = descriptor_pb2.FileDescriptorProto(
        name="halvm_prof/profile.proto", package=_PACKAGE, syntax="proto3"
    )
    for message, fields in _SCHEMA.items():
        m = proto.message_type.add(name=message)
        for fname, number, ftype, repeated, type_name in fields:
            f = m.field.add(name=fname, number=number, type=ftype)
            f.label = f.LABEL_REPEATED if repeated else f.LABEL_OPTIONAL
            if type_name:
                f.type_name = f".{_PACKAGE}.{type_name}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}"))


#: pprof's values are signed 64-bit integers.
INT64 = (-(2**63), 2**63 - 1)


class PprofRangeError(ValueError):
    """A value that pprof's 64-bit fields cannot hold (a damaged profile's figure)."""


@dataclass(frozen=True, slots=True)
class PprofFrame:
    """A frame: its name, and where known its source file and line."""

    name: str
    file: str = ""
    line: int = 0


@dataclass(frozen=True, slots=True)
class PprofMeta:
    """What a profile says about its run: the program, and labels such as ``service_name``,
    commit or run label (put on every sample, and in the comments)."""

    program: str
    labels: tuple[tuple[str, str], ...] = ()
    time_nanos: int = 0
    duration_nanos: int = 0
    #: What the profile's readers should know (a cut name), as comments after the labels.
    notes: tuple[str, ...] = ()


class PprofBuilder:
    """One profile being built: sample types, then stacks with their values."""

    def __init__(
        self,
        sample_types: Sequence[tuple[str, str]],
        meta: PprofMeta,
        *,
        period_type: tuple[str, str] | None = None,
        period: int = 0,
        default: str = "",
    ) -> None:
        self._p = message_class("Profile")()
        self._strings: dict[str, int] = {}
        self._functions: dict[tuple[str, str], int] = {}
        self._locations: dict[PprofFrame, int] = {}
        self._width = len(sample_types)
        self._s("")
        for kind, unit in sample_types:
            self._p.sample_type.add(type=self._s(kind), unit=self._s(unit))
        if period_type is not None:
            self._p.period_type.type = self._s(period_type[0])
            self._p.period_type.unit = self._s(period_type[1])
            self._p.period = period
        if default:
            self._p.default_sample_type = self._s(default)
        self._p.time_nanos = meta.time_nanos
        self._p.duration_nanos = meta.duration_nanos
        self._labels = [(self._s(k), self._s(v)) for k, v in meta.labels]
        self._p.comment.extend(self._s(f"{k}={v}") for k, v in meta.labels)
        self._p.comment.extend(self._s(n) for n in meta.notes)
        # One mapping, the program: pprof's tools name the profile's binary after it.
        self._p.mapping.add(id=1, filename=self._s(meta.program), has_functions=True)
        self.total = [0] * self._width

    def _s(self, text: str) -> int:
        index = self._strings.get(text)
        if index is None:
            index = self._strings[text] = len(self._strings)
            self._p.string_table.append(text)
        return index

    def _location(self, frame: PprofFrame) -> int:
        loc = self._locations.get(frame)
        if loc is not None:
            return loc
        fkey = (frame.name, frame.file)
        fid = self._functions.get(fkey)
        if fid is None:
            fid = self._functions[fkey] = len(self._functions) + 1
            # pprof "demangles" a name equal to its system name, and takes one holding "::",
            # "<>" or "[]" for demangled C++, cutting every (...) and <...> out of it: "I# ::
            # Int (Main:Leaky.hs:14:53)" lost its span, "Data.Semigroup.<>" its operator. Only
            # a mangled C++ symbol (perf's stacks) is given as a system name to demangle.
            system = frame.name if frame.name.startswith("_Z") else ""
            self._p.function.add(
                id=fid,
                name=self._s(frame.name),
                system_name=self._s(system),
                filename=self._s(frame.file),
            )
        loc = self._locations[frame] = len(self._locations) + 1
        location = self._p.location.add(id=loc, mapping_id=1)
        location.line.add(function_id=fid, line=frame.line)
        return loc

    def add(self, stack: Sequence[PprofFrame], values: Sequence[int]) -> None:
        """One sample: ``stack`` from the root down, one value per sample type."""
        if len(values) != self._width:
            raise ValueError(f"{len(values)} values for {self._width} sample types")
        for v in values:
            if not INT64[0] <= v <= INT64[1]:
                where = stack[-1].name if stack else "the profile"
                raise PprofRangeError(f"{where} has {v:,}, more than pprof's 64-bit values hold")
        sample = self._p.sample.add()
        # pprof lists a sample's locations leaf first.
        sample.location_id.extend(self._location(f) for f in reversed(stack))
        sample.value.extend(values)
        for key, value in self._labels:
            sample.label.add(key=key, str=value)
        self.total = [t + v for t, v in zip(self.total, values, strict=True)]

    def to_bytes(self) -> bytes:
        """The gzip-compressed profile (``mtime`` 0: the same input gives the same bytes)."""
        raw: bytes = self._p.SerializeToString(deterministic=True)
        return gzip.compress(raw, mtime=0)


def _frame(name: str, src: str) -> PprofFrame:
    f = frame_of(name, src)
    return PprofFrame(f.name, f.file or "", f.line or 0)


def pprof_of_cost_centres(
    profile: CostCentreProfile, meta: PprofMeta, *, alloc: bool
) -> PprofBuilder:
    """A ``.prof`` (or perf's synthetic stacks) as pprof: per call-tree path, samples (ticks),
    CPU time (ticks x the tick interval) and, with ``alloc``, allocated bytes; the stack is the
    cost-centre stack."""
    ticks = self_weights(profile, "time")
    bytes_of: dict[int, int] = self_weights(profile, "alloc") if alloc else {}
    interval = profile.tick_interval_us * 1000
    types = [("samples", "count"), ("cpu", "nanoseconds")]
    if alloc:
        types.append(("alloc_space", "bytes"))
    # pprof's readers show the last sample type unless told: a time profile opens on its time.
    out = PprofBuilder(
        types, meta, period_type=("cpu", "nanoseconds"), period=interval, default="cpu"
    )
    path: list[PprofFrame] = []
    for depth, node in profile.root.walk():
        del path[depth:]
        path.append(_frame(frame_name(node), node.cc.src))
        t = ticks[id(node)]
        a = bytes_of.get(id(node), 0)
        if t or a:
            out.add(path, [t, t * interval, a] if alloc else [t, t * interval])
    return out


def pprof_of_samples(ts: TimeSamples, meta: PprofMeta) -> PprofBuilder:
    """An eventlog's time-profile samples (``+RTS -p -l``) as pprof: per cost-centre stack,
    samples and CPU time (samples x the tick interval)."""
    interval = ts.tick_interval_ns
    types = [("samples", "count"), ("cpu", "nanoseconds")]
    # Opens on its time, as a .prof's export and Go's own CPU profiles do.
    out = PprofBuilder(
        types, meta, period_type=("cpu", "nanoseconds"), period=interval, default="cpu"
    )
    for stack, n in sorted(ts.stack_counts().items()):
        frames = [_frame(ts.frame_name(cc), ts.cost_centres[cc].src) for cc in ts.stacks[stack]]
        out.add(frames, [n, n * interval])
    return out


def pprof_of_census(
    sample: HeapSample, meta: PprofMeta, *, name_length: int | None
) -> PprofBuilder:
    """One heap census as pprof's in-use space: a sample per band. A ``-hc`` band
    (``name_length``: the ``+RTS -L`` its names were cut at) names a cost-centre stack
    (``inner/outer/...``), which becomes the sample's stack; the piece GHC cut (``main....``)
    becomes no frame: its place is :func:`cut_frame`'s, which says where the stack was cut.
    The note of :func:`~halvm_prof.formats.stacks.cut_note` is one of the comments."""
    # A census counts every byte (nothing is sampled): a period of one byte of space, where
    # Go's sampled heap profiles give their sampling rate.
    out = PprofBuilder(
        [("inuse_space", "bytes")],
        meta,
        period_type=("space", "bytes"),
        period=1,
        default="inuse_space",
    )
    for band, value in sorted(sample.values.items()):
        if name_length is None:
            out.add([PprofFrame(band)], [value])
            continue
        names = stack_of_band(band)
        if is_cut(band, name_length):
            names = [cut_frame(name_length), *names[1:]]  # outermost first: [0] was cut
        out.add([PprofFrame(n) for n in names], [value])
    return out


def cut_frame(name_length: int) -> str:
    """The frame in place of the cost centres GHC cut off a stack's name (its outer end)."""
    return f"(stack cut by +RTS -L{name_length})"


def labels_of(pairs: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(pairs.items()))
