"""Unit tests of seqcourse.varlen: the variable-length tasks of chapter 5 and their padding."""
from __future__ import annotations

import pytest
import torch

from seqcourse.varlen import (ENTITY_MARKERS, ENTITY_NAMES, ENTITY_TAGS, ENTITY_WORDS, SENTIMENT_NEGATIVE,
                              SENTIMENT_POSITIVE, SENTIMENT_WORDS, decode, entity_tagging_task, pad_sequences,
                              sentiment_task)


def test_vocabularies_have_pad_at_zero_and_no_repeats():
    for vocab in (ENTITY_WORDS, ENTITY_TAGS, SENTIMENT_WORDS):
        assert vocab[0] == "<pad>"
        assert len(set(vocab)) == len(vocab)


def test_pad_sequences_and_decode():
    padded, lengths = pad_sequences([[3, 4, 5], [7], [1, 2]])
    assert padded.tolist() == [[3, 4, 5], [7, 0, 0], [1, 2, 0]]
    assert lengths.tolist() == [3, 1, 2] and lengths.dtype == torch.long and lengths.device.type == "cpu"
    assert decode(padded[1], ["<pad>", "a", "b", "c", "d", "e", "f", "g"]) == ["g", "<pad>", "<pad>"]
    assert decode(padded[0], list("0123456"), length=2) == ["3", "4"]
    with pytest.raises(ValueError):
        pad_sequences([[1], []])
    with pytest.raises(ValueError):
        pad_sequences([])


def test_entity_tagging_is_deterministic_and_well_formed():
    tokens, tags, lengths = entity_tagging_task(200, min_len=4, max_len=15, seed=3)
    again = entity_tagging_task(200, min_len=4, max_len=15, seed=3)
    assert all(torch.equal(a, b) for a, b in zip((tokens, tags, lengths), again))
    assert not torch.equal(tokens, entity_tagging_task(200, min_len=4, max_len=15, seed=4)[0])
    assert tokens.shape == tags.shape == (200, int(lengths.max()))
    assert tokens.dtype == tags.dtype == lengths.dtype == torch.long
    assert int(lengths.min()) >= 4 and int(lengths.max()) <= 15
    marker_type = {m: t for t, ms in ENTITY_MARKERS.items() for m in ms}
    for b in range(200):
        n = int(lengths[b])
        assert (tokens[b, n:] == 0).all() and (tags[b, n:] == 0).all() and (tags[b, :n] != 0).all()
        words, labels = decode(tokens[b], ENTITY_WORDS, n), decode(tags[b], ENTITY_TAGS, n)
        for t, (w, lab) in enumerate(zip(words, labels)):
            if w in marker_type:          # a marker ends an entity of its type
                assert lab == "I-" + marker_type[w]
            elif w in ENTITY_NAMES:       # a name's type is the type of the next marker
                nxt = next(x for x in words[t:] if x in marker_type)
                prev_is_name = t > 0 and words[t - 1] in ENTITY_NAMES
                assert lab == ("I-" if prev_is_name else "B-") + marker_type[nxt]
            else:
                assert lab == "O"


def test_sentiment_labels_follow_the_rule():
    tokens, labels, lengths = sentiment_task(300, min_len=3, max_len=20, seed=5)
    again = sentiment_task(300, min_len=3, max_len=20, seed=5)
    assert all(torch.equal(a, b) for a, b in zip((tokens, labels, lengths), again))
    assert tokens.shape == (300, int(lengths.max())) and labels.shape == (300,)
    assert 0.3 < labels.float().mean().item() < 0.7
    for b in range(300):
        n = int(lengths[b])
        assert (tokens[b, n:] == 0).all() and (tokens[b, :n] != 0).all()
        words = decode(tokens[b], SENTIMENT_WORDS, n)
        score = 0
        for t, w in enumerate(words):
            sign = 1 if w in SENTIMENT_POSITIVE else -1 if w in SENTIMENT_NEGATIVE else 0
            if t > 0 and words[t - 1] == "not":
                sign = -sign
            score += sign
        assert score != 0 and labels[b].item() == int(score > 0)
    with pytest.raises(ValueError):
        sentiment_task(0)
    with pytest.raises(ValueError):
        entity_tagging_task(5, min_len=6, max_len=5)
