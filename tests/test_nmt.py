"""Tests of the capstone package `seqcourse.nmt`: data, tokeniser and vocabulary, model, decoding, training
(the smoke configuration, checkpoints and resume) and the command lines.

Tests that need the Tatoeba file look for it in $SEQCOURSE_DATA or ../shared/data (next to the repository)
and skip with a message when it is absent.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest
import torch

from seqcourse import set_seed
from seqcourse.nmt import data as D
from seqcourse.nmt.configs import get_config
from seqcourse.nmt.decode import beam_search, greedy_decode
from seqcourse.nmt.model import NMT, masked_loss
from seqcourse.nmt.toy import all_toy_pairs, toy_splits

REPO = Path(__file__).resolve().parents[1]
TATOEBA = D.find_tatoeba()
needs_tatoeba = pytest.mark.skipif(
    TATOEBA is None, reason="Tatoeba fra.txt not found: set SEQCOURSE_DATA or put it in ../shared/data/")
ENV = dict(os.environ, OMP_NUM_THREADS="1", SEQCOURSE_PROGRESS="0", SEQCOURSE_DEVICE="cpu")


# ------------------------------------------------------------------------------------------ data
def test_reader_takes_two_or_three_columns_and_normalises_spaces(tmp_path):
    f = tmp_path / "pairs.txt"
    f.write_text("Run!\tCours\u202f!\n"
                 "Who?\tQui\u00a0?\tCC-BY 2.0 (France) Attribution: tatoeba.org #2083030 (CK)\n"
                 "  Hi.  \t  Salut   tout\u2009le monde\u200b.  \n"
                 "broken line without a tab\n"
                 "\tempty source\n", encoding="utf-8")
    assert D.read_pairs(f) == [("Run!", "Cours !"), ("Who?", "Qui ?"), ("Hi.", "Salut tout le monde.")]


def test_missing_file_gives_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="manythings.org/anki"):
        D.read_pairs(tmp_path / "nope.txt")
    with pytest.raises(FileNotFoundError, match="Multi30k"):
        D.load_multi30k(tmp_path)
    with pytest.raises(ValueError, match="unknown corpus"):
        D.load_corpus("europarl")


def test_split_is_by_source_and_deterministic():
    pairs = [(f"Sentence {i % 300}.", f"Phrase {i} {j}.") for i in range(900) for j in range(2)]
    a, b = D.split_by_source(pairs, dev_frac=0.1, test_frac=0.1), D.split_by_source(list(reversed(pairs)), 0.1, 0.1)
    sources = {k: {s for s, _ in v} for k, v in a.items()}
    assert not sources["train"] & sources["test"] and not sources["train"] & sources["dev"]
    assert not sources["dev"] & sources["test"]
    assert sum(len(v) for v in a.values()) == len(pairs)
    assert all(len(v) > 0 for v in a.values())
    assert {k: set(v) for k, v in a.items()} == {k: set(v) for k, v in b.items()}, "the order must not matter"
    # case variants of one source stay together
    s = D.split_by_source([("Go.", "Va !"), ("GO.", "Va !")] * 50, 0.3, 0.3)
    assert sum(bool(v) for v in s.values()) == 1


@needs_tatoeba
def test_tatoeba_splits_do_not_leak():
    splits = D.load_tatoeba(TATOEBA)
    assert 130_000 < sum(len(v) for v in splits.values()) < 2_000_000
    src = {k: {s.casefold() for s, _ in v} for k, v in splits.items()}
    assert not src["train"] & src["test"] and not src["train"] & src["dev"] and not src["dev"] & src["test"]
    assert 0.02 < len(splits["test"]) / len(splits["train"]) < 0.05
    assert not any("\u202f" in t or "\u00a0" in t for _, t in splits["test"])


def test_multi30k_loader(tmp_path):
    for stem, n in [("train", 3), ("val", 2), ("test_2016_flickr", 2)]:
        (tmp_path / f"{stem}.de").write_text("\n".join(f"Ein Hund {i}." for i in range(n)) + "\n")
        (tmp_path / f"{stem}.en").write_text("\n".join(f"A dog {i}." for i in range(n)) + "\n")
    splits = D.load_multi30k(tmp_path)
    assert [len(splits[k]) for k in ("train", "dev", "test")] == [3, 2, 2]
    assert splits["train"][1] == ("Ein Hund 1.", "A dog 1.")
    real = D.find_multi30k()
    if real is not None:
        splits = D.load_multi30k(real)
        assert [len(splits[k]) for k in ("train", "dev", "test")] == [29000, 1014, 1000]


def test_download_checks_the_checksum(tmp_path):
    src = tmp_path / "server"
    src.mkdir()
    with zipfile.ZipFile(src / "fra-eng.zip", "w") as z:
        z.writestr("fra.txt", "Go.\tVa !\tCC-BY 2.0 (France)\n")
        z.writestr("_about.txt", "about")
    url = (src / "fra-eng.zip").as_uri()
    path = D.download_tatoeba(tmp_path / "cache", url=url)
    assert D.read_pairs(path) == [("Go.", "Va !")]
    assert (tmp_path / "cache" / "fra-eng.zip.sha256").exists()
    with pytest.raises(RuntimeError, match="checksum mismatch"):
        D.download_tatoeba(tmp_path / "cache", url=url, expected_sha256="0" * 64)
    with pytest.raises(RuntimeError, match="could not download"):
        D.download_tatoeba(tmp_path / "other", url=(src / "missing.zip").as_uri())


# ------------------------------------------------------------------------------------------ tokens
def test_tokenizer_and_detokenizer():
    assert D.tokenize("Don't go!") == ["Don't", "go", "!"]
    assert D.tokenize("Qu'est-ce que c'est\u202f?") == ["Qu'est", "-", "ce", "que", "c'est", "?"]
    assert D.tokenize("It costs 3.50 dollars.", lowercase=True) == ["it", "costs", "3.50", "dollars", "."]
    assert D.detokenize(["Qu'est", "-", "ce", "que", "c'est", "?"]) == "Qu'est-ce que c'est?"
    assert D.detokenize(["Il", "a", "dit", ":", "(", "oui", ")", "."]) == "Il a dit: (oui)."


def test_vocab():
    v = D.Vocab.build([["a", "b", "b", "c"], ["b", "c", "d"]], min_freq=2)
    assert v.itos == ["<pad>", "<sos>", "<eos>", "<unk>", "b", "c"]
    assert (D.PAD, D.SOS, D.EOS, D.UNK) == (0, 1, 2, 3)
    assert v.encode(["c", "z"], sos=True, eos=True) == [1, 5, 3, 2]
    assert v.decode([1, 5, 4, 2, 4]) == ["c", "b"]
    assert len(D.Vocab.build([["a", "b", "b", "c"]], max_size=5)) == 5
    assert D.Vocab(v.state_dict()).stoi == v.stoi
    with pytest.raises(ValueError):
        D.Vocab(["a", "b"])


def test_capstone_shares_the_course_text_pipeline(tmp_path):
    from seqcourse import text, varlen

    v = D.Vocab.build([["a", "b", "b", "c"], ["b", "c", "d"]], min_freq=1, max_size=6)
    assert isinstance(v, text.Vocab) and len(v) == 6                      # max_size counts the specials here
    assert v == text.Vocab.build([["a", "b", "b", "c"], ["b", "c", "d"]], max_size=2)
    v.save(tmp_path / "v.json")
    assert D.Vocab.load(tmp_path / "v.json").state_dict() == v.state_dict()
    assert D.pad([[4, 5], [6]]).tolist() == text.pad_batch([[4, 5], [6]])[0].tolist() == [[4, 5], [6, 0]]
    assert varlen.pad_sequences([[4, 5], [6]], padding_value=9)[0].tolist() == [[4, 5], [6, 9]]
    assert D.tokenize("Il a 3,5 ans.") == text.word_tokenize("Il a 3,5 ans.", lower=False, pattern=D._TOKEN)


def test_batches_bucket_by_length():
    ex = [D.Example(list(range(4, 4 + n)), [1, 5, 2]) for n in [1, 9, 2, 8, 3, 7, 4, 6] * 8]
    batches = D.bucket_batches(ex, batch_size=8, seed=1, pool=8)
    assert sorted(i for b in batches for i in b) == list(range(len(ex)))
    spread = max(max(len(ex[i].src) for i in b) - min(len(ex[i].src) for i in b) for b in batches)
    assert spread == 0
    src, src_len, tgt = D.collate([ex[0], ex[1]])
    assert src.shape == (2, 9) and src_len.tolist() == [1, 9] and src[0, 1:].eq(0).all() and tgt.shape == (2, 3)


# ------------------------------------------------------------------------------------------ model
def _model_and_batch(seed=0):
    set_seed(seed)
    model = NMT(13, 11, embed_size=6, hidden_size=8, dropout=0.0).eval()
    src = torch.tensor([[4, 5, 6, 7, 8], [9, 10, 0, 0, 0], [12, 4, 5, 0, 0]])
    return model, src, torch.tensor([5, 2, 3])


def test_model_shapes_and_masking():
    model, src, src_len = _model_and_batch()
    tgt_in = torch.tensor([[1, 4, 5, 6], [1, 7, 0, 0], [1, 8, 9, 0]])
    logits, alpha = model(src, src_len, tgt_in, return_attention=True)
    assert logits.shape == (3, 4, 11) and alpha.shape == (3, 4, 5)
    assert torch.all(alpha[1, :, 2:] == 0) and torch.all(alpha[2, :, 3:] == 0), "padding must get zero attention"
    assert torch.allclose(alpha.sum(-1), torch.ones(3, 4))
    # a sentence gives the same scores alone as in a padded batch (packing + mask)
    alone = model(src[1:2, :2], src_len[1:2], tgt_in[1:2])
    assert torch.allclose(alone, logits[1:2], atol=1e-5)
    h, (d0, c0) = model.encode(src, src_len)
    assert h.shape == (3, 5, 16) and d0.shape == (3, 8) and torch.all(h[1, 2:] == 0)
    loss = masked_loss(logits, torch.tensor([[4, 5, 6, 2], [7, 2, 0, 0], [8, 9, 2, 0]]))
    manual = torch.nn.functional.cross_entropy(logits[0], torch.tensor([4, 5, 6, 2]), reduction="sum") \
        + torch.nn.functional.cross_entropy(logits[1, :2], torch.tensor([7, 2]), reduction="sum") \
        + torch.nn.functional.cross_entropy(logits[2, :3], torch.tensor([8, 9, 2]), reduction="sum")
    assert torch.allclose(loss, manual / 9)


def test_beam_size_one_is_greedy_and_batching_changes_nothing():
    for seed in range(3):
        model, src, src_len = _model_and_batch(seed)
        with torch.no_grad():
            model.W_vocab.weight.mul_(4)          # peaked distributions: some hypotheses stop early
        greedy = greedy_decode(model, src, src_len, max_len=8)
        beam1 = [h[0][0] for h in beam_search(model, src, src_len, beam_size=1, max_len=8)]
        assert beam1 == greedy
        batched = beam_search(model, src, src_len, beam_size=4, max_len=8, alpha=0.7, n_best=4)
        for b in range(3):
            n = int(src_len[b])
            alone = beam_search(model, src[b:b + 1, :n], src_len[b:b + 1], beam_size=4, max_len=8, alpha=0.7,
                                n_best=4)[0]
            assert [t for t, _ in alone] == [t for t, _ in batched[b]]
            assert all(abs(x - y) < 1e-4 for (_, x), (_, y) in zip(alone, batched[b]))
            assert len(batched[b]) <= 4 and all(D.EOS not in t for t, _ in batched[b])
            scores = [s for _, s in batched[b]]
            assert scores == sorted(scores, reverse=True)


def test_toy_grammar():
    pairs = all_toy_pairs()
    assert len(pairs) == len(set(pairs)) == 7680
    assert ("they look for the small black cats .", "ils cherchent les petits chats noirs .") in pairs
    train, test = toy_splits(100, 20)
    assert not {s for s, _ in train} & {s for s, _ in test}


# ------------------------------------------------------------------------------------------ training
@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    """The first 4000 lines of Tatoeba (short sentences), as a file."""
    if TATOEBA is None:
        pytest.skip("Tatoeba fra.txt not found: set SEQCOURSE_DATA or put it in ../shared/data/")
    path = tmp_path_factory.mktemp("corpus") / "fra.txt"
    with open(TATOEBA, encoding="utf-8") as f:
        path.write_text("".join(line for _, line in zip(range(4000), f)), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """`python -m seqcourse.nmt.train --config smoke` on the real file, as a user would run it."""
    if TATOEBA is None:
        pytest.skip("Tatoeba fra.txt not found: set SEQCOURSE_DATA or put it in ../shared/data/")
    out = tmp_path_factory.mktemp("smoke")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "seqcourse.nmt.train", "--config", "smoke", "--data", str(TATOEBA),
                           "--out", str(out)], env=ENV, capture_output=True, text=True, timeout=300)
    return proc, out, time.perf_counter() - start


def test_smoke_config_trains_end_to_end(smoke_run):
    proc, out, seconds = smoke_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert seconds < 60, f"the smoke run took {seconds:.0f} s"
    m = json.loads((out / "metrics.json").read_text())
    losses = [r["loss"] for r in m["history"]["train"]]
    assert losses[-1] < 0.8 * losses[0], f"the loss did not go down: {losses}"
    dev = [r["loss"] for r in m["history"]["dev"]]
    assert dev[-1] < dev[0]
    assert 0 <= m["test_bleu"] <= 100 and m["tokens_per_s"] > 0 and len(m["samples"]) > 0
    assert (out / "curves.png").stat().st_size > 1000 and (out / "model.pt").exists()
    assert "test BLEU" in proc.stdout


def test_translate_cli_and_function(smoke_run, tmp_path):
    _, out, _ = smoke_run
    heat = tmp_path / "attention.png"
    proc = subprocess.run([sys.executable, "-m", "seqcourse.nmt.translate", "--checkpoint", str(out / "model.pt"),
                           "I am hungry.", "Go away!", "--heatmap", str(heat)], env=ENV, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(proc.stdout.strip().splitlines()) == 2
    assert heat.stat().st_size > 1000
    from seqcourse.nmt.translate import attention, translate

    assert isinstance(translate("Go.", out / "model.pt", device="cpu"), str)
    assert len(translate(["Go.", "Hi."], out / "model.pt", beam_size=1, device="cpu")) == 2
    src, tgt, w = attention("Who are you?", out / "model.pt", device="cpu")
    assert w.shape == (len(tgt), len(src)) and torch.allclose(w.sum(1), torch.ones(len(tgt)))


def test_resume_continues_from_the_saved_step(small_corpus, tmp_path):
    from seqcourse.nmt.train import train

    cfg = get_config("smoke", epochs=2, train_max=None, test_max=20, dev_max=20)
    a = train(cfg, small_corpus, tmp_path / "a", device="cpu", verbose=False)
    stopped = train(cfg, small_corpus, tmp_path / "b", device="cpu", max_steps=70, verbose=False)
    assert stopped == {"interrupted_at_step": 70}
    ck = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=False)
    assert ck["state"]["step"] == 70
    b = train(cfg, small_corpus, tmp_path / "b", device="cpu", resume=True, verbose=False)
    assert b["steps"] == a["steps"]
    assert [r["step"] for r in b["history"]["train"]] == [r["step"] for r in a["history"]["train"]]
    # the resumed run is the uninterrupted run: same batches, same optimiser state, same weights
    wa = torch.load(tmp_path / "a" / "checkpoint.pt", weights_only=False)["model"]
    wb = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=False)["model"]
    assert all(torch.allclose(wa[k], wb[k], atol=1e-5) for k in wa)
    assert abs(a["test_bleu"] - b["test_bleu"]) < 1e-6


def test_bf16_autocast_path_runs():
    """The CUDA path trains and decodes under bf16 autocast; CPU autocast exercises the same dtype mixing."""
    model, src, src_len = _model_and_batch()
    tgt = torch.tensor([[1, 4, 5, 2], [1, 7, 2, 0], [1, 8, 9, 2]])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(src, src_len, tgt[:, :-1])
        hyps = beam_search(model, src, src_len, beam_size=2, max_len=5)
        greedy = greedy_decode(model, src, src_len, max_len=5)
    loss = masked_loss(logits, tgt[:, 1:])
    loss.backward()
    assert logits.dtype == torch.bfloat16 and loss.dtype == torch.float32 and torch.isfinite(loss)
    assert len(hyps) == 3 and len(greedy) == 3


def test_bf16_probe_and_fallback(monkeypatch):
    """On CUDA, bf16 autocast is probed once; a stack where it fails trains in float32 with a warning."""
    from seqcourse.nmt import train as train_mod

    train_mod._probe_bf16(torch.device("cpu"))          # the probe itself runs (CPU autocast, same dtype mixing)
    assert not train_mod.bf16_works("cpu") and not train_mod.autocast("cpu")._enabled   # float32 on a CPU

    def broken(device):
        raise RuntimeError("cuDNN error: CUDNN_STATUS_NOT_SUPPORTED\nmore")

    monkeypatch.setattr(train_mod, "_probe_bf16", broken)
    monkeypatch.setattr(train_mod, "_BF16_WORKS", {})
    with pytest.warns(UserWarning, match="bf16 autocast does not work on cuda:3 .*CUDNN_STATUS_NOT_SUPPORTED"):
        assert train_mod.bf16_works("cuda:3") is False
    assert train_mod.bf16_works("cuda:3") is False      # cached: probed once
    monkeypatch.setattr(train_mod, "_probe_bf16", lambda device: None)
    monkeypatch.setattr(train_mod, "_BF16_WORKS", {})
    assert train_mod.bf16_works("cuda:3") is True
    with pytest.raises(ValueError, match="precision"):
        train_mod.autocast("cpu", "fp16")


def test_attention_scale_divides_the_energies_by_sqrt_h():
    """att_scale=True (the default) is CS224N's model with e = d^T W h / sqrt(H); False is CS224N's form."""
    scaled, src, src_len = _model_and_batch()
    plain = NMT(13, 11, embed_size=6, hidden_size=8, dropout=0.0, att_scale=False).eval()
    plain.load_state_dict(scaled.state_dict())
    h, _ = scaled.encode(src, src_len)
    assert torch.allclose(scaled.project_keys(h) * 8 ** 0.5, plain.project_keys(h), atol=1e-6)
    tgt_in = torch.tensor([[1, 4, 5, 6], [1, 7, 0, 0], [1, 8, 9, 0]])
    _, a_scaled = scaled(src, src_len, tgt_in, return_attention=True)
    _, a_plain = plain(src, src_len, tgt_in, return_attention=True)
    assert not torch.allclose(a_scaled, a_plain)
    # the same step by hand: softmax of d_t^T W h_s / sqrt(H) over the real source positions
    d0, c0 = scaled.encode(src, src_len)[1]
    d1, _ = scaled.decoder(torch.cat([scaled.tgt_embed(tgt_in[:, 0]), torch.zeros(3, 8)], -1), (d0, c0))
    e = torch.einsum("bh,bsh->bs", d1, scaled.W_attProj(h)) / 8 ** 0.5
    want = torch.softmax(e.masked_fill(src == 0, float("-inf")), -1)
    assert torch.allclose(a_scaled[:, 0], want, atol=1e-6)
