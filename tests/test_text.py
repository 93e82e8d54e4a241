"""Unit tests of seqcourse.text: tokenisers, Vocab, pad_batch, bucketing, pair batches."""
from __future__ import annotations

import re

import pytest
import torch

from seqcourse.text import (EOS_INDEX, PAD_INDEX, SOS_INDEX, SPECIALS, UNK_INDEX, Batch, BucketBatchSampler,
                            Vocab, char_tokenize, collate_pairs, pad_batch, pair_loader, pool_sort_batches,
                            word_tokenize)


def test_tokenizers():
    assert char_tokenize("2 mai") == ["2", " ", "m", "a", "i"]
    assert word_tokenize("Pi is 3.14", pattern=re.compile(r"\d+(?:\.\d+)?|\w+")) == ["pi", "is", "3.14"]
    assert char_tokenize("") == []
    assert word_tokenize("Hello, World! It's 9 o'clock.") == ["hello", ",", "world", "!", "it's", "9", "o'clock", "."]
    assert word_tokenize("Été", lower=False) == ["Été"]
    with pytest.raises(TypeError):
        char_tokenize(["a"])
    with pytest.raises(TypeError):
        word_tokenize(None)


def test_vocab_specials_fixed_and_order_by_frequency_then_alphabet():
    seqs = [list("abcab"), list("ba"), list("zc")]       # a:3 b:3 c:2 z:1
    v = Vocab.build(seqs)
    assert v.itos[:4] == list(SPECIALS)
    assert (v.pad_index, v.sos_index, v.eos_index, v.unk_index) == (0, 1, 2, 3) == (PAD_INDEX, SOS_INDEX, EOS_INDEX, UNK_INDEX)
    assert v.itos[4:] == ["a", "b", "c", "z"]
    assert v.stoi == {t: i for i, t in enumerate(v.itos)}
    assert len(v) == 8 and "a" in v and "q" not in v
    # the order of the data does not matter
    assert Vocab.build(list(reversed(seqs))) == v


def test_vocab_min_freq_and_max_size():
    seqs = [list("abcab"), list("ba"), list("zc")]
    assert Vocab.build(seqs, min_freq=2).itos[4:] == ["a", "b", "c"]
    assert Vocab.build(seqs, min_freq=3).itos[4:] == ["a", "b"]
    assert Vocab.build(seqs, min_freq=4).itos == list(SPECIALS)
    assert Vocab.build(seqs, max_size=1).itos[4:] == ["a"]
    # specials present in the data are not counted twice
    assert Vocab.build([["<pad>", "<eos>", "x"]]).itos == list(SPECIALS) + ["x"]
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="min_freq"):
            Vocab.build(seqs, min_freq=bad)
    with pytest.raises(TypeError, match="tokenise"):
        Vocab.build(["abc"])


def test_vocab_encode_decode_roundtrip():
    v = Vocab.build([list("hello world")])
    ids = v.encode(list("hold"))
    assert v.decode(ids) == list("hold")
    assert v.encode(list("hq")) == [v["h"], UNK_INDEX]
    assert v["q"] == UNK_INDEX
    framed = v.encode(list("he"), add_sos=True, add_eos=True)
    assert framed[0] == SOS_INDEX and framed[-1] == EOS_INDEX and len(framed) == 4
    assert v.decode(framed) == ["h", "e"]
    # decoding stops at the first <eos> and drops padding; <unk> stays
    assert v.decode([v["h"], UNK_INDEX, EOS_INDEX, v["e"]]) == ["h", "<unk>"]
    assert v.decode([v["h"], EOS_INDEX, v["e"]], stop_at_eos=False) == ["h", "e"]
    assert v.decode([v["h"], PAD_INDEX, PAD_INDEX], strip_specials=False) == ["h", "<pad>", "<pad>"]
    assert v.decode(torch.tensor([v["h"], v["e"]])) == ["h", "e"]
    with pytest.raises(IndexError, match="outside"):
        v.decode([len(v)])
    with pytest.raises(ValueError, match="1-d"):
        v.decode(torch.zeros(2, 2, dtype=torch.long))
    with pytest.raises(TypeError, match="tokenise"):
        v.encode("hello")


def test_vocab_save_load(tmp_path):
    v = Vocab.build([list("déjà vu"), list("über")], min_freq=1)
    path = tmp_path / "vocab.json"
    v.save(path)
    w = Vocab.load(path)
    assert w == v and w.stoi == v.stoi
    assert "ü" in path.read_text(encoding="utf-8")          # readable JSON, not escaped
    with pytest.raises(ValueError, match="special"):
        Vocab(["a", "<pad>", "<sos>", "<eos>", "<unk>"])
    with pytest.raises(ValueError, match="repeat"):
        Vocab(list(SPECIALS) + ["a", "a"])
    with pytest.raises(ValueError, match="itos"):
        Vocab.from_json("[1, 2]")


def test_pad_batch_right_and_left():
    padded, lengths = pad_batch([[5, 6, 7], [8], [9, 10]])
    assert padded.dtype == torch.long and lengths.dtype == torch.long
    assert padded.tolist() == [[5, 6, 7], [8, 0, 0], [9, 10, 0]]
    assert lengths.tolist() == [3, 1, 2]
    left, _ = pad_batch([[5, 6, 7], [8]], pad_index=1, padding_side="left")
    assert left.tolist() == [[5, 6, 7], [1, 1, 8]]
    same, _ = pad_batch([torch.tensor([1, 2]), torch.tensor([3, 4])])
    assert same.tolist() == [[1, 2], [3, 4]]
    one, n = pad_batch([[4]])
    assert one.shape == (1, 1) and n.tolist() == [1]


def test_pad_batch_errors():
    with pytest.raises(ValueError, match="empty batch"):
        pad_batch([])
    with pytest.raises(ValueError, match="sequence 1 is empty"):
        pad_batch([[1], []])
    with pytest.raises(TypeError, match="str"):
        pad_batch(["abc"])
    with pytest.raises(TypeError, match="non-integer"):
        pad_batch([[1.5, 2]])
    with pytest.raises(ValueError, match="padding_side"):
        pad_batch([[1]], padding_side="middle")


def test_bucket_sampler_covers_everything_with_little_padding():
    g = torch.Generator().manual_seed(0)
    lengths = torch.randint(1, 60, (1000,), generator=g).tolist()
    sampler = BucketBatchSampler(lengths, batch_size=32, seed=3, pool_factor=10)
    batches = list(sampler)
    assert len(batches) == len(sampler)
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(1000))
    assert all(1 <= len(b) <= 32 for b in batches)
    padding = sum(max(lengths[i] for i in b) * len(b) - sum(lengths[i] for i in b) for b in batches)
    random_padding = 0
    perm = torch.randperm(1000, generator=g).tolist()
    for k in range(0, 1000, 32):
        b = perm[k:k + 32]
        random_padding += max(lengths[i] for i in b) * len(b) - sum(lengths[i] for i in b)
    assert padding < 0.2 * random_padding


def test_bucket_sampler_reproducible_and_changes_per_epoch():
    lengths = list(range(1, 201))
    a, b = BucketBatchSampler(lengths, 16, seed=1), BucketBatchSampler(lengths, 16, seed=1)
    first_a, first_b = list(a), list(b)
    assert first_a == first_b
    assert list(a) != first_a                      # the next epoch is shuffled differently
    a.set_epoch(0)
    assert list(a) == first_a
    assert a.batches(epoch=0) == first_a
    ordered = list(BucketBatchSampler([3, 1, 2, 1], 2, shuffle=False))
    assert ordered == [[1, 3], [2, 0]]
    dropped = BucketBatchSampler(list(range(1, 11)), 4, seed=0, drop_last=True, pool_factor=1)
    assert len(dropped) == len(list(dropped)) == 2
    not_dropped = BucketBatchSampler(list(range(1, 11)), 4, seed=0, pool_factor=1)
    assert len(not_dropped) == len(list(not_dropped)) == 3
    for kwargs in ({"lengths": [], "batch_size": 2}, {"lengths": [1], "batch_size": 0},
                   {"lengths": [-1], "batch_size": 1}, {"lengths": [1], "batch_size": 1, "pool_factor": 0}):
        with pytest.raises(ValueError):
            BucketBatchSampler(**kwargs)


def test_collate_and_loader():
    src = [[4, 5, 6], [7], [8, 9]]
    tgt = [[SOS_INDEX, 4, EOS_INDEX], [SOS_INDEX, 5, 6, EOS_INDEX], [SOS_INDEX, EOS_INDEX]]
    batch = collate_pairs(list(zip(src, tgt)))
    assert isinstance(batch, Batch)
    s, sl, t, tl = batch
    assert s.shape == (3, 3) and t.shape == (3, 4)
    assert sl.tolist() == [3, 1, 2] and tl.tolist() == [3, 4, 2]
    assert t[2].tolist() == [SOS_INDEX, EOS_INDEX, 0, 0]
    assert batch.to("cpu").src is not None
    loader = pair_loader(src * 10, tgt * 10, batch_size=4, seed=0)
    seen = 0
    for b in loader:
        assert isinstance(b, Batch)
        seen += b.src.shape[0]
        assert (b.src_lengths.max() - b.src_lengths.min()) <= 2
    assert seen == 30
    with pytest.raises(ValueError, match="targets"):
        pair_loader(src, tgt[:2], batch_size=2)
    with pytest.raises(ValueError, match="empty"):
        collate_pairs([])


def test_pool_sort_batches():
    lengths = [5, 1, 4, 2, 3, 6]
    assert pool_sort_batches([0, 1, 2, 3, 4, 5], lambda i: lengths[i], 2, 1) == [[1, 0], [3, 2], [4, 5]]
    assert pool_sort_batches([0, 1, 2, 3, 4, 5], lambda i: lengths[i], 2, 3) == [[1, 3], [4, 2], [0, 5]]
