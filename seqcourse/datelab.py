"""The date-translation lab of deeplearning.ai's *Sequence Models* course, in
PyTorch (chapter 7).

The lab ("Neural Machine Translation with Attention", week 3 of the fifth course
of the Deep Learning Specialization, written in Keras) translates human-readable
dates into ISO dates with this structure:

- a **pre-attention** bidirectional LSTM over the one-hot source characters
  gives ``a<t'>``, ``t' = 1..Tx`` (``n_a`` units per direction);
- **one attention step** per output: repeat the previous post-attention state
  ``s<t-1>`` over ``t'``, concatenate ``[a<t'>; s<t-1>]``; ``Dense(10, tanh)``
  then ``Dense(1, relu)`` give the energies, a softmax over ``t'`` the weights
  ``alpha<t,t'>``, and ``context<t> = sum_t' alpha<t,t'> a<t'>``;
- a **post-attention** LSTM (``n_s`` units) reads the context alone (not the
  previous output) and a dense softmax layer predicts output character ``t``;
  there are exactly ``Ty`` outputs, no ``<eos>``.

Sources are padded to a fixed length ``Tx`` and the pads are attended to like
any character, as in the lab. :class:`DateLabModel` keeps the lab's names
(``densor1``, ``densor2``, ``post_activation_LSTM_cell``, ``output_layer``,
``one_step_attention``). Lines are kept under 82 characters: the chapter shows
this code as it is.
"""
from __future__ import annotations

from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from .text import Vocab, char_tokenize

__all__ = ["DateLabModel", "encode_fixed", "train_datelab", "datelab_accuracy"]


class DateLabModel(nn.Module):
    """The lab's model: ``forward(X (B, Tx) source ids)`` returns
    ``(logits (B, Ty, V_out), alphas (B, Ty, Tx))``.

    Lab sizes: ``Tx=30, Ty=10, n_a=32, n_s=64``; energies from
    ``Dense(10, tanh)`` then ``Dense(1, relu)``.
    """

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, Tx: int,
                 Ty: int = 10, n_a: int = 32, n_s: int = 64):
        super().__init__()
        self.src_vocab_size, self.Tx, self.Ty = src_vocab_size, Tx, Ty
        self.n_s = n_s
        self.pre_attention_lstm = nn.LSTM(src_vocab_size, n_a, batch_first=True,
                                          bidirectional=True)
        self.densor1 = nn.Linear(2 * n_a + n_s, 10)   # Dense(10, "tanh")
        self.densor2 = nn.Linear(10, 1)               # Dense(1, "relu")
        self.post_activation_LSTM_cell = nn.LSTMCell(2 * n_a, n_s)
        self.output_layer = nn.Linear(n_s, tgt_vocab_size)   # Dense, softmax

    def one_step_attention(self, a, s_prev):
        """``a (B, Tx, 2 n_a)``, ``s_prev (B, n_s)`` -> ``context (B, 2 n_a)``,
        ``alphas (B, Tx)``."""
        s_rep = s_prev[:, None, :].expand(-1, a.shape[1], -1)  # RepeatVector
        concat = torch.cat([a, s_rep], dim=-1)       # (B, Tx, 2 n_a + n_s)
        e = torch.tanh(self.densor1(concat))         # (B, Tx, 10)
        energies = torch.relu(self.densor2(e))       # (B, Tx, 1)
        alphas = torch.softmax(energies, dim=1)      # (B, Tx, 1): over t'
        context = (alphas * a).sum(dim=1)            # (B, 2 n_a)
        return context, alphas[..., 0]

    def forward(self, X):
        B = X.shape[0]
        x = F.one_hot(X, self.src_vocab_size).float()     # (B, Tx, V_in)
        a, _ = self.pre_attention_lstm(x)                 # (B, Tx, 2 n_a)
        s = c = a.new_zeros(B, self.n_s)                  # s<0>, c<0>
        logits, alphas = [], []
        for _ in range(self.Ty):
            context, alpha = self.one_step_attention(a, s)   # .., (B, Tx)
            s, c = self.post_activation_LSTM_cell(context, (s, c))
            logits.append(self.output_layer(s))              # (B, V_out)
            alphas.append(alpha)
        # (B, Ty, V_out), (B, Ty, Tx)
        return torch.stack(logits, dim=1), torch.stack(alphas, dim=1)


def encode_fixed(pairs: Sequence[tuple[str, str]], src_vocab: Vocab,
                 tgt_vocab: Vocab, Tx: int, Ty: int = 10):
    """Sources to ``(N, Tx)`` ids (cut at ``Tx`` characters, padded with
    ``<pad>``), targets to ``(N, Ty)`` ids (no ``<sos>``/``<eos>``: every
    target has exactly ``Ty`` characters)."""
    X = torch.full((len(pairs), Tx), src_vocab.pad_index, dtype=torch.long)
    Y = torch.empty((len(pairs), Ty), dtype=torch.long)
    for k, (s, t) in enumerate(pairs):
        ids = src_vocab.encode(char_tokenize(s))[:Tx]
        X[k, : len(ids)] = torch.tensor(ids)
        out = tgt_vocab.encode(char_tokenize(t))
        if len(out) != Ty:
            raise ValueError(f"target {t!r} has {len(out)} characters, "
                             f"the model writes exactly {Ty}")
        Y[k] = torch.tensor(out)
    return X, Y


def train_datelab(model: DateLabModel, X: torch.Tensor, Y: torch.Tensor,
                  epochs: int = 10, batch_size: int = 100, lr: float = 5e-3,
                  seed: int = 0) -> list[float]:
    """Adam on the summed cross-entropy of the ``Ty`` outputs (the lab's
    loss); returns the loss of every step."""
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    model.train()
    for _ in range(epochs):
        for idx in torch.randperm(len(X), generator=g).split(batch_size):
            logits, _ = model(X[idx])                        # (b, Ty, V_out)
            loss = F.cross_entropy(logits.flatten(0, 1), Y[idx].flatten(),
                                   reduction="sum") / len(idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    model.eval()
    return losses


@torch.no_grad()
def datelab_accuracy(model: DateLabModel, X: torch.Tensor,
                     Y: torch.Tensor) -> float:
    """Fraction of dates whose ``Ty`` characters are all right."""
    logits, _ = model(X)
    return (logits.argmax(-1) == Y).all(dim=1).float().mean().item()
