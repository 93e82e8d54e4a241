"""Student trial 22p: an acceptance trial of issue 22, 45 new mistakes and 18 correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed before solutions/ and the catalogues
were read: benchmarks/results/student_trial_22p_plan.md); every planned mistake and variant that repeated an old
mutant, an alternative or an earlier trial's case was replaced by a new one written the same way (the plan's second
table, which also lists the replacements that stay close to an old case). A mistake is one or more edits of one
cell's reference code, ``(old, new)`` pairs whose ``old`` occurs once; a variant rewrites the cell (or edits it) and
must keep full marks. Only the cases and the verdicts live here: building, grading (the class grader, one run per
assignment), the Jupyter view and the report are benchmarks/student_trial.py's and student_trial_22d.py's
(``run_trial``).

Run from the repository root (results in /tmp/student_trial_22p unless --root says otherwise):

    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22p.py --student-view [ch01 ...] [--students ch01-p01a,...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22p.py --grade [ch01 ...]
    /work/main/.venv/bin/python benchmarks/student_trial_22p.py --table     # benchmarks/results/student_trial_22p.md's tables
    /work/main/.venv/bin/python benchmarks/student_trial_22p.py --save benchmarks/results/student_trial_22p.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "p01a", "ch01_many_to_one", "ManyToOne builds its head inside forward, sized from the outputs (self.head = nn.Linear(...) at every call: a new random layer)",
        ("        self.head = nn.Linear(hidden_size, num_classes)\n", "        self.num_classes = num_classes\n"),
        ("        return self.head(outputs[:, -1])   # (B, C): the last step's state",
         "        self.head = nn.Linear(outputs.shape[-1], self.num_classes)   # the head, sized from the outputs\n"
         "        return self.head(outputs[:, -1])   # (B, C): the last step's state"))
mistake("ch01", "p01b", "ch01_one_to_many", "OneToMany feeds each step's output back as the next input (captioning feeds the generated word back), x only at the first step",
        ("        inputs = x.new_zeros(x.shape[0], steps, x.shape[1])  # (B, steps, D), all zeros\n"
         "        inputs[:, 0] = x                                     # x only at the first step\n"
         "        outputs, _ = self.rnn(inputs)                        # (B, steps, H)\n"
         "        return self.head(outputs)                            # (B, steps, C)\n",
         "        h, inp, outputs = None, x.unsqueeze(1), []\n"
         "        for _ in range(steps):\n"
         "            out, h = self.rnn(inp, h)        # one step, the state carried\n"
         "            outputs.append(out)\n"
         "            inp = out                        # the next input: what the RNN produced\n"
         "        return self.head(torch.cat(outputs, dim=1))   # (B, steps, C)\n"))
mistake("ch01", "p01c", "ch01_train_step", "train_step gives cross_entropy the labels as a column, y.unsqueeze(1) (the (B, 1) label layout of Keras tutorials)",
        ("loss = F.cross_entropy(model(x), y)", "loss = F.cross_entropy(model(x), y.unsqueeze(1))"))
mistake("ch01", "p01d", "ch01_fit", "fit returns torch.tensor(losses) ('a tensor is handier to plot'), not the list the docstring asks for",
        ("    return losses\n", "    return torch.tensor(losses)\n"))
mistake("ch01", "p01e", "ch01_fit", "fit gives Adam only model.head.parameters() (the fine-tuning habit: only the last layer learns)",
        ("torch.optim.Adam(model.parameters(), lr=lr)", "torch.optim.Adam(model.head.parameters(), lr=lr)"))
variant("ch01", "q01a", "ch01_fit", "fit draws each batch through a TensorDataset indexed with the (batch_size,) index tensor",
        ("    losses = []\n", "    data = torch.utils.data.TensorDataset(x, y)\n    losses = []\n"),
        ("        losses.append(train_step(model, optimizer, x[idx], y[idx]))",
         "        xb, yb = data[idx]                 # a TensorDataset indexed with a tensor gives (x[idx], y[idx])\n"
         "        losses.append(train_step(model, optimizer, xb, yb))"))
variant("ch01", "q01b", "ch01_train_step", "train_step with a closure passed to optimizer.step (zero_grad, loss, backward inside it)",
        code=("def train_step(model, optimizer, x, y):\n"
              "    def closure():\n"
              "        optimizer.zero_grad()\n"
              "        loss = F.cross_entropy(model(x), y)\n"
              "        loss.backward()\n"
              "        return loss\n"
              "    loss = optimizer.step(closure)   # Adam calls the closure once and returns its loss\n"
              "    return float(loss)\n"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "p02a", "ch02_rnn_cell", "rnn_cell in the math's order on row batches, W_hh @ h_prev + W_hx @ x_t (the matrices written on the left as in the formula)",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)", "return torch.tanh(W_hh @ h_prev + W_hx @ x_t + b_h)"))
mistake("ch02", "p02b", "ch02_rnn_layer", "rnn_layer returns h_last detached, h.detach() ('the final state is a result, not part of the graph'; the outputs keep theirs)",
        ("    return outputs, h\n", "    return outputs, h.detach()\n"))
mistake("ch02", "p02c", "ch02_bptt_gradient_norms", "bptt loops t = T .. 1 as the math counts, range(T, 0, -1), and reads states[:, t] (index T is past the end)",
        ("for t in range(states.shape[1] - 1, -1, -1):", "for t in range(states.shape[1], 0, -1):"))
mistake("ch02", "p02d", "ch02_clip_grad_norm", "clip_grad_norm sums each parameter's MEAN squared gradient, (g ** 2).mean() (the RMS habit), not its sum",
        ("total_norm = torch.sqrt(sum((g.detach() ** 2).sum() for g in grads))", "total_norm = torch.sqrt(sum((g.detach() ** 2).mean() for g in grads))"))
mistake("ch02", "p02e", "ch02_rnn_layer", "rnn_layer calls rnn_cell(x[:, t], h, W_hh, W_hx, b_h): the two weights in the math's order (W_hh first), not the cell's signature's",
        ("h = rnn_cell(x[:, t], h, W_hx, W_hh, b_h)", "h = rnn_cell(x[:, t], h, W_hh, W_hx, b_h)"))
variant("ch02", "q02a", "ch02_clip_grad_norm", "clip_grad_norm with PyTorch's foreach kernels, torch._foreach_norm and torch._foreach_mul_ (as clip_grad_norm_'s own source does)",
        code=("def clip_grad_norm(parameters, max_norm):\n"
              "    grads = [p.grad for p in parameters if p.grad is not None]\n"
              "    if not grads:\n"
              "        return torch.tensor(0.0)\n"
              "    total_norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm([g.detach() for g in grads])))\n"
              "    if total_norm > max_norm:\n"
              "        torch._foreach_mul_(grads, max_norm / (total_norm + 1e-6))\n"
              "    return total_norm\n"))
variant("ch02", "q02b", "ch02_rnn_layer", "rnn_layer with x.movedim for the time-first layout and a while loop over x.select(1, t)",
        code=("def rnn_layer(x, W_hx, W_hh, b_h, h0=None, batch_first=True):\n"
              "    if not batch_first:\n"
              "        x = x.movedim(0, 1)\n"
              "    h = x.new_zeros(x.shape[0], W_hh.shape[0]) if h0 is None else h0\n"
              "    states, t = [], 0\n"
              "    while t < x.shape[1]:\n"
              "        h = rnn_cell(x.select(1, t), h, W_hx, W_hh, b_h)\n"
              "        states.append(h)\n"
              "        t += 1\n"
              "    outputs = torch.stack(states, dim=1)\n"
              "    return (outputs if batch_first else outputs.movedim(1, 0)), h\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "p03a", "ch03_lstm_cell", "lstm_cell joins h_prev with itself, torch.cat([h_prev, h_prev], dim=1) (copy slip: x never joined)",
        ("hx = torch.cat([h_prev, x], dim=1)", "hx = torch.cat([h_prev, h_prev], dim=1)"))
mistake("ch03", "p03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias joins the forget gate's two products with * where + belongs (x @ Wx['f'].T * h_prev @ Wh['f'].T)",
        ('f = torch.sigmoid(x @ Wx["f"].T + h_prev @ Wh["f"].T)', 'f = torch.sigmoid(x @ Wx["f"].T * h_prev @ Wh["f"].T)'))
mistake("ch03", "p03c", "ch03_split_gates", "split_gates returns (Wx, Wh) for a cell without biases (the None left out: 'there is no b to return')",
        ("        return Wx, Wh, None\n", "        return Wx, Wh\n"))
mistake("ch03", "p03d", "ch03_split_gates", "split_gates adds the hidden bias into the input bias in place, cell.bias_ih.add_(cell.bias_hh) (to save a tensor)",
        ("(cell.bias_ih + cell.bias_hh).chunk(4)", "cell.bias_ih.add_(cell.bias_hh).chunk(4)"))
mistake("ch03", "p03e", "ch03_lstm_layer", "lstm_layer returns the final states as (c_n, h_n), the cell state first",
        ("(h.unsqueeze(0), c.unsqueeze(0))   #", "(c.unsqueeze(0), h.unsqueeze(0))   #"))
variant("ch03", "q03a", "ch03_lstm_layer", "lstm_layer with a list comprehension over x.unbind(1) that carries the state with an assignment expression",
        code=("def lstm_layer(cell, x, hidden_size, state=None):\n"
              "    B = x.shape[0]\n"
              "    hc = (x.new_zeros(B, hidden_size), x.new_zeros(B, hidden_size)) if state is None else (state[0][0], state[1][0])\n"
              "    outputs = [(hc := cell(x_t, hc))[0] for x_t in x.unbind(1)]\n"
              "    return torch.stack(outputs, dim=1), (hc[0][None], hc[1][None])\n"))
variant("ch03", "q03b", "ch03_split_gates", "split_gates from dict(cell.named_parameters()), 'bias_ih' in it for the bias case",
        code=("def split_gates(cell):\n"
              "    p = dict(cell.named_parameters())\n"
              "    Wx = {k: w for k, w in zip(GATES, p['weight_ih'].chunk(4))}\n"
              "    Wh = {k: w for k, w in zip(GATES, p['weight_hh'].chunk(4))}\n"
              "    if 'bias_ih' not in p:\n"
              "        return Wx, Wh, None\n"
              "    return Wx, Wh, {k: v for k, v in zip(GATES, (p['bias_ih'] + p['bias_hh']).chunk(4))}\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "p04a", "ch04_gru_cell_textbook", "gru_cell_textbook interpolates with torch.lerp(h, h_tilde, z) (lerp(start, end, weight) = start + weight (end - start): z weighs h~)",
        ("return (1 - z) * h_tilde + z * h", "return torch.lerp(h, h_tilde, z)"))
mistake("ch04", "p04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch in the math's column form, weight_ih @ x.T + bias_ih (the (3H, B) product added to a (3H,) bias)",
        ("gi = x @ weight_ih.T + bias_ih", "gi = weight_ih @ x.T + bias_ih"),
        ("gh = h @ weight_hh.T + bias_hh", "gh = weight_hh @ h.T + bias_hh"))
mistake("ch04", "p04c", "ch04_count_parameters", "count_parameters reads bias as 'bias_ih': bias_hh always counted, bias_ih only with bias=True",
        ("        if bias:\n            per_direction += blocks * 2 * hidden_size   # bias_ih and bias_hh\n",
         "        per_direction += blocks * (1 + int(bias)) * hidden_size   # bias_hh always; bias_ih if bias\n"))
mistake("ch04", "p04d", "ch04_gru_cell_textbook", "gru_cell_textbook interpolates with torch.addcmul(h_tilde, z, h) (= h~ + z h: the (1 - z) on h~ lost)",
        ("return (1 - z) * h_tilde + z * h", "return torch.addcmul(h_tilde, z, h)"))
mistake("ch04", "p04e", "ch04_gru_cell_pytorch", "gru_cell_pytorch computes r and z from the input blocks alone (r = sigmoid(i_r), z = sigmoid(i_z)): the hidden products only enter the candidate",
        ("r = torch.sigmoid(i_r + h_r)", "r = torch.sigmoid(i_r)"),
        ("z = torch.sigmoid(i_z + h_z)", "z = torch.sigmoid(i_z)"))
variant("ch04", "q04a", "ch04_count_parameters", "count_parameters over itertools.chain of the layer inputs, the biases as 2 * bias * blocks * hidden_size",
        code=("import itertools\n\n\n"
              "def count_parameters(kind, input_size, hidden_size, num_layers=1, bias=True, bidirectional=False):\n"
              "    blocks = {'rnn': 1, 'lstm': 4, 'gru': 3}[kind]\n"
              "    directions = 1 + int(bidirectional)\n"
              "    inputs = itertools.chain([input_size], itertools.repeat(hidden_size * directions, num_layers - 1))\n"
              "    return sum(directions * (blocks * hidden_size * (d + hidden_size) + 2 * int(bias) * blocks * hidden_size)\n"
              "               for d in inputs)\n"))
variant("ch04", "q04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch cuts the (B, 3H) products with Tensor.narrow",
        ("    i_r, i_z, i_n = gi.chunk(3, dim=1)      # each (B, H)\n    h_r, h_z, h_n = gh.chunk(3, dim=1)      # each (B, H)\n",
         "    H = h.shape[1]\n"
         "    i_r, i_z, i_n = (gi.narrow(1, k * H, H) for k in range(3))\n"
         "    h_r, h_z, h_n = (gh.narrow(1, k * H, H) for k in range(3))\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "p05a", "ch05_reverse_padded", "reverse_padded wraps the index with % T, (L - 1 - t) % T ('negative positions wrap round'), so the padding is read in reverse too",
        ("idx = torch.where(t < L, L - 1 - t, t)", "idx = (L - 1 - t) % T"))
mistake("ch05", "p05b", "ch05_lstm_direction", "lstm_direction loops over the steps every sequence has, range(lengths.min()) ('stop when a sequence ends')",
        ("    for t in range(T):\n", "    for t in range(int(lengths.min())):\n"))
mistake("ch05", "p05c", "ch05_bilstm_from_cells", "BiLSTMFromCells stacks the two directions' final states along dim=1: (B, 2, H), not (2, B, H)",
        ("return outputs, (torch.stack([h_f, h_b]), torch.stack([c_f, c_b]))", "return outputs, (torch.stack([h_f, h_b], dim=1), torch.stack([c_f, c_b], dim=1))"))
mistake("ch05", "p05d", "ch05_residual_stack", "ResidualLSTMStack packs x once before the loop and gives every layer that packed batch (the dropout and the residual on the unpacked result only)",
        ("        for l, layer in enumerate(self.layers):\n"
         "            inp = h if l == 0 else self.dropout(h)                       # (B, T, D or H)\n"
         "            packed = pack_padded_sequence(inp, lengths.cpu(), batch_first=True, enforce_sorted=False)\n",
         "        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)   # pack once\n"
         "        for l, layer in enumerate(self.layers):\n"))
mistake("ch05", "p05e", "ch05_sentence_classifier", "SentenceClassifier calls masked_mean(lengths, out) (the two arguments the other way round)",
        ("return self.head(masked_mean(out, lengths))", "return self.head(masked_mean(lengths, out))"))
variant("ch05", "q05a", "ch05_lstm_direction", "lstm_direction keeps the state with torch.lerp(old, new, mask as 0/1 floats) and zeroes the padded outputs by a product",
        ("        h = torch.where(real, h_new, h)                         # padded steps keep the old state\n"
         "        c = torch.where(real, c_new, c)\n"
         "        outputs.append(torch.where(real, h_new, torch.zeros_like(h_new)))\n",
         "        w = real.to(x.dtype)                                    # (B, 1): 1 at real steps, 0 at padding\n"
         "        h = torch.lerp(h, h_new, w)\n"
         "        c = torch.lerp(c, c_new, w)\n"
         "        outputs.append(h_new * w)\n"))
variant("ch05", "q05b", "ch05_sentence_classifier", "SentenceClassifier packs the token ids and embeds the packed data, PackedSequence(self.embed(packed.data), ...)",
        ("        emb = self.embed(tokens)                                                  # (B, T, E)\n"
         "        packed = pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)\n",
         "        ids = pack_padded_sequence(tokens, lengths.cpu(), batch_first=True, enforce_sorted=False)\n"
         "        packed = nn.utils.rnn.PackedSequence(self.embed(ids.data), ids.batch_sizes, ids.sorted_indices, ids.unsorted_indices)\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "p06a", "ch06_build_vocab", "build_vocab counts the characters of the joined tokens, Counter(''.join(...)) (the dates task's tokens are characters)",
        ("counts = Counter(token for seq in sequences for token in seq)", "counts = Counter(\"\".join(token for seq in sequences for token in seq))"))
mistake("ch06", "p06b", "ch06_teacher_forced_loss", "teacher_forced_loss starts the decoder from the encoder's state detached, d = h.detach() ('the encoder's summary handed over as a fixed start')",
        ("    _, d = encoder(src, src_lengths)                    # (B, H): d_0 = h_Tx\n",
         "    _, d = encoder(src, src_lengths)                    # (B, H): d_0 = h_Tx\n    d = d.detach()\n"))
mistake("ch06", "p06c", "ch06_greedy_decode", "greedy_decode takes the batch size from src.shape[1] (Tx) for the start tokens and the lists",
        ("        y = torch.full((src.shape[0],), SOS_INDEX, dtype=torch.long)      # (B,)\n"
         "        outputs = [[] for _ in range(src.shape[0])]\n"
         "        finished = [False] * src.shape[0]\n",
         "        y = torch.full((src.shape[1],), SOS_INDEX, dtype=torch.long)      # (B,)\n"
         "        outputs = [[] for _ in range(src.shape[1])]\n"
         "        finished = [False] * src.shape[1]\n"))
mistake("ch06", "p06d", "ch06_numericalize", "numericalize lower-cases each token before the look-up, stoi.get(token.lower(), UNK_INDEX) (the text-normalisation habit)",
        ("ids = [stoi.get(token, UNK_INDEX) for token in tokens]", "ids = [stoi.get(token.lower(), UNK_INDEX) for token in tokens]"))
mistake("ch06", "p06e", "ch06_teacher_forced_loss", "teacher_forced_loss stacks the steps' logits with torch.stack(logits) (dim 0: (Ty, B, V)) and flattens scores and targets as they are",
        ("logits = torch.stack(logits, dim=1)                 # (B, Ty, V)", "logits = torch.stack(logits)                        # (B, Ty, V)"))
variant("ch06", "q06a", "ch06_pad_batch", "pad_batch with a nested tensor, torch.nested.nested_tensor(...).to_padded_tensor(pad_index)",
        code=("def pad_batch(sequences, pad_index=PAD_INDEX):\n"
              "    nested = torch.nested.nested_tensor([torch.tensor(seq, dtype=torch.long) for seq in sequences])\n"
              "    return nested.to_padded_tensor(pad_index), torch.tensor([len(seq) for seq in sequences], dtype=torch.long)\n"))
variant("ch06", "q06b", "ch06_numericalize", "numericalize with map over two iterables, map(stoi.get, tokens, repeat(UNK_INDEX)), and unpacking",
        code=("from itertools import repeat\n\n\n"
              "def numericalize(tokens, stoi, add_sos=False, add_eos=False):\n"
              "    ids = [*map(stoi.get, tokens, repeat(UNK_INDEX))]\n"
              "    return [SOS_INDEX] * add_sos + ids + [EOS_INDEX] * add_eos\n"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "p07a", "ch07_lstm_cell", "LSTMCell.forward takes the two states as separate arguments, forward(self, x, h_prev, c_prev) (exercise 3's lstm_cell signature)",
        ('    def forward(self, x, state):\n        """x: (B, D); state: the tuple (h_prev, c_prev), each (B, H).\n        Returns the tuple (h, c)."""\n',
         '    def forward(self, x, h_prev, c_prev):\n        """x: (B, D); state: the tuple (h_prev, c_prev), each (B, H).\n        Returns the tuple (h, c)."""\n'),
        ("        h_prev, c_prev = state                                 # (B, H), (B, H)\n", ""))
mistake("ch07", "p07b", "ch07_encoder", "EncoderRNN joins the two directions' state lists before stacking, torch.stack(left + right, 1) (list + for the feature concatenation)",
        ("        outputs = torch.cat([torch.stack(left, 1), torch.stack(right, 1)],\n                            dim=-1)                            # (B, Tx, 2H)\n",
         "        outputs = torch.stack(left + right, 1)                 # [left; right] at every position\n"))
mistake("ch07", "p07c", "ch07_attention", "Attention tests the optional mask with `if mask:` (the truth value of a tensor)",
        ("        if mask is not None:\n", "        if mask:\n"))
mistake("ch07", "p07d", "ch07_decoder", "AttnDecoderRNN attends with the embedded previous token, self.attention(embedded, ...) ('attend with what was just read')",
        ("weights = self.attention(h_prev, encoder_outputs, mask)", "weights = self.attention(embedded, encoder_outputs, mask)"))
mistake("ch07", "p07e", "ch07_greedy", "greedy_translate reads model.last_weights once after the loop (the attribute read as the whole history): (B, 1, Tx)",
        ("        weights.append(model.last_weights)                          # (B, Tx)\n", ""),
        ("    return out, torch.stack(weights, dim=1)                    # (B, steps, Tx)",
         "    return out, model.last_weights[:, None, :]                 # (B, steps, Tx)"))
variant("ch07", "q07a", "ch07_attention", "Attention masks by boolean-index assignment, scores[~mask] = -inf (a fresh tensor, same shape as the mask)",
        ("            scores = scores.masked_fill(~mask, float(\"-inf\"))", "            scores[~mask] = float(\"-inf\")"))
variant("ch07", "q07b", "ch07_encoder", "EncoderRNN's right-to-left pass over emb.flip(1) with mask.flip(1) from zeros, the states flipped back",
        ("        state, right = (zeros, zeros), []\n"
         "        for t in reversed(range(Tx)):                          # right to left\n"
         "            new = self.lstm_cell_right(emb[:, t], state)\n"
         "            keep = mask[:, t, None]\n",
         "        state, right = (zeros, zeros), []\n"
         "        emb_r, mask_r = emb.flip(1), mask.flip(1)             # position Tx first\n"
         "        for t in range(Tx):                                    # right to left\n"
         "            new = self.lstm_cell_right(emb_r[:, t], state)\n"
         "            keep = mask_r[:, t, None]\n"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "p08a", "ch08_dot", "dot_attention passes attend the mask as floats, mask.float() ('a mask is a 0/1 multiplier')",
        ("return attend(energies, enc, mask)", "return attend(energies, enc, mask.float())"))
mistake("ch08", "p08b", "ch08_reduced_rank", "reduced_rank_attention computes the keys, then multiplies the queries by enc itself, queries @ enc.transpose(1, 2) (enc typed for keys)",
        ("energies = queries @ keys.transpose(1, 2)", "energies = queries @ enc.transpose(1, 2)"))
mistake("ch08", "p08c", "ch08_macs", "reduced_rank_macs computes each count with np.prod([...]) (NumPy integers, not Python ints)",
        ("    keys = Tx * R * Dh          # V h_s for every source position s\n"
         "    queries = Ty * R * Dd       # U d_t for every target step t\n"
         "    dots = Ty * Tx * R          # (U d_t)^T (V h_s) for every pair (t, s)\n",
         "    import numpy as np\n"
         "    keys = np.prod([Tx, R, Dh])          # V h_s for every source position s\n"
         "    queries = np.prod([Ty, R, Dd])       # U d_t for every target step t\n"
         "    dots = np.prod([Ty, Tx, R])          # (U d_t)^T (V h_s) for every pair (t, s)\n"))
mistake("ch08", "p08d", "ch08_bilinear", "bilinear_attention in the math's order with W on the left, W @ dec ... (d^T W read as W times d)",
        ("energies = (dec @ W) @ enc.transpose(1, 2)", "energies = (W @ dec.transpose(1, 2)).transpose(1, 2) @ enc.transpose(1, 2)"))
mistake("ch08", "p08e", "ch08_scaled_dot", "scaled_dot_attention takes D = dec.ndim (the 'dimension' read as the tensor's number of axes, 3)",
        ("D = dec.shape[-1]", "D = dec.ndim"))
variant("ch08", "q08a", "ch08_bilinear", "bilinear_attention with W expanded to (B, Dd, Dh) and two torch.bmm",
        ("energies = (dec @ W) @ enc.transpose(1, 2)",
         "Wb = W.expand(dec.shape[0], *W.shape)                    # (B, Dd, Dh), a view\n"
         "    energies = torch.bmm(torch.bmm(dec, Wb), enc.transpose(1, 2))"))
variant("ch08", "q08b", "ch08_macs", "reduced_rank_macs with math.prod for each term",
        code=("def reduced_rank_macs(B, Tx, Ty, Dd, Dh, R):\n"
              "    keys, queries, dots = math.prod((Tx, R, Dh)), math.prod((Ty, R, Dd)), math.prod((Ty, Tx, R))\n"
              "    return math.prod((B, keys + queries + dots)), math.prod((B, Ty * keys + queries + dots))\n"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "p09a", "ch09_encode", "encode gives the bidirectional LSTM explicit zero states shaped (1, B, H) ('one layer, so 1')",
        ("    out, (h_n, c_n) = model.encoder(packed)                                    # h_n, c_n: (2, B, H)\n",
         "    zeros = x.new_zeros(1, src.shape[0], model.hidden_size)                    # (layers, B, H)\n"
         "    out, (h_n, c_n) = model.encoder(packed, (zeros, zeros))                    # h_n, c_n: (2, B, H)\n"))
mistake("ch09", "p09b", "ch09_decode_step", "decode_step divides the energies by sqrt(H) (chapter 9's model scales them; here h_proj comes as it must be used)",
        ("e = torch.bmm(h_proj, d.unsqueeze(2)).squeeze(2)", "e = torch.bmm(h_proj, d.unsqueeze(2)).squeeze(2) / model.hidden_size ** 0.5"))
mistake("ch09", "p09c", "ch09_teacher_forcing", "decode_teacher_forcing computes h_proj under torch.no_grad() ('computed once, a constant of the loop')",
        ("    h_proj = model.W_attProj(h)                                                # (B, Tx, H), once for all steps\n",
         "    with torch.no_grad():\n        h_proj = model.W_attProj(h)                                            # (B, Tx, H), once for all steps\n"))
mistake("ch09", "p09d", "ch09_masked_loss", "masked_loss rescales ignore_index's mean by all positions over the real ones, * tgt_out.numel() / (tgt_out != PAD).sum() (believing ignore_index still divides by every position)",
        ("return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)",
         "loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)\n"
         "    return loss * tgt_out.numel() / (tgt_out != PAD).sum()   # the mean over the real tokens only"))
mistake("ch09", "p09e", "ch09_beam_search", "beam_search stops as soon as one hypothesis has finished (if finished: break), the live ones finished as they are",
        ("        if not live:\n            break\n", "        if finished or not live:\n            break\n"))
variant("ch09", "q09a", "ch09_beam_search", "beam_search with the candidates as namedtuples ranked by sorted(..., key=attrgetter('score'), reverse=True) (stable)",
        code=("from collections import namedtuple\n"
              "from operator import attrgetter\n\n"
              "Cand = namedtuple('Cand', 'score tokens state')\n\n\n"
              "def beam_search(step_fn, start_state, beam_size=3, max_len=20, alpha=1.0):\n"
              "    live, finished = [Cand(0.0, [], start_state)], []\n"
              "    for _ in range(max_len):\n"
              "        cands = []\n"
              "        for hyp in live:\n"
              "            log_probs, new_state = step_fn(hyp.tokens[-1] if hyp.tokens else SOS, hyp.state)\n"
              "            cands += [Cand(hyp.score + lp, hyp.tokens + [tok], new_state) for tok, lp in enumerate(log_probs.tolist())]\n"
              "        cands = sorted(cands, key=attrgetter('score'), reverse=True)[: beam_size - len(finished)]\n"
              "        live = []\n"
              "        for cand in cands:\n"
              "            if cand.tokens[-1] == EOS:\n"
              "                finished.append((cand.tokens[:-1], cand.score / len(cand.tokens) ** alpha))\n"
              "            else:\n"
              "                live.append(cand)\n"
              "        if not live:\n"
              "            break\n"
              "    finished += [(c.tokens, c.score / len(c.tokens) ** alpha) for c in live]\n"
              "    return sorted(finished, key=lambda hyp: hyp[1], reverse=True)\n"))
variant("ch09", "q09b", "ch09_encode", "encode reads the two final states with h_n[[1, 0]] (backward first), moved batch first and flattened",
        ("    d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1))                        # (B, H)\n"
         "    c0 = model.W_c(torch.cat([c_n[1], c_n[0]], dim=-1))                        # (B, H)\n",
         "    d0 = model.W_h(h_n[[1, 0]].transpose(0, 1).reshape(src.shape[0], -1))     # (B, 2H): [backward; forward]\n"
         "    c0 = model.W_c(c_n[[1, 0]].transpose(0, 1).reshape(src.shape[0], -1))\n"))

CASES = M + OK

VERDICTS: dict[str, tuple[str, str]] = {
    "ch01-p01a": ('P', "'ManyToOne' object has no attribute 'head' -- Likely cause: ... one edit (in ManyToOne.__init__): a step left out; ManyToOne.head is set by its method forward (self.head = ...), so it exists only once forward has run': the head made in forward, not in __init__; the tail's advice ('read it after the call to forward, not before') is for the reader of the attribute, which the student cannot change (strict reading: Pa)"),
    "ch01-p01b": ('M', "at the student's self.rnn(inp, h) line: 'input.size(-1) must be equal to input_size. Expected 3, got 4 -- Likely cause: ... one edit (in OneToMany.forward, the returned value): another attribute of the same object (a copy-paste slip?); the LSTM/RNN was built for another number of input features ...': the named cause (a copy-paste slip in the returned value) is not the student's; feeding the output back as the next input is not said (lenient reading: Pa, 'got 4' = H features at the rnn line leads to inp = out)"),
    "ch01-p01c": ('P', "at the student's line: 'F.cross_entropy takes class ids (N,) for scores (N, C) ...: flatten the targets like the scores (y.reshape(-1)), not (N, 1)'"),
    "ch01-p01d": ('P', "'the value fit returns: must be a Python list, got a tensor of shape (30,) (build a list, e.g. with .append or list(...))'"),
    "ch01-p01e": ('Pa', "Python's own \"'_Probe' object has no attribute 'head'\" at the student's Adam line, nothing added: the right line, not that fit must train every parameter of any model (lenient reading: P, the line shows model.head where model is meant)"),
    "ch02-p02a": ('P', "at the student's line: 'W_hh (4, 4) @ h_prev (2, 4): a matrix product sums the LAST axis of the left operand ...; h_prev @ W_hh would give (2, 4), W_hh @ h_prev.mT would give (4, 2): which one is your equation (the order of the operands, a transpose ...)?': the operand order is the cause; the first form offered lacks the .T (strict reading: Pa, as 22o's o02c)"),
    "ch02-p02b": ('P', "'element 0 of tensors does not require grad ... -- the result was cut from the graph (torch.no_grad(), .detach(), .item()): keep it a tensor computed from the inputs' at the test's backward of h_last: the detach named among three"),
    "ch02-p02c": ('P', "at the student's line: 'index 4 is out of bounds for dimension 1 with size 4 -- t is 4 here, but the positions along axis 1 of states (2, 4, 3) run from 0 to 3: the last is size - 1': the loop's 1-based bounds"),
    "ch02-p02d": ('P', "'`total_norm` is the first variable whose value differs ...: look at your line ... (compared with the reference's line that makes `total_norm`: yours calls mean, which the reference's does not)'"),
    "ch02-p02e": ('P', "at the cell's line, called from the student's: 'rnn_cell takes (x_t, h_prev, W_hx, W_hh, b_h), and your line passes `W_hh` as W_hx and `W_hx` as W_hh: two arguments in each other's place?'"),
    "ch03-p03a": ('P', "'Likely cause: ... two variables in each other's place; or with one edit (in lstm_cell, the line that computes `hx`): one item written twice where two different items are needed ((h, h) for (h, c)) ...; it goes wrong at your line hx = torch.cat([h_prev, h_prev], dim=1) -- fix it there': the right cause and line, after a wrong one named first (strict reading: Pa, as 22o's o04b)"),
    "ch03-p03b": ('Pa', "'c (the new cell state): 8 of 8 entries differ ... `f` is the first variable whose value differs ... look at your line f = torch.sigmoid(x @ Wx[\"f\"].T * h_prev @ Wh[\"f\"].T)': the right line, not that * stands where + belongs (lenient reading: P, the line differs from the three others only there)"),
    "ch03-p03c": ('P', "Python's 'tuple index out of range' at the test's line `assert split_gates(nn.LSTMCell(3, 2, bias=False))[2] is None, \"b must be None for a cell without biases\"`: the test's own text says the third value must be None (strict reading: Pa, nothing added to the error)"),
    "ch03-p03d": ('P', "at the student's line: 'a leaf Variable that requires grad is being used in an in-place operation. -- an in-place change (x += ..., x[...] = ..., x.add_) of a parameter ...: compute a new tensor instead'"),
    "ch03-p03e": ('P', "'your values are what you get with `(c.unsqueeze(0), h.unsqueeze(0))` where `(h.unsqueeze(0), c.unsqueeze(0))` is needed (in lstm_layer, the returned value)'"),
    "ch04-p04a": ('P', "'your values are what you get if you swap z and 1 - z in h' = (1 - z) * h~ + z * h': lerp(h, h_tilde, z) weighs h~ by z; that lerp's argument order is the reason is not said"),
    "ch04-p04b": ('M', "at the student's gi line: 'weight_ih @ x.T has shape (12, 2) and bias_ih has shape (12,): broadcasting ...; bias_ih[:, None] would line its axes up with the equal sizes of (12, 2)': the fix offered changes the bias, which is right, and keeps the column-form product (the (3H, B) gi then breaks chunk(3, dim=1)); the product's orientation is the cause (lenient reading: Pa, '(12, 2)' where (2, 12) is expected shows it)"),
    "ch04-p04c": ('P', "'`per_direction` ... gets 2 different values where the reference's gets 1: its second, from your line \"per_direction += blocks * (1 + int(bias)) * hidden_size\", is one the reference's never gets (a line that runs where it should not: a condition left out ...?)': the `if bias:` left out"),
    "ch04-p04d": ('P', "'your values are what you get with `h_tilde` where `(1 - z) * h_tilde` is needed (in gru_cell_textbook, the returned value)'"),
    "ch04-p04e": ('P', "'your result does not change when the r rows of bias_hh (b_hr) are replaced by other numbers, nor ... the z rows ...: those inputs are not used (a term left out?)': the hidden terms of r and z left out"),
    "ch05-p05a": ('P', "'reverse_padded, 2-D: 6 of 15 entries differ ... Likely cause: every wrong entry is in the padding (it must stay where it is, unchanged)': the % T reads the padding reversed"),
    "ch05-p05b": ('P', "'outputs: expected shape (2, 4, 5), got (2, 2, 5) ... one edit (in lstm_direction, the loop over `t`): another variable in place of the right one': the loop bound"),
    "ch05-p05c": ('P', "'h_n (no padding): ... Likely cause: your values are the expected ones transposed (dimensions 0 and 1 swapped)'"),
    "ch05-p05d": ('M', "at the student's layer(packed) line: 'layer is an nn.LSTM built with input_size=4, but what you give it has 3 features: build it with input_size=3 (a layer above another one reads that layer's outputs, H or 2H features, not the input's)': the fix named first rebuilds the layer, which is right; the parenthesis holds the right idea, but the cause (every layer given the packed x) is not said (lenient reading: Pa)"),
    "ch05-p05e": ('P', "'masked_mean takes (outputs, lengths), and your line passes `lengths` as outputs and `out` as lengths: two arguments in each other's place?'"),
    "ch06-p06a": ('-', "no visible test fails (build_vocab's visible tests use one-character tokens only, where joining and counting characters is the same)"),
    "ch06-p06b": ('P', "'the gradient of the loss with respect to the encoder's embeddings: no gradient arrived (it is None): the result was computed outside the autograd graph (torch.no_grad(), .detach(), ...)'"),
    "ch06-p06c": ('Pa', "at the student's `if not finished[b]:` line: 'finished has 2 items and b is 2: b counts something else than finished holds (what gives its values, and over which axis?)': the right tensors and 'which axis', but it blames b; the list sized with src.shape[1] is not named (lenient reading: P)"),
    "ch06-p06d": ('-', "no visible test fails (no visible test has a token with a capital letter)"),
    "ch06-p06e": ('P', "'logits (B, Ty, V): expected shape (2, 4, 10), got (4, 2, 10); ... axes swapped ... Likely cause: ... one edit (in teacher_forced_loss, the line that computes `logits`): an option of a call left out (its default used: dim, ...)'"),
    "ch07-p07a": ('M', "Python's 'LSTMCell.forward() missing 1 required positional argument: c_prev' at the test's call `out = cell(x, state)`, with '-- an argument left out: the message names it (... a cell needs its state ...)': the named cause (an argument left out of the call) blames the right call; the changed signature is not said (lenient reading: Pa)"),
    "ch07-p07b": ('M', "at the mask line: 'Likely cause: ... the sign flipped; or another number ...; outputs has shape (2, 12, 4) here, but (2, 6, 8) ...; it is made at your line outputs = torch.stack(left + right, 1) from the list left (6 items): what fills that list goes wrong (how many items, of which shape: the loop that appends to it?)': the right line, but the causes named (a sign, a number, the loop filling `left`) are not the student's (left + right joins the lists) (lenient reading: Pa)"),
    "ch07-p07c": ('P', "at `if mask:`: 'a tensor of several values used as one True or False (`if t:` ...)': the right cause; the fix offered (.any()/.all()) is not the one meant (`is not None`) (strict reading: Pa)"),
    "ch07-p07d": ('P', "'Attention.forward received hidden (2, 3), encoder_outputs (2, 5, 6), mask (2, 5): if Attention.forward passed its own test, check what forward passes to it -- self.Attn ... built for 10 input features, ... 9': the embedded token passed as hidden (strict reading: Pa, 'embedded' not named)"),
    "ch07-p07e": ('Pa', "'weights (stop once every sentence has produced <eos>): expected shape (2, 3, 4), got (2, 1, 4); dimension 1 is 3 times too small': the right tensor, not that one step's weights were kept (lenient reading: P)"),
    "ch08-p08a": ('P', "attend's error '~ (operator.invert) is only implemented on integer and Boolean-type tensors -- attend received ... mask (2, 4): if attend passed its own test, check what dot_attention passes to it': the mask passed (strict reading: Pa, 'float' not said)"),
    "ch08-p08b": ('M', "at the student's line: 'queries (2, 3, 1) @ enc.transpose(1, 2) (2, 5, 4) ...; enc in place of queries would give (2, 4, 4), energies in place of queries would give (2, 4, 4): which one is your equation ...?': the two replacements offered are not the student's (keys for enc), 'the tensor used' is generic (lenient reading: Pa)"),
    "ch08-p08c": ('P', "'once: must be a Python int, got a numpy.int64 (convert it with int(...))'"),
    "ch08-p08d": ('P', "at the student's line: 'W (6, 5) @ dec.transpose(1, 2) (2, 6, 3) ...; W.mT @ dec.transpose(1, 2) would give (2, 5, 3)': the offered form is the right product"),
    "ch08-p08e": ('P', "'your values are what you get with `dec.shape[1]` where `dec.shape[-1]` is needed (in scaled_dot_attention, the line that computes `D`)': the right line and fix (the student's dec.ndim gives the same 3 here)"),
    "ch09-p09a": ('Pa', "PyTorch's own 'Odd number of params or hiddens given to a bidirectional RNN' at the student's line, nothing added"),
    "ch09-p09b": ('P', "'alpha_1: ... Likely cause: your weights are a softmax of the expected energies times 0.5114 (a scale missing, doubled or of the wrong size?)'"),
    "ch09-p09c": ('-', "no visible test fails: the values are right; no visible test checks that W_attProj (through h_proj) gets a gradient from decode_teacher_forcing's scores"),
    "ch09-p09d": ('Pa', "'masked loss: got 2.31803, expected 1.73852 ... every variable that can be compared agrees ..., but the result differs: look at the line that returns it (...; the reference's reads `logits`, which yours does not)': the right line (the rescale), not what is wrong in it (lenient reading: P)"),
    "ch09-p09e": ('M', "'your first hypothesis [5, 3] scores -1.16488 ..., below the expected first [5, 3, 3, 5] ...: your beam keeps worse candidates than the best ones (sorted lowest first, or nsmallest ...?), or scores them otherwise': the guessed causes are not the student's (the loop stops at the first finished hypothesis) (lenient reading: N)"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.trial_main(sys.modules[__name__], "/tmp/student_trial_22p", argv)


if __name__ == "__main__":
    main()
