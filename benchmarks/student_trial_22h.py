"""Student trial 22h: the acceptance trial of issue 22 after round 10, 45 new mistakes and 18 correct variants.

A fresh pair of eyes wrote the mistakes from the student notebooks alone (plan committed in 4f7fe9b, before
solutions/ and the catalogues were read: benchmarks/results/student_trial_22h_plan.md); those that repeated an
old mutant or an earlier trial's mistake were replaced (the plan's second table), and so were the variants that
an old trial or tests/alternatives already had. A mistake is one or more edits of one cell's reference code,
``(old, new)`` pairs whose ``old`` occurs once; a variant rewrites the cell (or edits it) and must keep full
marks. Only the cases and the verdicts live here: building, grading (the class grader, one run per assignment),
the Jupyter view and the report are benchmarks/student_trial.py's and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22h unless --root says otherwise):

    nice -n 5 .venv/bin/python benchmarks/student_trial_22h.py --student-view [ch01 ...] [--students ch01-h01a,...]
    nice -n 5 .venv/bin/python benchmarks/student_trial_22h.py --grade [ch01 ...]
    .venv/bin/python benchmarks/student_trial_22h.py --table        # benchmarks/results/student_trial_22h.md's tables
    .venv/bin/python benchmarks/student_trial_22h.py --save benchmarks/results/student_trial_22h.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "h01a", "ch01_many_to_one", "ManyToOne: head(outputs[:, x.shape[1]]), h_T read 1-based (index T is one past the last step)",
        ("return self.head(outputs[:, -1])   # (B, C): the last step's state",
         "return self.head(outputs[:, x.shape[1]])   # (B, C): h_T, the state after step T"))
mistake("ch01", "h01b", "ch01_one_to_many", "OneToMany: inputs[:, 1] = x (the 'first step' counted from 1: x goes in at the second step)",
        ("inputs[:, 0] = x ", "inputs[:, 1] = x "))
mistake("ch01", "h01c", "ch01_many_to_many_async", "ManyToManyAsync: the encoder's outputs named `outputs`, the decoder's `dec_outputs`, and head(outputs) returned (the encoder's)",
        ("_, h_n = self.encoder(src) ", "outputs, h_n = self.encoder(src) "),
        ("outputs, _ = self.decoder(tgt, h_n) ", "dec_outputs, _ = self.decoder(tgt, h_n) "))
mistake("ch01", "h01d", "ch01_train_step", "train_step: nn.CrossEntropyLoss(model(x), y) (the module class called like the function)",
        ("loss = F.cross_entropy(model(x), y) ", "loss = nn.CrossEntropyLoss(model(x), y) "))
mistake("ch01", "h01e", "ch01_fit", "fit: torch.optim.Adam(model.parameters, lr=lr) (the method, not called)",
        ("torch.optim.Adam(model.parameters(), lr=lr)", "torch.optim.Adam(model.parameters, lr=lr)"))
variant("ch01", "x01a", "ch01_train_step", "train_step: cross_entropy(reduction='sum') divided by the batch size",
        ("loss = F.cross_entropy(model(x), y) ", "loss = F.cross_entropy(model(x), y, reduction=\"sum\") / len(y) "))
variant("ch01", "x01b", "ch01_one_to_many", "OneToMany: inputs = x[:, None, :] * a (steps,) 0/1 mask that is 1 at step 0",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])  # (B, steps, D), all zeros\n"
         "        inputs[:, 0] = x ",
         "first = (torch.arange(steps, device=x.device) == 0).to(x.dtype)   # (steps,): 1 at step 0, else 0\n"
         "        inputs = x[:, None, :] * first[None, :, None]                      # (B, steps, D)\n"
         "        "))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "h02a", "ch02_rnn_cell", "rnn_cell: the math written with *, tanh(W_hh * h_prev + W_hx * x_t + b_h) (element-wise, not matrix products)",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)", "return torch.tanh(W_hh * h_prev + W_hx * x_t + b_h)"))
mistake("ch02", "h02b", "ch02_rnn_layer", "rnn_layer: a time-first input turned round with transpose(1, 2) (and the outputs back the same way)",
        ("x = x.transpose(0, 1) ", "x = x.transpose(1, 2) "),
        ("outputs = outputs.transpose(0, 1) ", "outputs = outputs.transpose(1, 2) "))
mistake("ch02", "h02c", "ch02_bptt_gradient_norms", "bptt: torch.linalg.norm(grad, 2), the '2-norm' of a (B, H) matrix (its spectral norm, not of all entries)",
        ("norms = [torch.linalg.vector_norm(grad)]", "norms = [torch.linalg.norm(grad, 2)]"),
        ("norms.append(torch.linalg.vector_norm(grad))", "norms.append(torch.linalg.norm(grad, 2))"))
mistake("ch02", "h02d", "ch02_clip_grad_norm", "clip_grad_norm: the test written `if total_norm < max_norm:` (clips the short gradients, leaves the long ones)",
        ("if total_norm > max_norm:", "if total_norm < max_norm:"))
mistake("ch02", "h02e", "ch02_clip_grad_norm", "clip_grad_norm: the norm summed from g.pow_(2) (squares the gradients in place)",
        ("total_norm = torch.sqrt(sum((g.detach() ** 2).sum() for g in grads))",
         "total_norm = torch.sqrt(sum(g.pow_(2).sum() for g in grads))"))
variant("ch02", "x02a", "ch02_rnn_cell", "rnn_cell in the concatenated form, [h_prev, x_t] against [W_hh | W_hx] (orders matched)",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)",
         "return torch.tanh(torch.cat([h_prev, x_t], dim=1) @ torch.cat([W_hh, W_hx], dim=1).T + b_h)"))
variant("ch02", "x02b", "ch02_bptt_gradient_norms", "bptt with each example's Jacobian diag(1 - h^2) W_hh built by torch.diag_embed, rows (B, 1, H)",
        code=("def bptt_gradient_norms(states, W_hh):\n"
              "    B, T, H = states.shape\n"
              "    grad = states.new_ones(B, 1, H)                                 # (B, 1, H): dL/dh_T, a row per example\n"
              "    norms = [torch.linalg.vector_norm(grad)]\n"
              "    for t in reversed(range(T)):\n"
              "        J = torch.diag_embed(1 - states[:, t] ** 2) @ W_hh          # (B, H, H): diag(1 - h_t^2) W_hh\n"
              "        grad = grad @ J                                             # (B, 1, H)\n"
              "        norms.append(torch.linalg.vector_norm(grad))\n"
              "    return torch.stack(norms)\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "h03a", "ch03_lstm_cell", "lstm_cell: the element-wise products of c written with @, c = f @ c_prev + i @ g",
        ("c = f * c_prev + i * g ", "c = f @ c_prev + i @ g "))
mistake("ch03", "h03b", "ch03_lstm_cell", "lstm_cell: the gates computed in a loop `for i, k in enumerate(...)`; the loop index i (3) is then used as the input gate",
        ('    i = torch.sigmoid(hx @ W["i"].T + b["i"])      # (B, H) input gate\n'
         '    f = torch.sigmoid(hx @ W["f"].T + b["f"])      # (B, H) forget gate\n'
         '    g = torch.tanh(hx @ W["g"].T + b["g"])         # (B, H) candidate cell\n'
         '    o = torch.sigmoid(hx @ W["o"].T + b["o"])      # (B, H) output gate\n',
         '    gates = {}\n'
         '    for i, k in enumerate(["i", "f", "g", "o"]):\n'
         '        z = hx @ W[k].T + b[k]                     # (B, H)\n'
         '        gates[k] = torch.tanh(z) if k == "g" else torch.sigmoid(z)\n'
         '    f, g, o = gates["f"], gates["g"], gates["o"]\n'))
mistake("ch03", "h03c", "ch03_lstm_cell_nobias", "lstm_cell_nobias reuses part 1: lstm_cell with W[k] = cat([Wx[k], Wh[k]]) (input columns first; part 1 puts h first) and zero biases",
        ('    i = torch.sigmoid(x @ Wx["i"].T + h_prev @ Wh["i"].T)   # (B, H) input gate\n'
         '    f = torch.sigmoid(x @ Wx["f"].T + h_prev @ Wh["f"].T)   # (B, H) forget gate\n'
         '    g = torch.tanh(x @ Wx["g"].T + h_prev @ Wh["g"].T)      # (B, H) candidate cell\n'
         '    o = torch.sigmoid(x @ Wx["o"].T + h_prev @ Wh["o"].T)   # (B, H) output gate\n'
         '    c = f * c_prev + i * g                                  # (B, H)\n'
         '    h = o * torch.tanh(c)                                   # (B, H)\n'
         '    return h, c\n',
         '    W = {k: torch.cat([Wx[k], Wh[k]], dim=1) for k in Wx}    # (H, D + H): the same cell as part 1\n'
         '    b = {k: x.new_zeros(Wx[k].shape[0]) for k in Wx}         # no biases\n'
         '    return lstm_cell(x, h_prev, c_prev, W, b)\n'))
mistake("ch03", "h03d", "ch03_split_gates", "split_gates: row slices n*H:(n+1)*H - 1 (the end of a slice read as inclusive: H - 1 rows per gate)",
        ("    Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))     # 4 blocks of (H, D), rows in the order i, f, g, o\n"
         "    Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))     # 4 blocks of (H, H)\n",
         "    H = cell.hidden_size\n"
         "    Wx, Wh = {}, {}\n"
         "    for n, k in enumerate(GATES):                             # rows n*H to (n+1)*H - 1 hold gate k\n"
         "        Wx[k] = cell.weight_ih[n * H:(n + 1) * H - 1]\n"
         "        Wh[k] = cell.weight_hh[n * H:(n + 1) * H - 1]\n"),
        ("b = dict(zip(GATES, (cell.bias_ih + cell.bias_hh).chunk(4)))",
         "b = {k: cell.bias_ih[n * H:(n + 1) * H - 1] + cell.bias_hh[n * H:(n + 1) * H - 1] for n, k in enumerate(GATES)}"))
mistake("ch03", "h03e", "ch03_lstm_layer", "lstm_layer: step t reads x[:, t - 1] (x_t of the 1-based math, with a 0-based loop: the first step reads the last input)",
        ("h, c = cell(x[:, t], (h, c))", "h, c = cell(x[:, t - 1], (h, c))"))
variant("ch03", "x03a", "ch03_lstm_cell_nobias", "lstm_cell_nobias in the concatenated form with the input first, [x, h_prev] against [Wx[k] | Wh[k]]",
        code=("def lstm_cell_nobias(x, h_prev, c_prev, Wx, Wh):\n"
              "    xh = torch.cat([x, h_prev], dim=1)                                   # (B, D + H): the input first\n"
              "    z = {k: xh @ torch.cat([Wx[k], Wh[k]], dim=1).T for k in ('i', 'f', 'g', 'o')}   # (B, H) each\n"
              "    c = torch.sigmoid(z['f']) * c_prev + torch.sigmoid(z['i']) * torch.tanh(z['g'])\n"
              "    return torch.sigmoid(z['o']) * torch.tanh(c), c\n"))
variant("ch03", "x03b", "ch03_lstm_layer", "lstm_layer carrying h and c as one (2, B, H) tensor, restacked after every step; (h_n, c_n) sliced from it",
        code=("def lstm_layer(cell, x, hidden_size, state=None):\n"
              "    B, T, _ = x.shape\n"
              "    hc = x.new_zeros(2, B, hidden_size) if state is None else torch.cat([state[0], state[1]])   # (2, B, H)\n"
              "    outputs = []\n"
              "    for t in range(T):\n"
              "        hc = torch.stack(cell(x[:, t], (hc[0], hc[1])))      # (2, B, H): the new h and c\n"
              "        outputs.append(hc[0])\n"
              "    return torch.stack(outputs, dim=1), (hc[0:1], hc[1:2])\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "h04a", "ch04_gru_cell_textbook", "gru_cell_textbook: the hidden blocks unpacked W_rh, W_nh, W_zh (z and n swapped in weight_hh only)",
        ("W_rh, W_zh, W_nh = weight_hh.split(H)", "W_rh, W_nh, W_zh = weight_hh.split(H)"))
mistake("ch04", "h04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch written per block with slices; h_n's bias copied from the line above, bias_hh[H:2 * H] (b_hz) for b_hn",
        ("    gi = x @ weight_ih.T + bias_ih          # (B, 3H): the input's contributions, blocks r, z, n\n"
         "    gh = h @ weight_hh.T + bias_hh          # (B, 3H): ONE product for all three hidden blocks\n"
         "    i_r, i_z, i_n = gi.chunk(3, dim=1)      # each (B, H)\n"
         "    h_r, h_z, h_n = gh.chunk(3, dim=1)      # each (B, H)\n",
         "    H = h.shape[1]\n"
         "    W_ir, W_iz, W_in = weight_ih.split(H)   # each (H, D)\n"
         "    W_hr, W_hz, W_hn = weight_hh.split(H)   # each (H, H)\n"
         "    i_r = x @ W_ir.T + bias_ih[:H]\n"
         "    i_z = x @ W_iz.T + bias_ih[H:2 * H]\n"
         "    i_n = x @ W_in.T + bias_ih[2 * H:]\n"
         "    h_r = h @ W_hr.T + bias_hh[:H]\n"
         "    h_z = h @ W_hz.T + bias_hh[H:2 * H]\n"
         "    h_n = h @ W_hn.T + bias_hh[H:2 * H]\n"))
mistake("ch04", "h04c", "ch04_gru_cell_pytorch", "gru_cell_pytorch: torch.nn.functional.linear(x, weight_ih.T, bias_ih) (F.linear transposes the weight itself)",
        ("gi = x @ weight_ih.T + bias_ih ", "gi = torch.nn.functional.linear(x, weight_ih.T, bias_ih) "),
        ("gh = h @ weight_hh.T + bias_hh ", "gh = torch.nn.functional.linear(h, weight_hh.T, bias_hh) "))
mistake("ch04", "h04d", "ch04_count_parameters", "count_parameters: weight_hh counted H * H * directions (as if the recurrent matrix read both directions' states)",
        ("per_direction = blocks * (hidden_size * layer_input + hidden_size * hidden_size)",
         "per_direction = blocks * (hidden_size * layer_input + hidden_size * hidden_size * directions)"))
mistake("ch04", "h04e", "ch04_count_parameters", "count_parameters: layer 1 counted, then `for _ in range(num_layers)` more layers above it (one layer too many)",
        ("    total = 0\n"
         "    for layer in range(num_layers):\n"
         "        layer_input = input_size if layer == 0 else hidden_size * directions\n"
         "        per_direction = blocks * (hidden_size * layer_input + hidden_size * hidden_size)\n"
         "        if bias:\n"
         "            per_direction += blocks * 2 * hidden_size   # bias_ih and bias_hh\n"
         "        total += directions * per_direction\n"
         "    return total\n",
         "\n"
         "    def one_layer(layer_input):\n"
         "        n = blocks * (hidden_size * layer_input + hidden_size * hidden_size)\n"
         "        if bias:\n"
         "            n += blocks * 2 * hidden_size   # bias_ih and bias_hh\n"
         "        return directions * n\n"
         "\n"
         "    total = one_layer(input_size)               # layer 1 reads the input\n"
         "    for _ in range(num_layers):                 # the layers above read the layer below\n"
         "        total += one_layer(hidden_size * directions)\n"
         "    return total\n"))
variant("ch04", "x04a", "ch04_gru_cell_textbook", "gru_cell_textbook in column form: weights @ x.T, row slices of the stacked weights, transposed back",
        code=("def gru_cell_textbook(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    H = h.shape[1]\n"
              "    xc, hc = x.T, h.T                                           # (D, B), (H, B): a column per example\n"
              "    b = (bias_ih + bias_hh)[:, None]                            # (3H, 1)\n"
              "    gi = weight_ih @ xc                                         # (3H, B)\n"
              "    r = torch.sigmoid(gi[:H] + weight_hh[:H] @ hc + b[:H])\n"
              "    z = torch.sigmoid(gi[H:2 * H] + weight_hh[H:2 * H] @ hc + b[H:2 * H])\n"
              "    n = torch.tanh(gi[2 * H:] + weight_hh[2 * H:] @ (r * hc) + b[2 * H:])\n"
              "    return ((1 - z) * n + z * hc).T\n"))
variant("ch04", "x04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch with r and z from one sigmoid over the first 2H columns, split(H)",
        code=("def gru_cell_pytorch(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    H = h.shape[1]\n"
              "    gi = x @ weight_ih.T + bias_ih                              # (B, 3H)\n"
              "    gh = h @ weight_hh.T + bias_hh                              # (B, 3H)\n"
              "    r, z = torch.sigmoid(gi[:, :2 * H] + gh[:, :2 * H]).split(H, dim=1)\n"
              "    n = torch.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])\n"
              "    return n + z * (h - n)\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "h05a", "ch05_reverse_padded", "reverse_padded: x.flip(1), then each row rolled left by its padding (the padding comes back at the end, but in reversed order)",
        ("    B, T = x.shape[:2]\n"
         "    t = torch.arange(T, device=x.device)                       # (T,)\n"
         "    L = lengths.to(x.device).unsqueeze(1)                       # (B, 1)\n"
         "    idx = torch.where(t < L, L - 1 - t, t)                      # (B, T): where each output step reads from\n"
         "    idx = idx.reshape(B, T, *([1] * (x.dim() - 2))).expand_as(x)  # (B, T, ...)\n"
         "    return x.gather(1, idx)\n",
         "    y = x.flip(1)                                   # every sequence reversed: the padding is now in front\n"
         "    for b in range(x.shape[0]):\n"
         "        pad = x.shape[1] - int(lengths[b])          # how many padded steps sequence b has\n"
         "        y[b] = y[b].roll(-pad, dims=0)              # move them back to the end\n"
         "    return y\n"))
mistake("ch05", "h05b", "ch05_bilstm_from_cells", "BiLSTMFromCells: the backward outputs put back in order with out_b.flip(1) (right only when no sequence is padded)",
        ("out_b = reverse_padded(out_b, lengths) ", "out_b = out_b.flip(1) "))
mistake("ch05", "h05c", "ch05_masked_mean", "masked_mean from a cumulative sum read at index lengths (one past the last real step)",
        ("    T = outputs.shape[1]\n"
         "    lengths = lengths.to(outputs.device)\n"
         "    mask = torch.arange(T, device=outputs.device) < lengths.unsqueeze(1)   # (B, T) bool\n"
         "    total = (outputs * mask.unsqueeze(-1)).sum(dim=1)                     # (B, F)\n",
         "    lengths = lengths.to(outputs.device)\n"
         "    running = outputs.cumsum(dim=1)                                        # (B, T, F): running sums over time\n"
         "    total = running[torch.arange(outputs.shape[0]), lengths]              # (B, F): the sum of the real steps\n"))
mistake("ch05", "h05d", "ch05_residual_stack", "ResidualLSTMStack: self.layers a plain Python list of nn.LSTM (not an nn.ModuleList: the layers are not registered)",
        ("self.layers = nn.ModuleList([nn.LSTM(d, hidden_size, batch_first=True) for d in sizes])",
         "self.layers = [nn.LSTM(d, hidden_size, batch_first=True) for d in sizes]"))
mistake("ch05", "h05e", "ch05_sentence_classifier", "SentenceClassifier: masked_mean of the embeddings `emb` instead of the LSTM outputs `out`",
        ("return self.head(masked_mean(out, lengths))", "return self.head(masked_mean(emb, lengths))"))
variant("ch05", "x05a", "ch05_final_states", "final_states: the forward state picked with a one-hot (B, T) weight from F.one_hot(lengths - 1, T), summed over time",
        code=("def final_states(outputs, lengths):\n"
              "    B, T, two_h = outputs.shape\n"
              "    H = two_h // 2\n"
              "    pick = F.one_hot(lengths - 1, T).to(outputs.dtype)                # (B, T): 1 at the last real step\n"
              "    forward_last = (pick[:, :, None] * outputs[:, :, :H]).sum(dim=1)  # (B, H)\n"
              "    return torch.cat([forward_last, outputs[:, 0, H:]], dim=-1)       # (B, 2H)\n"))
variant("ch05", "x05b", "ch05_bilstm_from_cells", "BiLSTMFromCells: h_n[1] read from the backward outputs at position 0 (after putting them back in order)",
        ("return outputs, (torch.stack([h_f, h_b]), torch.stack([c_f, c_b]))",
         "return outputs, (torch.stack([h_f, out_b[:, 0]]), torch.stack([c_f, c_b]))"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "h06a", "ch06_build_vocab", "build_vocab: kept.sort() (alphabetical only; the count is forgotten)",
        ("kept.sort(key=lambda token: (-counts[token], token))", "kept.sort()"))
mistake("ch06", "h06b", "ch06_numericalize", "numericalize: `if add_eos: ids.append(EOS_INDEX)` indented into the loop over the tokens",
        ("    ids = [stoi.get(token, UNK_INDEX) for token in tokens]\n"
         "    if add_sos:\n"
         "        ids = [SOS_INDEX] + ids\n"
         "    if add_eos:\n"
         "        ids = ids + [EOS_INDEX]\n",
         "    ids = [SOS_INDEX] if add_sos else []\n"
         "    for token in tokens:\n"
         "        ids.append(stoi.get(token, UNK_INDEX))\n"
         "        if add_eos:\n"
         "            ids.append(EOS_INDEX)\n"))
mistake("ch06", "h06c", "ch06_decoder", "Decoder: nn.Embedding(emb_size, vocab_size, ...) (the two sizes in the wrong order)",
        ("self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=PAD_INDEX)",
         "self.embedding = nn.Embedding(emb_size, vocab_size, padding_idx=PAD_INDEX)"))
mistake("ch06", "h06d", "ch06_teacher_forced_loss", "teacher_forced_loss: F.cross_entropy(scores, targets, pad_index) (the third positional argument is `weight`)",
        ("dec_out.reshape(-1), ignore_index=pad_index)", "dec_out.reshape(-1), pad_index)"))
mistake("ch06", "h06e", "ch06_greedy_decode", "greedy_decode: `break` where `continue` was meant when a sequence produces <eos> (the rows after it lose this step's token)",
        ("            for b, token in enumerate(y.tolist()):\n"
         "                if not finished[b]:\n"
         "                    if token == EOS_INDEX:\n"
         "                        finished[b] = True\n"
         "                    else:\n"
         "                        outputs[b].append(token)\n",
         "            for b, token in enumerate(y.tolist()):\n"
         "                if finished[b]:\n"
         "                    continue\n"
         "                if token == EOS_INDEX:\n"
         "                    finished[b] = True\n"
         "                    break\n"
         "                outputs[b].append(token)\n"))
variant("ch06", "x06a", "ch06_pad_batch", "pad_batch with pack_sequence(enforce_sorted=False) and pad_packed_sequence(padding_value=pad_index)",
        code=("def pad_batch(sequences, pad_index=PAD_INDEX):\n"
              "    from torch.nn.utils.rnn import pack_sequence\n"
              "    packed = pack_sequence([torch.tensor(s, dtype=torch.long) for s in sequences], enforce_sorted=False)\n"
              "    return pad_packed_sequence(packed, batch_first=True, padding_value=pad_index)   # (padded, lengths)\n"))
variant("ch06", "x06b", "ch06_teacher_forced_loss", "teacher_forced_loss: padding targets set to -100, cross_entropy's default ignore_index",
        ("loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), ignore_index=pad_index)",
         "targets = dec_out.masked_fill(dec_out == pad_index, -100)   # -100: cross_entropy's default ignore_index\n"
         "    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "h07a", "ch07_encoder", "EncoderRNN: the right-to-left loop starts from the left cell's final state (the reset to zeros before it forgotten)",
        ("        state, right = (zeros, zeros), []\n", "        right = []\n"))
mistake("ch07", "h07b", "ch07_attention", "Attention: hidden[:, None, :].expand_as(encoder_outputs) (works only when Hd = De)",
        ("d = hidden[:, None, :].expand(B, Tx, hidden.shape[-1]) ", "d = hidden[:, None, :].expand_as(encoder_outputs) "))
mistake("ch07", "h07c", "ch07_attention", "Attention: masked_fill(~mask, float(\"inf\")) (+inf, the minus sign lost)",
        ('scores = scores.masked_fill(~mask, float("-inf"))', 'scores = scores.masked_fill(~mask, float("inf"))'))
mistake("ch07", "h07d", "ch07_decoder", "AttnDecoderRNN: self.attention(encoder_outputs, h_prev, mask) (the first two arguments swapped)",
        ("weights = self.attention(h_prev, encoder_outputs, mask)", "weights = self.attention(encoder_outputs, h_prev, mask)"))
mistake("ch07", "h07e", "ch07_greedy", "greedy_translate: y = log_probs.max(dim=-1)[0] (the values, not the indices, fed back as tokens)",
        ("y = log_probs.argmax(dim=-1) ", "y = log_probs.max(dim=-1)[0] "))
variant("ch07", "x07a", "ch07_lstm_cell", "LSTMCell: one F.linear of [x, h_prev] with [W.weight | U.weight] side by side",
        ("z = self.W(x) + self.U(h_prev) ",
         "z = F.linear(torch.cat([x, h_prev], dim=-1), torch.cat([self.W.weight, self.U.weight], dim=1)) "))
variant("ch07", "x07b", "ch07_encoder", "EncoderRNN: the mask written inline (arange < lengths) and the right cell's states collected with insert(0, ...)",
        ("mask = source_mask(src_lengths, Tx)  ", "mask = torch.arange(Tx)[None, :] < src_lengths[:, None]  "),
        ("right.append(state[0])", "right.insert(0, state[0])                # kept in source order as they come"),
        ("        right.reverse()\n", ""))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "h08a", "ch08_attend", "attend: the weights from the masked energies, but the contexts from softmax(energies) recomputed unmasked",
        ('    energies = energies.masked_fill(~mask[:, None, :], float("-inf"))   # (B, Ty, Tx): padding gets -inf\n'
         "    weights = torch.softmax(energies, dim=-1)                           # (B, Ty, Tx): over source positions\n"
         "    contexts = weights @ values ",
         '    masked = energies.masked_fill(~mask[:, None, :], float("-inf"))     # (B, Ty, Tx): padding gets -inf\n'
         "    weights = torch.softmax(masked, dim=-1)                             # (B, Ty, Tx): over source positions\n"
         "    contexts = torch.softmax(energies, dim=-1) @ values "))
mistake("ch08", "h08b", "ch08_dot", "dot_attention: torch.mm(dec, enc.transpose(1, 2)) (mm takes 2-D matrices only)",
        ("energies = dec @ enc.transpose(1, 2) ", "energies = torch.mm(dec, enc.transpose(1, 2)) "))
mistake("ch08", "h08c", "ch08_scaled_dot", "scaled_dot_attention returns F.scaled_dot_product_attention(dec, enc, enc, attn_mask=...) (the contexts only; attend not used)",
        ("    D = dec.shape[-1]                                        # the size of the vectors being compared\n"
         "    energies = dec @ enc.transpose(1, 2) / math.sqrt(D)      # (B, Ty, Tx)\n"
         "    return attend(energies, enc, mask)\n",
         "    return F.scaled_dot_product_attention(dec, enc, enc, attn_mask=mask[:, None, :])\n"))
mistake("ch08", "h08d", "ch08_bilinear", "bilinear_attention: torch.bmm(dec, W) with the 2-D W (bmm wants two batches)",
        ("energies = (dec @ W) @ enc.transpose(1, 2) ", "energies = torch.bmm(torch.bmm(dec, W), enc.transpose(1, 2)) "))
mistake("ch08", "h08e", "ch08_macs", "reduced_rank_macs: per_step = once + B * Ty * keys (the keys counted once more than the Ty steps)",
        ("per_step = B * (Ty * keys + queries + dots)", "per_step = once + B * Ty * keys"))
variant("ch08", "x08a", "ch08_reduced_rank", "reduced_rank_attention with the keys as columns, V @ enc^T (B, R, Tx), then queries @ keys_t",
        ("    keys = enc @ V.T                             # (B, Tx, R): V h_s for every source position, once\n"
         "    energies = queries @ keys.transpose(1, 2) ",
         "    keys_t = V @ enc.transpose(1, 2)             # (B, R, Tx): V h_s for every source position, as columns\n"
         "    energies = queries @ keys_t "))
variant("ch08", "x08b", "ch08_bilinear", "bilinear_attention with F.bilinear on every (t, s) pair (expanded views) and W[None]",
        code=("def bilinear_attention(dec, enc, mask, W):\n"
              "    B, Ty, Dd = dec.shape\n"
              "    Tx, Dh = enc.shape[1], enc.shape[2]\n"
              "    d = dec[:, :, None, :].expand(B, Ty, Tx, Dd)\n"
              "    h = enc[:, None, :, :].expand(B, Ty, Tx, Dh)\n"
              "    energies = F.bilinear(d, h, W[None]).squeeze(-1)      # (B, Ty, Tx): d_t^T W h_s for every pair\n"
              "    return attend(energies, enc, mask)\n"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "h09a", "ch09_encode", "encode packs the token ids src, not their embeddings (model.src_embed never applied)",
        ("    x = model.src_embed(src)                                                   # (B, Tx, D)\n"
         "    packed = pack_padded_sequence(x, ",
         "    packed = pack_padded_sequence(src, "))
mistake("ch09", "h09b", "ch09_decode_step", "decode_step: F.dropout(tanh(W_u u), p=model.dropout.p) (functional dropout: training=True by default, so it drops in eval too)",
        ("o = model.dropout(torch.tanh(model.W_u(u)))", "o = F.dropout(torch.tanh(model.W_u(u)), p=model.dropout.p)"))
mistake("ch09", "h09c", "ch09_teacher_forcing", "decode_teacher_forcing returns the stacked combined outputs (B, Ty, H): W_vocab forgotten",
        ("return model.W_vocab(torch.stack(outputs, dim=1))", "return torch.stack(outputs, dim=1)"))
mistake("ch09", "h09d", "ch09_masked_loss", "masked_loss by hand: log_softmax(...).gather(2, tgt_out) without unsqueeze(2) on the index",
        ("    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)\n",
         "    logp = F.log_softmax(logits, dim=-1)                     # (B, Ty, V)\n"
         "    nll = -logp.gather(2, tgt_out).squeeze(2)               # (B, Ty): -log P of each target token\n"
         "    real = (tgt_out != PAD).float()                          # (B, Ty)\n"
         "    return (nll * real).sum() / real.sum()\n"))
mistake("ch09", "h09e", "ch09_beam_search", "beam_search: step_fn(tokens[0] ...) (the hypothesis' first token fed, not its last)",
        ("step_fn(tokens[-1] if tokens else SOS, state)", "step_fn(tokens[0] if tokens else SOS, state)"))
variant("ch09", "x09a", "ch09_beam_search", "beam_search: each hypothesis contributes only its beam_size best tokens (lowest index first among ties)",
        ("            for tok, lp in enumerate(log_probs.tolist()):\n"
         "                candidates.append((score + lp, tokens + [tok], new_state))\n",
         "            lps = log_probs.tolist()\n"
         "            best = sorted(range(len(lps)), key=lambda v: -lps[v])[:beam_size]   # no more can survive\n"
         "            for tok in sorted(best):\n"
         "                candidates.append((score + lps[tok], tokens + [tok], new_state))\n"))
variant("ch09", "x09b", "ch09_decode_step", "decode_step: @ products with unsqueeze(-1), an additive mask (~mask) * finfo.min on the energies",
        ("    e = torch.bmm(h_proj, d.unsqueeze(2)).squeeze(2) ",
         "    e = (h_proj @ d.unsqueeze(-1)).squeeze(-1) "),
        ('    e = e.masked_fill(~mask, float("-inf")) ',
         "    e = e + (~mask).to(e.dtype) * torch.finfo(e.dtype).min "),
        ("    a = torch.bmm(alpha.unsqueeze(1), h).squeeze(1) ",
         "    a = (alpha.unsqueeze(1) @ h).squeeze(1) "))

CASES = M + OK

# ------------------------------------------------------------------------------------------------------ verdicts
# The rule (strict), reading ONLY the first failing visible test's message as the student sees it in Jupyter:
#   P  points to the cause: a student reading only it knows which line / term to change (and how);
#   Pa partly: it names the right function, tensor or line (or where the values go wrong) but not what is wrong,
#      a bare value mismatch, or PyTorch's own error with no cause;
#   N  not at all: nothing in it leads to the cause;
#   M  misleading: it names a wrong cause, or blames code that is right.
# "-": no visible test fails. Read from student_view.json after the merge of f18fd61 (the go commit, 09:29 UTC).
VERDICTS: dict[str, tuple[str, str]] = {
    "ch01-h01a": ("P", "PyTorch's own IndexError at the student's line `outputs[:, x.shape[1]]`: 'index 5 is out of bounds for "
                       "dimension 1 with size 5': the index T is one past the last step (self-sufficient, no course text)"),
    "ch01-h01b": ("P", "`inputs[:, 1]` where `inputs[:, 0]` is needed, in OneToMany.forward"),
    "ch01-h01c": ("Pa", "shape (2, 5, 6) for (2, 7, 6), '(the wrong tensor, weight or size used there?)'; not that the "
                        "encoder's outputs (Tx = 5) are returned instead of the decoder's (Ty = 7)"),
    "ch01-h01d": ("Pa", "PyTorch's 'Boolean value of Tensor with more than one value is ambiguous' at the right line; not "
                        "that nn.CrossEntropyLoss is a class (build it, or use F.cross_entropy)"),
    "ch01-h01e": ("P", "Python's \'method\' object is not iterable at `torch.optim.Adam(model.parameters, lr=lr)`: "
                       "parameters must be called (self-sufficient, no course text)"),
    "ch02-h02a": ("Pa", "the broadcast of `W_hx * x_t` explained ((4, 3) against (2, 3)) at the right line; not that the "
                        "products are matrix products (x_t @ W_hx.T)"),
    "ch02-h02b": ("Pa", "the error inside rnn_cell, 'check what rnn_layer passes to it' with x_t (5, 2): the right "
                        "function, not that transpose(1, 2) should be transpose(0, 1); the operand swaps it offers for "
                        "rnn_cell's (right) line are no fix"),
    "ch02-h02c": ("Pa", "bptt_gradient_norms: 4 of 5 entries differ; no cause (the spectral norm of linalg.norm(grad, 2))"),
    "ch02-h02d": ("M", "'nothing was clipped (`g = g * scale` makes a new tensor ...; or parameters, a generator, was read "
                       "twice)': the code uses g.mul_ and reads a list once; the cause is the comparison written "
                       "`total_norm < max_norm`"),
    "ch02-h02e": ("Pa", "a.grad after clipping: got 2.76923, expected 0.923077; no cause (the gradients squared in place "
                        "by pow_)"),
    "ch03-h03a": ("M", "matmul error at the c line, then 'i @ g.mT would give (2, 2), i.mT @ g would give (4, 4): which one "
                       "is your equation (the order of the operands, a transpose, the tensor used)?': every cause offered "
                       "is a transpose or an order; the fix (element-wise *) is not among them"),
    "ch03-h03b": ("P", "'your result does not change when b[\'i\'] is replaced: that input is not used': the input gate "
                       "never reaches c, so the `i` in `i * g` is not the gate (it is the loop index)"),
    "ch03-h03c": ("Pa", "c of lstm_cell_nobias: 8 of 8 entries differ; no cause (the reused lstm_cell reads [h; x], the "
                        "weights were joined [Wx | Wh])"),
    "ch03-h03d": ("Pa", "Wx['i'] (1, 3) for (2, 3), 'dimension 0 is 2 times too small': the right tensor, one row short; "
                        "not that the slice end n*H:(n+1)*H - 1 drops a row (the '2 times' reads as a factor)"),
    "ch03-h03e": ("Pa", "lstm_layer outputs: 38 of 40 entries differ; no cause (step t reads x[:, t - 1])"),
    "ch04-h04a": ("P", "`W_zh` and `W_nh` in each other's place, in gru_cell_textbook"),
    "ch04-h04b": ("P", "'the n rows of bias_hh (b_hn) ... not used': h_n's bias slice bias_hh[H:2 * H] is b_hz"),
    "ch04-h04c": ("Pa", "matmul error at the F.linear line, 'a .T missing or one too many, or the wrong matrix?': the fix "
                        "(drop the .T) is one of three generic options; not that F.linear transposes its weight itself"),
    "ch04-h04d": ("Pa", "the per_direction line and 'an expression written where only one of its variables is needed (r * "
                        "h for h)': the right line and kind, not which expression (hidden_size * directions); the "
                        "example r * h is from the GRU cells, not this function"),
    "ch04-h04e": ("P", "'a loop that starts or ends one step off' in count_parameters (the header quoted as `for layer in "
                       "range(num_layers)`, the student's is `for _ in range(num_layers)`): one layer too many"),
    "ch05-h05a": ("P", "'every wrong entry is in the padding (it must stay where it is, unchanged)': the roll brings the "
                       "padding back reversed"),
    "ch05-h05b": ("Pa", "outputs (padded batch): the wrong entries are at sequence 0 and features 5.. (the backward half); "
                        "not that out_b.flip(1) is wrong for a padded sequence (reverse_padded)"),
    "ch05-h05c": ("P", "'you count one padded step too many': the cumulative sum is read at lengths, one past the last "
                       "real step (the example `t <= length` is not the student's code, the cause is)"),
    "ch05-h05d": ("P", "'self.layers: an nn.ModuleList of 3 nn.LSTM': the plain list must be an nn.ModuleList"),
    "ch05-h05e": ("Pa", "self.head built for 8 features is fed 5: 'build it with in_features=5 ... or give it the tensor "
                        "it was built for': names the fed tensor's size, and first offers a wrong fix (the head is right); "
                        "not that emb is pooled instead of out"),
    "ch06-h06a": ("P", "'sorted alphabetically only: most frequent first, then alphabetical among equal counts'"),
    "ch06-h06b": ("Pa", "expected [1, 5, 4, 6, 2], got [1, 5, 2, 4, 2, 6, 2]: a bare list mismatch (the EOS after every "
                        "token shows, its cause, the append inside the loop, is not said)"),
    "ch06-h06c": ("Pa", "PyTorch's 'input has inconsistent input_size: got 9 expected 3' at the GRU cell call; not that the "
                        "embedding was built nn.Embedding(emb_size, vocab_size)"),
    "ch06-h06d": ("P", "PyTorch's 'argument \'weight\' (position 3) must be Tensor, not int' at the cross_entropy line: "
                       "pad_index went to weight (ignore_index= is meant; self-sufficient, no course text)"),
    "ch06-h06e": ("Pa", "tokens [[6, 7, 8], [9], [4, 4, 4]] for [..., [4, 4, 4, 4, 4]]: a bare mismatch; not that `break` "
                        "skips the other rows of the step (continue)"),
    "ch07-h07a": ("P", "`(_, right) = ...` where `(state, right) = ...` is needed: state keeps the left cell's value (the "
                       "reset to zeros before the right-to-left loop)"),
    "ch07-h07b": ("Pa", "PyTorch's expand error (4 against 3 at dimension 2) at the expand_as line; not that expand_as "
                        "copies encoder_outputs' feature size (expand(B, Tx, Hd))"),
    "ch07-h07c": ("M", "NaN in the weights: 'a softmax over entries that are all -inf gives NaN; take the softmax over "
                       "dimension 1 ...': there is no all -inf row and the softmax axis is right; the cause is +inf "
                       "(float('inf')) (the closing 'set -inf only where the mask is False' does contain the fix)"),
    "ch07-h07d": ("Pa", "Attention.forward received hidden (2, 5, 6), encoder_outputs (2, 4): 'check what forward passes "
                        "to it' (right), then 'a function returns another number of values than its docstring says' "
                        "(no function does); the swapped arguments show in the shapes, not said"),
    "ch07-h07e": ("Pa", "tokens[0][0] must be a Python int, got a Python float: the symptom; not that max(dim=-1)[0] "
                        "gives the values (argmax / [1] gives the indices); int() would not fix it"),
    "ch08-h08a": ("Pa", "contexts differ only for sentence 1 (the padded one): located; not that the contexts use an "
                        "unmasked softmax instead of the weights"),
    "ch08-h08b": ("Pa", "PyTorch's 'self must be a matrix' at the torch.mm line; not said that mm takes 2-D tensors only "
                        "(bmm or @)"),
    "ch08-h08c": ("Pa", "weights: expected (2, 3, 4), got (3, 5): the function returns one tensor (the contexts) and the "
                        "test's unpacking splits its batch; neither that nor 'attend not called' is said"),
    "ch08-h08d": ("Pa", "PyTorch's 'batch2 must be a 3D tensor' at the line with two bmm; not which one or that W is 2-D "
                        "(dec @ W)"),
    "ch08-h08e": ("M", "'you count the dot products Ty=3 times too often (630 instead of 210)': the dots are counted once; "
                       "the extra 420 are the keys of `once` added to the Ty recomputations"),
    "ch09-h09a": ("Pa", "PyTorch's 'mat1 and mat2 must have the same dtype, but got Long and Float' at the encoder call; "
                        "not that the ids were packed without model.src_embed"),
    "ch09-h09b": ("Pa", "'o_1 in eval mode (no dropout)': got 0, expected 0.1198; the label and the zeros hint at dropout, "
                        "no cause (F.dropout's training=True default)"),
    "ch09-h09c": ("Pa", "logits (2, 4, 4) for (2, 4, 6), '(the wrong tensor, weight or size used there?)'; not that "
                        "W_vocab is not applied"),
    "ch09-h09d": ("P", "PyTorch's 'Index tensor must have the same number of dimensions as input tensor' at the gather "
                       "line: the (B, Ty) index needs unsqueeze(2) (self-sufficient, no course text)"),
    "ch09-h09e": ("Pa", "beam_size=1: [[5, 3, 5, 3]] for [[5, 3, 3, 5]]; no cause (step_fn fed tokens[0])"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.run_trial(sys.modules[__name__], "/tmp/student_trial_22h", argv)


if __name__ == "__main__":
    main()
