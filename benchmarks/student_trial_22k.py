"""Student trial 22k: the acceptance trial of issue 22, 45 new mistakes and 18 correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed in 9ff3276, before solutions/
and the catalogues were read: benchmarks/results/student_trial_22k_plan.md); every one of them turned out to repeat
an old mutant, an earlier trial's mistake or its class, and was replaced by a new one written the same way (the
plan's second table); so were the variants that the reference, tests/alternatives or an old trial already had. A
mistake is one or more edits of one cell's reference code, ``(old, new)`` pairs whose ``old`` occurs once; a
variant rewrites the cell (or edits it) and must keep full marks. Only the cases and the verdicts live here:
building, grading (the class grader, one run per assignment), the Jupyter view and the report are
benchmarks/student_trial.py's and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22k unless --root says otherwise):

    nice -n 5 .venv/bin/python benchmarks/student_trial_22k.py --student-view [ch01 ...] [--students ch01-h01a,...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22k.py --grade [ch01 ...]
    .venv/bin/python benchmarks/student_trial_22k.py --table        # benchmarks/results/student_trial_22k.md's tables
    .venv/bin/python benchmarks/student_trial_22k.py --save benchmarks/results/student_trial_22k.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "h01a", "ch01_one_to_many", "OneToMany: `inputs[:, 0] == x` (== typed for =: a comparison whose result is thrown away; x is never written, every input is zero)",
        ("inputs[:, 0] = x ", "inputs[:, 0] == x "))
mistake("ch01", "h01b", "ch01_train_step", "train_step converts the loss to a Python float as soon as it is computed (.item() on the cross_entropy line, 'returns the loss as a Python float'), then calls loss.backward() on the float",
        ("    loss = F.cross_entropy(model(x), y)   # logits (B, C), targets (B,)\n"
         "    loss.backward()\n"
         "    optimizer.step()\n"
         "    return loss.item()\n",
         "    loss = F.cross_entropy(model(x), y).item()   # the loss, as a Python float\n"
         "    loss.backward()\n"
         "    optimizer.step()\n"
         "    return loss\n"))
mistake("ch01", "h01c", "ch01_many_to_many_async", "ManyToManyAsync: the decoder reads tgt[:, :-1] ('teacher forcing' read as the targets shifted: the last target input dropped), Ty - 1 outputs",
        ("outputs, _ = self.decoder(tgt, h_n)", "outputs, _ = self.decoder(tgt[:, :-1], h_n)"))
mistake("ch01", "h01d", "ch01_fit", "fit draws the inputs' and the labels' indices with two separate randint calls (x[randint(...)], y[randint(...)]: the labels no longer belong to the inputs)",
        ("        idx = torch.randint(0, len(x), (batch_size,), generator=g)   # (batch_size,)\n"
         "        losses.append(train_step(model, optimizer, x[idx], y[idx]))\n",
         "        x_batch = x[torch.randint(0, len(x), (batch_size,), generator=g)]\n"
         "        y_batch = y[torch.randint(0, len(x), (batch_size,), generator=g)]\n"
         "        losses.append(train_step(model, optimizer, x_batch, y_batch))\n"))
mistake("ch01", "h01e", "ch01_train_step", "train_step gives cross_entropy float targets, y.float() (the MSE habit of float targets)",
        ("F.cross_entropy(model(x), y)", "F.cross_entropy(model(x), y.float())"))
variant("ch01", "x01a", "ch01_many_to_one", "ManyToOne: the head applied to h_n (1, B, H), then the layer axis indexed away, head(h_n)[0]",
        ("return self.head(outputs[:, -1])", "return self.head(h_n)[0]"))
variant("ch01", "x01b", "ch01_train_step", "train_step: cross_entropy of log_softmax(logits) (a log-softmax of log-probabilities changes nothing)",
        ("F.cross_entropy(model(x), y)", "F.cross_entropy(F.log_softmax(model(x), dim=-1), y)"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "h02a", "ch02_rnn_layer", "rnn_layer: B, T, _ = x.size (the method, not called: NumPy's .size attribute habit)",
        ("    B, T, _ = x.shape\n", "    B, T, _ = x.size\n"))
mistake("ch02", "h02b", "ch02_rnn_layer", "rnn_layer calls rnn_cell(x[:, t], h, W_hx, W_hh) (the bias argument b_h forgotten in the call)",
        ("h = rnn_cell(x[:, t], h, W_hx, W_hh, b_h)", "h = rnn_cell(x[:, t], h, W_hx, W_hh)"))
mistake("ch02", "h02c", "ch02_bptt_gradient_norms", "bptt starts from the gradient of the MEAN of the last state, ones / (B * H) (the loss read as a mean, the usual reduction)",
        ("    grad = torch.ones_like(states[:, -1])                  # (B, H): dL/dh_T\n",
         "    grad = torch.ones_like(states[:, -1]) / states[:, -1].numel()   # (B, H): dL/dh_T\n"))
mistake("ch02", "h02d", "ch02_clip_grad_norm", "clip_grad_norm: torch.sum([...]) of a Python list of per-parameter sums (torch.sum takes one tensor)",
        ("    total_norm = torch.sqrt(sum((g.detach() ** 2).sum() for g in grads))\n",
         "    total_norm = torch.sqrt(torch.sum([(g.detach() ** 2).sum() for g in grads]))\n"))
mistake("ch02", "h02e", "ch02_clip_grad_norm", "clip_grad_norm: sum(g ** 2 for g in grads).sum() (the squared gradients of different shapes added element-wise first, then summed)",
        ("    total_norm = torch.sqrt(sum((g.detach() ** 2).sum() for g in grads))\n",
         "    total_norm = torch.sqrt(sum(g.detach() ** 2 for g in grads).sum())\n"))
variant("ch02", "x02a", "ch02_bptt_gradient_norms", "bptt over the states unbound and reversed with a tuple slice, `grad @= W_hh`, the norms as sqrt of squares",
        code=("def bptt_gradient_norms(states, W_hh):\n"
              "    grad = torch.ones_like(states[:, -1])                 # (B, H): dL/dh_T\n"
              "    norms = [grad.square().sum().sqrt()]\n"
              "    for h in states.unbind(1)[::-1]:                      # h_T, ..., h_1 (a tuple slice)\n"
              "        grad = grad * (1 - h * h)\n"
              "        grad @= W_hh                                      # (B, H): one step further back\n"
              "        norms.append(grad.square().sum().sqrt())\n"
              "    return torch.stack(norms)\n"))
variant("ch02", "x02b", "ch02_clip_grad_norm", "clip_grad_norm: the total norm of torch.nn.utils.parameters_to_vector(grads), each gradient scaled with g *= scale",
        code=("def clip_grad_norm(parameters, max_norm):\n"
              "    grads = [p.grad for p in parameters if p.grad is not None]\n"
              "    if not grads:\n"
              "        return torch.tensor(0.0)\n"
              "    total_norm = torch.nn.utils.parameters_to_vector(grads).detach().norm()\n"
              "    if total_norm > max_norm:\n"
              "        scale = max_norm / (total_norm + 1e-6)\n"
              "        for g in grads:\n"
              "            g *= scale                                    # in place: p.grad itself\n"
              "    return total_norm\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "h03a", "ch03_lstm_cell", "lstm_cell: torch.cat(h_prev, x, dim=1) (the two tensors passed without the list)",
        ("hx = torch.cat([h_prev, x], dim=1)", "hx = torch.cat(h_prev, x, dim=1)"))
mistake("ch03", "h03b", "ch03_lstm_cell", "lstm_cell: `h = o * torch.tanh(c),` (a trailing comma: h is a one-element tuple)",
        ("h = o * torch.tanh(c)                          #", "h = o * torch.tanh(c),                         #"))
mistake("ch03", "h03c", "ch03_lstm_cell_nobias", "lstm_cell_nobias with a dict comprehension over GATES that indexes Wh[\"k\"] (the letter k quoted: a string, not the loop variable)",
        ('    i = torch.sigmoid(x @ Wx["i"].T + h_prev @ Wh["i"].T)   # (B, H) input gate\n'
         '    f = torch.sigmoid(x @ Wx["f"].T + h_prev @ Wh["f"].T)   # (B, H) forget gate\n'
         '    g = torch.tanh(x @ Wx["g"].T + h_prev @ Wh["g"].T)      # (B, H) candidate cell\n'
         '    o = torch.sigmoid(x @ Wx["o"].T + h_prev @ Wh["o"].T)   # (B, H) output gate\n',
         '    pre = {k: x @ Wx[k].T + h_prev @ Wh["k"].T for k in GATES}   # (B, H) each: the four pre-activations\n'
         '    i, f, o = torch.sigmoid(pre["i"]), torch.sigmoid(pre["f"]), torch.sigmoid(pre["o"])\n'
         '    g = torch.tanh(pre["g"])\n'))
mistake("ch03", "h03d", "ch03_split_gates", "split_gates: dict(zip(chunks, GATES)) (zip's two arguments the other way round: the blocks become the keys, the letters the values)",
        ("Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))", "Wx = dict(zip(cell.weight_ih.chunk(4, dim=0), GATES))"),
        ("Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))", "Wh = dict(zip(cell.weight_hh.chunk(4, dim=0), GATES))"),
        ("b = dict(zip(GATES, (cell.bias_ih + cell.bias_hh).chunk(4)))", "b = dict(zip((cell.bias_ih + cell.bias_hh).chunk(4), GATES))"))
mistake("ch03", "h03e", "ch03_lstm_layer", "lstm_layer keeps the (1, B, H) states and indexes [0] in the call, cell(x[:, t], (h[0], c[0])); from the second step on, h is the cell's (B, H) and h[0] one example's row",
        ("    if state is None:\n"
         "        h = x.new_zeros(B, hidden_size)            # (B, H)\n"
         "        c = x.new_zeros(B, hidden_size)            # (B, H)\n"
         "    else:\n"
         "        h, c = state[0][0], state[1][0]            # (1, B, H) -> (B, H)\n"
         "    outputs = []\n"
         "    for t in range(T):\n"
         "        h, c = cell(x[:, t], (h, c))               #",
         "    if state is None:\n"
         "        state = (x.new_zeros(1, B, hidden_size), x.new_zeros(1, B, hidden_size))   # (1, B, H) as nn.LSTM\n"
         "    h, c = state\n"
         "    outputs = []\n"
         "    for t in range(T):\n"
         "        h, c = cell(x[:, t], (h[0], c[0]))         # [0]: (1, B, H) -> (B, H)"))
variant("ch03", "x03a", "ch03_lstm_cell", "lstm_cell with torch.special.expit for the gates, Tensor.matmul/.add per gate in a dict, torch.addcmul for the cell",
        code=("def lstm_cell(x, h_prev, c_prev, W, b):\n"
              "    hx = torch.cat((h_prev, x), dim=-1)                       # (B, H + D)\n"
              "    pre = {k: hx.matmul(W[k].t()).add(b[k]) for k in ('i', 'f', 'g', 'o')}\n"
              "    i, f, o = (torch.special.expit(pre[k]) for k in ('i', 'f', 'o'))\n"
              "    g = pre['g'].tanh()\n"
              "    c = torch.addcmul(f * c_prev, i, g)                       # f c_prev + i g\n"
              "    return o * c.tanh(), c\n"))
variant("ch03", "x03b", "ch03_lstm_layer", "lstm_layer: zero states made (1, B, H) like nn.LSTM's, every state squeezed with squeeze(0), the steps from x.transpose(0, 1), final states h[None]",
        code=("def lstm_layer(cell, x, hidden_size, state=None):\n"
              "    B = x.shape[0]\n"
              "    if state is None:\n"
              "        state = (x.new_zeros(1, B, hidden_size), x.new_zeros(1, B, hidden_size))\n"
              "    h, c = state[0].squeeze(0), state[1].squeeze(0)          # (B, H) each, also for B = 1\n"
              "    hs = []\n"
              "    for x_t in x.transpose(0, 1):                            # (B, D) per step\n"
              "        h, c = cell(x_t, (h, c))\n"
              "        hs.append(h)\n"
              "    return torch.stack(hs, dim=1), (h[None], c[None])\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "h04a", "ch04_gru_cell_pytorch", "gru_cell_pytorch with F.linear (exercise 4's setup does not import F: the other notebooks do)",
        ("gi = x @ weight_ih.T + bias_ih", "gi = F.linear(x, weight_ih, bias_ih)"),
        ("gh = h @ weight_hh.T + bias_hh", "gh = F.linear(h, weight_hh, bias_hh)"))
mistake("ch04", "h04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch: H = weight_hh.shape[0] (that is 3H: the stacked rows), then split(H)",
        ("    i_r, i_z, i_n = gi.chunk(3, dim=1)      # each (B, H)\n"
         "    h_r, h_z, h_n = gh.chunk(3, dim=1)      # each (B, H)\n",
         "    H = weight_hh.shape[0]                  # the hidden size\n"
         "    i_r, i_z, i_n = gi.split(H, dim=1)      # each (B, H)\n"
         "    h_r, h_z, h_n = gh.split(H, dim=1)\n"))
mistake("ch04", "h04c", "ch04_gru_cell_textbook", "gru_cell_textbook returns 1 - z * h_tilde + z * h (the parentheses around 1 - z lost)",
        ("return (1 - z) * h_tilde + z * h", "return 1 - z * h_tilde + z * h"))
mistake("ch04", "h04d", "ch04_gru_cell_textbook", "gru_cell_textbook: b = torch.cat([bias_ih, bias_hh]) ('combine the two biases' done by joining them, not adding), then split(H): six pieces",
        ("b_r, b_z, b_n = (bias_ih + bias_hh).split(H)", "b_r, b_z, b_n = torch.cat([bias_ih, bias_hh]).split(H)"))
mistake("ch04", "h04e", "ch04_count_parameters", "count_parameters: total = directions * per_direction in the loop (= typed for +=: only the last layer is counted)",
        ("        total += directions * per_direction\n", "        total = directions * per_direction\n"))
variant("ch04", "x04a", "ch04_gru_cell_textbook", "gru_cell_textbook: the interpolation as torch.addcmul(z * h, 1 - z, h_tilde)",
        ("return (1 - z) * h_tilde + z * h", "return torch.addcmul(z * h, 1 - z, h_tilde)"))
variant("ch04", "x04b", "ch04_count_parameters", "count_parameters with a while loop, a running input width and directions = 1 + int(bidirectional)",
        code=("def count_parameters(kind, input_size, hidden_size, num_layers=1, bias=True, bidirectional=False):\n"
              "    gates = {'rnn': 1, 'gru': 3, 'lstm': 4}[kind]\n"
              "    directions = 1 + int(bidirectional)\n"
              "    total, layer, width = 0, 0, input_size\n"
              "    while layer < num_layers:\n"
              "        weights = gates * hidden_size * (width + hidden_size)\n"
              "        biases = 2 * gates * hidden_size if bias else 0\n"
              "        total += directions * (weights + biases)\n"
              "        width = directions * hidden_size                      # what the next layer reads\n"
              "        layer += 1\n"
              "    return total\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "h05a", "ch05_reverse_padded", "reverse_padded: t = torch.arange(T, dtype=x.dtype, device=x.device) (the 'match x' habit: a float index for gather)",
        ("t = torch.arange(T, device=x.device)", "t = torch.arange(T, dtype=x.dtype, device=x.device)"))
mistake("ch05", "h05b", "ch05_residual_stack", "ResidualLSTMStack builds every nn.LSTM with the stack's num_layers as its third argument (nn.LSTM(d, H, num_layers, ...): each one a num_layers-deep LSTM)",
        ("nn.LSTM(d, hidden_size, batch_first=True) for d in sizes", "nn.LSTM(d, hidden_size, num_layers, batch_first=True) for d in sizes"))
mistake("ch05", "h05c", "ch05_sentence_classifier", "SentenceClassifier passes the padding mask tokens != 0 to masked_mean instead of the lengths",
        ("return self.head(masked_mean(out, lengths))", "return self.head(masked_mean(out, tokens != 0))"))
mistake("ch05", "h05d", "ch05_masked_mean", "masked_mean: torch.einsum('bt,btf->bf', mask, outputs) on the bool mask (einsum does not mix bool and float)",
        ("    total = (outputs * mask.unsqueeze(-1)).sum(dim=1)                     # (B, F)\n",
         "    total = torch.einsum(\"bt,btf->bf\", mask, outputs)                      # (B, F)\n"))
mistake("ch05", "h05e", "ch05_lstm_direction", "lstm_direction writes into preallocated zero outputs with outputs[real[:, 0], t] = h_new (the rows picked on the left, the value not: fails as soon as a step has padding)",
        ("    outputs = []\n"
         "    for t in range(T):\n"
         "        h_new, c_new = cell(x[:, t], (h, c))                    # (B, H) each\n"
         "        real = (t < lengths).to(x.device).unsqueeze(1)          # (B, 1): is step t inside sequence b?\n"
         "        h = torch.where(real, h_new, h)                         # padded steps keep the old state\n"
         "        c = torch.where(real, c_new, c)\n"
         "        outputs.append(torch.where(real, h_new, torch.zeros_like(h_new)))\n"
         "    return torch.stack(outputs, dim=1), (h, c)",
         "    outputs = x.new_zeros(B, T, cell.hidden_size)               # zeros at the padded steps\n"
         "    for t in range(T):\n"
         "        h_new, c_new = cell(x[:, t], (h, c))                    # (B, H) each\n"
         "        real = (t < lengths).to(x.device).unsqueeze(1)          # (B, 1): is step t inside sequence b?\n"
         "        h = torch.where(real, h_new, h)                         # padded steps keep the old state\n"
         "        c = torch.where(real, c_new, c)\n"
         "        outputs[real[:, 0], t] = h_new                          # the real rows of step t\n"
         "    return outputs, (h, c)"))
variant("ch05", "x05a", "ch05_bilstm_from_cells", "BiLSTMFromCells: self.bwd = copy.deepcopy(self.fwd) (a second cell of the same kind, with its own parameters)",
        ("        self.fwd = nn.LSTMCell(input_size, hidden_size)\n        self.bwd = nn.LSTMCell(input_size, hidden_size)",
         "        import copy\n"
         "        self.fwd = nn.LSTMCell(input_size, hidden_size)\n"
         "        self.bwd = copy.deepcopy(self.fwd)                      # the same kind of cell, its own weights"))
variant("ch05", "x05b", "ch05_masked_mean", "masked_mean: the mean over all T steps of the zero-filled outputs (torch.where), rescaled by T / length",
        ("    total = (outputs * mask.unsqueeze(-1)).sum(dim=1)                     # (B, F)\n"
         "    return total / lengths.unsqueeze(1).to(outputs.dtype)                 # (B, F)",
         "    mean_all = torch.where(mask.unsqueeze(-1), outputs, 0).mean(dim=1)    # (B, F): over all T steps\n"
         "    return mean_all * T / lengths.unsqueeze(1).to(outputs.dtype)          # rescaled to the real steps"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "h06a", "ch06_build_vocab", "build_vocab: counts.most_common(min_freq) read as 'the tokens seen at least min_freq times' (it is the min_freq most common ones)",
        ("    kept = [token for token, count in counts.items() if count >= min_freq]\n",
         "    kept = [token for token, count in counts.most_common(min_freq)]   # the tokens seen at least min_freq times\n"))
mistake("ch06", "h06b", "ch06_build_vocab", "build_vocab: Counter(token for token in seq for seq in sequences) (the two for clauses of the generator in the wrong order)",
        ("Counter(token for seq in sequences for token in seq)", "Counter(token for token in seq for seq in sequences)"))
mistake("ch06", "h06c", "ch06_numericalize", "numericalize: ids.insert(SOS_INDEX, 0) (list.insert's index and value the other way round: a 0 inserted at position 1)",
        ("        ids = [SOS_INDEX] + ids\n", "        ids.insert(SOS_INDEX, 0)\n"))
mistake("ch06", "h06d", "ch06_pad_batch", "pad_batch makes the batch one column wider than the longest sequence (T + 1: 'room for the <eos>')",
        ("int(lengths.max())), pad_index", "int(lengths.max()) + 1), pad_index"))
mistake("ch06", "h06e", "ch06_decoder", "Decoder: self.cell = nn.GRU(emb_size, hidden_size, batch_first=True) (the layer where the docstring asks for the one-step nn.GRUCell)",
        ("self.cell = nn.GRUCell(emb_size, hidden_size)", "self.cell = nn.GRU(emb_size, hidden_size, batch_first=True)"))
variant("ch06", "x06a", "ch06_teacher_forced_loss", "teacher_forced_loss: the loop over t = 1..Ty reading tgt[:, t - 1] directly (no sliced copies), the loss on flatten(0, 1)",
        code=("def teacher_forced_loss(encoder, decoder, src, src_lengths, tgt, pad_index=PAD_INDEX):\n"
              "    _, d = encoder(src, src_lengths)                    # d_0 = h_Tx\n"
              "    steps = []\n"
              "    for t in range(1, tgt.shape[1]):\n"
              "        step_logits, d = decoder.step(tgt[:, t - 1], d)\n"
              "        steps.append(step_logits)\n"
              "    logits = torch.stack(steps, dim=1)                  # (B, Ty, V)\n"
              "    loss = F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=pad_index)\n"
              "    return loss, logits\n"))
variant("ch06", "x06b", "ch06_encoder", "Encoder: the final state as h_n.permute(1, 0, 2).reshape(B, -1) (one layer, one direction: the same (B, H))",
        ("return outputs, h_n[0]", "return outputs, h_n.permute(1, 0, 2).reshape(src.shape[0], -1)"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "h07a", "ch07_lstm_cell", "LSTMCell.forward: torch.sigmoid(0) typed for torch.sigmoid(o) (the digit 0 for the letter o)",
        ("torch.sigmoid(i), torch.sigmoid(o)", "torch.sigmoid(i), torch.sigmoid(0)"))
mistake("ch07", "h07b", "ch07_encoder", "EncoderRNN: right = reversed(right) for right.reverse() (an iterator, which torch.stack does not take)",
        ("        right.reverse()\n", "        right = reversed(right)                                 # back to source order\n"))
mistake("ch07", "h07c", "ch07_attention", "Attention: scores = torch.dot(energy, self.v) ('the dot product with v': torch.dot takes two 1-D tensors)",
        ("scores = energy @ self.v ", "scores = torch.dot(energy, self.v) "))
mistake("ch07", "h07d", "ch07_decoder", "AttnDecoderRNN: the output layer reads [h; c; embedded] (the cell state c taken for the context, which other texts call c_t)",
        ("scores = self.Out(torch.cat([h, weighted_encoder, embedded], dim=-1))", "scores = self.Out(torch.cat([h, c, embedded], dim=-1))"))
mistake("ch07", "h07e", "ch07_greedy", "greedy_translate: torch.tensor(weights).transpose(0, 1) on the list of (B, Tx) tensors (torch.tensor only converts numbers)",
        ("return out, torch.stack(weights, dim=1)", "return out, torch.tensor(weights).transpose(0, 1)"))
variant("ch07", "x07a", "ch07_decoder", "AttnDecoderRNN: the log-probabilities as torch.log(F.softmax(scores, dim=-1))",
        ("return F.log_softmax(scores, dim=-1), (h, c), weights", "return torch.log(F.softmax(scores, dim=-1)), (h, c), weights"))
variant("ch07", "x07b", "ch07_greedy", "greedy_translate: the weights written into a preallocated (B, max_len, Tx) tensor and sliced to the steps taken; tokens appended per sentence with int()",
        code=("@torch.no_grad()\n"
              "def greedy_translate(model, src, src_lengths, max_len, sos_index=1, eos_index=2):\n"
              "    memory, state = model.encode(src, src_lengths)\n"
              "    B, Tx = src.shape\n"
              "    y = torch.full((B,), sos_index, dtype=torch.long)\n"
              "    done = torch.zeros(B, dtype=torch.bool)\n"
              "    tokens = [[] for _ in range(B)]\n"
              "    weights = torch.zeros(B, max_len, Tx)\n"
              "    steps = 0\n"
              "    for step in range(max_len):\n"
              "        log_probs, state = model.decode_step(y, state, memory)\n"
              "        y = log_probs.argmax(dim=-1)\n"
              "        weights[:, step] = model.last_weights\n"
              "        steps += 1\n"
              "        for b in range(B):\n"
              "            if not done[b] and int(y[b]) != eos_index:\n"
              "                tokens[b].append(int(y[b]))\n"
              "        done |= y == eos_index\n"
              "        if done.all():\n"
              "            break\n"
              "    return tokens, weights[:, :steps]\n"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "h08a", "ch08_attend", "attend: masked_fill(1 - mask[:, None, :], -inf) (1 - mask for the inverted mask, as with 0/1 masks)",
        ('masked_fill(~mask[:, None, :], float("-inf"))', 'masked_fill(1 - mask[:, None, :], float("-inf"))'))
mistake("ch08", "h08b", "ch08_dot", "dot_attention with unit vectors, F.normalize(dec) @ F.normalize(enc)^T (the cosine similarity taken for the dot product)",
        ("energies = dec @ enc.transpose(1, 2)   #", "energies = F.normalize(dec, dim=-1) @ F.normalize(enc, dim=-1).transpose(1, 2)   #"))
mistake("ch08", "h08c", "ch08_scaled_dot", "scaled_dot_attention: D = dec.shape[-1:] (a slice: torch.Size([D]), not the number D)",
        ("    D = dec.shape[-1] ", "    D = dec.shape[-1:] "))
mistake("ch08", "h08d", "ch08_bilinear", "bilinear_attention passes attend the mask already broadcast, mask[:, None, :] (B, 1, Tx) (part 1's masked_fill habit)",
        ("return attend(energies, enc, mask)", "return attend(energies, enc, mask[:, None, :])"))
mistake("ch08", "h08e", "ch08_macs", "reduced_rank_macs adds the contexts' weighted sums (Ty * Tx * Dh per sentence) to both counts ('count the energies only' missed)",
        ("once = B * (keys + queries + dots)",
         "contexts = Ty * Tx * Dh     # the weighted sums a_t of every target step\n"
         "    once = B * (keys + queries + dots + contexts)"),
        ("per_step = B * (Ty * keys + queries + dots)", "per_step = B * (Ty * keys + queries + dots + contexts)"))
variant("ch08", "x08a", "ch08_attend", "attend: the weights as F.normalize(exp(e - max e), p=1) (an L1 normalisation of the exponentials)",
        ("weights = torch.softmax(energies, dim=-1) ",
         "weights = F.normalize((energies - energies.amax(dim=-1, keepdim=True)).exp(), p=1, dim=-1) "))
variant("ch08", "x08b", "ch08_reduced_rank", "reduced_rank_attention: the projections with torch.tensordot over the feature axis, the energies with torch.bmm",
        code=("def reduced_rank_attention(dec, enc, mask, U, V):\n"
              "    queries = torch.tensordot(dec, U, dims=([2], [1]))     # (B, Ty, R)\n"
              "    keys = torch.tensordot(enc, V, dims=([2], [1]))        # (B, Tx, R), once\n"
              "    energies = torch.bmm(queries, keys.transpose(1, 2))   # (B, Ty, Tx)\n"
              "    return attend(energies, enc, mask)\n"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "h09a", "ch09_encode", "encode scales the source embeddings by sqrt(D) (the Transformer's habit; the equations have no scale)",
        ("x = model.src_embed(src) ", "x = model.src_embed(src) * model.src_embed.embedding_dim ** 0.5 "))
mistake("ch09", "h09b", "ch09_decode_step", "decode_step sets alpha[~mask] = 0 after the softmax 'to be safe' (the same values, written in place into the softmax's output)",
        ("    alpha = torch.softmax(e, dim=1)                                            # (B, Tx), over source positions\n",
         "    alpha = torch.softmax(e, dim=1)                                            # (B, Tx), over source positions\n"
         "    alpha[~mask] = 0.0                                                         # padded positions: exactly zero\n"))
mistake("ch09", "h09c", "ch09_masked_loss", "masked_loss takes V = len(TGT_VOCAB) (the notebook's global vocabulary) to flatten the scores, not the scores' own last axis",
        ("    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)\n",
         "    V = len(TGT_VOCAB)                                     # the size of the target vocabulary\n"
         "    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD)\n"))
mistake("ch09", "h09d", "ch09_beam_search", "beam_search returns the finished hypotheses in the order they finished (the final sort forgotten)",
        ("    return sorted(finished, key=lambda hyp: -hyp[1])", "    return finished"))
mistake("ch09", "h09e", "ch09_beam_search", "beam_search: finished.append([... the live ones ...]) (append of a list: one nested element, where += adds its items)",
        ("    finished += [(tokens, score / len(tokens) ** alpha) for tokens, score, _ in live]",
         "    finished.append([(tokens, score / len(tokens) ** alpha) for tokens, score, _ in live])"))
variant("ch09", "x09a", "ch09_teacher_forcing", "decode_teacher_forcing iterates over the columns of tgt_in.T (one (B,) column per step)",
        ("    for t in range(tgt_in.shape[1]):\n"
         "        state, o, _ = decode_step(model, tgt_in[:, t], o, state, h, h_proj, mask)\n",
         "    for y_t in tgt_in.T:                                   # one column (B,) per target step\n"
         "        state, o, _ = decode_step(model, y_t, o, state, h, h_proj, mask)\n"))
variant("ch09", "x09b", "ch09_beam_search", "beam_search ranking the candidates through their indices, sorted(range(n), key=(-score, index)), the finished list sorted in place with reverse=True",
        code=("def beam_search(step_fn, start_state, beam_size=3, max_len=20, alpha=1.0):\n"
              "    live = [([], 0.0, start_state)]\n"
              "    done = []\n"
              "    for _ in range(max_len):\n"
              "        cands = []\n"
              "        for tokens, score, state in live:\n"
              "            log_probs, new_state = step_fn(tokens[-1] if tokens else SOS, state)\n"
              "            for tok, lp in enumerate(log_probs.tolist()):\n"
              "                cands.append((score + lp, tokens + [tok], new_state))\n"
              "        order = sorted(range(len(cands)), key=lambda i: (-cands[i][0], i))\n"
              "        live = []\n"
              "        for i in order[: beam_size - len(done)]:\n"
              "            score, tokens, state = cands[i]\n"
              "            if tokens[-1] == EOS:\n"
              "                done.append((tokens[:-1], score / len(tokens) ** alpha))\n"
              "            else:\n"
              "                live.append((tokens, score, state))\n"
              "        if not live:\n"
              "            break\n"
              "    for tokens, score, _ in live:\n"
              "        done.append((tokens, score / len(tokens) ** alpha))\n"
              "    done.sort(key=lambda hyp: hyp[1], reverse=True)\n"
              "    return done\n"))

CASES = M + OK

# ------------------------------------------------------------------------------------------------------ verdicts
# The rule (strict), reading ONLY the first failing visible test's message as the student sees it in Jupyter:
#   P  points to the cause: a student reading only it knows which line / term to change (and how);
#   Pa partly: it names the right function, tensor or line (or where the values go wrong) but not what is wrong,
#      a bare value mismatch, or PyTorch's own error with no cause;
#   N  not at all: nothing in it leads to the cause;
#   M  misleading: it names a wrong cause, or blames code that is right.
# "-": no visible test fails. Read from student_view.json after the merge of 04d7040 (the go commit, 16:14 UTC).
VERDICTS: dict[str, tuple[str, str]] = {
    "ch01-h01a": ("P", "'your values are what you get without the step `inputs[:, 0] = x` (in OneToMany.forward)': the student's "
                       "line is `inputs[:, 0] == x`, a step that does nothing; the == is the one character to change"),
    "ch01-h01b": ("Pa", "Python's own \"'float' object has no attribute 'backward'\" at `loss.backward()`, nothing added: the "
                        "float is named, not where the loss became one (the .item() on the cross_entropy line); read as "
                        "self-sufficient it would be P"),
    "ch01-h01c": ("P", "(2, 6, 6) for (2, 7, 6): 'one too few (an off-by-one in a range or a slice?)': the only slice in forward "
                       "is tgt[:, :-1]"),
    "ch01-h01d": ("Pa", "'the FIRST loss ... already differs: the first batch is not the expected one (draw it with "
                        "torch.randint(0, len(x), (batch_size,), generator=g) ...)': the batch drawing is located, but the "
                        "inputs' draw IS the expected one; that the labels come from a second draw is not said"),
    "ch01-h01e": ("P", "'targets of F.cross_entropy are class ids (int64), not floats ... (or .long())' at the y.float() line"),
    "ch02-h02a": ("Pa", "Python's own 'cannot unpack non-iterable builtin_function_or_method object' at `B, T, _ = x.size`, "
                        "nothing added (that size is a method, or x.shape, not said); self-sufficient reading: P"),
    "ch02-h02b": ("P", "'rnn_cell() missing 1 required positional argument: b_h' at the call, with 'an argument of a call left "
                       "out ... the message names it'"),
    "ch02-h02c": ("P", "'your values are 0.1667 times the expected ones (a factor missing or extra?)': 1/6 = 1/(B H) at the "
                       "test's sizes, and the division by numel() is the only factor the student added"),
    "ch02-h02d": ("P", "'a number, a list or None in a tensor's place ... a list of tensors needs torch.stack or torch.cat "
                       "first' at the torch.sum([...]) line"),
    "ch02-h02e": ("Pa", "'total norm returned (before clipping): got 17.6918, expected 13': a bare mismatch of the right value; "
                        "the squared gradients of different shapes added element-wise (broadcast) not said"),
    "ch03-h03a": ("Pa", "PyTorch's own 'cat(): argument tensors (position 1) must be tuple of Tensors, not Tensor' at the line, "
                        "nothing added (the missing brackets are left to the student); self-sufficient reading: P"),
    "ch03-h03b": ("P", "'h: expected a torch.Tensor, got a tuple of 1 item': h's own assignment is the one place, and its "
                       "trailing comma is what makes a 1-tuple (as trial 22j's 'a tuple of 2 items' was judged P)"),
    "ch03-h03c": ("Pa", "Python's own KeyError 'k' at the comprehension line, nothing added (the quoted loop variable is left "
                        "to the student); self-sufficient reading: P"),
    "ch03-h03d": ("M", "the test's own message formatting crashes (sorted() of the dict's tensor keys): 'Boolean value of "
                       "Tensor ... ambiguous -- `if t:`, `and`/`or` between tensors, Python's max/min on a tensor ... or a loss "
                       "class called with tensors': none of these is in the student's code; the cause (zip's arguments "
                       "swapped: tensors as keys) is hidden by the crash"),
    "ch03-h03e": ("Pa", "at the cell call: 'one edit: two arguments of a call in each other's place ...; or another variable "
                        "in place of the right one; or two variables in each other's place ...; a state is (B, H) for a cell, "
                        "(1, B, H) for nn.LSTM': the right line, a list of guesses of which the second fits loosely (h[0] "
                        "where h is meant from step 2 on), a wrong one first; that the state changes shape after the first "
                        "step is not said (strict reading: M)"),
    "ch04-h04a": ("Pa", "Python's own \"name 'F' is not defined\" at the F.linear line, nothing added (this notebook does not "
                        "import F: use torch.nn.functional or the @ product, not said); self-sufficient reading: P"),
    "ch04-h04b": ("M", "'gi.split(H, dim=1) cuts axis 0 of gi (2, 12) (size 2) into 1 piece ...; 3 blocks fit along axis 1 "
                       "(size 12): the wrong axis?': the axis is right (dim=1) and the text misstates it; the split size H "
                       "(weight_hh.shape[0] = 3H) is wrong"),
    "ch04-h04c": ("P", "'`1 - z * h_tilde` where `(1 - z) * h_tilde` is needed (in gru_cell_textbook, the returned value)'"),
    "ch04-h04d": ("M", "'torch.cat([bias_ih, bias_hh]).split(H) cuts axis 0 ... (24,) into 6 pieces ...; 3 blocks of axis 0 "
                       "need a size of 8 each: is the size you split by the one you meant?': a wrong fix (split(2H) would "
                       "silently give each gate half of bias_ih and half of another); the biases must be added, not joined"),
    "ch04-h04e": ("P", "'one edit (in count_parameters, the line that computes `total`): = where += is needed' (first of three)"),
    "ch05-h05a": ("M", "Part 1's own visible test passes (its input is an integer batch); Part 3's fails at reverse_padded's "
                       "gather: 'if reverse_padded passed its own test, check what forward passes to it' (a wrong lead: "
                       "forward passes the right x and lengths), then 'gather and scatter take integer indices: .long() "
                       "(indices made by arithmetic on floats ...)', which is right; read by that tail: Pa"),
    "ch05-h05b": ("P", "'each layer: a one-layer nn.LSTM': the num_layers given to every nn.LSTM"),
    "ch05-h05c": ("P", "'masked_mean received outputs (3, 6, 8), lengths (3, 6): if masked_mean passed its own test, check "
                       "what forward passes to it': a (B, T) tensor where the (B,) lengths belong, the call named; the "
                       "tail then offers lengths[:, :, None], a wrong fix inside masked_mean (strict reading: M)"),
    "ch05-h05d": ("Pa", "PyTorch's own '\"bmm\" not implemented for Bool' at the einsum line, nothing added (the bool mask needs "
                        ".to(outputs.dtype) not said)"),
    "ch05-h05e": ("Pa", "PyTorch's own 'shape mismatch: value tensor of shape [2, 5] cannot be broadcast to indexing result of "
                        "shape [1, 5]' at the line, nothing added (h_new[real[:, 0]] not said)"),
    "ch06-h06a": ("Pa", "'build_vocab(min_freq=1) gave [specials, a]': one token kept for min_freq=1 is visible, the expected "
                        "list is not shown, most_common(n) not named"),
    "ch06-h06b": ("Pa", "Python's own \"name 'seq' is not defined\" at the Counter line, nothing added (the order of the "
                        "generator's for clauses not said); self-sufficient reading: P"),
    "ch06-h06c": ("Pa", "'got [5, 0, 4, 6, 2], expected [1, 5, 4, 6, 2]; first difference at [0]': the lists show a 0 at "
                        "position 1 and no <sos>, not list.insert's argument order"),
    "ch06-h06d": ("M", "(3, 4) for (3, 3): 'Likely cause: ... one edit (in pad_batch, the line that computes `lengths`): a "
                       "length counted one too many (len(x) + 1: an <eos> or <sos> counted?)': the lengths line is right; "
                       "the + 1 is in torch.full's size"),
    "ch06-h06e": ("P", "'use self.cell = nn.GRUCell(...) and self.out = nn.Linear(...)'"),
    "ch07-h07a": ("P", "'sigmoid(): argument input must be Tensor, not int -- a number ... in a tensor's place' at the line: "
                       "the 0 in torch.sigmoid(0) is the only number there"),
    "ch07-h07b": ("Pa", "PyTorch's own 'stack(): argument tensors must be tuple of Tensors, not list_reverseiterator' at the "
                        "outputs line, nothing added (reversed() gives an iterator, list.reverse() reverses in place: not "
                        "said); self-sufficient reading: P"),
    "ch07-h07c": ("Pa", "PyTorch's own '1D tensors expected, but got 3D and 1D tensors' at the torch.dot line, nothing added"),
    "ch07-h07d": ("M", "'self.Out is an nn.Linear built for 13 input features, but the tensor you give it has 11: build it with "
                       "in_features=11 (the size of what it is fed) or give it the tensor it was built for': the first fix "
                       "is wrong (the constructor is given and right); c is in the context's place"),
    "ch07-h07e": ("Pa", "'only one element tensors can be converted ... int() or float() of a tensor of several values: "
                        "convert one entry (t[b].item()) or keep a tensor': the conversion is the mechanism, torch.tensor of a "
                        "list of tensors (torch.stack) is not named and the fixes offered do not fit"),
    "ch08-h08a": ("P", "PyTorch's own text names the fix: 'If you are trying to invert a mask, use the ~ or logical_not() "
                       "operator instead'"),
    "ch08-h08b": ("Pa", "'weights: 18 of 24 entries differ': a bare mismatch (the normalised states not named)"),
    "ch08-h08c": ("Pa", "Python's own 'must be real number, not torch.Size' at the energies line, nothing added; D is made one "
                        "line above (dec.shape[-1:]), not named"),
    "ch08-h08d": ("P", "at `return attend(energies, enc, mask[:, None, :])`: 'too many values to unpack (expected 2) -- "
                       "unpacking x.shape means x has another number of axes than you expect (the wrong tensor given ...)': "
                       "the only argument given a new axis is the mask"),
    "ch08-h08e": ("Pa", "'once (B=2, ..., R=7): got 1478, expected 1148': a bare mismatch (the contexts counted not said)"),
    "ch09-h09a": ("Pa", "'h: 56 of 80 entries differ': a bare mismatch of the encoder states (the embedding scale not named)"),
    "ch09-h09b": ("P", "'an in-place operation (x[...] = ..., +=, masked_fill_) changed a tensor autograd still needs' and "
                       "PyTorch's 'output 0 of Softmax': the alpha[~mask] = 0.0 after the softmax"),
    "ch09-h09c": ("P", "at the reshape line: \"shape '[-1, 67]' is invalid for input of size 48 ... (the wrong tensor, or a "
                       "size of another tensor used ...)\": V = 67 is the only size there, another tensor's (the vocabulary's)"),
    "ch09-h09d": ("M", "'the same items in reverse order (sorted the wrong way round? best first is asked) -- ... one edit (in "
                       "beam_search, the returned value): the sign flipped': there is no sort to reverse and no sign; the "
                       "list is in finishing order, reversed here by chance ('best first is asked' alone would do)"),
    "ch09-h09e": ("Pa", "Python's own 'list index out of range' in the final sort's key, nothing added: the line is right, the "
                        "nested element appended before it not said"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.run_trial(sys.modules[__name__], "/tmp/student_trial_22k", argv)


if __name__ == "__main__":
    main()
