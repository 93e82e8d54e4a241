"""A tiny English-French parallel set generated from a small grammar: no download, seconds to learn.

It has what makes translation more than a word-for-word lookup, in miniature: agreement (French verbs
follow the subject, adjectives follow the noun's gender and number), reordering (colour adjectives come
after the noun in French, "small" before it), a one-to-two word ("look for" -> "cherche") and different
lengths. Sentences are lower case and space-separated, so tokenising is ``str.split``.

>>> toy_pairs(2, seed=0)   # doctest: +SKIP
[('we see the small cats .', 'nous voyons les petits chats .'), ...]
"""
from __future__ import annotations

import itertools
import random

SUBJECTS = [("i", "je"), ("you", "tu"), ("he", "il"), ("she", "elle"), ("we", "nous"), ("they", "ils")]
# English verb, its 3rd-person-singular form, French forms for je, tu, il, elle, nous, ils
VERBS = [("see", "sees", ["vois", "vois", "voit", "voit", "voyons", "voient"]),
         ("want", "wants", ["veux", "veux", "veut", "veut", "voulons", "veulent"]),
         ("take", "takes", ["prends", "prends", "prend", "prend", "prenons", "prennent"]),
         ("look for", "looks for", ["cherche", "cherches", "cherche", "cherche", "cherchons", "cherchent"])]
NOUNS = [("cat", "chat", "m"), ("dog", "chien", "m"), ("book", "livre", "m"), ("bike", "vélo", "m"),
         ("house", "maison", "f"), ("car", "voiture", "f"), ("table", "table", "f"), ("flower", "fleur", "f")]
COLOURS = [("black", "noir", "noire"), ("white", "blanc", "blanche"), ("green", "vert", "verte"),
           ("red", "rouge", "rouge")]
DETERMINERS = {("the", False): {"m": "le", "f": "la"}, ("a", False): {"m": "un", "f": "une"},
               ("the", True): {"m": "les", "f": "les"}, ("some", True): {"m": "des", "f": "des"}}


def _pair(subj, verb, det, plural, noun, small, colour):
    (s_en, s_fr), person = SUBJECTS[subj], subj
    v_en = VERBS[verb][1] if person in (2, 3) else VERBS[verb][0]
    v_fr = VERBS[verb][2][person]
    n_en, n_fr, gender = NOUNS[noun]
    en = [s_en, v_en, det] + (["small"] if small else []) + ([COLOURS[colour][0]] if colour is not None else [])
    en += [n_en + ("s" if plural else ""), "."]
    fr = [s_fr, v_fr, DETERMINERS[(det, plural)][gender]]
    if small:
        fr.append(("petit" if gender == "m" else "petite") + ("s" if plural else ""))
    fr.append(n_fr + ("s" if plural else ""))
    if colour is not None:
        c = COLOURS[colour][1 if gender == "m" else 2]
        fr.append(c + ("s" if plural else ""))
    fr.append(".")
    return " ".join(en), " ".join(fr)


def all_toy_pairs() -> list[tuple[str, str]]:
    """Every sentence of the grammar (6 subjects x 4 verbs x 4 determiners x 8 nouns x 2 x 5 = 7680 pairs)."""
    dets = [("the", False), ("a", False), ("the", True), ("some", True)]
    combos = itertools.product(range(len(SUBJECTS)), range(len(VERBS)), dets, range(len(NOUNS)), (False, True),
                               [None] + list(range(len(COLOURS))))
    return [_pair(s, v, d, pl, n, sm, c) for s, v, (d, pl), n, sm, c in combos]


def toy_pairs(n: int, seed: int = 0, exclude: set | None = None) -> list[tuple[str, str]]:
    """``n`` distinct pairs in a random (seeded) order, skipping English sentences in ``exclude``."""
    pairs = all_toy_pairs()
    random.Random(seed).shuffle(pairs)
    exclude = exclude or set()
    return [p for p in pairs if p[0] not in exclude][:n]


def toy_splits(n_train: int = 2000, n_test: int = 200, seed: int = 0):
    """Disjoint train and test pairs (no English sentence of the test set is seen in training)."""
    pairs = all_toy_pairs()
    random.Random(seed).shuffle(pairs)
    return pairs[:n_train], pairs[n_train:n_train + n_test]
