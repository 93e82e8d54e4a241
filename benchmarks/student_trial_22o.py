"""Student trial 22o: an acceptance trial of issue 22, 45 new mistakes and 18 correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed before solutions/ and the catalogues
were read: benchmarks/results/student_trial_22o_plan.md); 42 of the 45 planned mistakes and all 18 planned variants
repeated an old mutant, an alternative, an earlier trial's case or its class, and were replaced by new ones written the
same way (the plan's second table). A mistake is one or more edits of one cell's reference code, ``(old, new)`` pairs
whose ``old`` occurs once; a variant rewrites the cell (or edits it) and must keep full marks. Only the cases and the
verdicts live here: building, grading (the class grader, one run per assignment), the Jupyter view and the report are
benchmarks/student_trial.py's and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22o unless --root says otherwise):

    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22o.py --student-view [ch01 ...] [--students ch01-o01a,...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22o.py --grade [ch01 ...]
    /work/main/.venv/bin/python benchmarks/student_trial_22o.py --table     # benchmarks/results/student_trial_22o.md's tables
    /work/main/.venv/bin/python benchmarks/student_trial_22o.py --save benchmarks/results/student_trial_22o.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "o01a", "ch01_many_to_one", "ManyToOne classifies from outputs[:, -1:] (the slice that 'keeps the dimension'): logits (B, 1, C), not (B, C)",
        ("return self.head(outputs[:, -1])", "return self.head(outputs[:, -1:])"))
mistake("ch01", "o01b", "ch01_many_to_many_sync", "ManyToManySync builds a bidirectional RNN (tagging tutorials use one) with a head on 2H: step t's output then sees the later inputs",
        ("        self.rnn = nn.RNN(input_size, hidden_size, batch_first=True)\n",
         "        self.rnn = nn.RNN(input_size, hidden_size, batch_first=True, bidirectional=True)\n"),
        ("        self.head = nn.Linear(hidden_size, num_classes)\n", "        self.head = nn.Linear(2 * hidden_size, num_classes)\n"))
mistake("ch01", "o01c", "ch01_one_to_many", "OneToMany joins x and the zero steps with torch.cat([...]) without dim= (torch.cat's default is dim 0, the batch)",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])  # (B, steps, D), all zeros\n"
         "        inputs[:, 0] = x                                     # x only at the first step\n",
         "inputs = torch.cat([x.unsqueeze(1), x.new_zeros(x.shape[0], steps - 1, x.shape[1])])   # x, then zero steps\n"))
mistake("ch01", "o01d", "ch01_train_step", "train_step clips the gradients, clip_grad_norm_(model.parameters(), 1.0), between backward and step (a tutorial's loop copied whole)",
        ("    loss.backward()\n", "    loss.backward()\n    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)   # keeps the update stable\n"))
mistake("ch01", "o01e", "ch01_fit", "fit draws the batch's indices but passes the whole set, train_step(model, optimizer, x, y) (full-batch training)",
        ("losses.append(train_step(model, optimizer, x[idx], y[idx]))", "losses.append(train_step(model, optimizer, x, y))"))
variant("ch01", "z01a", "ch01_many_to_many_sync", "ManyToManySync runs its RNN one step at a time, x[:, t:t + 1] with the state carried, and joins the steps' outputs",
        ("        outputs, _ = self.rnn(x)      # (B, T, H)\n        return self.head(outputs)     # (B, T, C): nn.Linear acts on the last dimension",
         "        h, steps = None, []\n"
         "        for t in range(x.shape[1]):\n"
         "            out, h = self.rnn(x[:, t:t + 1], h)   # one step, the state carried\n"
         "            steps.append(out)\n"
         "        return self.head(torch.cat(steps, dim=1))   # (B, T, C)"))
variant("ch01", "z01b", "ch01_fit", "fit draws every batch's indices at once, randint(0, len(x), (steps, batch_size), generator=g), and loops over the rows",
        ("    for _ in range(steps):\n        idx = torch.randint(0, len(x), (batch_size,), generator=g)   # (batch_size,)\n"
         "        losses.append(train_step(model, optimizer, x[idx], y[idx]))",
         "    all_idx = torch.randint(0, len(x), (steps, batch_size), generator=g)   # every batch at once\n"
         "    for idx in all_idx:\n"
         "        losses.append(train_step(model, optimizer, x[idx], y[idx]))"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "o02a", "ch02_rnn_cell", "rnn_cell writes the new state into h_prev's memory, torch.tanh(..., out=h_prev) ('to save memory'): the caller's state changes",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)", "return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h, out=h_prev)   # reuse h_prev's memory"))
mistake("ch02", "o02b", "ch02_rnn_layer", "rnn_layer turns a time-first input round with x.T (and the outputs back with .T): .T of a 3-D tensor reverses all three axes",
        ("x = x.transpose(0, 1)", "x = x.T"),
        ("outputs = outputs.transpose(0, 1)", "outputs = outputs.T"))
mistake("ch02", "o02c", "ch02_bptt_gradient_norms", "bptt writes the recursion in the math's column order, W_hh.T @ (grad * (1 - h ** 2)), on the (B, H) rows",
        ("grad = (grad * (1 - states[:, t] ** 2)) @ W_hh     # (B, H): dL/dh_t",
         "grad = W_hh.T @ (grad * (1 - states[:, t] ** 2))   # W_hh^T diag(1 - h_t^2) dL/dh_t"))
mistake("ch02", "o02d", "ch02_clip_grad_norm", "clip_grad_norm gives every parameter without a gradient a zero one, p.grad = torch.zeros_like(p) ('a missing gradient counts as zero'), instead of skipping it",
        ("    grads = [p.grad for p in parameters if p.grad is not None]\n",
         "    params = list(parameters)\n"
         "    for p in params:\n"
         "        if p.grad is None:\n"
         "            p.grad = torch.zeros_like(p)          # a missing gradient counts as zero\n"
         "    grads = [p.grad for p in params]\n"))
mistake("ch02", "o02e", "ch02_clip_grad_norm", "clip_grad_norm always scales by torch.clamp(max_norm / (total + 1e-6), min=1.0) (clamp's min for its max: short gradients stretched, long ones left)",
        ("    if total_norm > max_norm:\n        scale = max_norm / (total_norm + 1e-6)\n        for g in grads:\n            g.mul_(scale)\n",
         "    scale = torch.clamp(max_norm / (total_norm + 1e-6), min=1.0)   # never more than max_norm / total\n"
         "    for g in grads:\n"
         "        g.mul_(scale)\n"))
variant("ch02", "z02a", "ch02_rnn_layer", "rnn_layer with itertools.accumulate over x.unbind(time axis), the cell as the accumulating function",
        code=("import itertools\n\n\n"
              "def rnn_layer(x, W_hx, W_hh, b_h, h0=None, batch_first=True):\n"
              "    steps = x.unbind(1 if batch_first else 0)                       # T tensors (B, D)\n"
              "    h = x.new_zeros(steps[0].shape[0], W_hh.shape[0]) if h0 is None else h0\n"
              "    states = list(itertools.accumulate(steps, lambda h, x_t: rnn_cell(x_t, h, W_hx, W_hh, b_h), initial=h))[1:]\n"
              "    return torch.stack(states, dim=1 if batch_first else 0), states[-1]\n"))
variant("ch02", "z02b", "ch02_bptt_gradient_norms", "bptt keeps the norms as Python floats (.item()) and returns torch.tensor(norms, dtype=states.dtype)",
        ("norms = [torch.linalg.vector_norm(grad)]", "norms = [torch.linalg.vector_norm(grad).item()]"),
        ("norms.append(torch.linalg.vector_norm(grad))", "norms.append(torch.linalg.vector_norm(grad).item())"),
        ("return torch.stack(norms)", "return torch.tensor(norms, dtype=states.dtype)"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "o03a", "ch03_lstm_cell", "lstm_cell computes the four gates in one dict comprehension with sigmoid, then g = torch.tanh(gates['g']) (the candidate squashed by sigmoid, then tanh)",
        ('    i = torch.sigmoid(hx @ W["i"].T + b["i"])      # (B, H) input gate\n'
         '    f = torch.sigmoid(hx @ W["f"].T + b["f"])      # (B, H) forget gate\n'
         '    g = torch.tanh(hx @ W["g"].T + b["g"])         # (B, H) candidate cell\n'
         '    o = torch.sigmoid(hx @ W["o"].T + b["o"])      # (B, H) output gate\n',
         '    gates = {k: torch.sigmoid(hx @ W[k].T + b[k]) for k in W}   # (B, H) each\n'
         '    i, f, o = gates["i"], gates["f"], gates["o"]\n'
         '    g = torch.tanh(gates["g"])                     # the candidate uses tanh\n'))
mistake("ch03", "o03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias gives the output gate a peephole on the new cell state, o = sigmoid(W_ox x + W_oh h + c) (Graves' formulation read elsewhere)",
        ('    o = torch.sigmoid(x @ Wx["o"].T + h_prev @ Wh["o"].T)   # (B, H) output gate\n'
         '    c = f * c_prev + i * g                                  # (B, H)\n',
         '    c = f * c_prev + i * g                                  # (B, H)\n'
         '    o = torch.sigmoid(x @ Wx["o"].T + h_prev @ Wh["o"].T + c)   # (B, H) output gate, peeking at the new cell\n'))
mistake("ch03", "o03c", "ch03_split_gates", "split_gates joins the two bias vectors, torch.cat([bias_ih, bias_hh]).chunk(4), instead of adding them (each b[k] then (2H,))",
        ("(cell.bias_ih + cell.bias_hh).chunk(4)", "torch.cat([cell.bias_ih, cell.bias_hh]).chunk(4)"))
mistake("ch03", "o03d", "ch03_lstm_layer", "lstm_layer makes its zero states x.new_zeros(hidden_size, B) (the math's column layout, (H, B))",
        ("        h = x.new_zeros(B, hidden_size)            # (B, H)\n        c = x.new_zeros(B, hidden_size)            # (B, H)\n",
         "        h = x.new_zeros(hidden_size, B)            # (H, B)\n        c = x.new_zeros(hidden_size, B)            # (H, B)\n"))
mistake("ch03", "o03e", "ch03_lstm_cell", "lstm_cell: c = f * (c_prev + i * g) (a misplaced parenthesis: the forget gate scales the new input too)",
        ("c = f * c_prev + i * g", "c = f * (c_prev + i * g)"))
variant("ch03", "z03a", "ch03_split_gates", "split_gates with numpy.split of the detached weights, back to tensors with torch.from_numpy, `cell.bias_ih is None` for the no-bias case",
        code=("import numpy as np\n\n\n"
              "def split_gates(cell):\n"
              "    Wx = {k: torch.from_numpy(w) for k, w in zip(GATES, np.split(cell.weight_ih.detach().numpy(), 4))}\n"
              "    Wh = {k: torch.from_numpy(w) for k, w in zip(GATES, np.split(cell.weight_hh.detach().numpy(), 4))}\n"
              "    if cell.bias_ih is None:\n"
              "        return Wx, Wh, None\n"
              "    b = (cell.bias_ih + cell.bias_hh).detach().numpy()\n"
              "    return Wx, Wh, {k: torch.from_numpy(v) for k, v in zip(GATES, np.split(b, 4))}\n"))
variant("ch03", "z03b", "ch03_lstm_layer", "lstm_layer by recursion over time: the layer over the first T - 1 steps, then one more step",
        code=("def lstm_layer(cell, x, hidden_size, state=None):\n"
              "    B, T, _ = x.shape\n"
              "    if T == 0:\n"
              "        if state is None:\n"
              "            state = (x.new_zeros(1, B, hidden_size), x.new_zeros(1, B, hidden_size))\n"
              "        return x.new_zeros(B, 0, hidden_size), state\n"
              "    earlier, (h, c) = lstm_layer(cell, x[:, :-1], hidden_size, state)   # the first T - 1 steps\n"
              "    h, c = cell(x[:, -1], (h[0], c[0]))                                  # then step T\n"
              "    return torch.cat([earlier, h.unsqueeze(1)], dim=1), (h.unsqueeze(0), c.unsqueeze(0))\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "o04a", "ch04_gru_cell_textbook", "gru_cell_textbook puts the reset gate on the input of the candidate, tanh(W_nx (r * x) + W_nh h + b_n) (the wrong operand)",
        ("h_tilde = torch.tanh(x @ W_nx.T + (r * h) @ W_nh.T + b_n)", "h_tilde = torch.tanh((r * x) @ W_nx.T + h @ W_nh.T + b_n)"))
mistake("ch04", "o04b", "ch04_gru_cell_textbook", "gru_cell_textbook computes h' = (1 - z) h~ + z h into h_new and returns h_tilde (the name of the result slipped)",
        ("return (1 - z) * h_tilde + z * h", "h_new = (1 - z) * h_tilde + z * h\n    return h_tilde"))
mistake("ch04", "o04c", "ch04_gru_cell_pytorch", "gru_cell_pytorch adds b_hn again inside the reset as the whole bias_hh, tanh(i_n + r * (h_n + bias_hh)) ((3H,) against (B, H))",
        ("n = torch.tanh(i_n + r * h_n)", "n = torch.tanh(i_n + r * (h_n + bias_hh))"))
mistake("ch04", "o04d", "ch04_gru_cell_pytorch", "gru_cell_pytorch returns gru_cell_textbook(...) ('the same weights serve both': the two forms taken for one cell)",
        ("    gi = x @ weight_ih.T + bias_ih          # (B, 3H): the input's contributions, blocks r, z, n\n"
         "    gh = h @ weight_hh.T + bias_hh          # (B, 3H): ONE product for all three hidden blocks\n"
         "    i_r, i_z, i_n = gi.chunk(3, dim=1)      # each (B, H)\n"
         "    h_r, h_z, h_n = gh.chunk(3, dim=1)      # each (B, H)\n"
         "    r = torch.sigmoid(i_r + h_r)            # (B, H)\n"
         "    z = torch.sigmoid(i_z + h_z)            # (B, H)\n"
         "    n = torch.tanh(i_n + r * h_n)           # (B, H): reset AFTER the product, b_hn included\n"
         "    return (1 - z) * n + z * h              # (B, H)\n",
         "    return gru_cell_textbook(x, h, weight_ih, weight_hh, bias_ih, bias_hh)   # the same weights serve both\n"))
mistake("ch04", "o04e", "ch04_count_parameters", "count_parameters sets per_direction = 0 once before the loop and adds to it with += (the running sum is not reset for each layer)",
        ("    total = 0\n    for layer in range(num_layers):\n", "    total = 0\n    per_direction = 0\n    for layer in range(num_layers):\n"),
        ("        per_direction = blocks * (hidden_size * layer_input", "        per_direction += blocks * (hidden_size * layer_input"))
variant("ch04", "z04a", "ch04_gru_cell_textbook", "gru_cell_textbook adds the two biases separately in each block, W_rx x + b_ir + W_rh h + b_hr (for the candidate b_in + b_hn outside the reset)",
        ("b_r, b_z, b_n = (bias_ih + bias_hh).split(H)", "b_ir, b_iz, b_in = bias_ih.split(H)\n    b_hr, b_hz, b_hn = bias_hh.split(H)"),
        ("x @ W_rx.T + h @ W_rh.T + b_r)", "x @ W_rx.T + b_ir + h @ W_rh.T + b_hr)"),
        ("x @ W_zx.T + h @ W_zh.T + b_z)", "x @ W_zx.T + b_iz + h @ W_zh.T + b_hz)"),
        ("x @ W_nx.T + (r * h) @ W_nh.T + b_n)", "x @ W_nx.T + b_in + (r * h) @ W_nh.T + b_hn)"))
variant("ch04", "z04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch writes 1 - z as torch.sigmoid(-(i_z + h_z)) (1 - sigmoid(a) = sigmoid(-a))",
        ("return (1 - z) * n + z * h", "return torch.sigmoid(-(i_z + h_z)) * n + z * h   # 1 - sigmoid(a) = sigmoid(-a)"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "o05a", "ch05_reverse_padded", "reverse_padded with the library's tools: unpad_sequence, each row flipped, pad_sequence(batch_first=True) (the padding refilled with zeros, T cut to the longest)",
        ("    B, T = x.shape[:2]\n"
         "    t = torch.arange(T, device=x.device)                       # (T,)\n"
         "    L = lengths.to(x.device).unsqueeze(1)                       # (B, 1)\n"
         "    idx = torch.where(t < L, L - 1 - t, t)                      # (B, T): where each output step reads from\n"
         "    idx = idx.reshape(B, T, *([1] * (x.dim() - 2))).expand_as(x)  # (B, T, ...)\n"
         "    return x.gather(1, idx)\n",
         "    from torch.nn.utils.rnn import pad_sequence, unpad_sequence\n"
         "    rows = unpad_sequence(x, lengths, batch_first=True)         # each sequence's real steps\n"
         "    return pad_sequence([row.flip(0) for row in rows], batch_first=True)\n"))
mistake("ch05", "o05b", "ch05_lstm_direction", "lstm_direction makes its mask a float, (t < lengths).float().unsqueeze(1) (the float-mask habit), and gives it to torch.where",
        ("real = (t < lengths).to(x.device).unsqueeze(1)", "real = (t < lengths).float().unsqueeze(1)"))
mistake("ch05", "o05c", "ch05_bilstm_from_cells", "BiLSTMFromCells groups the final states by direction, (stack([h_f, c_f]), stack([h_b, c_b])), not by kind (h_n, c_n)",
        ("return outputs, (torch.stack([h_f, h_b]), torch.stack([c_f, c_b]))", "return outputs, (torch.stack([h_f, c_f]), torch.stack([h_b, c_b]))"))
mistake("ch05", "o05d", "ch05_residual_stack", "ResidualLSTMStack calls F.dropout(h, self.dropout.p) (functional dropout's training=True default: it drops in eval mode too)",
        ("inp = h if l == 0 else self.dropout(h)", "inp = h if l == 0 else F.dropout(h, self.dropout.p)"))
mistake("ch05", "o05e", "ch05_sentence_classifier", "SentenceClassifier gives masked_mean what pad_packed_sequence returns, the pair (padded, lengths), not the padded tensor",
        ("        out, _ = pad_packed_sequence(out, batch_first=True, total_length=tokens.shape[1])  # (B, T, 2H)\n"
         "        return self.head(masked_mean(out, lengths))",
         "        return self.head(masked_mean(pad_packed_sequence(out, batch_first=True, total_length=tokens.shape[1]), lengths))"))
variant("ch05", "z05a", "ch05_reverse_padded", "reverse_padded flips the whole rows, rolls each row back by L - T, and restores the padding with torch.where",
        code=("def reverse_padded(x, lengths):\n"
              "    T = x.shape[1]\n"
              "    flipped = x.flip(1)                                   # the padding first, then the reversed sequence\n"
              "    rows = [torch.roll(flipped[b], shifts=L - T, dims=0) for b, L in enumerate(lengths.tolist())]\n"
              "    rolled = torch.stack(rows)                            # each reversed prefix back at position 0\n"
              "    t = torch.arange(T, device=x.device).view(1, T, *([1] * (x.dim() - 2)))\n"
              "    real = t < lengths.to(x.device).view(-1, *([1] * (x.dim() - 1)))\n"
              "    return torch.where(real, rolled, x)                   # the padding as it was\n"))
variant("ch05", "z05b", "ch05_final_states", "final_states picks the forward half with torch.take_along_dim(outputs[..., :H], last.view(-1, 1, 1), dim=1)",
        ("forward_last = outputs[rows, last, :H]", "forward_last = torch.take_along_dim(outputs[..., :H], last.view(-1, 1, 1), dim=1)[:, 0]"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "o06a", "ch06_pad_batch", "pad_batch: lengths = torch.tensor(len(seq) for seq in sequences) (the list's brackets forgotten: a generator)",
        ("torch.tensor([len(seq) for seq in sequences], dtype=torch.long)", "torch.tensor(len(seq) for seq in sequences)"))
mistake("ch06", "o06b", "ch06_encoder", "Encoder builds nn.RNN(emb_size, hidden_size, batch_first=True) (exercise 1's layer) where the docstring asks for nn.GRU",
        ("self.rnn = nn.GRU(emb_size, hidden_size, batch_first=True)", "self.rnn = nn.RNN(emb_size, hidden_size, batch_first=True)"))
mistake("ch06", "o06c", "ch06_decoder", "Decoder.step calls self.cell(self.embedding(y_prev)) without d_prev (nn.GRUCell then starts from zeros: the state is never carried)",
        ("d = self.cell(self.embedding(y_prev), d_prev)", "d = self.cell(self.embedding(y_prev))"))
mistake("ch06", "o06d", "ch06_teacher_forced_loss", "teacher_forced_loss gives F.cross_entropy the (B, Ty, V) logits and (B, Ty) targets as they are (the classes must be on dim 1)",
        ("loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), ignore_index=pad_index)",
         "loss = F.cross_entropy(logits, dec_out, ignore_index=pad_index)"))
mistake("ch06", "o06e", "ch06_greedy_decode", "greedy_decode: `with torch.no_grad:` (the class itself, not an instance: the parentheses forgotten)",
        ("with torch.no_grad():", "with torch.no_grad:"))
variant("ch06", "z06a", "ch06_pad_batch", "pad_batch builds the batch in NumPy (np.full with pad_index, int64) and converts it with torch.from_numpy",
        code=("import numpy as np\n\n\n"
              "def pad_batch(sequences, pad_index=PAD_INDEX):\n"
              "    lengths = np.array([len(seq) for seq in sequences], dtype=np.int64)\n"
              "    padded = np.full((len(sequences), lengths.max()), pad_index, dtype=np.int64)\n"
              "    for b, seq in enumerate(sequences):\n"
              "        padded[b, : len(seq)] = seq\n"
              "    return torch.from_numpy(padded), torch.from_numpy(lengths)\n"))
variant("ch06", "z06b", "ch06_teacher_forced_loss", "teacher_forced_loss as F.nll_loss of F.log_softmax(logits, -1).flatten(0, 1), ignore_index=pad_index",
        ("loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), ignore_index=pad_index)",
         "loss = F.nll_loss(F.log_softmax(logits, dim=-1).flatten(0, 1), dec_out.flatten(), ignore_index=pad_index)"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "o07a", "ch07_lstm_cell", "LSTMCell.forward returns [h, c], a list, where the docstring asks for the tuple (h, c)",
        ("        return h, c\n", "        return [h, c]\n"))
mistake("ch07", "o07b", "ch07_encoder", "EncoderRNN squashes the decoder's first state, hidden = tanh(fc([h_left; h_right])) (Bahdanau et al. initialise s_0 with a tanh)",
        ("hidden = self.fc(torch.cat([h_left, h_right], dim=-1))", "hidden = torch.tanh(self.fc(torch.cat([h_left, h_right], dim=-1)))"))
mistake("ch07", "o07c", "ch07_attention", "Attention joins [d; h_s] along dim=1 (the positions) instead of the features",
        ("pairs = torch.cat([d, encoder_outputs], dim=-1)", "pairs = torch.cat([d, encoder_outputs], dim=1)"))
mistake("ch07", "o07d", "ch07_decoder", "AttnDecoderRNN indexes the bmm's (B, 1, De) result with [..., 0] (the last axis) where [:, 0] is meant: a (B, 1) context",
        ("weighted_encoder = torch.bmm(weights[:, None, :], encoder_outputs)[:, 0]", "weighted_encoder = torch.bmm(weights[:, None, :], encoder_outputs)[..., 0]"))
mistake("ch07", "o07e", "ch07_greedy", "greedy_translate zeroes the weights of sentences already finished, last_weights * ~done[:, None] ('only the weights of real output')",
        ("        weights.append(model.last_weights)                          # (B, Tx)\n",
         "        weights.append(model.last_weights * ~done[:, None])        # (B, Tx): none for finished sentences\n"))
variant("ch07", "z07a", "ch07_attention", "Attention scores with v first, as in the math: self.v @ energy.transpose(1, 2)",
        ("scores = energy @ self.v", "scores = self.v @ energy.transpose(1, 2)"))
variant("ch07", "z07b", "ch07_greedy", "greedy_translate stacks the weights steps first and permutes them, torch.stack(weights).permute(1, 0, 2)",
        ("return out, torch.stack(weights, dim=1)", "return out, torch.stack(weights).permute(1, 0, 2)"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "o08a", "ch08_attend", "attend returns (contexts, weights), the two results in the other order",
        ("return weights, contexts", "return contexts, weights"))
mistake("ch08", "o08b", "ch08_dot", "dot_attention passes attend ~mask (nn.MultiheadAttention's key_padding_mask is True at the padding)",
        ("return attend(energies, enc, mask)", "return attend(energies, enc, ~mask)"))
mistake("ch08", "o08c", "ch08_scaled_dot", "scaled_dot_attention passes attend the softmax of the scaled energies (the weights made in the score function: a softmax twice)",
        ("return attend(energies, enc, mask)", "return attend(torch.softmax(energies, dim=-1), enc, mask)"))
mistake("ch08", "o08d", "ch08_bilinear", "bilinear_attention computes dec @ W with torch.mm on the flattened batch and reshapes it to (B, Ty, Dd) (Dd typed for Dh)",
        ("energies = (dec @ W) @ enc.transpose(1, 2)",
         "B, Ty, Dd = dec.shape\n"
         "    projected = torch.mm(dec.reshape(-1, Dd), W).reshape(B, Ty, Dd)   # dec @ W for every step\n"
         "    energies = projected @ enc.transpose(1, 2)"))
mistake("ch08", "o08e", "ch08_macs", "reduced_rank_macs: once = B * keys + queries + dots (the parentheses lost: only the keys counted for every sentence)",
        ("once = B * (keys + queries + dots)", "once = B * keys + queries + dots"))
variant("ch08", "z08a", "ch08_bilinear", "bilinear_attention computes dec @ W with torch.mm on the flattened batch, reshaped to (B, Ty, Dh)",
        ("energies = (dec @ W) @ enc.transpose(1, 2)",
         "projected = torch.mm(dec.reshape(-1, dec.shape[-1]), W).reshape(*dec.shape[:2], W.shape[1])   # (B, Ty, Dh)\n"
         "    energies = projected @ enc.transpose(1, 2)"))
variant("ch08", "z08b", "ch08_reduced_rank", "reduced_rank_attention zeroes the keys of padded positions, (enc @ V.T) * mask[..., None] (their energies are masked anyway)",
        ("keys = enc @ V.T", "keys = (enc @ V.T) * mask[..., None]"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "o09a", "ch09_encode", "encode joins the two final states along dim=0, torch.cat([h_n[1], h_n[0]], dim=0) (the batch, not the features), for d_0 and c_0",
        ("d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1))", "d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=0))"),
        ("c0 = model.W_c(torch.cat([c_n[1], c_n[0]], dim=-1))", "c0 = model.W_c(torch.cat([c_n[1], c_n[0]], dim=0))"))
mistake("ch09", "o09b", "ch09_encode", "encode applies model.dropout to the source embeddings (common NMT practice; the equations have no dropout there)",
        ("x = model.src_embed(src)", "x = model.dropout(model.src_embed(src))"))
mistake("ch09", "o09c", "ch09_decode_step", "decode_step builds u_t = [a_t; tilde d_{t-1}] with o_prev where the new state d is meant",
        ("u = torch.cat([a, d], dim=-1)", "u = torch.cat([a, o_prev], dim=-1)"))
mistake("ch09", "o09d", "ch09_teacher_forcing", "decode_teacher_forcing starts with model.eval() (copied from the setup's greedy_decode): no dropout while training",
        ("    h, state = encode(model, src, src_len)", "    model.eval()\n    h, state = encode(model, src, src_len)"))
mistake("ch09", "o09e", "ch09_beam_search", "beam_search ranks all candidates at once with topk over the flattened (live, V) scores and decodes the index as hyp, tok = idx % V, idx // V (quotient and remainder swapped)",
        ("        candidates = []\n"
         "        for tokens, score, state in live:\n"
         "            log_probs, new_state = step_fn(tokens[-1] if tokens else SOS, state)   # (V,)\n"
         "            for tok, lp in enumerate(log_probs.tolist()):\n"
         "                candidates.append((score + lp, tokens + [tok], new_state))\n"
         "        candidates.sort(key=lambda cand: -cand[0])\n"
         "        live = []\n"
         "        for score, tokens, state in candidates[: beam_size - len(finished)]:\n",
         "        steps = [step_fn(tokens[-1] if tokens else SOS, state) for tokens, _, state in live]\n"
         "        scores = torch.stack([score + lp for (_, score, _), (lp, _) in zip(live, steps)])   # (live, V)\n"
         "        V = scores.shape[1]\n"
         "        top = scores.flatten().topk(beam_size - len(finished))\n"
         "        candidates = []\n"
         "        for value, idx in zip(top.values.tolist(), top.indices.tolist()):\n"
         "            hyp, tok = idx % V, idx // V                   # which hypothesis, which token\n"
         "            candidates.append((value, live[hyp][0] + [tok], steps[hyp][1]))\n"
         "        live = []\n"
         "        for score, tokens, state in candidates:\n"))
variant("ch09", "z09a", "ch09_masked_loss", "masked_loss: per-token losses (reduction='none'), NaN at the padding, torch.nanmean",
        code=("def masked_loss(logits, tgt_out):\n"
              "    per_token = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), reduction=\"none\")   # (B * Ty,)\n"
              "    per_token = per_token.masked_fill(tgt_out.flatten() == PAD, float(\"nan\"))               # padding: NaN\n"
              "    return torch.nanmean(per_token)\n"))
variant("ch09", "z09b", "ch09_teacher_forcing", "decode_teacher_forcing builds the mask from the lengths, arange(Tx) < src_len[:, None], instead of src != PAD",
        ("mask = src != PAD", "mask = torch.arange(src.shape[1], device=src.device) < src_len.to(src.device)[:, None]"))

CASES = M + OK

# The first failing visible test's message as a student reads it (trials 22f-22n's rule). Filled after the runs.
VERDICTS = {
    "ch01-o01a": ('P', "'ManyToOne(x): expected shape (2, 6), got (2, 1, 6); an extra dimension of size 1 (index it with [0] or squeeze it)': the kept time axis of outputs[:, -1:] (strict reading: Pa, the slice is not named and squeeze is a patch, not the fix)"),
    "ch01-o01b": ('P', "'self.rnn is built with bidirectional=True, but the docstring asks for bidirectional=False (pass bidirectional=False to RNN, or leave it out ...)'"),
    "ch01-o01c": ('P', "at the student's cat line: 'torch.cat joins along dim 0 (no dim given: the first axis, the batch) ...; they differ only on axis -2: dim=-2 would join them there'"),
    "ch01-o01d": ('-', "no visible test fails (15/15): clip_grad_norm_(..., 1.0) changes nothing while the gradient's norm stays below 1, as in every test; in the scratch check (inputs scaled by 30) the second loss differs"),
    "ch01-o01e": ('Pa', "'losses of fit ...: 5 of 5 entries differ ... Likely cause: the FIRST loss, before any update, already differs: the first batch is not the expected one (draw it with torch.randint(0, len(x), (batch_size,), generator=g) ...; one generator made once, seeded with the seed argument) or the loss is computed another way': 'the first batch is not the expected one' is right (the whole set is passed), but every detail offered is about drawing the indices, which the student does right (strict reading: M, a list of causes none of which is the student's; lenient: P)"),
    "ch02-o02a": ('P', "'rnn_cell's argument h_prev was changed by your function ...; it writes into its input (an in-place operation such as x[...] = ..., +=, masked_fill_ or a view of x): compute a new tensor': the out=h_prev (not named, but the only write)"),
    "ch02-o02b": ('M', "in rnn_cell, called from rnn_layer: 'h has shape (3, 4) here, but (2, 4) in the reference ...; it goes wrong at your line h = x.new_zeros(B, W_hh.shape[0]) if h0 is None else h0 -- fix it there ..., not at this line': that line is right; B is wrong because x = x.T reversed all three axes two lines above, and x.T is not named (lenient reading: Pa, x_t (3, 5) and the h0 line lead back to B = x.shape[0])"),
    "ch02-o02c": ('P', "at the student's line: 'W_hh.T (3, 3) @ grad * (1 - ...) (2, 3): a matrix product sums the LAST axis of the left operand ... (grad * (1 - states[:, t] ** 2)) @ W_hh.T would give (2, 3) ...: which one is your equation (the order of the operands, a transpose ...)?': the operand order is the cause; the first shape-fitting form offered keeps the .T (wrong values), the right one, (...) @ W_hh, is not offered (strict reading: Pa)"),
    "ch02-o02d": ('P', "'a parameter whose .grad is None must keep .grad None'"),
    "ch02-o02e": ('Pa', "'a.grad after clipping to 3.5: got 3, expected 0.807692 ... your values are what you get if you leave the gradients as they were: nothing was clipped (the test that decides to clip the wrong way round ...; or g = g * scale ...; or parameters ... read twice)': 'nothing was clipped' is right (clamp(min=1.0) keeps the scale at 1 for long gradients), the three causes offered are not the student's (strict reading: M; lenient: P, the scale line is the only one left)"),
    "ch03-o03a": ('P', "'c ...: your values are what you get with an extra sigmoid around `hx @ W['g'].T + b['g']` (in lstm_cell, the line that computes `g`)'"),
    "ch03-o03b": ('P', "'`o` is the first variable whose value differs ...: look at your line o = torch.sigmoid(... + c) (compared with the reference's line that makes `o`: yours reads `c`, which the reference's does not)'"),
    "ch03-o03c": ('P', "'b['i']: expected shape (2,), got (4,); dimension 0 is 2 times too large (4 instead of 2; blocks or directions concatenated?) -- Likely cause: ... one edit (in split_gates): a step left out': 'concatenated' is the student's cat of the two biases; the 'step left out' tail is loose (strict reading: Pa)"),
    "ch03-o03d": ('P', "'h has shape (4, 2) here, but (2, 4) in the reference ...; it goes wrong at your line h = x.new_zeros(hidden_size, B) ... -- fix it there', with 'two arguments of a call in each other's place' first"),
    "ch03-o03e": ('P', "'your values are what you get with `f * (c_prev + i * g)` where `f * c_prev + i * g` is needed (in lstm_cell, the line that computes `c`)'"),
    "ch04-o04a": ('P', "at the student's h_tilde line: 'r has shape (2, 4) and x has shape (2, 3): broadcasting lines shapes up from the RIGHT ...': the reset gate multiplies x where the equation has r * h (strict reading: Pa, no fix said)"),
    "ch04-o04b": ('P', "'your values are what you get with `z * h_tilde` where `z * h` is needed (the returned value); or with `h_tilde` in place of the whole value (these give the same values here)': the second is the student's (strict reading: Pa, a wrong cause named first, the right one second)"),
    "ch04-o04c": ('Pa', "at the student's line: 'h_n has shape (2, 4) and bias_hh has shape (12,): broadcasting ...': the right term, but that b_hn is already in gh (so it must not be added again at all) is not said; slicing bias_hh[2H:] would leave it counted twice (lenient reading: P)"),
    "ch04-o04d": ('P', "'your values are what you get if you apply the reset gate to h before the product (that is the textbook cell, part 1)'"),
    "ch04-o04e": ('P', "'`per_direction` is the first variable whose value differs ... (0 where the reference's is 1800) ...: look at your line \"per_direction = 0\"': the running sum initialised outside the loop"),
    "ch05-o05a": ('P', "'reverse_padded, 2-D: 6 of 15 entries differ ... Likely cause: every wrong entry is in the padding (it must stay where it is, unchanged)': pad_sequence refills the padding with zeros"),
    "ch05-o05b": ('P', "at the student's torch.where line: 'the condition `real` is a float32 tensor; torch.where needs a bool one'"),
    "ch05-o05c": ('P', "'your values are what you get with `h_b` and `c_f` in each other's place ...; or with `torch.stack([h_f, c_f])` where `torch.stack([h_f, h_b])` is needed (the returned value)'"),
    "ch05-o05d": ('Pa', "'`inp` is right where it is first made, and its second value, from your line inp = h if l == 0 else F.dropout(h, self.dropout.p), is not the reference's ...: it goes wrong there': the right line; that F.dropout drops in eval mode too (training=True by default) is not said (lenient reading: P)"),
    "ch05-o05e": ('P', "\"'tuple' object has no attribute 'shape' -- masked_mean received outputs (tuple) ...: check what forward passes to it\": the pair pad_packed_sequence returns, passed as it is"),
    "ch06-o06a": ('Pa', "PyTorch's own 'Could not infer dtype of generator' at the student's line, nothing added (lenient reading: P, 'generator' names the missing brackets)"),
    "ch06-o06b": ('P', "'use self.rnn = nn.GRU(emb_size, hidden_size, batch_first=True)'"),
    "ch06-o06c": ('P', "'your values are what you get with `self.cell(self.embedding(y_prev))` where `self.cell(self.embedding(y_prev), d_prev)` is needed (in Decoder.step, the line that computes `d`)'"),
    "ch06-o06d": ('P', "at the student's line: 'F.cross_entropy takes scores (N, V) with targets (N,), or (B, V, T) with the class axis second: flatten (B, T, V) scores to (B*T, V) and the targets to (B*T,)'"),
    "ch06-o06e": ('Pa', "Python's own \"'type' object does not support the context manager protocol\" at `with torch.no_grad:`, nothing added (lenient reading: P, the line is one token from the fix)"),
    "ch07-o07a": ('P', "'LSTMCell.forward's return value: must be a Python tuple, got a list of 2 items'"),
    "ch07-o07b": ('P', "'your values are what you get with an extra tanh around `self.fc(...)` (in EncoderRNN.forward, the line that computes `hidden`)'"),
    "ch07-o07c": ('P', "at the student's cat line: 'torch.cat joins along dim=1 ...; they differ only on axis -1: dim=-1 would join them there'"),
    "ch07-o07d": ('P', "'weighted_encoder has shape (2, 1) here, but (2, 6) ...; it goes wrong at your line weighted_encoder = torch.bmm(...)[..., 0] -- fix it there'"),
    "ch07-o07e": ('Pa', "'weights[:, :, 0] (row t from step t): 1 of 6 entries differ; first at index (1, 2): got 0, expected 0.2 ... the wrong entries are only at index 1 of dimension 0 and index 2 of dimension 1': the right tensor and where (a finished sentence's later row), not why (the student's zeroing of finished sentences' weights; lenient reading: P, 'got 0' at a row after the sentence ended points at it)"),
    "ch08-o08a": ('P', "'weights: expected shape (2, 3, 4), got (2, 3, 5) ... Likely cause: ... one edit (in attend, the returned value): two items in the wrong order; ...'"),
    "ch08-o08b": ('M', "'weights: contains NaN ...; the first variable that holds NaN is `weights` in attend, made at your line weights = torch.softmax(energies, dim=-1) (what it was given holds none); NaN comes from 0/0 ..., from the log ..., from a softmax over entries that are all -inf (a mask or a softmax on the wrong axis?) ...': it blames attend's softmax line, which is right; the cause is the inverted mask that dot_attention passes (~mask), not named (lenient reading: Pa, 'a mask' is among the NaN sources)"),
    "ch08-o08c": ('M', "'in attend, given the same inputs as the reference's ..., `weights` is the first variable whose value differs ... (the variables made before it agree: energies): look at your line weights = torch.softmax(energies, dim=-1)': attend's line is right; the cause is scaled_dot_attention passing attend energies already softmaxed (lenient reading: Pa, a second softmax is what the named line does)"),
    "ch08-o08d": ('P', "at the student's reshape line: 'shape [2, 3, 6] is invalid for input of size 30 -- the sizes asked of view/reshape do not multiply out ... (the wrong tensor, or a size of another tensor used, e.g. T for Tx?)': Dd used for Dh (strict reading: Pa)"),
    "ch08-o08e": ('P', "'`once` is the first variable whose value differs ...: look at your line once = B * keys + queries + dots (... yours multiplies `B` by `keys`, which the reference's does not)': the parentheses (the comparison's wording is loose: the reference multiplies B by the whole sum; strict reading: Pa)"),
    "ch09-o09a": ('P', "at the student's line: 'model.W_h is an nn.Linear built for 8 input features, but the tensor you give it has 4 on its last axis (the parts joined: h_n[1] 4 + h_n[0] 4 = 8): give it the tensor it was built for': the cat that did not join the features (strict reading: Pa, dim not named)"),
    "ch09-o09b": ('-', "no visible test fails (18/18): in the scratch check (dropout 0.3, training mode) encode's states differ; no test, visible or hidden, runs encode with dropout in training mode"),
    "ch09-o09c": ('P', "'your values are what you get with `torch.cat([a, o_prev], dim=-1)` where `torch.cat([a, d], dim=-1)` is needed (in decode_step, the line that computes `u`)'"),
    "ch09-o09d": ('-', "no visible test fails (18/18): in the scratch check (dropout 0.3, training mode) the logits differ, and the model is left in eval mode; no test runs decode_teacher_forcing with dropout in training mode, and the BLEU test's dropout (if any) does not matter at 120 steps"),
    "ch09-o09e": ('P', "at the student's line: 'list index out of range -- steps has 1 items and hyp is 5: hyp counts something else than steps holds (what gives its values, and over which axis?)': idx % V read as the hypothesis (strict reading: Pa)"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.trial_main(sys.modules[__name__], "/tmp/student_trial_22o", argv)


if __name__ == "__main__":
    main()
