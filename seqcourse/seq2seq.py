"""Encoder-decoder models and everything around them: teacher-forced training, greedy decoding, evaluation.

Chapter 6 builds the plain GRU encoder-decoder (:class:`Seq2Seq`); chapter 7 adds attention and reuses the
rest. Any model works with the helpers here if it subclasses :class:`EncoderDecoder`, i.e. provides

- ``encode(src, src_lengths) -> (memory, state)``: ``src`` ``(B, Tx)`` int64, ``src_lengths`` ``(B,)``;
  ``memory`` is whatever the decoder needs at every step (for attention: the encoder states and a mask),
  ``state`` the decoder's initial state;
- ``decode_step(y_prev, state, memory) -> (logits, state)``: ``y_prev`` ``(B,)`` the previous target
  token, ``logits`` ``(B, V)`` the scores of the next one.

Then ``model(src, src_lengths, tgt_in)`` gives teacher-forced logits ``(B, Ty, V)``, and
:func:`train_seq2seq`, :func:`greedy_decode`, :func:`translate`, :func:`exact_match` and
:func:`accuracy_by_length` work unchanged.

Targets carry ``<sos>`` and ``<eos>`` (:class:`seqcourse.text.Batch`): the decoder reads
``tgt[:, :-1]`` = ``<sos>, y_1, ..., y_{Ty}`` and is trained to predict ``tgt[:, 1:]`` = ``y_1, ..., <eos>``.
"""
from __future__ import annotations

import math
import time
from typing import Callable, Iterable, Sequence

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .progress import progress
from .text import EOS_INDEX, PAD_INDEX, SOS_INDEX, Vocab, char_tokenize, pad_batch

__all__ = ["Encoder", "Decoder", "EncoderDecoder", "Seq2Seq", "source_mask", "shift_targets", "seq2seq_loss",
           "train_seq2seq", "greedy_decode", "translate", "exact_match", "accuracy_by_length",
           "encode_pairs", "count_parameters"]


# ------------------------------------------------------------------------------------------------ models
def source_mask(src_lengths: torch.Tensor, max_len: int, device=None) -> torch.Tensor:
    """``(B, max_len)`` bool mask, True at the real (non-padding) positions of right-padded sequences."""
    positions = torch.arange(max_len, device=device)                       # (Tx,)
    return positions[None, :] < src_lengths.to(positions.device)[:, None]  # (B, Tx)


class Encoder(nn.Module):
    """Embedding + GRU over the source, packed so that padding never enters the recurrence.

    ``forward(src (B, Tx), src_lengths (B,)) -> (outputs (B, Tx, H'), h (B, H'))`` where ``outputs`` holds
    every encoder state h_s (zeros at padded positions) and ``h`` the final state h_{Tx} of each sequence
    (at its own last real token). ``H' = H``, or ``2H`` when ``bidirectional`` (then ``h`` is the forward
    final state and the backward state at position 1, concatenated).
    """

    def __init__(self, vocab_size: int, emb_size: int, hidden_size: int, pad_index: int = PAD_INDEX,
                 bidirectional: bool = False):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=pad_index)
        self.rnn = nn.GRU(emb_size, hidden_size, batch_first=True, bidirectional=bidirectional)

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        emb = self.embedding(src)                                                  # (B, Tx, D)
        packed = pack_padded_sequence(emb, src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        out_packed, h_n = self.rnn(packed)                                         # h_n: (dirs, B, H)
        outputs, _ = pad_packed_sequence(out_packed, batch_first=True, total_length=src.shape[1])  # (B, Tx, H')
        h = torch.cat(list(h_n), dim=-1)                                           # (B, H')
        return outputs, h


class Decoder(nn.Module):
    """Embedding + GRU cell + output layer, one target step at a time.

    ``step(y_prev (B,), d_prev (B, H)) -> (logits (B, V), d (B, H))``:
    d_t = GRU(E[y_{t-1}], d_{t-1}),  y_hat_t = W_{yd} d_t + b_y.
    """

    def __init__(self, vocab_size: int, emb_size: int, hidden_size: int, pad_index: int = PAD_INDEX):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=pad_index)
        self.cell = nn.GRUCell(emb_size, hidden_size)
        self.out = nn.Linear(hidden_size, vocab_size)

    def step(self, y_prev: torch.Tensor, d_prev: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        d = self.cell(self.embedding(y_prev), d_prev)   # (B, H)
        return self.out(d), d                           # (B, V), (B, H)


class EncoderDecoder(nn.Module):
    """Base class of the course's sequence-to-sequence models (see the module docstring).

    Subclasses implement :meth:`encode` and :meth:`decode_step`; :meth:`forward` runs the decoder with
    teacher forcing, one :meth:`decode_step` per target position.
    """

    def encode(self, src: torch.Tensor, src_lengths: torch.Tensor):
        raise NotImplementedError

    def decode_step(self, y_prev: torch.Tensor, state, memory):
        raise NotImplementedError

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        """Teacher forcing: ``tgt_in`` ``(B, Ty)`` holds y_0 = <sos>, y_1, ..., y_{Ty-1}; step t reads the TRUE
        previous token tgt_in[:, t]. Returns logits ``(B, Ty, V)``."""
        memory, state = self.encode(src, src_lengths)
        logits = []
        for t in range(tgt_in.shape[1]):
            step_logits, state = self.decode_step(tgt_in[:, t], state, memory)   # (B, V)
            logits.append(step_logits)
        return torch.stack(logits, dim=1)                                        # (B, Ty, V)


class Seq2Seq(EncoderDecoder):
    """The plain encoder-decoder of chapter 6: the decoder starts from the encoder's final state,
    d_0 = h_{Tx}, and sees nothing else of the source (the fixed-vector bottleneck).

    ``Seq2Seq(len(src_vocab), len(tgt_vocab), emb_size=32, hidden_size=128)``.
    """

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, emb_size: int = 32, hidden_size: int = 128,
                 pad_index: int = PAD_INDEX):
        super().__init__()
        self.encoder = Encoder(src_vocab_size, emb_size, hidden_size, pad_index)
        self.decoder = Decoder(tgt_vocab_size, emb_size, hidden_size, pad_index)

    def encode(self, src, src_lengths):
        outputs, h = self.encoder(src, src_lengths)                          # (B, Tx, H), (B, H)
        mask = source_mask(src_lengths, src.shape[1], device=src.device)     # (B, Tx)
        return (outputs, mask), h      # memory (unused by this decoder; an attention decoder reads it), d_0

    def decode_step(self, y_prev, state, memory):
        return self.decoder.step(y_prev, state)        # (B, V), (B, H)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


# ------------------------------------------------------------------------------------------------ training
def shift_targets(tgt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``tgt`` ``(B, Ty+1)`` = <sos> y_1 ... y_n <eos> <pad>... -> decoder inputs ``tgt[:, :-1]`` and
    targets ``tgt[:, 1:]`` (each ``(B, Ty)``): the input at step t is the target of step t-1."""
    if tgt.dim() != 2 or tgt.shape[1] < 2:
        raise ValueError(f"targets must be (B, T) with T >= 2 (<sos> ... <eos>), got shape {tuple(tgt.shape)}")
    return tgt[:, :-1], tgt[:, 1:]


def seq2seq_loss(logits: torch.Tensor, tgt_out: torch.Tensor, pad_index: int = PAD_INDEX) -> torch.Tensor:
    """Mean cross-entropy over the REAL target tokens: positions where ``tgt_out == pad_index`` count for
    nothing. ``logits`` ``(B, Ty, V)``, ``tgt_out`` ``(B, Ty)``."""
    if logits.shape[:2] != tgt_out.shape:
        raise ValueError(f"logits {tuple(logits.shape)} and targets {tuple(tgt_out.shape)} do not match")
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=pad_index)


def train_seq2seq(model: EncoderDecoder, loader: Iterable, steps: int, lr: float = 3e-3, clip: float = 1.0,
                  device=None, eval_every: int = 0, eval_fn: Callable[[], float] | None = None,
                  pad_index: int = PAD_INDEX, desc: str = "train", patience: int = 0,
                  min_delta: float = 0.005) -> dict[str, list]:
    """Train with Adam and teacher forcing for ``steps`` optimisation steps (cycling over ``loader``, whose
    items are :class:`seqcourse.text.Batch` es), clipping the gradient norm at ``clip``.

    Returns a history ``{"loss": [per step], "eval_step": [...], "eval": [...], "seconds": float,
    "stopped": step}``; ``eval_fn()`` (e.g. dev exact match) is called every ``eval_every`` steps and at the
    end. With ``patience`` > 0, training stops early once ``patience`` evaluations in a row have not beaten
    the best one by more than ``min_delta`` (the model has converged, by that measure); ``steps`` is then
    a cap.
    """
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    if patience and not (eval_fn is not None and eval_every):
        raise ValueError("patience needs eval_fn and eval_every")
    device = device if device is not None else next(model.parameters()).device
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    history: dict[str, list] = {"loss": [], "eval_step": [], "eval": []}
    best, since_best = float("-inf"), 0
    start = time.perf_counter()
    batches = iter(loader)
    model.train()
    for step in progress(range(1, steps + 1), desc=desc):
        try:
            batch = next(batches)
        except StopIteration:
            batches = iter(loader)
            batch = next(batches)
        src, src_lengths, tgt, _ = batch
        src, tgt = src.to(device), tgt.to(device)                # (B, Tx), (B, Ty+1)
        tgt_in, tgt_out = shift_targets(tgt)                     # (B, Ty) each
        logits = model(src, src_lengths, tgt_in)                 # (B, Ty, V)
        loss = seq2seq_loss(logits, tgt_out, pad_index)
        optimizer.zero_grad()
        loss.backward()
        if clip:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        history["loss"].append(loss.item())
        if eval_fn is not None and ((eval_every and step % eval_every == 0) or step == steps):
            model.eval()
            with torch.no_grad():
                history["eval"].append(eval_fn())
            history["eval_step"].append(step)
            model.train()
            if history["eval"][-1] > best + min_delta:
                best, since_best = history["eval"][-1], 0
            else:
                since_best += 1
            if patience and since_best >= patience:
                break
    model.eval()
    history["stopped"] = step
    history["seconds"] = time.perf_counter() - start
    return history


# ------------------------------------------------------------------------------------------------ decoding
@torch.no_grad()
def greedy_decode(model: EncoderDecoder, src: torch.Tensor, src_lengths: torch.Tensor, max_len: int,
                  sos_index: int = SOS_INDEX, eos_index: int = EOS_INDEX,
                  return_logits: bool = False, record: Callable | None = None):
    """Greedy decoding: start from <sos>, feed back the arg-max token, stop each sequence at its first
    <eos> (and the loop when every sequence has stopped, or after ``max_len`` steps).

    Returns a list of ``B`` lists of token ids, <sos> and <eos> excluded; with ``return_logits`` also the
    logits of every step taken, ``(B, steps, V)``. More generally, ``record(model, logits)`` is called after
    every step and what it returns, ``(B, ...)``, is returned too, stacked along dimension 1 (chapter 7
    records the attention weights this way).
    """
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got {max_len}")
    if return_logits:
        record = lambda _model, logits: logits  # noqa: E731
    was_training = model.training
    model.eval()
    memory, state = model.encode(src, src_lengths)
    B = src.shape[0]
    y = torch.full((B,), sos_index, dtype=torch.long, device=src.device)      # (B,)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)            # (B,)
    tokens, recorded = [], []
    for _ in range(max_len):
        logits, state = model.decode_step(y, state, memory)                   # (B, V)
        y = logits.argmax(dim=-1)                                             # (B,)
        tokens.append(y)
        if record is not None:
            recorded.append(record(model, logits))
        finished |= y == eos_index
        if bool(finished.all()):
            break
    model.train(was_training)
    steps = torch.stack(tokens, dim=1).tolist()                               # (B, steps)
    out = []
    for row in steps:
        out.append(row[: row.index(eos_index)] if eos_index in row else row)
    if record is not None:
        return out, torch.stack(recorded, dim=1)                              # (B, steps, ...)
    return out


def encode_pairs(pairs: Sequence[tuple[str, str]], src_vocab: Vocab, tgt_vocab: Vocab,
                 tokenize: Callable[[str], list[str]] = char_tokenize) -> tuple[list[list[int]], list[list[int]]]:
    """String pairs -> (source id lists, target id lists framed by <sos> ... <eos>)."""
    src_ids = [src_vocab.encode(tokenize(s)) for s, _ in pairs]
    tgt_ids = [tgt_vocab.encode(tokenize(t), add_sos=True, add_eos=True) for _, t in pairs]
    return src_ids, tgt_ids


def translate(model: EncoderDecoder, sources: Sequence[str], src_vocab: Vocab, tgt_vocab: Vocab,
              max_len: int = 30, batch_size: int = 512, tokenize: Callable[[str], list[str]] = char_tokenize,
              join: str = "") -> list[str]:
    """Greedy translations of ``sources`` (strings), in their order. Tokens are joined with ``join``
    (``""`` for characters, ``" "`` for words)."""
    device = next(model.parameters()).device
    ids = [src_vocab.encode(tokenize(s)) for s in sources]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))     # similar lengths together: less padding
    out: list[str] = [""] * len(ids)
    for start in range(0, len(order), batch_size):
        chunk = order[start:start + batch_size]
        src, lengths = pad_batch([ids[i] for i in chunk], src_vocab.pad_index)   # (b, Tx), (b,)
        hyps = greedy_decode(model, src.to(device), lengths, max_len, tgt_vocab.sos_index, tgt_vocab.eos_index)
        for i, hyp in zip(chunk, hyps):
            out[i] = join.join(tgt_vocab.decode(hyp))
    return out


def exact_match(model: EncoderDecoder, pairs: Sequence[tuple[str, str]], src_vocab: Vocab, tgt_vocab: Vocab,
                **kwargs) -> float:
    """Fraction of pairs whose greedy translation equals the target string exactly."""
    if len(pairs) == 0:
        raise ValueError("no pairs to evaluate")
    hyps = translate(model, [s for s, _ in pairs], src_vocab, tgt_vocab, **kwargs)
    return sum(h == t for h, (_, t) in zip(hyps, pairs)) / len(pairs)


def accuracy_by_length(model: EncoderDecoder, pairs: Sequence[tuple[str, str]], src_vocab: Vocab,
                       tgt_vocab: Vocab, bins: Sequence[int] | None = None,
                       tokenize: Callable[[str], list[str]] = char_tokenize, **kwargs) -> dict[str, list]:
    """Exact-match accuracy per source-length bin (length in tokens).

    ``bins`` are bin edges ``[b0, b1, ..., bk]``: bin j holds lengths ``b_j <= n < b_{j+1}``; by default
    ten equal-width bins over the observed lengths. Returns ``{"lo": [...], "hi": [...], "center": [...],
    "count": [...], "accuracy": [...]}`` (empty bins left out) -- what
    :func:`seqcourse.plot.plot_accuracy_by_length` draws.
    """
    if len(pairs) == 0:
        raise ValueError("no pairs to evaluate")
    lengths = [len(tokenize(s)) for s, _ in pairs]
    if bins is None:
        lo, hi = min(lengths), max(lengths) + 1
        width = max(1, math.ceil((hi - lo) / 10))
        bins = list(range(lo, hi + width, width))
    bins = list(bins)
    if len(bins) < 2 or any(b >= c for b, c in zip(bins, bins[1:])):
        raise ValueError(f"bins must be at least two increasing edges, got {bins}")
    hyps = translate(model, [s for s, _ in pairs], src_vocab, tgt_vocab, tokenize=tokenize, **kwargs)
    correct = [h == t for h, (_, t) in zip(hyps, pairs)]
    result: dict[str, list] = {"lo": [], "hi": [], "center": [], "count": [], "accuracy": []}
    for lo, hi in zip(bins, bins[1:]):
        members = [c for n, c in zip(lengths, correct) if lo <= n < hi]
        if members:
            result["lo"].append(lo)
            result["hi"].append(hi)
            result["center"].append((lo + hi - 1) / 2)
            result["count"].append(len(members))
            result["accuracy"].append(sum(members) / len(members))
    return result
