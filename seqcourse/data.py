"""Synthetic sequence tasks that need no download and train on a laptop CPU in seconds.

Every generator takes an explicit ``seed`` and returns the same tensors for the same arguments, on any
machine, so that exercises and tests are deterministic. Shapes are batch first (see the notation page).
"""
from __future__ import annotations

import torch


def _generator(seed: int) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def random_bits(n: int, length: int, seed: int = 0) -> torch.Tensor:
    """``n`` sequences of ``length`` random bits, as floats of shape ``(n, length, 1)``."""
    if n < 1 or length < 1:
        raise ValueError(f"n and length must be positive, got n={n}, length={length}")
    return torch.randint(0, 2, (n, length, 1), generator=_generator(seed)).float()


def majority_task(n: int, length: int = 11, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Many-to-one: is more than half of the sequence ones?

    Returns ``x`` of shape ``(n, length, 1)`` (floats 0/1) and ``y`` of shape ``(n,)`` (int64 class 0 or 1).
    ``length`` must be odd so that there are no ties.
    """
    if length % 2 == 0:
        raise ValueError(f"length must be odd so that the majority is defined, got {length}")
    x = random_bits(n, length, seed)
    y = (x.sum(dim=(1, 2)) > length / 2).long()  # (n,)
    return x, y


def running_majority_task(n: int, length: int = 12, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Many-to-many, synchronized: after each bit, have more ones than zeros been seen so far?

    Returns ``x`` of shape ``(n, length, 1)`` and ``y`` of shape ``(n, length)`` (int64 0/1); a tie counts as 0.
    """
    x = random_bits(n, length, seed)
    ones = x[..., 0].cumsum(dim=1)  # (n, length)
    seen = torch.arange(1, length + 1, dtype=x.dtype)  # (length,)
    y = (ones > seen - ones).long()  # (n, length)
    return x, y


def reverse_task(n: int, length: int = 6, n_symbols: int = 8, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Many-to-many, asynchronous: read a sequence of symbols, then write it backwards.

    Returns source and target symbol ids, both int64 of shape ``(n, length)``, with ids in ``[0, n_symbols)``.
    """
    src = torch.randint(0, n_symbols, (n, length), generator=_generator(seed))
    return src, src.flip(dims=[1])
