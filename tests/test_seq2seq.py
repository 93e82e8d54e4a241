"""Unit tests of seqcourse.seq2seq: the models against PyTorch's modules, the masked loss, greedy decoding,
the evaluation helpers, and a short training run."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from seqcourse import set_seed
from seqcourse.seq2seq import (Encoder, EncoderDecoder, Seq2Seq, source_mask, accuracy_by_length, encode_pairs,
                               exact_match, greedy_decode, seq2seq_loss, shift_targets, train_seq2seq, translate)
from seqcourse.text import EOS_INDEX, SOS_INDEX, Vocab, char_tokenize, pad_batch, pair_loader


def test_encoder_final_state_ignores_padding():
    set_seed(0)
    enc = Encoder(10, 5, 7)
    seqs = [[4, 5, 6, 7], [8, 9], [4]]
    src, lengths = pad_batch(seqs)                            # (3, 4)
    outputs, h = enc(src, lengths)
    assert outputs.shape == (3, 4, 7) and h.shape == (3, 7)
    for k, seq in enumerate(seqs):
        alone_out, alone_h = enc.rnn(enc.embedding(torch.tensor([seq])))
        torch.testing.assert_close(h[k], alone_h[0, 0])
        torch.testing.assert_close(outputs[k, : len(seq)], alone_out[0])
        assert torch.all(outputs[k, len(seq):] == 0)
    bi = Encoder(10, 5, 7, bidirectional=True)
    out2, h2 = bi(src, lengths)
    assert out2.shape == (3, 4, 14) and h2.shape == (3, 14)
    torch.testing.assert_close(h2[:, :7], torch.stack([out2[k, n - 1, :7] for k, n in enumerate(lengths.tolist())]))
    torch.testing.assert_close(h2[:, 7:], out2[:, 0, 7:])


def test_decoder_step_matches_nn_gru_and_forward_is_a_loop():
    set_seed(1)
    model = Seq2Seq(10, 8, emb_size=4, hidden_size=6)
    ref = nn.GRU(4, 6, batch_first=True)
    with torch.no_grad():
        ref.weight_ih_l0.copy_(model.decoder.cell.weight_ih)
        ref.weight_hh_l0.copy_(model.decoder.cell.weight_hh)
        ref.bias_ih_l0.copy_(model.decoder.cell.bias_ih)
        ref.bias_hh_l0.copy_(model.decoder.cell.bias_hh)
    src, lengths = pad_batch([[4, 5, 6], [7, 8]])
    tgt_in = torch.tensor([[SOS_INDEX, 4, 5, 6], [SOS_INDEX, 7, 0, 0]])
    logits = model(src, lengths, tgt_in)                      # (2, 4, 8)
    _, h = model.encoder(src, lengths)
    (outputs, mask), d0 = model.encode(src, lengths)
    assert mask.tolist() == [[True, True, True], [True, True, False]] and torch.equal(d0, h)
    assert source_mask(torch.tensor([1, 3]), 4).tolist() == [[True, False, False, False], [True, True, True, False]]
    states, _ = ref(model.decoder.embedding(tgt_in), h.unsqueeze(0))
    torch.testing.assert_close(logits, model.decoder.out(states))


def test_loss_ignores_padding_and_shift():
    tgt = torch.tensor([[1, 5, 6, 2], [1, 7, 2, 0]])
    tgt_in, tgt_out = shift_targets(tgt)
    assert tgt_in.tolist() == [[1, 5, 6], [1, 7, 2]] and tgt_out.tolist() == [[5, 6, 2], [7, 2, 0]]
    logits = torch.randn(2, 3, 9)
    real = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]
    want = torch.stack([F.cross_entropy(logits[b, t][None], tgt_out[b, t][None]) for b, t in real]).mean()
    torch.testing.assert_close(seq2seq_loss(logits, tgt_out), want)
    with pytest.raises(ValueError):
        seq2seq_loss(logits[:, :2], tgt_out)
    with pytest.raises(ValueError):
        shift_targets(torch.tensor([[1], [1]]))


class _Scripted(EncoderDecoder):
    """Writes, for source row b, the tokens script[b] then <eos>; records what it was fed."""

    def __init__(self, scripts, vocab_size=12):
        super().__init__()
        self.scripts, self.V, self.fed = scripts, vocab_size, []
        self.dummy = nn.Parameter(torch.zeros(1))

    def encode(self, src, src_lengths):
        return src, torch.zeros(src.shape[0], dtype=torch.long)

    def decode_step(self, y_prev, state, memory):
        self.fed.append(y_prev.tolist())
        logits = torch.full((len(state), self.V), -5.0)
        for b, t in enumerate(state.tolist()):
            script = self.scripts[int(memory[b, 0])] + [EOS_INDEX]
            logits[b, script[t] if t < len(script) else 4] = 5.0
        return logits, state + 1


def test_greedy_decode_stops_per_sequence():
    model = _Scripted({4: [5, 6, 7], 5: [8], 6: [9, 9, 9, 9, 9, 9, 9]})
    src = torch.tensor([[4], [5], [6]])
    hyps, logits = greedy_decode(model, src, torch.tensor([1, 1, 1]), max_len=5, return_logits=True)
    assert hyps == [[5, 6, 7], [8], [9, 9, 9, 9, 9]]
    assert logits.shape == (3, 5, 12)
    assert model.fed[0] == [SOS_INDEX] * 3 and model.fed[1] == [5, 8, 9]   # its own previous outputs
    model.fed.clear()
    hyps = greedy_decode(model, src[:2], torch.tensor([1, 1]), max_len=50)
    assert hyps == [[5, 6, 7], [8]] and len(model.fed) == 4            # stops once every row has ended
    with pytest.raises(ValueError):
        greedy_decode(model, src, torch.tensor([1, 1, 1]), max_len=0)


def test_translate_exact_match_and_accuracy_by_length():
    src_vocab = Vocab.build([list("abc")])
    tgt_vocab = Vocab.build([list("xyz")])
    a, b, c = (src_vocab[ch] for ch in "abc")
    x, y, z = (tgt_vocab[ch] for ch in "xyz")
    model = _Scripted({a: [x, y], b: [z], c: [x, x, x]})
    assert translate(model, ["a", "bbbb", "cc"], src_vocab, tgt_vocab) == ["xy", "z", "xxx"]
    pairs = [("a", "xy"), ("aa", "xy"), ("bbbb", "zz"), ("cc", "xxx")]
    assert exact_match(model, pairs, src_vocab, tgt_vocab) == 0.75
    r = accuracy_by_length(model, pairs, src_vocab, tgt_vocab, bins=[1, 3, 5])
    assert r["count"] == [3, 1] and r["accuracy"] == [1.0, 0.0] and r["lo"] == [1, 3]
    default = accuracy_by_length(model, pairs, src_vocab, tgt_vocab)
    assert sum(default["count"]) == 4
    with pytest.raises(ValueError):
        accuracy_by_length(model, pairs, src_vocab, tgt_vocab, bins=[3, 1])


def test_short_training_learns_to_reverse():
    set_seed(0)
    g = torch.Generator().manual_seed(0)
    words = ["".join("abcd"[i] for i in torch.randint(0, 4, (int(n),), generator=g)) for n in
             torch.randint(1, 5, (600,), generator=g)]
    pairs = [(w, w[::-1]) for w in words]
    vocab = Vocab.build([list("abcd")])
    src_ids, tgt_ids = encode_pairs(pairs, vocab, vocab, tokenize=char_tokenize)
    loader = pair_loader(src_ids, tgt_ids, batch_size=32, seed=0)
    model = Seq2Seq(len(vocab), len(vocab), emb_size=8, hidden_size=32)
    hist = train_seq2seq(model, loader, steps=300, lr=1e-2, eval_every=150,
                         eval_fn=lambda: exact_match(model, pairs[:100], vocab, vocab, max_len=6))
    assert len(hist["loss"]) == 300 and hist["eval_step"] == [150, 300]
    assert sum(hist["loss"][-20:]) < 0.3 * sum(hist["loss"][:20])
    assert hist["eval"][-1] > 0.8
    assert not model.training


def test_plot_accuracy_by_length(tmp_path):
    import matplotlib.pyplot as plt

    from seqcourse.plot import plot_accuracy_by_length

    r = {"lo": [1, 5], "hi": [5, 9], "center": [2.5, 6.5], "count": [10, 1], "accuracy": [0.9, 0.2]}
    ax = plot_accuracy_by_length({"plain": r, "other": r}, min_count=2, title="t")
    assert len(ax.lines) == 2 and list(ax.lines[0].get_xdata()) == [2.5]
    ax.figure.savefig(tmp_path / "a.png")
    plt.close("all")


def test_training_stops_when_the_evaluation_stops_improving():
    set_seed(0)
    sv = Vocab.build([list("abc")])
    pairs = [[4, 5, 6], [6, 5], [5, 4]]
    loader = pair_loader(pairs, [[SOS_INDEX] + p + [EOS_INDEX] for p in pairs], batch_size=3, seed=0)
    scores = iter([0.1, 0.5, 0.504, 0.5, 0.9, 0.9])
    model = Seq2Seq(len(sv), len(sv), emb_size=4, hidden_size=6)
    history = train_seq2seq(model, loader, steps=100, eval_every=2, eval_fn=lambda: next(scores), patience=2,
                            min_delta=0.01)
    # 0.1, 0.5 improve; 0.504 and 0.5 do not beat 0.5 by more than 0.01: stop at the 4th evaluation
    assert history["eval"] == [0.1, 0.5, 0.504, 0.5] and history["stopped"] == 8 and len(history["loss"]) == 8
    with pytest.raises(ValueError, match="patience"):
        train_seq2seq(model, loader, steps=5, patience=2)
