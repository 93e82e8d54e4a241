"""Scratch checks of trial 22m's cases (phase 2): the setup cell and the reference solution cells of each notebook run
in plain Python (exec), the case's edited cell swapped in, on small inputs made here (sizes all different); no test
cell is run or read. A mistake must raise or give other values than the reference; a variant the same values.

    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22m_scratch.py [ch01-n01a ...]
"""
import sys, re, traceback, copy
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT / "tests"))
import torch
import student_trial as st
import student_trial_22m as T
import nbgrader_cli as n
ORDER, CODE = {}, {}   # assignment -> solution cell ids in order; cell id (or "<a>_setup") -> the code a student has
for a in sorted({c.assignment for c in T.CASES}):
    (p,) = n.source_notebooks(a)
    nb = n.load(p)
    ORDER[a] = [n.nbgrader_meta(c)["grade_id"] for c in nb.cells if n.is_solution_cell(c)]
    CODE.update({n.nbgrader_meta(c)["grade_id"]: n.student_code(c.source) for c in nb.cells if n.is_solution_cell(c)})
    CODE[f"{a}_setup"] = nb.cells[1].source

def namespace(a, override=None):
    ns = {"__name__": "__main__"}
    setup = CODE[f"{a}_setup"]
    setup = "\n".join((l[:len(l) - len(l.lstrip())] + "pass") if l.strip().startswith("%") else l for l in setup.splitlines())
    exec(compile(setup, f"{a}_setup", "exec"), ns)
    for gid in ORDER[a]:
        code = override[1] if override and override[0] == gid else CODE[gid]
        exec(compile(code, gid, "exec"), ns)
    return ns

def seeded(f, *a, **k):
    torch.manual_seed(0)
    return f(*a, **k)

def flat(x):
    if isinstance(x, torch.Tensor): return [x.detach()]
    if isinstance(x, (list, tuple)): return [y for e in x for y in flat(e)]
    if isinstance(x, dict): return [y for k in sorted(x) for y in flat(x[k])]
    return [x]

def same(a, b):
    fa, fb = flat(a), flat(b)
    if len(fa) != len(fb): return False
    for x, y in zip(fa, fb):
        if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
            if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)): return False
            if x.shape != y.shape or x.dtype != y.dtype or not torch.allclose(x.double(), y.double(), atol=1e-5, equal_nan=False): return False
        elif type(x) != type(y) or x != y: return False
    return True

def R(*s): return torch.randn(*s)
L = lambda *v: torch.tensor(v)

S = {}  # cell -> scenario(ns) -> result
# ch01
def mod_run(cls, args, call):
    def f(ns):
        torch.manual_seed(1); m = ns[cls](*args)
        torch.manual_seed(2); out = call(m)
        return out
    return f
S["ch01_many_to_one"] = mod_run("ManyToOne", (3, 5, 4), lambda m: (m(R(2, 6, 3)), m(R(1, 6, 3))))
S["ch01_many_to_many_sync"] = mod_run("ManyToManySync", (3, 5, 4), lambda m: m(R(2, 6, 3)))
def o2m(m):
    x = R(2, 3); out = m(x, 5); out.sum().backward(); return out, m.rnn.weight_ih_l0.grad
S["ch01_one_to_many"] = mod_run("OneToMany", (3, 5, 4), o2m)
S["ch01_many_to_many_async"] = mod_run("ManyToManyAsync", (3, 2, 5, 4), lambda m: m(R(2, 6, 3), R(2, 4, 2)))
def ts(ns):
    torch.manual_seed(1); m = ns["ManyToOne"](3, 5, 4); opt = torch.optim.Adam(m.parameters(), lr=0.1)
    torch.manual_seed(2); x, y = R(7, 6, 3), torch.randint(0, 4, (7,))
    l1 = ns["train_step"](m, opt, x, y); l2 = ns["train_step"](m, opt, x, y)
    return l1, l2, [p.detach().clone() for p in m.parameters()]
S["ch01_train_step"] = ts
def fit(ns):
    torch.manual_seed(1); m = ns["ManyToOne"](3, 5, 4)
    torch.manual_seed(2); x, y = R(50, 6, 3), torch.randint(0, 4, (50,))
    return ns["fit"](m, x, y, 3, batch_size=7, lr=0.05, seed=3)
S["ch01_fit"] = fit
# ch02
S["ch02_rnn_cell"] = lambda ns: seeded(lambda: ns["rnn_cell"](R(2, 3), R(2, 5), R(5, 3), R(5, 5), R(5)))
def layer(ns):
    torch.manual_seed(0); x, Wx, Wh, b, h0 = R(2, 4, 3), R(5, 3), R(5, 5) * 0.5, R(5), R(2, 5)
    return ns["rnn_layer"](x, Wx, Wh, b), ns["rnn_layer"](x.transpose(0, 1), Wx, Wh, b, h0, batch_first=False)
S["ch02_rnn_layer"] = layer
S["ch02_bptt_gradient_norms"] = lambda ns: seeded(lambda: ns["bptt_gradient_norms"](torch.tanh(R(2, 4, 5)), R(5, 5)))
def clip(ns):
    torch.manual_seed(0); m = torch.nn.Linear(3, 4); m(R(6, 3)).pow(2).sum().backward()
    n = ns["clip_grad_norm"](m.parameters(), 0.5)
    return n, m.weight.grad, m.bias.grad
S["ch02_clip_grad_norm"] = clip
# ch03
def W4(rows, cols): return {k: R(rows, cols) for k in "ifgo"}
S["ch03_lstm_cell"] = lambda ns: seeded(lambda: ns["lstm_cell"](R(2, 3), R(2, 5), R(2, 5), W4(5, 8), {k: R(5) for k in "ifgo"}))
S["ch03_lstm_cell_nobias"] = lambda ns: seeded(lambda: ns["lstm_cell_nobias"](R(2, 3), R(2, 5), R(2, 5), W4(5, 3), W4(5, 5)))
def split(ns):
    torch.manual_seed(0); c1, c2 = torch.nn.LSTMCell(3, 5), torch.nn.LSTMCell(3, 5, bias=False)
    return ns["split_gates"](c1), ns["split_gates"](c2)
S["ch03_split_gates"] = split
def ll(ns):
    torch.manual_seed(0); cell = torch.nn.LSTMCell(3, 5); x = R(2, 4, 3); st0 = (R(1, 2, 5), R(1, 2, 5))
    return ns["lstm_layer"](cell, x, 5), ns["lstm_layer"](cell, x, 5, st0)
S["ch03_lstm_layer"] = ll
# ch04
def gru(name):
    return lambda ns: seeded(lambda: ns[name](R(2, 3), R(2, 5), R(15, 3), R(15, 5), R(15), R(15)))
S["ch04_gru_cell_textbook"] = gru("gru_cell_textbook"); S["ch04_gru_cell_pytorch"] = gru("gru_cell_pytorch")
S["ch04_count_parameters"] = lambda ns: [ns["count_parameters"](k, 3, 5, L_, b, bd) for k in ("rnn", "lstm", "gru") for L_ in (1, 2, 3) for b in (True, False) for bd in (False, True)]
# ch05
LEN = L(4, 6, 2)
S["ch05_reverse_padded"] = lambda ns: seeded(lambda: (ns["reverse_padded"](R(3, 6, 2), LEN), ns["reverse_padded"](R(3, 6), LEN)))
S["ch05_lstm_direction"] = lambda ns: seeded(lambda: ns["lstm_direction"](torch.nn.LSTMCell(2, 5), R(3, 6, 2), LEN))
def bi(ns):
    torch.manual_seed(1); m = ns["BiLSTMFromCells"](2, 5)
    torch.manual_seed(5); ref = torch.nn.LSTM(2, 5, batch_first=True, bidirectional=True)
    with torch.no_grad():
        for p, q in ((ref.weight_ih_l0, m.fwd.weight_ih), (ref.weight_hh_l0, m.fwd.weight_hh), (ref.bias_ih_l0, m.fwd.bias_ih), (ref.bias_hh_l0, m.fwd.bias_hh),
                     (ref.weight_ih_l0_reverse, m.bwd.weight_ih), (ref.weight_hh_l0_reverse, m.bwd.weight_hh), (ref.bias_ih_l0_reverse, m.bwd.bias_ih), (ref.bias_hh_l0_reverse, m.bwd.bias_hh)):
            q.copy_(p)
    torch.manual_seed(2); x = R(3, 6, 2)
    return m(x, LEN), m(x), len(list(m.parameters()))
S["ch05_bilstm_from_cells"] = bi
S["ch05_final_states"] = lambda ns: seeded(lambda: ns["final_states"](R(3, 6, 10), LEN))
S["ch05_masked_mean"] = lambda ns: seeded(lambda: ns["masked_mean"](R(3, 7, 4), LEN))
def stack(ns):
    torch.manual_seed(1); m = ns["ResidualLSTMStack"](2, 5, 3, dropout=0.4)
    torch.manual_seed(2); x = R(3, 7, 2)
    m.eval(); a = m(x, LEN); b = m(x)
    m.train(); torch.manual_seed(3); c = m(x, LEN)
    return a, b, c
S["ch05_residual_stack"] = stack
def clf(ns):
    torch.manual_seed(1); m = ns["SentenceClassifier"](20, 4, 5, 2)
    torch.manual_seed(2); tok = torch.randint(1, 20, (3, 8)); tok[0, 4:] = 0; tok[1, 6:] = 0; tok[2, 2:] = 0
    return m(tok, L(4, 6, 2))
S["ch05_sentence_classifier"] = clf
# ch06
SEQS = [list("12 mai"), list("3 juin 1999"), list("mardi"), list("2 mai")]
S["ch06_build_vocab"] = lambda ns: (ns["build_vocab"](SEQS), ns["build_vocab"](SEQS, min_freq=2))
def numz(ns):
    stoi = {t: i for i, t in enumerate(ns["build_vocab"](SEQS, 2))}
    return [ns["numericalize"](list("12 mzi"), stoi, s, e) for s in (False, True) for e in (False, True)]
S["ch06_numericalize"] = numz
S["ch06_pad_batch"] = lambda ns: (ns["pad_batch"]([[5, 6, 7], [8], [9, 10]]), ns["pad_batch"]([[4, 5]], pad_index=1))
def enc(ns):
    torch.manual_seed(1); e = ns["Encoder"](12, 3, 5); torch.manual_seed(2)
    src = torch.randint(4, 12, (3, 7)); src[0, 4:] = 0; src[2, 2:] = 0
    return e(src, L(4, 6, 2))
S["ch06_encoder"] = enc
def dec(ns):
    torch.manual_seed(1); d = ns["Decoder"](12, 3, 5); torch.manual_seed(2)
    return d.step(torch.randint(0, 12, (3,)), R(3, 5))
S["ch06_decoder"] = dec
def ed(ns):
    torch.manual_seed(1); e = ns["Encoder"](12, 3, 5); d = ns["Decoder"](11, 4, 5)
    torch.manual_seed(2); src = torch.randint(4, 12, (3, 7)); src[0, 4:] = 0; src[2, 2:] = 0
    tgt = torch.randint(4, 11, (3, 6)); tgt[:, 0] = 1; tgt[0, 3] = 2; tgt[0, 4:] = 0; tgt[1, 5] = 2; tgt[2, 2] = 2; tgt[2, 3:] = 0
    return e, d, src, L(4, 7, 2), tgt
def tfl(ns):
    e, d, src, sl, tgt = ed(ns); return ns["teacher_forced_loss"](e, d, src, sl, tgt)
S["ch06_teacher_forced_loss"] = tfl
def gd(ns):
    e, d, src, sl, tgt = ed(ns); torch.manual_seed(4); return ns["greedy_decode"](e, d, src, sl, 6)
S["ch06_greedy_decode"] = gd
# ch07
def lc(ns):
    torch.manual_seed(1); c = ns["LSTMCell"](3, 5); torch.manual_seed(2)
    x = R(2, 3).requires_grad_(); h, cc = c(x, (R(2, 5), R(2, 5))); (h.sum() + cc.sum()).backward(); return h, cc, x.grad
S["ch07_lstm_cell"] = lc
def e7(ns):
    torch.manual_seed(1); e = ns["EncoderRNN"](12, 3, 5, 4); torch.manual_seed(2)
    src = torch.randint(1, 12, (3, 6)); return e(src, LEN), e(src)
S["ch07_encoder"] = e7
def at(ns):
    torch.manual_seed(1); a = ns["Attention"](10, 4, 6); torch.manual_seed(2)
    mask = torch.arange(6) < LEN[:, None]
    return a(R(3, 4), R(3, 6, 10), mask), a(R(3, 4), R(3, 6, 10))
S["ch07_attention"] = at
def d7(ns):
    torch.manual_seed(1); d = ns["AttnDecoderRNN"](11, 3, 4, 10, 6); torch.manual_seed(2)
    mask = torch.arange(6) < LEN[:, None]
    return d(torch.randint(0, 11, (3,)), (R(3, 4), R(3, 4)), R(3, 6, 10), mask)
S["ch07_decoder"] = d7
class Stub:
    def __init__(self): g = torch.Generator().manual_seed(7); self.table = torch.randn(6, 3, 9, generator=g).log_softmax(-1); self.table[2, 0, 2] = 9; self.table[3, :, 2] = 9
    def encode(self, src, lens): self.t = 0; return torch.zeros(src.shape[0], 5, 2), None
    def decode_step(self, y, state, memory):
        lp = self.table[self.t]; self.last_weights = torch.softmax(torch.randn(y.shape[0], 5, generator=torch.Generator().manual_seed(self.t)), -1); self.t += 1; return lp, state
S["ch07_greedy"] = lambda ns: ns["greedy_translate"](Stub(), torch.zeros(3, 5, dtype=torch.long), LEN, 6)
# ch08
MASK = torch.arange(6) < LEN[:, None]
def att8(name, *extra):
    return lambda ns: seeded(lambda: ns[name](R(3, 4, 7), R(3, 6, 7), MASK, *extra))
S["ch08_attend"] = lambda ns: seeded(lambda: ns["attend"](R(3, 4, 6), R(3, 6, 5), MASK))
S["ch08_dot"] = att8("dot_attention"); S["ch08_scaled_dot"] = att8("scaled_dot_attention")
S["ch08_bilinear"] = lambda ns: seeded(lambda: ns["bilinear_attention"](R(3, 4, 7), R(3, 6, 9), MASK, R(7, 9)))
def rr(ns):
    torch.manual_seed(0); U, V = R(2, 7), R(2, 9)
    return ns["reduced_rank_attention"](R(3, 4, 7), R(3, 6, 9), MASK, U, V), ns["reduced_rank_attention"](R(3, 4, 7), R(3, 6, 9), MASK, U, V)
S["ch08_reduced_rank"] = rr
S["ch08_macs"] = lambda ns: ns["reduced_rank_macs"](2, 5, 3, 7, 11, 4)
# ch09
def nmt(ns):
    torch.manual_seed(1); m = ns["NMTParams"](15, 13, 4, 5); m.eval()
    torch.manual_seed(2); src = torch.randint(4, 15, (3, 6)); src[0, 4:] = 0; src[2, 2:] = 0
    return m, src, L(4, 6, 2)
def en9(ns):
    m, src, sl = nmt(ns); return ns["encode"](m, src, sl)
S["ch09_encode"] = en9
def ds9(ns):
    m, src, sl = nmt(ns); h, st0 = ns["encode"](m, src, sl)
    torch.manual_seed(3); return ns["decode_step"](m, torch.randint(4, 13, (3,)), R(3, 5), st0, h, m.W_attProj(h), src != 0)
S["ch09_decode_step"] = ds9
def tf9(ns):
    m, src, sl = nmt(ns); torch.manual_seed(3); tgt_in = torch.randint(4, 13, (3, 5)); tgt_in[:, 0] = 1
    return ns["decode_teacher_forcing"](m, src, sl, tgt_in)
S["ch09_teacher_forcing"] = tf9
def ml(ns):
    torch.manual_seed(0); tgt = torch.randint(3, 9, (3, 5)); tgt[0, 3] = 2; tgt[0, 4:] = 0; tgt[2, 1] = 2; tgt[2, 2:] = 0
    return ns["masked_loss"](R(3, 5, 9), tgt)
S["ch09_masked_loss"] = ml
def bs(ns):
    g = torch.Generator().manual_seed(5); tab = torch.randn(9, 7, generator=g).log_softmax(-1)
    def step(tok, state): return (tab[(tok + state) % 9], state + tok + 1)
    return [ns["beam_search"](step, 0, b, ml_, a) for b in (2, 3) for ml_ in (3, 6) for a in (0.0, 1.0)]
S["ch09_beam_search"] = bs

def run(f, ns):
    try: return ("ok", f(ns))
    except Exception as e: return ("raise", f"{type(e).__name__}: {str(e).splitlines()[0][:150]}")

only = sys.argv[1:]
refs = {}
for c in T.CASES:
    if only and not any(c.name.startswith(o) for o in only): continue
    a = c.assignment
    if a not in refs: refs[a] = {}
    if c.cell not in refs[a]:
        refs[a][c.cell] = run(S[c.cell], namespace(a))
    code = st.apply(c, CODE[c.cell])
    try: ns = namespace(a, (c.cell, code))
    except Exception as e: print(f"{c.name}: NAMESPACE {type(e).__name__} {e}"); continue
    got = run(S[c.cell], ns); ref = refs[a][c.cell]
    if ref[0] != "ok": print(f"{c.name}: REFERENCE RAISES {ref[1]}"); continue
    if got[0] == "raise": verdict = "raises: " + got[1]
    else: verdict = "EQUAL" if same(ref[1], got[1]) else "differs"
    ok = (verdict == "EQUAL") == c.correct
    print(f"{'  ' if ok else '!!'} {c.name} [{'variant' if c.correct else 'mistake'}] {verdict}")
