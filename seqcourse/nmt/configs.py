"""Training configurations. ``gpu`` is the capstone, ``laptop`` a useful CPU model in tens of minutes,
``smoke`` a CPU run of seconds that the tests use (it really trains, on a few thousand short pairs)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace


@dataclass
class Config:
    # data
    corpus: str = "tatoeba"          # "tatoeba" (en-fr) or "multi30k"
    src_lang: str = "en"             # Multi30k only (Tatoeba is always English -> French)
    tgt_lang: str = "fr"
    lowercase: bool = False          # False: BLEU is cased, as sacreBLEU reports by default
    tokenizer: str = "sentencepiece"  # subwords learned on the training split; "word": a word vocabulary (Vocab)
    max_vocab: int = 30000           # pieces (sentencepiece) or words (word) per language, specials included
    min_freq: int = 2                # word tokenizer only: rarer words become <unk>
    max_len: int = 30                # training pairs with a side longer than this many tokens are dropped
    train_max: int | None = None     # use only the first N training pairs (after the split)
    dev_max: int = 1000              # dev sentences for the per-epoch BLEU
    test_max: int | None = None      # test sentences for the final BLEU (None: all)
    # model
    embed_size: int = 256
    hidden_size: int = 512
    dropout: float = 0.3
    att_scale: bool = True           # attention energies divided by sqrt(H); False: CS224N's unscaled form
    # optimisation
    batch_size: int = 128
    lr: float = 1e-3
    lr_decay: float = 0.8            # learning rate multiplied by this after every epoch
    clip: float = 5.0
    precision: str = "auto"          # "auto": bf16 autocast on CUDA where it works; "bf16"; "fp32"
    label_smoothing: float = 0.1
    epochs: int = 12
    minutes: float | None = None     # stop training after this much training time (then evaluate)
    evals_per_epoch: int = 1         # dev loss and BLEU this many times per epoch
    log_every: int = 50
    checkpoint_every: int = 500
    # decoding
    beam_size: int = 5
    alpha: float = 1.0               # length normalisation: score / length ** alpha
    seed: int = 0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Config":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


CONFIGS = {
    # the capstone: one GPU, about 10 minutes
    "gpu": Config(minutes=10, evals_per_epoch=2),
    # the same model on Multi30k German -> English (bentrevett/pytorch-seq2seq reports 28.3 test BLEU on
    # lower-cased word tokens, with <unk>; this configuration lower-cases and uses words too, so that its BLEU
    # compares with that number like for like)
    "gpu-multi30k": Config(corpus="multi30k", src_lang="de", tgt_lang="en", lowercase=True, tokenizer="word",
                           min_freq=2, max_len=40, minutes=10, epochs=20, dev_max=1014),
    # a laptop CPU (two cores): a small model, 4,000 subwords a language (the output layer is most of the
    # arithmetic, so a small vocabulary buys a wider model), trained for at most 30 minutes
    "laptop": Config(embed_size=128, hidden_size=192, dropout=0.25, max_vocab=4000, max_len=25, batch_size=64,
                     lr=2e-3, lr_decay=0.8, label_smoothing=0.1, epochs=9, minutes=30, evals_per_epoch=1,
                     dev_max=500, log_every=25, checkpoint_every=200, beam_size=5),
    # the laptop model as it was before subwords (a word vocabulary, Vocab): the comparison of chapter 9
    "laptop-word": Config(tokenizer="word", embed_size=96, hidden_size=128, dropout=0.1, max_vocab=8000, max_len=12,
                          batch_size=64, lr=2e-3, lr_decay=0.8, label_smoothing=0.0, epochs=8, evals_per_epoch=4,
                          dev_max=500, log_every=25, checkpoint_every=200, beam_size=4),
    # Multi30k German -> English on a CPU: the laptop model, a little wider, regularised for 29,000 pairs;
    # words, like gpu-multi30k and bentrevett's model
    "laptop-multi30k": Config(corpus="multi30k", src_lang="de", tgt_lang="en", lowercase=True, tokenizer="word",
                              max_len=40,
                              embed_size=128, hidden_size=192, dropout=0.3, max_vocab=8000, batch_size=64,
                              lr=2e-3, lr_decay=0.85, label_smoothing=0.0, epochs=10, evals_per_epoch=1,
                              dev_max=1014, log_every=25, checkpoint_every=200, beam_size=5),
    # the tests: seconds on a CPU, on 2000 of the shortest pairs; it really trains (the loss goes down)
    "smoke": Config(embed_size=32, hidden_size=48, dropout=0.0, min_freq=1, max_vocab=1000, max_len=8, train_max=2000,
                    dev_max=60, test_max=60, batch_size=32, lr=3e-3, lr_decay=1.0, label_smoothing=0.0,
                    epochs=3, log_every=10, checkpoint_every=40, beam_size=3),
}


def get_config(name: str, **overrides) -> Config:
    if name not in CONFIGS:
        raise ValueError(f"unknown config {name!r}; choose one of {sorted(CONFIGS)}")
    return replace(CONFIGS[name], **{k: v for k, v in overrides.items() if v is not None})
