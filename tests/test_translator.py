"""Tests for seqcourse.translator and seqcourse.datelab (chapter 7)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest
import torch
from torch import nn

from seqcourse.attention import additive_attention
from seqcourse.datelab import DateLabModel, datelab_accuracy, encode_fixed, train_datelab
from seqcourse.seq2seq import greedy_decode, source_mask, train_seq2seq
from seqcourse.text import Vocab, pair_loader
from seqcourse.translator import (Attention, AttnDecoderRNN, EncoderRNN, LSTMCell, Translator,
                                  greedy_translate, show_attention)


def _pytorch_order(w):
    f, i, o, g = w.chunk(4)
    return torch.cat([i, f, g, o])


def _vocabs():
    src = Vocab(["<pad>", "<sos>", "<eos>", "<unk>"] + list("abcdefgh"))
    tgt = Vocab(["<pad>", "<sos>", "<eos>", "<unk>"] + list("xyzw"))
    return src, tgt


def test_lstm_cell_is_pytorch_cell_without_bias():
    torch.manual_seed(0)
    cell, ref = LSTMCell(3, 5), nn.LSTMCell(3, 5, bias=False)
    with torch.no_grad():
        ref.weight_ih.copy_(_pytorch_order(cell.W.weight))
        ref.weight_hh.copy_(_pytorch_order(cell.U.weight))
    x, h, c = torch.randn(4, 3), torch.randn(4, 5), torch.randn(4, 5)
    for got, want in zip(cell(x, (h, c)), ref(x, (h, c))):
        assert torch.allclose(got, want, atol=1e-6)
    assert not any("bias" in n for n, _ in cell.named_parameters())


def test_encoder_matches_bidirectional_lstm_and_masks_padding():
    torch.manual_seed(1)
    enc = EncoderRNN(12, 3, 4, 5)
    bi = nn.LSTM(3, 4, batch_first=True, bidirectional=True, bias=False)
    with torch.no_grad():
        for suffix, c in [("l0", enc.lstm_cell_left), ("l0_reverse", enc.lstm_cell_right)]:
            getattr(bi, "weight_ih_" + suffix).copy_(_pytorch_order(c.W.weight))
            getattr(bi, "weight_hh_" + suffix).copy_(_pytorch_order(c.U.weight))
    src = torch.randint(4, 12, (3, 6))
    out, hidden = enc(src)
    ref, (h_n, _) = bi(enc.embedding(src))
    assert torch.allclose(out, ref, atol=1e-6)
    assert torch.allclose(hidden, enc.fc(torch.cat([h_n[0], h_n[1]], -1)), atol=1e-6)
    # masked: a padded sentence gives what it gives alone, and zeros at the padding
    lengths = torch.tensor([6, 3, 1])
    src[1, 3:] = 0
    src[2, 1:] = 0
    out, hidden = enc(src, lengths)
    for i, n in enumerate(lengths.tolist()):
        alone, h_alone = enc(src[i:i + 1, :n])
        assert torch.allclose(out[i, :n], alone[0], atol=1e-6)
        assert torch.allclose(hidden[i], h_alone[0], atol=1e-6)
        assert torch.all(out[i, n:] == 0)


def test_attention_concat_form_equals_split_form_and_keys():
    torch.manual_seed(2)
    att = Attention(enc_size=6, dec_size=4, attn_size=3)
    d, h = torch.randn(2, 4), torch.randn(2, 5, 6)
    mask = source_mask(torch.tensor([5, 2]), 5)
    w = att(d, h, mask)
    W = att.Attn.weight.detach()
    _, ref = additive_attention(d, h, mask, W[:, 4:], W[:, :4], att.Attn.bias.detach(), att.v.detach())
    assert torch.allclose(w, ref, atol=1e-6)
    assert torch.all(w[1, 2:] == 0)
    assert torch.allclose(att(d, h, mask, keys=att.keys(h)), w, atol=1e-6)


def test_decoder_step_written_out():
    torch.manual_seed(3)
    dec = AttnDecoderRNN(9, 4, 5, 6, 3)
    h = torch.randn(2, 7, 6)
    mask = source_mask(torch.tensor([7, 4]), 7)
    y, state = torch.tensor([1, 5]), (torch.randn(2, 5), torch.randn(2, 5))
    lp, (d, c), w = dec(y, state, h, mask)
    x = dec.embedding(y)
    alpha = dec.attention(state[0], h, mask)
    a = (alpha[..., None] * h).sum(1)
    d2, c2 = dec.lstm_cell(torch.cat([a, x], -1), state)
    want = torch.log_softmax(dec.Out(torch.cat([d2, a, x], -1)), -1)
    assert torch.allclose(lp, want, atol=1e-6) and torch.allclose(d, d2) and torch.allclose(w, alpha)


def test_translator_batch_invariance_needs_masks():
    torch.manual_seed(4)
    sv, tv = _vocabs()
    src = torch.tensor([[4, 5, 6, 7, 8], [5, 6, 0, 0, 0]])
    lengths = torch.tensor([5, 2])
    tgt_in = torch.tensor([[1, 4, 5], [1, 6, 7]])
    for keys in (False, True):
        model = Translator(sv, tv, 4, 6, 5, masked=True, precompute_keys=keys)
        torch.manual_seed(4)
        model.load_state_dict(Translator(sv, tv, 4, 6, 5).state_dict())
        batch = model(src, lengths, tgt_in)
        alone = model(src[1:, :2], lengths[1:], tgt_in[1:])
        assert torch.allclose(batch[1], alone[0], atol=1e-5)
    model.masked = False
    assert not torch.allclose(model(src, lengths, tgt_in)[1], model(src[1:, :2], lengths[1:], tgt_in[1:])[0],
                              atol=1e-4)


def test_translate_and_show_attention():
    torch.manual_seed(5)
    sv, tv = _vocabs()
    model = Translator(sv, tv, 4, 6, 5)
    words, weights = model.translate("a b c", max_len=6)
    assert weights.shape == (min(len(words) + 1, 6), 3)
    assert torch.allclose(weights.sum(-1), torch.ones(weights.shape[0]), atol=1e-5)
    both = model.translate(["a b c", "d"], max_len=6)
    assert both[0][0] == words and both[1][1].shape[1] == 1
    src = torch.tensor([[4, 5, 6], [7, 0, 0]])
    tokens, w = greedy_translate(model, src, torch.tensor([3, 1]), max_len=6)
    assert tokens == greedy_decode(model, src, torch.tensor([3, 1]), max_len=6)
    assert torch.all(w[1, :, 1:] == 0)
    ax = show_attention("a b c", words, weights)
    assert ax is not None


def test_translator_learns_a_copy_task():
    torch.manual_seed(6)
    sv = Vocab(["<pad>", "<sos>", "<eos>", "<unk>"] + list("abcd"))
    pairs = [[sv.stoi[c] for c in w] for w in ["ab", "ba", "abc", "cab", "dd", "cd", "dab", "bcd"]]
    tgt = [[1] + p + [2] for p in pairs]
    model = Translator(sv, sv, 8, 16, 8)
    train_seq2seq(model, pair_loader(pairs, tgt, batch_size=8, seed=0), steps=150, lr=1e-2)
    words, _ = model.translate("d a b")
    assert "".join(words) == "dab"


def test_datelab_shapes_softmax_over_source_and_training():
    torch.manual_seed(7)
    sv = Vocab(["<pad>", "<sos>", "<eos>", "<unk>"] + list("0123456789 /"))
    tv = Vocab(["<pad>", "<sos>", "<eos>", "<unk>"] + list("0123456789-"))
    X, Y = encode_fixed([("1/2/99", "1999-01-02"), ("3/4/01", "2001-03-04")], sv, tv, Tx=8)
    assert X.shape == (2, 8) and Y.shape == (2, 10) and X[0, 6:].eq(0).all()
    model = DateLabModel(len(sv), len(tv), Tx=8)
    logits, alphas = model(X)
    assert logits.shape == (2, 10, len(tv)) and alphas.shape == (2, 10, 8)
    assert torch.allclose(alphas.sum(-1), torch.ones(2, 10), atol=1e-5)
    context, alpha = model.one_step_attention(torch.randn(2, 8, 64), torch.randn(2, 64))
    assert context.shape == (2, 64) and alpha.shape == (2, 8)
    losses = train_datelab(model, X, Y, epochs=60, batch_size=2, lr=2e-2)
    assert losses[-1] < losses[0]
    assert 0.0 <= datelab_accuracy(model, X, Y) <= 1.0
    with pytest.raises(ValueError, match="exactly 10"):
        encode_fixed([("1/2/99", "1999-1-2")], sv, tv, Tx=8)
