"""Unit tests of seqcourse.dates: formats, determinism, disjoint splits, no ambiguous source."""
from __future__ import annotations

import datetime as dt

import pytest

from seqcourse.dates import FIRST_DAY, FORMATS, LAST_DAY, LOCALES, add_context, all_days, date_splits, format_date, sample_pairs


def test_formats_write_the_date():
    d = dt.date(1999, 11, 2)
    assert format_date(d, "en", "short") == "11/2/99"
    assert format_date(d, "fr", "full") == "mardi 2 novembre 1999"
    assert format_date(d, "de", "long") == "2. November 1999"
    assert format_date(d, "es", "long") == "2 de noviembre de 1999"
    with pytest.raises(ValueError, match="locale"):
        format_date(d, "xx", "short")
    with pytest.raises(TypeError):
        format_date("1999-11-02", "en", "short")


def test_no_source_string_means_two_dates():
    # ambiguity can only arise when day and month are both <= 12; two-digit years only within one century
    seen = {}
    for year in (1950, 1969, 1999, 2000, 2012, 2049):
        for month in range(1, 13):
            for day in range(1, 13):
                d = dt.date(year, month, day)
                for loc in LOCALES:
                    for fmt in FORMATS[loc]:
                        s = format_date(d, loc, fmt)
                        assert seen.setdefault(s, d) == d, f"{s!r} means both {seen[s]} and {d}"


def test_sample_pairs_deterministic_and_correct():
    days = all_days(dt.date(2000, 1, 1), dt.date(2000, 12, 31))
    assert len(days) == 366
    a = sample_pairs(50, days, seed=4)
    assert a == sample_pairs(50, days, seed=4)
    assert a != sample_pairs(50, days, seed=5)
    for src, tgt in a:
        assert len(tgt) == 10 and tgt.startswith("2000-")
        assert isinstance(src, str) and src
    assert sample_pairs(0, days) == []
    assert {t for _, t in sample_pairs(200, days, locales=["de"])} <= {d.isoformat() for d in days}
    with pytest.raises(ValueError, match="locale"):
        sample_pairs(3, days, locales=["xx"])
    with pytest.raises(ValueError):
        sample_pairs(3, [])
    with pytest.raises(ValueError):
        all_days(dt.date(2000, 1, 2), dt.date(2000, 1, 1))


def test_splits_are_disjoint_and_reproducible():
    s = date_splits(n_train=3000, n_dev=300, n_test=300, seed=1)
    assert {k: len(v) for k, v in s.items()} == {"train": 3000, "dev": 300, "test": 300}
    assert s == date_splits(n_train=3000, n_dev=300, n_test=300, seed=1)
    targets = {k: {t for _, t in v} for k, v in s.items()}
    sources = {k: {x for x, _ in v} for k, v in s.items()}
    for a, b in (("train", "dev"), ("train", "test"), ("dev", "test")):
        assert not targets[a] & targets[b]
        assert not sources[a] & sources[b]
    for _, t in s["test"]:
        assert FIRST_DAY <= dt.date.fromisoformat(t) <= LAST_DAY
    with pytest.raises(ValueError):
        date_splits(10, 10, 10, dev_fraction=0.6, test_fraction=0.5)


def test_context_keeps_meaning_and_lengthens():
    pairs = date_splits(200, 10, 10, seed=0)["train"]
    assert add_context(pairs, 0, 0) == pairs
    longer = add_context(pairs, 2, 5, seed=3)
    assert longer == add_context(pairs, 2, 5, seed=3)
    for (s, t), (s2, t2) in zip(pairs, longer):
        assert t2 == t and s2.startswith(s + " | ")
        assert 2 <= len(s2[len(s) + 3:].split(" ")) <= 12   # some filler items hold a space ("9 h")
    with pytest.raises(ValueError):
        add_context(pairs, 3, 2)
    via_splits = date_splits(200, 10, 10, seed=0, context_words=(2, 5))
    assert all(" | " in s for s, _ in via_splits["train"])
    assert [t for _, t in via_splits["train"]] == [t for _, t in pairs]
