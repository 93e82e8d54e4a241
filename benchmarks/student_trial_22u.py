"""Student trial 22u: an acceptance trial of issue 22, 45 new mistakes and 18 correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed before solutions/ and the catalogues
were read: benchmarks/results/student_trial_22u_plan.md); every planned mistake and variant that repeated an old
mutant, an alternative or an earlier trial's case was replaced by a new one written the same way (the plan's second
table lists what each replaced case repeated). A mistake is one or more edits of one cell's reference code,
``(old, new)`` pairs whose ``old`` occurs once; a variant rewrites the cell (or edits it) and must keep full marks.
Only the cases and the verdicts live here: building, grading (the class grader, one run per assignment), the Jupyter
view and the report are benchmarks/student_trial.py's and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22u unless --root says otherwise):

    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22u.py --student-view [ch01 ...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22u.py --grade [ch01 ...]
    /work/main/.venv/bin/python benchmarks/student_trial_22u.py --table     # benchmarks/results/student_trial_22u.md's tables
    /work/main/.venv/bin/python benchmarks/student_trial_22u.py --save benchmarks/results/student_trial_22u.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "u01a", "ch01_many_to_one", "ManyToOne builds its recurrent layer as an nn.GRU ('a GRU learns the majority task faster'): the attribute rnn is not the nn.RNN the docstring names",
        ("self.rnn = nn.RNN(input_size, hidden_size, batch_first=True)", "self.rnn = nn.GRU(input_size, hidden_size, batch_first=True)   # a GRU learns faster"))
mistake("ch01", "u01b", "ch01_train_step", "train_step asks F.cross_entropy for one loss per example, reduction='none', and back-propagates them (the mean forgotten)",
        ("loss = F.cross_entropy(model(x), y)   # logits (B, C), targets (B,)", "loss = F.cross_entropy(model(x), y, reduction=\"none\")   # one loss per example"))
mistake("ch01", "u01c", "ch01_fit", "fit returns a smoothed loss curve, 0.9 * previous + 0.1 * loss ('the plot looks better'), not the losses themselves",
        ("        losses.append(train_step(model, optimizer, x[idx], y[idx]))\n",
         "        loss = train_step(model, optimizer, x[idx], y[idx])\n"
         "        losses.append(0.9 * losses[-1] + 0.1 * loss if losses else loss)   # a smoothed curve\n"))
mistake("ch01", "u01d", "ch01_fit", "fit calls .item() on what train_step returns (already a Python float)",
        ("losses.append(train_step(model, optimizer, x[idx], y[idx]))", "losses.append(train_step(model, optimizer, x[idx], y[idx]).item())"))
mistake("ch01", "u01e", "ch01_one_to_many", "OneToMany passes its zero initial state explicitly, x.new_zeros(B, H) (exercise 2's (B, H) layout), where nn.RNN wants (1, B, H)",
        ("outputs, _ = self.rnn(inputs)                        # (B, steps, H)",
         "h0 = x.new_zeros(x.shape[0], self.rnn.hidden_size)   # the initial state is zero\n"
         "        outputs, _ = self.rnn(inputs, h0)                    # (B, steps, H)"))
variant("ch01", "y01a", "ch01_many_to_many_sync", "ManyToManySync runs the RNN again on every prefix x_1..x_t and keeps its final state (step t's output uses x_1..x_t only)",
        ("outputs, _ = self.rnn(x)      # (B, T, H)\n        return self.head(outputs)     # (B, T, C): nn.Linear acts on the last dimension",
         "states = [self.rnn(x[:, :t + 1])[1][0] for t in range(x.shape[1])]   # the state after x_1..x_t\n"
         "        return self.head(torch.stack(states, dim=1))"))
variant("ch01", "y01b", "ch01_fit", "fit indexes each batch with a Python list of row numbers, idx.tolist()",
        ("idx = torch.randint(0, len(x), (batch_size,), generator=g)   # (batch_size,)",
         "idx = torch.randint(0, len(x), (batch_size,), generator=g).tolist()   # the rows, as a list"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "u02a", "ch02_rnn_layer", "rnn_layer picks its initial state with Python's `or` idiom, h = h0 or zeros (the truth value of a tensor)",
        ("h = x.new_zeros(B, W_hh.shape[0]) if h0 is None else h0   # (B, H)", "h = h0 or x.new_zeros(B, W_hh.shape[0])         # (B, H): h0, or zeros"))
mistake("ch02", "u02b", "ch02_rnn_layer", "rnn_layer reads B, T, _ = x.shape before turning a time-first x round (B and T swapped for batch_first=False)",
        ("    if not batch_first:\n        x = x.transpose(0, 1)                          # (B, T, D)\n    B, T, _ = x.shape\n",
         "    B, T, _ = x.shape\n    if not batch_first:\n        x = x.transpose(0, 1)                          # (B, T, D)\n"))
mistake("ch02", "u02c", "ch02_bptt_gradient_norms", "bptt starts from torch.ones(H) ('dL/dh_T is all ones'), one row without the batch axis: norms[0] = sqrt(H)",
        ("grad = torch.ones_like(states[:, -1])", "grad = torch.ones(states.shape[-1])   "))
mistake("ch02", "u02d", "ch02_bptt_gradient_norms", "bptt types the tanh derivative as (1 - h) ** 2, the parentheses around 1 - h (not 1 - h ** 2)",
        ("grad = (grad * (1 - states[:, t] ** 2)) @ W_hh", "grad = (grad * (1 - states[:, t]) ** 2) @ W_hh"))
mistake("ch02", "u02e", "ch02_clip_grad_norm", "clip_grad_norm skips the parameters without a gradient in the norm but not in the scaling loop (p.grad.mul_ on None)",
        ("    grads = [p.grad for p in parameters if p.grad is not None]\n",
         "    params = list(parameters)\n    grads = [p.grad for p in params if p.grad is not None]\n"),
        ("        for g in grads:\n            g.mul_(scale)", "        for p in params:\n            p.grad.mul_(scale)"))
variant("ch02", "y02a", "ch02_bptt_gradient_norms", "bptt computes the tanh derivatives of every step at once, 1 - states ** 2, before the loop",
        ("    for t in range(states.shape[1] - 1, -1, -1):", "    deriv = 1 - states ** 2                                # (B, T, H): every step's tanh derivative\n    for t in range(states.shape[1] - 1, -1, -1):"),
        ("grad = (grad * (1 - states[:, t] ** 2)) @ W_hh", "grad = (grad * deriv[:, t]) @ W_hh"))
variant("ch02", "y02b", "ch02_clip_grad_norm", "clip_grad_norm combines the per-gradient norms with functools.reduce(torch.hypot, ...) (hypot(a, b) = sqrt(a^2 + b^2))",
        ("    grads = [p.grad", "    import functools\n    grads = [p.grad"),
        ("total_norm = torch.sqrt(sum((g.detach() ** 2).sum() for g in grads))",
         "total_norm = functools.reduce(torch.hypot, [torch.linalg.vector_norm(g.detach()) for g in grads])"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "u03a", "ch03_lstm_cell", "lstm_cell clips the new cell state to [-1, 1] ('c stays between -1 and 1 like h')",
        ("c = f * c_prev + i * g                         # (B, H) cell state", "c = (f * c_prev + i * g).clamp(-1, 1)          # (B, H) cell state"))
mistake("ch03", "u03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias returns h = tanh(c): the output gate o is computed but never used",
        ("h = o * torch.tanh(c)                                   # (B, H)", "h = torch.tanh(c)                                       # (B, H)"))
mistake("ch03", "u03c", "ch03_split_gates", "split_gates computes H = weight_ih.shape[0] / 4 (true division: a float) and cuts with split(H)",
        ("Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))", "H = cell.weight_ih.shape[0] / 4                          # the hidden size\n    Wx = dict(zip(GATES, cell.weight_ih.split(H)))"),
        ("Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))", "Wh = dict(zip(GATES, cell.weight_hh.split(H)))"),
        ("(cell.bias_ih + cell.bias_hh).chunk(4)", "(cell.bias_ih + cell.bias_hh).split(H)"))
mistake("ch03", "u03d", "ch03_lstm_layer", "lstm_layer runs its loop under torch.no_grad() ('a forward pass needs no gradients'): the outputs are right, nothing flows back",
        ("    outputs = []\n    for t in range(T):\n        h, c = cell(x[:, t], (h, c))               # (B, H), (B, H): the cell state is carried too\n        outputs.append(h)\n",
         "    outputs = []\n    with torch.no_grad():                          # a forward pass: no gradients needed\n"
         "        for t in range(T):\n            h, c = cell(x[:, t], (h, c))           # (B, H), (B, H)\n            outputs.append(h)\n"))
mistake("ch03", "u03e", "ch03_split_gates", "split_gates tests `\"bias\" not in dict(cell.named_parameters())` for a bias-free cell (the names are bias_ih and bias_hh): b is always None",
        ("    if not cell.bias:\n", "    if \"bias\" not in dict(cell.named_parameters()):   # a cell without biases\n"))
variant("ch03", "y03a", "ch03_lstm_layer", "lstm_layer starts from h = c = x.new_zeros(B, H) (one zero tensor under two names; nothing writes into it)",
        ("        h = x.new_zeros(B, hidden_size)            # (B, H)\n        c = x.new_zeros(B, hidden_size)            # (B, H)\n",
         "        h = c = x.new_zeros(B, hidden_size)        # (B, H), both zero\n"))
variant("ch03", "y03b", "ch03_split_gates", "split_gates reads each gate's rows with index_select of arange(n * H, (n + 1) * H)",
        code=("def split_gates(cell):\n"
              "    H = cell.weight_hh.shape[1]\n"
              "    def rows(t, n):\n"
              "        return t.index_select(0, torch.arange(n * H, (n + 1) * H))   # gate n's block of rows\n"
              "    Wx = {k: rows(cell.weight_ih, n) for n, k in enumerate(GATES)}\n"
              "    Wh = {k: rows(cell.weight_hh, n) for n, k in enumerate(GATES)}\n"
              "    if cell.bias_ih is None:\n"
              "        return Wx, Wh, None\n"
              "    b = {k: rows(cell.bias_ih, n) + rows(cell.bias_hh, n) for n, k in enumerate(GATES)}\n"
              "    return Wx, Wh, b\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "u04a", "ch04_gru_cell_textbook", "gru_cell_textbook takes H = len(h) (len of a (B, H) tensor is B)",
        ("H = h.shape[1]", "H = len(h)    "))
mistake("ch04", "u04b", "ch04_gru_cell_textbook", "gru_cell_textbook squashes the new state, tanh((1 - z) * h~ + z * h) ('every RNN state goes through a tanh')",
        ("return (1 - z) * h_tilde + z * h", "return torch.tanh((1 - z) * h_tilde + z * h)"))
mistake("ch04", "u04c", "ch04_gru_cell_pytorch", "gru_cell_pytorch cuts the (B, 3H) products with chunk(3) (chunk's default dim 0: the batch)",
        ("i_r, i_z, i_n = gi.chunk(3, dim=1)", "i_r, i_z, i_n = gi.chunk(3)"),
        ("h_r, h_z, h_n = gh.chunk(3, dim=1)", "h_r, h_z, h_n = gh.chunk(3)"))
mistake("ch04", "u04d", "ch04_count_parameters", "count_parameters leaves weight_hh out ('a layer has its weights and its biases', as nn.Linear)",
        ("per_direction = blocks * (hidden_size * layer_input + hidden_size * hidden_size)", "per_direction = blocks * hidden_size * layer_input"))
mistake("ch04", "u04e", "ch04_count_parameters", "count_parameters lets layer 1 read hidden_size features (copy slip of the upper layers' expression) instead of input_size",
        ("layer_input = input_size if layer == 0 else hidden_size * directions", "layer_input = hidden_size if layer == 0 else hidden_size * directions"))
variant("ch04", "y04a", "ch04_gru_cell_textbook", "gru_cell_textbook in the concatenated form: [x, h] against [W_rx | W_rh] and [W_zx | W_zh], [x, r * h] against [W_nx | W_nh]",
        code=("def gru_cell_textbook(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    H = h.shape[1]\n"
              "    W_rx, W_zx, W_nx = weight_ih.split(H)\n"
              "    W_rh, W_zh, W_nh = weight_hh.split(H)\n"
              "    b_r, b_z, b_n = (bias_ih + bias_hh).split(H)\n"
              "    xh = torch.cat([x, h], dim=1)                                          # (B, D + H)\n"
              "    r = torch.sigmoid(xh @ torch.cat([W_rx, W_rh], dim=1).T + b_r)\n"
              "    z = torch.sigmoid(xh @ torch.cat([W_zx, W_zh], dim=1).T + b_z)\n"
              "    h_tilde = torch.tanh(torch.cat([x, r * h], dim=1) @ torch.cat([W_nx, W_nh], dim=1).T + b_n)\n"
              "    return (1 - z) * h_tilde + z * h\n"))
variant("ch04", "y04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch in column form, weight_ih @ x^T + bias_ih[:, None], transposed back, blocks by slices",
        code=("def gru_cell_pytorch(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    gi = (weight_ih @ x.T + bias_ih[:, None]).T      # (B, 3H)\n"
              "    gh = (weight_hh @ h.T + bias_hh[:, None]).T      # (B, 3H)\n"
              "    H = h.shape[1]\n"
              "    r = torch.sigmoid(gi[:, :H] + gh[:, :H])\n"
              "    z = torch.sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])\n"
              "    n = torch.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])\n"
              "    return (1 - z) * n + z * h\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "u05a", "ch05_reverse_padded", "reverse_padded expands its index for a (B, T, D) x only, idx.unsqueeze(-1).expand(-1, -1, x.shape[-1]) (the docstring allows any trailing dimensions)",
        ("idx = idx.reshape(B, T, *([1] * (x.dim() - 2))).expand_as(x)  # (B, T, ...)", "idx = idx.unsqueeze(-1).expand(-1, -1, x.shape[-1])        # (B, T, D)"))
mistake("ch05", "u05b", "ch05_lstm_direction", "lstm_direction sets the state to zero at padded steps, torch.where(real, new, zeros) ('padding gives zeros'), instead of keeping it",
        ("h = torch.where(real, h_new, h)                         # padded steps keep the old state\n        c = torch.where(real, c_new, c)",
         "h = torch.where(real, h_new, torch.zeros_like(h))       # padded steps: zeros\n        c = torch.where(real, c_new, torch.zeros_like(c))"))
mistake("ch05", "u05c", "ch05_sentence_classifier", "SentenceClassifier classifies from the two directions' final states, cat([h_n[0], h_n[1]]) (part 4's summary), not the masked mean the docstring asks for",
        ("out, _ = self.rnn(packed)", "out, (h_n, c_n) = self.rnn(packed)"),
        ("return self.head(masked_mean(out, lengths))", "return self.head(torch.cat([h_n[0], h_n[1]], dim=-1))   # the two final states"))
mistake("ch05", "u05d", "ch05_residual_stack", "ResidualLSTMStack builds nn.Dropout(dropout, inplace=True) ('in place saves memory'): the dropout also changes the residual it is applied to",
        ("self.dropout = nn.Dropout(dropout)", "self.dropout = nn.Dropout(dropout, inplace=True)   # in place saves memory"))
mistake("ch05", "u05e", "ch05_masked_mean", "masked_mean divides the (B, F) sums by the (B,) lengths as they are (the feature axis forgotten)",
        ("return total / lengths.unsqueeze(1).to(outputs.dtype)", "return total / lengths.to(outputs.dtype)"))
variant("ch05", "y05a", "ch05_lstm_direction", "lstm_direction runs each sequence alone over its own length (a loop over the batch), zeros after its end",
        code=("def lstm_direction(cell, x, lengths):\n"
              "    B, T, _ = x.shape\n"
              "    H = cell.hidden_size\n"
              "    rows, hs, cs = [], [], []\n"
              "    for b in range(B):\n"
              "        L = int(lengths[b])\n"
              "        h = x.new_zeros(1, H)\n"
              "        c = x.new_zeros(1, H)\n"
              "        steps = []\n"
              "        for t in range(L):\n"
              "            h, c = cell(x[b:b + 1, t], (h, c))\n"
              "            steps.append(h)\n"
              "        rows.append(torch.cat(steps + [x.new_zeros(T - L, H)], dim=0))   # (T, H)\n"
              "        hs.append(h)\n"
              "        cs.append(c)\n"
              "    return torch.stack(rows), (torch.cat(hs), torch.cat(cs))\n"))
variant("ch05", "y05b", "ch05_masked_mean", "masked_mean reads the running sum (cumsum over time) at each sequence's last real step, lengths - 1",
        code=("def masked_mean(outputs, lengths):\n"
              "    csum = outputs.cumsum(dim=1)                               # (B, T, F): running sums over time\n"
              "    rows = torch.arange(outputs.shape[0])\n"
              "    return csum[rows, lengths - 1] / lengths.unsqueeze(1).to(outputs.dtype)\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "u06a", "ch06_numericalize", "numericalize maps an unknown token to the string \"<unk>\", stoi.get(token, \"<unk>\") (the token, not UNK_INDEX)",
        ("ids = [stoi.get(token, UNK_INDEX) for token in tokens]", "ids = [stoi.get(token, \"<unk>\") for token in tokens]"))
mistake("ch06", "u06b", "ch06_pad_batch", "pad_batch takes T = len(sequences[0]) ('batches come sorted, longest first', the packing habit)",
        ("padded = torch.full((len(sequences), int(lengths.max())), pad_index, dtype=torch.long)",
         "T = len(sequences[0])                                   # the first sequence is the longest\n"
         "    padded = torch.full((len(sequences), T), pad_index, dtype=torch.long)"))
mistake("ch06", "u06c", "ch06_encoder", "Encoder returns h_n[:, 0] (the layer axis 'dropped' with an index on the wrong axis: the first sentence's state, (1, H))",
        ("return outputs, h_n[0]", "return outputs, h_n[:, 0]"))
mistake("ch06", "u06d", "ch06_decoder", "Decoder.step calls self.cell(d_prev, embedded) (the state first, as d_t = GRU(E[y], d) reads aloud 'from d')",
        ("d = self.cell(self.embedding(y_prev), d_prev)", "d = self.cell(d_prev, self.embedding(y_prev))"))
mistake("ch06", "u06e", "ch06_teacher_forced_loss", "teacher_forced_loss returns the log-softmax of the stacked logits (the loss is the same; the logits returned are log-probabilities)",
        ("logits = torch.stack(logits, dim=1)                 # (B, Ty, V)", "logits = torch.stack(logits, dim=1).log_softmax(dim=-1)   # (B, Ty, V)"))
variant("ch06", "y06a", "ch06_greedy_decode", "greedy_decode keeps the steps in a (B, steps) tensor and cuts every row with the mask cumsum(token == <eos>) == 0",
        code=("def greedy_decode(encoder, decoder, src, src_lengths, max_len):\n"
              "    with torch.no_grad():\n"
              "        _, d = encoder(src, src_lengths)\n"
              "        y = torch.full((src.shape[0],), SOS_INDEX, dtype=torch.long)\n"
              "        steps = []\n"
              "        for _ in range(max_len):\n"
              "            logits, d = decoder.step(y, d)\n"
              "            y = logits.argmax(dim=-1)\n"
              "            steps.append(y)\n"
              "            if bool(torch.stack(steps, dim=1).eq(EOS_INDEX).any(dim=1).all()):\n"
              "                break\n"
              "        toks = torch.stack(steps, dim=1)                          # (B, steps)\n"
              "        before_eos = toks.eq(EOS_INDEX).cumsum(dim=1) == 0        # True before each row's first <eos>\n"
              "    return [row[keep].tolist() for row, keep in zip(toks, before_eos)]\n"))
variant("ch06", "y06b", "ch06_pad_batch", "pad_batch makes the batch with torch.full without dtype= (an int fill value gives int64)",
        ("padded = torch.full((len(sequences), int(lengths.max())), pad_index, dtype=torch.long)",
         "padded = torch.full((len(sequences), int(lengths.max())), pad_index)"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "u07a", "ch07_lstm_cell", "LSTMCell.forward returns h, (h, c) (nn.LSTM's output-and-state habit) where the docstring asks for the tuple (h, c)",
        ("        return h, c\n", "        return h, (h, c)                                       # output and state\n"))
mistake("ch07", "u07b", "ch07_encoder", "EncoderRNN's right-to-left loop counts with negative indices, range(0, -Tx, -1): it starts at -0 = position 0, then Tx-1, ..., 1",
        ("for t in reversed(range(Tx)):                          # right to left", "for t in range(0, -Tx, -1):                            # right to left, from the end"))
mistake("ch07", "u07c", "ch07_attention", "Attention calls scores.masked_fill(...) as a statement (taken for in-place): the mask is never applied",
        ("scores = scores.masked_fill(~mask, float(\"-inf\"))", "scores.masked_fill(~mask, float(\"-inf\"))"))
mistake("ch07", "u07d", "ch07_decoder", "AttnDecoderRNN computes the context as weights @ encoder_outputs ((B, Tx) @ (B, Tx, De): matmul broadcasts to (B, B, De))",
        ("weighted_encoder = torch.bmm(weights[:, None, :], encoder_outputs)[:, 0]", "weighted_encoder = weights @ encoder_outputs                # the weighted sum"))
mistake("ch07", "u07e", "ch07_greedy", "greedy_translate unpacks model.encode's pair the other way round, state, memory = model.encode(...)",
        ("memory, state = model.encode(src, src_lengths)", "state, memory = model.encode(src, src_lengths)"))
variant("ch07", "y07a", "ch07_encoder", "EncoderRNN zeroes the padded outputs by boolean-index assignment, outputs[~mask] = 0",
        ("outputs = outputs * mask[:, :, None]", "outputs[~mask] = 0                    "))
variant("ch07", "y07b", "ch07_attention", "Attention writes the masked softmax by hand: exp(scores - max) times the mask as 0/1, divided by its sum",
        ("            scores = scores.masked_fill(~mask, float(\"-inf\"))\n        return torch.softmax(scores, dim=-1)",
         "            keep = mask.to(scores.dtype)\n        else:\n            keep = torch.ones_like(scores)\n"
         "        e = torch.exp(scores - scores.max(dim=-1, keepdim=True).values) * keep\n"
         "        return e / e.sum(dim=-1, keepdim=True)"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "u08a", "ch08_attend", "attend squeezes its results on dim 1 ('one decoder step': (B, Tx) weights), which changes them only when Ty = 1",
        ("    return weights, contexts\n", "    return weights.squeeze(1), contexts.squeeze(1)   # one decoder step: (B, Tx), (B, Dh)\n"))
mistake("ch08", "u08b", "ch08_dot", "dot_attention computes the energies in half precision ('faster'), dec.half() @ enc.half()^T, back to float",
        ("energies = dec @ enc.transpose(1, 2)   # (B, Ty, D) @ (B, D, Tx) -> (B, Ty, Tx)", "energies = (dec.half() @ enc.half().transpose(1, 2)).float()   # half precision"))
mistake("ch08", "u08c", "ch08_bilinear", "bilinear_attention writes dec @ W as F.linear(dec, W) (F.linear multiplies by W transposed)",
        ("energies = (dec @ W) @ enc.transpose(1, 2)", "energies = F.linear(dec, W) @ enc.transpose(1, 2)"))
mistake("ch08", "u08d", "ch08_scaled_dot", "scaled_dot_attention divides by torch.sqrt(D) with D a Python int (torch.sqrt takes a tensor)",
        ("energies = dec @ enc.transpose(1, 2) / math.sqrt(D)", "energies = dec @ enc.transpose(1, 2) / torch.sqrt(D)"))
mistake("ch08", "u08e", "ch08_macs", "reduced_rank_macs counts the dot products of the whole batch, dots = B * Ty * Tx * R, then multiplies the sums by B again",
        ("dots = Ty * Tx * R          # (U d_t)^T (V h_s) for every pair (t, s)", "dots = B * Ty * Tx * R      # (U d_t)^T (V h_s) for every pair (t, s), all sentences"))
variant("ch08", "y08a", "ch08_dot", "dot_attention as (enc @ dec^T)^T: the (B, Tx, Ty) products turned round",
        ("energies = dec @ enc.transpose(1, 2)   # (B, Ty, D) @ (B, D, Tx) -> (B, Ty, Tx)", "energies = (enc @ dec.transpose(1, 2)).transpose(1, 2)   # (B, Ty, Tx)"))
variant("ch08", "y08b", "ch08_scaled_dot", "scaled_dot_attention with torch.baddbmm(zeros, dec, enc^T, beta=0, alpha=1/sqrt(D))",
        ("energies = dec @ enc.transpose(1, 2) / math.sqrt(D)",
         "energies = torch.baddbmm(dec.new_zeros(dec.shape[0], dec.shape[1], enc.shape[1]), dec, enc.transpose(1, 2), beta=0, alpha=1 / math.sqrt(D))"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "u09a", "ch09_encode", "encode puts the backward state first with h_n.flip(0) and reshapes with .view(B, -1) ((2, B, H) viewed as (B, 2H) mixes the sentences)",
        ("d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1))", "B = src.shape[0]\n    d0 = model.W_h(h_n.flip(0).view(B, -1))            # [backward; forward]"),
        ("c0 = model.W_c(torch.cat([c_n[1], c_n[0]], dim=-1))", "c0 = model.W_c(c_n.flip(0).view(B, -1))"))
mistake("ch09", "u09b", "ch09_decode_step", "decode_step applies the dropout to u_t before W_u, tanh(W_u(dropout(u))), instead of to the combined output",
        ("o = model.dropout(torch.tanh(model.W_u(u)))", "o = torch.tanh(model.W_u(model.dropout(u)))"))
mistake("ch09", "u09c", "ch09_teacher_forcing", "decode_teacher_forcing unpacks decode_step's results as o, state, _ (the state and the combined output swapped)",
        ("state, o, _ = decode_step(model, tgt_in[:, t], o, state, h, h_proj, mask)", "o, state, _ = decode_step(model, tgt_in[:, t], o, state, h, h_proj, mask)"))
mistake("ch09", "u09d", "ch09_masked_loss", "masked_loss counts the classes from the targets, V = tgt_out.max() + 1, to flatten the scores",
        ("return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)",
         "V = int(tgt_out.max()) + 1                                  # the number of classes\n"
         "    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD)"))
mistake("ch09", "u09e", "ch09_beam_search", "beam_search keeps the <eos> in a finished hypothesis' tokens (the docstring: tokens without <sos>/<eos>)",
        ("finished.append((tokens[:-1], score / len(tokens) ** alpha))", "finished.append((tokens, score / len(tokens) ** alpha))"))
variant("ch09", "y09a", "ch09_decode_step", "decode_step takes the context from F.scaled_dot_product_attention(d, h_proj, h, attn_mask, scale=1.0); the weights from the softmax as before",
        ("a = torch.bmm(alpha.unsqueeze(1), h).squeeze(1)", "a = F.scaled_dot_product_attention(d[:, None, :], h_proj, h, attn_mask=mask[:, None, :], scale=1.0)[:, 0]"))
variant("ch09", "y09b", "ch09_encode", "encode joins the two final states with torch.stack([h_n[1], h_n[0]], dim=1).flatten(1)",
        ("d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1))", "d0 = model.W_h(torch.stack([h_n[1], h_n[0]], dim=1).flatten(1))"),
        ("c0 = model.W_c(torch.cat([c_n[1], c_n[0]], dim=-1))", "c0 = model.W_c(torch.stack([c_n[1], c_n[0]], dim=1).flatten(1))"))

CASES = M + OK

# The first failing visible test's message as the student sees it in Jupyter, judged by the rule of trials 22f-22t.
VERDICTS: dict[str, tuple[str, str]] = {
    'ch01-u01a': ('P', "'self.rnn is an nn.GRU, where the docstring asks for nn.RNN'"),
    'ch01-u01b': ('P', "at loss.backward(): 'grad can be implicitly created only for scalar outputs -- loss has shape (5,) here, but () in the reference ...; it goes wrong at your line \"loss = F.cross_entropy(model(x), y, reduction=\"none\")\"': the line with the option named, and that the loss must be a scalar"),
    'ch01-u01c': ('M', "'4 of 5 entries differ; first at index (1,) ... Likely cause: the first loss is right and a later one differs: the update differs (Adam with the lr argument, gradients cleared before each backward, one optimizer step per batch)': three guessed causes about the update, none the student's (the list holds a running average of the losses; the update is right) (lenient reading: N)"),
    'ch01-u01d': ('Pa', "at the student's line \"losses.append(train_step(...).item())\": Python's own \"'float' object has no attribute 'item'\", nothing added (lenient reading: P, the line and the float say it)"),
    'ch01-u01e': ('P', "at the student's line: 'For batched 3-D input, hx should also be 3-D but got 2-D tensor -- nn.RNN ... take their initial state as (num_layers * num_directions, B, H) ...: a (B, H) state needs h[None] (unsqueeze(0))'"),
    'ch02-u02a': ('P', "at the student's line \"h = h0 or x.new_zeros(...)\": 'Boolean value of Tensor with more than one value is ambiguous -- a tensor of several values used as one True or False (`if t:`, ..., `and`/`or` between tensors, ...)': the `or` named (a tail about loss classes is beside the point)"),
    'ch02-u02b': ('P', "raised in rnn_cell: 'rnn_cell received x_t (2, 3), h_prev (5, 4) ...: check what rnn_layer passes -- Likely cause: ... (in rnn_layer, an `if` test): two steps in the wrong order; or ... another variable ...; h has shape (5, 4) here, but (2, 4) ...; it goes wrong at your line \"h = x.new_zeros(B, ...) ...\"': the order of the shape read and the transpose is the first cause named, B = 5 = T shows which (strict reading: Pa, two causes listed and the h line named, not the B line)"),
    'ch02-u02c': ('Pa', "'1 of 5 entries differ; first at index (0,): got 1.73205, expected 2.4495 ... Likely cause: your values are what you get with `W_hh[:, -1]` where `states[:, -1]` is needed (in bptt_gradient_norms, the line that computes `grad`)': the right line and the right term (states[:, -1], i.e. ones_like(states[:, -1])), through an equivalent edit that is not the student's code (torch.ones(H) has the shape of W_hh[:, -1]) (strict reading: M, a term the student never wrote; lenient: P)"),
    'ch02-u02d': ('M', "'`grad` ... its second value, from your line \"grad = (grad * (1 - states[:, t]) ** 2) @ W_hh\", is not the reference's ...: it goes wrong there ... (Python reads grad * (1 - states[:, t]) ** 2 @ W_hh as (grad * ...) @ W_hh: if you mean grad * ((1 - states[:, t]) ** 2 @ W_hh), write the parentheses)': the right line, then a precedence note about the @ that the student's parentheses already fix, with a wrong fix; (1 - h) ** 2 for 1 - h ** 2 is not said (lenient reading: Pa)"),
    'ch02-u02e': ('Pa', "at the student's line \"p.grad.mul_(scale)\": \"'NoneType' object has no attribute 'mul_' -- a value is None: the result of a method that works in place ..., an argument that may be None (does the docstring allow mask=None or lengths=None?), or a function ... without `return`\": the line shows p.grad is None; the guesses do not say that the loop must skip those parameters (strict reading: N; lenient: P, the line shows which value is None)"),
    'ch03-u03a': ('-', "no visible test fails (7/10: a hidden lstm_cell test fails): the visible tests' cell states stay inside [-1, 1], where clamp changes nothing"),
    'ch03-u03b': ('P', "'your values are what you get with `torch.tanh(c)` where `o * torch.tanh(c)` is needed (in lstm_cell_nobias, the line that computes `h`)'"),
    'ch03-u03c': ('Pa', "at the student's split line: PyTorch's own \"split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not float\", nothing added; the / that makes H a float is one line up (lenient reading: P)"),
    'ch03-u03d': ('P', "at the test's backward: 'element 0 of tensors does not require grad and does not have a grad_fn -- the result was cut from the graph (torch.no_grad(), .detach(), .item()): keep it a tensor computed from the inputs': torch.no_grad named first (strict reading: Pa, no line of the student's named)"),
    'ch03-u03e': ('M', "'b must be a dict with the keys i, f, g, o, got NoneType ... -- a value is None: the result of a method that works in place ..., an argument that may be None ..., or a function of yours that ends without `return`': guessed causes, none the student's (the bias test `\"bias\" not in dict(cell.named_parameters())` is true for every cell) (lenient reading: Pa, 'b ... got NoneType' leads to the return under the test)"),
    'ch04-u04a': ('P', "at the unpacking line: '`H` is the first variable whose value differs from the reference's `H` (2 where the reference's is 4), made at your line \"H = len(h)\": it goes wrong before the line that raises'"),
    'ch04-u04b': ('P', "'your values are what you get with an extra tanh around `(1 - z) * h_tilde + z * h` (in gru_cell_textbook, the returned value)'"),
    'ch04-u04c': ('P', "at the student's line: 'gi.chunk(3) cuts axis 0 of gi (2, 12) (size 2) into 2 pieces ...; 3 blocks fit along axis 1 (size 12): the wrong axis?'"),
    'ch04-u04d': ('P', "'`per_direction` is the first variable whose value differs ...: look at your line \"per_direction = blocks * hidden_size * layer_input\" (... the reference's adds (+), which yours does not); ... a term or a factor left out' (strict reading: Pa, which term is not said)"),
    'ch04-u04e': ('P', "'`layer_input` ... (20 where the reference's is 10) ...: look at your line \"layer_input = hidden_size if layer == 0 else ...\" (... the reference's reads `input_size`, which yours does not)'"),
    'ch05-u05a': ('P', "at the gather line: 'idx has shape (3, 5, 5) here, but (3, 5) in the reference ...; it goes wrong at your line \"idx = idx.unsqueeze(-1).expand(-1, -1, x.shape[-1])\" -- fix it there': the expand line named with the shape it must give for a 2-D x (strict reading: Pa, 'any trailing dimensions' not said)"),
    'ch05-u05b': ('P', "'h_n (after the last REAL step): ... got 0 ... Likely cause: your values are what you get with `torch.where(real, h_new, real)` where `torch.where(real, h_new, h)` is needed (in lstm_direction, the line that computes `h`)': the line and the fix (h in the third slot), through an equivalent of the student's zeros (strict reading: Pa)"),
    'ch05-u05c': ('M', "'logits: 4 of 6 entries differ ... Likely cause: ... `_` is right where it is first made (your line \"out, _ = pad_packed_sequence(...)\"), but yours never makes it again, where the reference's `_` gets 2 values: the reference carries it from step to step (a loop's new value of `_` kept under another name ...)': blames the right pad_packed_sequence line and a throw-away name; that the logits come from h_n instead of masked_mean(out, lengths) is not said"),
    'ch05-u05d': ('Pa', "'outputs in training mode with dropout=1.0 ... Likely cause: your values are what you get if you add the dropped-out input as the residual (the residual adds h_prev itself, without dropout)': the effect exactly (in-place dropout changed h), but the student's residual line reads `out + h` and is right; inplace=True in the constructor is not named (strict reading: M, right code blamed; lenient: P)"),
    'ch05-u05e': ('P', "at the student's line: 'total has shape (2, 3) and lengths... has shape (2,): broadcasting lines shapes up from the RIGHT ...; lengths[:, None] would line its axes up'"),
    'ch06-u06a': ('P', "\"numericalize's return value[3]: must be a Python int, got a Python str\": the unknown token's entry, a str"),
    'ch06-u06b': ('P', "at the student's write line: 'padded has shape (2, 1) here, but (2, 2) ...; it goes wrong at your line \"padded = torch.full((len(sequences), T), ...)\"': T too small, from the first sequence (strict reading: Pa, the T line is one up)"),
    'ch06-u06c': ('M', "'h (the final states): expected shape (3, 4), got (1, 4); dimension 0 holds ONE entry where 3 are expected: one value kept where one per step (or per position) is meant (a list appended once, after the loop, or a variable overwritten at every step?)': guessed causes, none the student's (h_n[:, 0] indexes the batch axis) (lenient reading: N)"),
    'ch06-u06d': ('P', "at the student's line \"d = self.cell(d_prev, self.embedding(y_prev))\": 'input has inconsistent input_size: got 4 expected 3 -- ... input_size is the size of the input's LAST axis (the embedding size ...)': the line and that the input must be the embedding (strict reading: Pa, the swap is not said)"),
    'ch06-u06e': ('P', "'logits at step 1: ... Likely cause: your values are log-probabilities (a log-softmax of the expected raw scores): return the raw scores (logits) themselves'"),
    'ch07-u07a': ('P', "'c: expected a torch.Tensor, got a tuple of 2 items': the second returned value is the (h, c) pair (strict reading: Pa, no line)"),
    'ch07-u07b': ('Pa', "'the padded positions are right; every wrong entry is elsewhere; ... `new` ... its 7th value, from your line \"new = self.lstm_cell_right(emb[:, t], state)\", is not the reference's ...: it goes wrong there (the values it is made from ...)': the right-to-left cell line, not its range(0, -Tx, -1) one line up (lenient reading: P)"),
    'ch07-u07c': ('P', "'your line \"scores.masked_fill(~mask, float(\"-inf\"))\" ... computes a new value and throws it away ...: write scores = scores.masked_fill(...)'"),
    'ch07-u07d': ('P', "at the cat line: 'weighted_encoder has shape (2, 2, 6) here, but (2, 6) ...; it goes wrong at your line \"weighted_encoder = weights @ encoder_outputs\" -- fix it there'"),
    'ch07-u07e': ('Pa', "at the student's decode_step line: Python's own \"'int' object is not subscriptable\", nothing added; the swapped unpacking of model.encode is one line up (strict reading: N)"),
    'ch08-u08a': ('-', "no visible test fails (9/12: a hidden attend test fails): the visible tests never use Ty = 1, where the squeeze changes the shapes"),
    'ch08-u08b': ('P', "'`energies` is the first variable whose value differs ...: look at your line \"energies = (dec.half() @ ...).float()\" (... yours calls half, which the reference's does not)'"),
    'ch08-u08c': ('Pa', "at the student's line: PyTorch's 'mat1 and mat2 shapes cannot be multiplied (6x6 and 5x6) -- a matrix product whose inner sizes differ: a .T missing or one too many, or the wrong matrix?': that F.linear multiplies by W transposed is not said (lenient reading: P, '.T one too many' is what F.linear does)"),
    'ch08-u08d': ('P', "at the student's line: 'sqrt(): argument 'input' ... must be Tensor, not int -- torch.sqrt takes (input, ...); your line gives it input=D 5; a number ... in a tensor's place' (strict reading: Pa, math.sqrt not suggested)"),
    'ch08-u08e': ('P', "'`dots` ... (210 where the reference's is 105) ...: look at your line \"dots = B * Ty * Tx * R ...\" ...; ... what you get if you count the dot products B=2 times too often'"),
    'ch09-u09a': ('P', "'`d0` is the first variable whose value differs ...: look at your line \"d0 = model.W_h(h_n.flip(0).view(B, -1))\" (yours calls flip, which the reference's does not; the reference's calls cat ...); that line also reads `B` ...: the wrong value may come from it': the line and cat named; the B remark is a side guess (strict reading: Pa, the view's mixing not said)"),
    'ch09-u09b': ('P', "'in training mode, dropout (p=0.5) should zero some entries of tilde d_t and keep others': the dropout belongs on tilde d_t"),
    'ch09-u09c': ('Pa', "at the student's line \"o, state, _ = decode_step(...)\": Python's own \"can't multiply sequence by non-int of type 'float'\", nothing added (lenient reading: P, the named line is the one to fix; strict: N)"),
    'ch09-u09d': ('P', "first in Part 6's test (masked_loss's own visible test passes: its targets reach V - 1): 'at your line ...: shape [-1, 66] is invalid ... V is 66, which is not a size of logits: ... read it from logits.shape'"),
    'ch09-u09e': ('P', "'hypotheses [[5, 3, 3, 5, 2]], expected [[5, 3, 3, 5]]. Likely cause: ... stop where the docstring says (at the first <eos>, which is not kept)'"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.trial_main(sys.modules[__name__], "/tmp/student_trial_22u", argv)


if __name__ == "__main__":
    main()
