"""Decoding: greedy and beam search, both batched over sentences.

Beam search keeps, for every sentence, at most ``beam_size`` hypotheses. At each step every live hypothesis
is extended by every token; the best ``beam_size - (finished so far)`` candidates of the sentence survive.
A survivor that ends in ``<eos>`` is finished, with the length-normalised score
``sum(log p) / length ** alpha`` (length counts the ``<eos>``); a sentence is done when it has
``beam_size`` finished hypotheses, and at ``max_len`` the live ones are finished as they are.
With ``beam_size=1`` this is exactly greedy decoding.
"""
from __future__ import annotations

import torch

from .data import EOS, PAD, SOS, UNK


def _start(model, src, src_len):
    h, state = model.encode(src, src_len)                    # (B, Tx, 2H), (d_0, c_0)
    h_proj = model.project_keys(h)                            # (B, Tx, H)
    return h.to(h_proj.dtype), h_proj, src != PAD, state      # h in bf16 under autocast, mask (B, Tx)


NEVER = (PAD, SOS, UNK)


def _ban(scores: torch.Tensor, banned=NEVER) -> torch.Tensor:
    """``<pad>``, ``<sos>`` and ``<unk>`` are never outputs (an untrained model may still score them highly;
    a subword model never needs ``<unk>``). Word-level models that should be able to say ``<unk>`` pass
    ``banned=(PAD, SOS)``."""
    scores = scores.clone()
    scores[:, list(banned)] = float("-inf")
    return scores


def default_max_len(src_len: torch.Tensor) -> int:
    """Twice the longest source, plus 10. ``src_len`` lives on the CPU (as ``pack_padded_sequence`` wants it),
    so this costs no device synchronisation."""
    return int(src_len.max()) * 2 + 10


# How often (in decoding steps) the loops ask the device whether every sentence is finished. Each question
# is a host-device synchronisation (the CPU waits for the GPU to catch up), so it is not asked every step.
CHECK_EVERY = 4


@torch.no_grad()
def greedy_decode(model, src, src_len, max_len: int | None = None, return_attention: bool = False,
                  banned=NEVER):
    """src (B, Tx), src_len (B,) on the CPU -> list of B token-id lists (no <sos>/<eos>), and with
    ``return_attention`` a list of (len+1, Tx_b) attention matrices (the last row is the <eos> step)."""
    B = src.shape[0]
    max_len = max_len or default_max_len(src_len)
    h, h_proj, mask, state = _start(model, src, src_len)
    o = h.new_zeros(B, model.hidden_size)                     # (B, H)
    y = torch.full((B,), SOS, dtype=torch.long, device=src.device)
    out = torch.full((B, max_len), PAD, dtype=torch.long, device=src.device)
    alphas = []
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    for t in range(max_len):
        state, o, alpha = model.step(model.tgt_embed(y), o, state, h, h_proj, mask)
        y = _ban(model.W_vocab(o), banned).argmax(dim=-1)    # (B,)
        y = y.masked_fill(done, PAD)
        out[:, t] = y
        alphas.append(alpha)
        done |= y == EOS
        if (t + 1) % CHECK_EVERY == 0 and bool(done.all()):  # a synchronisation every CHECK_EVERY steps
            break
    out = out.tolist()
    hyps = [row[: row.index(EOS)] if EOS in row else [i for i in row if i != PAD] for row in out]
    if not return_attention:
        return hyps
    A = torch.stack(alphas, dim=1).float().cpu()             # (B, steps, Tx)
    return hyps, [A[b, : len(hyps[b]) + 1, : int(src_len[b])] for b in range(B)]


@torch.no_grad()
def beam_search(model, src, src_len, beam_size: int = 5, max_len: int | None = None, alpha: float = 1.0,
                n_best: int = 1, banned=NEVER):
    """Batched beam search. Returns, per sentence, a list of ``n_best`` (token ids, normalised score),
    best first. Token ids exclude <sos> and <eos>.

    Everything stays on the device until the end: finished hypotheses go into a tensor of ``K`` slots per
    sentence (slot ``n_done + rank``), so a decoding step needs no synchronisation with the host; whether all
    sentences are done is asked every ``CHECK_EVERY`` steps only.
    """
    B, K = src.shape[0], beam_size
    dev = src.device
    max_len = max_len or default_max_len(src_len)
    h, h_proj, mask, (d, c) = _start(model, src, src_len)
    rep = lambda x: x.repeat_interleave(K, dim=0)             # (B, ...) -> (B*K, ...)
    h, h_proj, mask, d, c = rep(h), rep(h_proj), rep(mask), rep(d), rep(c)
    o = h.new_zeros(B * K, model.hidden_size)                 # (B*K, H)
    y = torch.full((B * K,), SOS, dtype=torch.long, device=dev)
    scores = torch.full((B, K), float("-inf"), device=dev)
    scores[:, 0] = 0.0                                        # one live hypothesis to start with
    tokens = torch.zeros(B, K, 0, dtype=torch.long, device=dev)
    # finished hypotheses: K slots per sentence and one spare slot (index K) that takes the writes of the rest
    fin_tokens = torch.full((B, K + 1, max_len), PAD, dtype=torch.long, device=dev)
    fin_scores = torch.full((B, K + 1), float("-inf"), device=dev)
    fin_len = torch.zeros(B, K + 1, dtype=torch.long, device=dev)
    n_done = torch.zeros(B, dtype=torch.long, device=dev)
    arange_k = torch.arange(K, device=dev)
    rows = (torch.arange(B, device=dev) * K).unsqueeze(1)    # (B, 1)

    def finish(which, toks, score, length: int):
        """Put the hypotheses where ``which`` (B, K) is True into slots n_done, n_done + 1, ... of their sentence."""
        slot = torch.where(which, n_done.unsqueeze(1) + which.long().cumsum(1) - 1, K)     # (B, K)
        fin_scores.scatter_(1, slot, score)
        fin_len.scatter_(1, slot, length)
        L = toks.shape[2]
        fin_tokens[:, :, :L].scatter_(1, slot.unsqueeze(2).expand(-1, -1, L), toks)
        n_done.add_(which.sum(dim=1))

    for t in range(max_len):
        (d, c), o, _ = model.step(model.tgt_embed(y), o, (d, c), h, h_proj, mask)
        logp = _ban(torch.log_softmax(model.W_vocab(o).float(), dim=-1), banned)    # (B*K, V)
        V = logp.shape[-1]
        cand = (scores.unsqueeze(2) + logp.view(B, K, V)).view(B, K * V)    # (B, K*V)
        top, idx = cand.topk(K, dim=1)                                      # (B, K), best first
        beam, tok = idx // V, idx % V                                       # (B, K)
        # only the best K - (finished so far) candidates of a sentence survive
        alive = (arange_k.unsqueeze(0) < (K - n_done).unsqueeze(1)) & torch.isfinite(top)
        is_eos = (tok == EOS) & alive
        tokens = torch.cat([tokens.gather(1, beam.unsqueeze(2).expand(-1, -1, tokens.shape[2])),
                            tok.unsqueeze(2)], dim=2)                       # (B, K, t+1)
        finish(is_eos, tokens[:, :, :-1], top / (t + 1) ** alpha, t)
        scores = top.masked_fill(~alive | is_eos, float("-inf"))
        if (t + 1) % CHECK_EVERY == 0 and bool((n_done >= K).all()):      # a synchronisation every few steps
            break
        flat = (beam + rows).view(-1)                                       # (B*K,) rows to keep
        d, c, o = d[flat], c[flat], o[flat]
        y = tok.view(-1)
    else:  # max_len reached: the live hypotheses are finished as they are
        live = torch.isfinite(scores)
        finish(live, tokens, scores / tokens.shape[2] ** alpha, tokens.shape[2])
    order = fin_scores[:, :K].sort(dim=1, descending=True, stable=True).indices[:, :n_best]   # (B, n_best)
    best_scores = fin_scores.gather(1, order).tolist()                      # the one synchronisation at the end
    best_len = fin_len.gather(1, order).tolist()
    best_tokens = fin_tokens.gather(1, order.unsqueeze(2).expand(-1, -1, max_len)).tolist()
    return [[(best_tokens[b][j][: best_len[b][j]], best_scores[b][j]) for j in range(order.shape[1])
             if best_scores[b][j] > float("-inf")] for b in range(B)]


def translate_ids(model, src, src_len, beam_size: int = 5, alpha: float = 1.0, max_len: int | None = None,
                  banned=NEVER):
    """Best hypothesis per sentence: greedy for ``beam_size`` 1, beam search otherwise."""
    if beam_size <= 1:
        return greedy_decode(model, src, src_len, max_len, banned=banned)
    return [hyps[0][0] for hyps in beam_search(model, src, src_len, beam_size, max_len, alpha, banned=banned)]
