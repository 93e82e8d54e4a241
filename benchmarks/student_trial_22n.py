"""Student trial 22n: an acceptance trial of issue 22, 45 new mistakes and 18 correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed in 59bd435, before solutions/
and the catalogues were read: benchmarks/results/student_trial_22n_plan.md); all but one planned mistake and every
planned variant turned out to repeat an old mutant, an alternative, an earlier trial's case or its class, and were
replaced by new ones written the same way (the plan's second table, commit 7a2cd78). A mistake is one or more edits
of one cell's reference code, ``(old, new)`` pairs whose ``old`` occurs once; a variant rewrites the cell (or edits
it) and must keep full marks. Only the cases and the verdicts live here: building, grading (the class grader, one run
per assignment), the Jupyter view and the report are benchmarks/student_trial.py's and student_trial_22d.py's
(``run_trial``).

Run from the repository root (results in /tmp/student_trial_22n unless --root says otherwise):

    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22n.py --student-view [ch01 ...] [--students ch01-n01a,...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22n.py --grade [ch01 ...]
    /work/main/.venv/bin/python benchmarks/student_trial_22n.py --table     # benchmarks/results/student_trial_22n.md's tables
    /work/main/.venv/bin/python benchmarks/student_trial_22n.py --save benchmarks/results/student_trial_22n.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "n01a", "ch01_many_to_many_sync", "ManyToManySync puts an nn.Dropout(0.2) between the RNN and the head (a tutorial's regulariser; a new module is in training mode)",
        ("        self.head = nn.Linear(hidden_size, num_classes)\n", "        self.head = nn.Linear(hidden_size, num_classes)\n        self.drop = nn.Dropout(0.2)\n"),
        ("return self.head(outputs)", "return self.head(self.drop(outputs))"))
mistake("ch01", "n01b", "ch01_one_to_many", "OneToMany builds its inputs with F.pad(x.unsqueeze(1), (0, steps - 1)) (F.pad's pairs start from the LAST axis: the features are padded, not time)",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])  # (B, steps, D), all zeros\n"
         "        inputs[:, 0] = x                                     # x only at the first step\n",
         "inputs = F.pad(x.unsqueeze(1), (0, steps - 1))       # (B, steps, D): x, then zeros\n"))
mistake("ch01", "n01c", "ch01_many_to_many_async", "ManyToManyAsync names its output layer self.fc (the tutorials' name) instead of the docstring's self.head",
        ("        self.head = nn.Linear(hidden_size, num_classes)\n", "        self.fc = nn.Linear(hidden_size, num_classes)\n"),
        ("return self.head(outputs)", "return self.fc(outputs)"))
mistake("ch01", "n01d", "ch01_train_step", "train_step uses the binary loss on the positive class's logit, F.binary_cross_entropy_with_logits(logits[:, 1], y.float()) (the majority task has two classes)",
        ("    loss = F.cross_entropy(model(x), y)   # logits (B, C), targets (B,)\n",
         "    logits = model(x)\n    loss = F.binary_cross_entropy_with_logits(logits[:, 1], y.float())   # two classes: P(y = 1)\n"))
mistake("ch01", "n01e", "ch01_fit", "fit seeds with g = torch.manual_seed(seed) (the global generator, reseeded: the draws are the same, the global random state is reset)",
        ("    g = torch.Generator().manual_seed(seed)\n    losses", "    g = torch.manual_seed(seed)\n    losses"))
variant("ch01", "y01a", "ch01_many_to_one", "ManyToOne classifies from h_n turned batch first, h_n.transpose(0, 1).reshape(B, -1) (one layer, one direction: (B, H))",
        ("return self.head(outputs[:, -1])", "return self.head(h_n.transpose(0, 1).reshape(x.shape[0], -1))"))
variant("ch01", "y01b", "ch01_train_step", "train_step takes the gradients with torch.autograd.grad and writes them into p.grad (which replaces the old ones), then steps",
        code=("def train_step(model, optimizer, x, y):\n"
              "    params = [p for p in model.parameters() if p.requires_grad]\n"
              "    loss = F.cross_entropy(model(x), y)\n"
              "    grads = torch.autograd.grad(loss, params)\n"
              "    for p, g in zip(params, grads):\n"
              "        p.grad = g                      # replaces any old gradient\n"
              "    optimizer.step()\n"
              "    return loss.item()\n"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "n02a", "ch02_rnn_layer", "rnn_layer turns a time-first input round with x.transpose_(0, 1) (in place: the caller's tensor is transposed)",
        ("x = x.transpose(0, 1)", "x = x.transpose_(0, 1)"))
mistake("ch02", "n02b", "ch02_bptt_gradient_norms", "bptt keeps every gradient in a list and applies the tanh derivative in place, grad *= 1 - h ** 2 (the tensor already in the list changes), norms taken at the end",
        ("    norms = [torch.linalg.vector_norm(grad)]\n"
         "    for t in range(states.shape[1] - 1, -1, -1):           # states[:, t] holds h_{t+1}\n"
         "        grad = (grad * (1 - states[:, t] ** 2)) @ W_hh     # (B, H): dL/dh_t\n"
         "        norms.append(torch.linalg.vector_norm(grad))\n"
         "    return torch.stack(norms)                              # (T + 1,)\n",
         "    grads = [grad]\n"
         "    for t in range(states.shape[1] - 1, -1, -1):           # states[:, t] holds h_{t+1}\n"
         "        grad *= 1 - states[:, t] ** 2                      # diag(1 - h_t^2), in place\n"
         "        grad = grad @ W_hh                                 # (B, H): dL/dh_t\n"
         "        grads.append(grad)\n"
         "    return torch.stack([torch.linalg.vector_norm(g) for g in grads])   # (T + 1,)\n"))
mistake("ch02", "n02c", "ch02_bptt_gradient_norms", "bptt records the norm between the tanh derivative and the W_hh product (the gradient of the pre-activation)",
        ("        grad = (grad * (1 - states[:, t] ** 2)) @ W_hh     # (B, H): dL/dh_t\n"
         "        norms.append(torch.linalg.vector_norm(grad))\n",
         "        grad = grad * (1 - states[:, t] ** 2)              # diag(1 - h_t^2)\n"
         "        norms.append(torch.linalg.vector_norm(grad))\n"
         "        grad = grad @ W_hh                                 # (B, H): dL/dh_t\n"))
mistake("ch02", "n02d", "ch02_clip_grad_norm", "clip_grad_norm tests the SUM OF SQUARES against max_norm (the square root taken only for the scale and the returned norm)",
        ("    total_norm = torch.sqrt(sum((g.detach() ** 2).sum() for g in grads))\n    if total_norm > max_norm:\n",
         "    total_sq = sum((g.detach() ** 2).sum() for g in grads)\n    total_norm = torch.sqrt(total_sq)\n    if total_sq > max_norm:\n"))
mistake("ch02", "n02e", "ch02_clip_grad_norm", "clip_grad_norm accumulates the squares in total = torch.zeros(1): the norm comes back with shape (1,), not 0-dim",
        ("    total_norm = torch.sqrt(sum((g.detach() ** 2).sum() for g in grads))\n",
         "    total = torch.zeros(1)\n    for g in grads:\n        total += (g.detach() ** 2).sum()\n    total_norm = torch.sqrt(total)\n"))
variant("ch02", "y02a", "ch02_rnn_cell", "rnn_cell with torch.tensordot over the feature axis of both operands (the rows times W^T)",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)",
         "return torch.tanh(torch.tensordot(h_prev, W_hh, dims=([1], [1])) + torch.tensordot(x_t, W_hx, dims=([1], [1])) + b_h)"))
variant("ch02", "y02b", "ch02_bptt_gradient_norms", "bptt one example at a time in column form with torch.mv(W_hh.T, a * g), the squared norms summed over the batch, the root at the end",
        code=("def bptt_gradient_norms(states, W_hh):\n"
              "    B, T, H = states.shape\n"
              "    sq = torch.zeros(T + 1, dtype=states.dtype)\n"
              "    for b in range(B):\n"
              "        g = torch.ones(H, dtype=states.dtype)           # dL/dh_T of example b\n"
              "        sq[0] += (g ** 2).sum()\n"
              "        for k, t in enumerate(range(T - 1, -1, -1), start=1):\n"
              "            g = torch.mv(W_hh.T, (1 - states[b, t] ** 2) * g)   # W^T diag(1 - h^2) g\n"
              "            sq[k] += (g ** 2).sum()\n"
              "    return sq.sqrt()\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "n03a", "ch03_lstm_cell", "lstm_cell splits each W[k] into its h and x columns at D = x.shape[1] (the input's size) instead of H",
        ("    hx = torch.cat([h_prev, x], dim=1)             # (B, H + D): [h_{t-1}; x_t] for every example\n"
         "    i = torch.sigmoid(hx @ W[\"i\"].T + b[\"i\"])      # (B, H) input gate\n"
         "    f = torch.sigmoid(hx @ W[\"f\"].T + b[\"f\"])      # (B, H) forget gate\n"
         "    g = torch.tanh(hx @ W[\"g\"].T + b[\"g\"])         # (B, H) candidate cell\n"
         "    o = torch.sigmoid(hx @ W[\"o\"].T + b[\"o\"])      # (B, H) output gate\n",
         "    D = x.shape[1]\n"
         "    def pre(k):                                    # W_k [h; x] + b_k = W_kh h + W_kx x + b_k\n"
         "        return h_prev @ W[k][:, :D].T + x @ W[k][:, D:].T + b[k]\n"
         "    i = torch.sigmoid(pre(\"i\"))                    # (B, H) input gate\n"
         "    f = torch.sigmoid(pre(\"f\"))                    # (B, H) forget gate\n"
         "    g = torch.tanh(pre(\"g\"))                       # (B, H) candidate cell\n"
         "    o = torch.sigmoid(pre(\"o\"))                    # (B, H) output gate\n"))
mistake("ch03", "n03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias reuses part 1, lstm_cell(x, h_prev, c_prev, W, None) with W[k] = [Wh[k] Wx[k]] and None for 'no biases' (part 1 indexes b['i'])",
        ("    i = torch.sigmoid(x @ Wx[\"i\"].T + h_prev @ Wh[\"i\"].T)   # (B, H) input gate\n"
         "    f = torch.sigmoid(x @ Wx[\"f\"].T + h_prev @ Wh[\"f\"].T)   # (B, H) forget gate\n"
         "    g = torch.tanh(x @ Wx[\"g\"].T + h_prev @ Wh[\"g\"].T)      # (B, H) candidate cell\n"
         "    o = torch.sigmoid(x @ Wx[\"o\"].T + h_prev @ Wh[\"o\"].T)   # (B, H) output gate\n"
         "    c = f * c_prev + i * g                                  # (B, H)\n"
         "    h = o * torch.tanh(c)                                   # (B, H)\n"
         "    return h, c\n",
         "    W = {k: torch.cat([Wh[k], Wx[k]], dim=1) for k in Wx}   # [W_kh W_kx]: hidden first, as part 1 wants\n"
         "    return lstm_cell(x, h_prev, c_prev, W, None)            # the same cell without biases\n"))
mistake("ch03", "n03c", "ch03_split_gates", "split_gates unpacks the cell's parameters, w_ih, w_hh, b_ih, b_hh = cell.parameters() (a bias-free cell has two)",
        ("    Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))     # 4 blocks of (H, D), rows in the order i, f, g, o\n"
         "    Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))     # 4 blocks of (H, H)\n",
         "    w_ih, w_hh, b_ih, b_hh = cell.parameters()\n"
         "    Wx = dict(zip(GATES, w_ih.chunk(4, dim=0)))     # 4 blocks of (H, D), rows in the order i, f, g, o\n"
         "    Wh = dict(zip(GATES, w_hh.chunk(4, dim=0)))     # 4 blocks of (H, H)\n"),
        ("(cell.bias_ih + cell.bias_hh).chunk(4)", "(b_ih + b_hh).chunk(4)"))
mistake("ch03", "n03d", "ch03_lstm_layer", "lstm_layer starts from None when no state is given (nn.LSTMCell then starts from zeros; a plain-function cell gets None)",
        ("    B, T, _ = x.shape\n"
         "    if state is None:\n"
         "        h = x.new_zeros(B, hidden_size)            # (B, H)\n"
         "        c = x.new_zeros(B, hidden_size)            # (B, H)\n"
         "    else:\n"
         "        h, c = state[0][0], state[1][0]            # (1, B, H) -> (B, H)\n"
         "    outputs = []\n"
         "    for t in range(T):\n"
         "        h, c = cell(x[:, t], (h, c))               # (B, H), (B, H): the cell state is carried too\n"
         "        outputs.append(h)\n",
         "    B, T, _ = x.shape\n"
         "    hc = None if state is None else (state[0][0], state[1][0])   # None: nn.LSTMCell starts from zeros\n"
         "    outputs = []\n"
         "    for t in range(T):\n"
         "        hc = cell(x[:, t], hc)                     # (h, c), each (B, H)\n"
         "        outputs.append(hc[0])\n"
         "    h, c = hc\n"))
mistake("ch03", "n03e", "ch03_lstm_layer", "lstm_layer writes the final states back into the given (h_0, c_0), state[0][0] = h ('the state carries on'): the caller's tensors change",
        ("    return torch.stack(outputs, dim=1), (h.unsqueeze(0), c.unsqueeze(0))",
         "    if state is not None:\n"
         "        state[0][0] = h                            # the given state carries on from here\n"
         "        state[1][0] = c\n"
         "    return torch.stack(outputs, dim=1), (h.unsqueeze(0), c.unsqueeze(0))"))
variant("ch03", "y03a", "ch03_lstm_cell", "lstm_cell squashes the cell with tanh written through the sigmoid, tanh(c) = 2 sigmoid(2c) - 1",
        ("h = o * torch.tanh(c)", "h = o * (2 * torch.sigmoid(2 * c) - 1)"))
variant("ch03", "y03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias with F.linear(h_prev, Wh[k], x @ Wx[k].T): the input's product passed in F.linear's bias slot",
        *[(f'sigmoid(x @ Wx["{k}"].T + h_prev @ Wh["{k}"].T)' if k != "g" else f'tanh(x @ Wx["{k}"].T + h_prev @ Wh["{k}"].T)',
           f'sigmoid(F.linear(h_prev, Wh["{k}"], x @ Wx["{k}"].T))' if k != "g" else f'tanh(F.linear(h_prev, Wh["{k}"], x @ Wx["{k}"].T))')
          for k in "ifgo"])

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "n04a", "ch04_gru_cell_textbook", "gru_cell_textbook puts the candidate's hidden bias inside the reset, tanh(W_nx x + b_in + W_nh (r * h) + r * b_hn) (part 2's formula for the bias only)",
        ("h_tilde = torch.tanh(x @ W_nx.T + (r * h) @ W_nh.T + b_n)",
         "h_tilde = torch.tanh(x @ W_nx.T + bias_ih[2 * H:] + (r * h) @ W_nh.T + r * bias_hh[2 * H:])"))
mistake("ch04", "n04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch takes the n block of tanh(gi + r * gh) (r (B, H) against the whole (B, 3H) products, to avoid slicing)",
        ("    i_r, i_z, i_n = gi.chunk(3, dim=1)      # each (B, H)\n"
         "    h_r, h_z, h_n = gh.chunk(3, dim=1)      # each (B, H)\n"
         "    r = torch.sigmoid(i_r + h_r)            # (B, H)\n"
         "    z = torch.sigmoid(i_z + h_z)            # (B, H)\n"
         "    n = torch.tanh(i_n + r * h_n)           # (B, H): reset AFTER the product, b_hn included\n",
         "    H = h.shape[1]\n"
         "    r, z = torch.sigmoid(gi[:, :2 * H] + gh[:, :2 * H]).chunk(2, dim=1)   # each (B, H)\n"
         "    n = torch.tanh(gi + r * gh)[:, 2 * H:]                                # the n block\n"))
mistake("ch04", "n04c", "ch04_count_parameters", "count_parameters recurses over the layers, count_parameters(kind, H * dirs, H, num_layers - 1): bias and bidirectional left out of the call (their defaults)",
        ("    total = 0\n"
         "    for layer in range(num_layers):\n"
         "        layer_input = input_size if layer == 0 else hidden_size * directions\n"
         "        per_direction = blocks * (hidden_size * layer_input + hidden_size * hidden_size)\n"
         "        if bias:\n"
         "            per_direction += blocks * 2 * hidden_size   # bias_ih and bias_hh\n"
         "        total += directions * per_direction\n"
         "    return total\n",
         "    if num_layers == 0:\n"
         "        return 0\n"
         "    first = blocks * (hidden_size * input_size + hidden_size * hidden_size)\n"
         "    if bias:\n"
         "        first += blocks * 2 * hidden_size   # bias_ih and bias_hh\n"
         "    return directions * first + count_parameters(kind, hidden_size * directions, hidden_size, num_layers - 1)\n"))
mistake("ch04", "n04d", "ch04_count_parameters", "count_parameters keeps a running input width and updates it at the TOP of the loop (layer 1 already reads H * directions)",
        ("    for layer in range(num_layers):\n"
         "        layer_input = input_size if layer == 0 else hidden_size * directions\n",
         "    layer_input = input_size\n"
         "    for layer in range(num_layers):\n"
         "        layer_input = hidden_size * directions   # the next layer reads this one's outputs\n"))
mistake("ch04", "n04e", "ch04_count_parameters", "count_parameters tests num_layers == 1 where the loop's layer index is meant (layer 1 of a deeper stack reads H * directions)",
        ("layer_input = input_size if layer == 0 else hidden_size * directions",
         "layer_input = input_size if num_layers == 1 else hidden_size * directions"))
variant("ch04", "y04a", "ch04_gru_cell_textbook", "gru_cell_textbook transposes the stacked weights once and splits their columns: (D, H) and (H, H) blocks used without .T",
        code=("def gru_cell_textbook(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    H = h.shape[1]\n"
              "    W_rx, W_zx, W_nx = weight_ih.T.split(H, dim=1)      # each (D, H)\n"
              "    W_rh, W_zh, W_nh = weight_hh.T.split(H, dim=1)      # each (H, H): already transposed\n"
              "    b_r, b_z, b_n = (bias_ih + bias_hh).split(H)\n"
              "    r = torch.sigmoid(x @ W_rx + h @ W_rh + b_r)\n"
              "    z = torch.sigmoid(x @ W_zx + h @ W_zh + b_z)\n"
              "    h_tilde = torch.tanh(x @ W_nx + (r * h) @ W_nh + b_n)\n"
              "    return (1 - z) * h_tilde + z * h\n"))
variant("ch04", "y04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch: the n block of tanh(gi + r.repeat(1, 3) * gh) (r repeated over the three blocks, then the n block kept)",
        ("    i_r, i_z, i_n = gi.chunk(3, dim=1)      # each (B, H)\n"
         "    h_r, h_z, h_n = gh.chunk(3, dim=1)      # each (B, H)\n"
         "    r = torch.sigmoid(i_r + h_r)            # (B, H)\n"
         "    z = torch.sigmoid(i_z + h_z)            # (B, H)\n"
         "    n = torch.tanh(i_n + r * h_n)           # (B, H): reset AFTER the product, b_hn included\n",
         "    H = h.shape[1]\n"
         "    r, z = torch.sigmoid(gi[:, :2 * H] + gh[:, :2 * H]).chunk(2, dim=1)   # each (B, H)\n"
         "    n = torch.tanh(gi + r.repeat(1, 3) * gh)[:, 2 * H:]                   # the n block\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "n05a", "ch05_reverse_padded", "reverse_padded writes the reversed positions into the expanded arange in place, idx = t.expand(B, T); idx[real] = ... (an expanded view: one memory location for every row)",
        ("    idx = torch.where(t < L, L - 1 - t, t)                      # (B, T): where each output step reads from\n",
         "    idx = t.expand(B, T)                                        # (B, T): the padding reads from itself\n"
         "    real = t < L                                                # (B, T)\n"
         "    idx[real] = (L - 1 - t).expand(B, T)[real]                  # the real prefix reads backwards\n"))
mistake("ch05", "n05b", "ch05_lstm_direction", "lstm_direction zeroes the padded steps of x in place first, x[pad] = 0 ('padding must not enter the cell'): the caller's batch changes",
        ("    B, T, _ = x.shape\n    h = x.new_zeros",
         "    B, T, _ = x.shape\n"
         "    x[torch.arange(T, device=x.device) >= lengths.to(x.device).unsqueeze(1)] = 0   # no padding into the cell\n"
         "    h = x.new_zeros"))
mistake("ch05", "n05c", "ch05_bilstm_from_cells", "BiLSTMFromCells fills lengths=None with x.shape[0] (the batch size, where T = x.shape[1] is meant)",
        ("lengths = torch.full((x.shape[0],), x.shape[1], dtype=torch.long)",
         "lengths = torch.full((x.shape[0],), x.shape[0], dtype=torch.long)"))
mistake("ch05", "n05d", "ch05_masked_mean", "masked_mean sums the masked outputs over dim=0 (the batch) instead of dim=1 (time)",
        ("total = (outputs * mask.unsqueeze(-1)).sum(dim=1)", "total = (outputs * mask.unsqueeze(-1)).sum(dim=0)"))
mistake("ch05", "n05e", "ch05_sentence_classifier", "SentenceClassifier pads the packed outputs back without batch_first=True (pad_packed_sequence's default is time first: (T, B, 2H))",
        ("out, _ = pad_packed_sequence(out, batch_first=True, total_length=tokens.shape[1])",
         "out, _ = pad_packed_sequence(out, total_length=tokens.shape[1])"))
variant("ch05", "y05a", "ch05_masked_mean", "masked_mean with torch.nn.utils.rnn.unpad_sequence: each sequence's real steps, averaged, stacked",
        code=("def masked_mean(outputs, lengths):\n"
              "    from torch.nn.utils.rnn import unpad_sequence\n"
              "    seqs = unpad_sequence(outputs, lengths.cpu(), batch_first=True)   # B tensors (L_b, F)\n"
              "    return torch.stack([s.mean(dim=0) for s in seqs])\n"))
variant("ch05", "y05b", "ch05_final_states", "final_states with unpad_sequence: the forward half of each sequence's last real row, the backward half of its first",
        code=("def final_states(outputs, lengths):\n"
              "    from torch.nn.utils.rnn import unpad_sequence\n"
              "    H = outputs.shape[-1] // 2\n"
              "    seqs = unpad_sequence(outputs, lengths.cpu(), batch_first=True)   # B tensors (L_b, 2H)\n"
              "    return torch.stack([torch.cat([s[-1, :H], s[0, H:]]) for s in seqs])\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "n06a", "ch06_build_vocab", "build_vocab sorts counts.items() and keeps the (token, count) pairs: the vocabulary holds tuples after the specials",
        ("    kept = [token for token, count in counts.items() if count >= min_freq]\n"
         "    kept.sort(key=lambda token: (-counts[token], token))\n",
         "    kept = sorted(((token, count) for token, count in counts.items() if count >= min_freq),\n"
         "                  key=lambda tc: (-tc[1], tc[0]))   # most frequent first, ties alphabetical\n"))
mistake("ch06", "n06b", "ch06_numericalize", "numericalize maps with map(...) and never makes a list of it (a lazy iterator: [SOS_INDEX] + ids raises, and without specials a map object is returned)",
        ("ids = [stoi.get(token, UNK_INDEX) for token in tokens]", "ids = map(lambda token: stoi.get(token, UNK_INDEX), tokens)"))
mistake("ch06", "n06c", "ch06_pad_batch", "pad_batch sorts the sequences longest first ('ready for packing') before padding: the rows no longer follow the input order",
        ("    lengths = torch.tensor(", "    sequences = sorted(sequences, key=len, reverse=True)   # longest first, as packing wants\n    lengths = torch.tensor("))
mistake("ch06", "n06d", "ch06_teacher_forced_loss", "teacher_forced_loss averages the per-token losses over a mask taken from the INPUT columns, dec_in != pad (one padding target per padded row counts)",
        ("    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), ignore_index=pad_index)\n",
         "    per_token = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), reduction=\"none\")\n"
         "    real = (dec_in != pad_index).reshape(-1).float()   # the real positions\n"
         "    loss = (per_token * real).sum() / real.sum()\n"))
mistake("ch06", "n06e", "ch06_decoder", "Decoder ties its output layer to the embedding, self.out.weight = self.embedding.weight (a language-model tutorial's trick; (V, E) where (V, H) is needed)",
        ("self.out = nn.Linear(hidden_size, vocab_size)",
         "self.out = nn.Linear(hidden_size, vocab_size)\n        self.out.weight = self.embedding.weight   # tied embeddings: fewer parameters"))
variant("ch06", "y06a", "ch06_encoder", "Encoder packs the list of each sentence's real prefix with pack_sequence(enforce_sorted=False)",
        code=("class Encoder(nn.Module):\n"
              "    def __init__(self, vocab_size, emb_size, hidden_size):\n"
              "        super().__init__()\n"
              "        self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=PAD_INDEX)\n"
              "        self.rnn = nn.GRU(emb_size, hidden_size, batch_first=True)\n"
              "\n"
              "    def forward(self, src, src_lengths):\n"
              "        from torch.nn.utils.rnn import pack_sequence\n"
              "        emb = self.embedding(src)                                      # (B, Tx, E)\n"
              "        seqs = [emb[b, :int(n)] for b, n in enumerate(src_lengths)]     # the real prefixes\n"
              "        packed_out, h_n = self.rnn(pack_sequence(seqs, enforce_sorted=False))\n"
              "        outputs, _ = pad_packed_sequence(packed_out, batch_first=True, total_length=src.shape[1])\n"
              "        return outputs, h_n[0]\n"))
variant("ch06", "y06b", "ch06_build_vocab", "build_vocab counts each distinct token with list.count over the sequences (no Counter), then one sort",
        code=("def build_vocab(sequences, min_freq=1):\n"
              "    tokens = {token for seq in sequences for token in seq}\n"
              "    counts = {token: sum(seq.count(token) for seq in sequences) for token in tokens}\n"
              "    kept = sorted((t for t in tokens if counts[t] >= min_freq), key=lambda t: (-counts[t], t))\n"
              "    return SPECIALS + kept\n"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "n07a", "ch07_greedy", "greedy_translate trims the weights to the longest output, weights[:, :max(len(row) for row in out)] ('a row per output token': the row that produced <eos> is dropped)",
        ("    return out, torch.stack(weights, dim=1)",
         "    steps = max(len(row) for row in out)                       # one row of weights per output token\n"
         "    return out, torch.stack(weights, dim=1)[:, :steps]"))
mistake("ch07", "n07b", "ch07_encoder", "EncoderRNN takes the mask from the tokens, src != 0 (<pad> is index 0: exercise 9's way), and ignores src_lengths",
        ("        if src_lengths is None:\n"
         "            mask = torch.ones(B, Tx, dtype=torch.bool)\n"
         "        else:\n"
         "            mask = source_mask(src_lengths, Tx)                # (B, Tx)\n",
         "        mask = src != 0                                        # (B, Tx): <pad> is index 0\n"))
mistake("ch07", "n07c", "ch07_attention", "Attention applies the whole Attn layer to each part, Attn(hidden)[:, None] + Attn(encoder_outputs) (chapter 7's two halves, with one layer)",
        ("        d = hidden[:, None, :].expand(B, Tx, hidden.shape[-1])     # (B, Tx, Hd)\n"
         "        pairs = torch.cat([d, encoder_outputs], dim=-1)         # (B, Tx, Hd + De)\n"
         "        energy = torch.tanh(self.Attn(pairs))                      # (B, Tx, A)\n",
         "        energy = torch.tanh(self.Attn(hidden)[:, None, :] + self.Attn(encoder_outputs))   # W_d d + W_h h_s + b\n"))
mistake("ch07", "n07d", "ch07_decoder", "AttnDecoderRNN passes the embedding through F.relu (PyTorch's seq2seq tutorial's decoder does)",
        ("embedded = self.embedding(y_prev)", "embedded = F.relu(self.embedding(y_prev))"))
mistake("ch07", "n07e", "ch07_lstm_cell", "LSTMCell: z = self.W(x) + self.W(h_prev) (W typed twice: the recurrent weights U never used)",
        ("z = self.W(x) + self.U(h_prev)", "z = self.W(x) + self.W(h_prev)"))
variant("ch07", "y07a", "ch07_attention", "Attention scores with torch.bmm of the energies and v expanded to (B, A, 1)",
        ("scores = energy @ self.v ", "scores = torch.bmm(energy, self.v.expand(B, -1).unsqueeze(2)).squeeze(2) "))
variant("ch07", "y07b", "ch07_lstm_cell", "LSTMCell: the four blocks from torch.tensor_split into a dict keyed f, i, o, g",
        ("        f, i, o, g = z.chunk(4, dim=-1)                        # (B, H) each\n"
         "        f, i, o = torch.sigmoid(f), torch.sigmoid(i), torch.sigmoid(o)\n"
         "        g = torch.tanh(g)                                      # (B, H)\n",
         "        gate = dict(zip(\"fiog\", torch.tensor_split(z, 4, dim=-1)))\n"
         "        f, i, o = (torch.sigmoid(gate[k]) for k in \"fio\")\n"
         "        g = torch.tanh(gate[\"g\"])\n"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "n08a", "ch08_attend", "attend writes the softmax from its definition with the mask on the exponentials, exp(e) * mask / sum (no maximum subtracted: exp overflows for large energies)",
        ("    energies = energies.masked_fill(~mask[:, None, :], float(\"-inf\"))   # (B, Ty, Tx): padding gets -inf\n"
         "    weights = torch.softmax(energies, dim=-1)                           # (B, Ty, Tx): over source positions\n",
         "    ex = torch.exp(energies) * mask[:, None, :]                         # exp(e), 0 at the padding\n"
         "    weights = ex / ex.sum(dim=-1, keepdim=True)                         # (B, Ty, Tx)\n"))
mistake("ch08", "n08b", "ch08_attend", "attend multiplies the weights by values.transpose(1, 2) (part 2's transpose habit carried into the contexts)",
        ("contexts = weights @ values ", "contexts = weights @ values.transpose(1, 2) "))
mistake("ch08", "n08c", "ch08_scaled_dot", "scaled_dot_attention scales the queries first, in place, dec /= math.sqrt(D): the caller's dec changes",
        ("    energies = dec @ enc.transpose(1, 2) / math.sqrt(D)      # (B, Ty, Tx)\n",
         "    dec /= math.sqrt(D)                                      # scale the queries first\n"
         "    energies = dec @ enc.transpose(1, 2)                     # (B, Ty, Tx)\n"))
mistake("ch08", "n08d", "ch08_scaled_dot", "scaled_dot_attention divides by math.isqrt(D) (the integer square root, next to sqrt in the completion list)",
        ("/ math.sqrt(D)", "/ math.isqrt(D)"))
mistake("ch08", "n08e", "ch08_dot", "dot_attention transposes the keys with enc.transpose(0, 2) ('swap the first and last axes', where the last two are meant)",
        ("energies = dec @ enc.transpose(1, 2)", "energies = dec @ enc.transpose(0, 2)"))
variant("ch08", "y08a", "ch08_reduced_rank", "reduced_rank_attention: the energies from a 4-D batched product, queries (B, Ty, 1, R) @ keys (B, 1, R, Tx), squeezed",
        ("energies = queries @ keys.transpose(1, 2) ",
         "energies = (queries[:, :, None, :] @ keys[:, None].transpose(-1, -2)).squeeze(2) "))
variant("ch08", "y08b", "ch08_attend", "attend: the weights as log_softmax(...).exp() of the masked energies",
        ("weights = torch.softmax(energies, dim=-1) ", "weights = torch.log_softmax(energies, dim=-1).exp() "))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "n09a", "ch09_encode", "encode sums the two directions' final states, h_n.sum(0) (the tutorials' way for a bidirectional encoder), before W_h and W_c",
        ("    d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1))                        # (B, H)\n"
         "    c0 = model.W_c(torch.cat([c_n[1], c_n[0]], dim=-1))                        # (B, H)\n",
         "    d0 = model.W_h(h_n.sum(dim=0))                                            # the two directions summed\n"
         "    c0 = model.W_c(c_n.sum(dim=0))\n"))
mistake("ch09", "n09b", "ch09_decode_step", "decode_step applies the model's dropout to the attention weights too, alpha = model.dropout(softmax(e)) (the Transformer's attention dropout)",
        ("alpha = torch.softmax(e, dim=1)", "alpha = model.dropout(torch.softmax(e, dim=1))"))
mistake("ch09", "n09c", "ch09_beam_search", "beam_search returns only the best hypothesis, sorted(...)[0] ('beam search returns the best translation')",
        ("    return sorted(finished, key=lambda hyp: -hyp[1])\n",
         "    return sorted(finished, key=lambda hyp: -hyp[1])[0]   # the best translation\n"))
mistake("ch09", "n09d", "ch09_decode_step", "decode_step scores with h instead of h_proj, torch.bmm(h, d.unsqueeze(2)) (the two arguments side by side)",
        ("e = torch.bmm(h_proj, d.unsqueeze(2)).squeeze(2)", "e = torch.bmm(h, d.unsqueeze(2)).squeeze(2)"))
mistake("ch09", "n09e", "ch09_beam_search", "beam_search keeps the candidates with heapq.nsmallest by score (the smallest sums of log-probabilities: the worst)",
        ("    live = [([], 0.0, start_state)]", "    import heapq\n    live = [([], 0.0, start_state)]"),
        ("        candidates.sort(key=lambda cand: -cand[0])\n",
         "        best = heapq.nsmallest(beam_size - len(finished), candidates, key=lambda cand: cand[0])\n"),
        ("for score, tokens, state in candidates[: beam_size - len(finished)]:", "for score, tokens, state in best:"))
variant("ch09", "y09a", "ch09_masked_loss", "masked_loss with cross_entropy's class weights: 0 for PAD, 1 for every other token (the weighted mean divides by the real tokens)",
        code=("def masked_loss(logits, tgt_out):\n"
              "    V = logits.shape[-1]\n"
              "    weight = torch.ones(V, dtype=logits.dtype, device=logits.device)\n"
              "    weight[PAD] = 0.0                              # padding targets weigh nothing\n"
              "    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), weight=weight)\n"))
variant("ch09", "y09b", "ch09_beam_search", "beam_search ranks the candidates by their length-normalised score (every candidate of a step has the same length)",
        ("        candidates.sort(key=lambda cand: -cand[0])\n",
         "        candidates.sort(key=lambda cand: -cand[0] / len(cand[1]) ** alpha)   # the same length for all\n"))

CASES = M + OK

# The first failing visible test's message as a student reads it (trials 22f-22m's rule). Filled after the runs.
VERDICTS = {
    "ch01-n01a": ('Pa', "'every variable that can be compared agrees with the reference's, but the result differs: look at the line that returns it (or a value changed in place after it was made)': the return line is where the student's self.drop sits, but that a dropout the docstring does not have is the cause is not said (lenient reading: P)"),
    "ch01-n01b": ('P', "'inputs has shape (2, 1, 7) here, but (2, 5, 3) in the reference ...; it goes wrong at your line inputs = F.pad(x.unsqueeze(1), (0, steps - 1)) -- fix it there': the line, and shapes that show the features padded instead of time"),
    "ch01-n01c": ('P', "\"'ManyToManyAsync' object has no attribute 'head' -- ... one edit (in ManyToManyAsync.__init__): a step left out\": the attribute the tests want and where to make it ('a step left out' for a renamed attribute is loose)"),
    "ch01-n01d": ('Pa', "'loss of the first step: got 0.675903, expected 1.0733 ... `loss` is the first variable whose value differs ...: look at your line loss = F.binary_cross_entropy_with_logits(...)': the right line, not what is wrong (the cross-entropy over the C classes is asked; lenient reading: P)"),
    "ch01-n01e": ('-', "no visible test fails (15/15): the batches and losses are those of a fresh Generator seeded alike; that fit reseeds the global random state is checked nowhere"),
    "ch02-n02a": ('-', "no visible test fails (11/11): the caller's time-first tensor comes back transposed (in the scratch check a fresh (T, B, D) tensor left the call (B, T, D)); no test notices"),
    "ch02-n02b": ('P', "'... every variable that can be compared agrees ..., but the result differs: look at the line that returns it (or a value changed in place after it was made)': the parenthesis is the cause (the list's gradients changed in place by grad *=), norms[0] = 1.61 instead of sqrt(B H) a clue; it names the return line first (strict reading: Pa)"),
    "ch02-n02c": ('M', "'`grad` is right where it is first made, and its second value, from your line grad = grad * (1 - states[:, t] ** 2), is not the reference's second value (yours gets 9 different values, the reference's 5): it goes wrong there': that line is right (the diag half of the split update); the cause is the norm appended between the two halves (lenient reading: Pa, the two-assignment loop is in view and '9 values instead of 5' hints at it)"),
    "ch02-n02d": ('P', "'a.grad when no clipping is needed: got 4.61538, expected 3 ... your values are what you get if you rescale to max_norm even when the gradient is already shorter': the threshold test is the line to fix; that it compares the sum of squares is not said (strict reading: Pa)"),
    "ch02-n02e": ('P', "'the total norm clip_grad_norm returns: must be a 0-dim tensor, got shape (1,) (index it with [0] or squeeze it)'"),
    "ch03-n03a": ('M', "at the student's `pre` line: 'mat1 and mat2 shapes cannot be multiplied (2x4 and 3x4) -- pre received k 'i': if pre passed its own test, check what lstm_cell passes to it -- ... a .T missing or one too many, or the wrong matrix?': the first lead blames lstm_cell's right call (pre is a nested helper with no test of its own), the .T guesses are not the student's; the cause is the column split at D instead of H (lenient reading: Pa, the right line and PyTorch's sizes 4 against 3)"),
    "ch03-n03b": ('P', "'lstm_cell received ... b None: if lstm_cell passed its own test, check what lstm_cell_nobias passes to it -- a value is None: ... an argument that may be None ...': the None the student passes for the biases"),
    "ch03-n03c": ('Pa', "Python's 'not enough values to unpack (expected 4, got 2)' at the student's parameters() line, then the generic 'unpacking a call means the function returns another number of values than its docstring says': the right line; that a bias-free cell has two parameters is not said (lenient reading: P)"),
    "ch03-n03d": ('-', "no visible test fails (10/10): no test gives lstm_layer a plain-function cell without a state (in the scratch check such a cell gets None and raises)"),
    "ch03-n03e": ('P', "'the given h_0 was changed by your function ...: it writes into its input (an in-place operation such as x[...] = ...)'"),
    "ch04-n04a": ('Pa', "'`h_tilde` is the first variable whose value differs ...: look at your line h_tilde = torch.tanh(... + r * bias_hh[2 * H:])': the right line, not what is wrong (the reset applied to b_hn; lenient reading: P)"),
    "ch04-n04b": ('P', "at the student's line: 'r has shape (2, 4) and gh has shape (2, 12): broadcasting lines shapes up from the RIGHT, so their axis -1 meets 4 against 12': r fits one block of the three"),
    "ch04-n04c": ('M', "'count_parameters is called with input_size 20 where the reference's call gets 10; num_layers 0 where the reference's call gets 1 ..., from your line return directions * first + count_parameters(...): what that line passes to it goes wrong there': the recursive call is the right line, but the arguments named (input_size, num_layers) are right for a recursion; the ones left out, bias and bidirectional, are not named (lenient reading: Pa)"),
    "ch04-n04d": ('P', "'`layer_input` ... gets 2 different values where the reference's gets 1: its second, from your line layer_input = hidden_size * directions, is one the reference's never gets (a line that runs where it should not ...)': the line, and that it runs before layer 1 where it should not (strict reading: Pa)"),
    "ch04-n04e": ('Pa', "'`layer_input` is the first variable whose value differs (20 where the reference's is 10) ...: look at your line layer_input = input_size if num_layers == 1 else ...': the right line, not what is wrong (num_layers for the layer index; lenient reading: P)"),
    "ch05-n05a": ('Pa', "'reverse_padded, 2-D: 7 of 15 entries differ ... `idx` is the first variable whose value differs ...: look at your line idx = t.expand(B, T)': the right line, not what is wrong (the in-place write on the next line goes into the expanded view shared by every row)"),
    "ch05-n05b": ('P', "'lstm_direction's argument x was changed by your function ...: it writes into its input (an in-place operation such as x[...] = ...)'"),
    "ch05-n05c": ('P', "'your values are what you get with `x.shape[0]` where `x.shape[1]` is needed (in BiLSTMFromCells.forward, the line that computes `lengths`)'"),
    "ch05-n05d": ('P', "'one edit (in masked_mean, the line that computes `total`): another number (an index, axis, size or count off?); total has shape (4, 3) here, but (2, 3) ...; it goes wrong at your line total = ....sum(dim=0)'"),
    "ch05-n05e": ('P', "'out has shape (6, 3, 8) here, but (3, 6, 8) in the reference ...; it goes wrong at your line out, _ = pad_packed_sequence(out, total_length=...) -- fix it there': time first where batch first is meant"),
    "ch06-n06a": ('P', "'build_vocab's return value (itos)[4]: must be a Python str, got a tuple of 2 items'"),
    "ch06-n06b": ('P', "'numericalize's return value: must be a Python list, got a Python map'"),
    "ch06-n06c": ('M', "'expected right padding with 0, got [[5, 6, 7], [9, 10, 0], [8, 0, 0]]': the padding IS on the right; the rows are in another order (sorted longest first) and that is not said (lenient reading: Pa, a student who compares the rows with the input sees them moved)"),
    "ch06-n06d": ('M', "'loss: got 3.48994, expected 3.4983 ... `loss` is the first variable whose value differs ...: look at your line loss = (per_token * real).sum() / real.sum()': that line is right; the mask `real` above it, taken from the input columns, is the cause (lenient reading: Pa, the mask is in the named line)"),
    "ch06-n06e": ('P', "at `logits = self.out(d)`: 'mat1 and mat2 shapes cannot be multiplied (2x4 and 3x9) -- ... one edit (in Decoder.__init__, the line that computes `self.out`): another variable in place of the right one': the tied weight in __init__"),
    "ch07-n07a": ('P', "'weights ...: expected shape (2, 3, 4), got (2, 2, 4); dimension 1 has 2 instead of 3: one too few (an off-by-one in a range or a slice?)': the student's slice of the weights"),
    "ch07-n07b": ('-', "no visible test fails (17/17): in every test the padding holds token 0 and no sentence holds it, where src != 0 equals the mask from src_lengths"),
    "ch07-n07c": ('P', "at the student's line: 'self.Attn is an nn.Linear built for 7 input features, but the tensor you give it has 3 on its last axis: give it the tensor it was built for (the parts the equation asks for)': the concatenation [d; h_s]"),
    "ch07-n07d": ('Pa', "'h at step 1: 8 of 8 entries differ ... `embedded` is the first variable whose value differs ...: look at your line embedded = F.relu(self.embedding(y_prev))': the right line, not what is wrong (no relu in the equations; lenient reading: P)"),
    "ch07-n07e": ('Pa', "at `z = self.W(x) + self.W(h_prev)`: 'self.W is an nn.Linear built for 3 input features, but the tensor you give it has 4 ...: give it the tensor it was built for ..., or ... build it with in_features=4': the right line and layer; the remedies offered change the tensor or the layer's size, where self.U is meant for h_prev (strict reading: M; lenient: P)"),
    "ch08-n08a": ('Pa', "first failure in Part 5's test (ch08_test_reduced_rank; Part 1's own test passes): 'weights at Dd = 300, Dh = 400: contains NaN; NaN comes from 0/0, from the log ..., from a softmax over entries that are all -inf ... or over an entry that is +inf': the right tensor (the weights, made by attend); that exp overflows for large energies (no maximum subtracted) is not said, and the test is reduced_rank's, whose code is right (strict reading: N)"),
    "ch08-n08b": ('P', "at the student's line: 'weights (2, 3, 4) @ values.transpose(1, 2) (2, 5, 4): ... weights @ values would give (2, 3, 5): which one is your equation'"),
    "ch08-n08c": ('Pa', "'contexts against F.scaled_dot_product_attention: 30 of 30 entries differ ...': a bare value mismatch in the right function; that dec was divided in place (the caller's tensor changed) is not said"),
    "ch08-n08d": ('M', "'Likely cause: your values are what you get if you divide by the square root of the source length Tx instead of the state size D': a named wrong cause (isqrt(5) = 2 = sqrt(4) here); the student divides by isqrt(D) (lenient reading: Pa, the scale is the line to look at)"),
    "ch08-n08e": ('P', "at the student's line: 'dec (2, 3, 5) @ enc.transpose(0, 2) (5, 4, 2): a matrix product sums the LAST axis of the left operand (5) against its second-last axis of the right one (4)': the transposed shape shows the wrong axes (strict reading: Pa, no fix offered)"),
    "ch09-n09a": ('P', "at the student's line: 'model.W_h is an nn.Linear built for 8 input features, but the tensor you give it has 4 ...: give it the tensor it was built for (the parts the equation asks for)': the concatenation of the two directions"),
    "ch09-n09b": ('P', "'kept entries of tilde d_t in training mode (dropout after the tanh scales them by 1/(1-p) = 2) ... `alpha` is the first variable whose value differs ...: look at your line alpha = model.dropout(torch.softmax(e, dim=1))': the test's title says where the dropout belongs, the line shows the extra one (strict reading: Pa)"),
    "ch09-n09c": ('P', "'beam_search's return value: must be a Python list, got a tuple of 2 items (build a list ...)'"),
    "ch09-n09d": ('P', "at the student's line: 'h (2, 5, 8) @ d.unsqueeze(2) (2, 4, 1): ... h_proj in place of h would give (2, 5, 1): which one is your equation'"),
    "ch09-n09e": ('Pa', "'beam_size=1, max_len=6, alpha=1.0: hypotheses [[0, 0, 0, 0, 0, 0]], expected [[5, 3, 3, 5]]': a bare mismatch in the right function (the worst candidates kept: nsmallest for the best is not said)"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.trial_main(sys.modules[__name__], "/tmp/student_trial_22n", argv)


if __name__ == "__main__":
    main()
