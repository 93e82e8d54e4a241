"""Translate with a trained checkpoint.

    python -m seqcourse.nmt.translate --checkpoint runs/nmt-laptop/model.pt "I am hungry." "Where is the station?"
    python -m seqcourse.nmt.translate --checkpoint model.pt --file sentences.txt --beam 5
    python -m seqcourse.nmt.translate --checkpoint model.pt "She reads a book." --heatmap attention.png

From Python: ``translate(["I am hungry."], "model.pt")``.
"""
from __future__ import annotations

import argparse
import sys

import torch

from seqcourse import get_device

from .data import SOS, detokenize, pad, tokenize
from .decode import translate_ids
from .train import load_model, translate_sentences

_LOADED: dict = {}


def _load(checkpoint, device):
    key = (str(checkpoint), str(device))
    if key not in _LOADED:
        _LOADED.clear()
        _LOADED[key] = load_model(checkpoint, device)
    return _LOADED[key]


def translate(sentences, checkpoint, beam_size: int | None = None, device=None) -> list[str]:
    """Translate a sentence or a list of sentences with the model in ``checkpoint`` (a ``model.pt``)."""
    single = isinstance(sentences, str)
    device = torch.device(device) if device else get_device()
    model, src_vocab, tgt_vocab, cfg = _load(checkpoint, device)
    out = translate_sentences(model, [sentences] if single else list(sentences), src_vocab, tgt_vocab,
                              cfg.lowercase, beam_size or cfg.beam_size, cfg.alpha, device=device,
                              precision=cfg.precision)
    return out[0] if single else out


@torch.no_grad()
def attention(sentence: str, checkpoint, beam_size: int | None = None, device=None):
    """Translate one sentence (as :func:`translate` does) and return its attention:
    ``(source tokens, output tokens, weights)``, weights of shape ``(len(output tokens), len(source tokens))``.

    The last output token is ``<eos>``. The weights are those of the decoder reading the chosen translation
    (teacher forcing on the output), so they belong to the printed translation, beam search or not.
    """
    device = torch.device(device) if device else get_device()
    model, src_vocab, tgt_vocab, cfg = _load(checkpoint, device)
    tokens = tokenize(sentence, cfg.lowercase)
    src = pad([src_vocab.encode(tokens)]).to(device)                  # (1, Tx)
    src_len = torch.tensor([len(tokens)])
    best = translate_ids(model, src, src_len, beam_size or cfg.beam_size, cfg.alpha)[0]
    tgt_in = torch.tensor([[SOS] + best], device=device)             # (1, L + 1): <sos> y_1 .. y_L
    _, alphas = model(src, src_len, tgt_in, return_attention=True)   # (1, L + 1, Tx)
    return tokens, tgt_vocab.decode(best) + ["<eos>"], alphas[0].float().cpu()


def save_heatmap(sentence: str, checkpoint, path, beam_size: int | None = None, device=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from seqcourse.plot import attention_heatmap

    src, out, w = attention(sentence, checkpoint, beam_size, device)
    ax = attention_heatmap(w, src, out, title=detokenize(out[:-1]))
    ax.figure.tight_layout()
    ax.figure.savefig(path, dpi=120)
    plt.close(ax.figure)
    return path


def main(argv=None):
    p = argparse.ArgumentParser(description="Translate sentences with a trained seqcourse.nmt checkpoint.")
    p.add_argument("sentences", nargs="*", help="sentences to translate")
    p.add_argument("--checkpoint", required=True, help="model.pt written by seqcourse.nmt.train")
    p.add_argument("--file", help="a file with one sentence a line ('-' for standard input)")
    p.add_argument("--beam", type=int, help="beam size (default: the checkpoint's configuration; 1 = greedy)")
    p.add_argument("--heatmap", help="save the attention heatmap of the first sentence to this PNG")
    p.add_argument("--device")
    a = p.parse_args(argv)
    sentences = list(a.sentences)
    if a.file:
        f = sys.stdin if a.file == "-" else open(a.file, encoding="utf-8")
        sentences += [line.strip() for line in f if line.strip()]
    if not sentences:
        p.error("give sentences or --file")
    for line in translate(sentences, a.checkpoint, a.beam, a.device):
        print(line)
    if a.heatmap:
        save_heatmap(sentences[0], a.checkpoint, a.heatmap, a.beam, a.device)
        print(f"attention heatmap written to {a.heatmap}", file=sys.stderr)


if __name__ == "__main__":
    try:
        main()
    except FileNotFoundError as exc:  # a missing corpus or checkpoint: say what to do, no traceback
        raise SystemExit(f"error: {exc}") from None
