"""How a command line's RTS flags are taken apart and read for the GHC at hand, and what the
live page says of an eventlog's lag for each GHC (real programs: tests/live/test_run_modern.py)."""

from __future__ import annotations

import pytest

from halvm_prof.errors import ConfigError
from halvm_prof.live.state import eventlog_lag
from halvm_prof.rts import parse_rts_info, plan_flags, split_command


def test_split_command_finds_rts_flags_anywhere_and_keeps_what_follows_rts_verbatim() -> None:
    words = ["./prog", "+RTS", "-N2", "-RTS", "10", "+RTS", "-hT", "--RTS", "+RTS", "-x"]
    assert split_command(words) == (["./prog", "10"], ["-N2", "-hT"], ["+RTS", "-x"])
    # +RTS without -RTS runs to the end, as GHC reads it.
    assert split_command(["./p", "1", "+RTS", "-hc", "-i0.5"]) == (
        ["./p", "1"],
        ["-hc", "-i0.5"],
        [],
    )


def test_hi_is_a_heap_mode_from_ghc_9_2_and_he_from_9_10() -> None:
    with pytest.raises(ConfigError, match=r"GHC 9\.0's RTS refuses -hi"):
        plan_flags(["-hi"])
    hi = plan_flags(["-hi", "-i0.2"], (9, 6, 6))
    assert hi.heap_mode == "i" and hi.interval == 0.2 and not hi.needs_profiled_build
    with pytest.raises(ConfigError, match=r"GHC 9\.6's RTS refuses -he"):
        plan_flags(["-he"], (9, 6))
    assert plan_flags(["-he"], (9, 10, 3)).needs_profiled_build
    with pytest.raises(ConfigError, match="multiple heap profile options"):
        plan_flags(["-hT", "-hi"], (9, 10))


def test_rts_info_needs_ghc_s_own_pairs() -> None:
    assert parse_rts_info("") is None
    assert (
        parse_rts_info('[("GHC RTS", "NO")\n ,("GHC version", "9.6.6")\n ,("RTS way", "rts_v")]')
        is None
    )
    # A leading comma, a version of two parts, a way with several tags.
    info = parse_rts_info(
        ' [("GHC RTS", "YES")\n ,("GHC version", "9.12")\n ,("RTS way", "rts_thr_debug_p")\n'
        ' ,("Flag -with-rtsopts", "-N4 -A64m")\n ]\n'
    )
    assert info is not None and info.ghc == (9, 12) and info.threaded and info.profiled
    assert info.with_rtsopts == "-N4 -A64m" and info.eventlog and info.flushes


@pytest.mark.parametrize(
    ("identifier", "args", "said"),
    [
        ("GHC-9.0.2 rts_thr_l", ["prog"], "GHC 9.0.2 hands its eventlog over in whole buffers"),
        ("GHC-9.6.6 rts_v", ["prog", "+RTS", "--eventlog-flush-interval=1"], "non-threaded RTS"),
        (
            "GHC-9.10.3 rts_thr",
            ["p", "+RTS", "-l", "--eventlog-flush-interval=0.5", "-RTS"],
            "every 0.5 s (+RTS --eventlog-flush-interval=0.5)",
        ),
        ("GHC-9.10.3 rts_thr", ["p"], "as no +RTS --eventlog-flush-interval was given"),
        ("not GHC's", ["p"], "GHC hands its eventlog over in blocks"),
    ],
)
def test_the_lag_note_is_true_for_the_ghc_at_hand(
    identifier: str, args: list[str], said: str
) -> None:
    assert said in eventlog_lag(identifier, args)
