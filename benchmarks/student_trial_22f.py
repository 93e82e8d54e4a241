"""Student trial 22f: the acceptance trial of issue 22 after round 8, 45 new mistakes and 18 correct variants.

A fresh pair of eyes wrote the mistakes from the student notebooks alone (plan committed in 80a0aaf, before
solutions/ and the catalogues were read: benchmarks/results/student_trial_22f_plan.md); 36 that repeated an old
mutant or an earlier trial's mistake were replaced (the plan's second table). A mistake is one edit of one cell's
reference code, ``(old, new)`` pairs whose ``old`` occurs once; a variant rewrites the cell and must keep full marks.
Only the cases and the verdicts live here: building, grading (the class grader, one run per assignment), the
Jupyter view and the report are benchmarks/student_trial.py's and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22f unless --root says otherwise):

    nice -n 5 .venv/bin/python benchmarks/student_trial_22f.py --grade [ch01 ...]
    nice -n 5 .venv/bin/python benchmarks/student_trial_22f.py --student-view [ch01 ...] [--students ch01-f01a,...]
    nice -n 5 .venv/bin/python benchmarks/student_trial_22f.py --confirm --students ch01-f01e,...
    .venv/bin/python benchmarks/student_trial_22f.py --table        # benchmarks/results/student_trial_22f.md's tables
    .venv/bin/python benchmarks/student_trial_22f.py --save benchmarks/results/student_trial_22f.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "f01a", "ch01_many_to_one", "ManyToOne: a tanh on the last state before the head (the RNN's output is already tanh'ed)",
        ("return self.head(outputs[:, -1])   #", "return self.head(torch.tanh(outputs[:, -1]))   #"))
mistake("ch01", "f01b", "ch01_many_to_many_async", "ManyToManyAsync: the encoder reads tgt (copy slip: self.encoder(tgt))",
        ("_, h_n = self.encoder(src) ", "_, h_n = self.encoder(tgt) "))
mistake("ch01", "f01c", "ch01_train_step", "train_step: F.cross_entropy(..., reduction=\"sum\") (the summed loss, not the mean)",
        ("loss = F.cross_entropy(model(x), y) ", "loss = F.cross_entropy(model(x), y, reduction=\"sum\") "))
mistake("ch01", "f01d", "ch01_fit", "fit: an epoch-style loop, range(len(x) // batch_size), ignoring steps",
        ("for _ in range(steps):", "for _ in range(len(x) // batch_size):"))
mistake("ch01", "f01e", "ch01_one_to_many", "OneToMany: x given as the initial hidden state, every input zero",
        ("        inputs[:, 0] = x                                     # x only at the first step\n", ""),
        ("outputs, _ = self.rnn(inputs) ", "outputs, _ = self.rnn(inputs, x.unsqueeze(0)) "))
variant("ch01", "v01a", "ch01_one_to_many", "OneToMany: inputs = torch.stack([x] + [zeros_like(x)] * (steps - 1), 1)",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])  # (B, steps, D), all zeros\n"
         "        inputs[:, 0] = x ",
         "inputs = torch.stack([x] + [torch.zeros_like(x)] * (steps - 1), dim=1)\n"
         "        pass "))
variant("ch01", "v01b", "ch01_fit", "fit with a while loop, index_select and keyword arguments",
        code=("def fit(model, x, y, steps, batch_size=64, lr=1e-2, seed=0):\n"
              "    opt = torch.optim.Adam(params=list(model.parameters()), lr=lr)\n"
              "    gen = torch.Generator()\n"
              "    gen.manual_seed(seed)\n"
              "    out = [0.0] * steps\n"
              "    step = 0\n"
              "    while step < steps:\n"
              "        idx = torch.randint(low=0, high=x.shape[0], size=(batch_size,), generator=gen)\n"
              "        out[step] = train_step(model, opt, x.index_select(0, idx), y.index_select(0, idx))\n"
              "        step += 1\n"
              "    return out\n"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "f02a", "ch02_rnn_cell", "rnn_cell: the recurrent term outside the tanh, h_prev @ W_hh.T + tanh(x_t @ W_hx.T + b_h)",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)",
         "return h_prev @ W_hh.T + torch.tanh(x_t @ W_hx.T + b_h)"))
mistake("ch02", "f02b", "ch02_rnn_layer", "rnn_layer preallocates the outputs with torch.empty_like(x) (D features, not H)",
        ("    outputs = []\n", "    outputs = torch.empty_like(x)\n"),
        ("        outputs.append(h)\n", "        outputs[:, t] = h\n"),
        ("    outputs = torch.stack(outputs, dim=1)              # (B, T, H)\n", ""))
mistake("ch02", "f02c", "ch02_rnn_cell", "rnn_cell in column form with b_h[:, None], the final .T forgotten (returns (H, B))",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)",
         "return torch.tanh(W_hh @ h_prev.T + W_hx @ x_t.T + b_h[:, None])"))
mistake("ch02", "f02d", "ch02_bptt_gradient_norms", "bptt: diag(1 - h_t^2) written with torch.diag (of a 2-D tensor: its diagonal)",
        ("grad = (grad * (1 - states[:, t] ** 2)) @ W_hh ", "grad = (grad @ torch.diag(1 - states[:, t] ** 2)) @ W_hh "))
mistake("ch02", "f02e", "ch02_clip_grad_norm", "clip_grad_norm: vector_norm(torch.cat(grads)) of gradients of different shapes (no flatten)",
        ("total_norm = torch.sqrt(sum((g.detach() ** 2).sum() for g in grads))",
         "total_norm = torch.linalg.vector_norm(torch.cat([g.detach() for g in grads]))"))
variant("ch02", "v02a", "ch02_rnn_cell", "rnn_cell with nested torch.addmm",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)",
         "return torch.tanh(torch.addmm(torch.addmm(b_h, x_t, W_hx.t()), h_prev, W_hh.t()))"))
variant("ch02", "v02b", "ch02_rnn_layer", "rnn_layer without transposes: unbind on the time axis, stack back on it",
        code=("def rnn_layer(x, W_hx, W_hh, b_h, h0=None, batch_first=True):\n"
              "    time_axis = 1 if batch_first else 0\n"
              "    steps = x.unbind(time_axis)\n"
              "    h = h0 if h0 is not None else x.new_zeros(steps[0].shape[0], W_hh.shape[0])\n"
              "    states = []\n"
              "    for x_t in steps:\n"
              "        h = rnn_cell(x_t, h, W_hx, W_hh, b_h)\n"
              "        states.append(h)\n"
              "    return torch.stack(states, dim=time_axis), h\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "f03a", "ch03_lstm_cell", "lstm_cell returns (h, c_prev): the old cell state",
        ("    return h, c\n", "    return h, c_prev\n"))
mistake("ch03", "f03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias: x @ Wx[k] without .T in the four input products",
        ('i = torch.sigmoid(x @ Wx["i"].T', 'i = torch.sigmoid(x @ Wx["i"]'),
        ('f = torch.sigmoid(x @ Wx["f"].T', 'f = torch.sigmoid(x @ Wx["f"]'),
        ('g = torch.tanh(x @ Wx["g"].T', 'g = torch.tanh(x @ Wx["g"]'),
        ('o = torch.sigmoid(x @ Wx["o"].T', 'o = torch.sigmoid(x @ Wx["o"]'))
mistake("ch03", "f03c", "ch03_split_gates", "split_gates: split(H) with H = cell.weight_ih.shape[1] (that is D)",
        ("Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))",
         "H = cell.weight_ih.shape[1]\n    Wx = dict(zip(GATES, cell.weight_ih.split(H)))"),
        ("Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))", "Wh = dict(zip(GATES, cell.weight_hh.split(H)))"),
        ("(cell.bias_ih + cell.bias_hh).chunk(4)", "(cell.bias_ih + cell.bias_hh).split(H)"))
mistake("ch03", "f03d", "ch03_lstm_layer", "lstm_layer appends the cell state c to the outputs instead of h",
        ("        outputs.append(h)\n", "        outputs.append(c)\n"))
mistake("ch03", "f03e", "ch03_lstm_layer", "lstm_layer: a given state's c_0 taken from h_0 (state[0][0] twice)",
        ("h, c = state[0][0], state[1][0]", "h, c = state[0][0], state[0][0]"))
variant("ch03", "v03a", "ch03_lstm_cell", "lstm_cell with a dict of per-gate F.linear and torch.addcmul",
        code=("def lstm_cell(x, h_prev, c_prev, W, b):\n"
              "    hx = torch.cat((h_prev, x), dim=-1)\n"
              "    pre = {k: torch.nn.functional.linear(hx, W[k], b[k]) for k in ('i', 'f', 'g', 'o')}\n"
              "    i, f, o = (torch.sigmoid(pre[k]) for k in ('i', 'f', 'o'))\n"
              "    g = torch.tanh(pre['g'])\n"
              "    c = torch.addcmul(f * c_prev, i, g)\n"
              "    return o * torch.tanh(c), c\n"))
variant("ch03", "v03b", "ch03_lstm_layer", "lstm_layer carrying the state as one tuple over x.unbind(1)",
        code=("def lstm_layer(cell, x, hidden_size, state=None):\n"
              "    B = x.shape[0]\n"
              "    if state is None:\n"
              "        state = (x.new_zeros(B, hidden_size), x.new_zeros(B, hidden_size))\n"
              "    else:\n"
              "        state = (state[0][0], state[1][0])\n"
              "    hs = []\n"
              "    for x_t in x.unbind(1):\n"
              "        state = cell(x_t, state)\n"
              "        hs.append(state[0])\n"
              "    return torch.stack(hs, 1), (state[0][None], state[1][None])\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "f04a", "ch04_gru_cell_textbook", "gru_cell_textbook: weight_ih.chunk(3, dim=1) (blocks cut along the input axis)",
        ("W_rx, W_zx, W_nx = weight_ih.split(H) ", "W_rx, W_zx, W_nx = weight_ih.chunk(3, dim=1) "))
mistake("ch04", "f04b", "ch04_gru_cell_textbook", "gru_cell_textbook: the update gate reads W_rh (copy slip: h @ W_rh.T in z)",
        ("z = torch.sigmoid(x @ W_zx.T + h @ W_zh.T + b_z)", "z = torch.sigmoid(x @ W_zx.T + h @ W_rh.T + b_z)"))
mistake("ch04", "f04c", "ch04_gru_cell_pytorch", "gru_cell_pytorch: n = tanh(i_n) + r * h_n (the tanh around the input part only)",
        ("n = torch.tanh(i_n + r * h_n) ", "n = torch.tanh(i_n) + r * h_n "))
mistake("ch04", "f04d", "ch04_count_parameters", "count_parameters: the biases counted once per layer, not once per direction",
        ("        if bias:\n            per_direction += blocks * 2 * hidden_size   # bias_ih and bias_hh\n"
         "        total += directions * per_direction",
         "        total += directions * per_direction\n"
         "        if bias:\n            total += blocks * 2 * hidden_size   # bias_ih and bias_hh"))
mistake("ch04", "f04e", "ch04_count_parameters", "count_parameters: the biases counted for one layer only (added once after the loop)",
        ("        if bias:\n            per_direction += blocks * 2 * hidden_size   # bias_ih and bias_hh\n", ""),
        ("    return total", "    if bias:\n        total += directions * blocks * 2 * hidden_size   # bias_ih and bias_hh\n"
                           "    return total"))
variant("ch04", "v04a", "ch04_gru_cell_textbook", "gru_cell_textbook with F.linear per block and torch.lerp",
        code=("def gru_cell_textbook(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    lin = torch.nn.functional.linear\n"
              "    H = h.shape[-1]\n"
              "    Wi, Wh, b = weight_ih.split(H), weight_hh.split(H), (bias_ih + bias_hh).split(H)\n"
              "    r = torch.sigmoid(lin(x, Wi[0], b[0]) + lin(h, Wh[0]))\n"
              "    z = torch.sigmoid(lin(x, Wi[1], b[1]) + lin(h, Wh[1]))\n"
              "    n = torch.tanh(lin(x, Wi[2], b[2]) + lin(r * h, Wh[2]))\n"
              "    return torch.lerp(n, h, z)\n"))
variant("ch04", "v04b", "ch04_count_parameters", "count_parameters as dirs * gates * H * (d_in + H + 2 * int(bias)) per layer",
        code=("def count_parameters(kind, input_size, hidden_size, num_layers=1, bias=True, bidirectional=False):\n"
              "    gates = dict(rnn=1, gru=3, lstm=4)[kind]\n"
              "    dirs = 2 if bidirectional else 1\n"
              "    H = hidden_size\n"
              "    n = 0\n"
              "    for layer in range(num_layers):\n"
              "        d_in = input_size if layer == 0 else dirs * H\n"
              "        n += dirs * gates * H * (d_in + H + 2 * int(bias))\n"
              "    return n\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "f05a", "ch05_reverse_padded", "reverse_padded as a loop with a negative-step slice x[b, L - 1::-1] (NumPy habit)",
        ("    B, T = x.shape[:2]\n"
         "    t = torch.arange(T, device=x.device)                       # (T,)\n"
         "    L = lengths.to(x.device).unsqueeze(1)                       # (B, 1)\n"
         "    idx = torch.where(t < L, L - 1 - t, t)                      # (B, T): where each output step reads from\n"
         "    idx = idx.reshape(B, T, *([1] * (x.dim() - 2))).expand_as(x)  # (B, T, ...)\n"
         "    return x.gather(1, idx)\n",
         "    y = x.clone()\n"
         "    for b in range(x.shape[0]):\n"
         "        L = int(lengths[b])\n"
         "        y[b, :L] = x[b, L - 1::-1]\n"
         "    return y\n"))
mistake("ch05", "f05b", "ch05_lstm_direction", "lstm_direction returns (h, c_new): the last step's cell state, padded or not",
        ("return torch.stack(outputs, dim=1), (h, c) ", "return torch.stack(outputs, dim=1), (h, c_new) "))
mistake("ch05", "f05c", "ch05_bilstm_from_cells", "BiLSTMFromCells: the two directions' outputs joined along dim 1 (time)",
        ("outputs = torch.cat([out_f, out_b], dim=-1) ", "outputs = torch.cat([out_f, out_b], dim=1) "))
mistake("ch05", "f05d", "ch05_final_states", "final_states returns [backward ; forward] (exercise 9's order)",
        ("return torch.cat([forward_last, backward_first], dim=-1) ", "return torch.cat([backward_first, forward_last], dim=-1) "))
mistake("ch05", "f05e", "ch05_residual_stack", "ResidualLSTMStack: every layer built as nn.LSTM(input_size, ...)",
        ("sizes = [input_size] + [hidden_size] * (num_layers - 1)\n"
         "        self.layers = nn.ModuleList([nn.LSTM(d, hidden_size, batch_first=True) for d in sizes])",
         "self.layers = nn.ModuleList([nn.LSTM(input_size, hidden_size, batch_first=True) for _ in range(num_layers)])"))
variant("ch05", "v05a", "ch05_reverse_padded", "reverse_padded with torch.take_along_dim and an arithmetic mask",
        code=("def reverse_padded(x, lengths):\n"
              "    B, T = x.shape[0], x.shape[1]\n"
              "    t = torch.arange(T).expand(B, T)\n"
              "    L = lengths.view(B, 1)\n"
              "    real = t < L\n"
              "    idx = real * (L - 1 - t) + (~real) * t\n"
              "    idx = idx.view(B, T, *([1] * (x.dim() - 2)))\n"
              "    return torch.take_along_dim(x, idx, dim=1)\n"))
variant("ch05", "v05b", "ch05_masked_mean", "masked_mean with masked_fill of the padding",
        code=("def masked_mean(outputs, lengths):\n"
              "    T = outputs.shape[1]\n"
              "    pad = torch.arange(T, device=outputs.device)[None, :] >= lengths[:, None]\n"
              "    total = outputs.masked_fill(pad[:, :, None], 0.0).sum(dim=1)\n"
              "    return total / lengths[:, None].to(outputs.dtype)\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "f06a", "ch06_build_vocab", "build_vocab: ties sorted case-insensitively (token.lower())",
        ("kept.sort(key=lambda token: (-counts[token], token))", "kept.sort(key=lambda token: (-counts[token], token.lower()))"))
mistake("ch06", "f06b", "ch06_numericalize", "numericalize converts the caller's token list in place (tokens[i] = index)",
        ("ids = [stoi.get(token, UNK_INDEX) for token in tokens]",
         "for i, token in enumerate(tokens):\n        tokens[i] = stoi.get(token, UNK_INDEX)\n    ids = tokens"))
mistake("ch06", "f06c", "ch06_encoder", "Encoder: nn.GRU(..., bidirectional=True) (an extra option)",
        ("self.rnn = nn.GRU(emb_size, hidden_size, batch_first=True)",
         "self.rnn = nn.GRU(emb_size, hidden_size, batch_first=True, bidirectional=True)"))
mistake("ch06", "f06d", "ch06_teacher_forced_loss", "teacher_forced_loss loops over all Ty + 1 columns of tgt (one step too many)",
        ("for t in range(dec_in.shape[1]):\n        step_logits, d = decoder.step(dec_in[:, t], d)",
         "for t in range(tgt.shape[1]):\n        step_logits, d = decoder.step(tgt[:, t], d)"))
mistake("ch06", "f06e", "ch06_greedy_decode", "greedy_decode: d, _ = encoder(...) (the outputs taken for the state)",
        ("_, d = encoder(src, src_lengths) ", "d, _ = encoder(src, src_lengths) "))
variant("ch06", "v06a", "ch06_build_vocab", "build_vocab with a dict and heapq.nsmallest",
        code=("def build_vocab(sequences, min_freq=1):\n"
              "    import heapq\n"
              "    counts = {}\n"
              "    for seq in sequences:\n"
              "        for tok in seq:\n"
              "            counts[tok] = counts.get(tok, 0) + 1\n"
              "    items = [(-n, tok) for tok, n in counts.items() if n >= min_freq]\n"
              "    ordered = heapq.nsmallest(len(items), items)\n"
              "    return list(SPECIALS) + [tok for _, tok in ordered]\n"))
variant("ch06", "v06b", "ch06_teacher_forced_loss", "teacher_forced_loss as the summed loss over the count of real targets",
        ("loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), ignore_index=pad_index)",
         "flat = dec_out.reshape(-1)\n"
         "    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), flat, ignore_index=pad_index,\n"
         "                           reduction='sum') / (flat != pad_index).sum()"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "f07a", "ch07_lstm_cell", "LSTMCell: c computed before the line that squashes g (g used raw)",
        ("        g = torch.tanh(g)                                      # (B, H)\n"
         "        c = f * c_prev + i * g                                 # (B, H)\n",
         "        c = f * c_prev + i * g                                 # (B, H)\n"
         "        g = torch.tanh(g)                                      # (B, H)\n"))
mistake("ch07", "f07b", "ch07_encoder", "EncoderRNN: the mask applied to the left cell only (the right cell runs over the padding)",
        ("            new = self.lstm_cell_right(emb[:, t], state)\n"
         "            keep = mask[:, t, None]\n"
         "            state = (torch.where(keep, new[0], state[0]),\n"
         "                     torch.where(keep, new[1], state[1]))\n",
         "            state = self.lstm_cell_right(emb[:, t], state)\n"))
mistake("ch07", "f07c", "ch07_attention", "Attention: v applied before the tanh, tanh(Attn(...) @ v)",
        ("energy = torch.tanh(self.Attn(pairs))", "energy = self.Attn(pairs)"),
        ("scores = energy @ self.v ", "scores = torch.tanh(energy @ self.v) "))
mistake("ch07", "f07d", "ch07_decoder", "AttnDecoderRNN returns the old state instead of (h, c)",
        ("return F.log_softmax(scores, dim=-1), (h, c), weights", "return F.log_softmax(scores, dim=-1), state, weights"))
mistake("ch07", "f07e", "ch07_greedy", "greedy_translate: row[: row.index(eos_index)] without checking that <eos> is in the row",
        ("out.append(row[: row.index(eos_index)] if eos_index in row else row)", "out.append(row[: row.index(eos_index)])"))
variant("ch07", "v07a", "ch07_attention", "Attention with einsum, repeat and finfo.min for the padding",
        code=("class Attention(nn.Module):\n"
              "    \"\"\"Additive attention in its concatenated form (the constructor is given).\"\"\"\n"
              "\n"
              "    def __init__(self, enc_size, dec_size, attn_size):\n"
              "        super().__init__()\n"
              "        self.Attn = nn.Linear(dec_size + enc_size, attn_size)   # [W_d W_h], b\n"
              "        self.v = nn.Parameter(torch.rand(attn_size) - 0.5)      # v\n"
              "\n"
              "    def forward(self, hidden, encoder_outputs, mask=None):\n"
              "        Tx = encoder_outputs.size(1)\n"
              "        query = hidden.unsqueeze(1).repeat(1, Tx, 1)\n"
              "        pre = self.Attn(torch.cat((query, encoder_outputs), dim=2))\n"
              "        energy = torch.einsum('bsa,a->bs', torch.tanh(pre), self.v)\n"
              "        if mask is not None:\n"
              "            energy = energy.masked_fill(mask.logical_not(), torch.finfo(energy.dtype).min)\n"
              "        return energy.softmax(dim=1)\n"))
variant("ch07", "v07b", "ch07_decoder", "AttnDecoderRNN: Out applied by its three column blocks, log-softmax as scores - logsumexp",
        code=("class AttnDecoderRNN(nn.Module):\n"
              "    \"\"\"One step of the attention decoder (the constructor is given).\"\"\"\n"
              "\n"
              "    def __init__(self, vocab_size, emb_size, hidden_size, enc_size, attn_size):\n"
              "        super().__init__()\n"
              "        self.embedding = nn.Embedding(vocab_size, emb_size)\n"
              "        self.attention = Attention(enc_size, hidden_size, attn_size)\n"
              "        self.lstm_cell = LSTMCell(enc_size + emb_size, hidden_size)\n"
              "        self.Out = nn.Linear(hidden_size + enc_size + emb_size, vocab_size)\n"
              "\n"
              "    def forward(self, y_prev, state, encoder_outputs, mask=None):\n"
              "        emb = self.embedding(y_prev)\n"
              "        w = self.attention(state[0], encoder_outputs, mask)\n"
              "        ctx = (w.unsqueeze(-1) * encoder_outputs).sum(dim=1)\n"
              "        h, c = self.lstm_cell(torch.cat((ctx, emb), dim=1), state)\n"
              "        H, De = h.shape[1], ctx.shape[1]\n"
              "        Wo = self.Out.weight\n"
              "        scores = (F.linear(h, Wo[:, :H]) + F.linear(ctx, Wo[:, H:H + De])\n"
              "                  + F.linear(emb, Wo[:, H + De:], self.Out.bias))\n"
              "        return scores - torch.logsumexp(scores, dim=-1, keepdim=True), (h, c), w\n"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "f08a", "ch08_attend", "attend: masked_fill(~mask[None, :, :], ...) (the new axis in front)",
        ("masked_fill(~mask[:, None, :]", "masked_fill(~mask[None, :, :]"))
mistake("ch08", "f08b", "ch08_dot", "dot_attention: dec.transpose(1, 2) @ enc (the wrong operand transposed)",
        ("energies = dec @ enc.transpose(1, 2) ", "energies = dec.transpose(1, 2) @ enc "))
mistake("ch08", "f08c", "ch08_scaled_dot", "scaled_dot_attention = dot_attention(dec, enc / sqrt(D), mask) (keys scaled, so the values too)",
        ("    energies = dec @ enc.transpose(1, 2) / math.sqrt(D)      # (B, Ty, Tx)\n"
         "    return attend(energies, enc, mask)\n",
         "    return dot_attention(dec, enc / math.sqrt(D), mask)\n"))
mistake("ch08", "f08d", "ch08_bilinear", "bilinear_attention = dot_attention(dec, enc @ W, mask) (W h_s written enc @ W)",
        ("    energies = (dec @ W) @ enc.transpose(1, 2)   # (B, Ty, Dh) @ (B, Dh, Tx) -> (B, Ty, Tx)\n"
         "    return attend(energies, enc, mask)\n",
         "    return dot_attention(dec, enc @ W, mask)\n"))
mistake("ch08", "f08e", "ch08_macs", "reduced_rank_macs: 'once' leaves out the queries' cost (keys and dots only)",
        ("once = B * (keys + queries + dots)", "once = B * (keys + dots)"))
variant("ch08", "v08a", "ch08_attend", "attend with energies + log(mask) (0 at real tokens, -inf at padding)",
        code=("def attend(energies, values, mask):\n"
              "    bias = torch.log(mask.to(energies.dtype))[:, None, :]\n"
              "    weights = torch.softmax(energies + bias, dim=-1)\n"
              "    return weights, torch.bmm(weights, values)\n"))
variant("ch08", "v08b", "ch08_bilinear", "bilinear_attention = dot_attention(dec @ W, enc, mask)",
        code=("def bilinear_attention(dec, enc, mask, W):\n"
              "    return dot_attention(dec @ W, enc, mask)\n"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "f09a", "ch09_encode", "encode: d_0 projected from the cell states c_n (copy slip)",
        ("d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1)) ", "d0 = model.W_h(torch.cat([c_n[1], c_n[0]], dim=-1)) "))
mistake("ch09", "f09b", "ch09_decode_step", "decode_step: the dropout on tilde d forgotten, o = tanh(W_u u)",
        ("o = model.dropout(torch.tanh(model.W_u(u))) ", "o = torch.tanh(model.W_u(u)) "))
mistake("ch09", "f09c", "ch09_teacher_forcing", "decode_teacher_forcing feeds tgt_in[t] (a row) instead of tgt_in[:, t]",
        ("state, o, _ = decode_step(model, tgt_in[:, t], o, state, h, h_proj, mask)",
         "state, o, _ = decode_step(model, tgt_in[t], o, state, h, h_proj, mask)"))
mistake("ch09", "f09d", "ch09_masked_loss", "masked_loss: the mean over sentences of each sentence's mean (not per token)",
        ("    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)",
         "    ce = F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD, reduction=\"none\")   # (B, Ty)\n"
         "    real = (tgt_out != PAD).float()\n"
         "    return ((ce * real).sum(1) / real.sum(1)).mean()"))
mistake("ch09", "f09e", "ch09_beam_search", "beam_search: the live hypotheses at max_len normalised by len + 1 (an <eos> they do not have)",
        ("finished += [(tokens, score / len(tokens) ** alpha) for tokens, score, _ in live]",
         "finished += [(tokens, score / (len(tokens) + 1) ** alpha) for tokens, score, _ in live]"))
variant("ch09", "v09a", "ch09_masked_loss", "masked_loss with nll_loss of log_softmax, flattened",
        code=("def masked_loss(logits, tgt_out):\n"
              "    log_probs = F.log_softmax(logits, dim=-1).flatten(0, 1)\n"
              "    return F.nll_loss(log_probs, tgt_out.flatten(), ignore_index=PAD)\n"))
variant("ch09", "v09b", "ch09_decode_step", "decode_step with torch.where, matmul and F.dropout",
        code=("def decode_step(model, y_prev, o_prev, state, h, h_proj, mask):\n"
              "    d, c = model.decoder(torch.cat((model.tgt_embed(y_prev), o_prev), dim=1), state)\n"
              "    e = torch.matmul(h_proj, d.unsqueeze(-1)).squeeze(-1)\n"
              "    e = torch.where(mask, e, torch.tensor(float('-inf')))\n"
              "    alpha = F.softmax(e, dim=1)\n"
              "    a = torch.matmul(alpha.unsqueeze(1), h).squeeze(1)\n"
              "    u = torch.cat((a, d), dim=1)\n"
              "    o = F.dropout(torch.tanh(model.W_u(u)), p=model.dropout.p, training=model.training)\n"
              "    return (d, c), o, alpha\n"))

CASES = M + OK

# ------------------------------------------------------------------------------------------------------ verdicts
# The rule (strict), reading ONLY the first failing visible test's message as the student sees it in Jupyter:
#   P  points to the cause: a student reading only it knows which line / term to change (and how);
#   Pa partly: it names the right function or tensor (or where the values go wrong) but not what is wrong with it;
#   N  not at all: nothing in it leads to the cause (a bare PyTorch error far from it, a generic mismatch);
#   M  misleading: it names a wrong cause, or blames code that is right.
# "-": no visible test fails. Filled in after reading student_view.json (phase 2: the messages of the go commit).
# Read from student_view.json after the merge of 088c782 (the go commit: "issue 22 round 8, generic").
VERDICTS: dict[str, tuple[str, str]] = {
    "ch01-f01a": ("P", "an extra tanh around `outputs[:, -1]`, in the returned value"),
    "ch01-f01b": ("P", "at the `self.encoder(tgt)` line: the encoder expects 3 features, got 8: the argument is the wrong tensor"),
    "ch01-f01c": ("P", "5 times the expected loss: the losses of the batch summed instead of averaged"),
    "ch01-f01d": ("P", "fit must return one loss per step: 30 steps, got 32 losses (the loop count)"),
    "ch01-f01e": ("Pa", "at the right line, 'the state has the wrong shape' (true: x is not a state), but not that x belongs in "
                        "the inputs at step 0; the .squeeze() guess does not apply"),
    "ch02-f02a": ("Pa", "rnn_cell's values differ; no cause (the recurrent term outside the tanh is not recognised)"),
    "ch02-f02b": ("Pa", "PyTorch's expanded-size error at `outputs[:, t] = h` (3 vs 4); not that the preallocation "
                        "`empty_like(x)` took x's D features"),
    "ch02-f02c": ("P", "shape (4, 2) for (2, 4): axes swapped, a transpose missing"),
    "ch02-f02d": ("Pa", "PyTorch's 'size mismatch, got input (2), mat (2x3), vec (2)' at the torch.diag line; not that "
                        "torch.diag of a 2-D tensor returns its diagonal (an element-wise product is meant)"),
    "ch02-f02e": ("P", "at the cat line: tensors with different numbers of axes (got 1 and 2): the gradients must be "
                       "flattened before the cat (the squeeze/indexing guesses do not apply)"),
    "ch03-f03a": ("P", "`c_prev` where `c` is needed, in the returned value"),
    "ch03-f03b": ("P", "x (2, 3) @ Wx['i'] (4, 3): `x @ Wx['i'].mT` would give (2, 4), first of the options"),
    "ch03-f03c": ("P", "Wx must have the keys i, f, g, o, got 3 blocks: 4 blocks of the stacked rows, chunk dimension 0"),
    "ch03-f03d": ("P", "the cell states c_t collected as the outputs"),
    "ch03-f03e": ("P", "`state[0]` where `state[1]` is needed, in the line that computes (h, c)"),
    "ch04-f04a": ("Pa", "matmul error at the r line with W_rx.T of shape (1, 12): the odd shape is visible, but the options "
                        "offered (W_nx for x, weight_ih.T for W_rx.T) are not the cause (the chunk along dim 1 above)"),
    "ch04-f04b": ("P", "`h @ W_rh.T` where `h @ W_zh.T` is needed, in the z line"),
    "ch04-f04c": ("P", "`torch.tanh(i_n) + r * h_n` where `torch.tanh(i_n + r * h_n)` is needed"),
    "ch04-f04d": ("M", "'count one bias vector per block (PyTorch has two)': the code counts two per block; the cause is the "
                       "biases counted once per layer instead of per direction (same number for this case; the "
                       "unidirectional cases, which pass, rule the named cause out)"),
    "ch04-f04e": ("M", "'count one bias vector per block': the code counts two per block; the cause is the biases of one "
                       "layer only (same number for 2 layers; the one-layer cases, which pass, rule it out)"),
    "ch05-f05a": ("P", "PyTorch's 'step must be greater than zero' at the `x[b, L - 1::-1]` line: no negative step"),
    "ch05-f05b": ("P", "`c_new` where `c` is needed, in the returned value"),
    "ch05-f05c": ("P", "2 parts joined along dimension 1 where dimension 2 is asked (torch.cat(..., dim=2)?)"),
    "ch05-f05d": ("P", "the two halves along dimension 1 are swapped (the two directions in the wrong order)"),
    "ch05-f05e": ("Pa", "matmul error (7x4 and 3x16) at the `layer(packed)` line, 'a .T missing or the wrong matrix?'; not "
                        "that the upper layers were built for input_size (in __init__)"),
    "ch06-f06a": ("-", "no visible test fails (no token of the visible tests differs in case)"),
    "ch06-f06b": ("P", "the argument tokens changed: got the indices [6, 4, ...] in the caller's list"),
    "ch06-f06c": ("P", "outputs 8 features for 4: 'blocks or directions concatenated?'"),
    "ch06-f06d": ("Pa", "PyTorch's 'Expected input batch_size (10) to match target batch_size (8)' at the loss line; not "
                        "that the loop runs Ty + 1 steps"),
    "ch06-f06e": ("Pa", "'a value is None' at the decoder.step line (d is the stand-in encoder's outputs); the causes "
                        "offered (mask=None allowed? a missing return?) are not the unpacking order"),
    "ch07-f07a": ("M", "'the candidate g computed with relu where tanh is asked': there is no relu; g is used before the "
                       "line that squashes it (the right term, the wrong cause)"),
    "ch07-f07b": ("M", "'`mask[:, B, None]` where `mask[:, t, None]` is needed, in the line that computes keep': the keep "
                       "line is right (it has t); the right-to-left loop has no mask at all"),
    "ch07-f07c": ("Pa", "the attention weights (with a mask) differ; no cause (v applied before the tanh)"),
    "ch07-f07d": ("P", "`h_prev` where `h` is needed, in the returned value"),
    "ch07-f07e": ("P", "Python's '2 is not in list' at `row.index(eos_index)`: a row without <eos>"),
    "ch08-f08a": ("P", "a new axis in the wrong place: mask[:, None, :] would line its axes up"),
    "ch08-f08b": ("Pa", "matmul error at the line; the options offered (enc @ dec.transpose(1, 2), dec for enc) are not "
                        "the fix (dec @ enc.transpose(1, 2))"),
    "ch08-f08c": ("P", "the contexts are 0.4472 = 1/sqrt(5) times the expected ones: an extra factor (the values scaled)"),
    "ch08-f08d": ("P", "enc (2, 4, 5) @ W (6, 5): `enc @ W.mT` would give (2, 4, 6) (fixing it leaves the values "
                       "projected, which the next run reports)"),
    "ch08-f08e": ("P", "leave out the queries U d_t (168 of the 798)"),
    "ch09-f09a": ("P", "in d0: `h_n` and `c_n` in each other's place"),
    "ch09-f09b": ("P", "in training mode, dropout (p=0.5) should zero some entries of tilde d_t"),
    "ch09-f09c": ("Pa", "broadcast error (2 vs 4) at the decode_step call line; the examples (a mask, a state) do not "
                        "apply; not that tgt_in[t] is a row"),
    "ch09-f09d": ("P", "each sentence's tokens averaged, then the sentences"),
    "ch09-f09e": ("Pa", "scores differ for max_len=3 at index 0; no cause (the live hypotheses normalised by len + 1)"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.run_trial(sys.modules[__name__], "/tmp/student_trial_22f", argv)


if __name__ == "__main__":
    main()
