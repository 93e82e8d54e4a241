"""Unit tests of seqcourse.cost (time, memory and multiply-adds of a computation)."""
from __future__ import annotations

import pytest
import torch

from seqcourse.cost import TensorMemory, count_macs, peak_memory, time_call


def _attention(q, k, v):
    e = q @ k.transpose(1, 2)          # (B, Ty, Tx)
    w = torch.softmax(e, dim=-1)       # (B, Ty, Tx)
    return w @ v                       # (B, Ty, Dv)


def test_peak_memory_counts_what_is_created_not_the_inputs():
    B, Ty, Tx, D = 3, 20, 30, 8
    q, k, v = torch.randn(B, Ty, D), torch.randn(B, Tx, D), torch.randn(B, Tx, D)
    # energies and weights are alive together at the end, plus the (B, Ty, D) result
    assert peak_memory(_attention, q, k, v) == 4 * (2 * B * Ty * Tx + B * Ty * D)
    assert peak_memory(lambda x: x.transpose(0, 1)[:2], q) == 0      # views of an input are free
    assert peak_memory(lambda x: x + 1, torch.zeros(5, dtype=torch.float64)) == 40


def test_tensor_memory_releases_freed_tensors():
    with TensorMemory() as mem:
        a = torch.ones(1000)           # 4000 bytes
        b = torch.ones(500)            # 2000 bytes
        del a
        c = torch.ones(250)            # 1000 bytes
    assert mem.peak == 6000
    assert mem.live == 3000
    del b, c
    assert mem.live == 0


def test_count_macs_of_matrix_products():
    B, Ty, Tx, D = 2, 3, 5, 7
    q, k, v = torch.randn(B, Ty, D), torch.randn(B, Tx, D), torch.randn(B, Tx, 4)
    assert count_macs(_attention, q, k, v) == B * Ty * Tx * D + B * Ty * Tx * 4
    assert count_macs(lambda a: a.exp(), q) == 0


def test_time_call_returns_a_positive_time():
    a, b = torch.randn(16, 16), torch.randn(16, 16)
    fastest = time_call(torch.mm, a, b, repeats=3)
    assert 0 < fastest < 1
    assert 0 < time_call(torch.mm, a, b, repeats=3, number=2, stat="median") < 1
    with pytest.raises(ValueError):
        time_call(torch.mm, a, b, stat="mean")
    with pytest.raises(ValueError):
        time_call(torch.mm, torch.randn(2, 2), torch.randn(2, 2), repeats=0)
