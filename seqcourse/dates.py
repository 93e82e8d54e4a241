"""A translation task that needs no download: dates written many ways, in four languages, to ISO 8601.

``"mardi 2 novembre 1999"``, ``"11/2/99"``, ``"2. Nov. 1999"`` and ``"2 de noviembre de 1999"`` all become
``"1999-11-02"``. The sources come from the locale data that Babel ships (the CLDR date formats
``short``, ``medium``, ``long`` and ``full``, plus a few custom patterns), so they are the forms people
actually write. The task is small enough to train on a CPU in a minute or two, character by character,
yet it is a real sequence-to-sequence problem: source and target lengths differ, month names must be
translated, numbers reordered, two-digit years completed.

Dates run from 1950-01-01 to 2049-12-31, so a two-digit year is never ambiguous (50-99 -> 19xx,
00-49 -> 20xx). The formats are chosen so that no source string can mean two dates (for instance
Spanish ``d/M/yy`` is left out: ``"3/4/99"`` would be 4 March in English and 3 April in Spanish).

Everything is deterministic given a seed. :func:`date_splits` gives train/dev/test sets over disjoint
sets of calendar days, so no source string and no target string appears in two splits.

Example::

    splits = date_splits(n_train=20000, n_dev=1000, n_test=2000, seed=0)
    splits["train"][0]     # ('14 juil. 1987', '1987-07-14')
"""
from __future__ import annotations

import datetime as _dt
import random
from typing import Sequence

__all__ = ["LOCALES", "FORMATS", "FIRST_DAY", "LAST_DAY", "format_date", "all_days", "sample_pairs",
           "date_splits", "add_context"]

LOCALES = ("en", "fr", "de", "es")

# Babel's named formats ('short', 'medium', 'long', 'full') or CLDR patterns, per locale.
FORMATS: dict[str, tuple[str, ...]] = {
    "en": ("short", "medium", "long", "full", "d MMMM y", "d MMM y", "y/MM/dd"),
    "fr": ("short", "medium", "long", "full", "EEE d MMM y", "d/M/y"),
    "de": ("short", "medium", "long", "full", "d. MMM y", "EEE, d.M.y"),
    "es": ("medium", "long", "full", "d/M/y", "d MMMM y", "EEE, d MMM y"),
}

FIRST_DAY = _dt.date(1950, 1, 1)
LAST_DAY = _dt.date(2049, 12, 31)


def format_date(day: _dt.date, locale: str, fmt: str) -> str:
    """``day`` written in ``locale`` with a Babel format name or CLDR pattern, e.g. ``(1999-11-02, 'fr',
    'full') -> 'mardi 2 novembre 1999'``."""
    from babel.dates import format_date as _babel_format

    if locale not in FORMATS:
        raise ValueError(f"unknown locale {locale!r}; choose one of {list(FORMATS)}")
    if not isinstance(day, _dt.date):
        raise TypeError(f"day must be a datetime.date, got {type(day).__name__}")
    return _babel_format(day, fmt, locale=locale)


def all_days(first: _dt.date = FIRST_DAY, last: _dt.date = LAST_DAY) -> list[_dt.date]:
    """Every calendar day from ``first`` to ``last``, inclusive."""
    if last < first:
        raise ValueError(f"last ({last}) is before first ({first})")
    return [first + _dt.timedelta(days=k) for k in range((last - first).days + 1)]


def _check_locales(locales: Sequence[str]) -> tuple[str, ...]:
    locales = tuple(locales)
    if not locales:
        raise ValueError("need at least one locale")
    unknown = [loc for loc in locales if loc not in FORMATS]
    if unknown:
        raise ValueError(f"unknown locale(s) {unknown}; choose among {list(FORMATS)}")
    return locales


def sample_pairs(n: int, days: Sequence[_dt.date], seed: int = 0, locales: Sequence[str] = LOCALES,
                 n_dates: tuple[int, int] = (1, 1)) -> list[tuple[str, str]]:
    """``n`` (source, target) pairs: a day drawn uniformly from ``days``, a locale uniformly from
    ``locales``, a format uniformly from that locale's :data:`FORMATS`; target ``YYYY-MM-DD``.

    ``n_dates=(lo, hi)`` puts a list of ``lo`` to ``hi`` dates (uniformly many) in each source, joined by
    ``"; "``, and their ISO forms in the target, joined by ``" "``: ``"2/11/1999; 3. Mai 2001"`` ->
    ``"1999-11-02 2001-05-03"``. More dates, more to remember: the length experiment of chapter 6.
    """
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    if len(days) == 0:
        raise ValueError("no days to sample from")
    lo, hi = n_dates
    if not (isinstance(lo, int) and isinstance(hi, int) and 1 <= lo <= hi):
        raise ValueError(f"n_dates must be integers 1 <= lo <= hi, got {n_dates}")
    locales = _check_locales(locales)
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        k = rng.randint(lo, hi) if hi > lo else lo
        sources, targets = [], []
        for _ in range(k):
            day = days[rng.randrange(len(days))]
            loc = locales[rng.randrange(len(locales))]
            fmt = FORMATS[loc][rng.randrange(len(FORMATS[loc]))]
            sources.append(format_date(day, loc, fmt))
            targets.append(day.isoformat())
        pairs.append(("; ".join(sources), " ".join(targets)))
    return pairs


def date_splits(n_train: int = 20000, n_dev: int = 1000, n_test: int = 2000, seed: int = 0,
                locales: Sequence[str] = LOCALES, dev_fraction: float = 0.1,
                test_fraction: float = 0.1,
                n_dates: tuple[int, int] = (1, 1),
                context_words: tuple[int, int] | None = None) -> dict[str, list[tuple[str, str]]]:
    """Train, dev and test pairs drawn from DISJOINT sets of calendar days.

    The 36,525 days from 1950 to 2049 are shuffled with ``seed``; the first ``test_fraction`` of them are
    test days, the next ``dev_fraction`` dev days, the rest train days. So no date, and hence no source or
    target string, occurs in two splits: held-out accuracy measures generalisation to unseen dates.
    ``n_dates=(lo, hi)`` makes each source a list of ``lo`` to ``hi`` dates (:func:`sample_pairs`).
    ``context_words=(lo, hi)`` appends between ``lo`` and ``hi`` filler words to every source
    (:func:`add_context`): the length-varied version of the task, same targets.
    Returns ``{"train": [...], "dev": [...], "test": [...]}`` of (source, target) string pairs.
    """
    if not (0 < dev_fraction < 1 and 0 < test_fraction < 1 and dev_fraction + test_fraction < 1):
        raise ValueError("dev_fraction and test_fraction must be in (0, 1) and sum to less than 1")
    days = all_days()
    random.Random(seed).shuffle(days)
    n_te, n_de = round(len(days) * test_fraction), round(len(days) * dev_fraction)
    pools = {"test": days[:n_te], "dev": days[n_te:n_te + n_de], "train": days[n_te + n_de:]}
    sizes = {"train": n_train, "dev": n_dev, "test": n_test}
    offsets = {"train": 1, "dev": 2, "test": 3}
    out = {name: sample_pairs(sizes[name], pools[name], seed=seed * 10 + offsets[name], locales=locales,
                              n_dates=n_dates)
           for name in ("train", "dev", "test")}
    if context_words is not None:
        lo, hi = context_words
        out = {name: add_context(pairs, lo, hi, seed=seed * 10 + offsets[name]) for name, pairs in out.items()}
    return out


# Filler for the length experiment: what often follows a date in real text (a time, a place, a note).
_FILLER_WORDS = ("a", "de", "le", "am", "en", "um", "at", "la", "und", "and", "et", "y", "du", "del", "the",
                 "meeting", "rendez-vous", "Termin", "reunión", "Paris", "Berlin", "Madrid", "London",
                 "10h30", "14:00", "9 h", "noon", "midi", "Mittag", "office", "bureau", "Büro", "oficina",
                 "room", "salle", "Raum", "sala", "confirmed", "confirmé", "bestätigt", "confirmado")


def add_context(pairs: Sequence[tuple[str, str]], min_words: int = 0, max_words: int = 8, seed: int = 0,
                sep: str = " | ") -> list[tuple[str, str]]:
    """Make sources longer without changing what they mean: append ``sep`` and a random number (between
    ``min_words`` and ``max_words``) of filler words after each date, e.g.
    ``"2 nov. 1999 | Berlin 14:00 room"`` -> still ``"1999-11-02"``.

    The date comes first, so an encoder that reads left to right must carry it through the filler to its
    final state: the longer the filler, the harder that is. This is the length experiment of chapter 7; with
    ``max_words=0`` the pairs come back unchanged.
    """
    if not (isinstance(min_words, int) and isinstance(max_words, int) and 0 <= min_words <= max_words):
        raise ValueError(f"need integers 0 <= min_words <= max_words, got {min_words}, {max_words}")
    rng = random.Random(seed)
    out = []
    for src, tgt in pairs:
        k = rng.randint(min_words, max_words)
        if k == 0:
            out.append((src, tgt))
            continue
        words = [_FILLER_WORDS[rng.randrange(len(_FILLER_WORDS))] for _ in range(k)]
        out.append((src + sep + " ".join(words), tgt))
    return out
