"""Scratch checks of a student trial's cases (phase 2 of a trial): each case applied to the reference cell, the setup and
reference cells run in plain Python (no test cell read or run), small inputs of distinct sizes; a mistake must run and
differ from the reference (or raise), a variant must give the reference's values. One file for every trial since 22n:
each trial adds the checks the generic ones cannot see (gradients, tokens, ...) at the end of CHECKS.

Run from the repository root:

    python benchmarks/trial_scratch.py student_trial_22q [ch01 ...]      # the cases of benchmarks/student_trial_22q.py
    python benchmarks/trial_scratch.py student_trial_22q --apply          # only: does every case apply to its cell?
"""
import copy
import importlib
import sys
import traceback

sys.path.insert(0, 'benchmarks'); sys.path.insert(0, 'tests')
import torch

import nbgrader_cli
import student_trial as st

t = None          # the trial's module (its cases: t.M, t.OK), set by main()

def refs(assignment):
    (src_path,) = nbgrader_cli.source_notebooks(assignment)
    nb = nbgrader_cli.load(src_path)
    setup = None; cells = {}
    for c in nb.cells:
        m = nbgrader_cli.nbgrader_meta(c)
        if m.get('grade_id', '').endswith('_setup'):
            setup = c.source
        if nbgrader_cli.is_solution_cell(c):
            cells[m['grade_id']] = nbgrader_cli.student_code(c.source)
    return setup, cells

def namespace(assignment, override=None):
    setup, cells = refs(assignment)
    setup = "\n".join((l[:len(l) - len(l.lstrip())] + "pass" if ("%pip" in l or l.lstrip().startswith("%")) else l) for l in setup.splitlines())
    ns = {}
    exec(setup, ns)
    for gid, code in cells.items():
        if override and gid == override[0]:
            code = override[1]
        exec(code, ns)
    return ns

def case_ns(case):
    setup, cells = refs(case.assignment)
    code = st.apply(case, cells[case.cell])
    return namespace(case.assignment, (case.cell, code)), code

torch.manual_seed(0)

def run(fn):
    try:
        return ("ok", fn())
    except Exception as e:
        return ("raise", f"{type(e).__name__}: {str(e)[:150]}")

def close(a, b):
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and torch.allclose(a, b, atol=1e-5, equal_nan=False)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) == type(b) and len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    return type(a) == type(b) and a == b

CHECKS = {}
def check(cell):
    def deco(f):
        CHECKS[cell] = f; return f
    return deco

B, T, D, H, C = 3, 5, 4, 6, 7
def seed(): torch.manual_seed(1)

# ---- ch01
@check("ch01_many_to_many_sync")
def _(ns):
    seed(); m = ns["ManyToManySync"](D, H, C); seed(); x = torch.randn(B, T, D); return m(x)
@check("ch01_one_to_many")
def _(ns):
    seed(); m = ns["OneToMany"](D, H, C); x = torch.randn(B, D); return m(x, 4)
@check("ch01_many_to_many_async")
def _(ns):
    seed(); m = ns["ManyToManyAsync"](D, 3, H, C); torch.manual_seed(2); return m(torch.randn(B, T, D), torch.randn(B, 2, 3))
@check("ch01_many_to_one")
def _(ns):
    seed(); m = ns["ManyToOne"](D, H, C); return m(torch.randn(B, T, D))
@check("ch01_train_step")
def _(ns):
    seed(); m = ns["ManyToOne"](D, H, 2); opt = torch.optim.SGD(m.parameters(), lr=0.1)
    x = torch.randn(B, T, D); y = torch.tensor([0, 1, 1])
    l1 = ns["train_step"](m, opt, x, y); l2 = ns["train_step"](m, opt, x, y)
    seed(); m2 = ns["ManyToOne"](D, H, 2); opt2 = torch.optim.SGD(m2.parameters(), lr=0.1)
    l3 = ns["train_step"](m2, opt2, x * 30, y); l4 = ns["train_step"](m2, opt2, x * 30, y)
    return [l1, round(l2, 6), round(l3, 6), round(l4, 6)]
@check("ch01_fit")
def _(ns):
    seed(); m = ns["ManyToOne"](D, H, 2); x = torch.randn(20, T, D); y = torch.randint(0, 2, (20,))
    torch.manual_seed(123); losses = ns["fit"](m, x, y, 3, batch_size=4)
    after = torch.rand(1).item()
    return [round(l, 6) for l in losses] + [round(after, 6)]

# ---- ch02
def rnnw():
    seed(); return torch.randn(H, D) * 0.5, torch.randn(H, H) * 0.5, torch.randn(H) * 0.1
@check("ch02_rnn_cell")
def _(ns):
    W_hx, W_hh, b = rnnw(); hp = torch.randn(B, H); h0 = hp.clone()
    return ns["rnn_cell"](torch.randn(B, D), hp, W_hx, W_hh, b), torch.tensor(float(torch.equal(hp, h0)))
@check("ch02_rnn_layer")
def _(ns):
    W_hx, W_hh, b = rnnw(); x = torch.randn(T, B, D); x0 = x.clone()
    out, h = ns["rnn_layer"](x, W_hx, W_hh, b, batch_first=False)
    return out, h, torch.tensor(float(torch.equal(x, x0))), torch.tensor(list(x.shape))
@check("ch02_bptt_gradient_norms")
def _(ns):
    W_hx, W_hh, b = rnnw(); states = torch.tanh(torch.randn(B, T, H)); s0 = states.clone()
    n = ns["bptt_gradient_norms"](states, W_hh); return n, torch.tensor(float(torch.equal(states, s0)))
@check("ch02_clip_grad_norm")
def _(ns):
    res = []
    for mx in (0.5, 3.0, 100.0):
        seed(); lin = torch.nn.Linear(D, 2); lin(torch.randn(B, D)).pow(2).sum().backward()
        extra = torch.nn.Parameter(torch.randn(3))
        n = ns["clip_grad_norm"](list(lin.parameters()) + [extra], mx); res += [n, lin.weight.grad.clone(), torch.tensor(float(extra.grad is None))]
    return res

# ---- ch03
def lstmw(bias=True):
    seed(); cell = torch.nn.LSTMCell(D, H, bias=bias); return cell
@check("ch03_lstm_cell")
def _(ns):
    cell = lstmw(); Wx, Wh, b = ns["split_gates"](cell)
    W = {k: torch.cat([Wh[k], Wx[k]], 1) for k in Wx}
    torch.manual_seed(3); return ns["lstm_cell"](torch.randn(B, D), torch.randn(B, H), torch.randn(B, H), W, b)
@check("ch03_lstm_cell_nobias")
def _(ns):
    cell = lstmw(False); Wx, Wh, _ = ns["split_gates"](cell)
    torch.manual_seed(3); return ns["lstm_cell_nobias"](torch.randn(B, D), torch.randn(B, H), torch.randn(B, H), Wx, Wh)
@check("ch03_split_gates")
def _(ns):
    return [ns["split_gates"](lstmw(True)), ns["split_gates"](lstmw(False))]
@check("ch03_lstm_layer")
def _(ns):
    cell = lstmw(); torch.manual_seed(3); x = torch.randn(B, T, D)
    st = (torch.randn(1, B, H), torch.randn(1, B, H)); st0 = (st[0].clone(), st[1].clone())
    r1 = ns["lstm_layer"](cell, x, H, st)
    changed = torch.tensor(float(not torch.equal(st[0], st0[0])))
    fn = lambda xt, hc: cell(xt, hc)
    r2 = ns["lstm_layer"](fn, x, H)
    return [r1, changed, r2]

# ---- ch04
def gruw():
    seed(); g = torch.nn.GRUCell(D, H); return [p.detach() for p in (g.weight_ih, g.weight_hh, g.bias_ih, g.bias_hh)]
@check("ch04_gru_cell_textbook")
def _(ns):
    w = gruw(); torch.manual_seed(4); return ns["gru_cell_textbook"](torch.randn(B, D), torch.randn(B, H), *w)
@check("ch04_gru_cell_pytorch")
def _(ns):
    w = gruw(); torch.manual_seed(4); return ns["gru_cell_pytorch"](torch.randn(B, D), torch.randn(B, H), *w)
@check("ch04_count_parameters")
def _(ns):
    out = []
    for kind in ("rnn", "lstm", "gru"):
        for L in (1, 2, 3):
            for bias in (True, False):
                for bi in (False, True):
                    out.append(ns["count_parameters"](kind, 5, 7, L, bias, bi))
    return out

# ---- ch05
def padded():
    torch.manual_seed(5); x = torch.randn(B, T, D); lengths = torch.tensor([3, 5, 2]); return x, lengths
@check("ch05_reverse_padded")
def _(ns):
    x, L = padded(); return ns["reverse_padded"](x, L)
@check("ch05_lstm_direction")
def _(ns):
    x, L = padded(); x[:, :, :] += 0; x0 = x.clone(); seed(); cell = torch.nn.LSTMCell(D, H)
    out, (h, c) = ns["lstm_direction"](cell, x, L); return out, h, c, torch.tensor(float(torch.equal(x, x0)))
@check("ch05_bilstm_from_cells")
def _(ns):
    x, L = padded(); seed(); m = ns["BiLSTMFromCells"](D, H)
    return [m(x, L), m(x)]
@check("ch05_final_states")
def _(ns):
    x, L = padded(); torch.manual_seed(6); o = torch.randn(B, T, 2 * H); return ns["final_states"](o, L)
@check("ch05_masked_mean")
def _(ns):
    torch.manual_seed(6); o = torch.randn(B, T, 2 * H); return ns["masked_mean"](o, torch.tensor([3, 5, 2]))
@check("ch05_sentence_classifier")
def _(ns):
    seed(); m = ns["SentenceClassifier"](11, D, H, 2); tok = torch.randint(1, 11, (B, T + 1)); L = torch.tensor([3, 5, 2])
    tok[torch.arange(T + 1) >= L[:, None]] = 0; return m(tok, L)

# ---- ch06
@check("ch06_build_vocab")
def _(ns):
    return ns["build_vocab"]([list("banana"), list("bandana"), list("cab")], 1)
@check("ch06_numericalize")
def _(ns):
    stoi = {"a": 4, "b": 5}; return [ns["numericalize"](list("abz"), stoi), ns["numericalize"](list("abz"), stoi, True, True)]
@check("ch06_pad_batch")
def _(ns):
    return ns["pad_batch"]([[5, 6], [7, 8, 9, 10], [4]])
@check("ch06_teacher_forced_loss")
def _(ns):
    seed(); enc = ns["Encoder"](9, D, H); dec = ns["Decoder"](8, 3, H)
    src = torch.tensor([[4, 5, 6], [7, 4, 0]]); sl = torch.tensor([3, 2])
    tgt = torch.tensor([[1, 4, 5, 6, 2], [1, 7, 2, 0, 0]])
    loss, logits = ns["teacher_forced_loss"](enc, dec, src, sl, tgt); return loss.detach(), logits.detach()
@check("ch06_decoder")
def _(ns):
    seed(); dec = ns["Decoder"](8, 3, H); torch.manual_seed(7); return dec.step(torch.tensor([1, 4]), torch.randn(2, H))
@check("ch06_encoder")
def _(ns):
    seed(); enc = ns["Encoder"](9, D, H); return enc(torch.tensor([[4, 5, 6], [7, 4, 0], [8, 0, 0]]), torch.tensor([3, 2, 1]))

# ---- ch07
def ch07_models(ns):
    seed(); enc = ns["EncoderRNN"](9, D, H, 5); dec = ns["AttnDecoderRNN"](8, 3, 5, 2 * H, 4); return enc, dec
SRC7 = torch.tensor([[4, 5, 6, 7], [7, 4, 8, 0], [8, 0, 0, 0]]); L7 = torch.tensor([4, 3, 1])
@check("ch07_lstm_cell")
def _(ns):
    seed(); c = ns["LSTMCell"](D, H); torch.manual_seed(8); return c(torch.randn(B, D), (torch.randn(B, H), torch.randn(B, H)))
@check("ch07_encoder")
def _(ns):
    enc, _ = ch07_models(ns); src = SRC7.clone(); src[2, 1] = 0   # a real token 0 inside? no: index 0 at padding only
    return [enc(SRC7, L7), enc(torch.tensor([[4, 0, 6]]), None)]
@check("ch07_attention")
def _(ns):
    _, dec = ch07_models(ns); torch.manual_seed(9); mask = torch.arange(4)[None] < L7[:, None]
    return [dec.attention(torch.randn(B, 5), torch.randn(B, 4, 2 * H), mask), dec.attention(torch.randn(B, 5), torch.randn(B, 4, 2 * H))]
@check("ch07_decoder")
def _(ns):
    enc, dec = ch07_models(ns); out, hid = enc(SRC7, L7); mask = torch.arange(4)[None] < L7[:, None]
    return dec(torch.tensor([1, 4, 5]), (hid, torch.zeros_like(hid)), out, mask)
@check("ch07_greedy")
def _(ns):
    class M:
        def encode(self, src, sl): return None, 0
        def decode_step(self, y, state, memory):
            seqs = [[5, 6, 2, 3], [4, 2, 2, 2], [7, 7, 7, 2]]
            lp = torch.full((3, 9), -5.0)
            for b in range(3): lp[b, seqs[b][state]] = 0
            self.last_weights = torch.full((3, 4), float(state)); return lp, state + 1
    return ns["greedy_translate"](M(), SRC7, L7, 6)

# ---- ch08
def att_inputs():
    torch.manual_seed(10); Ty, Tx, Dd = 2, 4, 5
    return torch.randn(B, Ty, Dd), torch.randn(B, Tx, Dd), torch.arange(Tx)[None] < torch.tensor([4, 2, 3])[:, None]
@check("ch08_attend")
def _(ns):
    dec, enc, mask = att_inputs(); e = torch.randn(B, 2, 4)
    r = [ns["attend"](e, enc, mask)]
    e2 = e.clone(); e2[~mask[:, None].expand_as(e2)] = 500.0; r.append(ns["attend"](e2, enc, mask))
    r.append(ns["attend"](e * 100, enc, mask))
    return r
@check("ch08_dot")
def _(ns):
    dec, enc, mask = att_inputs(); return ns["dot_attention"](dec, enc, mask)
@check("ch08_scaled_dot")
def _(ns):
    dec, enc, mask = att_inputs(); d0 = dec.clone(); r = ns["scaled_dot_attention"](dec, enc, mask)
    return [r, torch.tensor(float(torch.equal(dec, d0)))]
@check("ch08_reduced_rank")
def _(ns):
    dec, enc, mask = att_inputs(); torch.manual_seed(11); U, V = torch.randn(3, 5), torch.randn(3, 5)
    return ns["reduced_rank_attention"](dec, enc, mask, U, V)

# ---- ch09
def nmt(ns, p=0.0):
    seed(); return ns["NMTParams"](10, 11, D, H, dropout=p)
SRC9 = torch.tensor([[4, 5, 6, 7], [7, 4, 8, 0], [8, 9, 0, 0]]); L9 = torch.tensor([4, 3, 2])
@check("ch09_encode")
def _(ns):
    m = nmt(ns); r = [ns["encode"](m, SRC9, L9)]
    m = nmt(ns, 0.3); m.train(); torch.manual_seed(15); r.append(ns["encode"](m, SRC9, L9)); return r
@check("ch09_decode_step")
def _(ns):
    res = []
    for p in (0.0, 0.3):
        m = nmt(ns, p); m.train(); h, st = ns["encode"](m, SRC9, L9); hp = m.W_attProj(h); mask = SRC9 != 0
        torch.manual_seed(12); res.append(ns["decode_step"](m, torch.tensor([1, 1, 1]), torch.zeros(3, H), st, h, hp, mask))
    return res
@check("ch09_masked_loss")
def _(ns):
    torch.manual_seed(13); lg = torch.randn(B, 4, 11); tg = torch.tensor([[4, 5, 2, 0], [3, 2, 0, 0], [4, 4, 4, 2]])
    return ns["masked_loss"](lg, tg)
@check("ch09_teacher_forcing")
def _(ns):
    m = nmt(ns); tin = torch.tensor([[1, 4, 5], [1, 6, 0], [1, 3, 4]]); r = [ns["decode_teacher_forcing"](m, SRC9, L9, tin)]
    m = nmt(ns, 0.3); m.train(); torch.manual_seed(15); r.append(ns["decode_teacher_forcing"](m, SRC9, L9, tin)); return r
@check("ch09_beam_search")
def _(ns):
    torch.manual_seed(14); table = torch.log_softmax(torch.randn(12, 6) * 2, -1)
    def step(tok, state):
        k = (hash(tuple(state)) % 12)
        return table[k], state + [tok]
    return [ns["beam_search"](step, [], 3, 5, a) for a in (1.0, 0.0)]

# ---- added for trial 22o
@check("ch05_residual_stack")
def _(ns):
    torch.manual_seed(5); x = torch.randn(B, T, D); L = torch.tensor([3, 5, 2])
    seed(); m = ns["ResidualLSTMStack"](D, H, 3, dropout=0.5); m.eval()
    return [m(x, L), m(x)]
@check("ch06_greedy_decode")
def _(ns):
    class E:
        def __call__(self, src, sl): return None, torch.zeros(src.shape[0], 2)
    class Dd:
        def step(self, y, d):
            seqs = [[5, 6, 2, 3], [4, 2, 2, 2], [7, 7, 7, 7]]
            k = int(d[0, 0]); lg = torch.full((3, 9), -5.0)
            for b in range(3): lg[b, seqs[b][min(k, 3)]] = 0
            return lg, d + 1
    return ns["greedy_decode"](E(), Dd(), torch.zeros(3, 4, dtype=torch.long), torch.tensor([4, 3, 1]), 6)
@check("ch08_bilinear")
def _(ns):
    torch.manual_seed(10); Ty, Tx = 2, 4
    dec, enc = torch.randn(B, Ty, 5), torch.randn(B, Tx, 7); mask = torch.arange(Tx)[None] < torch.tensor([4, 2, 3])[:, None]
    W = torch.randn(5, 7); return ns["bilinear_attention"](dec, enc, mask, W)
@check("ch08_macs")
def _(ns):
    return [ns["reduced_rank_macs"](2, 5, 3, 7, 11, 4), ns["reduced_rank_macs"](1, 4, 6, 3, 5, 2)]

# ---- added for trial 22q: checks of what the generic ones cannot see (gradients, multi-character and capital tokens)
@check("ch02_rnn_layer")
def _(ns):
    W_hx, W_hh, b = rnnw(); x = torch.randn(T, B, D); x0 = x.clone()
    out, h = ns["rnn_layer"](x, W_hx, W_hh, b, batch_first=False)
    xg = torch.randn(B, T, D, requires_grad=True); _, hl = ns["rnn_layer"](xg, W_hx, W_hh, b)
    g = torch.autograd.grad(hl.sum(), xg, allow_unused=True)[0] if hl.requires_grad else None
    return out, h, torch.tensor(float(torch.equal(x, x0))), torch.tensor(list(x.shape)), (g if g is not None else torch.zeros(0))
@check("ch06_build_vocab")
def _(ns):
    return [ns["build_vocab"]([list("banana"), list("bandana"), list("cab")], 1),
            ns["build_vocab"]([["le", "chat", "noir"], ["le", "chien"], ["un", "chat"]], 1)]
@check("ch06_numericalize")
def _(ns):
    stoi = {"a": 4, "b": 5, "A": 6}; return [ns["numericalize"](list("abz"), stoi), ns["numericalize"](list("abzA"), stoi, True, True)]
@check("ch09_teacher_forcing")
def _(ns):
    m = nmt(ns); tin = torch.tensor([[1, 4, 5], [1, 6, 0], [1, 3, 4]]); lg = ns["decode_teacher_forcing"](m, SRC9, L9, tin)
    g = torch.autograd.grad(lg.sum(), m.W_attProj.weight, allow_unused=True)[0]
    return [lg, g if g is not None else torch.zeros(0)]
@check("ch06_teacher_forced_loss")
def _(ns):
    seed(); enc = ns["Encoder"](9, D, H); dec = ns["Decoder"](8, 3, H)
    src = torch.tensor([[4, 5, 6], [7, 4, 0]]); sl = torch.tensor([3, 2])
    tgt = torch.tensor([[1, 4, 5, 6, 2], [1, 7, 2, 0, 0]])
    loss, logits = ns["teacher_forced_loss"](enc, dec, src, sl, tgt)
    g = torch.autograd.grad(loss, enc.rnn.weight_hh_l0, allow_unused=True)[0]
    return loss.detach(), logits.detach(), (g if g is not None else torch.zeros(0))

# ---- added for trial 22q: what the generic checks above cannot see
@check("ch02_rnn_layer")
def _(ns):
    W_hx, W_hh, b = rnnw(); x = torch.randn(T, B, D); x0 = x.clone()
    out, h = ns["rnn_layer"](x, W_hx, W_hh, b, batch_first=False)
    h0 = torch.randn(B, H, requires_grad=True); _, hl = ns["rnn_layer"](torch.randn(B, T, D), W_hx, W_hh, b, h0=h0)
    g = torch.autograd.grad(hl.sum(), h0, allow_unused=True)[0] if hl.requires_grad else None
    return out, h, torch.tensor(float(torch.equal(x, x0))), (g if g is not None else torch.zeros(0))
@check("ch03_lstm_cell")
def _(ns):
    cell = lstmw(); Wx, Wh, b = ns["split_gates"](cell)
    W = {k: torch.cat([Wh[k], Wx[k]], 1).detach() for k in Wx}; b = {k: v.detach() for k, v in b.items()}
    torch.manual_seed(3); hp = torch.randn(B, H, requires_grad=True)
    h, c = ns["lstm_cell"](torch.randn(B, D), hp, torch.randn(B, H), W, b)
    g = torch.autograd.grad(h.sum(), hp, allow_unused=True)[0]
    return h.detach(), c.detach(), (g if g is not None else torch.zeros(0))
@check("ch05_residual_stack")
def _(ns):
    torch.manual_seed(5); x = torch.randn(B, T, D); L = torch.tensor([3, 5, 2])
    seed(); m = ns["ResidualLSTMStack"](D, H, 3, dropout=0.5); m.eval()
    r = [m(x, L), m(x)]
    m.train(); torch.manual_seed(21); r.append(m(x, L)); return r
@check("ch06_decoder")
def _(ns):
    seed(); dec = ns["Decoder"](8, 3, H); torch.manual_seed(7); d = torch.randn(2, H); d0 = d.clone()
    lg, dn = dec.step(torch.tensor([1, 4]), d)
    return lg.detach(), dn.detach(), torch.tensor(float(torch.equal(d, d0)))
@check("ch06_greedy_decode")
def _(ns):
    class E:
        def __call__(self, src, sl): return None, torch.zeros(src.shape[0], 2)
    class Dd:
        def step(self, y, d):
            assert isinstance(y, torch.Tensor) and y.shape == (3,), f"fed {type(y).__name__}"
            seqs = [[5, 6, 2, 3], [4, 2, 2, 2], [7, 7, 7, 7]]
            k = int(d[0, 0]); lg = torch.full((3, 9), -5.0)
            for b in range(3): lg[b, seqs[b][min(k, 3)]] = 0
            return lg, d + 1
    return ns["greedy_decode"](E(), Dd(), torch.zeros(3, 4, dtype=torch.long), torch.tensor([4, 3, 1]), 6)
@check("ch09_masked_loss")
def _(ns):
    torch.manual_seed(13); lg = torch.randn(B, 4, 11); tg = torch.tensor([[1, 4, 5, 2, 0], [1, 3, 2, 0, 0], [1, 4, 4, 4, 2]])
    return [ns["masked_loss"](lg, tg[:, 1:].contiguous()), ns["masked_loss"](lg, tg[:, 1:])]
@check("ch07_decoder")
def _(ns):
    enc, dec = ch07_models(ns); out, hid = enc(SRC7, L7); mask = torch.arange(4)[None] < L7[:, None]
    r = [dec(torch.tensor([1, 4, 5]), (hid, torch.zeros_like(hid)), out, mask)]
    r.append(dec(torch.tensor([1]), (hid[:1], torch.zeros_like(hid[:1])), out[:1], mask[:1])); return r
@check("ch05_sentence_classifier")
def _(ns):
    seed(); m = ns["SentenceClassifier"](11, D, H, 2); tok = torch.randint(1, 11, (B, T + 1)); L = torch.tensor([3, 5, 2])
    tok[torch.arange(T + 1) >= L[:, None]] = 0; return [m(tok, L), m(tok[1:2], L[1:2])]


def check_apply():
    for c in t.M + t.OK:
        try:
            setup, cells = refs(c.assignment)
            st.apply(c, cells[c.cell])
        except Exception as e:
            print("APPLY FAIL", c.name, e)
    print("apply checked")


# ---- trial 22r: what the checks above cannot see (each keeps the earlier check's values and adds its own)
_prev_22r = dict(CHECKS)
@check("ch03_lstm_cell_nobias")
def _(ns):
    cell = lstmw(False); Wx, Wh, _ = ns["split_gates"](cell); torch.manual_seed(3)
    x, h, c = torch.randn(B, D), torch.randn(B, H), torch.randn(B, H); c0 = c.clone()
    return [_prev_22r["ch03_lstm_cell_nobias"](ns), ns["lstm_cell_nobias"](x, h, c, Wx, Wh), torch.tensor(float(torch.equal(c, c0)))]
@check("ch05_reverse_padded")
def _(ns):
    torch.manual_seed(6); x = torch.randn(B, T + 1, D); L = torch.tensor([3, 4, 2])      # the longest shorter than T
    return [_prev_22r["ch05_reverse_padded"](ns), ns["reverse_padded"](x, L)]
@check("ch06_numericalize")
def _(ns):
    stoi = {"a": 4, "b": 5}; ns["numericalize"](list("abz"), stoi)
    return [_prev_22r["ch06_numericalize"](ns), sorted(stoi.items())]
@check("ch06_greedy_decode")
def _(ns):
    class E:
        def __call__(self, src, sl): return None, torch.zeros(src.shape[0], 2)
    class Dy:                                    # the next token depends on the token fed
        def step(self, y, d):
            nxt = {1: 5, 5: 6, 6: 2, 2: 7, 7: 2, 0: 2}
            lg = torch.full((y.shape[0], 9), -5.0)
            for b in range(y.shape[0]): lg[b, nxt.get(int(y[b]), 2)] = 0
            return lg, d + 1
    return [_prev_22r["ch06_greedy_decode"](ns), ns["greedy_decode"](E(), Dy(), torch.zeros(2, 4, dtype=torch.long), torch.tensor([4, 3]), 6)]
@check("ch07_decoder")
def _(ns):
    enc, dec = ch07_models(ns); out, hid = enc(SRC7, L7); mask = torch.arange(4)[None] < L7[:, None]
    lp, state, w = dec(torch.tensor([1, 4, 5]), (hid, torch.zeros_like(hid)), out, mask)
    return [_prev_22r["ch07_decoder"](ns), dec(torch.tensor([6, 4, 5]), state, out, mask)]

# ---- trial 22s: what the generic checks cannot see (the module's parameter names, a returned type, gradients to the
# input, a blank token, a batch of one, a stand-in decoder without an `out` attribute)
_prev_22s = dict(CHECKS)
@check("ch01_many_to_one")
def _(ns):
    seed(); m = ns["ManyToOne"](D, H, C)
    return [_prev_22s["ch01_many_to_one"](ns), sorted(k for k, _ in m.named_parameters())]
@check("ch03_lstm_cell")
def _(ns):
    cell = lstmw(); Wx, Wh, b = ns["split_gates"](cell)
    W = {k: torch.cat([Wh[k], Wx[k]], 1).detach() for k in Wx}; b = {k: v.detach() for k, v in b.items()}
    torch.manual_seed(3); r = ns["lstm_cell"](torch.randn(B, D), torch.randn(B, H), torch.randn(B, H), W, b)
    return [_prev_22s["ch03_lstm_cell"](ns), type(r).__name__]
@check("ch05_reverse_padded")
def _(ns):
    x, L = padded(); x = x.clone().requires_grad_(True); y = ns["reverse_padded"](x, L)
    g = torch.autograd.grad(y.sum(), x, allow_unused=True)[0] if y.requires_grad else None
    return [y.detach(), g if g is not None else torch.zeros(0)]
@check("ch06_build_vocab")
def _(ns):
    return [_prev_22s["ch06_build_vocab"](ns), ns["build_vocab"]([list("12 mai"), list("3 juin")], 1)]
@check("ch06_teacher_forced_loss")
def _(ns):
    class Enc:
        def __call__(self, src, sl): return None, torch.ones(src.shape[0], 2)
    class Dec:
        def __init__(self): self.W = torch.arange(10.0).reshape(2, 5) / 7
        def step(self, y, d): return d @ self.W + y[:, None] * 0.1, d * 0.9
    tgt = torch.tensor([[1, 4, 3, 2], [1, 2, 0, 0]])
    loss, logits = ns["teacher_forced_loss"](Enc(), Dec(), torch.zeros(2, 3, dtype=torch.long), torch.tensor([3, 2]), tgt)
    return [_prev_22s["ch06_teacher_forced_loss"](ns), loss.detach(), logits.detach()]
@check("ch06_greedy_decode")
def _(ns):
    class E:
        def __call__(self, src, sl): return None, torch.zeros(src.shape[0], 2)
    class D1:
        def step(self, y, d):
            lg = torch.full((y.shape[0], 9), -5.0); lg[:, 4 if int(d[0, 0]) < 2 else 2] = 0
            return lg, d + 1
    return [_prev_22s["ch06_greedy_decode"](ns), ns["greedy_decode"](E(), D1(), torch.zeros(1, 3, dtype=torch.long), torch.tensor([3]), 5)]


# ---- trial 22t: checks the ones above cannot see
_prev_22t = dict(CHECKS)
@check("ch05_residual_stack")
def _(ns):
    torch.manual_seed(5); x = torch.randn(B, T, D); L = torch.tensor([3, 5, 2])
    seed(); m = ns["ResidualLSTMStack"](D, H, 3, dropout=0.2); m.train(); torch.manual_seed(22)
    return [_prev_22t["ch05_residual_stack"](ns), m(x, L), torch.tensor(m.dropout.p)]
@check("ch07_greedy")
def _(ns):
    class M:
        def encode(self, src, sl): return None, 0
        def decode_step(self, y, state, memory):
            lp = torch.full((3, 9), -5.0); lp[:, 4] = 0     # never <eos>
            self.last_weights = torch.full((3, 4), float(state)); return lp, state + 1
    return [_prev_22t["ch07_greedy"](ns), ns["greedy_translate"](M(), SRC7, L7, 3)]


# ---- trial 22u: checks the ones above cannot see (gradients through lstm_layer, other trailing dimensions, Ty = 1)
_prev_22u = dict(CHECKS)
@check("ch03_lstm_layer")
def _(ns):
    cell = lstmw(); torch.manual_seed(3); x = torch.randn(B, T, D, requires_grad=True)
    out, _ = ns["lstm_layer"](cell, x, H)
    g = torch.autograd.grad(out[:, -1].sum(), x, allow_unused=True)[0] if out.requires_grad else None
    return [_prev_22u["ch03_lstm_layer"](ns), g if g is not None else torch.zeros(0)]
@check("ch05_reverse_padded")
def _(ns):
    torch.manual_seed(7); L = torch.tensor([3, 5, 2])
    return [_prev_22u["ch05_reverse_padded"](ns), ns["reverse_padded"](torch.randn(B, T), L), ns["reverse_padded"](torch.randn(B, T, 2, 3), L)]
@check("ch08_attend")
def _(ns):
    dec, enc, mask = att_inputs(); torch.manual_seed(16)
    return [_prev_22u["ch08_attend"](ns), ns["attend"](torch.randn(B, 1, 4), enc, mask)]


# ---- trial 22v: checks the ones above cannot see (gradients through time and to the energies, batch_first=True
# outputs, tied tokens that share their first character)
_prev_22v = dict(CHECKS)
@check("ch01_many_to_many_sync")
def _(ns):
    seed(); m = ns["ManyToManySync"](D, H, C); torch.manual_seed(17); x = torch.randn(B, T, D, requires_grad=True)
    y = m(x); g = torch.autograd.grad(y[:, -1].sum(), x, allow_unused=True)[0]
    return [_prev_22v["ch01_many_to_many_sync"](ns), y.detach(), g if g is not None else torch.zeros(0)]
@check("ch02_rnn_layer")
def _(ns):
    W_hx, W_hh, b = rnnw(); torch.manual_seed(18); x = torch.randn(B, T, D)
    return [_prev_22v["ch02_rnn_layer"](ns), ns["rnn_layer"](x, W_hx, W_hh, b)]
@check("ch04_gru_cell_pytorch")
def _(ns):
    w = gruw(); torch.manual_seed(4); x, h = torch.randn(B, D), torch.randn(B, H); w0 = [t.clone() for t in w]
    r1 = ns["gru_cell_pytorch"](x, h, *w)
    return [_prev_22v["ch04_gru_cell_pytorch"](ns), r1, [t.shape == t0.shape and torch.equal(t, t0) for t, t0 in zip(w, w0)]]
@check("ch06_build_vocab")
def _(ns):
    return [_prev_22v["ch06_build_vocab"](ns), ns["build_vocab"]([["chien", "chat"], ["loup"]], 1)]
@check("ch08_attend")
def _(ns):
    dec, enc, mask = att_inputs(); torch.manual_seed(19); e = torch.randn(B, 2, 4, requires_grad=True)
    w, ctx = ns["attend"](e, enc, mask); g = torch.autograd.grad(ctx.sum() + (ctx ** 2).sum(), e, allow_unused=True)[0]
    return [_prev_22v["ch08_attend"](ns), w.detach(), ctx.detach(), g if g is not None else torch.zeros(0)]


# ---- trial 22w: checks the ones above cannot see (a batch of one, the caller's lengths, B different from Tx,
# gradients to V)
_prev_22w = dict(CHECKS)
@check("ch02_rnn_cell")
def _(ns):
    W_hx, W_hh, b = rnnw(); torch.manual_seed(20)
    return [_prev_22w["ch02_rnn_cell"](ns), ns["rnn_cell"](torch.randn(1, D), torch.randn(1, H), W_hx, W_hh, b)]
@check("ch05_final_states")
def _(ns):
    torch.manual_seed(6); o = torch.randn(B, T, 2 * H); L = torch.tensor([3, 5, 2]); r = ns["final_states"](o, L)
    return [_prev_22w["ch05_final_states"](ns), r, L]
@check("ch06_encoder")
def _(ns):
    seed(); enc = ns["Encoder"](9, D, H)
    return [_prev_22w["ch06_encoder"](ns), enc(torch.tensor([[4, 5, 6, 0], [7, 4, 0, 0]]), torch.tensor([3, 2]))]
@check("ch08_reduced_rank")
def _(ns):
    dec, enc, mask = att_inputs(); torch.manual_seed(11); U, V = torch.randn(3, 5), torch.randn(3, 5, requires_grad=True)
    w, ctx = ns["reduced_rank_attention"](dec, enc, mask, U, V)
    g = torch.autograd.grad((ctx ** 2).sum(), V, allow_unused=True)[0]
    return [_prev_22w["ch08_reduced_rank"](ns), g if g is not None else torch.zeros(0)]


# ---- trial 22x: checks the ones above cannot see (gradients through rnn_cell, the count without building a module,
# the caller's outputs after masked_mean)
_prev_22x = dict(CHECKS)
@check("ch02_rnn_cell")
def _(ns):
    W_hx, W_hh, b = rnnw(); torch.manual_seed(21); x = torch.randn(B, D, requires_grad=True)
    h = ns["rnn_cell"](x, torch.randn(B, H), W_hx, W_hh, b)
    g = torch.autograd.grad(h.sum(), x, allow_unused=True)[0] if isinstance(h, torch.Tensor) and h.requires_grad else None
    return [_prev_22x["ch02_rnn_cell"](ns), g if g is not None else torch.zeros(0)]
@check("ch04_count_parameters")
def _(ns):
    import torch.nn as tnn
    saved = {k: getattr(tnn, k) for k in ("RNN", "LSTM", "GRU")}
    def forbidden(*a, **k):
        raise RuntimeError("building a module is ruled out")
    try:
        for k in saved: setattr(tnn, k, forbidden)
        r = ns["count_parameters"]("lstm", 3, 5, num_layers=2, bidirectional=True)
    finally:
        for k, v in saved.items(): setattr(tnn, k, v)
    return [_prev_22x["ch04_count_parameters"](ns), r]
@check("ch05_masked_mean")
def _(ns):
    torch.manual_seed(22); o = torch.randn(B, T, H); o0 = o.clone(); L = torch.tensor([3, 5, 2])
    r = ns["masked_mean"](o, L)
    return [_prev_22x["ch05_masked_mean"](ns), r, torch.tensor(float(torch.equal(o, o0)))]


# ---- trial 22y: checks the ones above cannot see (a batch of one in the residual stack, a batch whose longest sentence
# is shorter than its width in exercise 7's encoder, how many times decode_teacher_forcing calls encode)
_prev_22y = dict(CHECKS)
@check("ch05_residual_stack")
def _(ns):
    seed(); m = ns["ResidualLSTMStack"](D, H, 2); m.eval(); torch.manual_seed(23); x = torch.randn(1, T, D)
    return [_prev_22y["ch05_residual_stack"](ns), m(x, torch.tensor([3]))]
@check("ch07_encoder")
def _(ns):
    enc, _ = ch07_models(ns); src = torch.tensor([[4, 5, 0, 0, 0], [7, 0, 0, 0, 0]])
    return [_prev_22y["ch07_encoder"](ns), enc(src, torch.tensor([2, 1]))]
@check("ch09_teacher_forcing")
def _(ns):
    calls = []
    real = ns["encode"]
    def counting(*a, **k):
        calls.append(1); return real(*a, **k)
    ns["encode"] = counting
    try:
        m = nmt(ns); tin = torch.tensor([[1, 4, 5], [1, 6, 0], [1, 3, 4]]); ns["decode_teacher_forcing"](m, SRC9, L9, tin)
    finally:
        ns["encode"] = real
    return [_prev_22y["ch09_teacher_forcing"](ns), len(calls)]


# ---- trial 22z: a check the ones above cannot see (train_step on a batch of one)
_prev_22z = dict(CHECKS)
@check("ch01_train_step")
def _(ns):
    seed(); m = ns["ManyToOne"](D, H, 2); opt = torch.optim.SGD(m.parameters(), lr=0.1)
    torch.manual_seed(24); x = torch.randn(1, T, D); y = torch.tensor([1])
    return [_prev_22z["ch01_train_step"](ns), round(ns["train_step"](m, opt, x, y), 6)]


# ---- trial 22aa: a check the ones above cannot see (the caller's W_hx after rnn_cell, and a second call with it)
_prev_22aa = dict(CHECKS)
@check("ch02_rnn_cell")
def _(ns):
    W_hx, W_hh, b = rnnw(); W0 = W_hx.clone(); torch.manual_seed(25); x, h = torch.randn(B, D), torch.randn(B, H)
    r1 = run(lambda: ns["rnn_cell"](x, h, W_hx, W_hh, b)); r2 = run(lambda: ns["rnn_cell"](x, h, W_hx, W_hh, b))
    return [_prev_22aa["ch02_rnn_cell"](ns), r1, r2, torch.tensor(float(W_hx.shape == W0.shape and torch.equal(W_hx, W0)))]


# ---- trial 22ab: checks the ones above cannot see (other step counts, float64 inputs without h0, no gradient at all,
# the start tokens' shape)
_prev_22ab = dict(CHECKS)
@check("ch01_one_to_many")
def _(ns):
    seed(); m = ns["OneToMany"](D, H, C); torch.manual_seed(26); x = torch.randn(B, D)
    return [_prev_22ab["ch01_one_to_many"](ns), m(x, 5), m(x[:2], 3)]
@check("ch02_rnn_layer")
def _(ns):
    W_hx, W_hh, b = rnnw(); torch.manual_seed(27); x = torch.randn(B, T, D, dtype=torch.float64)
    return [_prev_22ab["ch02_rnn_layer"](ns), run(lambda: ns["rnn_layer"](x, W_hx.double(), W_hh.double(), b.double()))]
@check("ch02_clip_grad_norm")
def _(ns):
    ps = [torch.nn.Parameter(torch.randn(3)), torch.nn.Parameter(torch.randn(2, 2))]
    return [_prev_22ab["ch02_clip_grad_norm"](ns), run(lambda: ns["clip_grad_norm"](ps, 1.0))]
@check("ch07_greedy")
def _(ns):
    shapes = []
    class M:
        def encode(self, src, sl): return None, 0
        def decode_step(self, y, state, memory):
            shapes.append(tuple(y.shape)); lp = torch.full((3, 9), -5.0); lp[:, 2] = 0
            self.last_weights = torch.full((3, 4), float(state)); return lp, state + 1
    return [_prev_22ab["ch07_greedy"](ns), ns["greedy_translate"](M(), SRC7, L7, 3), shapes]


def main(argv):
    global t
    t = importlib.import_module(argv[0])
    if "--apply" in argv[1:]:
        return check_apply()
    only = argv[1:]
    for c in t.M + t.OK:
        if only and c.assignment not in only: continue
        f = CHECKS.get(c.cell)
        if f is None: print("NO CHECK", c.name, c.cell); continue
        ref = run(lambda: f(namespace(c.assignment)))
        try:
            ns, code = case_ns(c)
            got = run(lambda: f(ns))
        except Exception as e:
            got = ("raise-at-build", f"{type(e).__name__}: {e}")
        if ref[0] != "ok":
            print("REF FAILS", c.name, ref); continue
        same = got[0] == "ok" and close(got[1], ref[1])
        kind = "VARIANT" if c.correct else "MISTAKE"
        verdict = ("ok" if same else "DIFFERS") if c.correct else ("SAME AS REF!" if same else "wrong")
        print(f"{kind} {c.name:12s} {verdict:12s} {got[0]}: {str(got[1])[:160] if got[0] != 'ok' else ''}")


if __name__ == "__main__":
    if not sys.argv[1:] or not sys.argv[1].startswith("student_trial_"):
        sys.exit("usage: python benchmarks/trial_scratch.py student_trial_22X [--apply | ch01 ...]")
    main(sys.argv[1:])


