"""The capstone's translator: a bidirectional LSTM encoder and an LSTM decoder with multiplicative attention
and input feeding (the CS224N assignment-4 model), in the book's notation (chapters/notation.md).

Encoder, for source positions s = 1..Tx (a bidirectional LSTM over the embeddings E_x[x_s]):

    h_s = [fwd h_s ; bwd h_s]          (2H)     c_s likewise
    d_0 = W_h [bwd h_1 ; fwd h_Tx]     (H)      c_0 = W_c [bwd c_1 ; fwd c_Tx]

Decoder step t = 1..Ty (input feeding: the previous combined output goes back in, zero at t = 1):

    d_t, c_t  = LSTMCell([E_y[y_{t-1}] ; tilde d_{t-1}], (d_{t-1}, c_{t-1}))
    e_{t,s}   = d_t^T W_attProj h_s / sqrt(H)       (padded source positions: -inf; att_scale=False: no sqrt(H))
    alpha_t   = softmax_s(e_t)
    a_t       = sum_s alpha_{t,s} h_s               (2H)
    tilde d_t = Dropout(tanh(W_u [a_t ; d_t]))      (H)      ([a_t ; d_t]: 3H; CS224N's u_t)
    P_t       = softmax(W_vocab tilde d_t)          (V)

CS224N's assignment leaves the energies unscaled. Dividing them by sqrt(H), as scaled dot-product attention
does (chapter 8), keeps the softmax from saturating during training. Measured by
``benchmarks/attention_scale.py`` on Tatoeba (``benchmarks/results/attention_scale.txt``: the word-level
model, now ``--config laptop-word``, four seeds, three training minutes each), the unscaled model's test BLEU
was below the scaled one's for every seed; with seed 0 it put almost all its attention on the final
punctuation mark and reached about half the scaled model's BLEU, with the other seeds it trailed by less
(chapter 9 shows the measurement). ``att_scale=False`` gives CS224N's form. The scale is applied to the projected keys,
``h_proj = W_attProj h / sqrt(H)`` (:meth:`NMT.project_keys`), so that one decoder step is the same either way.
"""
from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .data import PAD


def _no_autocast_on_cuda(x: torch.Tensor):
    """Autocast off for cuDNN's LSTM. PyTorch's autocast wrapper for ``_cudnn_rnn`` casts to float16 whatever
    the autocast dtype, so under bf16 autocast the encoder would run in float16 with no loss scaling, where
    small gradients underflow. The encoder is a small part of the work: it runs in float32 (TF32 on recent
    GPUs) instead. Off CUDA this is a no-op."""
    return torch.autocast("cuda", enabled=False) if x.is_cuda else contextlib.nullcontext()


class NMT(nn.Module):
    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, embed_size: int = 256, hidden_size: int = 512,
                 dropout: float = 0.3, att_scale: bool = True):
        super().__init__()
        D, H = embed_size, hidden_size
        self.hidden_size = H
        self.att_scale = att_scale                            # divide the attention energies by sqrt(H)
        self.src_embed = nn.Embedding(src_vocab_size, D, padding_idx=PAD)
        self.tgt_embed = nn.Embedding(tgt_vocab_size, D, padding_idx=PAD)
        self.encoder = nn.LSTM(D, H, batch_first=True, bidirectional=True)
        self.decoder = nn.LSTMCell(D + H, H)                  # input: [E_y[y_{t-1}] ; tilde d_{t-1}]
        self.W_h = nn.Linear(2 * H, H, bias=False)            # d_0 from the final encoder states
        self.W_c = nn.Linear(2 * H, H, bias=False)            # c_0 likewise
        self.W_attProj = nn.Linear(2 * H, H, bias=False)      # multiplicative attention
        self.W_u = nn.Linear(3 * H, H, bias=False)            # combined output
        self.W_vocab = nn.Linear(H, tgt_vocab_size, bias=False)
        self.dropout = nn.Dropout(dropout)

    # -------------------------------------------------------------------------------------------------
    def encode(self, src: torch.Tensor, src_len: torch.Tensor):
        """src (B, Tx) padded ids, src_len (B,) -> h (B, Tx, 2H), (d_0, c_0) each (B, H)."""
        x = self.src_embed(src)                                                  # (B, Tx, D)
        # the lengths must be on the CPU: keep them there (a .cpu() of a GPU tensor waits for the GPU)
        packed = pack_padded_sequence(x, src_len.cpu(), batch_first=True, enforce_sorted=False)
        with _no_autocast_on_cuda(x):   # autocast would run cuDNN's LSTM in float16, even under bf16 autocast
            out, (h_n, c_n) = self.encoder(packed)                               # h_n, c_n: (2, B, H)
        h, _ = pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])  # (B, Tx, 2H)
        # h_n[0] is the forward state at the last real position Tx, h_n[1] the backward state at position 1
        d0 = self.W_h(torch.cat([h_n[1], h_n[0]], dim=-1))                       # (B, H)
        c0 = self.W_c(torch.cat([c_n[1], c_n[0]], dim=-1))                       # (B, H)
        return h, (d0, c0)

    def project_keys(self, h: torch.Tensor) -> torch.Tensor:
        """h (B, Tx, 2H) -> h_proj = W_attProj h (B, Tx, H), divided by sqrt(H) if ``att_scale``; once per sentence."""
        h_proj = self.W_attProj(h)                                               # (B, Tx, H)
        return h_proj / self.hidden_size ** 0.5 if self.att_scale else h_proj

    def step(self, y_emb, o_prev, state, h, h_proj, mask):
        """One decoder step. y_emb (B, D), o_prev (B, H), state (d, c) each (B, H), h (B, Tx, 2H),
        h_proj = :meth:`project_keys` (h) (B, Tx, H), mask (B, Tx) True at real tokens.
        Returns the new (d_t, c_t), tilde d_t (B, H) and alpha_t (B, Tx)."""
        d, c = self.decoder(torch.cat([y_emb, o_prev], dim=-1), state)          # (B, H) each
        e = torch.bmm(h_proj, d.unsqueeze(2)).squeeze(2)                         # (B, Tx): d_t^T W h_s (/ sqrt(H))
        e = e.masked_fill(~mask, float("-inf"))
        alpha = torch.softmax(e, dim=-1)                                         # (B, Tx)
        a = torch.bmm(alpha.unsqueeze(1), h).squeeze(1)                          # (B, 2H)
        o = self.dropout(torch.tanh(self.W_u(torch.cat([a, d], dim=-1))))       # (B, H)
        return (d, c), o, alpha

    def forward(self, src, src_len, tgt_in, return_attention: bool = False):
        """Teacher forcing. tgt_in (B, Ty) = <sos> y_1 .. y_{Ty-1} -> logits (B, Ty, V) (and alpha (B, Ty, Tx))."""
        h, state = self.encode(src, src_len)                                     # (B, Tx, 2H)
        h_proj = self.project_keys(h)                                            # (B, Tx, H)
        h = h.to(h_proj.dtype)           # bf16 under autocast: cast once here, not at every step's bmm
        mask = src != PAD                                                        # (B, Tx)
        y = self.tgt_embed(tgt_in)                                               # (B, Ty, D)
        o = h.new_zeros(src.shape[0], self.hidden_size)                          # tilde d_0 = 0
        outs, alphas = [], []
        for t in range(tgt_in.shape[1]):
            state, o, alpha = self.step(y[:, t], o, state, h, h_proj, mask)
            outs.append(o)
            alphas.append(alpha)
        logits = self.W_vocab(torch.stack(outs, dim=1))                          # (B, Ty, V)
        return (logits, torch.stack(alphas, dim=1)) if return_attention else logits


def masked_loss(logits: torch.Tensor, tgt_out: torch.Tensor, label_smoothing: float = 0.0) -> torch.Tensor:
    """Mean cross-entropy over the real target tokens; <pad> positions count for nothing.

    logits (B, Ty, V), tgt_out (B, Ty) = y_1 .. y_Ty <eos> padded with <pad>."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), tgt_out.reshape(-1),
                           ignore_index=PAD, label_smoothing=label_smoothing)
