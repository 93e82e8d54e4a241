"""The text pipeline of the course: tokenise, build a vocabulary, numericalise, pad, batch by length.

torchtext no longer loads with current PyTorch (see the README), so the course writes these few pieces
itself. Chapter 6 explains them; chapter 7 and the capstone reuse them.

- :func:`char_tokenize`, :func:`word_tokenize` -- text to a list of tokens;
- :class:`Vocab` -- tokens <-> indices, with the four special tokens at fixed indices
  (``<pad>`` 0, ``<sos>`` 1, ``<eos>`` 2, ``<unk>`` 3), a minimum frequency, JSON save/load;
- :func:`pad_batch` -- a list of index sequences to one padded ``(B, T)`` tensor and the lengths;
- :class:`BucketBatchSampler` -- batches of similar length (little padding), reproducible per epoch;
- :func:`collate_pairs` and :func:`pair_loader` -- (source, target) index pairs to padded batches.

Example::

    src_vocab = Vocab.build([char_tokenize(s) for s, _ in pairs], min_freq=2)
    src_ids = [src_vocab.encode(char_tokenize(s)) for s, _ in pairs]
    x, lengths = pad_batch(src_ids[:4], pad_index=src_vocab.pad_index)   # (4, T), (4,)
"""
from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple, Sequence

import torch

PAD, SOS, EOS, UNK = "<pad>", "<sos>", "<eos>", "<unk>"
SPECIALS = (PAD, SOS, EOS, UNK)
PAD_INDEX, SOS_INDEX, EOS_INDEX, UNK_INDEX = 0, 1, 2, 3

__all__ = ["PAD", "SOS", "EOS", "UNK", "SPECIALS", "PAD_INDEX", "SOS_INDEX", "EOS_INDEX", "UNK_INDEX",
           "char_tokenize", "word_tokenize", "Vocab", "pad_batch", "pool_sort_batches", "BucketBatchSampler", "Batch",
           "collate_pairs", "pair_loader"]


# --------------------------------------------------------------------------------------------- tokenisers
def char_tokenize(text: str) -> list[str]:
    """One token per character: ``"12 mai" -> ['1', '2', ' ', 'm', 'a', 'i']``."""
    if not isinstance(text, str):
        raise TypeError(f"char_tokenize expects a str, got {type(text).__name__}")
    return list(text)


_WORD = re.compile(r"\w+(?:['\u2019]\w+)*|[^\w\s]", re.UNICODE)


def word_tokenize(text: str, lower: bool = True, pattern: "re.Pattern[str] | None" = None) -> list[str]:
    """Words and punctuation marks as tokens: ``"Hello, world!" -> ['hello', ',', 'world', '!']``.

    A simple rule (letters/digits runs, inner apostrophes kept, each other symbol alone), enough for the
    course's corpora; ``lower`` lower-cases first. ``pattern`` (a compiled regular expression whose
    ``findall`` gives the tokens) replaces the rule, e.g. the capstone's, which keeps ``3.50`` whole.
    """
    if not isinstance(text, str):
        raise TypeError(f"word_tokenize expects a str, got {type(text).__name__}")
    return (_WORD if pattern is None else pattern).findall(text.lower() if lower else text)


# --------------------------------------------------------------------------------------------- vocabulary
class Vocab:
    """A vocabulary: ``itos`` (index -> token, a list) and ``stoi`` (token -> index, a dict).

    The special tokens always come first, at fixed indices: ``<pad>`` 0, ``<sos>`` 1, ``<eos>`` 2,
    ``<unk>`` 3. Build one from data with :meth:`Vocab.build`; unknown tokens encode to ``<unk>``.
    """

    def __init__(self, itos: Sequence[str]):
        itos = list(itos)
        if tuple(itos[: len(SPECIALS)]) != SPECIALS:
            raise ValueError(f"a Vocab must start with the special tokens {list(SPECIALS)} at indices 0-3, "
                             f"got {itos[:len(SPECIALS)]}")
        if not all(isinstance(t, str) for t in itos):
            raise TypeError("every token of a Vocab must be a str")
        if len(set(itos)) != len(itos):
            dup = sorted({t for t in itos if itos.count(t) > 1})
            raise ValueError(f"tokens repeat in the vocabulary: {dup[:10]}")
        self.itos: list[str] = itos
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(itos)}

    # construction ---------------------------------------------------------------------------------------
    @classmethod
    def build(cls, sequences: Iterable[Sequence[str]], min_freq: int = 1, max_size: int | None = None) -> "Vocab":
        """Count the tokens of ``sequences`` (each a list of tokens) and keep those seen ``min_freq`` times
        or more, most frequent first, ties in alphabetical order (so the result does not depend on the order
        of the data). ``max_size`` caps the number of ordinary tokens (specials not counted)."""
        if isinstance(min_freq, bool) or not isinstance(min_freq, int) or min_freq < 1:
            raise ValueError(f"min_freq must be an integer >= 1, got {min_freq!r}")
        if max_size is not None and (not isinstance(max_size, int) or max_size < 0):
            raise ValueError(f"max_size must be None or an integer >= 0, got {max_size!r}")
        counts: Counter = Counter()
        for seq in sequences:
            if isinstance(seq, str):
                raise TypeError("Vocab.build expects token lists, not strings: tokenise first "
                                "(e.g. [char_tokenize(s) for s in texts])")
            counts.update(seq)
        for special in SPECIALS:
            counts.pop(special, None)
        kept = sorted((t for t, c in counts.items() if c >= min_freq), key=lambda t: (-counts[t], t))
        if max_size is not None:
            kept = kept[:max_size]
        return cls(list(SPECIALS) + kept)

    # look-ups -------------------------------------------------------------------------------------------
    pad_index = PAD_INDEX
    sos_index = SOS_INDEX
    eos_index = EOS_INDEX
    unk_index = UNK_INDEX

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def __getitem__(self, token: str) -> int:
        """The index of ``token``, ``<unk>``'s index when it is not in the vocabulary."""
        return self.stoi.get(token, UNK_INDEX)

    def __eq__(self, other) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos

    def __repr__(self) -> str:
        preview = ", ".join(repr(t) for t in self.itos[4:12])
        return f"Vocab(size={len(self)}, specials={list(SPECIALS)}, tokens=[{preview}{', ...' if len(self) > 12 else ''}])"

    def encode(self, tokens: Sequence[str], add_sos: bool = False, add_eos: bool = False) -> list[int]:
        """Tokens -> indices (unknown tokens -> ``<unk>``), optionally framed by ``<sos>`` ... ``<eos>``."""
        if isinstance(tokens, str):
            raise TypeError("Vocab.encode expects a list of tokens, not a str: tokenise first")
        ids = [self.stoi.get(t, UNK_INDEX) for t in tokens]
        return ([SOS_INDEX] if add_sos else []) + ids + ([EOS_INDEX] if add_eos else [])

    def decode(self, ids: Iterable[int], strip_specials: bool = True, stop_at_eos: bool = True) -> list[str]:
        """Indices -> tokens. Reading stops at the first ``<eos>`` (``stop_at_eos``); ``<pad>``, ``<sos>`` and
        ``<eos>`` are dropped (``strip_specials``; ``<unk>`` is kept, since it stands for a real token)."""
        if isinstance(ids, torch.Tensor):
            if ids.dim() != 1:
                raise ValueError(f"Vocab.decode expects one sequence (a 1-d tensor), got shape {tuple(ids.shape)}")
            ids = ids.tolist()
        out = []
        for i in ids:
            i = int(i)
            if not 0 <= i < len(self.itos):
                raise IndexError(f"index {i} is outside the vocabulary (size {len(self.itos)})")
            if i == EOS_INDEX and stop_at_eos:
                break
            if strip_specials and i in (PAD_INDEX, SOS_INDEX, EOS_INDEX):
                continue
            out.append(self.itos[i])
        return out

    # persistence ----------------------------------------------------------------------------------------
    def to_json(self) -> str:
        return json.dumps({"itos": self.itos}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> "Vocab":
        data = json.loads(text)
        if not isinstance(data, dict) or "itos" not in data:
            raise ValueError("not a saved Vocab: expected a JSON object with an 'itos' list")
        return cls(data["itos"])

    def save(self, path: str | Path) -> None:
        """Write the vocabulary as JSON (UTF-8): ``{"itos": [...]}``."""
        Path(path).write_text(self.to_json(), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> "Vocab":
        return cls.from_json(Path(path).read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------------------------ padding
def pad_batch(sequences: Sequence[Sequence[int]], pad_index: int = PAD_INDEX,
              padding_side: str = "right") -> tuple[torch.Tensor, torch.Tensor]:
    """Stack index sequences of different lengths into one ``(B, T)`` int64 tensor, ``T`` the longest length.

    Padding goes to the right by default (what ``pack_padded_sequence`` and the course's models expect);
    ``padding_side="left"`` exists for comparison. Returns ``(padded, lengths)`` with ``lengths`` ``(B,)``.
    """
    if padding_side not in ("right", "left"):
        raise ValueError(f"padding_side must be 'right' or 'left', got {padding_side!r}")
    if isinstance(sequences, torch.Tensor) and sequences.dim() == 2:
        sequences = list(sequences)
    if len(sequences) == 0:
        raise ValueError("pad_batch got an empty batch")
    rows = []
    for k, seq in enumerate(sequences):
        if isinstance(seq, str):
            raise TypeError(f"sequence {k} is a str: encode it to indices first")
        row = seq.tolist() if isinstance(seq, torch.Tensor) else list(seq)
        if len(row) == 0:
            raise ValueError(f"sequence {k} is empty; every sequence needs at least one token")
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in row):
            raise TypeError(f"sequence {k} holds non-integer items; pad_batch pads token indices")
        rows.append(row)
    lengths = torch.tensor([len(r) for r in rows], dtype=torch.long)          # (B,)
    T = int(lengths.max())
    padded = torch.full((len(rows), T), pad_index, dtype=torch.long)         # (B, T)
    for k, row in enumerate(rows):
        if padding_side == "right":
            padded[k, : len(row)] = torch.tensor(row, dtype=torch.long)
        else:
            padded[k, T - len(row):] = torch.tensor(row, dtype=torch.long)
    return padded, lengths


# ------------------------------------------------------------------------------------------------ batching
def pool_sort_batches(order: Sequence[int], key, batch_size: int, pool_factor: int) -> list[list[int]]:
    """The core of length bucketing: cut ``order`` (indices, already shuffled) into pools of
    ``batch_size * pool_factor``, sort each pool by ``key(index)`` (a stable sort), cut it into batches.
    The batches are returned in pool order; shuffling them is the caller's choice."""
    pool = batch_size * pool_factor
    out: list[list[int]] = []
    for start in range(0, len(order), pool):
        chunk = sorted(order[start:start + pool], key=key)
        out.extend(chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size))
    return out


class BucketBatchSampler(torch.utils.data.Sampler):
    """Batches of indices whose sequences have similar lengths, so that little of each batch is padding.

    Each epoch: shuffle all indices, cut them into pools of ``batch_size * pool_factor``, sort each pool by
    length, cut the pools into batches, shuffle the batches. Give it to a ``DataLoader`` as
    ``batch_sampler=``. Reproducible: the order depends only on ``seed`` and the epoch, which advances by
    one each time the sampler is iterated (or is set with :meth:`set_epoch`). ``shuffle=False`` gives
    batches of the indices sorted by length (for evaluation).
    """

    def __init__(self, lengths: Sequence[int], batch_size: int, shuffle: bool = True, seed: int = 0,
                 pool_factor: int = 50, drop_last: bool = False):
        if isinstance(lengths, torch.Tensor):
            lengths = lengths.tolist()
        lengths = list(lengths)
        if len(lengths) == 0:
            raise ValueError("BucketBatchSampler needs at least one sequence")
        if any((not isinstance(n, int)) or isinstance(n, bool) or n < 0 for n in lengths):
            raise ValueError("lengths must be non-negative integers")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if not isinstance(pool_factor, int) or pool_factor < 1:
            raise ValueError(f"pool_factor must be a positive integer, got {pool_factor!r}")
        self.lengths, self.batch_size, self.shuffle = lengths, batch_size, shuffle
        self.seed, self.pool_factor, self.drop_last = seed, pool_factor, drop_last
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def batches(self, epoch: int | None = None) -> list[list[int]]:
        """The batches (lists of indices) of one epoch, without advancing the epoch counter."""
        n, bs = len(self.lengths), self.batch_size
        if not self.shuffle:
            order = sorted(range(n), key=lambda i: (self.lengths[i], i))
            out = [order[i:i + bs] for i in range(0, n, bs)]
        else:
            rng = random.Random(self.seed * 1_000_003 + (self.epoch if epoch is None else epoch))
            order = list(range(n))
            rng.shuffle(order)
            out = pool_sort_batches(order, lambda i: self.lengths[i], bs, self.pool_factor)
            rng.shuffle(out)
        if self.drop_last:
            out = [b for b in out if len(b) == bs]
        return out

    def __iter__(self) -> Iterator[list[int]]:
        batches = self.batches()
        if self.shuffle:
            self.epoch += 1
        return iter(batches)

    def __len__(self) -> int:
        n, bs = len(self.lengths), self.batch_size
        if not self.shuffle:
            return n // bs if self.drop_last else -(-n // bs)
        pool = bs * self.pool_factor
        full, rest = divmod(n, pool)
        return full * self.pool_factor + (rest // bs if self.drop_last else -(-rest // bs))


# --------------------------------------------------------------------------------------- pairs to batches
class Batch(NamedTuple):
    """A padded batch of (source, target) pairs: ``src (B, Tx)``, ``src_lengths (B,)``, ``tgt (B, Ty)``,
    ``tgt_lengths (B,)``. The targets carry ``<sos>`` and ``<eos>``: the decoder reads ``tgt[:, :-1]`` and
    is trained to predict ``tgt[:, 1:]``. Unpacks like a tuple; ``.to(device)`` moves the token tensors."""

    src: torch.Tensor
    src_lengths: torch.Tensor
    tgt: torch.Tensor
    tgt_lengths: torch.Tensor

    def to(self, device) -> "Batch":
        # lengths stay on the CPU: pack_padded_sequence wants them there
        return Batch(self.src.to(device), self.src_lengths, self.tgt.to(device), self.tgt_lengths)


def collate_pairs(pairs: Sequence[tuple[Sequence[int], Sequence[int]]], pad_index: int = PAD_INDEX) -> Batch:
    """``[(src_ids, tgt_ids), ...]`` -> :class:`Batch`. The target ids must already include ``<sos>``/``<eos>``
    (``tgt_vocab.encode(tokens, add_sos=True, add_eos=True)``)."""
    if len(pairs) == 0:
        raise ValueError("collate_pairs got an empty batch")
    try:
        srcs, tgts = zip(*pairs)
    except ValueError as exc:
        raise ValueError("collate_pairs expects (source ids, target ids) pairs") from exc
    src, src_lengths = pad_batch(srcs, pad_index)      # (B, Tx), (B,)
    tgt, tgt_lengths = pad_batch(tgts, pad_index)      # (B, Ty), (B,)
    return Batch(src, src_lengths, tgt, tgt_lengths)


def pair_loader(src_ids: Sequence[Sequence[int]], tgt_ids: Sequence[Sequence[int]], batch_size: int,
                shuffle: bool = True, seed: int = 0, pool_factor: int = 50) -> torch.utils.data.DataLoader:
    """A ``DataLoader`` of :class:`Batch` es over parallel lists of source and target index sequences,
    bucketed by source length (:class:`BucketBatchSampler`)."""
    if len(src_ids) != len(tgt_ids):
        raise ValueError(f"{len(src_ids)} sources but {len(tgt_ids)} targets")
    data = list(zip(src_ids, tgt_ids))
    sampler = BucketBatchSampler([len(s) for s in src_ids], batch_size, shuffle=shuffle, seed=seed,
                                 pool_factor=pool_factor)
    return torch.utils.data.DataLoader(data, batch_sampler=sampler, collate_fn=collate_pairs)
