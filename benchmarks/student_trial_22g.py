"""Student trial 22g: the acceptance trial of issue 22 after round 9, 45 new mistakes and 18 correct variants.

A fresh pair of eyes wrote the mistakes from the student notebooks alone (plan committed in b0882ed, before
solutions/ and the catalogues were read: benchmarks/results/student_trial_22g_plan.md); those that repeated an
old mutant or an earlier trial's mistake were replaced (the plan's second table). A mistake is one edit of one
cell's reference code, ``(old, new)`` pairs whose ``old`` occurs once; a variant rewrites the cell (or edits it)
and must keep full marks. Only the cases and the verdicts live here: building, grading (the class grader, one
run per assignment), the Jupyter view and the report are benchmarks/student_trial.py's and student_trial_22d.py's
(``run_trial``).

Run from the repository root (results in /tmp/student_trial_22g unless --root says otherwise):

    nice -n 5 .venv/bin/python benchmarks/student_trial_22g.py --grade [ch01 ...]
    nice -n 5 .venv/bin/python benchmarks/student_trial_22g.py --student-view [ch01 ...] [--students ch01-g01a,...]
    nice -n 5 .venv/bin/python benchmarks/student_trial_22g.py --confirm --students ch01-g01a,...
    .venv/bin/python benchmarks/student_trial_22g.py --table        # benchmarks/results/student_trial_22g.md's tables
    .venv/bin/python benchmarks/student_trial_22g.py --save benchmarks/results/student_trial_22g.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "g01a", "ch01_many_to_one", "ManyToOne: head(outputs[-1]), the last batch row, not the last time step",
        ("return self.head(outputs[:, -1])   #", "return self.head(outputs[-1])   #"))
mistake("ch01", "g01b", "ch01_many_to_many_sync", "ManyToManySync returns (B, C, T) (.transpose(1, 2): the layout cross_entropy takes)",
        ("return self.head(outputs)     # (B, T, C)", "return self.head(outputs).transpose(1, 2)     # (B, T, C)"))
mistake("ch01", "g01c", "ch01_one_to_many", "OneToMany builds its inputs time first, (steps, B, D) with inputs[0] = x, for a batch-first RNN",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])  # (B, steps, D), all zeros\n"
         "        inputs[:, 0] = x ",
         "inputs = x.new_zeros(steps, x.shape[0], x.shape[1])  # (steps, B, D), all zeros\n"
         "        inputs[0] = x "))
mistake("ch01", "g01d", "ch01_train_step", "train_step: F.cross_entropy(y, model(x)) (the two arguments swapped)",
        ("loss = F.cross_entropy(model(x), y) ", "loss = F.cross_entropy(y, model(x)) "))
mistake("ch01", "g01e", "ch01_fit", "fit: Adam(..., lr=lr, weight_decay=1e-4) (an extra option from a tutorial)",
        ("torch.optim.Adam(model.parameters(), lr=lr)", "torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-4)"))
variant("ch01", "w01a", "ch01_many_to_one", "ManyToOne from h_n.squeeze(0)",
        ("return self.head(outputs[:, -1])", "return self.head(h_n.squeeze(0))"))
variant("ch01", "w01b", "ch01_fit", "fit with a while loop and a step counter, losses += [...]",
        code=("def fit(model, x, y, steps, batch_size=64, lr=1e-2, seed=0):\n"
              "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
              "    g = torch.Generator().manual_seed(seed)\n"
              "    losses, step = [], 0\n"
              "    while step < steps:\n"
              "        idx = torch.randint(0, len(x), (batch_size,), generator=g)\n"
              "        losses += [train_step(model, optimizer, x[idx], y[idx])]\n"
              "        step += 1\n"
              "    return losses\n"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "g02a", "ch02_rnn_cell", "rnn_cell: the two weights swapped, h_prev @ W_hx.T + x_t @ W_hh.T",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)", "return torch.tanh(h_prev @ W_hx.T + x_t @ W_hh.T + b_h)"))
mistake("ch02", "g02b", "ch02_rnn_layer", "rnn_layer: the batch_first test inverted (`if batch_first:` on both transposes)",
        ("    if not batch_first:\n        x = x.transpose(0, 1)", "    if batch_first:\n        x = x.transpose(0, 1)"),
        ("    if not batch_first:\n        outputs = outputs.transpose(0, 1)", "    if batch_first:\n        outputs = outputs.transpose(0, 1)"))
mistake("ch02", "g02c", "ch02_rnn_layer", "rnn_layer: the new state named h_new and never assigned back to h (the state is not carried)",
        ("        h = rnn_cell(x[:, t], h, W_hx, W_hh, b_h)      # (B, H): h_{t+1} in the book's 1-based time\n"
         "        outputs.append(h)\n",
         "        h_new = rnn_cell(x[:, t], h, W_hx, W_hh, b_h)  # (B, H)\n"
         "        outputs.append(h_new)\n"))
mistake("ch02", "g02d", "ch02_bptt_gradient_norms", "bptt: the loop runs forward in time, for t in range(T) (the Jacobians in the wrong order)",
        ("for t in range(states.shape[1] - 1, -1, -1):", "for t in range(states.shape[1]):"))
mistake("ch02", "g02e", "ch02_clip_grad_norm", "clip_grad_norm: `return total_norm` indented into the loop (only the first gradient is clipped)",
        ("        for g in grads:\n            g.mul_(scale)\n",
         "        for g in grads:\n            g.mul_(scale)\n            return total_norm\n"))
variant("ch02", "w02a", "ch02_rnn_cell", "rnn_cell with torch.einsum for both products",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)",
         "return torch.tanh(torch.einsum('bh,kh->bk', h_prev, W_hh) + torch.einsum('bd,kd->bk', x_t, W_hx) + b_h)"))
variant("ch02", "w02b", "ch02_clip_grad_norm", "clip_grad_norm: vector_norm of the stacked per-parameter norms, p.grad.copy_(p.grad * s)",
        code=("def clip_grad_norm(parameters, max_norm):\n"
              "    params = [p for p in parameters if p.grad is not None]\n"
              "    if len(params) == 0:\n"
              "        return torch.tensor(0.0)\n"
              "    norms = torch.stack([torch.linalg.vector_norm(p.grad.detach()) for p in params])\n"
              "    total_norm = torch.linalg.vector_norm(norms)\n"
              "    if total_norm > max_norm:\n"
              "        s = max_norm / (total_norm + 1e-6)\n"
              "        for p in params:\n"
              "            p.grad.copy_(p.grad * s)\n"
              "    return total_norm\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "g03a", "ch03_lstm_cell", "lstm_cell: torch.stack([h_prev, x], dim=1) where torch.cat is meant",
        ("hx = torch.cat([h_prev, x], dim=1)", "hx = torch.stack([h_prev, x], dim=1)"))
mistake("ch03", "g03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias: c = f * h_prev + i * g (h_prev where c_prev is meant)",
        ("c = f * c_prev + i * g", "c = f * h_prev + i * g"))
mistake("ch03", "g03c", "ch03_split_gates", "split_gates: blocks cut from the transposed weights, weight_ih.T.chunk(4, dim=1) ((D, H) blocks)",
        ("Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))", "Wx = dict(zip(GATES, cell.weight_ih.T.chunk(4, dim=1)))"),
        ("Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))", "Wh = dict(zip(GATES, cell.weight_hh.T.chunk(4, dim=1)))"))
mistake("ch03", "g03d", "ch03_lstm_layer", "lstm_layer: zero initial states shaped like nn.LSTM's, (1, B, H), given to the cell",
        ("h = x.new_zeros(B, hidden_size)            # (B, H)\n        c = x.new_zeros(B, hidden_size) ",
         "h = x.new_zeros(1, B, hidden_size)         # (1, B, H) like nn.LSTM\n        c = x.new_zeros(1, B, hidden_size) "))
mistake("ch03", "g03e", "ch03_lstm_layer", "lstm_layer: the state passed to the cell as (c, h)",
        ("h, c = cell(x[:, t], (h, c))", "h, c = cell(x[:, t], (c, h))"))
variant("ch03", "w03a", "ch03_lstm_cell", "lstm_cell: the four gates from one stacked matrix, then chunk",
        code=("def lstm_cell(x, h_prev, c_prev, W, b):\n"
              "    W_all = torch.cat([W[k] for k in ('i', 'f', 'g', 'o')], dim=0)\n"
              "    b_all = torch.cat([b[k] for k in ('i', 'f', 'g', 'o')], dim=0)\n"
              "    z = torch.cat([h_prev, x], dim=1) @ W_all.T + b_all\n"
              "    zi, zf, zg, zo = z.chunk(4, dim=1)\n"
              "    c = torch.sigmoid(zf) * c_prev + torch.sigmoid(zi) * torch.tanh(zg)\n"
              "    return torch.sigmoid(zo) * torch.tanh(c), c\n"))
variant("ch03", "w03b", "ch03_lstm_layer", "lstm_layer writing into a preallocated output tensor (out[:, t] = h)",
        code=("def lstm_layer(cell, x, hidden_size, state=None):\n"
              "    B, T, _ = x.shape\n"
              "    if state is None:\n"
              "        h, c = x.new_zeros(B, hidden_size), x.new_zeros(B, hidden_size)\n"
              "    else:\n"
              "        h, c = state[0][0], state[1][0]\n"
              "    out = x.new_zeros(B, T, hidden_size)\n"
              "    for t in range(T):\n"
              "        h, c = cell(x[:, t], (h, c))\n"
              "        out[:, t] = h\n"
              "    return out, (h[None], c[None])\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "g04a", "ch04_gru_cell_textbook", "gru_cell_textbook: the reset gate also applied in the update gate, z = sigmoid(.. + (r * h) @ W_zh.T ..)",
        ("z = torch.sigmoid(x @ W_zx.T + h @ W_zh.T + b_z)", "z = torch.sigmoid(x @ W_zx.T + (r * h) @ W_zh.T + b_z)"))
mistake("ch04", "g04b", "ch04_gru_cell_textbook", "gru_cell_textbook: the interpolation with r instead of z, (1 - r) * h~ + r * h",
        ("return (1 - z) * h_tilde + z * h", "return (1 - r) * h_tilde + r * h"))
mistake("ch04", "g04c", "ch04_gru_cell_pytorch", "gru_cell_pytorch: gi = x @ weight_ih.T + bias_hh (copy slip: bias_hh twice, bias_ih never)",
        ("gi = x @ weight_ih.T + bias_ih ", "gi = x @ weight_ih.T + bias_hh "))
mistake("ch04", "g04d", "ch04_count_parameters", "count_parameters: weight_hh counted as H * layer_input (copy slip), not H * H",
        ("per_direction = blocks * (hidden_size * layer_input + hidden_size * hidden_size)",
         "per_direction = blocks * (hidden_size * layer_input + hidden_size * layer_input)"))
mistake("ch04", "g04e", "ch04_count_parameters", "count_parameters: parentheses lost, blocks * H * layer_input + H * H (weight_hh of one block)",
        ("per_direction = blocks * (hidden_size * layer_input + hidden_size * hidden_size)",
         "per_direction = blocks * hidden_size * layer_input + hidden_size * hidden_size"))
variant("ch04", "w04a", "ch04_gru_cell_textbook", "gru_cell_textbook with torch.einsum per block",
        code=("def gru_cell_textbook(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    H = weight_hh.shape[1]\n"
              "    Wr, Wz, Wn = weight_ih.split(H)\n"
              "    Ur, Uz, Un = weight_hh.split(H)\n"
              "    br, bz, bn = (bias_ih + bias_hh).split(H)\n"
              "    mm = lambda a, W: torch.einsum('bi,oi->bo', a, W)\n"
              "    r = torch.sigmoid(mm(x, Wr) + mm(h, Ur) + br)\n"
              "    z = torch.sigmoid(mm(x, Wz) + mm(h, Uz) + bz)\n"
              "    n = torch.tanh(mm(x, Wn) + mm(r * h, Un) + bn)\n"
              "    return n + z * (h - n)\n"))
variant("ch04", "w04b", "ch04_count_parameters", "count_parameters: a loop over layers and directions adding each tensor's shape product",
        code=("def count_parameters(kind, input_size, hidden_size, num_layers=1, bias=True, bidirectional=False):\n"
              "    gates = {'rnn': 1, 'gru': 3, 'lstm': 4}[kind]\n"
              "    n_dir = 2 if bidirectional else 1\n"
              "    count = 0\n"
              "    for layer in range(num_layers):\n"
              "        for _ in range(n_dir):\n"
              "            d_in = input_size if layer == 0 else n_dir * hidden_size\n"
              "            shapes = [(gates * hidden_size, d_in), (gates * hidden_size, hidden_size)]\n"
              "            if bias:\n"
              "                shapes += [(gates * hidden_size,), (gates * hidden_size,)]\n"
              "            for shape in shapes:\n"
              "                size = 1\n"
              "                for s in shape:\n"
              "                    size *= s\n"
              "                count += size\n"
              "    return count\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "g05a", "ch05_reverse_padded", "reverse_padded reads from T - 1 - t (the padded length) instead of lengths - 1 - t",
        ("idx = torch.where(t < L, L - 1 - t, t) ", "idx = torch.where(t < L, T - 1 - t, t) "))
mistake("ch05", "g05b", "ch05_lstm_direction", "lstm_direction: c = torch.where(real, c_new, h) (copy slip: h kept in c at padded steps)",
        ("c = torch.where(real, c_new, c)", "c = torch.where(real, c_new, h)"))
mistake("ch05", "g05c", "ch05_bilstm_from_cells", "BiLSTMFromCells: h_n[1] read from the backward outputs at lengths - 1 (the wrong end)",
        ("return outputs, (torch.stack([h_f, h_b]), torch.stack([c_f, c_b]))",
         "h_b = out_b[torch.arange(x.shape[0]), lengths - 1]   # the backward state at the end\n"
         "        return outputs, (torch.stack([h_f, h_b]), torch.stack([c_f, c_b]))"))
mistake("ch05", "g05d", "ch05_masked_mean", "masked_mean: mask.unsqueeze(1) (B, 1, T) where unsqueeze(-1) (B, T, 1) is meant",
        ("total = (outputs * mask.unsqueeze(-1)).sum(dim=1)", "total = (outputs * mask.unsqueeze(1)).sum(dim=1)"))
mistake("ch05", "g05e", "ch05_residual_stack", "ResidualLSTMStack: nn.Dropout() without its argument (always p = 0.5)",
        ("self.dropout = nn.Dropout(dropout)", "self.dropout = nn.Dropout()"))
variant("ch05", "w05a", "ch05_reverse_padded", "reverse_padded as a Python loop on a clone, y[b, :L] = x[b, :L].flip(0)",
        code=("def reverse_padded(x, lengths):\n"
              "    y = x.clone()\n"
              "    for b, L in enumerate(lengths.tolist()):\n"
              "        y[b, :L] = x[b, :L].flip(0)\n"
              "    return y\n"))
variant("ch05", "w05b", "ch05_masked_mean", "masked_mean with torch.einsum and a float mask",
        code=("def masked_mean(outputs, lengths):\n"
              "    T = outputs.shape[1]\n"
              "    m = (torch.arange(T)[None, :] < lengths[:, None]).to(outputs.dtype)\n"
              "    return torch.einsum('btf,bt->bf', outputs, m) / m.sum(1, keepdim=True)\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "g06a", "ch06_build_vocab", "build_vocab: counts = Counter(seq) inside the loop (rebinds: only the last sequence is counted)",
        ("counts = Counter(token for seq in sequences for token in seq)",
         "counts = Counter()\n    for seq in sequences:\n        counts = Counter(seq)"))
mistake("ch06", "g06b", "ch06_numericalize", "numericalize: stoi[token] (a KeyError for a token outside the vocabulary, no <unk>)",
        ("ids = [stoi.get(token, UNK_INDEX) for token in tokens]", "ids = [stoi[token] for token in tokens]"))
mistake("ch06", "g06c", "ch06_pad_batch", "pad_batch: T = len(max(sequences)) (the largest list, compared element by element, not the longest)",
        ("torch.full((len(sequences), int(lengths.max())), pad_index", "torch.full((len(sequences), len(max(sequences))), pad_index"))
mistake("ch06", "g06d", "ch06_teacher_forced_loss", "teacher_forced_loss: the mean over sentences of each sentence's mean over its real tokens",
        ("    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), ignore_index=pad_index)\n",
         "    ce = F.cross_entropy(logits.transpose(1, 2), dec_out, ignore_index=pad_index, reduction=\"none\")   # (B, Ty)\n"
         "    real = (dec_out != pad_index).float()\n"
         "    loss = ((ce * real).sum(1) / real.sum(1)).mean()\n"))
mistake("ch06", "g06e", "ch06_greedy_decode", "greedy_decode: logits, _ = decoder.step(y, d) (the decoder state never updated)",
        ("logits, d = decoder.step(y, d) ", "logits, _ = decoder.step(y, d) "))
variant("ch06", "w06a", "ch06_build_vocab", "build_vocab with a defaultdict and sorted(..., key=(-count, token))",
        code=("def build_vocab(sequences, min_freq=1):\n"
              "    from collections import defaultdict\n"
              "    n = defaultdict(int)\n"
              "    for seq in sequences:\n"
              "        for tok in seq:\n"
              "            n[tok] += 1\n"
              "    keep = sorted((tok for tok in n if n[tok] >= min_freq), key=lambda tok: (-n[tok], tok))\n"
              "    return [*SPECIALS, *keep]\n"))
variant("ch06", "w06b", "ch06_greedy_decode", "greedy_decode with a (B,) done tensor, the tokens stacked and cut at <eos> at the end",
        code=("def greedy_decode(encoder, decoder, src, src_lengths, max_len):\n"
              "    B = src.shape[0]\n"
              "    with torch.no_grad():\n"
              "        _, d = encoder(src, src_lengths)\n"
              "        y = torch.full((B,), SOS_INDEX, dtype=torch.long)\n"
              "        done = torch.zeros(B, dtype=torch.bool)\n"
              "        steps = []\n"
              "        for _ in range(max_len):\n"
              "            logits, d = decoder.step(y, d)\n"
              "            y = logits.argmax(-1)\n"
              "            steps.append(y)\n"
              "            done = done | (y == EOS_INDEX)\n"
              "            if done.all():\n"
              "                break\n"
              "    rows = torch.stack(steps, 1).tolist()\n"
              "    return [row[:row.index(EOS_INDEX)] if EOS_INDEX in row else row for row in rows]\n"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "g07a", "ch07_lstm_cell", "LSTMCell: c_prev, h_prev = state (the state tuple unpacked in the wrong order)",
        ("h_prev, c_prev = state ", "c_prev, h_prev = state "))
mistake("ch07", "g07b", "ch07_encoder", "EncoderRNN: mask = torch.ones(B, Tx) for src_lengths=None (a float mask, not bool)",
        ("mask = torch.ones(B, Tx, dtype=torch.bool)", "mask = torch.ones(B, Tx)"))
mistake("ch07", "g07c", "ch07_attention", "Attention: hidden.repeat(Tx, 1).view(B, Tx, -1) (repeats along the batch: rows of other examples)",
        ("d = hidden[:, None, :].expand(B, Tx, hidden.shape[-1])", "d = hidden.repeat(Tx, 1).view(B, Tx, -1)"))
mistake("ch07", "g07d", "ch07_decoder", "AttnDecoderRNN: the LSTM cell given (h_prev, h_prev) (copy slip: c_prev lost)",
        ("                              state)", "                              (h_prev, h_prev))"))
mistake("ch07", "g07e", "ch07_greedy", "greedy_translate: the done test and break placed before the token and weights are recorded",
        ("        tokens.append(y)\n"
         "        weights.append(model.last_weights)                          # (B, Tx)\n"
         "        done |= y == eos_index\n"
         "        if bool(done.all()):\n"
         "            break\n",
         "        done |= y == eos_index\n"
         "        if bool(done.all()):\n"
         "            break\n"
         "        tokens.append(y)\n"
         "        weights.append(model.last_weights)                          # (B, Tx)\n"))
variant("ch07", "w07a", "ch07_attention", "Attention as in the chapter: Attn's weight split into its two halves, F.linear on each",
        code=("class Attention(nn.Module):\n"
              "    \"\"\"Additive attention in its concatenated form (the constructor is given).\"\"\"\n"
              "\n"
              "    def __init__(self, enc_size, dec_size, attn_size):\n"
              "        super().__init__()\n"
              "        self.Attn = nn.Linear(dec_size + enc_size, attn_size)   # [W_d W_h], b\n"
              "        self.v = nn.Parameter(torch.rand(attn_size) - 0.5)      # v\n"
              "\n"
              "    def forward(self, hidden, encoder_outputs, mask=None):\n"
              "        Hd = hidden.shape[1]\n"
              "        W_d, W_h = self.Attn.weight[:, :Hd], self.Attn.weight[:, Hd:]\n"
              "        pre = F.linear(hidden, W_d, self.Attn.bias)[:, None, :] + F.linear(encoder_outputs, W_h)\n"
              "        e = (torch.tanh(pre) * self.v).sum(-1)\n"
              "        if mask is not None:\n"
              "            e = torch.where(mask, e, torch.full_like(e, float('-inf')))\n"
              "        return F.softmax(e, dim=1)\n"))
variant("ch07", "w07b", "ch07_greedy", "greedy_translate: weights collected as (B, 1, Tx) pieces joined with torch.cat(dim=1)",
        code=("@torch.no_grad()\n"
              "def greedy_translate(model, src, src_lengths, max_len, sos_index=1, eos_index=2):\n"
              "    memory, state = model.encode(src, src_lengths)\n"
              "    B = src.shape[0]\n"
              "    y = torch.full((B,), sos_index, dtype=torch.long)\n"
              "    finished = torch.zeros(B, dtype=torch.bool)\n"
              "    outs, ws = [], []\n"
              "    for _ in range(max_len):\n"
              "        lp, state = model.decode_step(y, state, memory)\n"
              "        y = lp.argmax(dim=1)\n"
              "        outs.append(y[:, None])\n"
              "        ws.append(model.last_weights[:, None, :])\n"
              "        finished = finished | (y == eos_index)\n"
              "        if finished.all():\n"
              "            break\n"
              "    rows = torch.cat(outs, dim=1).tolist()\n"
              "    tokens = []\n"
              "    for row in rows:\n"
              "        cut = row.index(eos_index) if eos_index in row else len(row)\n"
              "        tokens.append(row[:cut])\n"
              "    return tokens, torch.cat(ws, dim=1)\n"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "g08a", "ch08_attend", "attend: masked_fill(..., -1e-9) (a tiny negative number where -inf, or -1e9, is meant)",
        ('float("-inf"))   # (B, Ty, Tx): padding gets -inf', '-1e-9)   # (B, Ty, Tx): padding gets -inf'))
mistake("ch08", "g08b", "ch08_dot", "dot_attention: torch.bmm(dec, enc) (the transpose of enc forgotten)",
        ("energies = dec @ enc.transpose(1, 2)   #", "energies = torch.bmm(dec, enc)   #"))
mistake("ch08", "g08c", "ch08_scaled_dot", "scaled_dot_attention: part 2's weights divided by sqrt(D) after attend (not the energies)",
        ("    energies = dec @ enc.transpose(1, 2) / math.sqrt(D)      # (B, Ty, Tx)\n"
         "    return attend(energies, enc, mask)\n",
         "    weights, contexts = dot_attention(dec, enc, mask)\n"
         "    return weights / math.sqrt(D), contexts\n"))
mistake("ch08", "g08d", "ch08_reduced_rank", "reduced_rank_attention: energies = keys @ queries^T, (B, Tx, Ty)",
        ("energies = queries @ keys.transpose(1, 2) ", "energies = keys @ queries.transpose(1, 2) "))
mistake("ch08", "g08e", "ch08_macs", "reduced_rank_macs: per_step = B * Ty * (keys + queries + dots) (the queries and dots counted Ty times more)",
        ("per_step = B * (Ty * keys + queries + dots)", "per_step = B * Ty * (keys + queries + dots)"))
variant("ch08", "w08a", "ch08_attend", "attend with torch.where(mask, e, -inf) and torch.einsum for the contexts",
        code=("def attend(energies, values, mask):\n"
              "    e = torch.where(mask[:, None, :], energies, torch.tensor(float('-inf'), dtype=energies.dtype))\n"
              "    w = e.softmax(dim=2)\n"
              "    return w, torch.einsum('bts,bsd->btd', w, values)\n"))
variant("ch08", "w08b", "ch08_macs", "reduced_rank_macs written as explicit loops over sentences and steps",
        code=("def reduced_rank_macs(B, Tx, Ty, Dd, Dh, R):\n"
              "    once = per_step = 0\n"
              "    for _ in range(B):\n"
              "        once += Tx * (R * Dh)\n"
              "        for _ in range(Ty):\n"
              "            once += R * Dd + Tx * R\n"
              "            per_step += R * Dd + Tx * (R * Dh) + Tx * R\n"
              "    return int(once), int(per_step)\n"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "g09a", "ch09_encode", "encode: pad_packed_sequence without batch_first=True (h comes back (Tx, B, 2H))",
        ("h, _ = pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])",
         "h, _ = pad_packed_sequence(out, total_length=src.shape[1])"))
mistake("ch09", "g09b", "ch09_decode_step", "decode_step: model.decoder(input) without the state (the LSTM cell starts from zeros every step)",
        ("d, c = model.decoder(torch.cat([y_emb, o_prev], dim=-1), state)", "d, c = model.decoder(torch.cat([y_emb, o_prev], dim=-1))"))
mistake("ch09", "g09c", "ch09_teacher_forcing", "decode_teacher_forcing returns log_softmax(W_vocab ...) (log-probabilities where the scores are asked)",
        ("return model.W_vocab(torch.stack(outputs, dim=1))", "return F.log_softmax(model.W_vocab(torch.stack(outputs, dim=1)), dim=-1)"))
mistake("ch09", "g09d", "ch09_masked_loss", "masked_loss: logits.reshape(-1, logits.shape[1]) (Ty where V is meant)",
        ("logits.reshape(-1, logits.shape[-1])", "logits.reshape(-1, logits.shape[1])"))
mistake("ch09", "g09e", "ch09_beam_search", "beam_search: every hypothesis extended from start_state (copy slip), not its own state",
        ("log_probs, new_state = step_fn(tokens[-1] if tokens else SOS, state)",
         "log_probs, new_state = step_fn(tokens[-1] if tokens else SOS, start_state)"))
variant("ch09", "w09a", "ch09_masked_loss", "masked_loss by hand: log_softmax, gather, a float mask, sum / mask sum",
        code=("def masked_loss(logits, tgt_out):\n"
              "    logp = F.log_softmax(logits, dim=-1)\n"
              "    nll = -logp.gather(2, tgt_out.unsqueeze(2)).squeeze(2)\n"
              "    m = (tgt_out != PAD).to(logits.dtype)\n"
              "    return (nll * m).sum() / m.sum()\n"))
variant("ch09", "w09b", "ch09_beam_search", "beam_search with the candidates' scores in a float64 tensor and a stable torch.sort",
        code=("def beam_search(step_fn, start_state, beam_size=3, max_len=20, alpha=1.0):\n"
              "    beams = [([], 0.0, start_state)]\n"
              "    done = []\n"
              "    for _ in range(max_len):\n"
              "        cands, scores = [], []\n"
              "        for toks, s, st in beams:\n"
              "            lp, new_st = step_fn(toks[-1] if toks else SOS, st)\n"
              "            lp = lp.double()\n"
              "            for v in range(lp.shape[0]):\n"
              "                cands.append((toks + [v], new_st))\n"
              "            scores.append(s + lp)\n"
              "        order = torch.sort(torch.cat(scores), descending=True, stable=True).indices\n"
              "        flat = torch.cat(scores)\n"
              "        beams = []\n"
              "        for j in order[: beam_size - len(done)].tolist():\n"
              "            toks, st = cands[j]\n"
              "            s = float(flat[j])\n"
              "            if toks[-1] == EOS:\n"
              "                done.append((toks[:-1], s / len(toks) ** alpha))\n"
              "            else:\n"
              "                beams.append((toks, s, st))\n"
              "        if not beams:\n"
              "            break\n"
              "    done.extend((toks, s / len(toks) ** alpha) for toks, s, _ in beams)\n"
              "    done.sort(key=lambda hyp: hyp[1], reverse=True)\n"
              "    return done\n"))

CASES = M + OK

# ------------------------------------------------------------------------------------------------------ verdicts
# The rule (strict), reading ONLY the first failing visible test's message as the student sees it in Jupyter:
#   P  points to the cause: a student reading only it knows which line / term to change (and how);
#   Pa partly: it names the right function or tensor (or where the values go wrong) but not what is wrong with it;
#   N  not at all: nothing in it leads to the cause (a bare PyTorch error far from it, a generic mismatch);
#   M  misleading: it names a wrong cause, or blames code that is right.
# "-": no visible test fails. Read from student_view.json after the merge of 9e8335a (the go commit, 05:55 UTC); the
# messages are the same as at 5097d78 (one dropout value differs in ch05-g05e).
VERDICTS: dict[str, tuple[str, str]] = {
    "ch01-g01a": ("Pa", "shape (5, 6) for (2, 6), 'dimension 0 has size 5 instead of 2 (the wrong tensor, weight or size?)'; "
                        "not that outputs[-1] indexes the batch axis (5 is T): outputs[:, -1] is meant"),
    "ch01-g01b": ("P", "(2, 6, 5) for (2, 5, 6): 'axes swapped (a transpose or permute ...)': the student's own transpose"),
    "ch01-g01c": ("P", "(5, 2, 6) for (2, 5, 6): 'axes swapped (batch_first? ...)': the inputs were built time first"),
    "ch01-g01d": ("Pa", "PyTorch's 'log_softmax ... not implemented for Long' at the cross_entropy line; not that the two "
                        "arguments are swapped (the logits first, the targets second)"),
    "ch01-g01e": ("-", "no visible test fails (an extra weight_decay in Adam)"),
    "ch02-g02a": ("Pa", "matmul error at the line with four substitutions offered (W_hh in place of x_t, h_prev in place of "
                        "x_t, W_hx.T in place of W_hh.T, x_t.T in place of W_hh.T); the fix is among them but the message "
                        "does not say that the two weights are swapped, and fixing only the one product it names leaves the "
                        "other wrong"),
    "ch02-g02b": ("Pa", "rnn_cell received x_t (5, 3) for h_prev (2, 4): 'check what rnn_layer passes to it'; not that "
                        "the batch_first test is inverted (a batch-first x was transposed to time first)"),
    "ch02-g02c": ("P", "'your values are what you get with rnn_cell(x[:, t], h0, ...) where rnn_cell(x[:, t], h, ...)': every "
                       "step starts from h0, the state is not carried (the line named computes h_new, not h)"),
    "ch02-g02d": ("Pa", "bptt_gradient_norms: 4 of 5 entries differ; no cause (the loop runs forward in time)"),
    "ch02-g02e": ("M", "'nothing was clipped (`g = g * scale` makes a new tensor ...; or parameters, a generator, was read "
                       "twice)': the code uses g.mul_ and reads the list once; the cause is `return` inside the loop (the "
                       "first gradient IS clipped)"),
    "ch03-g03a": ("M", "PyTorch's stack error, then 'one of them is not the tensor you meant, or was sliced or projected "
                       "differently': h_prev and x are the right tensors; torch.stack is the wrong function (torch.cat)"),
    "ch03-g03b": ("P", "`f * h_prev` where `f * c_prev` is needed, in the line that computes c"),
    "ch03-g03c": ("P", "Wx['i'] (3, 2) for (2, 3): axes swapped, a transpose (the .T added before chunk)"),
    "ch03-g03d": ("Pa", "PyTorch's 'LSTMCell: Expected hx[0] to be 1D or 2D, got 3D' at the cell call; not that the zero "
                        "states were made (1, B, H) (the line that makes them is not named)"),
    "ch03-g03e": ("P", "`(c, h)` where `(h, c)` is needed, in the cell call"),
    "ch04-g04a": ("Pa", "gru_cell_textbook's values differ; no cause (r * h in the update gate)"),
    "ch04-g04b": ("M", "'`r` in place of the whole value (in gru_cell_textbook, the line that computes `z`)': the z line is "
                       "right; r is used in place of z in the interpolation (the return line)"),
    "ch04-g04c": ("P", "`x @ weight_ih.T + bias_hh` where `x @ weight_ih.T + bias_ih` is needed, in the gi line"),
    "ch04-g04d": ("Pa", "count_parameters('rnn', 10, 20): got 440, expected 640; no cause (weight_hh counted as H * D)"),
    "ch04-g04e": ("Pa", "count_parameters('lstm', 10, 20): got 1360, expected 2560; no cause (the parentheses)"),
    "ch05-g05a": ("Pa", "'the padding ... are right; every wrong entry is elsewhere': the real prefix is wrong, not why "
                        "(T - 1 - t read instead of lengths - 1 - t)"),
    "ch05-g05b": ("P", "`torch.where(real, c_new, h)` where `torch.where(real, c_new, c)` is needed, in the c line"),
    "ch05-g05c": ("Pa", "h_n (no padding): 'the wrong entries are only at index 1 of dimension 0': the backward final state "
                        "is wrong, not why (read at lengths - 1 of the outputs instead of the cell's final state)"),
    "ch05-g05d": ("P", "a new axis in the wrong place: mask[:, :, None] would line its axes up"),
    "ch05-g05e": ("Pa", "outputs in training mode with dropout=1.0 differ; no cause (nn.Dropout() ignores the argument); "
                        "the dropout value in the test's name is the only clue"),
    "ch06-g06a": ("Pa", "build_vocab(min_freq=1) gave [...]: the list, not the expected one, no cause (counts rebound per "
                        "sequence)"),
    "ch06-g06b": ("P", "KeyError 'j' at `stoi[token]`: a token outside the vocabulary, which must become UNK_INDEX"),
    "ch06-g06c": ("Pa", "PyTorch's 'expanded size (2) must match (3)' at the row assignment: a row too short, not that T "
                        "= len(max(sequences)) is not the longest length"),
    "ch06-g06d": ("P", "each sentence's loss averaged, then the sentences (the mean is over all real targets)"),
    "ch06-g06e": ("Pa", "tokens [[6, 6, 6, 6, 6], ...] for [[6, 7, 8], ...]; no cause (the state not updated)"),
    "ch07-g07a": ("P", "`h_prev` and `c_prev` in each other's place, in LSTMCell.forward"),
    "ch07-g07b": ("Pa", "PyTorch's 'where expected condition to be a boolean tensor, got Float' at the keep/where line; not "
                        "that the mask made for src_lengths=None (torch.ones(B, Tx)) is float"),
    "ch07-g07c": ("Pa", "the attention weights (with a mask) differ; no cause (hidden repeated along the batch)"),
    "ch07-g07d": ("Pa", "h at step 1 differs; no cause (the cell given (h_prev, h_prev))"),
    "ch07-g07e": ("Pa", "weights (2, 2, 4) for (2, 3, 4): 'one too few (an off-by-one in a range or a slice?)'; not that the "
                        "break comes before the last step's token and weights are recorded"),
    "ch08-g08a": ("P", "padded positions get weight up to 0.18: set their energies to -inf before the softmax"),
    "ch08-g08b": ("P", "dec (2, 3, 5) @ enc (2, 4, 5): dec @ enc.mT would give (2, 3, 4)"),
    "ch08-g08c": ("Pa", "scaled_dot_attention's weights differ; no cause (the weights divided by sqrt(D) after attend)"),
    "ch08-g08d": ("P", "energies (2, 4, 3) passed to attend: the product is the wrong way round (d_t^T h_s, dec first)"),
    "ch08-g08e": ("Pa", "per_step got 2394, expected 1638; no cause (Ty multiplies the queries and dots too)"),
    "ch09-g09a": ("P", "h (5, 2, 8) for (2, 5, 8): axes swapped (batch_first?)"),
    "ch09-g09b": ("Pa", "d_1 differs; no cause (the LSTM cell called without the state)"),
    "ch09-g09c": ("P", "your values are log-probabilities: return the raw scores (logits)"),
    "ch09-g09d": ("M", "batch_size 12 vs 8 at the cross_entropy line, 'one step for a batch of 4? (a loop that runs one step "
                       "too many or too few, or targets not shifted by one)': no loop is wrong; logits.shape[1] (Ty) is "
                       "used where shape[-1] (V) is meant"),
    "ch09-g09e": ("Pa", "beam_size=1: hypotheses [[5, 5, 5, 5, 5, 5]] for [[5, 3, 3, 5]]; no cause (every hypothesis "
                        "extended from start_state)"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.run_trial(sys.modules[__name__], "/tmp/student_trial_22g", argv)


if __name__ == "__main__":
    main()
