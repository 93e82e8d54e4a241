"""Student trial 22i: the acceptance trial of issue 22, 45 new mistakes and 18 correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed in 44ae01f, before solutions/
and the catalogues were read: benchmarks/results/student_trial_22i_plan.md); every one of them turned out to repeat
an old mutant, an earlier trial's mistake or its class, and was replaced by a new one written the same way (the
plan's second table); so were the variants that the reference, tests/alternatives or an old trial already had. A
mistake is one or more edits of one cell's reference code, ``(old, new)`` pairs whose ``old`` occurs once; a
variant rewrites the cell (or edits it) and must keep full marks. Only the cases and the verdicts live here:
building, grading (the class grader, one run per assignment), the Jupyter view and the report are
benchmarks/student_trial.py's and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22i unless --root says otherwise):

    nice -n 5 .venv/bin/python benchmarks/student_trial_22i.py --student-view [ch01 ...] [--students ch01-h01a,...]
    nice -n 5 .venv/bin/python benchmarks/student_trial_22i.py --grade [ch01 ...]
    .venv/bin/python benchmarks/student_trial_22i.py --table        # benchmarks/results/student_trial_22i.md's tables
    .venv/bin/python benchmarks/student_trial_22i.py --save benchmarks/results/student_trial_22i.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "h01a", "ch01_many_to_one", "ManyToOne: head(h_n[:, -1]) (h_n (1, B, H) indexed as if it were batch first: the last EXAMPLE's state)",
        ("return self.head(outputs[:, -1])", "return self.head(h_n[:, -1])"))
mistake("ch01", "h01b", "ch01_many_to_many_sync", "ManyToManySync returns (logits, h_n), a tuple like nn.RNN's, instead of the logits",
        ("outputs, _ = self.rnn(x) ", "outputs, h_n = self.rnn(x) "),
        ("return self.head(outputs) ", "return self.head(outputs), h_n "))
mistake("ch01", "h01c", "ch01_many_to_many_async", "ManyToManyAsync: the encoder reads the source reversed, self.encoder(src.flip(1)) (Sutskever et al.'s trick, not asked)",
        ("_, h_n = self.encoder(src) ", "_, h_n = self.encoder(src.flip(1)) "))
mistake("ch01", "h01d", "ch01_train_step", "train_step: one-hot targets, F.cross_entropy(model(x), F.one_hot(y).float()) (one_hot sizes the classes from the batch's largest label)",
        ("loss = F.cross_entropy(model(x), y) ", "loss = F.cross_entropy(model(x), F.one_hot(y).float()) "))
mistake("ch01", "h01e", "ch01_fit", "fit draws the indices from range(x.shape[1]) (the sequence length T, not the number of examples len(x))",
        ("idx = torch.randint(0, len(x), (batch_size,), generator=g)   #", "idx = torch.randint(0, x.shape[1], (batch_size,), generator=g)   #"))
variant("ch01", "x01a", "ch01_many_to_many_async", "ManyToManyAsync: decoder(tgt, hx=h_n) by keyword, the head on the (B * Ty, H) flattened outputs, reshaped back",
        ("self.decoder(tgt, h_n)", "self.decoder(tgt, hx=h_n)"),
        ("return self.head(outputs)             # (B, Ty, C)",
         "B, Ty, H = outputs.shape\n"
         "        return self.head(outputs.reshape(B * Ty, H)).reshape(B, Ty, -1)   # (B, Ty, C)"))
variant("ch01", "x01b", "ch01_train_step", "train_step: the gradients cleared by `p.grad = None` for every parameter instead of optimizer.zero_grad()",
        ("optimizer.zero_grad()\n", "for p in model.parameters():\n        p.grad = None\n"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "h02a", "ch02_rnn_cell", "rnn_cell: the bias added as a column, + b_h[:, None] (the column form's bias in the row form: (B, H) + (H, 1))",
        ("+ b_h)   # (B, H)", "+ b_h[:, None])   # (B, H)"))
mistake("ch02", "h02b", "ch02_rnn_layer", "rnn_layer: a given h0 read as h0[0] (nn.RNN's (1, B, H) layout assumed: the first example's state broadcast to the batch)",
        ("else h0   # (B, H)", "else h0[0]   # (B, H)"))
mistake("ch02", "h02c", "ch02_bptt_gradient_norms", "bptt: the starting gradient torch.ones_like(states) (B, T, H), not ones_like(states[:, -1]) (B, H)",
        ("grad = torch.ones_like(states[:, -1])", "grad = torch.ones_like(states)"))
mistake("ch02", "h02d", "ch02_clip_grad_norm", "clip_grad_norm clips every entry to [-max_norm, max_norm] with clamp_ (value clipping, clip_grad_value_'s) instead of rescaling",
        ("    if total_norm > max_norm:\n"
         "        scale = max_norm / (total_norm + 1e-6)\n"
         "        for g in grads:\n"
         "            g.mul_(scale)\n",
         "    for g in grads:\n"
         "        g.clamp_(-max_norm, max_norm)   # clip every entry to [-max_norm, max_norm]\n"))
mistake("ch02", "h02e", "ch02_clip_grad_norm", "clip_grad_norm: g.div_(scale) where g.mul_(scale) is meant (the long gradients get longer)",
        ("g.mul_(scale)", "g.div_(scale)"))
variant("ch02", "x02a", "ch02_bptt_gradient_norms", "bptt over reversed(states.unbind(1)) with torch.linalg.matrix_norm (Frobenius: all B * H entries)",
        code=("def bptt_gradient_norms(states, W_hh):\n"
              "    grad = torch.ones_like(states[:, -1])                 # (B, H): dL/dh_T\n"
              "    norms = [torch.linalg.matrix_norm(grad)]              # the Frobenius norm: all B * H entries\n"
              "    for h_t in reversed(states.unbind(1)):                # h_T, ..., h_1, each (B, H)\n"
              "        grad = (grad * (1 - h_t ** 2)) @ W_hh             # dL/dh_{t-1}\n"
              "        norms.append(torch.linalg.matrix_norm(grad))\n"
              "    return torch.stack(norms)\n"))
variant("ch02", "x02b", "ch02_clip_grad_norm", "clip_grad_norm: the total from a stacked tensor of squared sums, the scaling with torch.mul(g, scale, out=g)",
        code=("def clip_grad_norm(parameters, max_norm):\n"
              "    grads = [p.grad for p in parameters if p.grad is not None]\n"
              "    if not grads:\n"
              "        return torch.tensor(0.0)\n"
              "    total_norm = torch.stack([g.detach().pow(2).sum() for g in grads]).sum().sqrt()\n"
              "    if total_norm > max_norm:\n"
              "        scale = max_norm / (total_norm + 1e-6)\n"
              "        for g in grads:\n"
              "            torch.mul(g, scale, out=g)\n"
              "    return total_norm\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "h03a", "ch03_lstm_cell", "lstm_cell with the logistic function written by hand, sig = lambda z: 1 / (1 + torch.exp(z)) (the minus sign lost: sigmoid(-z))",
        ("    hx = torch.cat", "    sig = lambda z: 1 / (1 + torch.exp(z))          # the logistic function\n    hx = torch.cat"),
        ('i = torch.sigmoid(hx @ W["i"]', 'i = sig(hx @ W["i"]'),
        ('f = torch.sigmoid(hx @ W["f"]', 'f = sig(hx @ W["f"]'),
        ('o = torch.sigmoid(hx @ W["o"]', 'o = sig(hx @ W["o"]'))
mistake("ch03", "h03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias: the candidate as 2 * sigmoid(z) - 1 (that is tanh(z / 2); tanh(z) = 2 sigmoid(2z) - 1)",
        ('g = torch.tanh(x @ Wx["g"].T + h_prev @ Wh["g"].T)', 'g = 2 * torch.sigmoid(x @ Wx["g"].T + h_prev @ Wh["g"].T) - 1'))
mistake("ch03", "h03c", "ch03_split_gates", "split_gates returns the chunk tuples as they are, not dicts keyed 'i', 'f', 'g', 'o'",
        ("Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))", "Wx = cell.weight_ih.chunk(4, dim=0)"),
        ("Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))", "Wh = cell.weight_hh.chunk(4, dim=0)"),
        ("b = dict(zip(GATES, (cell.bias_ih + cell.bias_hh).chunk(4)))", "b = (cell.bias_ih + cell.bias_hh).chunk(4)"))
mistake("ch03", "h03d", "ch03_lstm_layer", "lstm_layer loops over x.split(1, dim=1) (pieces (B, 1, D), not the steps (B, D) that unbind gives)",
        ("for t in range(T):\n        h, c = cell(x[:, t], (h, c))", "for x_t in x.split(1, dim=1):\n        h, c = cell(x_t, (h, c))"))
mistake("ch03", "h03e", "ch03_lstm_layer", "lstm_layer returns three values, outputs, h_n, c_n, not outputs and the tuple (h_n, c_n)",
        ("return torch.stack(outputs, dim=1), (h.unsqueeze(0), c.unsqueeze(0))",
         "return torch.stack(outputs, dim=1), h.unsqueeze(0), c.unsqueeze(0)"))
variant("ch03", "x03a", "ch03_lstm_cell", "lstm_cell: the four W[k] stacked (4, H, H + D) and one einsum 'bk,ghk->gbh', gates read by index",
        code=("def lstm_cell(x, h_prev, c_prev, W, b):\n"
              "    hx = torch.cat([h_prev, x], dim=1)                          # (B, H + D)\n"
              "    Ws = torch.stack([W[k] for k in 'ifgo'])                    # (4, H, H + D)\n"
              "    bs = torch.stack([b[k] for k in 'ifgo'])                    # (4, H)\n"
              "    z = torch.einsum('bk,ghk->gbh', hx, Ws) + bs[:, None, :]    # (4, B, H)\n"
              "    i, f, o = torch.sigmoid(z[0]), torch.sigmoid(z[1]), torch.sigmoid(z[3])\n"
              "    g = torch.tanh(z[2])\n"
              "    c = f * c_prev + i * g\n"
              "    return o * torch.tanh(c), c\n"))
variant("ch03", "x03b", "ch03_split_gates", "split_gates from cell.state_dict() (detached copies), `cell.bias_ih is None` for the no-bias case, biases added per gate",
        code=("def split_gates(cell):\n"
              "    sd = cell.state_dict()\n"
              "    Wx = dict(zip(GATES, sd['weight_ih'].chunk(4)))\n"
              "    Wh = dict(zip(GATES, sd['weight_hh'].chunk(4)))\n"
              "    if cell.bias_ih is None:\n"
              "        return Wx, Wh, None\n"
              "    b = {k: bi + bh for k, bi, bh in zip(GATES, sd['bias_ih'].chunk(4), sd['bias_hh'].chunk(4))}\n"
              "    return Wx, Wh, b\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "h04a", "ch04_gru_cell_textbook", "gru_cell_textbook: h' = (1 - z) * h~ + z (the old state h dropped from the second term)",
        ("(1 - z) * h_tilde + z * h ", "(1 - z) * h_tilde + z "))
mistake("ch04", "h04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch: the reset gate's pre-activation r_pre = i_r + h_r named apart, then used in n instead of sigmoid(r_pre)",
        ("    r = torch.sigmoid(i_r + h_r)            # (B, H)\n",
         "    r_pre = i_r + h_r                       # (B, H): the reset gate before its sigmoid\n"
         "    r = torch.sigmoid(r_pre)                # (B, H)\n"),
        ("n = torch.tanh(i_n + r * h_n)", "n = torch.tanh(i_n + r_pre * h_n)"))
mistake("ch04", "h04c", "ch04_gru_cell_pytorch", "gru_cell_pytorch: n = tanh(i_n + (1 - r) * h_n) (the reset gate read as 'how much to forget')",
        ("n = torch.tanh(i_n + r * h_n)", "n = torch.tanh(i_n + (1 - r) * h_n)"))
mistake("ch04", "h04d", "ch04_count_parameters", "count_parameters: the layers above the first read hidden_size * num_layers (the wrong count variable, not directions)",
        ("else hidden_size * directions", "else hidden_size * num_layers"))
mistake("ch04", "h04e", "ch04_count_parameters", "count_parameters: directions = 2 * bidirectional (0 when bidirectional is False)",
        ("directions = 2 if bidirectional else 1", "directions = 2 * bidirectional"))
variant("ch04", "x04a", "ch04_gru_cell_textbook", "gru_cell_textbook: r * h @ W_nh.T without parentheses (Python reads (r * h) @ W_nh.T), h' = h + (1 - z) * (h~ - h)",
        ("(r * h) @ W_nh.T", "r * h @ W_nh.T"),
        ("return (1 - z) * h_tilde + z * h ", "return h + (1 - z) * (h_tilde - h) "))
variant("ch04", "x04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch: the stacked weights reshaped (3, H, .), one einsum each for the input and the hidden blocks",
        code=("def gru_cell_pytorch(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    H = h.shape[1]\n"
              "    gi = torch.einsum('bd,ghd->gbh', x, weight_ih.reshape(3, H, -1)) + bias_ih.reshape(3, 1, H)   # (3, B, H)\n"
              "    gh = torch.einsum('bk,ghk->gbh', h, weight_hh.reshape(3, H, H)) + bias_hh.reshape(3, 1, H)    # (3, B, H)\n"
              "    r = torch.sigmoid(gi[0] + gh[0])\n"
              "    z = torch.sigmoid(gi[1] + gh[1])\n"
              "    n = torch.tanh(gi[2] + r * gh[2])\n"
              "    return (1 - z) * n + z * h\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "h05a", "ch05_lstm_direction", "lstm_direction: c = torch.where(real, c, c_new) (the two branches swapped for c: the old c at real steps, the new one at padded steps)",
        ("c = torch.where(real, c_new, c)", "c = torch.where(real, c, c_new)"))
mistake("ch05", "h05b", "ch05_bilstm_from_cells", "BiLSTMFromCells: h_n[1] read as out_b[:, 0] BEFORE out_b is put back in order (the backward state after its first step, the last real token)",
        ("        out_b = reverse_padded(out_b, lengths) ",
         "        h_b = out_b[:, 0]                                        # the backward state at position 0\n"
         "        out_b = reverse_padded(out_b, lengths) "))
mistake("ch05", "h05c", "ch05_masked_mean", "masked_mean: outputs[mask].mean(dim=0) (boolean indexing flattens the batch: one mean over all real steps of all sequences)",
        ("total = (outputs * mask.unsqueeze(-1)).sum(dim=1)", "real = outputs[mask]                              "),
        ("return total / lengths.unsqueeze(1).to(outputs.dtype)", "return real.mean(dim=0)                              "))
mistake("ch05", "h05d", "ch05_residual_stack", "ResidualLSTMStack: sizes = [input_size] + [hidden_size] * num_layers (num_layers + 1 LSTMs)",
        ("[hidden_size] * (num_layers - 1)", "[hidden_size] * num_layers"))
mistake("ch05", "h05e", "ch05_sentence_classifier", "SentenceClassifier: the LSTM's packed output given to masked_mean as it is (pad_packed_sequence forgotten)",
        ("        out, _ = pad_packed_sequence(out, batch_first=True, total_length=tokens.shape[1])  # (B, T, 2H)\n", ""))
variant("ch05", "x05a", "ch05_lstm_direction", "lstm_direction writing into a preallocated zeros (B, T, H) outputs tensor, h_new times the bool mask",
        code=("def lstm_direction(cell, x, lengths):\n"
              "    B, T, _ = x.shape\n"
              "    H = cell.hidden_size\n"
              "    h, c = x.new_zeros(B, H), x.new_zeros(B, H)\n"
              "    outputs = x.new_zeros(B, T, H)\n"
              "    for t in range(T):\n"
              "        h_new, c_new = cell(x[:, t], (h, c))\n"
              "        real = (t < lengths).to(x.device).unsqueeze(1)              # (B, 1)\n"
              "        h = torch.where(real, h_new, h)\n"
              "        c = torch.where(real, c_new, c)\n"
              "        outputs[:, t] = h_new * real\n"
              "    return outputs, (h, c)\n"))
variant("ch05", "x05b", "ch05_masked_mean", "masked_mean as a batched product: (B, 1, T) weights 1/length at real steps, torch.bmm with the outputs",
        code=("def masked_mean(outputs, lengths):\n"
              "    B, T, _ = outputs.shape\n"
              "    lengths = lengths.to(outputs.device)\n"
              "    w = (torch.arange(T, device=outputs.device)[None, :] < lengths[:, None]).to(outputs.dtype)   # (B, T)\n"
              "    w = w / w.sum(dim=1, keepdim=True)\n"
              "    return torch.bmm(w.unsqueeze(1), outputs).squeeze(1)                 # (B, F)\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "h06a", "ch06_build_vocab", "build_vocab: Counter(sequences) (counts the token lists, not the tokens)",
        ("counts = Counter(token for seq in sequences for token in seq)", "counts = Counter(sequences)"))
mistake("ch06", "h06b", "ch06_numericalize", "numericalize: ids.append(SOS_INDEX) (the <sos> appended at the end, copied from the <eos> line)",
        ("ids = [SOS_INDEX] + ids", "ids.append(SOS_INDEX)"),
        ("ids = ids + [EOS_INDEX]", "ids.append(EOS_INDEX)"))
mistake("ch06", "h06c", "ch06_encoder", "Encoder: the lengths sorted to please pack_padded_sequence (src_lengths.sort(descending=True).values, default enforce_sorted), the batch not",
        ("pack_padded_sequence(emb, src_lengths.cpu(), batch_first=True, enforce_sorted=False)",
         "pack_padded_sequence(emb, src_lengths.cpu().sort(descending=True).values, batch_first=True)"))
mistake("ch06", "h06d", "ch06_teacher_forced_loss", "teacher_forced_loss: the targets taken as tgt[:, :-1], the same columns as the inputs (copy slip)",
        ("dec_in, dec_out = tgt[:, :-1], tgt[:, 1:]", "dec_in, dec_out = tgt[:, :-1], tgt[:, :-1]"))
mistake("ch06", "h06e", "ch06_greedy_decode", "greedy_decode starts from y = torch.ones(B) * SOS_INDEX (a float tensor of token ids)",
        ("y = torch.full((src.shape[0],), SOS_INDEX, dtype=torch.long)", "y = torch.ones(src.shape[0]) * SOS_INDEX"))
variant("ch06", "x06a", "ch06_pad_batch", "pad_batch: a tensor full of pad_index, the real tokens written in with masked_scatter_ (row-major order of the mask)",
        code=("def pad_batch(sequences, pad_index=PAD_INDEX):\n"
              "    lengths = torch.tensor([len(s) for s in sequences], dtype=torch.long)\n"
              "    T = int(lengths.max())\n"
              "    real = torch.arange(T)[None, :] < lengths[:, None]                   # (B, T)\n"
              "    padded = torch.full((len(sequences), T), pad_index, dtype=torch.long)\n"
              "    padded.masked_scatter_(real, torch.tensor([i for s in sequences for i in s], dtype=torch.long))\n"
              "    return padded, lengths\n"))
variant("ch06", "x06b", "ch06_build_vocab", "build_vocab: every token ranked by (-count, token), then itertools.takewhile while the count is >= min_freq",
        code=("def build_vocab(sequences, min_freq=1):\n"
              "    from itertools import takewhile\n"
              "    counts = Counter(tok for seq in sequences for tok in seq)\n"
              "    ranked = sorted(counts, key=lambda tok: (-counts[tok], tok))\n"
              "    return SPECIALS + list(takewhile(lambda tok: counts[tok] >= min_freq, ranked))\n"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "h07a", "ch07_lstm_cell", "LSTMCell.forward returns h alone (c computed, not returned)",
        ("        return h, c\n", "        return h\n"))
mistake("ch07", "h07b", "ch07_encoder", "EncoderRNN: source_mask(src_lengths, B) (the batch size where Tx is meant)",
        ("mask = source_mask(src_lengths, Tx)", "mask = source_mask(src_lengths, B)"))
mistake("ch07", "h07c", "ch07_attention", "Attention: hidden.expand(B, Tx, Hd) without the new axis (expand lines (B, Hd) up with the LAST two axes)",
        ("d = hidden[:, None, :].expand(B, Tx, hidden.shape[-1])", "d = hidden.expand(B, Tx, hidden.shape[-1])"))
mistake("ch07", "h07d", "ch07_decoder", "AttnDecoderRNN: torch.bmm(weights[:, :, None], encoder_outputs) (the new axis last: (B, Tx, 1), not (B, 1, Tx))",
        ("torch.bmm(weights[:, None, :], encoder_outputs)", "torch.bmm(weights[:, :, None], encoder_outputs)"))
mistake("ch07", "h07e", "ch07_greedy", "greedy_translate cuts each row at row.index(eos_index) - 1 (one real token dropped before the <eos>)",
        ("row[: row.index(eos_index)]", "row[: row.index(eos_index) - 1]"))
variant("ch07", "x07a", "ch07_lstm_cell", "LSTMCell: z = torch.addmm(x @ W.weight.T, h_prev, U.weight.T) (the Linear layers' weights used directly)",
        ("z = self.W(x) + self.U(h_prev)", "z = torch.addmm(x @ self.W.weight.T, h_prev, self.U.weight.T)"))
variant("ch07", "x07b", "ch07_greedy", "greedy_translate: the tokens kept as a (B, steps) tensor, each row cut at its first <eos> found with nonzero()",
        ("    out = []\n"
         "    for row in torch.stack(tokens, dim=1).tolist():\n"
         "        out.append(row[: row.index(eos_index)] if eos_index in row else row)\n",
         "    steps = torch.stack(tokens, dim=1)                         # (B, steps)\n"
         "    out = []\n"
         "    for row in steps:\n"
         "        ends = (row == eos_index).nonzero()\n"
         "        out.append(row[: int(ends[0])].tolist() if len(ends) else row.tolist())\n"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "h08a", "ch08_attend", "attend: the softmax written by hand, exp(e) / exp(e).sum(dim=-1) without keepdim=True",
        ("weights = torch.softmax(energies, dim=-1) ", "weights = torch.exp(energies) / torch.exp(energies).sum(dim=-1) "))
mistake("ch08", "h08b", "ch08_dot", "dot_attention: attend(energies, enc) (the mask not passed on)",
        ("return attend(energies, enc, mask)", "return attend(energies, enc)"))
mistake("ch08", "h08c", "ch08_bilinear", "bilinear_attention: F.bilinear(dec, enc, W[None]) (pairs t with s = t only: it needs Ty = Tx and gives (B, T, 1))",
        ("energies = (dec @ W) @ enc.transpose(1, 2) ", "energies = F.bilinear(dec, enc, W[None]).squeeze(-1) "))
mistake("ch08", "h08d", "ch08_reduced_rank", "reduced_rank_attention: the keys V h_s recomputed at every target step in a loop over t (Part 6's 'per_step' order)",
        ("    keys = enc @ V.T                             # (B, Tx, R): V h_s for every source position, once\n"
         "    energies = queries @ keys.transpose(1, 2) ",
         "    rows = []\n"
         "    for t in range(dec.shape[1]):                # one target step at a time, as a decoder runs\n"
         "        keys = enc @ V.T                         # (B, Tx, R): V h_s for every source position\n"
         "        rows.append(queries[:, t:t + 1] @ keys.transpose(1, 2))   # (B, 1, Tx)\n"
         "    energies = torch.cat(rows, dim=1) "))
mistake("ch08", "h08e", "ch08_macs", "reduced_rank_macs: the queries counted once per sentence, queries = R * Dd (not Ty * R * Dd: one query per target step)",
        ("queries = Ty * R * Dd ", "queries = R * Dd "))
variant("ch08", "x08a", "ch08_attend", "attend with an additive mask torch.where(mask, 0, -inf)[:, None] and the contexts as a broadcast product summed over s",
        code=("def attend(energies, values, mask):\n"
              "    bias = torch.where(mask, 0.0, float('-inf'))[:, None, :]                  # (B, 1, Tx)\n"
              "    weights = F.softmax(energies + bias, dim=-1)                              # (B, Ty, Tx)\n"
              "    contexts = (weights.unsqueeze(-1) * values.unsqueeze(1)).sum(dim=2)      # (B, Ty, Dh)\n"
              "    return weights, contexts\n"))
variant("ch08", "x08b", "ch08_reduced_rank", "reduced_rank_attention: the keys mapped back with U, (V h_s)^T U (B, Tx, Dd), then dot products with d_t (W never formed)",
        ("    queries = dec @ U.T                          # (B, Ty, R): U d_t for every target step\n", ""),
        ("    keys = enc @ V.T                             # (B, Tx, R): V h_s for every source position, once\n"
         "    energies = queries @ keys.transpose(1, 2) ",
         "    keys = (enc @ V.T) @ U                       # (B, Tx, Dd): U^T V h_s for every source position, once\n"
         "    energies = dec @ keys.transpose(1, 2) "))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "h09a", "ch09_encode", "encode: pad_packed_sequence(..., total_length=src.shape[0]) (the batch size where Tx is meant)",
        ("total_length=src.shape[1])", "total_length=src.shape[0])"))
mistake("ch09", "h09b", "ch09_decode_step", "decode_step: e = (h_proj * d).sum(-1) (d (B, H) not unsqueezed: broadcast against (B, Tx, H) as if it were (1, B, H))",
        ("e = torch.bmm(h_proj, d.unsqueeze(2)).squeeze(2)", "e = (h_proj * d).sum(-1)"))
mistake("ch09", "h09c", "ch09_teacher_forcing", "decode_teacher_forcing feeds its own previous prediction, argmax of W_vocab o, instead of tgt_in[:, t] (no teacher forcing after step 1)",
        ("    for t in range(tgt_in.shape[1]):\n"
         "        state, o, _ = decode_step(model, tgt_in[:, t], o, state, h, h_proj, mask)\n"
         "        outputs.append(o)\n",
         "    y = tgt_in[:, 0]                                                           # <sos>\n"
         "    for t in range(tgt_in.shape[1]):\n"
         "        state, o, _ = decode_step(model, y, o, state, h, h_proj, mask)\n"
         "        outputs.append(o)\n"
         "        y = model.W_vocab(o).argmax(dim=-1)                                    # the next input\n"))
mistake("ch09", "h09d", "ch09_masked_loss", "masked_loss by hand (log_softmax, gather, a float mask) with the minus sign forgotten: returns minus the loss",
        ("    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)\n",
         "    logp = F.log_softmax(logits, dim=-1)                                  # (B, Ty, V)\n"
         "    picked = logp.gather(2, tgt_out.unsqueeze(2)).squeeze(2)              # (B, Ty): log P of each target\n"
         "    real = (tgt_out != PAD).float()                                       # (B, Ty)\n"
         "    return (picked * real).sum() / real.sum()\n"))
mistake("ch09", "h09e", "ch09_beam_search", "beam_search normalises with (score / length) ** alpha (the power on the ratio, not on the length)",
        ("finished.append((tokens[:-1], score / len(tokens) ** alpha))", "finished.append((tokens[:-1], (score / len(tokens)) ** alpha))"),
        ("finished += [(tokens, score / len(tokens) ** alpha) ", "finished += [(tokens, (score / len(tokens)) ** alpha) "))
variant("ch09", "x09a", "ch09_masked_loss", "masked_loss: cross_entropy(flatten, ignore_index=PAD, reduction='sum') divided by the number of real tokens",
        ("return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)",
         "total = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD, reduction=\"sum\")\n"
         "    return total / (tgt_out != PAD).sum()"))
variant("ch09", "x09b", "ch09_decode_step", "decode_step: energies with torch.linalg.vecdot(h_proj, d[:, None, :]), the mask with torch.where",
        ("e = torch.bmm(h_proj, d.unsqueeze(2)).squeeze(2)", "e = torch.linalg.vecdot(h_proj, d[:, None, :])"),
        ('e = e.masked_fill(~mask, float("-inf"))', 'e = torch.where(mask, e, float("-inf"))'))

CASES = M + OK

# ------------------------------------------------------------------------------------------------------ verdicts
# The rule (strict), reading ONLY the first failing visible test's message as the student sees it in Jupyter:
#   P  points to the cause: a student reading only it knows which line / term to change (and how);
#   Pa partly: it names the right function, tensor or line (or where the values go wrong) but not what is wrong,
#      a bare value mismatch, or PyTorch's own error with no cause;
#   N  not at all: nothing in it leads to the cause;
#   M  misleading: it names a wrong cause, or blames code that is right.
# "-": no visible test fails. Read from student_view.json after the merge of 41ae1e8 (the go commit, 12:20 UTC).
VERDICTS: dict[str, tuple[str, str]] = {
    "ch01-h01a": ("P", "shape (1, 6) for (2, 6) and 'in ManyToOne.forward, the returned value: another variable in place of the "
                       "right one': the return holds one variable, h_n, where outputs is meant"),
    "ch01-h01b": ("P", "'expected a torch.Tensor, got a tuple of 2 items': return the logits alone"),
    "ch01-h01c": ("Pa", "ManyToManyAsync: 81 of 84 entries differ; a bare mismatch (the source read reversed is not said)"),
    "ch01-h01d": ("-", "full marks and no visible failure: every batch the tests give holds the largest class, so F.one_hot(y) "
                       "has C columns and the loss is the reference's; the one-hot targets fail only on a batch without it"),
    "ch01-h01e": ("P", "'the FIRST loss already differs: the first batch is not the expected one (draw it with torch.randint(0, "
                       "len(x), (batch_size,), generator=g) ...)': the call to compare with is shown, len(x) against x.shape[1]"),
    "ch02-h02a": ("P", "the broadcast at the student's line, '(2, 4) + (4, 1) ... b_h[None, :] would line its axes up'"),
    "ch02-h02b": ("Pa", "outputs with h0 given: 'the wrong entries are only at index 1 of dimension 0' (every example but the "
                        "first): located, not that h0[0] broadcasts the first example's state"),
    "ch02-h02c": ("Pa", "the broadcast error at the loop line names grad (2, 4, 3) against (2, 3): the wrong shape of grad is "
                        "shown, but the hint points at the loop line ('another variable in place of the right one'), not at "
                        "the starting gradient ones_like(states)"),
    "ch02-h02d": ("M", "'nothing was clipped (the test that decides to clip the wrong way round; or `g = g * scale` ...; or the "
                       "generator read twice)': the student has no test, scales nothing by name and reads a list once; none of "
                       "the three causes is theirs (clamp_ clips each entry, value clipping, and leaves the small entries alone)"),
    "ch02-h02e": ("Pa", "'your values are 10.56 times the expected ones (a factor missing or extra?)': the symptom of div_ for "
                        "mul_, not said"),
    "ch03-h03a": ("Pa", "c (the new cell state): 8 of 8 entries differ; no cause (the hand-written sigmoid lost its minus sign)"),
    "ch03-h03b": ("Pa", "c of lstm_cell_nobias: 8 of 8 entries differ; no cause (2 sigmoid(z) - 1 is tanh(z / 2))"),
    "ch03-h03c": ("P", "'Wx must be a dict with the keys i, f, g, o, got tuple (4 blocks of the stacked rows ...)'"),
    "ch03-h03d": ("M", "PyTorch's 'LSTMCell: Expected input to be 1D or 2D, got 3D' at the cell call, then 'Likely cause: ... two "
                       "variables in each other's place': no variables are swapped; the cause is x.split(1, dim=1) giving "
                       "(B, 1, D) pieces (unbind(1) or x[:, t] gives steps)"),
    "ch03-h03e": ("M", "'too many values to unpack' at the test's `outputs, (h_n, c_n) = lstm_layer(...)`, then 'Likely cause: one "
                       "edit in lstm_layer, the line that computes `h, c`: another variable in place of a value', which blames "
                       "a right line; the generic last clause ('unpacking a call means the function returns another number "
                       "of values than its docstring says') does hold the cause"),
    "ch04-h04a": ("P", "'`z` where `z * h` is needed (in gru_cell_textbook, the returned value)'"),
    "ch04-h04b": ("P", "'The reset gate r computed without its sigmoid (no nonlinearity)': n uses r_pre, the gate before its "
                       "sigmoid"),
    "ch04-h04c": ("Pa", "gru_cell_pytorch: 8 of 8 entries differ; a bare mismatch ((1 - r) for r not named)"),
    "ch04-h04d": ("P", "'in count_parameters, the line that computes `layer_input`: another variable in place of the right one', "
                       "on gru with num_layers=2 (unidirectional): num_layers where directions is meant"),
    "ch04-h04e": ("M", "'gives the same result for bias=True and bias=False: it ignores its bias argument': the bias handling "
                       "is right; every count is 0 because directions = 2 * bidirectional is 0"),
    "ch05-h05a": ("P", "'with `torch.where(real, c, c_new)` where `torch.where(real, c_new, c)` is needed' (the second of the "
                       "listed single edits is exactly the student's)"),
    "ch05-h05b": ("Pa", "h_n (no padding): 'the wrong entries are only at index 1 of dimension 0' (the backward direction's "
                        "final state): located, not that out_b[:, 0] was read before out_b is put back in order"),
    "ch05-h05c": ("Pa", "shape (3,) for (2, 3): 'axis 0 missing: indexed away ... or reduced over (a sum or mean too many?)': "
                        "the right line (the mean), not that outputs[mask] flattens the batch"),
    "ch05-h05d": ("P", "'self.layers: an nn.ModuleList of 3 nn.LSTM' (the student's has 4: one LSTM too many)"),
    "ch05-h05e": ("P", "'masked_mean received outputs (PackedSequence) ... check what forward passes to it': the packed output "
                       "must be padded back first"),
    "ch06-h06a": ("P", "Python's 'unhashable type: list' at `counts = Counter(sequences)`: the lists are counted, not the tokens "
                       "(self-sufficient, no course text)"),
    "ch06-h06b": ("Pa", "expected [1, 5, 4, 6, 2], got [5, 4, 6, 1, 2]: a bare list mismatch (the <sos> at the end shows, the "
                        "append is not named)"),
    "ch06-h06c": ("Pa", "final states h: 8 of 12 entries differ; no cause (the lengths sorted, the batch not)"),
    "ch06-h06d": ("P", "'the line that computes `dec_in, dec_out`: a slice with a bound left out, one off or shifted (x[:-1] "
                       "for x[1:] ...)': exactly the student's slip"),
    "ch06-h06e": ("P", "the embedding's dtype error at `decoder.step(y, d)`, 'give it the ids (int64), not vectors or floats': "
                       "y = torch.ones(B) * SOS_INDEX is a float tensor"),
    "ch07-h07a": ("P", "'LSTMCell.forward's return value: must be a Python tuple, got a tensor of shape (2, 4) (... return them "
                       "together)' (the example `return weights, contexts` is another part's)"),
    "ch07-h07b": ("P", "IndexError at `mask[:, t, None]`, 'the line that computes `mask`: another variable in place of the right "
                       "one': B where Tx is meant in source_mask"),
    "ch07-h07c": ("P", "'expand only stretches axes of size 1: add the missing axis of size 1 first ([:, None] or unsqueeze)'"),
    "ch07-h07d": ("P", "the bmm shapes, 'weights[:, :, None].mT @ encoder_outputs would give (2, 1, 6)': a right fix "
                       "(equal to weights[:, None, :])"),
    "ch07-h07e": ("M", "'some of your lists stop before the end: the loop was left too early (a break where continue is meant, a "
                       "condition that stops every row when one is done, or a range that ends too soon?)': the loop is right; "
                       "each row is cut one token short, row.index(eos_index) - 1"),
    "ch08-h08a": ("Pa", "the broadcast at the student's line: exp(e) (2, 3, 4) against exp(e).sum(dim=-1) (2, 3); the shapes are "
                        "explained, no fix offered (keepdim=True)"),
    "ch08-h08b": ("P", "'attend() missing 1 required positional argument: mask' with 'an argument of a call left out (a state, a "
                       "mask, ...)'"),
    "ch08-h08c": ("Pa", "PyTorch's 'bilinear(): input batch dimensions do not match at dim 1: got 3 and 4' at the student's "
                        "line; not that F.bilinear pairs t with s = t only"),
    "ch08-h08d": ("-", "full marks and no visible failure: the values are right and the cost test only rules out forming W "
                       "(Dd * Dh * R); recomputing the keys at every step (Ty * Tx * R * Dh) stays below that on its sizes, "
                       "although the docstring says to compute them once"),
    "ch08-h08e": ("P", "'you count the queries U d_t Ty=3 times too rarely (56 instead of 168 ...)'"),
    "ch09-h09a": ("P", "PyTorch's 'got total_length=2 and max sequence length being 5' at the line, 'another number (an index, "
                       "axis, size or count off?)': src.shape[0] where src.shape[1] is meant"),
    "ch09-h09b": ("P", "the broadcast at the student's line, 'd[:, None, :] would line its axes up with (2, 5, 4)'"),
    "ch09-h09c": ("Pa", "logits with the stand-ins: 29 of 48 entries differ, first at step 1; no cause (its own prediction fed "
                        "back instead of tgt_in[:, t])"),
    "ch09-h09d": ("P", "'your values have the opposite sign'"),
    "ch09-h09e": ("Pa", "alpha=0.0: scores got 1, expected -2.65: a bare mismatch (that x ** 0 = 1 puts the power on the whole "
                        "ratio is left to the student)"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.run_trial(sys.modules[__name__], "/tmp/student_trial_22i", argv)


if __name__ == "__main__":
    main()
