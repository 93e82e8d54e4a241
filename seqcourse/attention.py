"""Additive (Bahdanau) attention and an attention encoder-decoder, for chapter 7.

- :func:`masked_softmax` -- softmax over source positions with padded positions set to -inf first;
- :func:`additive_attention` -- energies e_{t,s} = v^T tanh(W_h h_s + W_d d_{t-1} + b), weights, context;
- :class:`AdditiveAttention` -- the same as a module (``W_h``, ``W_d`` with the bias b, ``v``);
- :class:`BahdanauDecoder` -- GRU cell fed [E[y_{t-1}]; a_t], output layer on [d_t; a_t; E[y_{t-1}]];
- :class:`AttentionSeq2Seq` -- bidirectional GRU encoder (directions merged by a linear layer) + that
  decoder; an :class:`seqcourse.seq2seq.EncoderDecoder`, so chapter 6's training and decoding work;
- :func:`greedy_with_attention` -- greedy decoding that also returns every step's attention weights.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .seq2seq import Encoder, EncoderDecoder, source_mask
from .text import EOS_INDEX, PAD_INDEX, SOS_INDEX

__all__ = ["masked_softmax", "additive_attention", "AdditiveAttention", "BahdanauDecoder", "AttentionSeq2Seq",
           "greedy_with_attention"]


def masked_softmax(energies: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Softmax over the last axis (source positions); where ``mask`` is False the energy is set to -inf
    first, so those positions get weight exactly 0. ``energies`` ``(B, Tx)`` or ``(B, Ty, Tx)``, ``mask``
    broadcastable to it (True at real tokens)."""
    if mask is not None:
        energies = energies.masked_fill(~mask, float("-inf"))
    return torch.softmax(energies, dim=-1)


def additive_attention(d_prev: torch.Tensor, h: torch.Tensor, mask: torch.Tensor | None, W_h: torch.Tensor,
                       W_d: torch.Tensor, b: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Bahdanau attention for one decoder step.

    ``d_prev`` ``(B, Dd)``, ``h`` ``(B, Tx, Dh)``, ``mask`` ``(B, Tx)`` bool, ``W_h`` ``(A, Dh)``,
    ``W_d`` ``(A, Dd)``, ``b`` ``(A,)``, ``v`` ``(A,)``. Returns the context ``(B, Dh)`` and the weights
    ``(B, Tx)``.
    """
    keys = h @ W_h.T                                              # (B, Tx, A)
    query = d_prev @ W_d.T + b                                    # (B, A)
    energies = torch.tanh(keys + query[:, None, :]) @ v           # (B, Tx)
    alpha = masked_softmax(energies, mask)                        # (B, Tx)
    context = torch.bmm(alpha[:, None, :], h)[:, 0]               # (B, Dh)
    return context, alpha


class AdditiveAttention(nn.Module):
    """Additive attention as a module: ``W_h`` (no bias), ``W_d`` (its bias is b), ``v`` (one output, no
    bias). ``forward(d_prev (B, Dd), h (B, Tx, Dh), mask (B, Tx)) -> (context (B, Dh), alpha (B, Tx))``."""

    def __init__(self, dec_size: int, enc_size: int, attn_size: int):
        super().__init__()
        self.W_h = nn.Linear(enc_size, attn_size, bias=False)
        self.W_d = nn.Linear(dec_size, attn_size)
        self.v = nn.Linear(attn_size, 1, bias=False)

    def forward(self, d_prev, h, mask=None):
        return additive_attention(d_prev, h, mask, self.W_h.weight, self.W_d.weight, self.W_d.bias,
                                  self.v.weight[0])


class BahdanauDecoder(nn.Module):
    """One step of the attention decoder:

    a_t = attention(d_{t-1}, h_1..h_Tx),  d_t = GRU([E[y_{t-1}]; a_t], d_{t-1}),
    log p(y_t) = log_softmax(W_y [d_t; a_t; E[y_{t-1}]] + b_y).

    ``step(y_prev (B,), d_prev (B, H), h (B, Tx, Dh), mask (B, Tx)) -> (log_probs (B, V), d (B, H),
    alpha (B, Tx))``.
    """

    def __init__(self, vocab_size: int, emb_size: int, hidden_size: int, enc_size: int, attn_size: int,
                 pad_index: int = PAD_INDEX):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=pad_index)
        self.attention = AdditiveAttention(hidden_size, enc_size, attn_size)
        self.cell = nn.GRUCell(emb_size + enc_size, hidden_size)
        self.out = nn.Linear(hidden_size + enc_size + emb_size, vocab_size)

    def step(self, y_prev, d_prev, h, mask):
        x = self.embedding(y_prev)                                         # (B, E)
        a, alpha = self.attention(d_prev, h, mask)                         # (B, Dh), (B, Tx)
        d = self.cell(torch.cat([x, a], dim=-1), d_prev)                   # (B, H)
        log_probs = F.log_softmax(self.out(torch.cat([d, a, x], dim=-1)), dim=-1)   # (B, V)
        return log_probs, d, alpha


class AttentionSeq2Seq(EncoderDecoder):
    """Bidirectional GRU encoder + :class:`BahdanauDecoder`.

    The encoder's two directions, ``[h_fwd_s; h_bwd_s]`` (2H), are merged by a linear layer into the
    decoder's size H; the decoder starts from d_0 = tanh(W [h_fwd_Tx; h_bwd_1] + b). ``decode_step`` returns
    log-probabilities (valid logits for the cross-entropy) and keeps the last weights in
    ``self.last_alpha``.
    """

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, emb_size: int = 32, hidden_size: int = 64,
                 attn_size: int | None = None, pad_index: int = PAD_INDEX):
        super().__init__()
        self.encoder = Encoder(src_vocab_size, emb_size, hidden_size, pad_index, bidirectional=True)
        self.merge = nn.Linear(2 * hidden_size, hidden_size)
        self.init = nn.Linear(2 * hidden_size, hidden_size)
        self.decoder = BahdanauDecoder(tgt_vocab_size, emb_size, hidden_size, hidden_size,
                                       attn_size or hidden_size, pad_index)
        self.last_alpha = None

    def encode(self, src, src_lengths):
        outputs, h_final = self.encoder(src, src_lengths)                  # (B, Tx, 2H), (B, 2H)
        h = self.merge(outputs)                                            # (B, Tx, H)
        mask = source_mask(src_lengths, src.shape[1], device=src.device)   # (B, Tx)
        return (h, mask), torch.tanh(self.init(h_final))                   # memory, d_0 (B, H)

    def decode_step(self, y_prev, state, memory):
        h, mask = memory
        log_probs, d, alpha = self.decoder.step(y_prev, state, h, mask)    # (B, V), (B, H), (B, Tx)
        self.last_alpha = alpha
        return log_probs, d


@torch.no_grad()
def greedy_with_attention(model: AttentionSeq2Seq, src: torch.Tensor, src_lengths: torch.Tensor, max_len: int,
                          sos_index: int = SOS_INDEX, eos_index: int = EOS_INDEX):
    """Greedy decoding that records the attention weights. Returns ``(tokens, weights)``: ``tokens`` a list
    of ``B`` token-id lists (<eos> excluded), ``weights`` ``(B, steps, Tx)`` -- row t holds the weights used
    to produce output token t (the row after the last token is the one that produced <eos>)."""
    was_training = model.training
    model.eval()
    memory, state = model.encode(src, src_lengths)
    y = torch.full((src.shape[0],), sos_index, dtype=torch.long, device=src.device)   # (B,)
    finished = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)         # (B,)
    tokens, weights = [], []
    for _ in range(max_len):
        log_probs, state = model.decode_step(y, state, memory)      # (B, V)
        y = log_probs.argmax(dim=-1)                                 # (B,)
        tokens.append(y)
        weights.append(model.last_alpha)                             # (B, Tx)
        finished |= y == eos_index
        if bool(finished.all()):
            break
    model.train(was_training)
    out = []
    for row in torch.stack(tokens, dim=1).tolist():
        out.append(row[: row.index(eos_index)] if eos_index in row else row)
    return out, torch.stack(weights, dim=1)                          # list, (B, steps, Tx)
