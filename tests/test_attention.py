"""Tests for seqcourse.attention (chapter 7)."""
import torch
from torch import nn

from seqcourse.attention import additive_attention, masked_softmax
from seqcourse.seq2seq import source_mask


def test_masked_softmax_zero_and_normalised():
    e = torch.randn(3, 5)
    mask = source_mask(torch.tensor([5, 2, 1]), 5)
    w = masked_softmax(e, mask)
    assert torch.all(w[~mask] == 0)
    assert torch.allclose(w.sum(-1), torch.ones(3))


def test_additive_attention_matches_loop_and_concat_form():
    torch.manual_seed(0)
    B, Tx, Dd, Dh, A = 2, 4, 3, 5, 6
    d, h = torch.randn(B, Dd), torch.randn(B, Tx, Dh)
    W_h, W_d, b, v = torch.randn(A, Dh), torch.randn(A, Dd), torch.randn(A), torch.randn(A)
    ctx, alpha = additive_attention(d, h, None, W_h, W_d, b, v)
    e = torch.stack([torch.stack([v @ torch.tanh(W_h @ h[i, s] + W_d @ d[i] + b)
                                  for s in range(Tx)]) for i in range(B)])
    assert torch.allclose(alpha, torch.softmax(e, -1), atol=1e-6)
    assert torch.allclose(ctx, (alpha[..., None] * h).sum(1), atol=1e-6)
    first = nn.Linear(Dd + Dh, A)
    with torch.no_grad():
        first.weight.copy_(torch.cat([W_d, W_h], dim=1))
        first.bias.copy_(b)
        e2 = torch.tanh(first(torch.cat([d[:, None].expand(B, Tx, Dd), h], -1))) @ v
    assert torch.allclose(alpha, torch.softmax(e2, -1), atol=1e-6)


def test_padding_does_not_change_context():
    torch.manual_seed(1)
    d, h = torch.randn(1, 3), torch.randn(1, 4, 5)
    W_h, W_d, b, v = torch.randn(2, 5), torch.randn(2, 3), torch.randn(2), torch.randn(2)
    alone, _ = additive_attention(d, h, None, W_h, W_d, b, v)
    padded = torch.cat([h, torch.randn(1, 3, 5)], 1)
    got, alpha = additive_attention(d, padded, source_mask(torch.tensor([4]), 7), W_h, W_d, b, v)
    assert torch.allclose(got, alone, atol=1e-6) and torch.all(alpha[0, 4:] == 0)
