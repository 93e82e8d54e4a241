"""Student trial of issue 22: realistic mistakes and correct variants, graded by the class grader.

The mistakes were written from the student notebooks (exercises/chNN/*.ipynb) and the chapters alone, before the
reference solutions were read (the list is committed in benchmarks/results/student_trial_22_plan.md; ch04-m6,
ch08-m8 and ch09-m10 were added after); each is ONE
edit of the reference solution of one cell (``edits``: ``(old, new)`` pairs, each ``old`` found exactly once).
Correct variants rewrite a cell another way and must keep full marks.

For every assignment, this script builds one submission per mistake or variant (the student notebook with every
solution cell filled with the reference code except the edited one; tests/nbgrader_cli.submission), plus the
reference itself, lays them out as nbgrader's ``submitted/<student>/<assignment>/`` folder and grades them in ONE
run of ``python -m autograder grade`` (the path an instructor takes). It then reads ``out/state.jsonl`` and prints,
per submission: the score, whether every visible test passed, and the first failing visible test and its message
(``detail``; it is not always what the student sees in Jupyter: see ``--student-view``).

    nice -n 5 .venv/bin/python benchmarks/student_trial.py [ch01 ch02 ...] [--root /tmp/student_trial_22]   # grade
    nice -n 5 .venv/bin/python benchmarks/student_trial.py --student-view    # the same submissions in Jupyter
    .venv/bin/python benchmarks/student_trial.py --table                     # the tables of student_trial_22.md

Grading writes ``<root>/<assignment>/out/state.jsonl`` (about 18 minutes for all nine on a shared 2-core machine);
``--students a,b`` re-grades only those. ``--student-view`` runs every submission with nbclient (errors allowed)
and keeps what each test cell shows in ``<root>/student_view.json``. ``--table`` prints the report's tables from
both, with the verdicts of ``VERDICTS`` (a person's reading of each message).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import nbgrader_cli  # noqa: E402

# nbgrader's Gradebook runs `alembic` from PATH: the venv's bin/ must be on it
os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")


@dataclass
class Case:
    assignment: str
    name: str                      # submission (student) id
    cell: str                      # grade id of the edited solution cell
    what: str                      # one line: the mistake, or the variant
    edits: list = field(default_factory=list)   # [(old, new)]: replacements in the reference code
    code: str | None = None        # the whole cell instead (variants)
    correct: bool = False          # a correct variant: must keep full marks


def registry():
    """``(mistakes, variants, mistake, variant)``: two empty lists of cases and the two functions that add to them
    (``mistake(assignment, name, cell, what, *edits)``, ``variant(..., code=None)``); each trial script keeps its own."""
    mistakes, variants = [], []

    def mistake(assignment, name, cell, what, *edits):
        mistakes.append(Case(assignment, f"{assignment}-{name}", cell, what, list(edits)))

    def variant(assignment, name, cell, what, *edits, code=None):
        variants.append(Case(assignment, f"{assignment}-{name}", cell, what, list(edits), code=code, correct=True))

    return mistakes, variants, mistake, variant


M, OK, mistake, variant = registry()


# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "m1", "ch01_many_to_one", "ManyToOne builds its RNN with nonlinearity='relu' (the docstring says tanh)",
        ("self.rnn = nn.RNN(input_size, hidden_size, batch_first=True)",
         "self.rnn = nn.RNN(input_size, hidden_size, batch_first=True, nonlinearity='relu')"))
mistake("ch01", "m2", "ch01_one_to_many", "OneToMany feeds x and then `steps` zero vectors (steps + 1 inputs)",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])  # (B, steps, D), all zeros\n"
         "        inputs[:, 0] = x                                     # x only at the first step",
         "inputs = torch.cat([x.unsqueeze(1), x.new_zeros(x.shape[0], steps, x.shape[1])], dim=1)"))
mistake("ch01", "m3", "ch01_many_to_many_async", "the decoder gets h_n[-1] (B, H) as its initial state, not h_n (1, B, H)",
        ("outputs, _ = self.decoder(tgt, h_n)", "outputs, _ = self.decoder(tgt, h_n[-1])"))
mistake("ch01", "m4", "ch01_fit", "fit draws indices with randint(0, len(x) - 1) (upper bound read as inclusive)",
        ("idx = torch.randint(0, len(x), (batch_size,), generator=g)   #",
         "idx = torch.randint(0, len(x) - 1, (batch_size,), generator=g)   #"))
mistake("ch01", "m5", "ch01_fit", "fit makes Adam with a hard-coded lr=1e-2 (ignores its lr argument)",
        ("torch.optim.Adam(model.parameters(), lr=lr)", "torch.optim.Adam(model.parameters(), lr=1e-2)"))
variant("ch01", "ok1", "ch01_many_to_one", "ManyToOne from h_n[0] instead of outputs[:, -1]",
        ("return self.head(outputs[:, -1])", "return self.head(h_n[0])"))
# Written as a correct variant, but the docstring says "Clear old gradients" FIRST: with stale gradients on the
# model, the first step is wrong (a hidden test shows it). Kept as a mistake (named ok2 in the first run).
mistake("ch01", "m6", "ch01_train_step", "train_step clears the gradients after the step (model.zero_grad()), not before",
        ("    optimizer.zero_grad()\n", ""),
        ("    optimizer.step()\n", "    optimizer.step()\n    model.zero_grad()\n"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "m1", "ch02_rnn_cell", "rnn_cell in column form; the bias is added without [:, None]",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)",
         "return torch.tanh(W_hh @ h_prev.T + W_hx @ x_t.T + b_h).T"))
mistake("ch02", "m2", "ch02_rnn_layer", "batch_first=False: the input is transposed, the outputs are not transposed back",
        ("    if not batch_first:\n        outputs = outputs.transpose(0, 1)              # (T, B, H)\n", ""))
mistake("ch02", "m3", "ch02_rnn_layer", "the state is updated in place (h[:] = ...), so h0 is overwritten",
        ("        h = rnn_cell(x[:, t], h, W_hx, W_hh, b_h)      # (B, H): h_{t+1} in the book's 1-based time\n"
         "        outputs.append(h)",
         "        h[:] = rnn_cell(x[:, t], h, W_hx, W_hh, b_h)\n        outputs.append(h.clone())"))
mistake("ch02", "m4", "ch02_bptt_gradient_norms", "the norm is taken per example and averaged over the batch",
        ("norms = [torch.linalg.vector_norm(grad)]", "norms = [grad.norm(dim=1).mean()]"),
        ("norms.append(torch.linalg.vector_norm(grad))", "norms.append(grad.norm(dim=1).mean())"))
mistake("ch02", "m5", "ch02_clip_grad_norm", "the total norm is the sum of the per-parameter norms",
        ("total_norm = torch.sqrt(sum((g.detach() ** 2).sum() for g in grads))",
         "total_norm = sum(g.detach().norm() for g in grads)"))
variant("ch02", "ok1", "ch02_rnn_cell", "rnn_cell in column form, with b_h[:, None]",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)",
         "return torch.tanh(W_hh @ h_prev.T + W_hx @ x_t.T + b_h[:, None]).T"))
variant("ch02", "ok2", "ch02_clip_grad_norm", "clip_grad_norm in float64 that rebinds p.grad instead of mul_",
        code=("def clip_grad_norm(parameters, max_norm):\n"
              "    params = [p for p in parameters if p.grad is not None]\n"
              "    total = torch.zeros((), dtype=torch.float64)\n"
              "    for p in params:\n"
              "        total = total + (p.grad.double() ** 2).sum()\n"
              "    total = total.sqrt()\n"
              "    if total > max_norm:\n"
              "        for p in params:\n"
              "            p.grad = p.grad * float(max_norm / (total + 1e-6))\n"
              "    return total.float()\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "m1", "ch03_lstm_cell", "concatenates [h_prev, x] along dim=0",
        ("hx = torch.cat([h_prev, x], dim=1)", "hx = torch.cat([h_prev, x], dim=0)"))
mistake("ch03", "m2", "ch03_lstm_cell", "h = tanh(o * c) instead of o * tanh(c)",
        ("h = o * torch.tanh(c) ", "h = torch.tanh(o * c) "))
mistake("ch03", "m3", "ch03_lstm_cell_nobias", "copy-paste slip: the input gate uses Wh['f']",
        ('i = torch.sigmoid(x @ Wx["i"].T + h_prev @ Wh["i"].T)', 'i = torch.sigmoid(x @ Wx["i"].T + h_prev @ Wh["f"].T)'))
mistake("ch03", "m4", "ch03_split_gates", "reads the stacked blocks in the chapter's order f, i, g, o",
        ("Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))", "Wx = dict(zip('figo', cell.weight_ih.chunk(4, dim=0)))"),
        ("Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))", "Wh = dict(zip('figo', cell.weight_hh.chunk(4, dim=0)))"),
        ("b = dict(zip(GATES, (cell.bias_ih + cell.bias_hh).chunk(4)))", "b = dict(zip('figo', (cell.bias_ih + cell.bias_hh).chunk(4)))"))
mistake("ch03", "m5", "ch03_lstm_layer", "a given (1, B, H) state goes to the cell as it is (no [0])",
        ("h, c = state[0][0], state[1][0]", "h, c = state"))
variant("ch03", "ok1", "ch03_lstm_cell", "lstm_cell with one stacked matrix and chunk",
        code=("def lstm_cell(x, h_prev, c_prev, W, b):\n"
              "    Wall = torch.cat([W[k] for k in 'ifgo'])          # (4H, H + D)\n"
              "    ball = torch.cat([b[k] for k in 'ifgo'])\n"
              "    z = torch.cat([h_prev, x], 1) @ Wall.T + ball\n"
              "    i, f, g, o = z.chunk(4, dim=1)\n"
              "    c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)\n"
              "    return torch.sigmoid(o) * torch.tanh(c), c\n"))
variant("ch03", "ok2", "ch03_lstm_layer", "lstm_layer writing into a preallocated outputs tensor",
        code=("def lstm_layer(cell, x, hidden_size, state=None):\n"
              "    B, T, _ = x.shape\n"
              "    if state is None:\n"
              "        h, c = torch.zeros(B, hidden_size), torch.zeros(B, hidden_size)\n"
              "    else:\n"
              "        h, c = state[0].squeeze(0), state[1].squeeze(0)\n"
              "    out = x.new_zeros(B, T, hidden_size)\n"
              "    for t in range(T):\n"
              "        h, c = cell(x[:, t], (h, c))\n"
              "        out[:, t] = h\n"
              "    return out, (h[None], c[None])\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "m1", "ch04_gru_cell_textbook", "H = h.shape[0] (the batch size) for the split",
        ("H = h.shape[1]", "H = h.shape[0]"))
mistake("ch04", "m2", "ch04_gru_cell_textbook", "the reset gate squashed with tanh instead of sigmoid",
        ("r = torch.sigmoid(x @ W_rx.T", "r = torch.tanh(x @ W_rx.T"))
mistake("ch04", "m3", "ch04_gru_cell_pytorch", "the input's blocks chunked along dim=0 (the batch axis)",
        ("i_r, i_z, i_n = gi.chunk(3, dim=1)", "i_r, i_z, i_n = gi.chunk(3, dim=0)"))
mistake("ch04", "m4", "ch04_gru_cell_pytorch", "copy-paste slip: r adds the hidden z block (h_z)",
        ("r = torch.sigmoid(i_r + h_r)", "r = torch.sigmoid(i_r + h_z)"))
mistake("ch04", "m5", "ch04_count_parameters", "count_parameters always counts the biases (ignores bias=False)",
        ("        if bias:\n            per_direction +=", "        if True:\n            per_direction +="))
mistake("ch04", "m6", "ch04_count_parameters", "layers after the first always read 2H (as if every stack were bidirectional)",
        ("layer_input = input_size if layer == 0 else hidden_size * directions",
         "layer_input = input_size if layer == 0 else hidden_size * 2"))
variant("ch04", "ok1", "ch04_gru_cell_textbook", "textbook cell computed in float64, cast back",
        code=("def gru_cell_textbook(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    x64, h64 = x.double(), h.double()\n"
              "    Wi, Wh, b = weight_ih.double(), weight_hh.double(), (bias_ih + bias_hh).double()\n"
              "    H = h.shape[-1]\n"
              "    r = torch.sigmoid(x64 @ Wi[:H].T + h64 @ Wh[:H].T + b[:H])\n"
              "    z = torch.sigmoid(x64 @ Wi[H:2*H].T + h64 @ Wh[H:2*H].T + b[H:2*H])\n"
              "    n = torch.tanh(x64 @ Wi[2*H:].T + (r * h64) @ Wh[2*H:].T + b[2*H:])\n"
              "    return ((1 - z) * n + z * h64).to(x.dtype)\n"))
variant("ch04", "ok2", "ch04_count_parameters", "count_parameters in closed form",
        code=("def count_parameters(kind, input_size, hidden_size, num_layers=1, bias=True, bidirectional=False):\n"
              "    g = {'rnn': 1, 'gru': 3, 'lstm': 4}[kind]\n"
              "    d = 1 + int(bidirectional)\n"
              "    H = hidden_size\n"
              "    first = g * H * (input_size + H) + (2 * g * H if bias else 0)\n"
              "    later = g * H * (d * H + H) + (2 * g * H if bias else 0)\n"
              "    return d * (first + (num_layers - 1) * later)\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "m1", "ch05_reverse_padded", "gather with the (B, T) index, not expanded to the trailing dims",
        ("    idx = idx.reshape(B, T, *([1] * (x.dim() - 2))).expand_as(x)  # (B, T, ...)\n", ""))
mistake("ch05", "m2", "ch05_lstm_direction", "the mask (t < lengths) is (B,), without unsqueeze(1)",
        ("real = (t < lengths).to(x.device).unsqueeze(1)", "real = (t < lengths).to(x.device)"))
mistake("ch05", "m3", "ch05_lstm_direction", "padded steps output the kept state instead of zeros",
        ("outputs.append(torch.where(real, h_new, torch.zeros_like(h_new)))", "outputs.append(h)"))
mistake("ch05", "m4", "ch05_bilstm_from_cells", "h_n and c_n joined with torch.cat instead of torch.stack",
        ("(torch.stack([h_f, h_b]), torch.stack([c_f, c_b]))", "(torch.cat([h_f, h_b]), torch.cat([c_f, c_b]))"))
mistake("ch05", "m5", "ch05_final_states", "final_states indexes outputs[:, last] (no arange over the batch)",
        ("forward_last = outputs[rows, last, :H]", "forward_last = outputs[:, last, :H]"))
mistake("ch05", "m6", "ch05_masked_mean", "masked_mean divides by lengths without unsqueeze",
        ("return total / lengths.unsqueeze(1).to(outputs.dtype)", "return total / lengths.to(outputs.dtype)"))
mistake("ch05", "m7", "ch05_residual_stack", "pad_packed_sequence without total_length",
        ("out, _ = pad_packed_sequence(out, batch_first=True, total_length=T)", "out, _ = pad_packed_sequence(out, batch_first=True)"))
mistake("ch05", "m8", "ch05_sentence_classifier", "the head reads hidden_size features (forgets the 2 directions)",
        ("self.head = nn.Linear(2 * hidden_size, num_classes)", "self.head = nn.Linear(hidden_size, num_classes)"))
variant("ch05", "ok1", "ch05_reverse_padded", "reverse_padded with a Python loop over the batch",
        code=("def reverse_padded(x, lengths):\n"
              "    y = x.clone()\n"
              "    for b, L in enumerate(lengths.tolist()):\n"
              "        y[b, :L] = x[b, :L].flip(0)\n"
              "    return y\n"))
variant("ch05", "ok2", "ch05_masked_mean", "masked_mean with einsum in float64",
        code=("def masked_mean(outputs, lengths):\n"
              "    T = outputs.shape[1]\n"
              "    m = (torch.arange(T)[None, :] < lengths[:, None]).double()\n"
              "    s = torch.einsum('bt,btf->bf', m, outputs.double())\n"
              "    return (s / m.sum(1, keepdim=True)).to(outputs.dtype)\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "m1", "ch06_build_vocab", "keeps tokens seen MORE than min_freq times (> instead of >=)",
        ("if count >= min_freq", "if count > min_freq"))
mistake("ch06", "m2", "ch06_build_vocab", "counts each token once per sequence (a set per sequence)",
        ("counts = Counter(token for seq in sequences for token in seq)",
         "counts = Counter(token for seq in sequences for token in set(seq))"))
mistake("ch06", "m3", "ch06_numericalize", "numericalize returns a tensor instead of a list",
        ("    return ids", "    return torch.tensor(ids)"))
# First run: torch.full without dtype was meant as the float slip, but torch.full infers int64 from an int fill
# value: it is correct (kept as variant ok3). The float slip is zeros(...).fill_ (m4).
mistake("ch06", "m4", "ch06_pad_batch", "pad_batch fills a float tensor: torch.zeros(B, T).fill_(pad_index)",
        ("torch.full((len(sequences), int(lengths.max())), pad_index, dtype=torch.long)",
         "torch.zeros(len(sequences), int(lengths.max())).fill_(pad_index)"))
variant("ch06", "ok3", "ch06_pad_batch", "torch.full without dtype (int64 inferred from the int fill value)",
        ("pad_index, dtype=torch.long)  # (B, T)", "pad_index)  # (B, T)"))
mistake("ch06", "m5", "ch06_pad_batch", "T taken from the first sequence (assumed the longest)",
        ("int(lengths.max())", "len(sequences[0])"))
mistake("ch06", "m6", "ch06_encoder", "pad_packed_sequence without batch_first=True",
        ("pad_packed_sequence(packed_out, batch_first=True, total_length=src.shape[1])",
         "pad_packed_sequence(packed_out, total_length=src.shape[1])"))
mistake("ch06", "m7", "ch06_decoder", "step returns (d, logits) instead of (logits, d)",
        ("        return logits, d", "        return d, logits"))
mistake("ch06", "m8", "ch06_teacher_forced_loss", "the decoder starts from outputs[:, -1] (the last, maybe padded, column)",
        ("_, d = encoder(src, src_lengths)                    # (B, H): d_0 = h_Tx",
         "outputs, _ = encoder(src, src_lengths)\n    d = outputs[:, -1]"))
mistake("ch06", "m9", "ch06_greedy_decode", "the loop always runs max_len steps (no early stop)",
        ("            if all(finished):\n                break\n", ""))
mistake("ch06", "m10", "ch06_greedy_decode", "argmax() without dim (one index over the whole batch)",
        ("y = logits.argmax(dim=-1)                                     # (B,)",
         "y = logits.argmax().repeat(src.shape[0])"))
variant("ch06", "ok1", "ch06_teacher_forced_loss", "the loss with cross_entropy on (B, V, Ty)",
        ("loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), ignore_index=pad_index)",
         "loss = F.cross_entropy(logits.transpose(1, 2), dec_out, ignore_index=pad_index)"))
variant("ch06", "ok2", "ch06_greedy_decode", "greedy_decode with a tensor of finished flags and slicing at the end",
        code=("def greedy_decode(encoder, decoder, src, src_lengths, max_len):\n"
              "    with torch.no_grad():\n"
              "        _, d = encoder(src, src_lengths)\n"
              "        y = torch.full((src.shape[0],), SOS_INDEX, dtype=torch.long)\n"
              "        done = torch.zeros(src.shape[0], dtype=torch.bool)\n"
              "        steps = []\n"
              "        for _ in range(max_len):\n"
              "            logits, d = decoder.step(y, d)\n"
              "            y = logits.argmax(-1)\n"
              "            steps.append(y)\n"
              "            done = done | (y == EOS_INDEX)\n"
              "            if done.all():\n"
              "                break\n"
              "    rows = torch.stack(steps, 1).tolist()\n"
              "    return [r[:r.index(EOS_INDEX)] if EOS_INDEX in r else r for r in rows]\n"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "m1", "ch07_lstm_cell", "the gates are chunked along dim=0",
        ("f, i, o, g = z.chunk(4, dim=-1)", "f, i, o, g = z.chunk(4, dim=0)"))
mistake("ch07", "m2", "ch07_lstm_cell", "the output gate squashed with tanh",
        ("f, i, o = torch.sigmoid(f), torch.sigmoid(i), torch.sigmoid(o)",
         "f, i, o = torch.sigmoid(f), torch.sigmoid(i), torch.tanh(o)"))
mistake("ch07", "m3", "ch07_encoder", "outputs not zeroed at padded positions (the left cell's kept state stays there)",
        ("        outputs = outputs * mask[:, :, None]\n", ""))
mistake("ch07", "m4", "ch07_attention", "masked_fill(mask, -inf): the mask used the wrong way round",
        ("scores.masked_fill(~mask, float(\"-inf\"))", "scores.masked_fill(mask, float(\"-inf\"))"))
mistake("ch07", "m5", "ch07_attention", "padded energies set to 0 instead of -inf",
        ("scores.masked_fill(~mask, float(\"-inf\"))", "scores.masked_fill(~mask, 0.0)"))
mistake("ch07", "m6", "ch07_decoder", "the context is summed over the feature axis",
        ("weighted_encoder = torch.bmm(weights[:, None, :], encoder_outputs)[:, 0]",
         "weighted_encoder = (weights[:, :, None] * encoder_outputs).sum(dim=2)"))
mistake("ch07", "m7", "ch07_decoder", "returns raw scores (no log_softmax)",
        ("return F.log_softmax(scores, dim=-1), (h, c), weights", "return scores, (h, c), weights"))
mistake("ch07", "m8", "ch07_greedy", "the weights are stacked along dim 0 (steps, B, Tx)",
        ("return out, torch.stack(weights, dim=1)", "return out, torch.stack(weights, dim=0)"))
mistake("ch07", "m9", "ch07_greedy", "stops when this step's tokens are all <eos> (no finished flags)",
        ("        done |= y == eos_index\n        if bool(done.all()):",
         "        if bool((y == eos_index).all()):"))
variant("ch07", "ok1", "ch07_attention", "attention with the two halves of Attn (W_d d and W_h h_s apart)",
        code=("class Attention(nn.Module):\n"
              "    def __init__(self, enc_size, dec_size, attn_size):\n"
              "        super().__init__()\n"
              "        self.Attn = nn.Linear(dec_size + enc_size, attn_size)\n"
              "        self.v = nn.Parameter(torch.rand(attn_size) - 0.5)\n"
              "\n"
              "    def forward(self, hidden, encoder_outputs, mask=None):\n"
              "        Hd = hidden.shape[-1]\n"
              "        Wd, Wh = self.Attn.weight[:, :Hd], self.Attn.weight[:, Hd:]\n"
              "        pre = (hidden @ Wd.T)[:, None, :] + encoder_outputs @ Wh.T + self.Attn.bias\n"
              "        e = torch.einsum('bsa,a->bs', torch.tanh(pre), self.v)\n"
              "        if mask is not None:\n"
              "            e = e.masked_fill(mask == 0, -float('inf'))\n"
              "        return F.softmax(e, dim=1)\n"))
variant("ch07", "ok2", "ch07_greedy", "greedy_translate with Python lists and a list of finished flags",
        code=("@torch.no_grad()\n"
              "def greedy_translate(model, src, src_lengths, max_len, sos_index=1, eos_index=2):\n"
              "    memory, state = model.encode(src, src_lengths)\n"
              "    B = src.shape[0]\n"
              "    y = torch.full((B,), sos_index, dtype=torch.long)\n"
              "    toks, ws, done = [[] for _ in range(B)], [], [False] * B\n"
              "    for _ in range(max_len):\n"
              "        lp, state = model.decode_step(y, state, memory)\n"
              "        y = lp.argmax(-1)\n"
              "        ws.append(model.last_weights.clone())\n"
              "        for b in range(B):\n"
              "            if not done[b]:\n"
              "                if int(y[b]) == eos_index:\n"
              "                    done[b] = True\n"
              "                else:\n"
              "                    toks[b].append(int(y[b]))\n"
              "        if all(done):\n"
              "            break\n"
              "    return toks, torch.stack(ws, 1)\n"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "m1", "ch08_attend", "masked_fill with mask[:, :, None] (B, Tx, 1)",
        ("masked_fill(~mask[:, None, :]", "masked_fill(~mask[:, :, None]"))
mistake("ch08", "m2", "ch08_attend", "multiplies the softmax by the mask instead of -inf before it",
        ("    energies = energies.masked_fill(~mask[:, None, :], float(\"-inf\"))   # (B, Ty, Tx): padding gets -inf\n"
         "    weights = torch.softmax(energies, dim=-1)                           # (B, Ty, Tx): over source positions",
         "    weights = torch.softmax(energies, dim=-1) * mask[:, None, :]"))
mistake("ch08", "m3", "ch08_dot", "dot products as (dec * enc).sum(-1) (only works when Ty = Tx)",
        ("energies = dec @ enc.transpose(1, 2)", "energies = (dec * enc).sum(-1)"))
mistake("ch08", "m4", "ch08_scaled_dot", "scales by sqrt(dec.shape[1]) (Ty, not D)",
        ("D = dec.shape[-1]", "D = dec.shape[1]"))
mistake("ch08", "m5", "ch08_bilinear", "multiplies by W.T instead of W",
        ("energies = (dec @ W) @ enc.transpose(1, 2)", "energies = (dec @ W.T) @ enc.transpose(1, 2)"))
mistake("ch08", "m6", "ch08_reduced_rank", "forms W = U^T V and uses the bilinear score",
        ("    queries = dec @ U.T                          # (B, Ty, R): U d_t for every target step\n"
         "    keys = enc @ V.T                             # (B, Tx, R): V h_s for every source position, once\n"
         "    energies = queries @ keys.transpose(1, 2)    # (B, Ty, R) @ (B, R, Tx) -> (B, Ty, Tx)",
         "    energies = dec @ (U.T @ V) @ enc.transpose(1, 2)"))
mistake("ch08", "m7", "ch08_macs", "the keys of 'once' counted once per batch, not once per sentence",
        ("once = B * (keys + queries + dots)", "once = keys + B * (queries + dots)"))
mistake("ch08", "m8", "ch08_attend", "softmax over dim=1 (the target steps) instead of the source positions",
        ("weights = torch.softmax(energies, dim=-1)", "weights = torch.softmax(energies, dim=1)"))
variant("ch08", "ok1", "ch08_attend", "attend with -1e9 instead of -inf, contexts with einsum",
        code=("def attend(energies, values, mask):\n"
              "    e = energies.masked_fill(~mask.unsqueeze(1), -1e9)\n"
              "    w = e.softmax(dim=2)\n"
              "    return w, torch.einsum('bts,bsd->btd', w, values)\n"))
variant("ch08", "ok2", "ch08_macs", "reduced_rank_macs counted with loops",
        code=("def reduced_rank_macs(B, Tx, Ty, Dd, Dh, R):\n"
              "    once = per_step = 0\n"
              "    for _ in range(B):\n"
              "        once += Tx * R * Dh\n"
              "        for _ in range(Ty):\n"
              "            once += R * Dd + Tx * R\n"
              "            per_step += R * Dd + Tx * R * Dh + Tx * R\n"
              "    return once, per_step\n"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "m1", "ch09_encode", "d0 and c0 from h_n.reshape(B, 2H) (no permute, no cat)",
        ("d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1))", "d0 = model.W_h(h_n.reshape(src.shape[0], -1))"),
        ("c0 = model.W_c(torch.cat([c_n[1], c_n[0]], dim=-1))", "c0 = model.W_c(c_n.reshape(src.shape[0], -1))"))
mistake("ch09", "m2", "ch09_encode", "pad_packed_sequence without total_length",
        ("pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])", "pad_packed_sequence(out, batch_first=True)"))
mistake("ch09", "m3", "ch09_decode_step", "dropout before the tanh (tanh(dropout(W_u u)))",
        ("o = model.dropout(torch.tanh(model.W_u(u)))", "o = torch.tanh(model.dropout(model.W_u(u)))"))
mistake("ch09", "m4", "ch09_decode_step", "the context averages h_proj instead of h",
        ("a = torch.bmm(alpha.unsqueeze(1), h).squeeze(1)", "a = torch.bmm(alpha.unsqueeze(1), h_proj).squeeze(1)"))
mistake("ch09", "m5", "ch09_teacher_forcing", "the scores stacked along dim 0 (Ty, B, V)",
        ("model.W_vocab(torch.stack(outputs, dim=1))", "model.W_vocab(torch.stack(outputs, dim=0))"))
mistake("ch09", "m6", "ch09_masked_loss", "the loss averaged per sentence: a (B,) vector, not a scalar",
        ("    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)",
         "    ce = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction='none')   # (B, Ty)\n"
         "    mask = (tgt_out != PAD).float()\n"
         "    return (ce * mask).sum() / mask.sum(dim=1)"))
mistake("ch09", "m7", "ch09_beam_search", "keeps beam_size candidates whatever has finished",
        ("candidates[: beam_size - len(finished)]", "candidates[: beam_size]"))
mistake("ch09", "m8", "ch09_beam_search", "returns the finished hypotheses worst first",
        ("return sorted(finished, key=lambda hyp: -hyp[1])", "return sorted(finished, key=lambda hyp: hyp[1])"))
mistake("ch09", "m9", "ch09_beam_search", "scores kept as 0-d tensors (log_probs indexed, not .tolist())",
        ("for tok, lp in enumerate(log_probs.tolist()):", "for tok, lp in enumerate(log_probs):"))
mistake("ch09", "m10", "ch09_teacher_forcing", "the combined output is detached before it is fed back (o.detach())",
        ("        outputs.append(o)\n", "        outputs.append(o)\n        o = o.detach()\n"))
variant("ch09", "ok1", "ch09_masked_loss", "masked_loss as a sum over a mask divided by its count",
        code=("def masked_loss(logits, tgt_out):\n"
              "    logp = torch.log_softmax(logits, dim=-1)\n"
              "    nll = -logp.gather(2, tgt_out.unsqueeze(2)).squeeze(2)   # (B, Ty)\n"
              "    real = tgt_out != PAD\n"
              "    return nll[real].sum() / real.sum()\n"))
variant("ch09", "ok2", "ch09_decode_step", "decode_step with einsum",
        ("e = torch.bmm(h_proj, d.unsqueeze(2)).squeeze(2)", "e = torch.einsum('bsh,bh->bs', h_proj, d)"),
        ("a = torch.bmm(alpha.unsqueeze(1), h).squeeze(1)", "a = torch.einsum('bs,bsk->bk', alpha, h)"))

CASES = M + OK

# ------------------------------------------------------------------------------------------------------ verdicts
# Read from the message each student sees in Jupyter (the first failing test cell; student_view.json), judged by a
# person. P: points to the cause (a student reading only it knows what to change); Pa: partly (it locates the
# mistake -- its line, the quantity or the case -- but does not say what is wrong); N: not at all (only that the
# function's result differs); M: misleading (it names a cause that is not the one, or points at other code).
VERDICTS = {
    "ch01-m1": ("N", "the whole output differs; nothing says tanh vs relu"),
    "ch01-m2": ("P", "dimension 1 is off by one"),
    "ch01-m3": ("P", "PyTorch's 'hx should also be 3-D but got 2-D', at the student's line"),
    "ch01-m4": ("N", "the losses differ; nothing about the sampling"),
    "ch01-m5": ("N", "the losses differ; nothing about the learning rate"),
    "ch01-m6": ("-", "no visible test fails; a hidden test (stale gradients) takes the 2 points"),
    "ch02-m1": ("Pa", "broadcast error at the student's line; the generic hint (masks, states) does not apply"),
    "ch02-m2": ("P", "axes swapped: a transpose missing"),
    "ch02-m3": ("P", "h0 changed: writes into its input"),
    "ch02-m4": ("N", "the norms differ (norms[0] = sqrt(3), not sqrt(6)); no cause"),
    "ch02-m5": ("Pa", "names the total norm (17 vs 13), not why"),
    "ch03-m1": ("P", "cat error 'must match except in dimension 0' on the student's cat line"),
    "ch03-m2": ("Pa", "c passes, h differs: locates the h line"),
    "ch03-m3": ("N", "c differs; a single gate's weights mixed up is not recognised"),
    "ch03-m4": ("P", "blocks in the wrong order, gates in another order than the stated one"),
    "ch03-m5": ("P", "LSTMCell: hx expected 1D or 2D, got 3D, at the cell call"),
    "ch04-m1": ("Pa", "unpack error at the split line; the hint about a docstring does not apply"),
    "ch04-m2": ("N", "the whole output differs"),
    "ch04-m3": ("Pa", "unpack error (got 2) at the chunk line; the hint about a docstring does not apply"),
    "ch04-m4": ("N", "the whole output differs; a single block's slip is not recognised"),
    "ch04-m5": ("Pa", "the failing case is the one with bias=False"),
    "ch04-m6": ("Pa", "the failing case is the 2-layer GRU"),
    "ch05-m1": ("P", "gather: the index must have as many dimensions as x, at the gather line"),
    "ch05-m2": ("Pa", "broadcast error at the torch.where line; generic hint"),
    "ch05-m3": ("P", "every wrong entry is in the padded steps, expected 0"),
    "ch05-m4": ("M", "suggests 'a reshape/view where a transpose was needed'; the cause is cat instead of stack"),
    "ch05-m5": ("M", "error shown at the cat line with 'did a .squeeze() remove the batch axis of a batch of one?'; "
                     "the cause is the indexing line above (no arange: (B, B, H)), and the batch has 3 rows"),
    "ch05-m6": ("Pa", "broadcast error at the division line; generic hint"),
    "ch05-m7": ("P", "'outputs when no sequence fills T': dimension 1 off by one"),
    "ch05-m8": ("P", "matmul error at the head line: 8 features into a layer that takes 4"),
    "ch06-m1": ("Pa", "shows the vocabulary without c, d for min_freq=1"),
    "ch06-m2": ("N", "shows another order; nothing about counting per sequence"),
    "ch06-m3": ("P", "must be a Python list, got a tensor"),
    "ch06-m4": ("P", "padded must have dtype int64, got float32"),
    "ch06-m5": ("Pa", "PyTorch's expanded-size error at the copy line; the cause (T from the first row) is above"),
    "ch06-m6": ("P", "axes swapped (batch_first?)"),
    "ch06-m7": ("Pa", "logits have shape (2, 4) instead of (2, 9)"),
    "ch06-m8": ("Pa", "logits at step 1 differ: locates the start, no cause"),
    "ch06-m9": ("P", "every sequence has ended after 4 steps, but the loop ran 50"),
    "ch06-m10": ("Pa", "every row got row 0's tokens"),
    "ch07-m1": ("Pa", "unpack error (got 2) at the chunk line; the hint about a docstring does not apply"),
    "ch07-m2": ("Pa", "c passes, h differs: locates the h line"),
    "ch07-m3": ("P", "every wrong entry is in the padded positions, expected 0"),
    "ch07-m4": ("P", "the mask is used the wrong way round"),
    "ch07-m5": ("P", "padded positions must get exactly 0: -inf before the softmax"),
    "ch07-m6": ("M", "matmul error shown inside LSTMCell.forward (part 1, correct) with 'a .T missing ... or the "
                     "wrong matrix?'; the cause is the context summed over the features in the decoder"),
    "ch07-m7": ("P", "raw scores where log-probabilities are expected"),
    "ch07-m8": ("P", "axes swapped"),
    "ch07-m9": ("P", "stop as soon as EVERY sentence has produced <eos>: 6 steps instead of 3"),
    "ch08-m1": ("Pa", "broadcast error at the masked_fill line; the generic hint suggests [..., None], which is what "
                      "the student wrote"),
    "ch08-m2": ("P", "the padding was zeroed after the softmax"),
    "ch08-m3": ("Pa", "broadcast error at the student's line; generic hint"),
    "ch08-m4": ("N", "the weights differ; the scale by sqrt(Ty) is not recognised"),
    "ch08-m5": ("P", "matmul error at the line: a .T one too many"),
    "ch08-m6": ("P", "built a tensor as large as W = U^T V"),
    "ch08-m7": ("Pa", "names `once` (168 vs 228), not why"),
    "ch08-m8": ("P", "NaN: take the softmax over dimension 2 (source positions)"),
    "ch09-m1": ("Pa", "h passes, d0 differs: locates d0"),
    "ch09-m2": ("P", "pad_packed_sequence needs total_length"),
    "ch09-m3": ("P", "dropout after the tanh"),
    "ch09-m4": ("Pa", "matmul error at the W_u line (8 features instead of 12); the cause is the context line above"),
    "ch09-m5": ("P", "axes swapped"),
    "ch09-m6": ("P", "must be a 0-dim tensor, got shape (2,)"),
    "ch09-m7": ("Pa", "8 hypotheses instead of 3"),
    "ch09-m8": ("Pa", "the same hypotheses in reverse order, not said"),
    "ch09-m9": ("P", "the score must be a Python float, got a 0-dim tensor"),
    "ch09-m10": ("Pa", "the gradient with respect to d_0 differs: a gradient-flow problem, which one not said"),
}


# ------------------------------------------------------------------------------------------------------ running
def apply(case: Case, reference: str) -> str:
    if case.code is not None:
        return case.code
    code = reference
    for old, new in case.edits:
        n = code.count(old)
        if n != 1:
            raise ValueError(f"{case.name}: {old!r} occurs {n} times in the reference of {case.cell}")
        code = code.replace(old, new)
    return code


def gradebook(root: Path, assignment: str) -> str:
    """The gradebook entries generate_assignment would write: the assignment tests' own helper."""
    from test_autograder_assignments import _gradebook

    return _gradebook(root, assignment)


def build(assignment: str, root: Path) -> dict:
    """Write reference + every case of the assignment into root/submitted; returns {student: case or None}."""
    (src_path,) = nbgrader_cli.source_notebooks(assignment)
    source = nbgrader_cli.load(src_path)
    release = nbgrader_cli.load(nbgrader_cli.EXERCISES / assignment / src_path.name)
    refs = {nbgrader_cli.nbgrader_meta(c)["grade_id"]: nbgrader_cli.student_code(c.source)
            for c in source.cells if nbgrader_cli.is_solution_cell(c)}
    students = {f"{assignment}-reference": None}
    for case in CASES:
        if case.assignment == assignment:
            students[case.name] = case
    for student, case in students.items():
        overrides = {} if case is None else {case.cell: apply(case, refs[case.cell])}
        nb = nbgrader_cli.submission(release, source, overrides)
        folder = root / "submitted" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        import nbformat
        nbformat.write(nb, str(folder / src_path.name))
    return students


def grade(assignment: str, root: Path, workers: int, only=None) -> tuple[dict, float, subprocess.CompletedProcess]:
    (root / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(root)!r}\n"
        f"c.CourseDirectory.source_directory = {str(nbgrader_cli.SOLUTIONS)!r}\n"
        f"c.CourseDirectory.db_url = {gradebook(root, assignment)!r}\n")
    out = root / "out"
    cmd = [sys.executable, "-m", "autograder", "grade", assignment, "--submissions", str(root / "submitted"),
           "--config", str(root / "nbgrader_config.py"), "--out", str(out), "--feedback-dir", str(root / "feedback"),
           "--cache-dir", str(root / "cache"), "--workers", str(workers)]
    if only:
        cmd += ["--students", ",".join(only)]
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    return read_state(out / "state.jsonl"), time.monotonic() - t0, proc


def read_state(path: Path) -> dict:
    """The class grader's record: {student: the last record of that student}."""
    lines = path.read_text().splitlines() if path.exists() else []
    return {rec["student"]: rec for rec in map(json.loads, lines)}


def test_order(assignment: str) -> list:
    """The grade ids of the assignment's test cells, in notebook order."""
    (path,) = nbgrader_cli.source_notebooks(assignment)
    return [nbgrader_cli.nbgrader_meta(c)["grade_id"] for c in nbgrader_cli.load(path).cells
            if nbgrader_cli.is_autograded_test(c)]


def summarise(rec: dict, order: list) -> dict:
    """score, max, visible tests all passed?, the first failing visible test (notebook order) and its detail."""
    score = total = 0.0
    first, failed, hidden_failed = None, [], []
    for nb in rec.get("notebooks", {}).values():
        tests = nb.get("tests", {})
        for test, t in sorted(tests.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99):
            score += t["score"]
            total += t["max_score"]
            if t["score"] < t["max_score"]:
                failed.append(test)
                if t.get("hidden"):
                    hidden_failed.append(test)
                elif first is None:
                    first = (test, t.get("detail", ""))
    return {"score": score, "max": total, "visible_ok": first is None, "first_test": first[0] if first else None,
            "first_detail": first[1] if first else "", "failed": failed, "hidden_failed": hidden_failed,
            "status": rec.get("status"), "reason": rec.get("reason", "")}


def student_view(assignment: str, root: Path, only=None) -> dict:
    """Run every built submission as a student does in Jupyter (the student notebook: visible tests only, the
    student's own earlier parts), with nbclient, errors allowed; {student: {test: message or ""}} in cell order.
    The message is what the failing cell shows: the error's name and value (one line with explain_errors)."""
    import nbformat
    from nbclient import NotebookClient

    out = {}
    env_before = os.environ.get("NBGRADER_EXECUTION")
    os.environ["NBGRADER_EXECUTION"] = "validate"   # skip the long demo trainings (the test cells are unchanged)
    try:
        for folder in sorted((root / "submitted").iterdir()):
            if only and folder.name not in only:
                continue
            (path,) = list((folder / assignment).glob("*.ipynb"))
            nb = nbformat.read(str(path), as_version=4)
            client = NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                                    resources={"metadata": {"path": str(path.parent)}})
            t0 = time.monotonic()
            client.execute()
            tests = {}
            for cell in nb.cells:
                meta = nbgrader_cli.nbgrader_meta(cell)
                if not nbgrader_cli.is_autograded_test(cell):
                    continue
                msg = ""
                for o in cell.get("outputs", []):
                    if o.get("output_type") == "error":
                        msg = f"{o.get('ename')}: {o.get('evalue')}"
                        break
                    if o.get("output_type") == "stream" and o.get("name") == "stderr" and not msg:
                        msg = "stderr: " + o.get("text", "")
                tests[meta["grade_id"]] = msg
            out[folder.name] = tests
            print(f"  jupyter {folder.name:14s} {time.monotonic() - t0:.0f} s", flush=True)
    finally:
        if env_before is None:
            os.environ.pop("NBGRADER_EXECUTION", None)
        else:
            os.environ["NBGRADER_EXECUTION"] = env_before
    return out


def one_line(msg: str) -> str:
    """A message on one line, without the cell reference Jupyter adds."""
    return re.sub(r" \[this cell: Cell In\[\d+\], line \d+\]$", "", " ".join(msg.split()))


def grade_assignments(assignments, root: Path, only=None, fields=("score", "max", "visible_ok")) -> dict:
    """Grade each assignment's built submissions with the class grader, ONE run per assignment (``--workers 1``),
    in ``root/grade/<assignment>``; ``only`` (a list of submissions) grades just those. The ``fields`` of
    :func:`summarise` for every graded submission are added to ``root/scores.json`` after each assignment and
    returned."""
    scores_file = root / "scores.json"
    scores = json.loads(scores_file.read_text()) if scores_file.exists() else {}
    for a in assignments:
        ar = root / "grade" / a
        if ar.exists():
            shutil.rmtree(ar)
        students = build(a, ar)
        wanted = [s for s in only if s in students] if only else None
        if only and not wanted:
            continue
        records, seconds, proc = grade(a, ar, 1, wanted)
        print(f"{a}: graded in {seconds:.0f} s (exit {proc.returncode})", flush=True)
        if proc.returncode != 0:
            print(proc.stderr[-3000:], flush=True)
        order = test_order(a)
        for student, rec in sorted(records.items()):
            r = summarise(rec, order)
            scores[student] = {k: r[k] for k in fields}
            print(f"  {student:14s} {r['score']:g}/{r['max']:g} visible_ok={r['visible_ok']} "
                  f"first={r['first_test']}", flush=True)
        root.mkdir(parents=True, exist_ok=True)
        scores_file.write_text(json.dumps(scores, indent=1))
    return scores


def view_assignments(assignments, root: Path, only: list) -> dict:
    """Build and run the submissions of each assignment in Jupyter (:func:`student_view`), only the students in
    ``only`` when it is not empty; the views are added to ``root/student_view.json`` after each assignment and
    returned."""
    view_file = root / "student_view.json"
    views = json.loads(view_file.read_text()) if view_file.exists() else {}
    for a in assignments:
        wanted = [s for s in only if s.startswith(a + "-")] if only else None
        if only and not wanted:
            continue
        vr = root / "view" / a
        if vr.exists():
            shutil.rmtree(vr)
        build(a, vr)
        views.update(student_view(a, vr, wanted))
        root.mkdir(parents=True, exist_ok=True)
        view_file.write_text(json.dumps(views, indent=1))
    return views


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("assignments", nargs="*", default=sorted({c.assignment for c in CASES}))
    ap.add_argument("--root", default="/tmp/student_trial_22")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--students", default="", help="comma-separated submissions to (re)grade (default: all)")
    ap.add_argument("--table", action="store_true", help="print the markdown table from <root>/results.json")
    ap.add_argument("--student-view", action="store_true",
                    help="run the already built submissions in Jupyter (nbclient) and store what each test cell shows")
    args = ap.parse_args(argv)
    root = Path(args.root)
    results_file = root / "results.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {}
    if args.table:
        results = collect(root)
        results_file.write_text(json.dumps(results, indent=1))
        view_file = root / "student_view.json"
        views = json.loads(view_file.read_text()) if view_file.exists() else {}
        print(table(results, views))
        print()
        print("## The record against Jupyter")
        print()
        print(record_vs_jupyter(results, views))
        return
    if args.student_view:
        view_assignments(args.assignments, root, [x for x in args.students.split(",") if x])
        return
    for a in args.assignments:
        ar = root / a
        if ar.exists() and not args.students:
            shutil.rmtree(ar)          # a partial re-run (--students) keeps the other records in out/state.jsonl
        students = build(a, ar)
        only = [x for x in args.students.split(",") if x and x in students]
        if args.students and not only:
            continue
        records, seconds, proc = grade(a, ar, args.workers, only)
        print(f"{a}: {len(only) if only else len(students)} submissions graded in {seconds:.0f} s "
              f"(exit {proc.returncode})", flush=True)
        if proc.returncode != 0:
            print(proc.stderr[-3000:], flush=True)
        for student, case in students.items():
            rec = records.get(student)
            s = summarise(rec, test_order(a)) if rec else {"missing": True}
            s.update({"assignment": a, "cell": case.cell if case else None, "what": case.what if case else "reference",
                      "correct": True if case is None else case.correct,
                      "edits": case.edits if case else [], "code": case.code if case else None})
            results[student] = s
            if rec and (not only or student in only):
                print(f"  {student:14s} {s['score']:g}/{s['max']:g} visible_ok={s['visible_ok']} "
                      f"first={s['first_test']}: {s['first_detail'][:200]!r}", flush=True)
            else:
                print(f"  {student:14s} NOT GRADED", flush=True)
        results_file.write_text(json.dumps(results, indent=1))


def collect(root: Path) -> dict:
    """Every case's result, read again from each assignment's out/state.jsonl (the last record per student)."""
    results = {}
    for a in sorted({c.assignment for c in CASES}):
        records = read_state(root / a / "out" / "state.jsonl")
        cases = {f"{a}-reference": None, **{c.name: c for c in CASES if c.assignment == a}}
        for student, case in cases.items():
            if student not in records:
                continue
            s = summarise(records[student], test_order(a))
            s.update({"assignment": a, "cell": case.cell if case else None, "what": case.what if case else "reference",
                      "correct": True if case is None else case.correct,
                      "edits": case.edits if case else [], "code": case.code if case else None})
            results[student] = s
    return results


def _clean(msg: str) -> str:
    """A message without the cell reference Jupyter adds, on one line."""
    msg = " ".join(msg.split())
    return re.sub(r" \[this cell: Cell In\[\d+\], line \d+\]$", "", msg)


def table(results: dict, views: dict) -> str:
    """The markdown report: one row per mistake, the variants, the totals, the record against Jupyter."""
    rows = ["| id | exercise | mistake (one line) | score | visible tests catch it? | first message the student sees "
            "(shortened) | verdict |", "| --- | --- | --- | --- | --- | --- | --- |"]
    names = {"P": "points to the cause", "Pa": "partly", "N": "not at all", "M": "MISLEADING", "-": "(none)"}
    count = {k: 0 for k in names}
    full = passes_visible = graded = 0
    for case in M:
        r = results.get(case.name)
        if r is None:
            rows.append(f"| {case.name} | {case.assignment} | {case.what} | not graded | | | |")
            continue
        graded += 1
        view = views.get(case.name, {})
        order = test_order(case.assignment)
        failing = [t for t in order if view.get(t)]
        first = failing[0] if failing else None
        msg = _clean(view[first])[:260].replace("|", "\\|") if first else ""
        verdict, note = VERDICTS.get(case.name, ("?", ""))
        count[verdict] = count.get(verdict, 0) + 1
        full += r["score"] >= r["max"]
        passes_visible += r["visible_ok"] and r["score"] < r["max"]
        catch = "**no**" if r["visible_ok"] else f"yes ({first or r['first_test']})"
        rows.append(f"| {case.name} | {case.assignment} | {case.what} | {r['score']:g}/{r['max']:g} | {catch} | {msg} | "
                    f"{names[verdict]}: {note} |")
    judged = graded - count["-"]
    out = ["## Mistakes", "", *rows, "", "## Totals", "",
           f"- mistakes graded: {graded}",
           f"- full marks: {full}",
           f"- pass every visible test while losing points: {passes_visible}",
           f"- first messages (of the {judged} mistakes that a visible test catches): "
           + ", ".join(f"{names[k]} {count[k]} ({100 * count[k] / max(judged, 1):.0f}%)" for k in ("P", "Pa", "N", "M")),
           "", "## Correct variants", "", "| id | exercise | variant | score |", "| --- | --- | --- | --- |"]
    for case in OK:
        r = results.get(case.name)
        score = "not graded" if r is None else f"{r['score']:g}/{r['max']:g}"
        out.append(f"| {case.name} | {case.assignment} | {case.what} | {score} |")
    return "\n".join(out)


def record_vs_jupyter(results: dict, views: dict) -> str:
    """For every mistake: is the first failing visible test the same in the record and in Jupyter, and is the
    record's detail the message Jupyter shows?"""
    same, shorter, redacted, differs, lines = 0, 0, 0, 0, []
    for case in M:
        r, view = results.get(case.name), views.get(case.name)
        if not r or not view or r["visible_ok"]:
            continue
        order = test_order(case.assignment)
        first = next((t for t in order if view.get(t)), None)
        jup = _clean(view.get(first, ""))
        rec = " ".join(r["first_detail"].split())
        core = re.sub(r"^(\w+Error )?\(line \d+\): |^line \d+: ", "", rec)
        if "details are hidden" in rec:
            redacted += 1
            kind = "record: details hidden"
        elif core and core in jup and "at your line" in jup:
            shorter += 1
            kind = "same error text; the record has the test cell's line, Jupyter the student's line and a hint"
        elif core and core in jup:
            same += 1
            kind = "same"
        else:
            differs += 1
            kind = "differs"
        lines.append(f"| {case.name} | {r['first_test']} | {first} | {kind} | {rec[:120].replace('|', '/')} | "
                     f"{jup[:120].replace('|', '/')} |")
    return "\n".join([f"same text: {same}; same error text, but without the student's line and hint: {shorter}; "
                      f"the record hides the details: {redacted}; other text: {differs}", "",
                      "| mistake | first failing visible test (record) | (Jupyter) | record detail vs Jupyter | "
                      "record detail (shortened) | Jupyter (shortened) |", "| --- | --- | --- | --- | --- | --- |", *lines])


if __name__ == "__main__":
    main()
