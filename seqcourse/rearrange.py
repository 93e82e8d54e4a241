"""The ways a right tensor comes out rearranged: two axes of one size swapped, equal blocks along an axis in another
order, an axis reversed. Shared by the two readers of a wrong value, :func:`seqcourse.checks.diagnose` (the
student's result against the expected one) and :func:`seqcourse.calltrace._how` (a variable against the reference's
fingerprint), which say them each in their own words; torch only, so that either can import it."""
from __future__ import annotations

import itertools

import torch


def swapped_axes(v: torch.Tensor):
    """``((i, j), v with axes i and j swapped)`` for every pair of axes of one size above 1, in order."""
    for i, j in itertools.combinations(range(v.dim()), 2):
        if v.shape[i] == v.shape[j] > 1:
            yield (i, j), v.transpose(i, j)


def block_orders(v: torch.Tensor, dims=None):
    """``((d, k, perm), v's k equal blocks along axis d put in the order perm)`` for k in 2, 3, 4 and every order
    but the identity, along the axes ``dims`` (all of them by default): ``perm[j]`` is which of v's blocks comes
    j-th, so ``[perm.index(j) for j in range(k)]`` says which block of the rearranged tensor each of v's blocks is."""
    for d in (range(v.dim()) if dims is None else dims):
        for k in (2, 3, 4):
            if v.shape[d] % k or v.shape[d] < k:
                continue
            blocks = v.chunk(k, dim=d)
            for perm in itertools.permutations(range(k)):
                if perm != tuple(range(k)):
                    yield (d, k, perm), torch.cat([blocks[p] for p in perm], dim=d)


def reversals(v: torch.Tensor):
    """``(d, v reversed along axis d)`` for every axis of size above 1, in order."""
    for d in range(v.dim()):
        if v.shape[d] > 1:
            yield d, v.flip(d)
