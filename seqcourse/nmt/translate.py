"""Translate with a trained checkpoint.

    python -m seqcourse.nmt.translate --checkpoint runs/nmt-laptop/model.pt "I am hungry." "Where is the station?"
    python -m seqcourse.nmt.translate --checkpoint model.pt --file sentences.txt --beam 5   # one output line per input line
    python -m seqcourse.nmt.translate --checkpoint model.pt "She reads a book." --heatmap attention.png

From Python: ``translate(["I am hungry."], "model.pt")``. An empty line translates to an empty line; a
sentence far longer than the training sentences is translated with a warning (``LongInputWarning``).
"""
from __future__ import annotations

import sys
import warnings

import torch

from .data import SOS, pad
from .decode import translate_ids
from .errors import NMTError
from .train import ArgumentParser, banned_tokens, load_model, positive, resolve_device, run_cli, translate_sentences

_LOADED: dict = {}
LONG_FACTOR = 2      # warn about inputs of more than LONG_FACTOR * max_len tokens


class LongInputWarning(UserWarning):
    """An input much longer than any training sentence: the translation will probably be poor."""


def _load(checkpoint, device):
    key = (str(checkpoint), str(device))
    if key not in _LOADED:
        _LOADED.clear()
        _LOADED[key] = load_model(checkpoint, device)
    return _LOADED[key]


def _warn_long(sentences, src_tok, cfg):
    limit = LONG_FACTOR * cfg.max_len
    for i, s in enumerate(sentences):
        n = len(src_tok.encode(s))
        if n > limit:
            where = f"sentence {i + 1}" if len(sentences) > 1 else "the sentence"
            warnings.warn(f"{where} has {n} tokens, the model was trained on sentences of at most {cfg.max_len}: "
                          "expect a poor translation (translate one sentence at a time)", LongInputWarning,
                          stacklevel=3)


def translate(sentences, checkpoint, beam_size: int | None = None, device=None) -> list[str]:
    """Translate a sentence or a list of sentences with the model in ``checkpoint`` (a ``model.pt``).
    Empty sentences give empty strings."""
    single = isinstance(sentences, str)
    sentences = [sentences] if single else list(sentences)
    if beam_size is not None and beam_size < 1:
        raise NMTError(f"the beam size must be 1 (greedy) or more, not {beam_size}")
    device = resolve_device(device)
    model, src_tok, tgt_tok, cfg = _load(checkpoint, device)
    _warn_long(sentences, src_tok, cfg)
    out = translate_sentences(model, sentences, src_tok, tgt_tok, beam_size or cfg.beam_size, cfg.alpha,
                              device=device, precision=cfg.precision)
    return out[0] if single else out


@torch.no_grad()
def attention(sentence: str, checkpoint, beam_size: int | None = None, device=None):
    """Translate one sentence (as :func:`translate` does) and return its attention:
    ``(source tokens, output tokens, weights)``, weights of shape ``(len(output tokens), len(source tokens))``.

    The tokens are the model's (subword pieces; ``▁`` starts a word). The last output token is ``<eos>``.
    The weights are those of the decoder reading the chosen translation (teacher forcing on the output), so
    they belong to the printed translation, beam search or not.
    """
    device = resolve_device(device)
    model, src_tok, tgt_tok, cfg = _load(checkpoint, device)
    ids = src_tok.encode(sentence)
    if not ids:
        raise NMTError("the sentence is empty: there is no attention to show")
    _warn_long([sentence], src_tok, cfg)
    src = pad([ids]).to(device)                                       # (1, Tx)
    src_len = torch.tensor([len(ids)])                                # (1,), on the CPU
    best = translate_ids(model, src, src_len, beam_size or cfg.beam_size, cfg.alpha, banned=banned_tokens(tgt_tok))[0]
    tgt_in = torch.tensor([[SOS] + best], device=device)             # (1, L + 1): <sos> y_1 .. y_L
    _, alphas = model(src, src_len, tgt_in, return_attention=True)   # (1, L + 1, Tx)
    return src_tok.id_tokens(ids), tgt_tok.id_tokens(best) + ["<eos>"], alphas[0].float().cpu()


def save_heatmap(sentence: str, checkpoint, path, beam_size: int | None = None, device=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from seqcourse.plot import attention_heatmap

    src, out, w = attention(sentence, checkpoint, beam_size, device)
    title = translate(sentence, checkpoint, beam_size, device)
    ax = attention_heatmap(w, src, out, title=title)
    ax.figure.tight_layout()
    try:
        ax.figure.savefig(path, dpi=120)
    except OSError as exc:
        raise NMTError(f"cannot write the heatmap to {path}: {exc.strerror or exc}") from None
    finally:
        plt.close(ax.figure)
    return path


def read_lines(path: str) -> list[str]:
    """The lines of ``path`` ('-': standard input), stripped; blank lines are kept (as empty strings)."""
    try:
        if path == "-":
            return [line.strip() for line in sys.stdin]
        with open(path, encoding="utf-8") as f:
            return [line.strip() for line in f]
    except FileNotFoundError:
        raise NMTError(f"no file {path} to translate: give a text file with one sentence a line") from None
    except IsADirectoryError:
        raise NMTError(f"{path} is a folder: give a text file with one sentence a line") from None
    except UnicodeDecodeError as exc:
        raise NMTError(f"{path} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}): "
                       "give a UTF-8 text file with one sentence a line") from None


def main(argv=None):
    p = ArgumentParser(description="Translate sentences with a trained seqcourse.nmt checkpoint.")
    p.add_argument("sentences", nargs="*", help="sentences to translate")
    p.add_argument("--checkpoint", required=True, help="model.pt written by seqcourse.nmt.train")
    p.add_argument("--file", help="a file with one sentence a line ('-' for standard input); one output line "
                                  "per input line, an empty line for an empty one")
    p.add_argument("--beam", type=positive(int), help="beam size (default: the checkpoint's configuration; 1 = greedy)")
    p.add_argument("--heatmap", help="save the attention heatmap of the first sentence to this PNG")
    p.add_argument("--device", help="cpu, cuda, cuda:N or mps (default: the best available)")
    a = p.parse_args(argv)
    sentences = list(a.sentences)
    if a.file:
        sentences += read_lines(a.file)
    if not sentences:
        p.error("give sentences to translate, or --file")
    device = resolve_device(a.device)
    _load(a.checkpoint, device)                       # a bad checkpoint fails here, before any output
    if a.heatmap and not sentences[0].strip():
        raise NMTError("the first sentence is empty: there is no attention to draw for --heatmap")
    with warnings.catch_warnings():
        warnings.simplefilter("always", LongInputWarning)
        warnings.showwarning = lambda message, *args, **kw: print(f"warning: {message}", file=sys.stderr)
        for line in translate(sentences, a.checkpoint, a.beam, device):
            print(line)
        if a.heatmap:
            save_heatmap(sentences[0], a.checkpoint, a.heatmap, a.beam, device)
            print(f"attention heatmap written to {a.heatmap}", file=sys.stderr)


if __name__ == "__main__":
    run_cli(main)
