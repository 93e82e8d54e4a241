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

from .data import EOS, PAD, SOS


def _start(model, src, src_len):
    h, state = model.encode(src, src_len)                    # (B, Tx, 2H), (d_0, c_0)
    return h, model.project_keys(h), src != PAD, state        # h_proj (B, Tx, H), mask (B, Tx)


def _never_pad_or_sos(scores: torch.Tensor) -> torch.Tensor:
    """<pad> and <sos> are never outputs (an untrained model may still score them highly)."""
    scores = scores.clone()
    scores[:, [PAD, SOS]] = float("-inf")
    return scores


def default_max_len(src_len: torch.Tensor) -> int:
    return int(src_len.max()) * 2 + 10


@torch.no_grad()
def greedy_decode(model, src, src_len, max_len: int | None = None, return_attention: bool = False):
    """src (B, Tx), src_len (B,) -> list of B token-id lists (no <sos>/<eos>), and with
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
        y = _never_pad_or_sos(model.W_vocab(o)).argmax(dim=-1)   # (B,)
        y = y.masked_fill(done, PAD)
        out[:, t] = y
        alphas.append(alpha)
        done |= y == EOS
        if done.all():
            break
    out = out.tolist()
    hyps = [row[: row.index(EOS)] if EOS in row else row for row in out]      # tokens before <eos>
    if not return_attention:
        return hyps
    A = torch.stack(alphas, dim=1).float().cpu()             # (B, steps, Tx)
    return hyps, [A[b, : len(hyps[b]) + 1, : int(src_len[b])] for b in range(B)]


@torch.no_grad()
def beam_search(model, src, src_len, beam_size: int = 5, max_len: int | None = None, alpha: float = 1.0,
                n_best: int = 1):
    """Batched beam search. Returns, per sentence, a list of ``n_best`` (token ids, normalised score),
    best first. Token ids exclude <sos> and <eos>."""
    B, K = src.shape[0], beam_size
    max_len = max_len or default_max_len(src_len)
    h, h_proj, mask, (d, c) = _start(model, src, src_len)
    rep = lambda x: x.repeat_interleave(K, dim=0)             # (B, ...) -> (B*K, ...)
    h, h_proj, mask, d, c = rep(h), rep(h_proj), rep(mask), rep(d), rep(c)
    o = h.new_zeros(B * K, model.hidden_size)                 # (B*K, H)
    y = torch.full((B * K,), SOS, dtype=torch.long, device=src.device)
    scores = torch.full((B, K), float("-inf"), device=src.device)
    scores[:, 0] = 0.0                                        # one live hypothesis to start with
    tokens = torch.zeros(B, K, 0, dtype=torch.long, device=src.device)
    finished: list[list[tuple[list[int], float]]] = [[] for _ in range(B)]
    n_done = torch.zeros(B, dtype=torch.long, device=src.device)
    arange_k = torch.arange(K, device=src.device)
    for t in range(max_len):
        (d, c), o, _ = model.step(model.tgt_embed(y), o, (d, c), h, h_proj, mask)
        logp = _never_pad_or_sos(torch.log_softmax(model.W_vocab(o).float(), dim=-1))   # (B*K, V)
        V = logp.shape[-1]
        cand = (scores.unsqueeze(2) + logp.view(B, K, V)).view(B, K * V)    # (B, K*V)
        top, idx = cand.topk(K, dim=1)                                      # (B, K), best first
        beam, tok = idx // V, idx % V                                       # (B, K)
        # only the best K - (finished so far) candidates of a sentence survive
        alive = (arange_k.unsqueeze(0) < (K - n_done).unsqueeze(1)) & torch.isfinite(top)
        is_eos = (tok == EOS) & alive
        new_tokens = torch.cat([tokens.gather(1, beam.unsqueeze(2).expand(-1, -1, tokens.shape[2])),
                                tok.unsqueeze(2)], dim=2)                   # (B, K, t+1)
        if is_eos.any():
            for b, k in is_eos.nonzero().tolist():
                finished[b].append((new_tokens[b, k, :-1].tolist(), top[b, k].item() / (t + 1) ** alpha))
            n_done += is_eos.sum(dim=1)
        scores = top.masked_fill(~alive | is_eos, float("-inf"))
        tokens = new_tokens
        if bool((n_done >= K).all()):
            break
        flat = (beam + torch.arange(B, device=src.device).unsqueeze(1) * K).view(-1)   # (B*K,) rows to keep
        d, c, o = d[flat], c[flat], o[flat]
        y = tok.view(-1)
    else:  # max_len reached: the live hypotheses are finished as they are
        for b in range(B):
            for k in range(K):
                if torch.isfinite(scores[b, k]):
                    finished[b].append((tokens[b, k].tolist(), scores[b, k].item() / tokens.shape[2] ** alpha))
    return [sorted(f, key=lambda x: -x[1])[:n_best] for f in finished]


def translate_ids(model, src, src_len, beam_size: int = 5, alpha: float = 1.0, max_len: int | None = None):
    """Best hypothesis per sentence: greedy for ``beam_size`` 1, beam search otherwise."""
    if beam_size <= 1:
        return greedy_decode(model, src, src_len, max_len)
    return [hyps[0][0] for hyps in beam_search(model, src, src_len, beam_size, max_len, alpha)]
