"""The status sector: encoding, word-size detection, majority repair."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from halvm_prof.disk.layout import (
    SECTOR_SIZE,
    decode_status,
    encode_status,
    status_pairs,
    status_sector,
)

words = st.sampled_from([4, 8])


@st.composite
def headers(draw: st.DrawFn) -> tuple[int, int, bool]:
    word = draw(words)
    size = draw(st.integers(0, (1 << (8 * word)) - 1))
    return word, size, draw(st.booleans())


@given(headers())
def test_fast_encoder_matches_the_construct_declaration(h: tuple[int, int, bool]) -> None:
    word, size, closed = h
    pairs = status_sector(word).parse(encode_status(size, closed, word))["pairs"]
    assert len(pairs) == SECTOR_SIZE // (2 * word)
    for p, pair in enumerate(pairs):
        assert pair["size"] == size ^ 2 * p
        assert pair["closed"] == int(closed) ^ 2 * p


@given(words, st.binary(min_size=SECTOR_SIZE, max_size=SECTOR_SIZE))
def test_fast_decoder_matches_the_construct_declaration(word: int, sector: bytes) -> None:
    pairs = status_sector(word).parse(sector)["pairs"]
    assert status_pairs(sector, word) == [(p["size"], p["closed"]) for p in pairs]


@given(headers())
def test_word_size_is_detected_from_the_sector(h: tuple[int, int, bool]) -> None:
    word, size, closed = h
    reading = decode_status(encode_status(size, closed, word))
    assert (reading.word, reading.size, reading.closed, reading.health) == (
        word,
        size,
        closed,
        "ok",
    )
    assert reading.agreeing == reading.pairs == SECTOR_SIZE // (2 * word)


@given(headers(), st.data())
def test_a_minority_of_damaged_pairs_is_repaired(
    h: tuple[int, int, bool], data: st.DataObject
) -> None:
    word, size, closed = h
    npairs = SECTOR_SIZE // (2 * word)
    damaged = data.draw(st.sets(st.integers(0, npairs - 1), min_size=1, max_size=(npairs - 1) // 2))
    sector = bytearray(encode_status(size, closed, word))
    for p in damaged:
        garbage = data.draw(st.binary(min_size=2 * word, max_size=2 * word))
        sector[p * 2 * word : (p + 1) * 2 * word] = garbage
    reading = decode_status(bytes(sector))
    assert reading.health in ("ok", "repaired")
    assert (reading.word, reading.size, reading.closed) == (word, size, closed)
    assert reading.agreeing >= npairs - len(damaged)


def test_blank_and_random_sectors() -> None:
    assert decode_status(bytes(SECTOR_SIZE)).health == "blank"
    for seed in range(50):
        rnd = os.urandom(SECTOR_SIZE) if seed else bytes(range(256)) * 2
        assert decode_status(rnd).health == "corrupt"


def test_majority_lost_is_corrupt() -> None:
    sector = bytearray(encode_status(1843, True, 8))
    sector[: SECTOR_SIZE // 2] = os.urandom(SECTOR_SIZE // 2)
    assert decode_status(bytes(sector)).health == "corrupt"


def test_sizes_that_do_not_fit_a_word_are_refused() -> None:
    with pytest.raises(ValueError):
        encode_status(1 << 32, False, 4)
    with pytest.raises(ValueError):
        encode_status(0, False, 2)
