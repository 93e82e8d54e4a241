"""Student trial 22j: the acceptance trial of issue 22, 45 new mistakes and 18 correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed in 96a8bed, before solutions/
and the catalogues were read: benchmarks/results/student_trial_22j_plan.md); every one of them turned out to repeat
an old mutant, an earlier trial's mistake or its class, and was replaced by a new one written the same way (the
plan's second table); so were the variants that the reference, tests/alternatives or an old trial already had. A
mistake is one or more edits of one cell's reference code, ``(old, new)`` pairs whose ``old`` occurs once; a
variant rewrites the cell (or edits it) and must keep full marks. Only the cases and the verdicts live here:
building, grading (the class grader, one run per assignment), the Jupyter view and the report are
benchmarks/student_trial.py's and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22j unless --root says otherwise):

    nice -n 5 .venv/bin/python benchmarks/student_trial_22j.py --student-view [ch01 ...] [--students ch01-h01a,...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22j.py --grade [ch01 ...]
    .venv/bin/python benchmarks/student_trial_22j.py --table        # benchmarks/results/student_trial_22j.md's tables
    .venv/bin/python benchmarks/student_trial_22j.py --save benchmarks/results/student_trial_22j.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "h01a", "ch01_many_to_one", "ManyToOne starts the RNN from a random state, h0 = torch.randn(1, B, H) (copied from a tutorial), not from zeros",
        ("outputs, h_n = self.rnn(x)         #",
         "h0 = torch.randn(1, x.shape[0], self.rnn.hidden_size)   # the initial state\n"
         "        outputs, h_n = self.rnn(x, h0)         #"))
mistake("ch01", "h01b", "ch01_many_to_many_sync", "ManyToManySync returns the predicted tags, head(outputs).argmax(dim=-1), instead of the logits",
        ("return self.head(outputs)     #", "return self.head(outputs).argmax(dim=-1)     #"))
mistake("ch01", "h01c", "ch01_many_to_many_async", "ManyToManyAsync.__init__: the encoder line copied for the decoder and only the size changed: self.encoder = nn.RNN(tgt_size, ...) (self.decoder never made)",
        ("self.decoder = nn.RNN(tgt_size, hidden_size, batch_first=True)\n        self.head",
         "self.encoder = nn.RNN(tgt_size, hidden_size, batch_first=True)\n        self.head"))
mistake("ch01", "h01d", "ch01_train_step", "train_step computes the logits under torch.no_grad() (copied from the setup's accuracy()): the loss has no graph",
        ("    loss = F.cross_entropy(model(x), y)   #",
         "    with torch.no_grad():\n"
         "        logits = model(x)\n"
         "    loss = F.cross_entropy(logits, y)   #"))
mistake("ch01", "h01e", "ch01_fit", "fit: losses += train_step(...) (a float added to a list: += extends a list with an iterable)",
        ("losses.append(train_step(model, optimizer, x[idx], y[idx]))",
         "losses += train_step(model, optimizer, x[idx], y[idx])"))
variant("ch01", "x01a", "ch01_many_to_one", "ManyToOne: the head applied to every step's state, then the last step's logits taken, head(outputs)[:, -1]",
        ("return self.head(outputs[:, -1])", "return self.head(outputs)[:, -1]"))
variant("ch01", "x01b", "ch01_one_to_many", "OneToMany: x repeated at every step, then the steps after the first zeroed, inputs[:, 1:] = 0",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])  # (B, steps, D), all zeros\n"
         "        inputs[:, 0] = x                                     # x only at the first step",
         "inputs = x.unsqueeze(1).repeat(1, steps, 1)          # (B, steps, D): x at every step\n"
         "        inputs[:, 1:] = 0                                    # then zero after the first step"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "h02a", "ch02_rnn_cell", "rnn_cell with math.tanh (the setup imports math) on the (B, H) tensor",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)", "return math.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)"))
mistake("ch02", "h02b", "ch02_rnn_layer", "rnn_layer loops `for t in range(len(x))` (len of the batch-first x is B, not T)",
        ("for t in range(T):", "for t in range(len(x)):"))
mistake("ch02", "h02c", "ch02_rnn_layer", "rnn_layer appends h.unsqueeze(1) (ready for a cat) and then stacks them: outputs (B, T, 1, H)",
        ("outputs.append(h)", "outputs.append(h.unsqueeze(1))                 # (B, 1, H)"))
mistake("ch02", "h02d", "ch02_bptt_gradient_norms", "bptt loops over the distance k and reads h_{T-k} as states[:, -k] (for k = 0 that is states[:, 0] = h_1, not h_T)",
        ("    for t in range(states.shape[1] - 1, -1, -1):           # states[:, t] holds h_{t+1}\n"
         "        grad = (grad * (1 - states[:, t] ** 2)) @ W_hh     # (B, H): dL/dh_t\n",
         "    for k in range(states.shape[1]):                       # k steps from the end\n"
         "        grad = (grad * (1 - states[:, -k] ** 2)) @ W_hh    # (B, H): one step further back\n"))
mistake("ch02", "h02e", "ch02_bptt_gradient_norms", "bptt preallocates norms = torch.empty(T + 1) and fills norms[1:] in the loop (norms[0] never written: whatever the memory held)",
        ("    norms = [torch.linalg.vector_norm(grad)]\n"
         "    for t in range(states.shape[1] - 1, -1, -1):           # states[:, t] holds h_{t+1}\n"
         "        grad = (grad * (1 - states[:, t] ** 2)) @ W_hh     # (B, H): dL/dh_t\n"
         "        norms.append(torch.linalg.vector_norm(grad))\n"
         "    return torch.stack(norms)                              # (T + 1,)\n",
         "    T = states.shape[1]\n"
         "    norms = torch.empty(T + 1)                             # norms[k] for k = 0..T\n"
         "    for k in range(1, T + 1):                              # k steps before the end\n"
         "        grad = (grad * (1 - states[:, T - k] ** 2)) @ W_hh # (B, H): dL/dh_{T-k}\n"
         "        norms[k] = torch.linalg.vector_norm(grad)\n"
         "    return norms                                           # (T + 1,)\n"))
variant("ch02", "x02a", "ch02_bptt_gradient_norms", "bptt: `grad * (1 - h ** 2) @ W_hh` without parentheses (Python reads it left to right), norms as sqrt of sums of squares, range(T)[::-1]",
        code=("def bptt_gradient_norms(states, W_hh):\n"
              "    grad = torch.ones_like(states[:, -1])                   # (B, H): dL/dh_T\n"
              "    norms = [grad.pow(2).sum().sqrt()]\n"
              "    for t in range(states.shape[1])[::-1]:                 # T-1, ..., 0\n"
              "        grad = grad * (1 - states[:, t] ** 2) @ W_hh        # (grad * diag) @ W_hh\n"
              "        norms.append(grad.pow(2).sum().sqrt())\n"
              "    return torch.stack(norms)\n"))
variant("ch02", "x02b", "ch02_rnn_cell", "rnn_cell as a chain of in-place operations on the fresh product, (h_prev @ W_hh.T).add_(...).add_(b_h).tanh_()",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)",
         "return (h_prev @ W_hh.T).add_(x_t @ W_hx.T).add_(b_h).tanh_()"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "h03a", "ch03_lstm_cell", "lstm_cell: h = o * c.tanh_() (tanh_ squashes c itself: the returned c is tanh(c))",
        ("h = o * torch.tanh(c)  ", "h = o * c.tanh_()  "))
mistake("ch03", "h03b", "ch03_lstm_cell", "lstm_cell: c = f * c_prev + i + g (a + typed where * belongs)",
        ("c = f * c_prev + i * g  ", "c = f * c_prev + i + g  "))
mistake("ch03", "h03c", "ch03_lstm_cell_nobias", "lstm_cell_nobias adds 1.0 to the forget gate's pre-activation (the 'forget bias 1' trick read in a tutorial; the cell has no biases)",
        ('f = torch.sigmoid(x @ Wx["f"].T + h_prev @ Wh["f"].T)', 'f = torch.sigmoid(x @ Wx["f"].T + h_prev @ Wh["f"].T + 1.0)'))
mistake("ch03", "h03d", "ch03_split_gates", "split_gates with row slices n * H:(n + 1) * H over enumerate(GATES, 1) (numbered from 1: every gate gets the next block, o an empty one)",
        ("    Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))     # 4 blocks of (H, D), rows in the order i, f, g, o\n"
         "    Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))     # 4 blocks of (H, H)\n",
         "    H = cell.hidden_size\n"
         "    Wx = {k: cell.weight_ih[n * H:(n + 1) * H] for n, k in enumerate(GATES, 1)}   # (H, D) each\n"
         "    Wh = {k: cell.weight_hh[n * H:(n + 1) * H] for n, k in enumerate(GATES, 1)}   # (H, H) each\n"),
        ("    b = dict(zip(GATES, (cell.bias_ih + cell.bias_hh).chunk(4)))   #",
         "    b = {k: cell.bias_ih[n * H:(n + 1) * H] + cell.bias_hh[n * H:(n + 1) * H] for n, k in enumerate(GATES, 1)}   #"))
mistake("ch03", "h03e", "ch03_lstm_layer", "lstm_layer reads T as x.shape[-1] (the (B, D, T) layout of conv1d; here that is D)",
        ("B, T, _ = x.shape", "B, T = x.shape[0], x.shape[-1]"))
variant("ch03", "x03a", "ch03_lstm_cell_nobias", "lstm_cell_nobias with a dict comprehension of the four pre-activations, then the activations",
        code=("def lstm_cell_nobias(x, h_prev, c_prev, Wx, Wh):\n"
              "    pre = {k: x @ Wx[k].T + h_prev @ Wh[k].T for k in ('i', 'f', 'g', 'o')}   # (B, H) each\n"
              "    i, f, o = (torch.sigmoid(pre[k]) for k in ('i', 'f', 'o'))\n"
              "    g = torch.tanh(pre['g'])\n"
              "    c = f * c_prev + i * g\n"
              "    return o * torch.tanh(c), c\n"))
variant("ch03", "x03b", "ch03_lstm_layer", "lstm_layer: each state unsqueezed to (B, 1, H) and joined with torch.cat(dim=1); the final states from torch.stack([h])",
        code=("def lstm_layer(cell, x, hidden_size, state=None):\n"
              "    B, T, _ = x.shape\n"
              "    if state is None:\n"
              "        h, c = x.new_zeros(B, hidden_size), x.new_zeros(B, hidden_size)\n"
              "    else:\n"
              "        h, c = state[0].reshape(B, hidden_size), state[1].reshape(B, hidden_size)\n"
              "    steps = []\n"
              "    for t in range(T):\n"
              "        h, c = cell(x[:, t], (h, c))\n"
              "        steps.append(h.unsqueeze(1))                   # (B, 1, H)\n"
              "    return torch.cat(steps, dim=1), (torch.stack([h]), torch.stack([c]))\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "h04a", "ch04_gru_cell_textbook", "gru_cell_textbook: `h = r * h` (the reset state given the old name), then the interpolation z * h uses the reset state",
        ("    h_tilde = torch.tanh(x @ W_nx.T + (r * h) @ W_nh.T + b_n)  #",
         "    h = r * h                                                   # the reset state\n"
         "    h_tilde = torch.tanh(x @ W_nx.T + h @ W_nh.T + b_n)  #"))
mistake("ch04", "h04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch with slices; the candidate's blocks read as gi[:, -H] and gh[:, -H] (the colon of [:, -H:] lost: one column, (B,))",
        ("    i_r, i_z, i_n = gi.chunk(3, dim=1)      # each (B, H)\n"
         "    h_r, h_z, h_n = gh.chunk(3, dim=1)      # each (B, H)\n",
         "    H = h.shape[1]\n"
         "    i_r, i_z, i_n = gi[:, :H], gi[:, H:2 * H], gi[:, -H]   # the r, z, n blocks\n"
         "    h_r, h_z, h_n = gh[:, :H], gh[:, H:2 * H], gh[:, -H]\n"))
mistake("ch04", "h04c", "ch04_count_parameters", "count_parameters: `... + blocks * 2 * hidden_size if bias else 0` on one line (the conditional takes the whole sum: 0 without biases)",
        ("        per_direction = blocks * (hidden_size * layer_input + hidden_size * hidden_size)\n"
         "        if bias:\n"
         "            per_direction += blocks * 2 * hidden_size   # bias_ih and bias_hh\n",
         "        per_direction = blocks * (hidden_size * layer_input + hidden_size * hidden_size) + blocks * 2 * hidden_size if bias else 0\n"))
mistake("ch04", "h04d", "ch04_count_parameters", "count_parameters multiplies by the directions in the loop AND once more at the end (return total * directions)",
        ("    return total\n", "    return total * directions\n"))
mistake("ch04", "h04e", "ch04_count_parameters", "count_parameters counts a bidirectional layer as ONE layer twice as wide (hidden_size doubled, one direction), not two directions of hidden_size",
        ("    directions = 2 if bidirectional else 1\n",
         "    hidden_size = hidden_size * (2 if bidirectional else 1)   # both directions side by side: one wider layer\n"
         "    directions = 1\n"))
variant("ch04", "x04a", "ch04_gru_cell_pytorch", "gru_cell_pytorch: the two products viewed as (B, 3, H) and read by index [:, 0], [:, 1], [:, 2]",
        code=("def gru_cell_pytorch(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    B, H = h.shape\n"
              "    gi = (x @ weight_ih.T + bias_ih).view(B, 3, H)       # blocks r, z, n\n"
              "    gh = (h @ weight_hh.T + bias_hh).view(B, 3, H)\n"
              "    r = torch.sigmoid(gi[:, 0] + gh[:, 0])\n"
              "    z = torch.sigmoid(gi[:, 1] + gh[:, 1])\n"
              "    n = torch.tanh(gi[:, 2] + r * gh[:, 2])\n"
              "    return (1 - z) * n + z * h\n"))
variant("ch04", "x04b", "ch04_gru_cell_textbook", "gru_cell_textbook with the stacked weights viewed (3, H, .) and broadcast matmuls x @ W.mT (3, B, H)",
        code=("def gru_cell_textbook(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    H = h.shape[1]\n"
              "    Wx = weight_ih.view(3, H, -1)                          # (3, H, D)\n"
              "    Wh = weight_hh.view(3, H, H)                           # (3, H, H)\n"
              "    b = (bias_ih + bias_hh).view(3, 1, H)                  # (3, 1, H)\n"
              "    gx = x @ Wx.mT + b                                     # (3, B, H)\n"
              "    r = torch.sigmoid(gx[0] + h @ Wh[0].T)\n"
              "    z = torch.sigmoid(gx[1] + h @ Wh[1].T)\n"
              "    h_tilde = torch.tanh(gx[2] + (r * h) @ Wh[2].T)\n"
              "    return (1 - z) * h_tilde + z * h\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "h05a", "ch05_reverse_padded", "reverse_padded: x.gather(-1, idx) (the last axis: time only for a 2-D x; for (B, T, D) it reads features)",
        ("return x.gather(1, idx)", "return x.gather(-1, idx)"))
mistake("ch05", "h05b", "ch05_final_states", "final_states slices the halves of a row-indexed result without the row axis: outputs[rows, last][:H] and outputs[:, 0][H:] (rows cut, not features)",
        ("forward_last = outputs[rows, last, :H]", "forward_last = outputs[rows, last][:H]"),
        ("backward_first = outputs[:, 0, H:]", "backward_first = outputs[:, 0][H:]"))
mistake("ch05", "h05c", "ch05_bilstm_from_cells", "BiLSTMFromCells: the backward cell reads the forward direction's outputs reversed (a stacked layer, not a second direction over x)",
        ("lstm_direction(self.bwd, reverse_padded(x, lengths), lengths)", "lstm_direction(self.bwd, reverse_padded(out_f, lengths), lengths)"))
mistake("ch05", "h05d", "ch05_masked_mean", "masked_mean: outputs[:, :lengths].sum(dim=1) (a slice bounded by the (B,) tensor of lengths, as if it were one number)",
        ("total = (outputs * mask.unsqueeze(-1)).sum(dim=1)", "total = outputs[:, :lengths].sum(dim=1)"))
mistake("ch05", "h05e", "ch05_residual_stack", "ResidualLSTMStack returns (h_n, c_n) of the last layer only, the loop's variables (1, B, H), not every layer's (L, B, H)",
        ("return h, (torch.stack(hs), torch.stack(cs))", "return h, (h_n, c_n)"))
variant("ch05", "x05a", "ch05_sentence_classifier", "SentenceClassifier: the head applied at every step, then masked_mean of the logits (the mean of a linear map is the map of the mean)",
        ("return self.head(masked_mean(out, lengths))", "return masked_mean(self.head(out), lengths)"))
variant("ch05", "x05b", "ch05_masked_mean", "masked_mean: the real steps gathered by boolean indexing and summed per row with index_add_, divided by the lengths",
        code=("def masked_mean(outputs, lengths):\n"
              "    B, T, F_ = outputs.shape\n"
              "    lengths = lengths.to(outputs.device)\n"
              "    mask = torch.arange(T, device=outputs.device) < lengths[:, None]           # (B, T)\n"
              "    rows = torch.arange(B, device=outputs.device)[:, None].expand(B, T)[mask]  # (N,)\n"
              "    total = outputs.new_zeros(B, F_).index_add(0, rows, outputs[mask])        # (B, F)\n"
              "    return total / lengths[:, None].to(outputs.dtype)\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "h06a", "ch06_build_vocab", "build_vocab: return SPECIALS + kept.sort(key=...) (list.sort sorts in place and returns None)",
        ("    kept.sort(key=lambda token: (-counts[token], token))\n    return SPECIALS + kept\n",
         "    return SPECIALS + kept.sort(key=lambda token: (-counts[token], token))\n"))
mistake("ch06", "h06b", "ch06_pad_batch", "pad_batch writes every sequence into every row, padded[:, :len(seq)] = ... (the row index b forgotten)",
        ("padded[b, : len(seq)] = torch.tensor(seq, dtype=torch.long)", "padded[:, : len(seq)] = torch.tensor(seq, dtype=torch.long)"))
mistake("ch06", "h06c", "ch06_encoder", "Encoder: outputs = pad_packed_sequence(...) (its (padded, lengths) tuple not unpacked)",
        ("outputs, _ = pad_packed_sequence(", "outputs = pad_packed_sequence("))
mistake("ch06", "h06d", "ch06_teacher_forced_loss", "teacher_forced_loss marks the padding targets -100 (cross_entropy's default ignore_index) in place: dec_out is a view of tgt, so tgt changes",
        ("    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), ignore_index=pad_index)\n",
         "    dec_out[dec_out == pad_index] = -100                # ignored by cross_entropy's default ignore_index\n"
         "    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1))\n"))
mistake("ch06", "h06e", "ch06_greedy_decode", "greedy_decode: outputs = [[]] * B (B references to ONE list: every token goes into every row)",
        ("outputs = [[] for _ in range(src.shape[0])]", "outputs = [[]] * src.shape[0]"))
variant("ch06", "x06a", "ch06_numericalize", "numericalize with collections.defaultdict(lambda: UNK_INDEX, stoi) and list concatenation of the specials",
        code=("def numericalize(tokens, stoi, add_sos=False, add_eos=False):\n"
              "    from collections import defaultdict\n"
              "    lookup = defaultdict(lambda: UNK_INDEX, stoi)\n"
              "    ids = [lookup[token] for token in tokens]\n"
              "    return ([SOS_INDEX] if add_sos else []) + ids + ([EOS_INDEX] if add_eos else [])\n"))
variant("ch06", "x06b", "ch06_teacher_forced_loss", "teacher_forced_loss: cross_entropy on the real positions only, picked by a boolean mask (logits[real], dec_out[real])",
        ("    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), ignore_index=pad_index)\n",
         "    real = dec_out != pad_index                         # (B, Ty)\n"
         "    loss = F.cross_entropy(logits[real], dec_out[real])\n"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "h07a", "ch07_lstm_cell", "LSTMCell.forward: h_prev, c_prev = state[0] (unpacks the (B, H) hidden state along the batch, not the tuple)",
        ("h_prev, c_prev = state    ", "h_prev, c_prev = state[0] "))
mistake("ch07", "h07b", "ch07_encoder", "EncoderRNN: zeros = src.new_zeros(B, H) (new_zeros of the token ids: int64 zero states)",
        ("zeros = emb.new_zeros(B, self.hidden_size)", "zeros = src.new_zeros(B, self.hidden_size)"))
mistake("ch07", "h07c", "ch07_attention", "Attention: scores = energy @ self.v[:, None] ((B, Tx, 1): the softmax over the last axis then runs over one entry)",
        ("scores = energy @ self.v  ", "scores = energy @ self.v[:, None]  "))
mistake("ch07", "h07d", "ch07_decoder", "AttnDecoderRNN: weights = weights.unsqueeze(1) for the bmm (the name reused), so the returned weights are (B, 1, Tx)",
        ("        weighted_encoder = torch.bmm(weights[:, None, :], encoder_outputs)[:, 0]\n",
         "        weights = weights.unsqueeze(1)                             # (B, 1, Tx) for bmm\n"
         "        weighted_encoder = torch.bmm(weights, encoder_outputs)[:, 0]\n"))
mistake("ch07", "h07e", "ch07_greedy", "greedy_translate: y = log_probs.argmax(dim=-1, keepdim=True) (B, 1) fed back to decode_step",
        ("y = log_probs.argmax(dim=-1)  ", "y = log_probs.argmax(dim=-1, keepdim=True)  "))
variant("ch07", "x07a", "ch07_attention", "Attention: the scores with F.linear(energy, v[None]) (v as a one-row weight), squeezed",
        ("scores = energy @ self.v  ", "scores = F.linear(energy, self.v[None]).squeeze(-1)  "))
variant("ch07", "x07b", "ch07_decoder", "AttnDecoderRNN: the output layer as torch.addmm(Out.bias, features, Out.weight.T), the log-softmax as a method",
        ("        scores = self.Out(torch.cat([h, weighted_encoder, embedded], dim=-1))\n"
         "        return F.log_softmax(scores, dim=-1), (h, c), weights\n",
         "        features = torch.cat([h, weighted_encoder, embedded], dim=-1)\n"
         "        scores = torch.addmm(self.Out.bias, features, self.Out.weight.T)\n"
         "        return scores.log_softmax(dim=-1), (h, c), weights\n"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "h08a", "ch08_attend", "attend: torch.softmax(energies, dim=-1, dtype=torch.float64) (float64 weights for precision; the values stay float32)",
        ("weights = torch.softmax(energies, dim=-1)  ", "weights = torch.softmax(energies, dim=-1, dtype=torch.float64)  "))
mistake("ch08", "h08b", "ch08_dot", "dot_attention: torch.tensordot(dec, enc, dims=([2], [2])) (tensordot has no batch axis: (B, Ty, B, Tx))",
        ("energies = dec @ enc.transpose(1, 2)   #", "energies = torch.tensordot(dec, enc, dims=([2], [2]))   #"))
mistake("ch08", "h08c", "ch08_scaled_dot", "scaled_dot_attention: dec @ dec.transpose(1, 2) / sqrt(D) (dec twice: copy slip)",
        ("energies = dec @ enc.transpose(1, 2) / math.sqrt(D)", "energies = dec @ dec.transpose(1, 2) / math.sqrt(D)"))
mistake("ch08", "h08d", "ch08_reduced_rank", "reduced_rank_attention computes the keys 'once' under torch.no_grad() (cached like a constant: no gradient to V or enc)",
        ("    keys = enc @ V.T                             #",
         "    with torch.no_grad():                        # computed once, like a constant\n"
         "        keys = enc @ V.T                         #"))
mistake("ch08", "h08e", "ch08_macs", "reduced_rank_macs counts a multiply-add as 2 operations (FLOPs: 2 R D per matrix-vector product, 2 R per dot product)",
        ("    keys = Tx * R * Dh          #", "    keys = 2 * Tx * R * Dh      #"),
        ("    queries = Ty * R * Dd       #", "    queries = 2 * Ty * R * Dd   #"),
        ("    dots = Ty * Tx * R          #", "    dots = 2 * Ty * Tx * R      #"))
variant("ch08", "x08a", "ch08_scaled_dot", "scaled_dot_attention: the keys scaled before the product, dec @ (enc / sqrt(D))^T; the values are the unscaled enc",
        ("energies = dec @ enc.transpose(1, 2) / math.sqrt(D)", "energies = dec @ (enc / math.sqrt(D)).transpose(1, 2)"))
variant("ch08", "x08b", "ch08_attend", "attend: the weights as exp(e - logsumexp(e)) of the masked energies",
        ("weights = torch.softmax(energies, dim=-1)  ", "weights = torch.exp(energies - torch.logsumexp(energies, dim=-1, keepdim=True))  "))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "h09a", "ch09_encode", "encode: out, h_n, c_n = model.encoder(packed) (the LSTM's (out, (h_n, c_n)) flattened into three names)",
        ("out, (h_n, c_n) = model.encoder(packed)", "out, h_n, c_n = model.encoder(packed)"))
mistake("ch09", "h09b", "ch09_decode_step", "decode_step masks with ~mask[:, None, :] (exercise 8's (B, 1, Tx) broadcast) on the (B, Tx) energies",
        ('e = e.masked_fill(~mask, float("-inf"))', 'e = e.masked_fill(~mask[:, None, :], float("-inf"))'))
mistake("ch09", "h09c", "ch09_teacher_forcing", "decode_teacher_forcing feeds tgt_in[:, t:t + 1] (a (B, 1) slice) where the step takes (B,) ids",
        ("decode_step(model, tgt_in[:, t], o,", "decode_step(model, tgt_in[:, t:t + 1], o,"))
mistake("ch09", "h09d", "ch09_masked_loss", "masked_loss: F.cross_entropy(logits[real], tgt_out.reshape(-1)) (the scores picked by the mask, the targets not)",
        ("    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)\n",
         "    real = tgt_out != PAD                                  # (B, Ty)\n"
         "    return F.cross_entropy(logits[real], tgt_out.reshape(-1))\n"))
mistake("ch09", "h09e", "ch09_beam_search", "beam_search extends a hypothesis with new = tokens; new.append(tok) (every candidate shares, and grows, the hypothesis' one list)",
        ("candidates.append((score + lp, tokens + [tok], new_state))",
         "new = tokens\n                new.append(tok)\n                candidates.append((score + lp, new, new_state))"))
variant("ch09", "x09a", "ch09_masked_loss", "masked_loss: nn.NLLLoss(ignore_index=PAD) on log_softmax with the classes on axis 1, (B, V, Ty)",
        ("    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)\n",
         "    return nn.NLLLoss(ignore_index=PAD)(F.log_softmax(logits, dim=-1).permute(0, 2, 1), tgt_out)\n"))
variant("ch09", "x09b", "ch09_beam_search", "beam_search with the live hypotheses in a dict keyed by token tuples, candidates ranked by sorted(..., reverse=True) (stable)",
        code=("def beam_search(step_fn, start_state, beam_size=3, max_len=20, alpha=1.0):\n"
              "    live = {(): (0.0, start_state)}                       # tokens (a tuple) -> (sum of log-probs, state)\n"
              "    finished = []\n"
              "    for _ in range(max_len):\n"
              "        candidates = []\n"
              "        for tokens, (score, state) in live.items():\n"
              "            log_probs, new_state = step_fn(tokens[-1] if tokens else SOS, state)\n"
              "            for tok, lp in enumerate(log_probs.tolist()):\n"
              "                candidates.append((score + lp, tokens + (tok,), new_state))\n"
              "        candidates = sorted(candidates, key=lambda cand: cand[0], reverse=True)\n"
              "        live = {}\n"
              "        for score, tokens, state in candidates[: beam_size - len(finished)]:\n"
              "            if tokens[-1] == EOS:\n"
              "                finished.append((list(tokens[:-1]), score / len(tokens) ** alpha))\n"
              "            else:\n"
              "                live[tokens] = (score, state)\n"
              "        if not live:\n"
              "            break\n"
              "    finished += [(list(tokens), score / len(tokens) ** alpha) for tokens, (score, _) in live.items()]\n"
              "    return sorted(finished, key=lambda hyp: hyp[1], reverse=True)\n"))

CASES = M + OK

# ------------------------------------------------------------------------------------------------------ verdicts
# The rule (strict), reading ONLY the first failing visible test's message as the student sees it in Jupyter:
#   P  points to the cause: a student reading only it knows which line / term to change (and how);
#   Pa partly: it names the right function, tensor or line (or where the values go wrong) but not what is wrong,
#      a bare value mismatch, or PyTorch's own error with no cause;
#   N  not at all: nothing in it leads to the cause;
#   M  misleading: it names a wrong cause, or blames code that is right.
# "-": no visible test fails. Read from student_view.json after the merge of 86643f8 (the go commit, 12:53 UTC).
VERDICTS: dict[str, tuple[str, str]] = {
    "ch01-h01a": ("Pa", "ManyToOne(x): 12 of 12 entries differ (largest 0.0046): a bare mismatch of the right function; the random "
                        "initial state is not said (and the numbers change from run to run: the grader's run got another text, "
                        "with a likely cause 'what one step passes to the next', not the student's)"),
    "ch01-h01b": ("P", "expected shape (2, 5, 6), got (2, 5): 'axis 2 (size 6) ... is missing: ... reduced over (a sum or mean too "
                       "many?)': the argmax reduces the class axis; drop it and return the logits"),
    "ch01-h01c": ("P", "'object has no attribute decoder -- ... one edit (in ManyToManyAsync.__init__): a step left out': the "
                       "decoder is never made (Python's 'did you mean encoder?' is its own)"),
    "ch01-h01d": ("P", "at loss.backward(): 'the result was cut from the graph (torch.no_grad(), .detach(), .item())': the "
                       "torch.no_grad() block is named"),
    "ch01-h01e": ("Pa", "Python's own \"'float' object is not iterable\" at `losses += train_step(...)`: the line, no course "
                        "text (that += extends a list, append adds one item, is left to the student; read as self-sufficient, "
                        "as trial 22i read its ch06-h06a, it would be P)"),
    "ch02-h02a": ("Pa", "the line with math.tanh and 'int() or float() of a tensor of several values: convert one entry "
                        "(t[b].item()) or keep a tensor': the conversion is the right mechanism, but math.tanh is not named "
                        "and the fixes offered (.item(), .tolist()) do not fit; torch.tanh is not said"),
    "ch02-h02b": ("P", "shape (2, 2, 4) for (2, 5, 4), then two single edits: 'two variables in each other's place' (not the "
                       "student's) OR 'in rnn_layer, the loop over `t`: another variable in place of the right one' (these give "
                       "the same error): the second, located one is exactly len(x) for T (a stricter reading, the wrong "
                       "alternative listed first, would make it M)"),
    "ch02-h02c": ("P", "'got (2, 5, 1, 4); an extra dimension of size 1 (index it with [0] or squeeze it)': the unsqueeze(1) "
                       "before the stack is the extra axis"),
    "ch02-h02d": ("Pa", "'the entries at index 0 are right and every later index is wrong: ... what one step passes to the next "
                        "goes wrong (the state carried over, or the input fed to the next step...)': the first step of the "
                        "recursion is located, not that states[:, -k] reads h_1 for k = 0"),
    "ch02-h02e": ("Pa", "'1 of 5 entries differ ... got 3.4e-18, expected 2.45 ... the wrong entries are only at index 0': "
                        "located (norms[0]), not that it is never written (torch.empty)"),
    "ch03-h03a": ("P", "c differs: 'your values are what you get with ... `torch.tanh(c)` where `c` is needed (in lstm_cell, the "
                       "returned value)': the returned c is tanh(c); the only tanh on c is c.tanh_() (that it works in place is "
                       "left to the student)"),
    "ch03-h03b": ("Pa", "c (the new cell state): 8 of 8 entries differ: a bare mismatch (i + g for i * g not named)"),
    "ch03-h03c": ("Pa", "c of lstm_cell_nobias: 8 of 8 entries differ: a bare mismatch (the + 1.0 in the forget gate not named)"),
    "ch03-h03d": ("Pa", "\"Wx['o']: expected shape (2, 3), got (0, 3)\": the empty block of o is shown, not that the slices are "
                        "numbered from 1"),
    "ch03-h03e": ("P", "outputs (2, 3, 4) for (2, 5, 4), 'in lstm_layer, the loop over `t`: another variable in place of the "
                       "right one': the loop's bound T, read from x.shape[-1]"),
    "ch04-h04a": ("P", "'`z * (r * h)` where `z * h` is needed (in gru_cell_textbook, the returned value)': h was rebound to r * h"),
    "ch04-h04b": ("M", "at `n = torch.tanh(i_n + r * h_n)`: r (2, 4) against h_n (2,), 'h_n[:, None] would line its axes up': "
                       "the fix offered is wrong (it broadcasts one column over the block, silently); h_n must be the (B, H) "
                       "block: the colon of gh[:, -H:] is missing"),
    "ch04-h04c": ("Pa", "count_parameters('rnn', 5, 7, bias=False): got 0, expected 84: the case is shown (0 without biases), "
                        "not the conditional expression that takes the whole sum"),
    "ch04-h04d": ("Pa", "count_parameters('lstm', 8, 16, num_layers=2, bidirectional=True): got 19456, expected 9728: a bare "
                        "mismatch (exactly 2x, not said; the directions counted twice not named)"),
    "ch04-h04e": ("M", "'your values are what you get with one edit (in count_parameters, the line that computes "
                       "`per_direction`): an expression written where only one of its variables is needed': that line is the "
                       "reference's; the cause is hidden_size doubled and directions = 1 (a bidirectional layer counted as "
                       "one wider layer)"),
    "ch05-h05a": ("P", "index out of bounds at `return x.gather(-1, idx)`, 'the returned value: another number (an index, axis, "
                       "size or count off?)': the axis -1 for 1"),
    "ch05-h05b": ("M", "at the torch.cat: forward_last (2, 4), backward_first (1, 4), 'dim=-2 would join them there': a wrong "
                       "fix; the halves were cut from the rows ([:H] on a (B, 2H) result), the join axis is right"),
    "ch05-h05c": ("P", "input_size 5 for 3 inside lstm_direction, 'check what forward passes to it -- ... (in "
                       "BiLSTMFromCells.forward, the line that computes `out_b, h_b, c_b`): another variable in place of the "
                       "right one': out_f for x"),
    "ch05-h05d": ("Pa", "PyTorch's 'only integer tensors of a single element can be converted to an index' at "
                        "`outputs[:, :lengths]`: the line, no cause or fix (a mask)"),
    "ch05-h05e": ("M", "h_n (1, 2, 4) for (3, 2, 4), 'Likely cause: ... the loop over `l, layer`: a line indented into a loop, "
                       "or out of it (a return, a break or an update in the wrong place)': nothing is misplaced; the return "
                       "gives the loop's last (h_n, c_n) instead of the stacked hs, cs"),
    "ch06-h06a": ("M", "at `return SPECIALS + kept.sort(...)`: 'a value is None: an argument that may be None (...mask=None...), "
                       "or a function of yours that ends without `return`': neither; list.sort sorts in place and returns None "
                       "(Python's own text shows the None, the course's causes point elsewhere)"),
    "ch06-h06b": ("Pa", "'expected right padding with 0, got [[9, 10, 7], [9, 10, 7], [9, 10, 7]]': every row the same is "
                        "visible, the missing row index is not said"),
    "ch06-h06c": ("P", "'outputs: expected a torch.Tensor, got a tuple of 2 items': pad_packed_sequence's pair not unpacked"),
    "ch06-h06d": ("P", "'tgt was changed by your function ... 0 before, -100 after; it writes into its input (... x[...] = ... or "
                       "a view of x): compute a new tensor (out of place, or on x.clone())'"),
    "ch06-h06e": ("M", "all rows equal: 'one value used for every row of the batch (an argmax or max without dim=, an index that "
                       "is not per row, or one row broadcast over the others?)': the argmax and the indices are right; the rows "
                       "are one list ([[]] * B), which none of the causes says"),
    "ch07-h07a": ("Pa", "c differs: 'your result does not change when c_prev is replaced by other numbers: that input is not "
                        "used (a term left out?)': true (the state's c is never read), but the guess 'a term left out' points at "
                        "the c line, not at `h_prev, c_prev = state[0]`"),
    "ch07-h07b": ("Pa", "long vs float at the LSTMCell's product, 'check what forward passes to it -- ... token ids (int64) go "
                        "through an embedding first ... (.float(), or the right tensor?)': the call is located, but not which "
                        "argument is int64 (the zero state from src.new_zeros)"),
    "ch07-h07c": ("M", "at the masked_fill: scores (2, 6, 1) against ~mask (2, 6), 'mask[:, :, None] would line its axes up': a "
                       "wrong fix (the softmax then runs over one entry); the scores must be (B, Tx): energy @ self.v, not "
                       "@ v[:, None]"),
    "ch07-h07d": ("P", "'weights: expected shape (2, 5), got (2, 1, 5); an extra dimension of size 1 (index it with [0] or "
                       "squeeze it)': the weights were reassigned to their unsqueezed form"),
    "ch07-h07e": ("Pa", "PyTorch's 'output with shape [2] doesn't match the broadcast shape [2, 2]' at `done |= y == eos_index`: "
                        "the line, nothing added (y (B, 1) from keepdim=True not said)"),
    "ch08-h08a": ("P", "'expected scalar type Double but found Float -- float32 and float64 tensors are mixed: convert with "
                       ".to(x.dtype)' at the contexts line: the float64 weights from dtype=torch.float64"),
    "ch08-h08b": ("Pa", "'dot_attention passes attend energies of shape (2, 3, 2, 4) ... they must be (B, Ty, Tx)': the wrong "
                        "shape at the right line, not that tensordot pairs every batch with every batch"),
    "ch08-h08c": ("P", "energies (2, 3, 3) for (2, Ty, 4), 'the line that computes `energies`: another variable in place of the "
                       "right one': dec for enc"),
    "ch08-h08d": ("-", "full marks and no visible failure: the values are right and no test of Part 5 takes a gradient; the keys "
                       "computed under torch.no_grad() give V and the encoder states no gradient through the energies"),
    "ch08-h08e": ("M", "'your values are what you get if you count everything B=2 times too often (multiplied by B once too "
                       "many)': B is counted right; every multiply-add was counted as 2 operations (the factor 2 equals B by "
                       "chance)"),
    "ch09-h09a": ("P", "'not enough values to unpack (expected 3, got 2)' at `out, h_n, c_n = model.encoder(packed)`, 'unpacking "
                       "a call means the function returns another number of values': the LSTM returns (out, (h_n, c_n))"),
    "ch09-h09b": ("M", "'batch1 must be a 3D tensor' at the context's bmm, '... a 2-D state needs [:, None] first': the bmm line "
                       "is right; alpha is (B, B, Tx) because the mask was broadcast as (B, 1, Tx) on (B, Tx) energies"),
    "ch09-h09c": ("Pa", "logits (2, 4, 2, 6) for (2, 4, 6): 'an extra axis 2 of size 2: every step kept where one is asked (index "
                        "it), or a reduction over it missing?': the extra axis is shown, the input slice tgt_in[:, t:t + 1] is "
                        "not located (indexing the logits would be the wrong place)"),
    "ch09-h09d": ("M", "'logits[real] has 6 rows of scores but tgt_out.reshape(-1) has 8 targets' (true: that alone shows the "
                       "cause), then the named causes 'a loop that runs one step too many or too few, or targets not shifted "
                       "by one' and 'two arguments of a call in each other's place': none is the student's (the targets are "
                       "not masked like the scores)"),
    "ch09-h09e": ("Pa", "beam_size=1: hypotheses [[0, 1, 2, 3, 4, 5, 0, 1, ...]], expected [[5, 3, 3, 5]]: a bare mismatch; the "
                        "list holding every token tried shows the sharing, not said"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.run_trial(sys.modules[__name__], "/tmp/student_trial_22j", argv)


if __name__ == "__main__":
    main()
