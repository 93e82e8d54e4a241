"""Additive (Bahdanau) attention, for chapter 7.

- :func:`masked_softmax` -- softmax over source positions with padded positions set to -inf first;
- :func:`additive_attention` -- energies e_{t,s} = v^T tanh(W_h h_s + W_d d_{t-1} + b), weights, context;

The translator that chapter 7 builds with it (LSTM cells, the concatenated form of the score) is in
:mod:`seqcourse.translator`.
"""
from __future__ import annotations

import torch

__all__ = ["masked_softmax", "additive_attention"]


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

