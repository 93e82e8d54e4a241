"""Student trial 22e: 45 fresh mistakes and 18 correct variants in all nine exercises, graded and seen in Jupyter.

The acceptance trial of issue 22, by a fresh pair of eyes. The mistakes were written from the student notebooks
alone and committed before solutions/, the catalogues or the earlier trials were read
(benchmarks/results/student_trial_22e_plan.md, commit 28a2ba1); the 33 equal to an old mutant or an earlier trial's
mistake were then replaced by new ones (the plan lists them). Each mistake is ONE realistic edit of the reference
solution of one cell (``(old, new)`` pairs, each ``old`` found exactly once in the cell's reference code); each
correct variant rewrites a cell another way and must keep full marks.

All the machinery is shared: benchmarks/student_trial.py's (``registry()``, ``build()``, the class grader in ONE run
per assignment, ``summarise()`` of out/state.jsonl, ``view_assignments()``: the submissions run in Jupyter with
nbclient, errors allowed) and trial 22d's report (``main``, ``records``, ``table``, ``confirm``), which this file runs
on its own cases and verdicts.

    nice -n 5 .venv/bin/python benchmarks/student_trial_22e.py --grade [ch01 ...]      # class grader, --workers 1
    nice -n 5 .venv/bin/python benchmarks/student_trial_22e.py --student-view [ch01 ...] [--students a,b]
    nice -n 5 .venv/bin/python benchmarks/student_trial_22e.py --confirm --students ch01-M1,...   # the real notebook
    .venv/bin/python benchmarks/student_trial_22e.py --table     # the tables of student_trial_22e.md
    .venv/bin/python benchmarks/student_trial_22e.py --save benchmarks/results/student_trial_22e.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (the first trial's machinery; its own cases are not used)
import student_trial_22d as report  # noqa: E402  (trial 22d's report, run below on this trial's cases)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "M1", "ch01_many_to_one", "ManyToOne returns softmax probabilities, not logits (`.softmax(dim=-1)` on the head)",
        ("return self.head(outputs[:, -1])   #", "return self.head(outputs[:, -1]).softmax(dim=-1)   #"))
mistake("ch01", "M2", "ch01_many_to_many_sync", "ManyToManySync builds its RNN with bias=False (an extra option)",
        ("self.rnn = nn.RNN(input_size, hidden_size, batch_first=True)\n",
         "self.rnn = nn.RNN(input_size, hidden_size, batch_first=True, bias=False)\n"))
mistake("ch01", "M3", "ch01_one_to_many", "OneToMany: zeros made with expand, then `inputs[:, 0] = x` (every step aliases that row)",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])  #",
         "inputs = x.new_zeros(x.shape[0], 1, x.shape[1]).expand(-1, steps, -1)  #"))
mistake("ch01", "M4", "ch01_many_to_many_async", "ManyToManyAsync: decoder h0 = enc_out[:, -1:] (B, 1, H), not h_n (1, B, H)",
        ("_, h_n = self.encoder(src) ", "enc_out, h_n = self.encoder(src) "),
        ("outputs, _ = self.decoder(tgt, h_n) ", "outputs, _ = self.decoder(tgt, enc_out[:, -1:]) "))
mistake("ch01", "M5", "ch01_fit", "fit draws batches of a hard-coded 64 (the default) instead of batch_size",
        ("(batch_size,), generator=g)   #", "(64,), generator=g)   #"))
variant("ch01", "V1", "ch01_many_to_one", "ManyToOne classifies from h_n[-1] instead of outputs[:, -1]",
        ("outputs, h_n = self.rnn(x) ", "_, h_n = self.rnn(x) "),
        ("return self.head(outputs[:, -1])", "return self.head(h_n[-1])"))
variant("ch01", "V2", "ch01_one_to_many", "OneToMany builds its inputs with torch.cat([x[:, None], zeros], 1)",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])  # (B, steps, D), all zeros\n"
         "        inputs[:, 0] = x ",
         "inputs = torch.cat([x.unsqueeze(1), x.new_zeros(x.shape[0], steps - 1, x.shape[1])], dim=1)\n"
         "        pass "))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "M1", "ch02_rnn_cell", "rnn_cell in one product: cat([x_t, h_prev]) against cat([W_hh, W_hx]) (orders differ)",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)",
         "return torch.tanh(torch.cat([x_t, h_prev], dim=1) @ torch.cat([W_hh, W_hx], dim=1).T + b_h)"))
mistake("ch02", "M2", "ch02_rnn_layer", "rnn_layer turns a time-first input batch-first with reshape, not transpose",
        ("x = x.transpose(0, 1)                          # (B, T, D)",
         "x = x.reshape(x.shape[1], x.shape[0], x.shape[2])   # (B, T, D)"))
mistake("ch02", "M3", "ch02_bptt_gradient_norms", "bptt: derivative 1 - tanh(h_t)^2 (tanh applied again to the states)",
        ("(1 - states[:, t] ** 2)", "(1 - torch.tanh(states[:, t]) ** 2)"))
mistake("ch02", "M4", "ch02_clip_grad_norm", "clip_grad_norm: `g = g * scale` in the loop (rebinds a name; nothing is clipped)",
        ("g.mul_(scale)", "g = g * scale"))
mistake("ch02", "M5", "ch02_clip_grad_norm", "clip_grad_norm: the norm of the parameters themselves, not of their gradients",
        ("grads = [p.grad for p in parameters if p.grad is not None]",
         "params = [p for p in parameters if p.grad is not None]\n    grads = [p.grad for p in params]"),
        ("sum((g.detach() ** 2).sum() for g in grads)", "sum((p.detach() ** 2).sum() for p in params)"))
variant("ch02", "V1", "ch02_rnn_layer", "rnn_layer preallocates the outputs and writes outputs[:, t] = h in place",
        code=("def rnn_layer(x, W_hx, W_hh, b_h, h0=None, batch_first=True):\n"
              "    xs = x if batch_first else x.transpose(0, 1)\n"
              "    B, T, _ = xs.shape\n"
              "    H = W_hh.shape[0]\n"
              "    h = h0 if h0 is not None else xs.new_zeros(B, H)\n"
              "    outputs = xs.new_zeros(B, T, H)\n"
              "    for t in range(T):\n"
              "        h = rnn_cell(xs[:, t], h, W_hx, W_hh, b_h)\n"
              "        outputs[:, t] = h\n"
              "    return (outputs if batch_first else outputs.transpose(0, 1)), h\n"))
variant("ch02", "V2", "ch02_clip_grad_norm", "clip_grad_norm over one flattened vector of all gradients, under no_grad",
        code=("def clip_grad_norm(parameters, max_norm):\n"
              "    grads = [p.grad for p in parameters if p.grad is not None]\n"
              "    if len(grads) == 0:\n"
              "        return torch.tensor(0.0)\n"
              "    with torch.no_grad():\n"
              "        total_norm = torch.cat([g.flatten() for g in grads]).norm()\n"
              "        if total_norm > max_norm:\n"
              "            for g in grads:\n"
              "                g.mul_(max_norm / (total_norm + 1e-6))\n"
              "    return total_norm\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "M1", "ch03_lstm_cell", "lstm_cell: `hx @ W[\"g\"]` without .T (W is (H, H + D))",
        ('hx @ W["g"].T', 'hx @ W["g"]'))
mistake("ch03", "M2", "ch03_lstm_cell_nobias", "lstm_cell_nobias: the candidate's tanh applied to each term apart",
        ('g = torch.tanh(x @ Wx["g"].T + h_prev @ Wh["g"].T)',
         'g = torch.tanh(x @ Wx["g"].T) + torch.tanh(h_prev @ Wh["g"].T)'))
mistake("ch03", "M3", "ch03_split_gates", "split_gates: the chunks of the two biases joined with + on tuples (bias_ih alone)",
        ("b = dict(zip(GATES, (cell.bias_ih + cell.bias_hh).chunk(4)))",
         "b = dict(zip(GATES, cell.bias_ih.chunk(4) + cell.bias_hh.chunk(4)))"))
mistake("ch03", "M4", "ch03_lstm_layer", "lstm_layer returns the final states as (B, 1, H): unsqueeze(1)",
        ("(h.unsqueeze(0), c.unsqueeze(0))", "(h.unsqueeze(1), c.unsqueeze(1))"))
mistake("ch03", "M5", "ch03_lstm_layer", "lstm_layer reads step t as x[t] (the batch axis) instead of x[:, t]",
        ("h, c = cell(x[:, t], (h, c))", "h, c = cell(x[t], (h, c))"))
variant("ch03", "V1", "ch03_lstm_cell", "lstm_cell with the four gates in one product, then chunk",
        code=("def lstm_cell(x, h_prev, c_prev, W, b):\n"
              "    W_all = torch.cat([W[k] for k in 'ifgo'], dim=0)          # (4H, H + D)\n"
              "    b_all = torch.cat([b[k] for k in 'ifgo'])                 # (4H,)\n"
              "    z = torch.cat([h_prev, x], dim=1) @ W_all.T + b_all       # (B, 4H)\n"
              "    zi, zf, zg, zo = z.chunk(4, dim=1)\n"
              "    c = torch.sigmoid(zf) * c_prev + torch.sigmoid(zi) * torch.tanh(zg)\n"
              "    h = torch.sigmoid(zo) * torch.tanh(c)\n"
              "    return h, c\n"))
variant("ch03", "V2", "ch03_split_gates", "split_gates with explicit row slices in a loop over GATES",
        code=("def split_gates(cell):\n"
              "    H = cell.hidden_size\n"
              "    Wx, Wh, b = {}, {}, {}\n"
              "    for j, k in enumerate(GATES):\n"
              "        rows = slice(j * H, (j + 1) * H)\n"
              "        Wx[k] = cell.weight_ih[rows]\n"
              "        Wh[k] = cell.weight_hh[rows]\n"
              "        if cell.bias:\n"
              "            b[k] = cell.bias_ih[rows] + cell.bias_hh[rows]\n"
              "    return Wx, Wh, (b if cell.bias else None)\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "M1", "ch04_gru_cell_textbook", "textbook GRU: `b.split(3)` (pieces of size 3) read as 'three pieces'",
        ("(bias_ih + bias_hh).split(H)", "(bias_ih + bias_hh).split(3)"))
mistake("ch04", "M2", "ch04_gru_cell_pytorch", "PyTorch GRU: n = r * tanh(i_n + h_n) (the reset gate outside the tanh)",
        ("n = torch.tanh(i_n + r * h_n) ", "n = r * torch.tanh(i_n + h_n) "))
mistake("ch04", "M3", "ch04_gru_cell_textbook", "textbook GRU: `b = bias_ih; b += bias_hh` (writes into the caller's bias_ih)",
        ("b_r, b_z, b_n = (bias_ih + bias_hh).split(H) ",
         "b = bias_ih\n    b += bias_hh\n    b_r, b_z, b_n = b.split(H) "))
mistake("ch04", "M4", "ch04_count_parameters", "count_parameters loops layers 1-based (range(1, L + 1)) but tests `layer == 0`",
        ("for layer in range(num_layers):", "for layer in range(1, num_layers + 1):"))
mistake("ch04", "M5", "ch04_count_parameters", "count_parameters: 4 blocks for the GRU (the LSTM's number copied)",
        ('"gru": 3}', '"gru": 4}'))
variant("ch04", "V1", "ch04_gru_cell_textbook", "textbook GRU with chunk(3) and torch.addmm",
        code=("def gru_cell_textbook(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    W_rx, W_zx, W_nx = weight_ih.chunk(3)\n"
              "    W_rh, W_zh, W_nh = weight_hh.chunk(3)\n"
              "    b_r, b_z, b_n = (bias_ih + bias_hh).chunk(3)\n"
              "    r = torch.sigmoid(torch.addmm(b_r, x, W_rx.T) + h @ W_rh.T)\n"
              "    z = torch.sigmoid(torch.addmm(b_z, x, W_zx.T) + h @ W_zh.T)\n"
              "    n = torch.tanh(torch.addmm(b_n, x, W_nx.T) + (r * h) @ W_nh.T)\n"
              "    return z * h + (1 - z) * n\n"))
variant("ch04", "V2", "ch04_count_parameters", "count_parameters summing the size of every named weight, layer by layer",
        code=("def count_parameters(kind, input_size, hidden_size, num_layers=1, bias=True, bidirectional=False):\n"
              "    G = {'rnn': 1, 'lstm': 4, 'gru': 3}[kind]\n"
              "    H = hidden_size\n"
              "    shapes = []\n"
              "    for layer in range(num_layers):\n"
              "        for _direction in range(2 if bidirectional else 1):\n"
              "            d_in = input_size if layer == 0 else H * (2 if bidirectional else 1)\n"
              "            shapes += [(G * H, d_in), (G * H, H)]\n"
              "            if bias:\n"
              "                shapes += [(G * H,), (G * H,)]\n"
              "    total = 0\n"
              "    for shape in shapes:\n"
              "        n = 1\n"
              "        for s in shape:\n"
              "            n *= s\n"
              "        total += n\n"
              "    return total\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "M1", "ch05_reverse_padded", "reverse_padded as a loop with x[b, :L].flip(1) (flips the slice's features, not time)",
        ("    B, T = x.shape[:2]\n"
         "    t = torch.arange(T, device=x.device)                       # (T,)\n"
         "    L = lengths.to(x.device).unsqueeze(1)                       # (B, 1)\n"
         "    idx = torch.where(t < L, L - 1 - t, t)                      # (B, T): where each output step reads from\n"
         "    idx = idx.reshape(B, T, *([1] * (x.dim() - 2))).expand_as(x)  # (B, T, ...)\n"
         "    return x.gather(1, idx)",
         "    y = x.clone()\n"
         "    for b in range(x.shape[0]):\n"
         "        L = int(lengths[b])\n"
         "        y[b, :L] = x[b, :L].flip(1)   # reverse the real prefix\n"
         "    return y"))
mistake("ch05", "M2", "ch05_lstm_direction", "lstm_direction: h = real * h_new + (1 - real) * h on the bool mask",
        ("h = torch.where(real, h_new, h) ", "h = real * h_new + (1 - real) * h "))
mistake("ch05", "M3", "ch05_bilstm_from_cells", "BiLSTMFromCells: lengths=None replaced by torch.ones(B) * T (float lengths)",
        ("lengths = torch.full((x.shape[0],), x.shape[1], dtype=torch.long)", "lengths = torch.ones(x.shape[0]) * x.shape[1]"))
mistake("ch05", "M4", "ch05_masked_mean", "masked_mean: the mask built (T, B): arange(T)[:, None] < lengths[None, :]",
        ("mask = torch.arange(T, device=outputs.device) < lengths.unsqueeze(1)",
         "mask = torch.arange(T, device=outputs.device)[:, None] < lengths[None, :]"))
mistake("ch05", "M5", "ch05_residual_stack", "ResidualLSTMStack: dropout on the sum, h = dropout(out + h), not on the layer's input",
        ("inp = h if l == 0 else self.dropout(h) ", "inp = h "),
        ("h = out if l == 0 else out + h ", "h = out if l == 0 else self.dropout(out + h) "))
variant("ch05", "V1", "ch05_reverse_padded", "reverse_padded as a Python loop over the batch on a clone",
        code=("def reverse_padded(x, lengths):\n"
              "    y = x.clone()\n"
              "    for b in range(x.shape[0]):\n"
              "        n = int(lengths[b])\n"
              "        y[b, :n] = x[b, :n].flip(0)\n"
              "    return y\n"))
variant("ch05", "V2", "ch05_masked_mean", "masked_mean in float64, with the count from the mask, cast back",
        code=("def masked_mean(outputs, lengths):\n"
              "    B, T, _ = outputs.shape\n"
              "    mask = (torch.arange(T)[None, :] < lengths[:, None].cpu()).to(outputs.device)\n"
              "    x = torch.where(mask[:, :, None], outputs.double(), torch.zeros((), dtype=torch.float64))\n"
              "    mean = x.sum(dim=1) / mask.sum(dim=1, keepdim=True).double()\n"
              "    return mean.to(outputs.dtype)\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "M1", "ch06_build_vocab", "build_vocab: itos = SPECIALS; itos.extend(kept) (extends the global list in place)",
        ("    return SPECIALS + kept", "    itos = SPECIALS\n    itos.extend(kept)\n    return itos"))
mistake("ch06", "M2", "ch06_pad_batch", "pad_batch returns the lengths as int32 (the docstring says int64)",
        ("for seq in sequences], dtype=torch.long)", "for seq in sequences], dtype=torch.int32)"))
mistake("ch06", "M3", "ch06_encoder", "Encoder: pack_padded_sequence without batch_first=True",
        ("pack_padded_sequence(emb, src_lengths.cpu(), batch_first=True, enforce_sorted=False)",
         "pack_padded_sequence(emb, src_lengths.cpu(), enforce_sorted=False)"))
mistake("ch06", "M4", "ch06_teacher_forced_loss", "teacher_forced_loss: stack(dim 0).transpose(0, 1), then .view(-1, V) (not contiguous)",
        ("logits = torch.stack(logits, dim=1) ", "logits = torch.stack(logits).transpose(0, 1) "),
        ("F.cross_entropy(logits.reshape(-1, logits.shape[-1])", "F.cross_entropy(logits.view(-1, logits.shape[-1])"))
mistake("ch06", "M5", "ch06_greedy_decode", "greedy_decode starts from torch.tensor([SOS_INDEX]) (shape (1,), not (B,))",
        ("y = torch.full((src.shape[0],), SOS_INDEX, dtype=torch.long) ", "y = torch.tensor([SOS_INDEX]) "))
variant("ch06", "V1", "ch06_build_vocab", "build_vocab sorting counts.items() by (-count, token), filtering after",
        code=("def build_vocab(sequences, min_freq=1):\n"
              "    counts = Counter()\n"
              "    for seq in sequences:\n"
              "        counts.update(seq)\n"
              "    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))\n"
              "    return list(SPECIALS) + [tok for tok, n in ranked if n >= min_freq]\n"))
variant("ch06", "V2", "ch06_greedy_decode", "greedy_decode with a (B,) done tensor, a (B, steps) token tensor cut at the first <eos>",
        code=("def greedy_decode(encoder, decoder, src, src_lengths, max_len):\n"
              "    B = src.shape[0]\n"
              "    with torch.no_grad():\n"
              "        _, d = encoder(src, src_lengths)\n"
              "        y = torch.full((B,), SOS_INDEX, dtype=torch.long)\n"
              "        done = torch.zeros(B, dtype=torch.bool)\n"
              "        steps = []\n"
              "        for _ in range(max_len):\n"
              "            logits, d = decoder.step(y, d)\n"
              "            y = logits.argmax(dim=-1)\n"
              "            steps.append(y)\n"
              "            done = done | (y == EOS_INDEX)\n"
              "            if done.all():\n"
              "                break\n"
              "    rows = torch.stack(steps, dim=1).tolist()\n"
              "    return [row[: row.index(EOS_INDEX)] if EOS_INDEX in row else row for row in rows]\n"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "M1", "ch07_lstm_cell", "LSTMCell: self.U(c_prev) (the recurrent weights applied to the cell state)",
        ("z = self.W(x) + self.U(h_prev) ", "z = self.W(x) + self.U(c_prev) "))
mistake("ch07", "M2", "ch07_encoder", "EncoderRNN: src_lengths=None not handled (mask always from source_mask(src_lengths, Tx))",
        ("        if src_lengths is None:\n            mask = torch.ones(B, Tx, dtype=torch.bool)\n        else:\n"
         "            mask = source_mask(src_lengths, Tx) ",
         "        mask = source_mask(src_lengths, Tx) "))
mistake("ch07", "M3", "ch07_attention", "Attention: scores = self.v @ energy (v^T first, as in the math)",
        ("scores = energy @ self.v ", "scores = self.v @ energy "))
mistake("ch07", "M4", "ch07_decoder", "AttnDecoderRNN: torch.cat([h, weighted_encoder, embedded]) without dim=-1 for Out",
        ("self.Out(torch.cat([h, weighted_encoder, embedded], dim=-1))", "self.Out(torch.cat([h, weighted_encoder, embedded]))"))
mistake("ch07", "M5", "ch07_greedy", "greedy_translate reads model.last_weights BEFORE decode_step (the previous step's weights)",
        ("        log_probs, state = model.decode_step(y, state, memory)     # (B, V)\n",
         "        weights.append(model.last_weights)\n"
         "        log_probs, state = model.decode_step(y, state, memory)     # (B, V)\n"),
        ("        weights.append(model.last_weights)                          # (B, Tx)\n", ""))
variant("ch07", "V1", "ch07_attention", "Attention with Attn split into its two halves (the chapter's form)",
        code=("class Attention(nn.Module):\n"
              "    def __init__(self, enc_size, dec_size, attn_size):\n"
              "        super().__init__()\n"
              "        self.Attn = nn.Linear(dec_size + enc_size, attn_size)\n"
              "        self.v = nn.Parameter(torch.rand(attn_size) - 0.5)\n"
              "\n"
              "    def forward(self, hidden, encoder_outputs, mask=None):\n"
              "        Hd = hidden.shape[-1]\n"
              "        W_d, W_h = self.Attn.weight[:, :Hd], self.Attn.weight[:, Hd:]\n"
              "        energy = torch.tanh((hidden @ W_d.T)[:, None, :] + encoder_outputs @ W_h.T + self.Attn.bias)\n"
              "        scores = (energy * self.v).sum(dim=-1)\n"
              "        if mask is not None:\n"
              "            scores = scores.masked_fill(mask == 0, float('-inf'))\n"
              "        return F.softmax(scores, dim=1)\n"))
variant("ch07", "V2", "ch07_greedy", "greedy_translate collecting weights with unsqueeze(1) and torch.cat(dim=1), tokens per sentence",
        code=("@torch.no_grad()\n"
              "def greedy_translate(model, src, src_lengths, max_len, sos_index=1, eos_index=2):\n"
              "    B = src.shape[0]\n"
              "    memory, state = model.encode(src, src_lengths)\n"
              "    y = torch.full((B,), sos_index, dtype=torch.long)\n"
              "    out = [[] for _ in range(B)]\n"
              "    finished = [False] * B\n"
              "    weights = None\n"
              "    for _ in range(max_len):\n"
              "        log_probs, state = model.decode_step(y, state, memory)\n"
              "        y = log_probs.argmax(dim=-1)\n"
              "        w = model.last_weights.unsqueeze(1)\n"
              "        weights = w if weights is None else torch.cat([weights, w], dim=1)\n"
              "        for b in range(B):\n"
              "            if not finished[b]:\n"
              "                if int(y[b]) == eos_index:\n"
              "                    finished[b] = True\n"
              "                else:\n"
              "                    out[b].append(int(y[b]))\n"
              "        if all(finished):\n"
              "            break\n"
              "    return out, weights\n"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "M1", "ch08_attend", "attend: contexts (weights[..., None] * values[:, None]).sum(dim=1) (summed over target steps)",
        ("contexts = weights @ values ", "contexts = (weights[..., None] * values[:, None]).sum(dim=1) "))
mistake("ch08", "M2", "ch08_scaled_dot", "scaled_dot_attention divides the contexts by sqrt(D) after attend, not the energies",
        ("energies = dec @ enc.transpose(1, 2) / math.sqrt(D)      # (B, Ty, Tx)\n    return attend(energies, enc, mask)",
         "energies = dec @ enc.transpose(1, 2)      # (B, Ty, Tx)\n    weights, contexts = attend(energies, enc, mask)\n"
         "    return weights, contexts / math.sqrt(D)"))
mistake("ch08", "M3", "ch08_bilinear", "bilinear_attention with an einsum index slip: \"btd,de,bsd->bts\"",
        ("energies = (dec @ W) @ enc.transpose(1, 2) ", 'energies = torch.einsum("btd,de,bsd->bts", dec, W, enc) '))
mistake("ch08", "M4", "ch08_reduced_rank", "reduced_rank_attention: the keys projected with U (copy-paste of the queries' line)",
        ("keys = enc @ V.T ", "keys = enc @ U.T "))
mistake("ch08", "M5", "ch08_macs", "reduced_rank_macs returns (per_step, once): the two counts swapped",
        ("return once, per_step", "return per_step, once"))
variant("ch08", "V1", "ch08_bilinear", "bilinear_attention with W on the encoder side: dec @ (enc @ W.T)^T",
        code=("def bilinear_attention(dec, enc, mask, W):\n"
              "    projected = enc @ W.T                          # (B, Tx, Dd)\n"
              "    energies = dec @ projected.transpose(1, 2)     # (B, Ty, Tx)\n"
              "    return attend(energies, enc, mask)\n"))
variant("ch08", "V2", "ch08_attend", "attend with torch.where(mask, e, -inf) and an einsum for the contexts",
        code=("def attend(energies, values, mask):\n"
              "    e = torch.where(mask.unsqueeze(1), energies, torch.tensor(float('-inf')))\n"
              "    weights = F.softmax(e, dim=2)\n"
              "    contexts = torch.einsum('bts,bsd->btd', weights, values)\n"
              "    return weights, contexts\n"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "M1", "ch09_encode", "encode: d_0 = tanh(W_h [...]) (an activation the equation does not have)",
        ("d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1)) ", "d0 = torch.tanh(model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1))) "))
mistake("ch09", "M2", "ch09_decode_step", "decode_step: a = alpha @ h without unsqueeze/bmm ((B, Tx) @ (B, Tx, 2H))",
        ("a = torch.bmm(alpha.unsqueeze(1), h).squeeze(1) ", "a = alpha @ h "))
mistake("ch09", "M3", "ch09_teacher_forcing", "decode_teacher_forcing: the first combined output sized from h (2H), not H",
        ("o = h.new_zeros(src.shape[0], model.hidden_size) ", "o = h.new_zeros(src.shape[0], h.shape[-1]) "))
mistake("ch09", "M4", "ch09_masked_loss", "masked_loss by hand with log_softmax over dim=1 (the time axis)",
        ("    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)",
         "    log_probs = F.log_softmax(logits, dim=1)\n"
         "    nll = -log_probs.gather(2, tgt_out.unsqueeze(2)).squeeze(2)\n"
         "    mask = tgt_out != PAD\n"
         "    return (nll * mask).sum() / mask.sum()"))
mistake("ch09", "M5", "ch09_beam_search", "beam_search: hypotheses start as [SOS] (the <sos> kept in the tokens and the length)",
        ("live = [([], 0.0, start_state)]", "live = [([SOS], 0.0, start_state)]"))
variant("ch09", "V1", "ch09_masked_loss", "masked_loss with cross_entropy on logits.transpose(1, 2) (classes on dim 1)",
        code=("def masked_loss(logits, tgt_out):\n"
              "    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD)\n"))
variant("ch09", "V2", "ch09_decode_step", "decode_step with einsum for the energies and the context",
        code=("def decode_step(model, y_prev, o_prev, state, h, h_proj, mask):\n"
              "    x = torch.cat([model.tgt_embed(y_prev), o_prev], dim=1)\n"
              "    d, c = model.decoder(x, state)\n"
              "    e = torch.einsum('bsh,bh->bs', h_proj, d)\n"
              "    e = torch.where(mask, e, torch.full_like(e, float('-inf')))\n"
              "    alpha = F.softmax(e, dim=-1)\n"
              "    a = torch.einsum('bs,bsk->bk', alpha, h)\n"
              "    o = model.dropout(torch.tanh(model.W_u(torch.cat([a, d], dim=1))))\n"
              "    return (d, c), o, alpha\n"))

CASES = M + OK

# ------------------------------------------------------------------------------------------------------ verdicts
# The rule (strict), reading ONLY the first failing visible test's message as the student sees it in Jupyter:
#   P  points to the cause: a student reading only it knows which line / term to change and how;
#   Pa partly: it names the right function or tensor (or where the values go wrong) but not what is wrong with it;
#   N  not at all: nothing in it leads to the cause (a bare PyTorch error far from it, a generic mismatch);
#   M  misleading: it names a wrong cause, or blames code that is right.
# "-": no visible test fails. Filled in after reading student_view.json (phase 2: the messages of the go commit).
# Read from student_view.json after the merge of 1834d1d (the go commit: edit hints).
VERDICTS: dict[str, tuple[str, str]] = {
    "ch01-M1": ("P", "your values are probabilities (a softmax of the raw scores): return the logits"),
    "ch01-M2": ("P", "self.rnn is built with bias=False, the docstring asks for bias=True"),
    "ch01-M3": ("Pa", "'what you get if you feed x at every step': true (the expand aliases every step), but the code writes "
                      "x at step 0 only; the expand is not named"),
    "ch01-M4": ("P", "at the decoder line: expected hidden (1, 2, 4), got [2, 1, 4]; the state must be (1, B, H)"),
    "ch01-M5": ("P", "the FIRST batch differs; shows the expected call with (batch_size,)"),
    "ch02-M1": ("Pa", "values of rnn_cell differ; no cause (the two concatenations in different orders)"),
    "ch02-M2": ("Pa", "outputs with batch_first=False differ: the right case; not the reshape"),
    "ch02-M3": ("Pa", "norms differ from index 1 on; no cause (tanh applied again to the states)"),
    "ch02-M4": ("M", "'you go over `parameters` twice: a generator is empty the second time': the list is built once; "
                     "the cause is `g = g * scale` rebinding a name"),
    "ch02-M5": ("Pa", "the total norm is 0, expected 13; not that it is the parameters' norm"),
    "ch03-M1": ("P", "at the g line: shapes (2x7) and (4x7) cannot be multiplied: a .T missing"),
    "ch03-M2": ("Pa", "c differs; no cause (the tanh applied to each term)"),
    "ch03-M3": ("P", "what you get if you take bias_ih only: the b line, whose tuple + keeps bias_ih alone"),
    "ch03-M4": ("P", "h_n: expected (1, 2, 4), got (2, 1, 4), axes swapped: the unsqueeze axis"),
    "ch03-M5": ("M", "at the right line, but 'the state has the wrong shape for the cell': the state is right, the input "
                     "x[t] (T rows) is wrong"),
    "ch04-M1": ("P", "split(3) cuts 12 into 4 pieces of 3: is the size you split by the one you meant?"),
    "ch04-M2": ("Pa", "values of gru_cell_pytorch differ; no cause (r outside the tanh)"),
    "ch04-M3": ("M", "the batch-of-one call differs: 'divided by the wrong count (the padded length...)?'; the cause is "
                     "bias_ih changed in place by the first call"),
    "ch04-M4": ("Pa", "count for ('rnn', 10, 20) is 840, expected 640; no cause (the first layer reads H)"),
    "ch04-M5": ("P", "one edit in the line that computes `blocks`: another number"),
    "ch05-M1": ("P", "at the flip(1) line: an axis the slice does not have"),
    "ch05-M2": ("P", "subtraction with a bool tensor: use ~ to invert a mask"),
    "ch05-M3": ("P", "gather wants an int index; reverse_padded passed its test: check what forward passes to it (lengths)"),
    "ch05-M4": ("P", "outputs (2, 4, 3) against mask.unsqueeze(-1) (4, 2, 1): the mask is (T, B)"),
    "ch05-M5": ("Pa", "outputs with dropout=1.0 are zero at rows 0, 1 (the test names dropout); its examples (a state "
                      "reset, a mask) do not apply"),
    "ch06-M1": ("M", "'the special tokens must come first, in the order [<pad> ... <unk>, a, n, b, c, d]': they do come "
                     "first; the 'expected' list printed is the global SPECIALS the student extended"),
    "ch06-M2": ("P", "lengths must be int64, got int32"),
    "ch06-M3": ("N", "PyTorch's 'start (6) + length (1) exceeds dimension size (6)' at the GRU line; nothing leads to "
                     "pack_padded_sequence's batch_first"),
    "ch06-M4": ("P", "view not compatible with the strides: use .reshape"),
    "ch06-M5": ("P", "step 1 must feed <sos> to every sequence, fed [1]"),
    "ch07-M1": ("P", "`self.U(c_prev)` where `self.U(h_prev)` is needed"),
    "ch07-M2": ("P", "a value is None at the source_mask line: does the docstring allow lengths=None?"),
    "ch07-M3": ("Pa", "PyTorch's 'size mismatch, got input (10), mat (10x6), vec (5)' at the right line; not the order"),
    "ch07-M4": ("Pa", "PyTorch's 'Sizes of tensors must match except in dimension 0' at the right line; not said that "
                      "the cat needs dim=-1"),
    "ch07-M5": ("Pa", "'_Scripted' object has no attribute 'last_weights' at the right line; not that it exists only "
                      "after decode_step"),
    "ch08-M1": ("Pa", "contexts (2, 4, 5) for (2, 3, 5): 'off by one, or another size of 4'; not the axis summed over"),
    "ch08-M2": ("P", "the weights are unscaled (Part 2's plain dot product): the scale belongs on the energies"),
    "ch08-M3": ("P", "einsum: subscript d has size 5 for operand 2 (enc) and 6 before: the index letter"),
    "ch08-M4": ("M", "'.T on a tensor of more than 2 dimensions reverses EVERY axis': U is 2-D, its .T is right; the "
                     "cause is U used for V"),
    "ch08-M5": ("M", "'count the keys Ty times too often, or the dots Tx times': the once formula is right; the two "
                     "returned counts are swapped"),
    "ch09-M1": ("P", "an extra tanh around model.W_h(...) in the d0 line"),
    "ch09-M2": ("M", "a is (2, 2, 8) at the cat line: 'indexing a batch with `:` and an index tensor... use "
                     "x[torch.arange(B), idx]'; there is no indexing: the cause is alpha @ h without unsqueeze/bmm"),
    "ch09-M3": ("M", "at the decode_step call: 'h_proj (2, 3, 4) and mask (2, 3): mask[:, :, None]'; both are right; "
                     "the cause is o sized 2H"),
    "ch09-M4": ("Pa", "the masked loss differs (2.06 vs 1.74); no cause (log_softmax over the time axis)"),
    "ch09-M5": ("Pa", "hypotheses [[1, 5, 3, 3, 5]] for [[5, 3, 3, 5]]: the leading 1 (<sos>) is visible, not named"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.run_trial(sys.modules[__name__], "/tmp/student_trial_22e", argv)


if __name__ == "__main__":
    main()
