"""Student trial 22d: 54 fresh mistakes and 18 correct variants in all nine exercises, graded and seen in Jupyter.

The acceptance trial of issue 22. The mistakes were written from the student notebooks alone and committed before
solutions/, the catalogues or the earlier trials were read (benchmarks/results/student_trial_22d_plan.md, commit
a02fd4a); those equal to an old mutant or an earlier trial's mistake were then replaced by new ones (the plan lists
them). Each mistake is ONE realistic edit of the reference solution of one cell (``(old, new)`` pairs, each ``old``
found exactly once in the cell's reference code); each correct variant rewrites a cell another way and must keep full
marks.

The machinery is benchmarks/student_trial.py's (``registry()``, ``build()``, ``grade()`` with the class grader in ONE
run per assignment, ``summarise()`` of out/state.jsonl, ``view_assignments()``: the same submissions run in Jupyter
with nbclient, errors allowed); only the cases, the verdicts and the report are this file's.

    nice -n 5 .venv/bin/python benchmarks/student_trial_22d.py --grade [ch01 ...]    # class grader, --workers 1
    nice -n 5 .venv/bin/python benchmarks/student_trial_22d.py --student-view [ch01 ...] [--students a,b]
    .venv/bin/python benchmarks/student_trial_22d.py --table     # the tables of student_trial_22d.md
    .venv/bin/python benchmarks/student_trial_22d.py --save benchmarks/results/student_trial_22d.json
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (the first trial's machinery; its own cases are not used)

M, OK, mistake, variant = st.registry()


# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "M1", "ch01_one_to_many", "OneToMany: `inputs[0] = x` (batch row 0, not time step 0)",
        ("inputs[:, 0] = x ", "inputs[0] = x "))
mistake("ch01", "M2", "ch01_many_to_many_sync", "ManyToManySync: a second tanh on the RNN outputs before the head",
        ("return self.head(outputs)     #", "return self.head(torch.tanh(outputs))     #"))
mistake("ch01", "M3", "ch01_many_to_many_async", "ManyToManyAsync: `head(outputs[:, -1])` copied from part 1 (one output)",
        ("return self.head(outputs)             #", "return self.head(outputs[:, -1])             #"))
mistake("ch01", "M4", "ch01_many_to_one", "ManyToOne: `self.head = nn.Linear(input_size, num_classes)` (size slip)",
        ("self.head = nn.Linear(hidden_size, num_classes)", "self.head = nn.Linear(input_size, num_classes)"))
mistake("ch01", "M5", "ch01_train_step", "train_step returns the loss recomputed AFTER the update",
        ("return loss.item()", "return F.cross_entropy(model(x), y).item()"))
mistake("ch01", "M6", "ch01_fit", "fit trains with SGD instead of Adam",
        ("torch.optim.Adam(model.parameters(), lr=lr)", "torch.optim.SGD(model.parameters(), lr=lr)"))
variant("ch01", "V1", "ch01_many_to_many_sync", "ManyToManySync: the head through F.linear with its own weights",
        ("return self.head(outputs)     #", "return F.linear(outputs, self.head.weight, self.head.bias)     #"))
variant("ch01", "V2", "ch01_one_to_many", "OneToMany in two RNN calls: x alone, then the zeros from the returned state",
        code=("class OneToMany(nn.Module):\n"
              "    def __init__(self, input_size, hidden_size, num_classes):\n"
              "        super().__init__()\n"
              "        self.rnn = nn.RNN(input_size, hidden_size, batch_first=True)\n"
              "        self.head = nn.Linear(hidden_size, num_classes)\n"
              "\n"
              "    def forward(self, x, steps):\n"
              "        first, h = self.rnn(x.unsqueeze(1))            # (B, 1, H), (1, B, H)\n"
              "        outs = [first]\n"
              "        if steps > 1:\n"
              "            rest, _ = self.rnn(x.new_zeros(x.shape[0], steps - 1, x.shape[1]), h)\n"
              "            outs.append(rest)\n"
              "        return self.head(torch.cat(outs, dim=1))\n"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "M1", "ch02_rnn_cell", "rnn_cell: the bias added twice (F.linear(x, W_hx, b_h) + F.linear(h, W_hh, b_h))",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)",
         "linear = torch.nn.functional.linear\n"
         "    return torch.tanh(linear(x_t, W_hx, b_h) + linear(h_prev, W_hh, b_h))"))
mistake("ch02", "M2", "ch02_rnn_layer", "rnn_layer reads B, T = x.shape BEFORE transposing a time-first input",
        ("    if not batch_first:\n        x = x.transpose(0, 1)                          # (B, T, D)\n"
         "    B, T, _ = x.shape\n",
         "    B, T, _ = x.shape\n    if not batch_first:\n        x = x.transpose(0, 1)                          # (B, T, D)\n"))
mistake("ch02", "M3", "ch02_rnn_layer", "rnn_layer: `h = h0 if h0 else zeros` (the truth value of a tensor)",
        ("h = x.new_zeros(B, W_hh.shape[0]) if h0 is None else h0", "h = h0 if h0 else x.new_zeros(B, W_hh.shape[0])"))
mistake("ch02", "M4", "ch02_bptt_gradient_norms", "bptt: the starting gradient torch.ones(H), one example's, not (B, H)",
        ("grad = torch.ones_like(states[:, -1])", "grad = torch.ones(states.shape[2])"))
mistake("ch02", "M5", "ch02_bptt_gradient_norms", "bptt: (1 - h) ** 2 instead of 1 - h ** 2 (a misplaced parenthesis)",
        ("(1 - states[:, t] ** 2)", "(1 - states[:, t]) ** 2"))
mistake("ch02", "M6", "ch02_clip_grad_norm", "clip_grad_norm: sum(g.sum() ** 2), squares of sums, not sums of squares",
        ("sum((g.detach() ** 2).sum() for g in grads)", "sum(g.detach().sum() ** 2 for g in grads)"))
variant("ch02", "V1", "ch02_rnn_layer", "rnn_layer over x.unbind(time axis), stacked back on that same axis",
        code=("def rnn_layer(x, W_hx, W_hh, b_h, h0=None, batch_first=True):\n"
              "    time_axis = 1 if batch_first else 0\n"
              "    steps = x.unbind(time_axis)\n"
              "    h = h0 if h0 is not None else x.new_zeros(steps[0].shape[0], W_hh.shape[0])\n"
              "    states = []\n"
              "    for x_t in steps:\n"
              "        h = rnn_cell(x_t, h, W_hx, W_hh, b_h)\n"
              "        states.append(h)\n"
              "    return torch.stack(states, dim=time_axis), h\n"))
variant("ch02", "V2", "ch02_clip_grad_norm", "clip_grad_norm: the norm of the per-parameter norms",
        code=("def clip_grad_norm(parameters, max_norm):\n"
              "    grads = [p.grad for p in parameters if p.grad is not None]\n"
              "    if not grads:\n"
              "        return torch.tensor(0.0)\n"
              "    per_param = torch.stack([torch.linalg.vector_norm(g.detach()) for g in grads])\n"
              "    total_norm = torch.linalg.vector_norm(per_param)\n"
              "    if total_norm > max_norm:\n"
              "        for g in grads:\n"
              "            g.mul_(max_norm / (total_norm + 1e-6))\n"
              "    return total_norm\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "M1", "ch03_lstm_cell", "lstm_cell: c = f * c_prev + (1 - f) * g (a coupled gate; i unused)",
        ("c = f * c_prev + i * g ", "c = f * c_prev + (1 - f) * g "))
mistake("ch03", "M2", "ch03_lstm_cell_nobias", "lstm_cell_nobias returns (c, h) instead of (h, c)",
        ("    return h, c", "    return c, h"))
mistake("ch03", "M3", "ch03_split_gates", "split_gates: Wh chunked from cell.weight_ih (copy-paste)",
        ("Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))", "Wh = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))"))
mistake("ch03", "M4", "ch03_split_gates", "split_gates: .split(4) (pieces of 4 rows) where chunk(4) is meant",
        ("cell.weight_ih.chunk(4, dim=0)", "cell.weight_ih.split(4)"),
        ("cell.weight_hh.chunk(4, dim=0)", "cell.weight_hh.split(4)"),
        ("(cell.bias_ih + cell.bias_hh).chunk(4)", "(cell.bias_ih + cell.bias_hh).split(4)"))
mistake("ch03", "M5", "ch03_lstm_layer", "lstm_layer: cell(x[:, t], h, c), the state as two arguments, not a tuple",
        ("h, c = cell(x[:, t], (h, c))", "h, c = cell(x[:, t], h, c)"))
mistake("ch03", "M6", "ch03_lstm_layer", "lstm_layer returns (h_n, h_n): the hidden state in the cell state's slot",
        ("(h.unsqueeze(0), c.unsqueeze(0))", "(h.unsqueeze(0), h.unsqueeze(0))"))
variant("ch03", "V1", "ch03_lstm_cell", "lstm_cell with torch.addmm per gate and torch.addcmul for the cell",
        code=("def lstm_cell(x, h_prev, c_prev, W, b):\n"
              "    hx = torch.cat([h_prev, x], dim=1)\n"
              "    pre = {k: torch.addmm(b[k], hx, W[k].T) for k in ('i', 'f', 'g', 'o')}\n"
              "    i, f, o = torch.sigmoid(pre['i']), torch.sigmoid(pre['f']), torch.sigmoid(pre['o'])\n"
              "    g = torch.tanh(pre['g'])\n"
              "    c = torch.addcmul(f * c_prev, i, g)\n"
              "    return o * torch.tanh(c), c\n"))
variant("ch03", "V2", "ch03_split_gates", "split_gates with torch.tensor_split, the two biases added per gate",
        code=("def split_gates(cell):\n"
              "    Wx = {k: w for k, w in zip(GATES, torch.tensor_split(cell.weight_ih, 4, dim=0))}\n"
              "    Wh = {k: w for k, w in zip(GATES, torch.tensor_split(cell.weight_hh, 4, dim=0))}\n"
              "    if getattr(cell, 'bias_ih', None) is None:\n"
              "        return Wx, Wh, None\n"
              "    b = {k: bi + bh for k, bi, bh in zip(GATES, torch.tensor_split(cell.bias_ih, 4),\n"
              "                                           torch.tensor_split(cell.bias_hh, 4))}\n"
              "    return Wx, Wh, b\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "M1", "ch04_gru_cell_textbook", "textbook GRU: (1 - z) * h~ + z * h~ (copy slip: h~ for h)",
        ("return (1 - z) * h_tilde + z * h ", "return (1 - z) * h_tilde + z * h_tilde "))
mistake("ch04", "M2", "ch04_gru_cell_textbook", "textbook GRU: the reset gate forgotten in the candidate (W_nh h)",
        ("(r * h) @ W_nh.T", "h @ W_nh.T"))
mistake("ch04", "M3", "ch04_gru_cell_pytorch", "PyTorch GRU: the two biases swapped (gi + bias_hh, gh + bias_ih)",
        ("weight_ih.T + bias_ih", "weight_ih.T + bias_hh"), ("weight_hh.T + bias_hh", "weight_hh.T + bias_ih"))
mistake("ch04", "M4", "ch04_gru_cell_pytorch", "PyTorch GRU: z * h_n (the hidden n block) for z * h (a name clash)",
        ("return (1 - z) * n + z * h ", "return (1 - z) * n + z * h_n "))
mistake("ch04", "M5", "ch04_count_parameters", "count_parameters: weight_ih counted without the number of blocks",
        ("per_direction = blocks * (hidden_size * layer_input + hidden_size * hidden_size)",
         "per_direction = hidden_size * layer_input + blocks * hidden_size * hidden_size"))
mistake("ch04", "M6", "ch04_count_parameters", "count_parameters compares kind with \"LSTM\"/\"GRU\" (class names)",
        ('blocks = {"rnn": 1, "lstm": 4, "gru": 3}[kind]', 'blocks = 4 if kind == "LSTM" else 3 if kind == "GRU" else 1'))
variant("ch04", "V1", "ch04_gru_cell_textbook", "textbook GRU with F.linear for every product",
        code=("import torch.nn.functional as F\n"
              "\n"
              "def gru_cell_textbook(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    H = h.shape[1]\n"
              "    W_rx, W_zx, W_nx = weight_ih.split(H)\n"
              "    W_rh, W_zh, W_nh = weight_hh.split(H)\n"
              "    b_r, b_z, b_n = (bias_ih + bias_hh).split(H)\n"
              "    r = torch.sigmoid(F.linear(x, W_rx, b_r) + F.linear(h, W_rh))\n"
              "    z = torch.sigmoid(F.linear(x, W_zx, b_z) + F.linear(h, W_zh))\n"
              "    n = torch.tanh(F.linear(x, W_nx, b_n) + F.linear(r * h, W_nh))\n"
              "    return (1 - z) * n + z * h\n"))
variant("ch04", "V2", "ch04_count_parameters", "count_parameters recursive over num_layers",
        code=("def count_parameters(kind, input_size, hidden_size, num_layers=1, bias=True, bidirectional=False):\n"
              "    if num_layers == 0:\n"
              "        return 0\n"
              "    gates = {'rnn': 1, 'gru': 3, 'lstm': 4}[kind]\n"
              "    dirs = 2 if bidirectional else 1\n"
              "    below = count_parameters(kind, input_size, hidden_size, num_layers - 1, bias, bidirectional)\n"
              "    in_size = input_size if num_layers == 1 else dirs * hidden_size\n"
              "    layer = gates * hidden_size * (in_size + hidden_size) + (2 * gates * hidden_size if bias else 0)\n"
              "    return below + dirs * layer\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "M1", "ch05_reverse_padded", "reverse_padded: lengths not unsqueezed, t (T,) against lengths (B,)",
        ("L = lengths.to(x.device).unsqueeze(1)  ", "L = lengths.to(x.device)  "))
mistake("ch05", "M2", "ch05_lstm_direction", "lstm_direction keeps the state with in-place writes h[real] = h_new[real]",
        ("        h = torch.where(real, h_new, h)                         # padded steps keep the old state\n"
         "        c = torch.where(real, c_new, c)\n",
         "        h[real[:, 0]] = h_new[real[:, 0]]                       # padded steps keep the old state\n"
         "        c[real[:, 0]] = c_new[real[:, 0]]\n"))
mistake("ch05", "M3", "ch05_bilstm_from_cells", "BiLSTMFromCells runs the backward direction with self.fwd (copy-paste)",
        ("lstm_direction(self.bwd, reverse_padded(x, lengths), lengths)",
         "lstm_direction(self.fwd, reverse_padded(x, lengths), lengths)"))
mistake("ch05", "M4", "ch05_final_states", "final_states joins the halves with torch.cat(dim=0): (2B, H)",
        ("torch.cat([forward_last, backward_first], dim=-1)", "torch.cat([forward_last, backward_first], dim=0)"))
mistake("ch05", "M5", "ch05_residual_stack", "ResidualLSTMStack: [nn.LSTM(H, H)] * (L - 1), one module for every upper layer",
        ("self.layers = nn.ModuleList([nn.LSTM(d, hidden_size, batch_first=True) for d in sizes])",
         "self.layers = nn.ModuleList([nn.LSTM(input_size, hidden_size, batch_first=True)]\n"
         "                                    + [nn.LSTM(hidden_size, hidden_size, batch_first=True)] * (num_layers - 1))"))
mistake("ch05", "M6", "ch05_sentence_classifier", "SentenceClassifier pools with the final states h_n, not the masked mean",
        ("        out, _ = self.rnn(packed)\n", "        out, (h_n, _) = self.rnn(packed)\n"),
        ("return self.head(masked_mean(out, lengths))", "return self.head(torch.cat([h_n[0], h_n[1]], dim=-1))"))
variant("ch05", "V1", "ch05_reverse_padded", "reverse_padded with torch.take_along_dim and a broadcast index",
        code=("def reverse_padded(x, lengths):\n"
              "    B, T = x.shape[:2]\n"
              "    t = torch.arange(T)[None, :]\n"
              "    L = lengths[:, None]\n"
              "    idx = torch.where(t < L, L - 1 - t, t)\n"
              "    idx = idx.view(B, T, *([1] * (x.dim() - 2)))\n"
              "    return torch.take_along_dim(x, idx, dim=1)\n"))
variant("ch05", "V2", "ch05_masked_mean", "masked_mean with NaN at the padding and nanmean",
        code=("def masked_mean(outputs, lengths):\n"
              "    T = outputs.shape[1]\n"
              "    pad = torch.arange(T)[None, :] >= lengths[:, None]\n"
              "    return outputs.masked_fill(pad[:, :, None], float('nan')).nanmean(dim=1)\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "M1", "ch06_build_vocab", "build_vocab sorts by count, then sorts again alphabetically",
        ("kept.sort(key=lambda token: (-counts[token], token))", "kept.sort(key=lambda token: -counts[token])\n    kept.sort()"))
mistake("ch06", "M2", "ch06_numericalize", "numericalize: `if add_sos:` guards the <eos> too (copy-paste)",
        ("    if add_eos:\n", "    if add_sos:\n"))
mistake("ch06", "M3", "ch06_greedy_decode", "greedy_decode: no finished flags; skips <eos> but keeps what follows",
        ("                if not finished[b]:\n"
         "                    if token == EOS_INDEX:\n"
         "                        finished[b] = True\n"
         "                    else:\n"
         "                        outputs[b].append(token)\n",
         "                if token == EOS_INDEX:\n"
         "                    finished[b] = True\n"
         "                else:\n"
         "                    outputs[b].append(token)\n"))
mistake("ch06", "M4", "ch06_encoder", "Encoder returns h_n (1, B, H) instead of h_n[0] (B, H)",
        ("return outputs, h_n[0]", "return outputs, h_n"))
mistake("ch06", "M5", "ch06_decoder", "Decoder: nn.GRUCell(hidden_size, hidden_size) (input size slip)",
        ("self.cell = nn.GRUCell(emb_size, hidden_size)", "self.cell = nn.GRUCell(hidden_size, hidden_size)"))
mistake("ch06", "M6", "ch06_teacher_forced_loss", "teacher_forced_loss: the mean over steps of each step's mean loss",
        ("loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), ignore_index=pad_index)",
         "loss = sum(F.cross_entropy(logits[:, t], dec_out[:, t], ignore_index=pad_index)\n"
         "               for t in range(logits.shape[1])) / logits.shape[1]"))
variant("ch06", "V1", "ch06_numericalize", "numericalize with the specials as lists sliced by the flags",
        code=("def numericalize(tokens, stoi, add_sos=False, add_eos=False):\n"
              "    body = [stoi[t] if t in stoi else UNK_INDEX for t in tokens]\n"
              "    return [SOS_INDEX][: int(add_sos)] + body + [EOS_INDEX][: int(add_eos)]\n"))
variant("ch06", "V2", "ch06_greedy_decode", "greedy_decode with Python lists, int() tokens and a while loop",
        code=("def greedy_decode(encoder, decoder, src, src_lengths, max_len):\n"
              "    B = src.shape[0]\n"
              "    with torch.no_grad():\n"
              "        _, d = encoder(src, src_lengths)\n"
              "        prev = [SOS_INDEX] * B\n"
              "        out = [[] for _ in range(B)]\n"
              "        done = [False] * B\n"
              "        step = 0\n"
              "        while step < max_len and not all(done):\n"
              "            logits, d = decoder.step(torch.tensor(prev, dtype=torch.long), d)\n"
              "            prev = [int(v) for v in logits.argmax(dim=1)]\n"
              "            for b in range(B):\n"
              "                if done[b]:\n"
              "                    continue\n"
              "                if prev[b] == EOS_INDEX:\n"
              "                    done[b] = True\n"
              "                else:\n"
              "                    out[b].append(prev[b])\n"
              "            step += 1\n"
              "    return out\n"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "M1", "ch07_lstm_cell", "LSTMCell: sigmoid on all four blocks, then tanh on g: g = tanh(sigmoid(.))",
        ("        f, i, o, g = z.chunk(4, dim=-1)                        # (B, H) each\n"
         "        f, i, o = torch.sigmoid(f), torch.sigmoid(i), torch.sigmoid(o)\n",
         "        f, i, o, g = torch.sigmoid(z).chunk(4, dim=-1)         # (B, H) each\n"))
mistake("ch07", "M2", "ch07_encoder", "EncoderRNN: the right cell loops range(Tx - 1, 0, -1) (position 0 never read)",
        ("for t in reversed(range(Tx)):", "for t in range(Tx - 1, 0, -1):"))
mistake("ch07", "M3", "ch07_greedy", "greedy_translate: tokens stacked (steps, B), one list per step, not per sentence",
        ("for row in torch.stack(tokens, dim=1).tolist():", "for row in torch.stack(tokens, dim=0).tolist():"))
mistake("ch07", "M4", "ch07_attention", "Attention: (energy * v).sum(1), summed over the positions, not the features",
        ("scores = energy @ self.v ", "scores = (energy * self.v).sum(1) "))
mistake("ch07", "M5", "ch07_decoder", "AttnDecoderRNN predicts from [h_prev; a; x]: the OLD state in the output layer",
        ("self.Out(torch.cat([h, weighted_encoder, embedded], dim=-1))",
         "self.Out(torch.cat([h_prev, weighted_encoder, embedded], dim=-1))"))
mistake("ch07", "M6", "ch07_decoder", "AttnDecoderRNN: F.log_softmax(scores, dim=0), over the batch",
        ("F.log_softmax(scores, dim=-1)", "F.log_softmax(scores, dim=0)"))
variant("ch07", "V1", "ch07_attention", "Attention with repeat, einsum and torch.finfo(dtype).min for the padding",
        code=("class Attention(nn.Module):\n"
              "    def __init__(self, enc_size, dec_size, attn_size):\n"
              "        super().__init__()\n"
              "        self.Attn = nn.Linear(dec_size + enc_size, attn_size)\n"
              "        self.v = nn.Parameter(torch.rand(attn_size) - 0.5)\n"
              "\n"
              "    def forward(self, hidden, encoder_outputs, mask=None):\n"
              "        Tx = encoder_outputs.shape[1]\n"
              "        d = hidden.unsqueeze(1).repeat(1, Tx, 1)\n"
              "        energy = torch.tanh(self.Attn(torch.cat((d, encoder_outputs), dim=2)))\n"
              "        scores = torch.einsum('bta,a->bt', energy, self.v)\n"
              "        if mask is not None:\n"
              "            scores = scores.masked_fill(mask.logical_not(), torch.finfo(scores.dtype).min)\n"
              "        return F.softmax(scores, dim=1)\n"))
variant("ch07", "V2", "ch07_decoder", "AttnDecoderRNN with the output layer's weight cut in three column blocks",
        code=("class AttnDecoderRNN(nn.Module):\n"
              "    def __init__(self, vocab_size, emb_size, hidden_size, enc_size, attn_size):\n"
              "        super().__init__()\n"
              "        self.embedding = nn.Embedding(vocab_size, emb_size)\n"
              "        self.attention = Attention(enc_size, hidden_size, attn_size)\n"
              "        self.lstm_cell = LSTMCell(enc_size + emb_size, hidden_size)\n"
              "        self.Out = nn.Linear(hidden_size + enc_size + emb_size, vocab_size)\n"
              "\n"
              "    def forward(self, y_prev, state, encoder_outputs, mask=None):\n"
              "        h_prev, c_prev = state\n"
              "        x = self.embedding(y_prev)\n"
              "        w = self.attention(h_prev, encoder_outputs, mask)\n"
              "        a = (w.unsqueeze(2) * encoder_outputs).sum(dim=1)\n"
              "        h, c = self.lstm_cell(torch.cat([a, x], dim=1), (h_prev, c_prev))\n"
              "        Wh, Wa, Wx = self.Out.weight.split([h.shape[1], a.shape[1], x.shape[1]], dim=1)\n"
              "        scores = h @ Wh.T + a @ Wa.T + x @ Wx.T + self.Out.bias\n"
              "        return scores - scores.logsumexp(dim=1, keepdim=True), (h, c), w\n"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "M1", "ch08_attend", "attend: contexts as the MEAN over positions of weights * h_s (\"weighted average\")",
        ("contexts = weights @ values ", "contexts = (weights.unsqueeze(-1) * values.unsqueeze(1)).mean(dim=2) "))
mistake("ch08", "M2", "ch08_dot", "dot_attention: dec @ enc.T (.T of a 3-D tensor reverses every axis)",
        ("energies = dec @ enc.transpose(1, 2) ", "energies = dec @ enc.T "))
mistake("ch08", "M3", "ch08_scaled_dot", "scaled_dot_attention: torch.sqrt(D) on the Python int D",
        ("/ math.sqrt(D)", "/ torch.sqrt(D)"))
mistake("ch08", "M4", "ch08_bilinear", "bilinear_attention: keys enc @ W.T used as the values too",
        ("    energies = (dec @ W) @ enc.transpose(1, 2)   # (B, Ty, Dh) @ (B, Dh, Tx) -> (B, Ty, Tx)\n"
         "    return attend(energies, enc, mask)",
         "    keys = enc @ W.T                             # (B, Tx, Dd): W h_s\n"
         "    energies = dec @ keys.transpose(1, 2)        # (B, Ty, Tx)\n"
         "    return attend(energies, keys, mask)"))
mistake("ch08", "M5", "ch08_reduced_rank", "reduced_rank_attention divides by sqrt(R) (part 3's scale copied)",
        ("energies = queries @ keys.transpose(1, 2) ", "energies = queries @ keys.transpose(1, 2) / math.sqrt(U.shape[0]) "))
mistake("ch08", "M6", "ch08_macs", "reduced_rank_macs counts each dot product as 1 multiply-add, not R",
        ("dots = Ty * Tx * R ", "dots = Ty * Tx "))
variant("ch08", "V1", "ch08_attend", "attend as softmax(e + log(mask)) and torch.bmm",
        code=("def attend(energies, values, mask):\n"
              "    weights = torch.softmax(energies + torch.log(mask.float()).unsqueeze(1), dim=-1)\n"
              "    return weights, torch.bmm(weights, values)\n"))
variant("ch08", "V2", "ch08_scaled_dot", "scaled_dot_attention with torch.baddbmm(beta=0, alpha=D ** -0.5)",
        code=("def scaled_dot_attention(dec, enc, mask):\n"
              "    B, Ty, D = dec.shape\n"
              "    empty = dec.new_empty(B, Ty, enc.shape[1])\n"
              "    energies = torch.baddbmm(empty, dec, enc.transpose(1, 2), beta=0, alpha=D ** -0.5)\n"
              "    return attend(energies, enc, mask)\n"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "M1", "ch09_encode", "encode embeds the source with model.tgt_embed (copy-paste)",
        ("x = model.src_embed(src)", "x = model.tgt_embed(src)"))
mistake("ch09", "M2", "ch09_decode_step", "decode_step: `d, c = state` after the LSTM step (the old state read back)",
        ("    d, c = model.decoder(torch.cat([y_emb, o_prev], dim=-1), state)",
         "    new_state = model.decoder(torch.cat([y_emb, o_prev], dim=-1), state)\n    d, c = state"))
mistake("ch09", "M3", "ch09_decode_step", "decode_step: dropout on u_t before W_u (tanh(W_u(dropout(u))))",
        ("o = model.dropout(torch.tanh(model.W_u(u)))", "o = torch.tanh(model.W_u(model.dropout(u)))"))
mistake("ch09", "M4", "ch09_teacher_forcing", "decode_teacher_forcing starts the decoder from zeros, not encode's (d_0, c_0)",
        ("    h, state = encode(model, src, src_len)",
         "    h, _ = encode(model, src, src_len)\n"
         "    state = (h.new_zeros(src.shape[0], model.hidden_size), h.new_zeros(src.shape[0], model.hidden_size))"))
mistake("ch09", "M5", "ch09_masked_loss", "masked_loss: F.cross_entropy on the 3-D (B, Ty, V) scores as they are",
        ("F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)",
         "F.cross_entropy(logits, tgt_out, ignore_index=PAD)"))
mistake("ch09", "M6", "ch09_beam_search", "beam_search drops the live hypotheses at max_len instead of finishing them",
        ("    finished += [(tokens, score / len(tokens) ** alpha) for tokens, score, _ in live]\n", ""))
variant("ch09", "V1", "ch09_masked_loss", "masked_loss with F.nll_loss on log_softmax(...).flatten(0, 1)",
        code=("def masked_loss(logits, tgt_out):\n"
              "    return F.nll_loss(F.log_softmax(logits, dim=-1).flatten(0, 1), tgt_out.flatten(), ignore_index=PAD)\n"))
variant("ch09", "V2", "ch09_beam_search", "beam_search with Python floats in plain lists, a while loop and sorted()",
        code=("def beam_search(step_fn, start_state, beam_size=3, max_len=20, alpha=1.0):\n"
              "    beams = [(0.0, [], start_state)]\n"
              "    done = []\n"
              "    step = 0\n"
              "    while beams and step < max_len:\n"
              "        step += 1\n"
              "        pool = []\n"
              "        for score, toks, st in beams:\n"
              "            lp, st2 = step_fn(toks[-1] if toks else SOS, st)\n"
              "            lp = [float(v) for v in lp]\n"
              "            for tok in range(len(lp)):\n"
              "                pool.append((score + lp[tok], toks + [tok], st2))\n"
              "        pool = sorted(pool, key=lambda c: c[0], reverse=True)[: beam_size - len(done)]\n"
              "        beams = []\n"
              "        for score, toks, st in pool:\n"
              "            if toks[-1] == EOS:\n"
              "                done.append((toks[:-1], score / len(toks) ** alpha))\n"
              "            else:\n"
              "                beams.append((score, toks, st))\n"
              "    done.extend((toks, score / len(toks) ** alpha) for score, toks, _ in beams)\n"
              "    done.sort(key=lambda h: h[1], reverse=True)\n"
              "    return done\n"))

CASES = M + OK

# ------------------------------------------------------------------------------------------------------ verdicts
# The rule (strict), reading ONLY the first failing visible test's message as the student sees it in Jupyter:
#   P  points to the cause: a student reading only it knows which line / term to change and how;
#   Pa partly: it names the right function or tensor (or where the values go wrong) but not what is wrong with it;
#   N  not at all: nothing in it leads to the cause (a bare PyTorch error far from it, a generic mismatch);
#   M  misleading: it names a wrong cause, or blames code that is right.
# "-": no visible test fails. Filled in after reading student_view.json.
VERDICTS: dict[str, tuple[str, str]] = {
    "ch01-M1": ("Pa", "the right line (inputs[0] = x) with PyTorch's size error; not that [0] indexes the batch"),
    "ch01-M2": ("Pa", "values of ManyToManySync(x) differ; no cause"),
    "ch01-M3": ("Pa", "shape (B, C) for (B, Ty, C): the time axis is missing; not which line or why"),
    "ch01-M4": ("Pa", "a size error at the (right) forward line; 'the wrong matrix?' among its guesses; the cause is the head's size in __init__"),
    "ch01-M5": ("P", "return the loss measured after the update"),
    "ch01-M6": ("P", "the update differs: 'Adam with the lr argument' first in a list of three"),
    "ch02-M1": ("Pa", "values of rnn_cell differ; no cause (the bias added twice)"),
    "ch02-M2": ("Pa", "rnn_layer passes h_prev (5, 4) with x_t (2, 3): the state has the wrong batch size; not why"),
    "ch02-M3": ("P", "the `if h0` line: the truth value of a tensor is ambiguous"),
    "ch02-M4": ("Pa", "only norms[0] is wrong: the starting gradient; not what is wrong with it"),
    "ch02-M5": ("Pa", "norms differ; no cause"),
    "ch02-M6": ("Pa", "the total norm differs (13.89 vs 13); no cause"),
    "ch03-M1": ("P", "b['i'] is not used: the input gate left out of c"),
    "ch03-M2": ("Pa", "c differs; not that h and c are returned in the wrong order"),
    "ch03-M3": ("M", "Wh['i'] is (2, 3) instead of (2, 2): called 'off by one'; the cause is weight_ih for weight_hh (D = 3, H = 2)"),
    "ch03-M4": ("P", "4 blocks of the stacked rows: chunk dimension 0"),
    "ch03-M5": ("P", "the cell call at the student's line takes 2-3 arguments, 4 given"),
    "ch03-M6": ("Pa", "c_n differs; not that it is h_n"),
    "ch04-M1": ("Pa", "the result does not depend on b_z (true: z cancels); leads to z, whose line is right, not to the interpolation"),
    "ch04-M2": ("P", "b_r is not used: the reset gate left out"),
    "ch04-M3": ("Pa", "values of gru_cell_pytorch differ; no cause"),
    "ch04-M4": ("Pa", "values of gru_cell_pytorch differ; no cause"),
    "ch04-M5": ("Pa", "count for ('lstm', 10, 20) differs; no cause"),
    "ch04-M6": ("Pa", "count for ('lstm', 10, 20) is 640 (the RNN's); no cause"),
    "ch05-M1": ("P", "at the student's line: L - 1 (3,) against t (5,), broadcasting from the right"),
    "ch05-M2": ("P", "an in-place write changed a tensor autograd needs: compute a new tensor"),
    "ch05-M3": ("Pa", "only the backward half (features 5..) is wrong; not why"),
    "ch05-M4": ("M", "shape (6, 2) for (3, 4): 'a reshape/view where a transpose was needed?'; the cause is cat along dim 0"),
    "ch05-M5": ("Pa", "the stack's outputs differ; no cause (one module shared)"),
    "ch05-M6": ("Pa", "logits differ; no cause (final states for the masked mean)"),
    "ch06-M1": ("P", "sorted alphabetically only: most frequent first, then alphabetical"),
    "ch06-M2": ("-", ""),
    "ch06-M3": ("Pa", "the token lists shown, extra tokens after the first <eos>; not named"),
    "ch06-M4": ("P", "an extra dimension of size 1: index it with [0]"),
    "ch06-M5": ("P", "the GRU cell's input_size: got 3, expected 4 (the cell built with the wrong input size)"),
    "ch06-M6": ("Pa", "the loss differs (3.81 vs 3.50); no cause"),
    "ch07-M1": ("Pa", "c differs; no cause"),
    "ch07-M2": ("Pa", "the right cell's stack has 5 steps, not 6 (at the cat line); not why"),
    "ch07-M3": ("Pa", "the token lists shown (transposed); not named"),
    "ch07-M4": ("Pa", "scores (2, 5) against the mask (2, 6) at the (right) masked_fill line; not why"),
    "ch07-M5": ("P", "predict from the previous state d_(t-1) instead of the new one"),
    "ch07-M6": ("Pa", "log_probs differ; no cause (log_softmax over the batch)"),
    "ch08-M1": ("Pa", "contexts are 0.25 times the expected (1/Tx); not 'a mean instead of a sum'"),
    "ch08-M2": ("Pa", "the student's line with a broadcast error; its examples (masks, states) do not apply"),
    "ch08-M3": ("P", "sqrt() wants a tensor, not an int, at the student's line"),
    "ch08-M4": ("M", "contexts (2, 3, 6) for (2, 3, 5): called 'off by one'; the cause is the keys (Dd) used as values (Dh)"),
    "ch08-M5": ("-", ""),
    "ch08-M6": ("M", "'count the dot products B=2 times too rarely'; the factor is R (B = R = 2 in the test)"),
    "ch09-M1": ("Pa", "IndexError 'index out of range in self' at the tgt_embed(src) line; not what is wrong"),
    "ch09-M2": ("Pa", "d_1 differs; no cause (the old state read back)"),
    "ch09-M3": ("P", "dropout should act on tilde d_t (it acts on u_t)"),
    "ch09-M4": ("Pa", "logits differ with the stand-ins; no cause (zero initial state)"),
    "ch09-M5": ("Pa", "PyTorch's 'Expected target size [2, 6], got [2, 4]' at the student's line; not that cross_entropy wants (N, V)"),
    "ch09-M6": ("Pa", "only 1 of 2 hypotheses ('stopped too early, or some dropped?'); not that the live ones must be finished at max_len"),
}


# ------------------------------------------------------------------------------------------------------ running
def first_view(case, views):
    view = views.get(case.name)
    if view is None:
        return None, ""
    first = next((t for t in st.test_order(case.assignment) if view.get(t)), None)
    return first, st.one_line(view.get(first, "")) if first else ""


def first_view_past_warnings(case, views):
    """:func:`first_view`, except that a test cell that raised nothing and only printed to stderr (a warning: nn.LSTM's
    dropout warning, the profiler's 'Memory block of unknown size' in exercise 8's cost test) is not counted as
    failing: the student sees the warning, then the cell's "passed" (trials 22m on: ``report.first_view =
    report.first_view_past_warnings``)."""
    view = views.get(case.name)
    if view is None:
        return None, ""
    first = next((t for t in st.test_order(case.assignment)
                  if view.get(t) and not view[t].startswith("stderr: ")), None)
    return first, st.one_line(view.get(first, "")) if first else ""


def records(root: Path, views: dict) -> dict:
    """One record per case: the class grader's score and first failing visible test, and what Jupyter shows."""
    scores_file = root / "scores.json"
    scores = json.loads(scores_file.read_text()) if scores_file.exists() else {}
    conf_file = root / "confirm.json"
    conf = json.loads(conf_file.read_text()) if conf_file.exists() else {}
    out = {}
    for case in CASES:
        first, msg = first_view(case, views)
        s = scores.get(case.name, {})
        verdict, note = VERDICTS.get(case.name, ("?", ""))
        out[case.name] = {"assignment": case.assignment, "cell": case.cell, "what": case.what, "correct": case.correct,
                          "edits": case.edits, "code": case.code, "score": s.get("score"), "max": s.get("max"),
                          "visible_ok_record": s.get("visible_ok"), "record_first_test": s.get("first_test"),
                          "record_first_detail": s.get("first_detail"), "failed": s.get("failed"),
                          "jupyter_first_test": first, "jupyter_message": msg,
                          "jupyter_all": views.get(case.name), "confirm": conf.get(case.name),
                          "verdict": None if case.correct else verdict, "verdict_note": None if case.correct else note}
    for name, s in scores.items():
        if name.endswith("-reference"):
            out[name] = {"assignment": name.split("-")[0], "what": "reference", "correct": True,
                         "score": s.get("score"), "max": s.get("max"), "visible_ok_record": s.get("visible_ok")}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("assignments", nargs="*", default=sorted({c.assignment for c in CASES}))
    ap.add_argument("--root", default="/tmp/student_trial_22d")
    ap.add_argument("--students", default="", help="comma-separated submissions (default: all)")
    ap.add_argument("--table", action="store_true", help="print the report's tables")
    ap.add_argument("--save", default="", help="write the per-case records (json) to this file")
    ap.add_argument("--confirm", action="store_true",
                    help="run the graded submissions of --students in Jupyter as a student does (demo cells too)")
    ap.add_argument("--grade", action="store_true", help="grade with the class grader (one run per assignment)")
    ap.add_argument("--student-view", action="store_true",
                    help="run the built submissions in Jupyter (nbclient, errors allowed); keep what each test shows")
    args = ap.parse_args(argv)
    st.CASES = CASES                      # st.build lays out these cases, not the first trial's
    root = Path(args.root)
    only = [x for x in args.students.split(",") if x]
    view_file = root / "student_view.json"
    views = json.loads(view_file.read_text()) if view_file.exists() else {}
    if args.confirm:
        conf_file = root / "confirm.json"
        conf = json.loads(conf_file.read_text()) if conf_file.exists() else {}
        conf.update(confirm(root, only))
        conf_file.write_text(json.dumps(conf, indent=1))
        return
    if args.table or args.save:
        recs = records(root, views)
        if args.save:
            Path(args.save).write_text(json.dumps(recs, indent=1) + "\n")
        if args.table:
            print(table(recs))
        return
    if args.grade:
        st.grade_assignments(args.assignments, root, only, fields=("score", "max", "visible_ok", "first_test",
                                                                   "first_detail", "failed", "hidden_failed",
                                                                   "status", "reason"))
        return
    st.view_assignments(args.assignments, root, only)


def run_trial(module, root: str, argv=None):
    """This command line and report on another trial's cases: ``module``'s ``M``, ``OK``, ``CASES`` and
    ``VERDICTS`` replace this file's; ``root`` is the default ``--root``."""
    global M, OK, CASES, VERDICTS
    M, OK, CASES, VERDICTS = module.M, module.OK, module.CASES, module.VERDICTS
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--root" not in argv:
        argv += ["--root", root]
    main(argv)


def trial_main(module, root: str, argv=None):
    """The main() of trials 22m on: :func:`run_trial` with a warning on stderr not counted as a failing test
    (:func:`first_view_past_warnings`)."""
    global first_view
    first_view = first_view_past_warnings
    run_trial(module, root, argv)


def table(recs: dict) -> str:
    names = {"P": "points to the cause", "Pa": "partly", "N": "not at all", "M": "MISLEADING",
             "-": "(no visible failure)", "?": "not judged"}
    rows = ["| id | exercise | mistake (one line) | score | visible tests catch it? | first message the student sees "
            "(shortened) | verdict |", "| --- | --- | --- | --- | --- | --- | --- |"]
    count = {k: 0 for k in names}
    full = passes = graded = 0
    special = []
    for case in M:
        r = recs[case.name]
        score = "not graded" if r["score"] is None else f"{r['score']:g}/{r['max']:g}"
        if r["score"] is not None:
            graded += 1
            full += r["score"] >= r["max"]
        first, msg = r["jupyter_first_test"], r["jupyter_message"]
        visible_ok = first is None if r["jupyter_all"] is not None else r["visible_ok_record"]
        if visible_ok and r["score"] is not None and r["score"] < r["max"]:
            passes += 1
        verdict, note = r["verdict"], r["verdict_note"]
        count[verdict] += 1
        catch = "not run" if r["jupyter_all"] is None else ("**no**" if first is None else f"yes ({first})")
        short = msg[:240].replace("|", "\\|") + ("..." if len(msg) > 240 else "")
        rows.append(f"| {case.name} | {case.cell} | {case.what} | {score} | {catch} | {short} | "
                    f"{names[verdict]}{': ' + note if note else ''} |")
        if r["jupyter_all"] is not None and ((r["score"] is not None and r["score"] >= r["max"]) or first is None
                                           or verdict in ("N", "M", "Pa")):
            special.append(case)
    judged = sum(count[k] for k in ("P", "Pa", "N", "M"))
    out = ["## Mistakes", "", *rows, "", "## Totals", "",
           f"- mistakes graded by the class grader: {graded} of {len(M)}; full marks: {full}",
           f"- mistakes run in Jupyter: {sum(recs[c.name]['jupyter_all'] is not None for c in M)} of {len(M)}",
           f"- pass every visible test while losing points: {passes}",
           f"- no visible failure at all: {count['-']}",
           f"- first messages (of the {judged} judged): "
           + ", ".join(f"{names[k]} {count[k]} ({100 * count[k] / max(judged, 1):.0f}%)" for k in ("P", "Pa", "N", "M")),
           "", "## Correct variants", "", "| id | cell | variant | score | visible tests |", "| --- | --- | --- | --- | --- |"]
    for case in OK:
        r = recs[case.name]
        score = "not graded" if r["score"] is None else f"{r['score']:g}/{r['max']:g}"
        vis = "not run" if r["jupyter_all"] is None else (
            "all pass" if r["jupyter_first_test"] is None else f"FAILS {r['jupyter_first_test']}: {r['jupyter_message'][:160]}")
        out.append(f"| {case.name} | {case.cell} | {case.what} | {score} | {vis} |")
    refs = [(n, r) for n, r in recs.items() if n.endswith("-reference")]
    if refs:
        out += ["", "References: " + ", ".join(f"{n} {r['score']:g}/{r['max']:g}" for n, r in sorted(refs))]
    out += ["", "## The class grader's record against Jupyter", "", record_vs_jupyter(recs)]
    conf = [(c, recs[c.name]) for c in M if recs[c.name].get("confirm")]
    if conf:
        out += ["", "## Confirmed in the real notebook (the graded submission run as a student runs it, demo cells "
                "included)", "", "| mistake | first failing test | same as --student-view? | same as the record? |",
                "| --- | --- | --- | --- |"]
        for c, r in conf:
            k = r["confirm"]
            same_view = k["first_test"] == r["jupyter_first_test"] and k["message"] == r["jupyter_message"]
            rec = " ".join((r["record_first_detail"] or "").split())
            core = re.sub(r"^(\w+Error )?\(line \d+\): |^line \d+: ", "", rec)[:80]
            msg = re.sub(r"Cell In\[\d+\], ", "", k["message"])
            same_rec = k["first_test"] == r["record_first_test"] and (core in msg if core else not msg)
            out.append(f"| {c.name} | {k['first_test']} | {'yes' if same_view else 'NO'} | {'yes' if same_rec else 'NO'} |")
    out += ["", "## The exact edits of the mistakes that keep full marks, pass every visible test, or get a "
            "'partly', 'not at all' or misleading first message", ""]
    for case in special:
        out.append(f"- **{case.name}** (`{case.cell}`): {case.what}")
        for old, new in case.edits:
            out.append(f"  - `{old.strip()}` -> `{new.strip()}`".replace("\n", "\\n"))
    return "\n".join(out)


def confirm(root: Path, students: list) -> dict:
    """Run the graded submissions of `students` (root/grade/<a>/submitted/<s>/...) in Jupyter exactly as a student
    does (nbclient, errors allowed, NBGRADER_EXECUTION unset, so the demo cells run too), and return for each the
    first failing test cell and its message, to compare with the grader's record and with --student-view."""
    import os
    import time

    import nbformat
    from nbclient import NotebookClient
    sys.path.insert(0, str(st.REPO / "tests"))
    import nbgrader_cli

    os.environ.pop("NBGRADER_EXECUTION", None)
    out = {}
    for s in students:
        a = s.split("-")[0]
        (path,) = list((root / "grade" / a / "submitted" / s / a).glob("*.ipynb"))
        nb = nbformat.read(str(path), as_version=4)
        t0 = time.monotonic()
        NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        first, msg = None, ""
        for cell in nb.cells:
            if not nbgrader_cli.is_autograded_test(cell):
                continue
            errs = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            if errs:
                first, msg = nbgrader_cli.nbgrader_meta(cell)["grade_id"], f"{errs[0]['ename']}: {errs[0]['evalue']}"
                break
        out[s] = {"first_test": first, "message": st.one_line(msg)}
        print(f"  confirm {s:10s} {time.monotonic() - t0:.0f} s  {first}: {st.one_line(msg)[:150]}", flush=True)
    return out


def record_vs_jupyter(recs: dict) -> str:
    """Per mistake: the first failing visible test in the grader's record and in Jupyter, and whether the record's
    message is the one Jupyter shows (the same text, or the same text without the student's line)."""
    lines, tally = [], {}
    for case in M:
        r = recs[case.name]
        if r["score"] is None or r["jupyter_all"] is None:
            continue
        rec_first, jup_first = r["record_first_test"], r["jupyter_first_test"]
        rec = " ".join((r["record_first_detail"] or "").split())
        core = re.sub(r"^(\w+Error )?\(line \d+\): |^line \d+: ", "", rec)
        jup = re.sub(r"Cell In\[\d+\], ", "", r["jupyter_message"])
        if rec_first != jup_first:
            kind = "different first test"
        elif rec_first is None:
            kind = "no visible failure in either"
        elif "details are hidden" in rec:
            kind = "record hides the details"
        elif core and (core in jup or core[:80] in jup):
            kind = "same message"
        else:
            kind = "other text"
        tally[kind] = tally.get(kind, 0) + 1
        lines.append(f"| {case.name} | {rec_first} | {jup_first} | {kind} | {rec[:110].replace('|', '/')} |")
    head = "; ".join(f"{k}: {v}" for k, v in sorted(tally.items()))
    return "\n".join([head, "", "| mistake | record's first failing visible test | Jupyter's | message | record (shortened) |",
                      "| --- | --- | --- | --- | --- |", *lines])


if __name__ == "__main__":
    main()
