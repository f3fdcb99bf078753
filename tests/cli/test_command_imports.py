"""What ``eventlog stats`` and ``report`` import on an eventlog (read from ``python -X
importtime``, not timed): their speed against ``ghc-events show`` on a GC-heavy log
(``benchmarks/bench_gc_fold.py``) is mostly start-up, so libraries and modules they never use
stay out (construct's import alone was 13 ms of a 160 ms ``eventlog stats``).
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_help import imported_by
from tests.conftest import DATA

LOG = DATA / "ghc96" / "leaky-gc-l.eventlog"
#: Libraries no eventlog command needs at all (the live view's, the history's, the disk's).
NEVER = {"construct", "rich", "starlette", "uvicorn", "psycopg", "elftools", "ijson"}


def _roots(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_eventlog_stats_imports_no_page_and_no_other_reader() -> None:
    modules = imported_by("eventlog", "stats", str(LOG))
    assert "halvm_prof.timeline.build" in modules  # the command ran
    assert not _roots(modules) & (NEVER | {"jinja2", "markupsafe"})
    unused = {
        "halvm_prof.render.html",  # the report page
        "halvm_prof.render.timeline_page",
        "halvm_prof.analysis.report",
        "halvm_prof.model",  # the heap and cost-centre results
        "halvm_prof.formats.ticky",  # told from an eventlog without its reader
        "hashlib",  # only a digest (runs add) takes it
        "halvm_prof.render.style",  # colours, on a terminal only (here: a pipe)
    }
    assert not modules & unused, sorted(modules & unused)


def test_report_on_an_eventlog_imports_no_other_commands_library(tmp_path: Path) -> None:
    modules = imported_by("report", str(LOG), "-o", str(tmp_path / "r.html"))
    assert {"jinja2", "halvm_prof.render.timeline_page"} <= modules  # the page was made
    assert not _roots(modules) & NEVER
    others = ("halvm_prof.live", "halvm_prof.history", "halvm_prof.analysis.hunt")
    assert not {m for m in modules if m.startswith(others)}
