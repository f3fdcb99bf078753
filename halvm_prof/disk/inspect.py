"""What ``disk info`` reports about an image: its status sector and what recovery makes of it.

Apart from :mod:`halvm_prof.disk.image` because it needs recovery, which builds on that module.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from halvm_prof.disk.image import DiskImage
from halvm_prof.disk.recovery import plan_recovery
from halvm_prof.errors import ImageError, LayoutError
from halvm_prof.formats.detect import DETECT_BYTES, detect_kind


@dataclass(frozen=True, slots=True)
class DiskInfo:
    """Everything ``disk info`` reports about an image; ``problem`` says why nothing is usable."""

    path: str
    image_size: int
    word: int | None
    header: str
    agreeing: int
    pairs: int
    committed_size: int | None
    closed: bool | None
    past_commit_bytes: int
    kind: str
    samples: int | None
    recoverable_bytes: int
    problem: str | None

    def to_json(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}


def inspect_image(path: str | os.PathLike[str]) -> DiskInfo:
    """Describe the disk at ``path`` without changing it; only an unreadable file raises."""
    with DiskImage.open(path) as image:
        status = image.status
        problem: str | None = None
        try:
            rec = plan_recovery(image, count_samples=True)
        except (ImageError, LayoutError) as e:
            problem = e.message
            kind = detect_kind(image.read(0, DETECT_BYTES))
            past, samples, out = 0, None, 0
        else:
            kind, past, samples, out = rec.kind, rec.past_commit_bytes, rec.samples, rec.output_size
        return DiskInfo(
            path=os.fspath(path),
            image_size=image.image_size,
            word=status.word,
            header=status.health,
            agreeing=status.agreeing,
            pairs=status.pairs,
            committed_size=status.size if status.usable else None,
            closed=status.closed if status.usable else None,
            past_commit_bytes=past,
            kind=kind,
            samples=samples,
            recoverable_bytes=out,
            problem=problem,
        )
