"""``ghc-events show`` text of an eventlog, byte for byte as ghc-events 0.21 prints it.

The text is the declared event types, then every event in time order (a stable sort of the
whole log by time) as ``TIME: [cap N: ]TEXT``. Output is produced in batches while the log is
read (see :meth:`EventlogReader.sweep`), so memory does not grow with the log.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from halvm_prof.formats.eventlog.events import BLOCK_MARKER, Codec, Event, Renderer
from halvm_prof.formats.eventlog.layout import EventType
from halvm_prof.formats.eventlog.reader import EventlogReader, Region, region_frames, sort_key


def event_type_line(et: EventType) -> str:
    size = "variable" if et.size is None else str(et.size)
    return f"{et.num}: {et.desc} (size {size})"


def pretty_time(ns: int) -> str:
    """ghc-events' ``--pretty-time``: seconds, milliseconds and microseconds in columns."""
    secs, rest = divmod(ns, 1_000_000_000)
    msecs, rest = divmod(rest, 1_000_000)
    usecs, nsecs = divmod(rest, 1000)

    def pad(v: int) -> str:
        return "  " if v < 10 else " " if v < 100 else ""

    return f"{pad(secs)}{secs}s {pad(msecs)}{msecs}ms {pad(usecs)}{usecs}.{nsecs}{pad(nsecs)}us"


def event_line(codec: Codec, event: Event, pretty: bool = False) -> str:
    """One event as ghc-events shows it (without the newline)."""
    stamp = pretty_time(event.time) if pretty else str(event.time)
    prefix = f"{stamp}: " if event.cap is None else f"{stamp}: cap {event.cap}: "
    return prefix + codec.render(event.type, event.args)


def show_lines(reader: EventlogReader, *, pretty: bool = False) -> Iterator[str]:
    """The text of ``ghc-events show`` in pieces (each ending with a newline).

    A log cut inside its header gives nothing; check ``reader.stop`` afterwards.
    """
    codec = reader.codec
    if codec is None or reader.header is None:
        return
    yield "Event Types:\n"
    yield "".join(event_type_line(et) + "\n" for et in reader.header.event_types)
    yield "\nEvents:\n"
    load = _fast_loader(reader, codec) if not pretty else _pretty_loader(reader, codec)
    for batch in reader.sweep(load):
        batch.append("")
        yield "\n".join(batch)
    yield "\n"


def _fast_loader(reader: EventlogReader, codec: Codec):  # type: ignore[no-untyped-def]
    """Make a region loader that renders each event at once; the hot loop of ``show``."""
    decoders = codec.decoders
    # Constant texts apart from renderers, so the loop tests one list entry against None.
    consts = [t if isinstance(t, str) else None for t in codec.texts]
    renders = [_constant(t) if isinstance(t, str) else t for t in codec.texts]
    problems = reader.problems

    def load(region: Region, buf: bytes, ridx: int) -> tuple[list[int], list[str]]:
        keys: list[int] = []
        out: list[str] = []
        append = out.append
        add_key = keys.append
        sep = ": " if region.cap is None else f": cap {region.cap}: "
        key_base = sort_key(0, ridx, 0)
        shift = sort_key(1, 0, 0).bit_length() - 1
        frames = region_frames(codec, buf).frames
        for i, (pos, etype, t, payload, size, _cap) in enumerate(frames):
            text = consts[etype]
            if text is None:
                try:
                    text = renders[etype](decoders[etype](buf, payload, size))
                except (ValueError, IndexError, struct.error) as e:
                    at = region.offset + pos
                    problems.append(f"byte {at}: malformed event of type {etype}: {e}")
                    text = f"<malformed {codec.descriptions.get(etype, etype)} event>"
            add_key((t << shift) | key_base | i)
            append(f"{t}{sep}{text}")
        return keys, out

    return load


def _constant(text: str) -> Renderer:
    return lambda _args: text


def _pretty_loader(reader: EventlogReader, codec: Codec):  # type: ignore[no-untyped-def]
    def load(region: Region, buf: bytes, ridx: int) -> tuple[list[int], list[str]]:
        keys: list[int] = []
        out: list[str] = []
        shift = sort_key(1, 0, 0).bit_length() - 1
        for pos, etype, t, payload, size, _cap in region_frames(codec, buf).frames:
            try:
                args = codec.decoders[etype](buf, payload, size)
            except (ValueError, IndexError, struct.error):
                args = ()
            line = event_line(codec, Event(t, etype, region.cap, args, region.offset + pos), True)
            keys.append((t << shift) | sort_key(0, ridx, len(out)))
            out.append(line)
        return keys, out

    return load


def follow_lines(
    reader: EventlogReader,
    *,
    poll: float = 1.0,
    idle_timeout: float | None = None,
    pretty: bool = False,
) -> Iterator[str]:
    """Events as lines in file order while the log grows (like ``ghc-events inc force``)."""
    codec = reader.codec
    if codec is None:
        return
    for event in reader.follow(poll=poll, idle_timeout=idle_timeout):
        yield event_line(codec, event, pretty) + "\n"


__all__ = ["BLOCK_MARKER", "event_line", "follow_lines", "pretty_time", "show_lines"]
