"""Variable-length sequences: two synthetic language tasks and the padding they need (chapter 5).

Both tasks are generated, never downloaded, and are deterministic: the same ``seed`` gives the same tensors
on any machine. Token and tag ids are ``int64``; index 0 is ``<pad>`` in every vocabulary (see the notation
page), so padded batches come back with zeros after each sentence's last real token, and ``lengths``
holds the real lengths.

- :func:`entity_tagging_task` -- sequence tagging (one tag per token). Toy named entities in BIO format whose
  *type* is revealed only by the word that ends the entity ("alba faro **inc**" is an organisation, "alba
  faro **river**" a place), so a tagger must look to the right, and whether a name *begins* an entity
  (``B-``) or continues it (``I-``) is decided by the word on its left.
- :func:`sentiment_task` -- sentence classification (one label per sentence). Toy reviews whose polarity is
  the sum of their polar words, where ``not`` flips the polar word right after it.
"""
from __future__ import annotations

from typing import Sequence

import torch

from .text import PAD, pad_batch


# --- entity tagging -------------------------------------------------------------------------------------
ENTITY_FILLERS = ["the", "a", "in", "near", "met", "saw", "and", "with", "from", "at", "visited", "left"]
ENTITY_NAMES = ["alba", "bruno", "corda", "dalen", "esko", "faro", "gilda", "hanne", "ivo", "jora",
                "kesta", "lumo"]
ENTITY_TYPES = ["ORG", "LOC", "PER"]
ENTITY_MARKERS = {"ORG": ["inc", "ltd"], "LOC": ["river", "city"], "PER": ["jr", "sr"]}
#: the token vocabulary: ``ENTITY_WORDS[i]`` is token id ``i``; 0 is ``<pad>``
ENTITY_WORDS = [PAD] + ENTITY_FILLERS + ENTITY_NAMES + [m for t in ENTITY_TYPES for m in ENTITY_MARKERS[t]]
#: the tag vocabulary: ``ENTITY_TAGS[i]`` is tag id ``i``; 0 is ``<pad>`` (ignore it in the loss)
ENTITY_TAGS = [PAD, "O"] + [f"{bi}-{t}" for t in ENTITY_TYPES for bi in ("B", "I")]

# --- sentiment ------------------------------------------------------------------------------------------
SENTIMENT_POSITIVE = ["good", "great", "fine", "superb", "fun"]
SENTIMENT_NEGATIVE = ["bad", "awful", "dull", "weak", "poor"]
SENTIMENT_NEUTRAL = ["the", "film", "plot", "was", "and", "acting", "but", "story", "it", "is", "quite", "music"]
#: the token vocabulary of :func:`sentiment_task`; 0 is ``<pad>``
SENTIMENT_WORDS = [PAD, "not"] + SENTIMENT_NEUTRAL + SENTIMENT_POSITIVE + SENTIMENT_NEGATIVE
#: class names of :func:`sentiment_task`
SENTIMENT_LABELS = ["negative", "positive"]


def _generator(seed: int) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def _randint(g: torch.Generator, low: int, high: int) -> int:
    """An integer in ``[low, high]`` (both ends included)."""
    return int(torch.randint(low, high + 1, (1,), generator=g))


def _choice(g: torch.Generator, items: Sequence):
    return items[_randint(g, 0, len(items) - 1)]


def pad_sequences(seqs: Sequence[Sequence[int]], padding_value: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Pad lists of ids to one ``(B, T_max)`` int64 tensor (after each sequence); also return the lengths ``(B,)``.

    The lengths are an int64 tensor on the CPU, as ``pack_padded_sequence`` wants them. Chapter 5's name for
    :func:`seqcourse.text.pad_batch` (right padding).
    """
    return pad_batch(seqs, pad_index=padding_value)


def decode(ids, vocab: Sequence[str], length: int | None = None) -> list[str]:
    """The words of one sequence of ids (a list or a 1-D tensor), cut at ``length`` when given."""
    ids = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
    if length is not None:
        ids = ids[: int(length)]
    return [vocab[i] for i in ids]


def entity_tagging_task(n: int, min_len: int = 4, max_len: int = 20, seed: int = 0,
                        p_entity: float = 0.5) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Sequence tagging: toy named entities in BIO format (vocabularies :data:`ENTITY_WORDS`, :data:`ENTITY_TAGS`).

    A sentence is a run of items, each either a filler word (tag ``O``) or, with probability ``p_entity``, an
    entity: 1 to 3 names followed by a marker word (``inc``/``ltd`` for ORG, ``river``/``city`` for LOC,
    ``jr``/``sr`` for PER). The first name is tagged ``B-<type>``, the other names and the marker ``I-<type>``.
    The same names occur in every type, so a name's type is known only once its marker has been read.
    Each sentence's length is drawn uniformly from ``[min_len, max_len]``.

    Returns ``tokens`` ``(n, T)``, ``tags`` ``(n, T)`` (both int64, 0 after the end) and ``lengths`` ``(n,)``,
    where ``T`` is the longest length drawn.
    """
    if n < 1 or not 2 <= min_len <= max_len:
        raise ValueError(f"need n >= 1 and 2 <= min_len <= max_len, got n={n}, min_len={min_len}, max_len={max_len}")
    word_id = {w: i for i, w in enumerate(ENTITY_WORDS)}
    tag_id = {t: i for i, t in enumerate(ENTITY_TAGS)}
    g = _generator(seed)
    sentences, tag_seqs = [], []
    for _ in range(n):
        target = _randint(g, min_len, max_len)
        words, tags = [], []
        while len(words) < target:
            room = target - len(words)
            if room >= 2 and float(torch.rand((), generator=g)) < p_entity:
                k = _randint(g, 1, min(3, room - 1))  # names, then one marker
                kind = _choice(g, ENTITY_TYPES)
                words += [_choice(g, ENTITY_NAMES) for _ in range(k)] + [_choice(g, ENTITY_MARKERS[kind])]
                tags += [f"B-{kind}"] + [f"I-{kind}"] * k
            else:
                words.append(_choice(g, ENTITY_FILLERS))
                tags.append("O")
        sentences.append([word_id[w] for w in words])
        tag_seqs.append([tag_id[t] for t in tags])
    tokens, lengths = pad_sequences(sentences)
    tags, _ = pad_sequences(tag_seqs)
    return tokens, tags, lengths


def sentiment_task(n: int, min_len: int = 3, max_len: int = 24, seed: int = 0,
                   p_not: float = 0.3) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Sentence classification: toy reviews, label 1 (positive) or 0 (negative); vocabulary :data:`SENTIMENT_WORDS`.

    A review holds an odd number (1, 3 or 5) of polar words, each positive (+1) or negative (-1) and preceded
    by ``not`` with probability ``p_not``, which flips its sign; neutral words fill the rest. The label is 1
    when the signed sum is positive (never a tie). Each review's length is drawn from ``[min_len, max_len]``
    (raised when the polar words need more room).

    Returns ``tokens`` ``(n, T)`` (int64, 0 after the end), ``labels`` ``(n,)`` and ``lengths`` ``(n,)``.
    """
    if n < 1 or not 1 <= min_len <= max_len:
        raise ValueError(f"need n >= 1 and 1 <= min_len <= max_len, got n={n}, min_len={min_len}, max_len={max_len}")
    word_id = {w: i for i, w in enumerate(SENTIMENT_WORDS)}
    g = _generator(seed)
    sentences, labels = [], []
    for _ in range(n):
        target = _randint(g, min_len, max_len)
        n_polar = _choice(g, [1, 1, 3, 3, 5])
        while n_polar > 1 and 2 * n_polar > target:  # keep room for the polar words and their negations
            n_polar -= 2
        chunks, score = [], 0
        for _ in range(n_polar):
            positive = float(torch.rand((), generator=g)) < 0.5
            word = _choice(g, SENTIMENT_POSITIVE if positive else SENTIMENT_NEGATIVE)
            negated = float(torch.rand((), generator=g)) < p_not
            score += (1 if positive else -1) * (-1 if negated else 1)
            chunks.append(["not", word] if negated else [word])
        used = sum(len(c) for c in chunks)
        n_neutral = max(0, target - used)
        # spread the neutral words over the len(chunks) + 1 gaps between (and around) the polar chunks
        gaps = [0] * (len(chunks) + 1)
        for _ in range(n_neutral):
            gaps[_randint(g, 0, len(chunks))] += 1
        words = []
        for i, gap in enumerate(gaps):
            words += [_choice(g, SENTIMENT_NEUTRAL) for _ in range(gap)]
            if i < len(chunks):
                words += chunks[i]
        sentences.append([word_id[w] for w in words])
        labels.append(int(score > 0))
    tokens, lengths = pad_sequences(sentences)
    return tokens, torch.tensor(labels, dtype=torch.long), lengths
