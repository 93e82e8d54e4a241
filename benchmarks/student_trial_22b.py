"""Student trial 22b: a second set of realistic mistakes and correct variants, graded by the class grader.

Written for issue 22's acceptance ("a new student trial, different mistakes, written by someone who has not seen
these"). The list was written from the student notebooks and the chapters alone and committed before solutions/
was read (benchmarks/results/student_trial_22b_plan.md, commit dd4a023); the items that repeated the previous
trial's mistakes were then replaced (the plan's table). Each mistake is ONE edit of the reference solution of one
cell (``(old, new)`` pairs, each ``old`` found exactly once); each correct variant rewrites a cell another way and
must keep full marks.

The machinery is benchmarks/student_trial.py's (building the submissions with tests/nbgrader_cli.submission,
grading each assignment in ONE run of ``python -m autograder grade --workers 1``, reading ``out/state.jsonl``,
running the same submissions in Jupyter with nbclient); only the cases and the verdicts are this file's.

    nice -n 5 .venv/bin/python benchmarks/student_trial_22b.py [ch01 ...] [--root /tmp/student_trial_22b]  # grade
    nice -n 5 .venv/bin/python benchmarks/student_trial_22b.py --student-view --students ch01-M1,...       # Jupyter
    .venv/bin/python benchmarks/student_trial_22b.py --table            # the tables of student_trial_22b.md
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (the previous trial's machinery; its own cases are not used)

M, OK, mistake, variant = st.registry()


# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "M1", "ch01_many_to_one", "ManyToOne classifies from h_n without removing its layer axis: head(h_n)",
        ("return self.head(outputs[:, -1])", "return self.head(h_n)"))
mistake("ch01", "M2", "ch01_many_to_many_sync", "ManyToManySync flattens the outputs for the head, never reshapes back",
        ("return self.head(outputs) ", "return self.head(outputs.reshape(-1, outputs.shape[-1])) "))
mistake("ch01", "M3", "ch01_one_to_many", "OneToMany builds its RNN without batch_first=True",
        ("self.rnn = nn.RNN(input_size, hidden_size, batch_first=True)", "self.rnn = nn.RNN(input_size, hidden_size)"))
mistake("ch01", "M4", "ch01_many_to_many_async", "copy-paste slip: the decoder RNN is built with src_size",
        ("\n        self.decoder = nn.RNN(tgt_size, hidden_size, batch_first=True)",
         "\n        self.decoder = nn.RNN(src_size, hidden_size, batch_first=True)"))
mistake("ch01", "M5", "ch01_train_step", "train_step returns loss.detach() (a 0-d tensor), not a float",
        ("return loss.item()", "return loss.detach()"))
mistake("ch01", "M6", "ch01_fit", "fit indexes the inputs but not the labels: train_step(..., x[idx], y)",
        ("train_step(model, optimizer, x[idx], y[idx])", "train_step(model, optimizer, x[idx], y)"))
variant("ch01", "V1", "ch01_many_to_one", "ManyToOne with an explicit zero h0 and h_n.squeeze(0)",
        ("outputs, h_n = self.rnn(x)", "outputs, h_n = self.rnn(x, x.new_zeros(1, x.shape[0], self.rnn.hidden_size))"),
        ("return self.head(outputs[:, -1])", "return self.head(h_n.squeeze(0))"))
variant("ch01", "V2", "ch01_one_to_many", "OneToMany one step at a time in a Python loop, carrying h",
        code=("class OneToMany(nn.Module):\n"
              "    def __init__(self, input_size, hidden_size, num_classes):\n"
              "        super().__init__()\n"
              "        self.rnn = nn.RNN(input_size, hidden_size, batch_first=True)\n"
              "        self.head = nn.Linear(hidden_size, num_classes)\n"
              "\n"
              "    def forward(self, x, steps):\n"
              "        h = None\n"
              "        outs = []\n"
              "        step_input = x.unsqueeze(1)                  # (B, 1, D)\n"
              "        for t in range(steps):\n"
              "            out, h = self.rnn(step_input, h)\n"
              "            outs.append(self.head(out[:, 0]))\n"
              "            step_input = torch.zeros_like(step_input)\n"
              "        return torch.stack(outs, dim=1)\n"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "M1", "ch02_rnn_cell", "rnn_cell: x_t @ W_hx without .T (W_hx is (H, D))",
        ("x_t @ W_hx.T", "x_t @ W_hx"))
mistake("ch02", "M2", "ch02_rnn_layer", "the zero initial state sized with W_hx.shape[1] (D, not H)",
        ("x.new_zeros(B, W_hh.shape[0])", "x.new_zeros(B, W_hx.shape[1])"))
mistake("ch02", "M3", "ch02_rnn_layer", "the states joined with torch.cat(dim=1) instead of torch.stack",
        ("outputs = torch.stack(outputs, dim=1)", "outputs = torch.cat(outputs, dim=1)"))
mistake("ch02", "M4", "ch02_bptt_gradient_norms", "off by one: the backward loop stops at t = 1 (T norms, not T + 1)",
        ("for t in range(states.shape[1] - 1, -1, -1):", "for t in range(states.shape[1] - 1, 0, -1):"))
mistake("ch02", "M5", "ch02_bptt_gradient_norms", "returns the Python list of 0-d norms, not a tensor",
        ("return torch.stack(norms)", "return norms"))
mistake("ch02", "M6", "ch02_clip_grad_norm", "does not skip parameters whose .grad is None",
        ("grads = [p.grad for p in parameters if p.grad is not None]", "grads = [p.grad for p in parameters]"))
variant("ch02", "V1", "ch02_rnn_cell", "rnn_cell with torch.einsum",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)",
         "return torch.tanh(torch.einsum('bh,kh->bk', h_prev, W_hh) + torch.einsum('bd,kd->bk', x_t, W_hx) + b_h)"))
variant("ch02", "V2", "ch02_clip_grad_norm", "clip_grad_norm: one vector_norm of the concatenated gradients, a clamped scale",
        code=("def clip_grad_norm(parameters, max_norm):\n"
              "    grads = [p.grad for p in parameters if p.grad is not None]\n"
              "    total_norm = torch.linalg.vector_norm(torch.cat([g.detach().flatten() for g in grads]))\n"
              "    scale = torch.clamp(max_norm / (total_norm + 1e-6), max=1.0)\n"
              "    for g in grads:\n"
              "        g.mul_(scale)\n"
              "    return total_norm\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "M1", "ch03_lstm_cell", "the candidate squashed twice: c = f * c_prev + i * tanh(g)",
        ("c = f * c_prev + i * g", "c = f * c_prev + i * torch.tanh(g)"))
mistake("ch03", "M2", "ch03_lstm_cell", "copy-paste slip: the forget gate adds b['i']",
        ('f = torch.sigmoid(hx @ W["f"].T + b["f"])', 'f = torch.sigmoid(hx @ W["f"].T + b["i"])'))
mistake("ch03", "M3", "ch03_lstm_cell_nobias", "the cell updated in place: c = c_prev.mul_(f).add_(i * g)",
        ("c = f * c_prev + i * g", "c = c_prev.mul_(f).add_(i * g)"))
mistake("ch03", "M4", "ch03_split_gates", "the stacked input weights chunked along dim=1",
        ("Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))", "Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=1)))"))
mistake("ch03", "M5", "ch03_split_gates", "forgets the no-bias case (always builds b from bias_ih + bias_hh)",
        ("    if not cell.bias:\n        return Wx, Wh, None\n", ""))
mistake("ch03", "M6", "ch03_lstm_layer", "returns the final states as (B, H), without unsqueeze(0)",
        ("(h.unsqueeze(0), c.unsqueeze(0))", "(h, c)"))
variant("ch03", "V1", "ch03_lstm_cell", "lstm_cell with each W[k] cut into its hidden and input halves",
        code=("def lstm_cell(x, h_prev, c_prev, W, b):\n"
              "    H = h_prev.shape[1]\n"
              "    pre = {k: h_prev @ W[k][:, :H].T + x @ W[k][:, H:].T + b[k] for k in 'ifgo'}\n"
              "    i, f, o = (torch.sigmoid(pre[k]) for k in 'ifo')\n"
              "    g = torch.tanh(pre['g'])\n"
              "    c = f * c_prev + i * g\n"
              "    return o * torch.tanh(c), c\n"))
variant("ch03", "V2", "ch03_lstm_layer", "lstm_layer over x.unbind(1), states returned as h[None]",
        code=("def lstm_layer(cell, x, hidden_size, state=None):\n"
              "    B = x.shape[0]\n"
              "    if state is None:\n"
              "        h = torch.zeros(B, hidden_size, dtype=x.dtype)\n"
              "        c = torch.zeros(B, hidden_size, dtype=x.dtype)\n"
              "    else:\n"
              "        h, c = state[0][0], state[1][0]\n"
              "    hs = []\n"
              "    for x_t in x.unbind(1):\n"
              "        h, c = cell(x_t, (h, c))\n"
              "        hs.append(h)\n"
              "    return torch.stack(hs, 1), (h[None], c[None])\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "M1", "ch04_gru_cell_textbook", "the candidate's product without the transpose: (r * h) @ W_nh",
        ("(r * h) @ W_nh.T", "(r * h) @ W_nh"))
mistake("ch04", "M2", "ch04_gru_cell_textbook", "the candidate's bias b_n left out",
        ("(r * h) @ W_nh.T + b_n)", "(r * h) @ W_nh.T)"))
mistake("ch04", "M3", "ch04_gru_cell_pytorch", "bias_hh forgotten: gh = h @ weight_hh.T",
        ("gh = h @ weight_hh.T + bias_hh", "gh = h @ weight_hh.T"))
mistake("ch04", "M4", "ch04_gru_cell_pytorch", "in-place update that writes into the argument h (out = h; out *= z; ...)",
        ("    return (1 - z) * n + z * h", "    out = h\n    out *= z\n    out += (1 - z) * n\n    return out"))
mistake("ch04", "M5", "ch04_count_parameters", "blocks = 4 if kind == 'lstm' else 3 (a vanilla RNN counted as 3 blocks)",
        ('blocks = {"rnn": 1, "lstm": 4, "gru": 3}[kind]', 'blocks = 4 if kind == "lstm" else 3'))
mistake("ch04", "M6", "ch04_count_parameters", "a bidirectional module's FIRST layer read as input_size * 2",
        ("layer_input = input_size if layer == 0 else hidden_size * directions",
         "layer_input = input_size * directions if layer == 0 else hidden_size * directions"))
variant("ch04", "V1", "ch04_gru_cell_textbook", "textbook GRU in the concatenated form ([x; h] and [x; r*h])",
        code=("def gru_cell_textbook(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    H = h.shape[1]\n"
              "    b = bias_ih + bias_hh\n"
              "    W_gates = torch.cat([weight_ih[:2 * H], weight_hh[:2 * H]], dim=1)     # (2H, D + H)\n"
              "    r, z = torch.sigmoid(torch.cat([x, h], dim=1) @ W_gates.T + b[:2 * H]).chunk(2, dim=1)\n"
              "    W_cand = torch.cat([weight_ih[2 * H:], weight_hh[2 * H:]], dim=1)      # (H, D + H)\n"
              "    h_tilde = torch.tanh(torch.cat([x, r * h], dim=1) @ W_cand.T + b[2 * H:])\n"
              "    return h + (1 - z) * (h_tilde - h)\n"))
variant("ch04", "V2", "ch04_count_parameters", "count_parameters listing every tensor's shape, as PyTorch names them",
        code=("import math\n"
              "\n"
              "def count_parameters(kind, input_size, hidden_size, num_layers=1, bias=True, bidirectional=False):\n"
              "    rows = {'rnn': 1, 'gru': 3, 'lstm': 4}[kind] * hidden_size\n"
              "    shapes = {}\n"
              "    for layer in range(num_layers):\n"
              "        for suffix in (['', '_reverse'] if bidirectional else ['']):\n"
              "            d_in = input_size if layer == 0 else hidden_size * (2 if bidirectional else 1)\n"
              "            shapes[f'weight_ih_l{layer}{suffix}'] = (rows, d_in)\n"
              "            shapes[f'weight_hh_l{layer}{suffix}'] = (rows, hidden_size)\n"
              "            if bias:\n"
              "                shapes[f'bias_ih_l{layer}{suffix}'] = (rows,)\n"
              "                shapes[f'bias_hh_l{layer}{suffix}'] = (rows,)\n"
              "    return sum(math.prod(s) for s in shapes.values())\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "M1", "ch05_reverse_padded", "the gather index expanded for exactly 3 dimensions (a 2-D x fails)",
        ("idx = idx.reshape(B, T, *([1] * (x.dim() - 2))).expand_as(x)", "idx = idx.unsqueeze(-1).expand(-1, -1, x.shape[2])"))
mistake("ch05", "M2", "ch05_lstm_direction", "h kept at padded steps, but the cell state c always updated (c = c_new)",
        ("c = torch.where(real, c_new, c)", "c = c_new"))
mistake("ch05", "M3", "ch05_bilstm_from_cells", "copy-paste slip: c_n = stack([c_f, c_f])",
        ("torch.stack([c_f, c_b])", "torch.stack([c_f, c_f])"))
mistake("ch05", "M4", "ch05_final_states", "H = two_h / 2 (a float) used to slice",
        ("H = two_h // 2", "H = two_h / 2"))
mistake("ch05", "M5", "ch05_masked_mean", "divides by the number of real steps of the whole batch, mask.sum()",
        ("return total / lengths.unsqueeze(1).to(outputs.dtype)", "return total / mask.sum()"))
mistake("ch05", "M6", "ch05_residual_stack", "keeps each layer's (1, B, H) h_n, c_n and stacks them: (L, 1, B, H)",
        ("hs.append(h_n[0])", "hs.append(h_n)"), ("cs.append(c_n[0])", "cs.append(c_n)"))
variant("ch05", "V1", "ch05_reverse_padded", "reverse_padded with advanced indexing (no gather)",
        code=("def reverse_padded(x, lengths):\n"
              "    B, T = x.shape[:2]\n"
              "    t = torch.arange(T)[None, :]                 # (1, T)\n"
              "    L = lengths[:, None]                         # (B, 1)\n"
              "    idx = torch.where(t < L, L - 1 - t, t)       # (B, T)\n"
              "    return x[torch.arange(B)[:, None], idx]\n"))
variant("ch05", "V2", "ch05_masked_mean", "masked_mean from a cumulative sum read at lengths - 1",
        code=("def masked_mean(outputs, lengths):\n"
              "    csum = outputs.cumsum(dim=1)                                   # (B, T, F)\n"
              "    total = csum[torch.arange(outputs.shape[0]), lengths - 1]      # (B, F)\n"
              "    return total / lengths[:, None].to(outputs.dtype)\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "M1", "ch06_build_vocab", "sorted by (count, token) with reverse=True: ties in reverse alphabetical order",
        ("kept.sort(key=lambda token: (-counts[token], token))",
         "kept.sort(key=lambda token: (counts[token], token), reverse=True)"))
mistake("ch06", "M2", "ch06_numericalize", "unknown tokens map to UNK (the string '<unk>'), not UNK_INDEX",
        ("stoi.get(token, UNK_INDEX)", "stoi.get(token, UNK)"))
mistake("ch06", "M3", "ch06_encoder", "off by one: the final state read from outputs at src_lengths, not src_lengths - 1",
        ("return outputs, h_n[0]", "return outputs, outputs[torch.arange(src.shape[0]), src_lengths]"))
mistake("ch06", "M4", "ch06_decoder", "the GRU cell's arguments swapped: self.cell(d_prev, embedded)",
        ("d = self.cell(self.embedding(y_prev), d_prev)", "d = self.cell(d_prev, self.embedding(y_prev))"))
mistake("ch06", "M5", "ch06_teacher_forced_loss", "the decoder state is never updated (logits, _ = decoder.step(...))",
        ("step_logits, d = decoder.step(dec_in[:, t], d)", "step_logits, _ = decoder.step(dec_in[:, t], d)"))
mistake("ch06", "M6", "ch06_greedy_decode", "stops as soon as ANY sequence has produced <eos>",
        ("if all(finished):", "if any(finished):"))
variant("ch06", "V1", "ch06_build_vocab", "build_vocab with a plain dict and sorted(items)",
        code=("def build_vocab(sequences, min_freq=1):\n"
              "    counts = {}\n"
              "    for seq in sequences:\n"
              "        for tok in seq:\n"
              "            counts[tok] = counts.get(tok, 0) + 1\n"
              "    kept = sorted(((tok, n) for tok, n in counts.items() if n >= min_freq), key=lambda kv: (-kv[1], kv[0]))\n"
              "    return list(SPECIALS) + [tok for tok, _ in kept]\n"))
variant("ch06", "V2", "ch06_greedy_decode", "greedy_decode writing into a (B, max_len) tensor prefilled with <eos>",
        code=("def greedy_decode(encoder, decoder, src, src_lengths, max_len):\n"
              "    B = src.shape[0]\n"
              "    with torch.no_grad():\n"
              "        _, d = encoder(src, src_lengths)\n"
              "        out = torch.full((B, max_len), EOS_INDEX, dtype=torch.long)\n"
              "        y = torch.full((B,), SOS_INDEX, dtype=torch.long)\n"
              "        done = torch.zeros(B, dtype=torch.bool)\n"
              "        for t in range(max_len):\n"
              "            logits, d = decoder.step(y, d)\n"
              "            y = logits.argmax(dim=-1)\n"
              "            out[:, t] = torch.where(done, torch.full_like(y, EOS_INDEX), y)\n"
              "            done = done | (y == EOS_INDEX)\n"
              "            if bool(done.all()):\n"
              "                break\n"
              "    result = []\n"
              "    for row in out.tolist():\n"
              "        result.append(row[: row.index(EOS_INDEX)] if EOS_INDEX in row else row)\n"
              "    return result\n"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "M1", "ch07_lstm_cell", "the forget-gate term left out: c = i * g",
        ("c = f * c_prev + i * g", "c = i * g"))
mistake("ch07", "M2", "ch07_lstm_cell", "W and U swapped: self.W(h_prev) + self.U(x)",
        ("z = self.W(x) + self.U(h_prev)", "z = self.W(h_prev) + self.U(x)"))
mistake("ch07", "M3", "ch07_encoder", "fc given [h_right; h_left] instead of [h_left; h_right]",
        ("hidden = self.fc(torch.cat([h_left, h_right], dim=-1))", "hidden = self.fc(torch.cat([h_right, h_left], dim=-1))"))
mistake("ch07", "M4", "ch07_attention", "the mask always applied (no `if mask is not None`): mask=None fails",
        ("        if mask is not None:\n            scores = scores.masked_fill(~mask, float(\"-inf\"))",
         "        scores = scores.masked_fill(~mask, float(\"-inf\"))"))
mistake("ch07", "M5", "ch07_decoder", "the decoder calls its attention without the mask",
        ("weights = self.attention(h_prev, encoder_outputs, mask)", "weights = self.attention(h_prev, encoder_outputs)"))
mistake("ch07", "M6", "ch07_greedy", "off by one: the tokens keep their <eos> (row[: index(eos) + 1])",
        ("row[: row.index(eos_index)]", "row[: row.index(eos_index) + 1]"))
variant("ch07", "V1", "ch07_attention", "Attention with a hand-written masked softmax (shift, exp, times mask, normalise)",
        code=("class Attention(nn.Module):\n"
              "    \"\"\"Additive attention in its concatenated form (the constructor is given).\"\"\"\n"
              "\n"
              "    def __init__(self, enc_size, dec_size, attn_size):\n"
              "        super().__init__()\n"
              "        self.Attn = nn.Linear(dec_size + enc_size, attn_size)   # [W_d W_h], b\n"
              "        self.v = nn.Parameter(torch.rand(attn_size) - 0.5)      # v\n"
              "\n"
              "    def forward(self, hidden, encoder_outputs, mask=None):\n"
              "        B, Tx, _ = encoder_outputs.shape\n"
              "        pairs = torch.cat([hidden.unsqueeze(1).repeat(1, Tx, 1), encoder_outputs], dim=2)\n"
              "        scores = (torch.tanh(self.Attn(pairs)) * self.v).sum(dim=2)          # (B, Tx)\n"
              "        keep = torch.ones_like(scores) if mask is None else mask.to(scores.dtype)\n"
              "        shifted = scores - (scores + (keep - 1) * 1e9).max(dim=1, keepdim=True).values\n"
              "        w = torch.exp(shifted) * keep\n"
              "        return w / w.sum(dim=1, keepdim=True)\n"))
variant("ch07", "V2", "ch07_greedy", "greedy_translate cutting the tokens with a cumulative sum of <eos> flags",
        code=("@torch.no_grad()\n"
              "def greedy_translate(model, src, src_lengths, max_len, sos_index=1, eos_index=2):\n"
              "    memory, state = model.encode(src, src_lengths)\n"
              "    y = torch.full((src.shape[0],), sos_index, dtype=torch.long)\n"
              "    steps, weights = [], []\n"
              "    for _ in range(max_len):\n"
              "        log_probs, state = model.decode_step(y, state, memory)\n"
              "        y = log_probs.argmax(dim=-1)\n"
              "        steps.append(y)\n"
              "        weights.append(model.last_weights)\n"
              "        if bool(((torch.stack(steps, dim=1) == eos_index).cumsum(dim=1) > 0)[:, -1].all()):\n"
              "            break\n"
              "    seq = torch.stack(steps, dim=1)                       # (B, steps)\n"
              "    ended = (seq == eos_index).cumsum(dim=1) > 0          # True from the first <eos> on\n"
              "    tokens = [[int(t) for t, e in zip(row, end) if not e] for row, end in zip(seq.tolist(), ended.tolist())]\n"
              "    return tokens, torch.stack(weights, dim=1)\n"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "M1", "ch08_attend", "the weights from F.log_softmax instead of a softmax",
        ("weights = torch.softmax(energies, dim=-1)", "weights = F.log_softmax(energies, dim=-1)"))
mistake("ch08", "M2", "ch08_attend", "masked_fill_ in place: writes -inf into the argument energies",
        ("energies = energies.masked_fill(~mask", "energies = energies.masked_fill_(~mask"))
mistake("ch08", "M3", "ch08_scaled_dot", "operator precedence: / D ** 1/2 (that is D / 2, not sqrt(D))",
        ("/ math.sqrt(D)", "/ D ** 1/2"))
mistake("ch08", "M4", "ch08_bilinear", "the encoder states not transposed: (dec @ W) @ enc",
        ("energies = (dec @ W) @ enc.transpose(1, 2)", "energies = (dec @ W) @ enc"))
mistake("ch08", "M5", "ch08_reduced_rank", "the contexts average the keys V h_s: attend(energies, keys, mask)",
        ("return attend(energies, enc, mask)", "return attend(energies, keys, mask)"))
mistake("ch08", "M6", "ch08_macs", "per_step counts ONE key per step (R * Dh) instead of Tx keys",
        ("per_step = B * (Ty * keys + queries + dots)", "per_step = B * (Ty * R * Dh + queries + dots)"))
variant("ch08", "V1", "ch08_attend", "attend in float64 with torch.where, cast back",
        code=("def attend(energies, values, mask):\n"
              "    minus_inf = torch.tensor(float('-inf'), dtype=torch.float64)\n"
              "    e = torch.where(mask[:, None, :], energies.double(), minus_inf)\n"
              "    weights = torch.softmax(e, dim=2)\n"
              "    contexts = weights @ values.double()\n"
              "    return weights.to(energies.dtype), contexts.to(values.dtype)\n"))
variant("ch08", "V2", "ch08_macs", "per_step written as once + the keys of the Ty - 1 other steps",
        ("per_step = B * (Ty * keys + queries + dots)", "per_step = once + B * (Ty - 1) * Tx * R * Dh"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "M1", "ch09_encode", "copy-paste slip: c_0 projected with W_h instead of W_c",
        ("c0 = model.W_c(", "c0 = model.W_h("))
mistake("ch09", "M2", "ch09_decode_step", "u_t built with the OLD state: cat([a, state[0]])",
        ("u = torch.cat([a, d], dim=-1)", "u = torch.cat([a, state[0]], dim=-1)"))
mistake("ch09", "M3", "ch09_decode_step", "returns the masked energies e instead of alpha",
        ("return (d, c), o, alpha", "return (d, c), o, e"))
mistake("ch09", "M4", "ch09_teacher_forcing", "off by one: the loop runs range(Ty - 1)",
        ("for t in range(tgt_in.shape[1]):", "for t in range(tgt_in.shape[1] - 1):"))
mistake("ch09", "M5", "ch09_masked_loss", "label_smoothing=0.1 added (copied from a tutorial)",
        ("ignore_index=PAD)", "ignore_index=PAD, label_smoothing=0.1)"))
mistake("ch09", "M6", "ch09_beam_search", "a finished hypothesis keeps its <eos> token",
        ("finished.append((tokens[:-1], score", "finished.append((tokens, score"))
variant("ch09", "V1", "ch09_masked_loss", "masked_loss with cross_entropy's K-dimensional form (B, V, Ty)",
        ("F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)",
         "F.cross_entropy(logits.permute(0, 2, 1), tgt_out, ignore_index=PAD)"))
variant("ch09", "V2", "ch09_decode_step", "decode_step with broadcast products and sums instead of bmm",
        ("e = torch.bmm(h_proj, d.unsqueeze(2)).squeeze(2)", "e = (h_proj * d[:, None, :]).sum(dim=-1)"),
        ("a = torch.bmm(alpha.unsqueeze(1), h).squeeze(1)", "a = (alpha[:, :, None] * h).sum(dim=1)"))

CASES = M + OK

# ------------------------------------------------------------------------------------------------------ verdicts
# The rule (strict): read ONLY the first failing visible test's message, as the student sees it in Jupyter.
# P  points to the cause: a student reading only it knows what to change in their code (it names the mistake, or it is
#    an error at the student's own line whose text states what is wrong there);
# Pa partly: it locates the mistake (the line, the quantity, the failing case) without saying what is wrong, or names
#    a cause close to the real one;
# N  not at all: only that a result differs (or a generic hint that does not apply);
# M  misleading: it names a wrong cause, or blames code that is right.
# "-": no visible test fails. Filled in after reading student_view.json / the records.
VERDICTS: dict[str, tuple[str, str]] = {
    "ch01-M1": ("P", "an extra dimension of size 1: index it with [0]"),
    "ch01-M2": ("P", "axes 0 and 1 merged: a flatten/reshape too many"),
    "ch01-M3": ("N", "the values differ; nothing about batch_first"),
    "ch01-M4": ("P", "at the decoder call: the decoder expects 3 features, tgt has 8 (its input size is wrong)"),
    "ch01-M5": ("P", "must be a Python float, got a 0-dim tensor (.item())"),
    "ch01-M6": ("M", "shown at train_step's cross_entropy line (part 5, correct); the cause, y not indexed in fit, is "
                     "not named (the record even files it as a hidden failure)"),
    "ch02-M1": ("P", "matmul error at the student's line: a .T missing"),
    "ch02-M2": ("M", "shown at rnn_cell's line (part 1, correct) with 'a .T missing or one too many, or the wrong "
                     "matrix?'; the cause is rnn_layer's zero state of size D (the record files it as hidden)"),
    "ch02-M3": ("P", "axes merged: cat where stack was needed"),
    "ch02-M4": ("P", "dimension 0 off by one (4 instead of 5)"),
    "ch02-M5": ("P", "must be a torch.Tensor, got a list"),
    "ch02-M6": ("P", "at the student's line: g is None (p.grad may be None)"),
    "ch03-M1": ("N", "c differs; a candidate squashed twice is not recognised"),
    "ch03-M2": ("P", "the forget gate computed with the input gate's b (copy-paste slip)"),
    "ch03-M3": ("P", "wrote into its argument c_prev (in place)"),
    "ch03-M4": ("P", "chunk dimension 0"),
    "ch03-M5": ("P", "at the student's line: the biases are None (a cell without biases)"),
    "ch03-M6": ("P", "a dimension of size 1 is missing (unsqueeze it)"),
    "ch04-M1": ("N", "the whole output differs; a missing transpose of the square W_nh is not recognised"),
    "ch04-M2": ("N", "the whole output differs; a missing bias is not recognised"),
    "ch04-M3": ("N", "the whole output differs; a missing bias_hh is not recognised"),
    "ch04-M4": ("P", "wrote into its argument h (in place)"),
    "ch04-M5": ("Pa", "names the failing case ('rnn', 640 expected, 1920 got), not why"),
    "ch04-M6": ("Pa", "names the failing case (2-layer bidirectional LSTM), not why"),
    "ch05-M1": ("Pa", "at the student's line, 'tuple index out of range': x has no dimension 2; no hint"),
    "ch05-M2": ("Pa", "c_n of the padded sequence differs (h_n passes), nothing about masking c"),
    "ch05-M3": ("Pa", "c_n differs only in the backward direction; not why"),
    "ch05-M4": ("P", "at the student's line: slice indices must be integers (H is a float)"),
    "ch05-M5": ("P", "each row off by its own factor: divided by the wrong count"),
    "ch05-M6": ("P", "an extra dimension of size 1 in h_n (index it with [0])"),
    "ch06-M1": ("M", "says the ties are 'in the order of the data'; the student sorted them in reverse alphabetical "
                     "order (it does say alphabetical order is wanted)"),
    "ch06-M2": ("P", "must be a Python int, got a str"),
    "ch06-M3": ("P", "at the student's line: index 5 out of bounds for size 5 (off by one)"),
    "ch06-M4": ("P", "at the student's line: the cell's input got 4 features, expected 3 (arguments swapped)"),
    "ch06-M5": ("Pa", "step 1 passes, step 2 differs: locates the state carried between steps, not said"),
    "ch06-M6": ("Pa", "every row stopped early; not why"),
    "ch07-M1": ("N", "c differs; a missing forget-gate term is not recognised"),
    "ch07-M2": ("P", "matmul error at the student's line: 'or the wrong matrix?'"),
    "ch07-M3": ("N", "hidden differs; the two halves given to fc in the wrong order are not recognised"),
    "ch07-M4": ("P", "at the student's line: mask is None (does the docstring allow mask=None?)"),
    "ch07-M5": ("M", "'set their energies to -inf before the softmax' points at the attention (correct); the cause is "
                     "the decoder calling it without the mask"),
    "ch07-M6": ("P", "the tokens keep a trailing <eos> (2), the test name says 'without its <eos>'"),
    "ch08-M1": ("P", "the weights do not sum to 1 (is it a softmax?)"),
    "ch08-M2": ("P", "wrote into its argument energies (masked_fill_)"),
    "ch08-M3": ("P", "a softmax of the expected energies times 0.2236: a scale of the wrong size"),
    "ch08-M4": ("Pa", "bmm size error at the student's line; no hint that enc needs a transpose"),
    "ch08-M5": ("P", "the contexts must average h_s, not V h_s (the name says it)"),
    "ch08-M6": ("P", "the keys counted Tx times too rarely"),
    "ch09-M1": ("Pa", "d0 passes, c0 = W_c [...] differs: locates c0, not the W_h slip"),
    "ch09-M2": ("Pa", "d_1, c_1, alpha_1 pass, o_1 differs: locates o_1, not which input"),
    "ch09-M3": ("P", "alpha does not sum to 1 (is it a softmax?)"),
    "ch09-M4": ("P", "dimension 1 off by one (3 instead of 4)"),
    "ch09-M5": ("N", "the loss differs slightly (1.7486 vs 1.7385); nothing about label smoothing"),
    "ch09-M6": ("P", "the hypothesis keeps a trailing <eos> (2)"),
}

# The same mistakes graded BEFORE the message work merged for the trial (main at d3e5d23, the worktree's base), judged
# by the same rule from the Jupyter runs (--root /tmp/student_trial_22b_pre); for the comparison in the report.
VERDICTS_BEFORE = {
    "ch01-M1": "P", "ch01-M2": "P", "ch01-M3": "N", "ch01-M4": "P", "ch01-M5": "P", "ch01-M6": "M",
    "ch02-M1": "P", "ch02-M2": "M", "ch02-M3": "P", "ch02-M4": "P", "ch02-M5": "P", "ch02-M6": "P",
    "ch03-M1": "N", "ch03-M2": "N", "ch03-M3": "P", "ch03-M4": "P", "ch03-M5": "P", "ch03-M6": "P",
    "ch04-M1": "N", "ch04-M2": "N", "ch04-M3": "N", "ch04-M4": "P", "ch04-M5": "Pa", "ch04-M6": "Pa",
    "ch05-M1": "Pa", "ch05-M2": "Pa", "ch05-M3": "Pa", "ch05-M4": "P", "ch05-M5": "P", "ch05-M6": "P",
    "ch06-M1": "M", "ch06-M2": "P", "ch06-M3": "P", "ch06-M4": "P", "ch06-M5": "Pa", "ch06-M6": "Pa",
    "ch07-M1": "N", "ch07-M2": "P", "ch07-M3": "N", "ch07-M4": "P", "ch07-M5": "M", "ch07-M6": "P",
    "ch08-M1": "P", "ch08-M2": "P", "ch08-M3": "N", "ch08-M4": "Pa", "ch08-M5": "P", "ch08-M6": "Pa",
    "ch09-M1": "Pa", "ch09-M2": "Pa", "ch09-M3": "P", "ch09-M4": "P", "ch09-M5": "N", "ch09-M6": "P",
}


# ------------------------------------------------------------------------------------------------------ running
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("assignments", nargs="*", default=sorted({c.assignment for c in CASES}))
    ap.add_argument("--root", default="/tmp/student_trial_22b")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--students", default="", help="comma-separated submissions to (re)grade or view (default: all)")
    ap.add_argument("--table", action="store_true", help="print the report's tables")
    ap.add_argument("--student-view", action="store_true",
                    help="run the built submissions in Jupyter (nbclient, errors allowed); keep what each test shows")
    args = ap.parse_args(argv)
    st.CASES = CASES                      # st.build lays out these cases, not the previous trial's
    root = Path(args.root)
    only = [x for x in args.students.split(",") if x]
    results_file = root / "results.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {}
    if args.table:
        view_file = root / "student_view.json"
        views = json.loads(view_file.read_text()) if view_file.exists() else {}
        print(table(results, views))
        return
    if args.student_view:
        st.view_assignments(args.assignments, root, only)
        return
    for a in args.assignments:
        ar = root / a
        if ar.exists():
            shutil.rmtree(ar)
        students = st.build(a, ar)
        records, seconds, proc = st.grade(a, ar, args.workers)
        print(f"{a}: {len(students)} submissions graded in {seconds:.0f} s (exit {proc.returncode})", flush=True)
        if proc.returncode != 0:
            print(proc.stderr[-3000:], flush=True)
        order = st.test_order(a)
        for student, case in students.items():
            rec = records.get(student)
            s = st.summarise(rec, order) if rec else {"missing": True}
            s.update({"assignment": a, "cell": case.cell if case else None, "what": case.what if case else "reference",
                      "correct": True if case is None else case.correct,
                      "edits": case.edits if case else [], "code": case.code if case else None,
                      "seconds_batch": round(seconds)})
            results[student] = s
            if rec:
                print(f"  {student:10s} {s['score']:g}/{s['max']:g} visible_ok={s['visible_ok']} "
                      f"first={s['first_test']}: {s['first_detail'][:300]!r}", flush=True)
            else:
                print(f"  {student:10s} NOT GRADED", flush=True)
        results_file.write_text(json.dumps(results, indent=1))


def seen(case, results: dict, views: dict):
    """(caught, first test, message): what the student sees in Jupyter when the submission was run there (the
    first test cell that fails), else the class grader's record (the first failing visible test and its detail)."""
    view = views.get(case.name)
    if view is not None:
        first = next((t for t in st.test_order(case.assignment) if view.get(t)), None)
        return first is not None, first, st.one_line(view.get(first, "")) if first else ""
    r = results[case.name]
    return not r["visible_ok"], r["first_test"], st.one_line(r["first_detail"])


def table(results: dict, views: dict) -> str:
    names = {"P": "points to the cause", "Pa": "partly", "N": "not at all", "M": "MISLEADING", "-": "(no visible failure)",
             "?": "not judged"}
    rows = ["| id | exercise | mistake (one line) | score | visible tests catch it? | first message the student sees "
            "(shortened) | verdict |", "| --- | --- | --- | --- | --- | --- | --- |"]
    count = {k: 0 for k in names}
    full, passes_visible, graded, special = 0, 0, 0, []
    for case in M:
        r = results.get(case.name)
        if r is None or r.get("missing"):
            rows.append(f"| {case.name} | {case.assignment} | {case.what} | not graded | | | |")
            continue
        graded += 1
        caught, first, msg = seen(case, results, views)
        verdict, note = VERDICTS.get(case.name, ("?", ""))
        count[verdict] += 1
        is_full = r["score"] >= r["max"]
        full += is_full
        silent = not caught and not is_full
        passes_visible += silent
        where = "" if case.name in views else " [record]"
        catch = "**no**" if not caught else f"yes ({first}){where}"
        short = msg[:230].replace("|", "\\|") + ("..." if len(msg) > 230 else "")
        rows.append(f"| {case.name} | {case.assignment} | {case.what} | {r['score']:g}/{r['max']:g} | {catch} | {short} | "
                    f"{names[verdict]}{': ' + note if note else ''} |")
        if is_full or not caught or verdict in ("N", "M"):
            special.append(case)
    judged = sum(count[k] for k in ("P", "Pa", "N", "M"))
    out = ["## Mistakes", "", *rows, "", "## Totals", "",
           f"- mistakes graded: {graded} of {len(M)}",
           f"- full marks: {full}",
           f"- pass every visible test while losing points: {passes_visible}",
           f"- first messages (of the {judged} judged mistakes that a visible test catches): "
           + ", ".join(f"{names[k]} {count[k]} ({100 * count[k] / max(judged, 1):.0f}%)" for k in ("P", "Pa", "N", "M")),
           "", "## Correct variants", "", "| id | exercise | variant | score | full marks? |", "| --- | --- | --- | --- | --- |"]
    variants_full = 0
    for case in OK:
        r = results.get(case.name)
        if r is None or r.get("missing"):
            out.append(f"| {case.name} | {case.assignment} | {case.what} | not graded | |")
            continue
        ok = r["score"] >= r["max"]
        variants_full += ok
        out.append(f"| {case.name} | {case.assignment} | {case.what} | {r['score']:g}/{r['max']:g} | "
                   f"{'yes' if ok else '**no** (' + ', '.join(r['failed']) + ')'} |")
    refs = [f"{k}: {v['score']:g}/{v['max']:g}" for k, v in sorted(results.items()) if k.endswith("-reference")]
    out += ["", f"Variants with full marks: {variants_full} of {len(OK)}. References: " + ", ".join(refs)]
    out += ["", "## The exact edits of the mistakes that keep full marks, pass every visible test, or get a misleading "
            "or 'not at all' message", ""]
    for case in special:
        out.append(f"- **{case.name}** (`{case.cell}`): {case.what}")
        for old, new in case.edits:
            out.append(f"  - `{old.strip()}` -> `{new.strip()}`".replace("\n", "\\n"))
    if views:
        out += ["", "## The record against Jupyter", "",
                "| id | first failing test: record / Jupyter | the record's detail is the Jupyter message? | record detail (shortened) |",
                "| --- | --- | --- | --- |"]
        for case in M:
            r = results.get(case.name)
            if case.name not in views or not r:
                continue
            caught, first, jup = seen(case, results, views)
            rec = st.one_line(r["first_detail"])
            core = re.sub(r"^(\w+ )?\(line \d+\): |^line \d+: ", "", rec)
            core = re.sub(r" \[the check, re-evaluated: .*\]$", "", core)
            jup_core = re.sub(r"^\w+: ", "", re.sub(r"\(Cell In\[\d+\], line", "(line", jup))
            if r["visible_ok"] and caught:
                same = "**no: the record calls the failure hidden; Jupyter shows it**"
            elif core and core == jup_core:
                same = "yes"
            elif core and jup_core.startswith(core):
                same = f"yes; Jupyter adds \"{jup_core[len(core):].strip()[:90]}\""
            elif r["first_test"] == first:
                same = "same test, other text"
            else:
                same = "**other test**"
            out.append(f"| {case.name} | {r['first_test']} / {first} | {same} | {rec[:160].replace('|', '/')} |")
    return "\n".join(out)


if __name__ == "__main__":
    main()
