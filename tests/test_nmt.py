"""Tests of the capstone package `seqcourse.nmt`: data, tokeniser and vocabulary, model, decoding, training
(the smoke configuration, checkpoints and resume) and the command lines.

Tests that need the Tatoeba file look for it in $SEQCOURSE_DATA or ../shared/data (next to the repository)
and skip with a message when it is absent.
"""
from __future__ import annotations

import io
import json
import os
import random
import re
import shlex
import shutil
import signal
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
from seqcourse.nmt.errors import NMTError
from seqcourse.nmt.model import NMT, masked_loss
from seqcourse.nmt.toy import all_toy_pairs, toy_splits
from seqcourse.nmt.train import checksum

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


def test_reader_answers_bad_files_in_one_line(tmp_path):
    (tmp_path / "one_column.txt").write_text("Hello.\nGoodbye.\n", encoding="utf-8")
    with pytest.raises(NMTError, match=r"no usable sentence pairs in .*none of its 2 lines"):
        D.read_pairs(tmp_path / "one_column.txt")
    (tmp_path / "binary.bin").write_bytes(bytes(range(256)) * 4)
    with pytest.raises(NMTError, match="not a text file|not UTF-8"):
        D.read_pairs(tmp_path / "binary.bin")
    (tmp_path / "latin1.txt").write_bytes("Café\tCafé\n".encode("latin-1"))
    with pytest.raises(NMTError, match=r"not UTF-8 text \(byte 0xe9 at offset 3\)"):
        D.read_pairs(tmp_path / "latin1.txt")
    with pytest.raises(NMTError, match="is a folder"):
        D.read_pairs(tmp_path)
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(NMTError, match="none of its 0 lines"):
        D.read_pairs(tmp_path / "empty.txt")


def test_french_spacing_follows_the_references():
    assert D.french_spacing("Où est la gare?") == "Où est la gare ?"
    assert D.french_spacing("Il a dit: «oui»!") == "Il a dit : « oui » !"
    assert D.french_spacing("Quoi ?! Hein?!") == "Quoi ?! Hein ?!"            # one space before a run of marks
    assert D.french_spacing("Le train de 8:40; celui-ci.") == "Le train de 8:40 ; celui-ci."
    assert D.french_spacing("Déjà bien espacé ? Oui !") == "Déjà bien espacé ? Oui !"
    import sacrebleu

    # BLEU's 13a tokeniser splits these marks off anyway: the spacing is for the reader, not for the score
    assert sacrebleu.sentence_bleu("Où est la gare?", ["Où est la gare ?"]).score == pytest.approx(100)


def _toy_sentences(side, n=1500):
    return [p[side] for p in all_toy_pairs()[:n]]


def test_subword_tokenizer_round_trip_and_no_unk():
    fr = D.SubwordTokenizer.train(_toy_sentences(1), size=400, lang="fr")
    again = D.SubwordTokenizer.train(_toy_sentences(1), size=400, lang="fr")
    assert fr.model == again.model, "learning the pieces must be deterministic"
    assert [fr.sp.id_to_piece(i) for i in range(4)] == D.SPECIALS and len(fr) <= 400
    s = "nous cherchons les petites voitures vertes ."
    assert fr.decode(fr.encode(s)) == s and "".join(fr.tokens(s)).replace("\u2581", " ").strip() == s
    # characters never seen in training, accents and other scripts: bytes, never <unk>
    for text in ["Zoë a mangé 3 crêpes à Noël.", "東京は大きい", "naïve 🙂"]:
        ids = fr.encode(text)
        assert D.UNK not in ids and fr.decode(ids) == D.french_spacing(text)
    assert fr.decode(fr.encode("ils voient?") + [D.EOS, 7, 8]) == "ils voient ?"   # reading stops at <eos>
    # saved as plain data that torch.load(weights_only=True) reads
    buf = io.BytesIO()
    torch.save(fr.state_dict(), buf)
    buf.seek(0)
    back = D.tokenizer_from_state(torch.load(buf, weights_only=True))
    assert back.model == fr.model and back.encode(s) == fr.encode(s) and back.lang == "fr"


def test_missing_sentencepiece_is_a_one_line_error(monkeypatch):
    fr = D.SubwordTokenizer.train(_toy_sentences(1), size=200, lang="fr")
    monkeypatch.setitem(sys.modules, "sentencepiece", None)          # as if it were not installed
    for make in (lambda: D.SubwordTokenizer(fr.model), lambda: D.SubwordTokenizer.train(["a b"], size=50)):
        with pytest.raises(NMTError, match=r"need the sentencepiece package.*pip install sentencepiece"):
            make()


def test_word_tokenizer_is_chapter_6s_vocabulary():
    en = D.train_tokenizer("word", _toy_sentences(0, 200), size=20, min_freq=1)
    assert isinstance(en.vocab, D.Vocab) and len(en) == 20
    assert D.UNK in en.encode("the zebra sees a cat .")                 # a word-level vocabulary has <unk>
    back = D.tokenizer_from_state(en.state_dict())
    assert back.vocab == en.vocab
    assert D.tokenizer_from_state(en.vocab.itos).vocab == en.vocab      # checkpoints from before subwords
    with pytest.raises(ValueError, match="unknown tokenizer"):
        D.train_tokenizer("bpe-dropout", ["a"], 10)


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


# ------------------------------------------------------------------------------------------ decoding
def _reference_beam_search(model, src, src_len, beam_size, max_len, alpha, n_best):
    """The straightforward beam search (a Python list of finished hypotheses per sentence, filled at every
    step): the reference for the synchronisation-free version in seqcourse.nmt.decode."""
    from seqcourse.nmt.decode import _ban, _start

    B, K = src.shape[0], beam_size
    h, h_proj, mask, (d, c) = _start(model, src, src_len)
    rep = lambda x: x.repeat_interleave(K, dim=0)
    h, h_proj, mask, d, c = rep(h), rep(h_proj), rep(mask), rep(d), rep(c)
    o, y = h.new_zeros(B * K, model.hidden_size), torch.full((B * K,), D.SOS)
    scores = torch.full((B, K), float("-inf"))
    scores[:, 0] = 0.0
    tokens, finished, n_done = torch.zeros(B, K, 0, dtype=torch.long), [[] for _ in range(B)], torch.zeros(B, dtype=torch.long)
    for t in range(max_len):
        (d, c), o, _ = model.step(model.tgt_embed(y), o, (d, c), h, h_proj, mask)
        logp = _ban(torch.log_softmax(model.W_vocab(o), -1))
        V = logp.shape[-1]
        top, idx = (scores.unsqueeze(2) + logp.view(B, K, V)).view(B, K * V).topk(K, 1)
        beam, tok = idx // V, idx % V
        alive = (torch.arange(K).unsqueeze(0) < (K - n_done).unsqueeze(1)) & torch.isfinite(top)
        is_eos = (tok == D.EOS) & alive
        tokens = torch.cat([tokens.gather(1, beam.unsqueeze(2).expand(-1, -1, tokens.shape[2])), tok.unsqueeze(2)], 2)
        for b, k in is_eos.nonzero().tolist():
            finished[b].append((tokens[b, k, :-1].tolist(), top[b, k].item() / (t + 1) ** alpha))
        n_done += is_eos.sum(1)
        scores = top.masked_fill(~alive | is_eos, float("-inf"))
        if bool((n_done >= K).all()):
            break
        flat = (beam + torch.arange(B).unsqueeze(1) * K).view(-1)
        d, c, o, y = d[flat], c[flat], o[flat], tok.view(-1)
    else:
        for b in range(B):
            for k in range(K):
                if torch.isfinite(scores[b, k]):
                    finished[b].append((tokens[b, k].tolist(), scores[b, k].item() / tokens.shape[2] ** alpha))
    return [sorted(f, key=lambda x: -x[1])[:n_best] for f in finished]


@pytest.mark.parametrize("seed", range(4))
def test_beam_search_without_host_syncs_matches_the_reference(seed):
    model, src, src_len = _model_and_batch(seed)
    with torch.no_grad():
        model.W_vocab.weight.mul_(3 + seed)          # peaked distributions: hypotheses finish at different steps
    for K, max_len, alpha, n_best in [(4, 9, 0.7, 4), (3, 3, 1.0, 2), (2, 12, 0.0, 1)]:
        want = _reference_beam_search(model, src, src_len, K, max_len, alpha, n_best)
        got = beam_search(model, src, src_len, beam_size=K, max_len=max_len, alpha=alpha, n_best=n_best)
        assert [[t for t, _ in hyps] for hyps in got] == [[t for t, _ in hyps] for hyps in want]
        assert all(abs(x - y) < 1e-5 for g, w in zip(got, want) for (_, x), (_, y) in zip(g, w))


def test_decoding_never_outputs_unk_pad_or_sos():
    model, src, src_len = _model_and_batch(1)
    boost = 100 * torch.nn.functional.one_hot(torch.tensor(D.UNK), 11)          # <unk> scores highest
    model.W_vocab.register_forward_hook(lambda module, inputs, scores: scores + boost)
    hyps = greedy_decode(model, src, src_len, max_len=6) + [h[0][0] for h in beam_search(model, src, src_len, 3, 6)]
    assert not any(i in (D.UNK, D.PAD, D.SOS) for h in hyps for i in h)
    word_level = greedy_decode(model, src, src_len, max_len=6, banned=(D.PAD, D.SOS))
    assert any(D.UNK in h for h in word_level)                 # a word model may still say <unk> if asked


# ------------------------------------------------------------------------------------------ training
def _write_toy_corpus(path, n=3000):
    """The toy grammar's pairs as a Tatoeba-like file: CI has no real corpus, and this one trains in seconds."""
    pairs = all_toy_pairs()
    random.Random(0).shuffle(pairs)
    path.write_text("".join(f"{en.capitalize()}\t{fr.capitalize()}\n" for en, fr in pairs[:n]), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def toy_corpus(tmp_path_factory):
    return _write_toy_corpus(tmp_path_factory.mktemp("corpus") / "toy.txt")


def _cli(module, *args, timeout=300, **popen):
    return subprocess.run([sys.executable, "-m", f"seqcourse.nmt.{module}", *map(str, args)], env=ENV,
                          capture_output=True, text=True, timeout=timeout, **popen)


def _one_line_error(proc, code, pattern):
    """A failed command: exit status ``code``, stderr one line 'error: ...' matching ``pattern``, no traceback."""
    err = proc.stderr.strip()
    assert proc.returncode == code, (proc.returncode, proc.stdout[-500:], err[-2000:])
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in err, err
    assert re.search(pattern, err), err


SMOKE = ("--config", "smoke", "--max-len", "16")      # the toy sentences are up to 16 pieces long


@pytest.fixture(scope="module")
def smoke_run(toy_corpus, tmp_path_factory):
    """`python -m seqcourse.nmt.train --config smoke` on the toy corpus, as a user would run it."""
    out = tmp_path_factory.mktemp("smoke")
    start = time.perf_counter()
    proc = _cli("train", *SMOKE, "--data", toy_corpus, "--out", out)
    return proc, out, time.perf_counter() - start


def test_smoke_config_trains_end_to_end(smoke_run):
    proc, out, seconds = smoke_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert seconds < 90, f"the smoke run took {seconds:.0f} s"
    m = json.loads((out / "metrics.json").read_text())
    losses = [r["loss"] for r in m["history"]["train"]]
    assert losses[-1] < 0.8 * losses[0], f"the loss did not go down: {losses}"
    dev = [r["loss"] for r in m["history"]["dev"]]
    assert dev[-1] < dev[0]
    assert 0 <= m["test_bleu"] <= 100 and m["tokens_per_s"] > 0 and len(m["samples"]) > 0
    assert m["config"]["tokenizer"] == "sentencepiece" and m["train_cpu_minutes"] > 0
    assert (out / "curves.png").stat().st_size > 1000 and (out / "model.pt").exists()
    assert json.loads((out / "history.json").read_text())["dev"] == m["history"]["dev"]
    assert "test BLEU" in proc.stdout and "left out" in proc.stdout
    # model.pt is self-contained: the tokenizers travel with the weights, and it opens with weights_only=True
    ck = torch.load(out / "model.pt", weights_only=True)
    assert ck["format"] == "seqcourse.nmt checkpoint" and ck["src_tokenizer"]["kind"] == "sentencepiece"
    assert "optimizer" not in ck and ck["sha256"] == checksum(ck)


def test_test_curve_scores_the_test_set_at_every_evaluation(toy_corpus, tmp_path):
    """What the benchmark's table of test BLEU against training minutes is made of."""
    from seqcourse.nmt.train import train

    cfg = get_config("smoke", max_len=16, epochs=1, evals_per_epoch=2, test_max=20)
    m = train(cfg, toy_corpus, tmp_path, device="cpu", verbose=False, test_curve=True)
    assert len(m["history"]["dev"]) == 2
    for r in m["history"]["dev"]:
        assert 0 <= r["test_bleu"] <= 100 and 0 <= r["test_bleu_multi_ref"] <= 100 and r["cpu_seconds"] > 0


def test_translate_cli_and_function(smoke_run, tmp_path):
    _, out, _ = smoke_run
    heat = tmp_path / "attention.png"
    proc = _cli("translate", "--checkpoint", out / "model.pt", "They see the cat.", "We want a red car.",
                "--heatmap", heat, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(proc.stdout.strip().splitlines()) == 2 and "<unk>" not in proc.stdout
    assert heat.stat().st_size > 1000
    from seqcourse.nmt.translate import attention, translate

    assert isinstance(translate("They see.", out / "model.pt", device="cpu"), str)
    assert len(translate(["They see.", "I want."], out / "model.pt", beam_size=1, device="cpu")) == 2
    src, tgt, w = attention("Who wants the cat?", out / "model.pt", device="cpu")
    assert w.shape == (len(tgt), len(src)) and torch.allclose(w.sum(1), torch.ones(len(tgt)))
    assert src[0].startswith("\u2581")                                    # subword pieces, as the model sees them
    # unknown words, accents and another script: never <unk> in the output
    odd = translate(["Zoë sees the zebra in Zürich.", "東京は大きい", "The xylophone wants a kumquat."],
                    out / "model.pt", device="cpu")
    assert all("<unk>" not in t and t for t in odd)


def test_translate_keeps_blank_lines_and_answers_empty_input(smoke_run, tmp_path):
    _, out, _ = smoke_run
    f = tmp_path / "in.txt"
    f.write_text("They see the cat.\n\n   \nWe want a car.\n", encoding="utf-8")
    proc = _cli("translate", "--checkpoint", out / "model.pt", "--file", f, "--beam", 1)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    assert len(lines) == 5 and lines[1] == lines[2] == "" and lines[0] and lines[3] and lines[4] == ""
    proc = _cli("translate", "--checkpoint", out / "model.pt", "--file", "-", input="a\n\nb\n")
    assert proc.returncode == 0 and proc.stdout.split("\n")[1] == ""
    from seqcourse.nmt.translate import translate

    assert translate(["", "  "], out / "model.pt", device="cpu") == ["", ""]     # nothing invented
    _one_line_error(_cli("translate", "--checkpoint", out / "model.pt", "", "--heatmap", tmp_path / "h.png"),
                    1, "first sentence is empty")


def test_translate_warns_about_inputs_far_longer_than_training(smoke_run):
    _, out, _ = smoke_run
    long = " ".join(["the small black cat sees a dog"] * 30) + "."
    proc = _cli("translate", "--checkpoint", out / "model.pt", "They see.", long, "--beam", 2)
    assert proc.returncode == 0 and len(proc.stdout.strip().splitlines()) == 2
    assert re.fullmatch(r"warning: sentence 2 has \d+ tokens, the model was trained on sentences of at most 16: "
                        r"expect a poor translation \(translate one sentence at a time\)", proc.stderr.strip())
    from seqcourse.nmt.translate import LongInputWarning, translate

    with pytest.warns(LongInputWarning, match="at most 16"):
        translate(long, out / "model.pt", device="cpu")


@pytest.mark.parametrize("args, code, pattern", [
    (["--beam", "0"], 2, r"argument --beam: must be positive, got 0 \(see --help\)"),
    (["--beam", "-3"], 2, r"argument --beam: must be positive, got -3"),
    (["--beam", "two"], 2, r"argument --beam: expected a positive int, got 'two'"),
    (["--device", "tpu"], 1, r"device 'tpu'"),
    (["--device", "cuda:7"] if torch.cuda.device_count() < 8 else ["--device", "tpu"], 1, r"device '(cuda:7|tpu)'"),
    (["--file", "does-not-exist.txt"], 1, r"no file does-not-exist.txt to translate"),
    ([], 2, r"give sentences to translate, or --file"),
])
def test_translate_bad_options_are_one_line_errors(smoke_run, args, code, pattern):
    _, out, _ = smoke_run
    sentences = [] if not args or args[0] == "--file" else ["They see."]
    _one_line_error(_cli("translate", "--checkpoint", out / "model.pt", *sentences, *args), code, pattern)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without CUDA")
def test_cuda_without_a_gpu_is_a_one_line_error(smoke_run):
    _, out, _ = smoke_run
    _one_line_error(_cli("translate", "--checkpoint", out / "model.pt", "Hi.", "--device", "cuda"), 1,
                    r"device 'cuda': CUDA is not available here .*use --device cpu")


def test_bad_checkpoints_are_one_line_errors(smoke_run, tmp_path):
    _, out, _ = smoke_run
    good = (out / "model.pt").read_bytes()
    cases = {"truncated.pt": (good[: len(good) // 2], r"not a readable PyTorch checkpoint .*truncated or corrupt"),
             "empty.pt": (b"", r"is empty \(0 bytes\)"),
             "text.pt": (b"just some text\n", r"not a readable PyTorch checkpoint"),
             "sentences.txt": (b"I am hungry.\n", r"not a readable PyTorch checkpoint"),   # 'I' is a pickle opcode
             "missing.pt": (None, r"no checkpoint at .*missing.pt")}
    for name, (content, pattern) in cases.items():
        if content is not None:
            (tmp_path / name).write_bytes(content)
        _one_line_error(_cli("translate", "--checkpoint", tmp_path / name, "Hi."), 1, pattern)
    torch.save({"weights": torch.zeros(3)}, tmp_path / "other.pt")                 # a PyTorch file, not ours
    _one_line_error(_cli("translate", "--checkpoint", tmp_path / "other.pt", "Hi."), 1, "not a seqcourse.nmt checkpoint")
    _one_line_error(_cli("translate", "--checkpoint", out, "Hi."), 1, "is a folder")

    class Payload:                                   # a pickle that would run code when loaded without weights_only
        def __reduce__(self):
            return (os.system, ("echo pwned > " + shlex.quote(str(tmp_path / "pwned")),))

    torch.save({"model": {}, "config": {}, "x": Payload()}, tmp_path / "evil.pt")
    _one_line_error(_cli("translate", "--checkpoint", tmp_path / "evil.pt", "Hi."), 1,
                    "loading it could run code: refused")
    assert not (tmp_path / "pwned").exists()
    ck = torch.load(out / "model.pt", weights_only=True)                          # one weight changed
    ck["model"]["W_vocab.weight"][0, 0] += 1.0
    torch.save(ck, tmp_path / "tampered.pt")
    _one_line_error(_cli("translate", "--checkpoint", tmp_path / "tampered.pt", "Hi."), 1,
                    "is corrupt: its weights or tokenizers do not match the checksum")


def test_checkpoints_from_before_subwords_still_load(tmp_path):
    from seqcourse.nmt.train import load_model

    src_vocab, tgt_vocab = D.Vocab(D.SPECIALS + ["they", "see"]), D.Vocab(D.SPECIALS + ["ils", "voient"])
    set_seed(0)
    model = NMT(len(src_vocab), len(tgt_vocab), 8, 8, 0.0, att_scale=False)
    cfg = get_config("smoke", embed_size=8, hidden_size=8).to_dict()
    del cfg["att_scale"], cfg["tokenizer"]
    torch.save({"model": model.state_dict(), "optimizer": None, "state": {}, "config": cfg,
                "src_vocab": src_vocab.itos, "tgt_vocab": tgt_vocab.itos, "rng": torch.get_rng_state()},
               tmp_path / "v1.pt")
    loaded, src_tok, tgt_tok, c = load_model(tmp_path / "v1.pt")
    assert c.tokenizer == "word" and c.att_scale is False and src_tok.vocab == src_vocab
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), model.state_dict().values()))


@pytest.mark.parametrize("content, pattern", [
    ("Hello.\nGoodbye.\n", r"no usable sentence pairs in .*none of its 2 lines has the form"),
    ("Go.\tVa !\nHi.\tSalut.\nRun!\tCours !\n", r"the corpus has 3 usable pairs, which split into 3 training, "
                                                r"0 dev and 0 test pairs: .*use a larger corpus"),
    (b"\x89PNG\r\n\x1a\n" + bytes(range(256)), r"not (UTF-8 text|a text file)"),
])
def test_training_on_an_unusable_corpus_is_a_one_line_error(tmp_path, content, pattern):
    f = tmp_path / "corpus.txt"
    f.write_bytes(content if isinstance(content, bytes) else content.encode())
    _one_line_error(_cli("train", *SMOKE, "--data", f, "--out", tmp_path / "run"), 1, pattern)
    assert not (tmp_path / "run" / "checkpoint.pt").exists()


def test_training_bad_options_are_one_line_errors(toy_corpus, tmp_path):
    _one_line_error(_cli("train", *SMOKE, "--data", toy_corpus, "--device", "tpu"), 1, "device 'tpu'")
    _one_line_error(_cli("train", *SMOKE, "--data", toy_corpus, "--epochs", "0"), 2, "--epochs: must be positive")
    _one_line_error(_cli("train", *SMOKE, "--data", tmp_path / "nope.txt"), 1, "no parallel corpus at")


def _weights(path):
    return torch.load(path, weights_only=True)["model"]


def _same_weights(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def uninterrupted(toy_corpus, tmp_path_factory):
    """The reference run of the interruption tests: 4 epochs of the smoke model, uninterrupted."""
    out = tmp_path_factory.mktemp("uninterrupted")
    proc = _cli("train", *SMOKE, "--epochs", 4, "--data", toy_corpus, "--out", out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _start_and_wait_for_checkpoint(toy_corpus, out):
    proc = subprocess.Popen([sys.executable, "-m", "seqcourse.nmt.train", *SMOKE, "--epochs", "4", "--data",
                             str(toy_corpus), "--out", str(out)], env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not (out / "checkpoint.pt").exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    return proc


def test_resume_after_sigkill_is_bit_identical(toy_corpus, uninterrupted, tmp_path):
    proc = _start_and_wait_for_checkpoint(toy_corpus, tmp_path)
    proc.send_signal(signal.SIGKILL)                                  # no chance to save anything
    proc.communicate(timeout=60)
    step = torch.load(tmp_path / "checkpoint.pt", weights_only=True)["state"]["step"]
    resumed = _cli("train", *SMOKE, "--epochs", 4, "--data", toy_corpus, "--out", tmp_path, "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resumed from {tmp_path / 'checkpoint.pt'} at step {step}" in resumed.stdout
    assert _same_weights(_weights(tmp_path / "checkpoint.pt"), _weights(uninterrupted / "checkpoint.pt"))
    a, b = (json.loads((d / "metrics.json").read_text()) for d in (uninterrupted, tmp_path))
    assert a["steps"] == b["steps"] and a["test_bleu"] == b["test_bleu"]


def test_ctrl_c_saves_a_checkpoint_and_says_how_to_resume(toy_corpus, uninterrupted, tmp_path):
    proc = _start_and_wait_for_checkpoint(toy_corpus, tmp_path)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    m = re.fullmatch(r"interrupted at step (\d+) \(epoch \d, batch \d+ of \d+\); checkpoint saved in (.+); "
                     r"resume with: (python -m seqcourse\.nmt\.train .* --resume)", last)
    assert m, last
    assert torch.load(tmp_path / "checkpoint.pt", weights_only=True)["state"]["step"] == int(m.group(1))
    args = shlex.split(m.group(3))[3:]
    resumed = _cli("train", *args)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert _same_weights(_weights(tmp_path / "checkpoint.pt"), _weights(uninterrupted / "checkpoint.pt"))


def test_resume_refuses_a_changed_configuration(toy_corpus, uninterrupted, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(uninterrupted, run)
    base = (*SMOKE, "--data", toy_corpus, "--out", run)
    _one_line_error(_cli("train", *base, "--epochs", 4, "--resume", "--batch-size", 64, "--lr", 0.01), 1,
                    r"the configuration differs from the checkpoint's: batch_size 32 -> 64, lr 0.003 -> 0.01; "
                    r"resume with the same options, or add --force")
    _one_line_error(_cli("train", *base, "--epochs", 4), 1, r"already holds a training run: add --resume")
    _one_line_error(_cli("train", *base, "--epochs", 4, "--resume", "--tokenizer", "word", "--force"), 1,
                    r"cannot resume with another tokenizer")
    more = _cli("train", *base, "--epochs", 5, "--resume")             # more epochs: allowed, and said
    assert more.returncode == 0 and "resuming with epochs 4 -> 5" in more.stdout, more.stderr[-2000:]
    forced = _cli("train", *base, "--epochs", 5, "--resume", "--lr", 0.001, "--force")
    assert forced.returncode == 0 and "changed configuration (--force): lr 0.003 -> 0.001" in forced.stdout
    ck = run / "checkpoint.pt"
    ck.write_bytes(ck.read_bytes()[:1000])                             # a truncated checkpoint
    _one_line_error(_cli("train", *base, "--epochs", 5, "--resume"), 1, r"checkpoint.pt is not a readable PyTorch "
                    r"checkpoint .*truncated or corrupt")


def test_checkpoint_holds_every_random_state(uninterrupted):
    import numpy as np

    from seqcourse.nmt.train import rng_state, set_rng_state

    ck = torch.load(uninterrupted / "checkpoint.pt", weights_only=True)
    assert {"torch", "cuda", "python", "numpy"} <= set(ck["rng"])
    saved = rng_state()
    draws = (torch.rand(3), random.random(), np.random.rand())
    set_rng_state(saved)
    again = (torch.rand(3), random.random(), np.random.rand())
    assert torch.equal(draws[0], again[0]) and draws[1:] == again[1:]


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
