"""The report page, composed once for every command that writes one (``report``, ``report
--hunt``, ``hunt --report`` and ``run``'s ``report.html``): the entrance reads each opened
source in one pass (``inputs.passes.report_read``), analysis makes the page's data
(``analysis.report.build_report_data``), render writes it (``render.html.write_report``).

The caller opens the sources (a command through ``cli.common.open_input_source``, ``run``
its saved files) and closes them; nothing here opens a path.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING

from halvm_prof.analysis.report import TOP_BANDS, Input, build_report_data
from halvm_prof.inputs.passes import report_read
from halvm_prof.render.html import write_report

if TYPE_CHECKING:
    from halvm_prof.analysis.heap_view import HeapView
    from halvm_prof.analysis.hunt import HuntResult
    from halvm_prof.analysis.postmortem import Verdict
    from halvm_prof.inputs.base import Source


def write_report_page(
    sources: Sequence[tuple[str, Source]],
    output: str | os.PathLike[str] | IO[str],
    *,
    title: str,
    top_bands: int = TOP_BANDS,
    view: HeapView | None = None,
    postmortem: Verdict | None = None,
    hunt: HuntResult | None = None,
) -> None:
    """The page of the (label, source) pairs, each read once, written atomically to a path or
    into an open stream; ``hunt``'s verdicts first when given, ``postmortem``'s crash verdict
    with the heap."""
    group_by = view.group_by if view is not None else "info-table"
    inputs: list[tuple[str, Input]] = [
        (label, report_read(label, source, group_by)) for label, source in sources
    ]
    data = build_report_data(
        inputs, title=title, top_bands=top_bands, view=view, postmortem=postmortem, hunt=hunt
    )
    write_report(data, output)
