"""Student trial 22r: an acceptance trial of issue 22, 45 new mistakes and 18 correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed before solutions/ and the catalogues
were read: benchmarks/results/student_trial_22r_plan.md); every planned mistake and variant that repeated an old
mutant, an alternative or an earlier trial's case was replaced by a new one written the same way (the plan's second
table lists what each replaced case repeated). A mistake is one or more edits of one cell's reference code,
``(old, new)`` pairs whose ``old`` occurs once; a variant rewrites the cell (or edits it) and must keep full marks.
Only the cases and the verdicts live here: building, grading (the class grader, one run per assignment), the Jupyter
view and the report are benchmarks/student_trial.py's and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22r unless --root says otherwise):

    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22r.py --student-view [ch01 ...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22r.py --grade [ch01 ...]
    /work/main/.venv/bin/python benchmarks/student_trial_22r.py --table     # benchmarks/results/student_trial_22r.md's tables
    /work/main/.venv/bin/python benchmarks/student_trial_22r.py --save benchmarks/results/student_trial_22r.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "r01a", "ch01_many_to_one", "ManyToOne passes an explicit zero initial state sized (1, T, H) with x.shape[1] (the time axis where the batch is meant)",
        ("outputs, h_n = self.rnn(x)         # outputs: (B, T, H), h_n: (1, B, H)",
         "h0 = x.new_zeros(1, x.shape[1], self.rnn.hidden_size)   # the initial state, zeros\n"
         "        outputs, h_n = self.rnn(x, h0)     # outputs: (B, T, H), h_n: (1, B, H)"))
mistake("ch01", "r01b", "ch01_many_to_many_sync", "ManyToManySync gives nn.RNN num_classes as its third argument ('input, hidden, output sizes'): it is num_layers, a C-layer RNN",
        ("self.rnn = nn.RNN(input_size, hidden_size, batch_first=True)\n",
         "self.rnn = nn.RNN(input_size, hidden_size, num_classes, batch_first=True)   # input, hidden, output sizes\n"))
mistake("ch01", "r01c", "ch01_many_to_many_async", "ManyToManyAsync adds the encoder's summary to every decoder output before the head (Cho et al.'s decoder sees the context at every step)",
        ("return self.head(outputs)             # (B, Ty, C)",
         "return self.head(outputs + h_n.transpose(0, 1))   # the context at every step"))
mistake("ch01", "r01d", "ch01_train_step", "train_step scores the last step's logits, model(x)[:, -1] (the sequence habit of part 2: the model already gives (B, C))",
        ("loss = F.cross_entropy(model(x), y)", "loss = F.cross_entropy(model(x)[:, -1], y)"))
mistake("ch01", "r01e", "ch01_fit", "fit picks the batch's inputs with x.index_select(1, idx) (dim 1, the time axis, where the examples are dim 0)",
        ("losses.append(train_step(model, optimizer, x[idx], y[idx]))",
         "losses.append(train_step(model, optimizer, x.index_select(1, idx), y[idx]))"))
variant("ch01", "u01a", "ch01_train_step", "train_step with the cross-entropy written out, -log_softmax(logits).gather(1, y[:, None]).mean()",
        code=("def train_step(model, optimizer, x, y):\n"
              "    optimizer.zero_grad()\n"
              "    logits = model(x)\n"
              "    loss = -F.log_softmax(logits, dim=-1).gather(1, y[:, None]).mean()\n"
              "    loss.backward()\n"
              "    optimizer.step()\n"
              "    return loss.item()\n"))
variant("ch01", "u01b", "ch01_one_to_many", "OneToMany builds its inputs out of place with index_copy along time",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])  # (B, steps, D), all zeros\n"
         "        inputs[:, 0] = x                                     # x only at the first step",
         "inputs = x.new_zeros(x.shape[0], steps, x.shape[1]).index_copy(1, torch.tensor([0], device=x.device), x.unsqueeze(1))"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "r02a", "ch02_rnn_cell", "rnn_cell sums the three terms with torch.add(a, b, c) (torch.add takes two tensors)",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)",
         "return torch.tanh(torch.add(h_prev @ W_hh.T, x_t @ W_hx.T, b_h))"))
mistake("ch02", "r02b", "ch02_rnn_layer", "rnn_layer calls rnn_cell by keywords and names the state h= (the cell's parameter is h_prev)",
        ("h = rnn_cell(x[:, t], h, W_hx, W_hh, b_h)", "h = rnn_cell(x_t=x[:, t], h=h, W_hx=W_hx, W_hh=W_hh, b_h=b_h)"))
mistake("ch02", "r02c", "ch02_bptt_gradient_norms", "bptt names the last state h_T above the loop and uses it in every step's tanh derivative (1 - h_T^2 at every t)",
        ("grad = torch.ones_like(states[:, -1])                  # (B, H): dL/dh_T",
         "h_T = states[:, -1]                                    # (B, H): the last state\n"
         "    grad = torch.ones_like(h_T)                            # (B, H): dL/dh_T"),
        ("grad = (grad * (1 - states[:, t] ** 2)) @ W_hh", "grad = (grad * (1 - h_T ** 2)) @ W_hh"))
mistake("ch02", "r02d", "ch02_bptt_gradient_norms", "bptt takes each norm with keepdim=True (the normalisation habit): norms of shape (T + 1, 1, 1)",
        ("norms = [torch.linalg.vector_norm(grad)]", "norms = [torch.linalg.vector_norm(grad, keepdim=True)]"),
        ("norms.append(torch.linalg.vector_norm(grad))", "norms.append(torch.linalg.vector_norm(grad, keepdim=True))"))
mistake("ch02", "r02e", "ch02_clip_grad_norm", "clip_grad_norm divides every gradient by the total norm (unit length), max_norm left out of the scale",
        ("            g.mul_(scale)", "            g.div_(total_norm + 1e-6)   # rescaled to length 1"))
variant("ch02", "u02a", "ch02_rnn_cell", "rnn_cell with the bias folded into one matrix: [h, x, 1] against [W_hh | W_hx | b_h]",
        code=("def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):\n"
              "    ones = torch.ones_like(x_t[:, :1])                         # (B, 1)\n"
              "    hx1 = torch.cat([h_prev, x_t, ones], dim=1)                # (B, H + D + 1)\n"
              "    W = torch.cat([W_hh, W_hx, b_h[:, None]], dim=1)           # (H, H + D + 1)\n"
              "    return torch.tanh(hx1 @ W.T)\n"))
variant("ch02", "u02b", "ch02_rnn_layer", "rnn_layer projects the inputs of all steps at once (cuDNN's trick), then loops over the recurrence only",
        code=("def rnn_layer(x, W_hx, W_hh, b_h, h0=None, batch_first=True):\n"
              "    if not batch_first:\n"
              "        x = x.transpose(0, 1)\n"
              "    B, T, _ = x.shape\n"
              "    xw = x @ W_hx.T                                # (B, T, H): every step's input term\n"
              "    h = x.new_zeros(B, W_hh.shape[0]) if h0 is None else h0\n"
              "    outs = []\n"
              "    for t in range(T):\n"
              "        h = torch.tanh(h @ W_hh.T + xw[:, t] + b_h)\n"
              "        outs.append(h)\n"
              "    outputs = torch.stack(outs, dim=1)\n"
              "    return (outputs if batch_first else outputs.transpose(0, 1)), h\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "r03a", "ch03_lstm_cell", "lstm_cell adds 1 to the forget gate's pre-activation (TensorFlow's forget_bias=1.0 habit)",
        ('f = torch.sigmoid(hx @ W["f"].T + b["f"])', 'f = torch.sigmoid(hx @ W["f"].T + b["f"] + 1.0)   # forget_bias = 1'))
mistake("ch03", "r03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias updates the cell state in place, c_prev.mul_(f).add_(i * g) ('saves a tensor'): the caller's c_prev changes",
        ("c = f * c_prev + i * g", "c = c_prev.mul_(f).add_(i * g)"))
mistake("ch03", "r03c", "ch03_lstm_layer", "lstm_layer carries the cell's (h, c) as one `state` and appends that tuple to the outputs (torch.stack of tuples)",
        ("        h, c = cell(x[:, t], (h, c))               # (B, H), (B, H): the cell state is carried too\n"
         "        outputs.append(h)\n",
         "        state = cell(x[:, t], (h, c))              # the new (h, c)\n"
         "        h, c = state\n"
         "        outputs.append(state)\n"))
mistake("ch03", "r03d", "ch03_lstm_layer", "lstm_layer sizes the zero states with H = x.shape[2] (the input size D, not hidden_size)",
        ("        h = x.new_zeros(B, hidden_size)            # (B, H)\n        c = x.new_zeros(B, hidden_size)            # (B, H)\n",
         "        H = x.shape[2]\n        h = x.new_zeros(B, H)                      # (B, H)\n        c = x.new_zeros(B, H)                      # (B, H)\n"))
mistake("ch03", "r03e", "ch03_split_gates", "split_gates zips GATES with the summed bias vector itself (its .chunk(4) forgotten): b[k] are its first four numbers",
        ("b = dict(zip(GATES, (cell.bias_ih + cell.bias_hh).chunk(4)))", "b = dict(zip(GATES, cell.bias_ih + cell.bias_hh))"))
variant("ch03", "u03a", "ch03_lstm_cell", "lstm_cell joins [h_prev, x] with torch.hstack",
        ("hx = torch.cat([h_prev, x], dim=1)", "hx = torch.hstack((h_prev, x))"))
variant("ch03", "u03b", "ch03_lstm_layer", "lstm_layer as a functools.reduce over the time steps",
        code=("import functools\n\n\n"
              "def lstm_layer(cell, x, hidden_size, state=None):\n"
              "    B = x.shape[0]\n"
              "    if state is None:\n"
              "        start = (x.new_zeros(B, hidden_size), x.new_zeros(B, hidden_size))\n"
              "    else:\n"
              "        start = (state[0][0], state[1][0])\n"
              "\n"
              "    def step(acc, x_t):\n"
              "        outs, hc = acc\n"
              "        hc = cell(x_t, hc)\n"
              "        return outs + [hc[0]], hc\n"
              "\n"
              "    outs, (h, c) = functools.reduce(step, x.unbind(1), ([], start))\n"
              "    return torch.stack(outs, dim=1), (h[None], c[None])\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "r04a", "ch04_gru_cell_textbook", "gru_cell_textbook resets h in place, h.mul_(r) ('no copy'): the caller's h changes and the interpolation uses r * h",
        ("h_tilde = torch.tanh(x @ W_nx.T + (r * h) @ W_nh.T + b_n)", "h_tilde = torch.tanh(x @ W_nx.T + h.mul_(r) @ W_nh.T + b_n)"))
mistake("ch04", "r04b", "ch04_gru_cell_textbook", "gru_cell_textbook writes h_prev (exercise 3's name) in the reset gate, where the argument is h",
        ("r = torch.sigmoid(x @ W_rx.T + h @ W_rh.T + b_r)", "r = torch.sigmoid(x @ W_rx.T + h_prev @ W_rh.T + b_r)"))
mistake("ch04", "r04c", "ch04_gru_cell_pytorch", "gru_cell_pytorch squashes the two parts of the reset gate apart, sigmoid(i_r) + sigmoid(h_r)",
        ("r = torch.sigmoid(i_r + h_r)", "r = torch.sigmoid(i_r) + torch.sigmoid(h_r)"))
mistake("ch04", "r04d", "ch04_gru_cell_pytorch", "gru_cell_pytorch computes in float64 ('for precision') and never casts back: returns a float64 state",
        ("    gi = x @ weight_ih.T + bias_ih", 
         "    x, h = x.double(), h.double()                    # float64 for precision\n"
         "    weight_ih, weight_hh, bias_ih, bias_hh = (t.double() for t in (weight_ih, weight_hh, bias_ih, bias_hh))\n"
         "    gi = x @ weight_ih.T + bias_ih"))
mistake("ch04", "r04e", "ch04_count_parameters", "count_parameters counts one more bias vector for a GRU (b_hn, 'the bias inside the reset gate', read as an extra parameter)",
        ("        total += directions * per_direction",
         "        if kind == \"gru\" and bias:\n"
         "            per_direction += hidden_size            # b_hn, the extra bias inside the reset gate\n"
         "        total += directions * per_direction"))
variant("ch04", "u04a", "ch04_gru_cell_textbook", "gru_cell_textbook interpolates with torch.lerp(h_tilde, h, z)",
        ("return (1 - z) * h_tilde + z * h", "return torch.lerp(h_tilde, h, z)"))
variant("ch04", "u04b", "ch04_count_parameters", "count_parameters as one closed formula (first layer, upper layers, biases)",
        code=("def count_parameters(kind, input_size, hidden_size, num_layers=1, bias=True, bidirectional=False):\n"
              "    g = {'rnn': 1, 'lstm': 4, 'gru': 3}[kind]\n"
              "    d = 2 if bidirectional else 1\n"
              "    H = hidden_size\n"
              "    weights = g * H * (input_size + H) + (num_layers - 1) * g * H * (d * H + H)\n"
              "    biases = num_layers * 2 * g * H if bias else 0\n"
              "    return d * (weights + biases)\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "r05a", "ch05_reverse_padded", "reverse_padded takes T as the longest length, int(lengths.max()), not x.shape[1] (the batch may be longer)",
        ("B, T = x.shape[:2]", "B = x.shape[0]\n    T = int(lengths.max())                                      # the longest sequence"))
mistake("ch05", "r05b", "ch05_lstm_direction", "lstm_direction keeps every step's state and reads the final one at index lengths (not lengths - 1)",
        ("    outputs = []\n", "    outputs, hs, cs = [], [], []\n"),
        ("        outputs.append(torch.where(real, h_new, torch.zeros_like(h_new)))",
         "        outputs.append(torch.where(real, h_new, torch.zeros_like(h_new)))\n"
         "        hs.append(h_new)\n"
         "        cs.append(c_new)"),
        ("    return torch.stack(outputs, dim=1), (h, c)",
         "    rows = torch.arange(B)\n"
         "    h = torch.stack(hs, dim=1)[rows, lengths]                   # the state at each sequence's last step\n"
         "    c = torch.stack(cs, dim=1)[rows, lengths]\n"
         "    return torch.stack(outputs, dim=1), (h, c)"))
mistake("ch05", "r05c", "ch05_bilstm_from_cells", "BiLSTMFromCells also puts the backward FINAL states 'back in order' with reverse_padded (a (B, H) tensor: its features reversed)",
        ("out_b = reverse_padded(out_b, lengths)                  # back to the original order",
         "out_b = reverse_padded(out_b, lengths)                  # back to the original order\n"
         "        h_b, c_b = reverse_padded(h_b, lengths), reverse_padded(c_b, lengths)   # the backward states too"))
mistake("ch05", "r05d", "ch05_residual_stack", "ResidualLSTMStack starts each upper layer from the final (h_n, c_n) of the layer below ('the stack carries its state')",
        ("out, (h_n, c_n) = layer(packed)", "out, (h_n, c_n) = layer(packed, None if l == 0 else (h_n, c_n))"))
mistake("ch05", "r05e", "ch05_sentence_classifier", "SentenceClassifier packs the token ids where the embeddings are meant (pack_padded_sequence(tokens, ...): a variable slip)",
        ("packed = pack_padded_sequence(emb, lengths.cpu()", "packed = pack_padded_sequence(tokens, lengths.cpu()"))
variant("ch05", "u05a", "ch05_final_states", "final_states as a Python loop over the batch",
        code=("def final_states(outputs, lengths):\n"
              "    H = outputs.shape[-1] // 2\n"
              "    rows = []\n"
              "    for b in range(outputs.shape[0]):\n"
              "        last = int(lengths[b]) - 1\n"
              "        rows.append(torch.cat([outputs[b, last, :H], outputs[b, 0, H:]]))\n"
              "    return torch.stack(rows)\n"))
variant("ch05", "u05b", "ch05_sentence_classifier", "SentenceClassifier sums the unpacked outputs over all T and divides by the lengths (pad_packed_sequence pads with zeros)",
        ("return self.head(masked_mean(out, lengths))",
         "return self.head(out.sum(dim=1) / lengths.to(out.device).unsqueeze(1).to(out.dtype))   # padding is zero"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "r06a", "ch06_numericalize", "numericalize looks tokens up with stoi.setdefault(token, UNK_INDEX) (taken for get with a default): unknown tokens are added to the caller's stoi",
        ("ids = [stoi.get(token, UNK_INDEX) for token in tokens]", "ids = [stoi.setdefault(token, UNK_INDEX) for token in tokens]"))
mistake("ch06", "r06b", "ch06_decoder", "Decoder.step applies F.relu to the embedding before the GRU cell (PyTorch's seq2seq tutorial's decoder does)",
        ("d = self.cell(self.embedding(y_prev), d_prev)", "d = self.cell(F.relu(self.embedding(y_prev)), d_prev)"))
mistake("ch06", "r06c", "ch06_teacher_forced_loss", "teacher_forced_loss returns (logits, loss), the pair in the other order",
        ("    return loss, logits\n", "    return logits, loss\n"))
mistake("ch06", "r06d", "ch06_greedy_decode", "greedy_decode appends <pad> to the sentences already finished ('keep the rows the same length') until the loop ends",
        ("                    else:\n                        outputs[b].append(token)\n",
         "                    else:\n                        outputs[b].append(token)\n"
         "                else:\n                    outputs[b].append(PAD_INDEX)     # keep the rows the same length\n"))
mistake("ch06", "r06e", "ch06_greedy_decode", "greedy_decode starts every sequence from EOS_INDEX (the constant next to SOS_INDEX)",
        ("y = torch.full((src.shape[0],), SOS_INDEX, dtype=torch.long)", "y = torch.full((src.shape[0],), EOS_INDEX, dtype=torch.long)"))
variant("ch06", "u06a", "ch06_build_vocab", "build_vocab counts the concatenation sum(sequences, []) (all tokens in one list)",
        ("counts = Counter(token for seq in sequences for token in seq)", "counts = Counter(sum(sequences, []))"))
variant("ch06", "u06b", "ch06_greedy_decode", "greedy_decode feeds <pad> to the sequences already finished (their later outputs are ignored)",
        ("            if all(finished):\n                break\n",
         "            if all(finished):\n                break\n"
         "            y = torch.where(torch.tensor(finished), torch.full_like(y, PAD_INDEX), y)\n"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "r07a", "ch07_encoder", "EncoderRNN's right-to-left loop counts t up and reads emb[:, Tx - 1 - t], but keeps the mask of position t (mask[:, t])",
        ("        for t in reversed(range(Tx)):                          # right to left\n"
         "            new = self.lstm_cell_right(emb[:, t], state)\n",
         "        for t in range(Tx):                                    # right to left: position Tx - 1 - t\n"
         "            new = self.lstm_cell_right(emb[:, Tx - 1 - t], state)\n"))
mistake("ch07", "r07b", "ch07_decoder", "AttnDecoderRNN gives its LSTM cell (h_prev, zeros): the cell state c_prev is dropped at every step",
        ("                              state)", "                              (h_prev, torch.zeros_like(h_prev)))   # a fresh cell state"))
mistake("ch07", "r07c", "ch07_greedy", "greedy_translate joins the steps' tokens with torch.cat(tokens).view(B, -1) (time-major memory read as rows)",
        ("for row in torch.stack(tokens, dim=1).tolist():", "for row in torch.cat(tokens).view(src.shape[0], -1).tolist():"))
mistake("ch07", "r07d", "ch07_attention", "Attention returns (weights, scores), the energies too, as many attention modules do (the decoder gets a tuple)",
        ("return torch.softmax(scores, dim=-1)", "return torch.softmax(scores, dim=-1), scores"))
mistake("ch07", "r07e", "ch07_encoder", "EncoderRNN feeds fc the outputs at position 1, outputs[:, 0] ('h_right after reading x_1 is there'): the left half is h_left after x_1, not after the last token",
        ("self.fc(torch.cat([h_left, h_right], dim=-1))", "self.fc(outputs[:, 0])"))
variant("ch07", "u07a", "ch07_attention", "Attention scores one source position at a time in a Python loop, stacked",
        code=("class Attention(nn.Module):\n"
              "    def __init__(self, enc_size, dec_size, attn_size):\n"
              "        super().__init__()\n"
              "        self.Attn = nn.Linear(dec_size + enc_size, attn_size)\n"
              "        self.v = nn.Parameter(torch.rand(attn_size) - 0.5)\n"
              "\n"
              "    def forward(self, hidden, encoder_outputs, mask=None):\n"
              "        scores = torch.stack([torch.tanh(self.Attn(torch.cat([hidden, encoder_outputs[:, s]], dim=-1))) @ self.v\n"
              "                              for s in range(encoder_outputs.shape[1])], dim=1)     # (B, Tx)\n"
              "        if mask is not None:\n"
              "            scores = scores.masked_fill(~mask, float('-inf'))\n"
              "        return torch.softmax(scores, dim=-1)\n"))
variant("ch07", "u07b", "ch07_encoder", "EncoderRNN records each cell's new (unmasked) state and relies on outputs * mask to zero the padding",
        ("            left.append(state[0])", "            left.append(new[0])"),
        ("            right.append(state[0])", "            right.append(new[0])"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "r08a", "ch08_attend", "attend renormalises the weights once more over dim=1 ('so that each row sums to 1'): dim 1 is the target steps",
        ("weights = torch.softmax(energies, dim=-1)",
         "weights = torch.softmax(energies, dim=-1)\n    weights = weights / weights.sum(dim=1, keepdim=True)   # each row sums to 1"))
mistake("ch08", "r08b", "ch08_dot", "dot_attention hands attend the energies already softmaxed ('the scores as probabilities'): two softmaxes",
        ("return attend(energies, enc, mask)", "return attend(energies.softmax(dim=-1), enc, mask)"))
mistake("ch08", "r08c", "ch08_scaled_dot", "scaled_dot_attention divides by D ** -0.5 (the scale factor 1/sqrt(D) used as the divisor): multiplies by sqrt(D)",
        ("/ math.sqrt(D)", "/ D ** -0.5"))
mistake("ch08", "r08d", "ch08_bilinear", "bilinear_attention computes d_t^T W step by step, but loops over range(dec.shape[0]) (B, not Ty)",
        ("energies = (dec @ W) @ enc.transpose(1, 2)",
         "queries = torch.stack([dec[:, t] @ W for t in range(dec.shape[0])], dim=1)   # d_t^T W for every step t\n"
         "    energies = queries @ enc.transpose(1, 2)"))
mistake("ch08", "r08e", "ch08_macs", "reduced_rank_macs returns the two counts as a list, [once, per_step]",
        ("return once, per_step", "return [once, per_step]"))
variant("ch08", "u08a", "ch08_attend", "attend fills padded energies with torch.finfo(dtype).min (exp underflows to exactly 0)",
        ('float("-inf")', "torch.finfo(energies.dtype).min"))
variant("ch08", "u08b", "ch08_bilinear", "bilinear_attention as a broadcast product of (dec @ W) (B, Ty, 1, Dh) and enc (B, 1, Tx, Dh) summed over the features",
        ("energies = (dec @ W) @ enc.transpose(1, 2)", "energies = ((dec @ W).unsqueeze(2) * enc.unsqueeze(1)).sum(-1)"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "r09a", "ch09_encode", "encode reorders h itself to [backward; forward] (the order the docstring gives for d_0), where h stays [forward; backward]",
        ("    # h_n[0]: forward state",
         "    H = model.hidden_size\n"
         "    h = torch.cat([h[..., H:], h[..., :H]], dim=-1)                         # [backward; forward], as for d_0\n"
         "    # h_n[0]: forward state"))
mistake("ch09", "r09b", "ch09_decode_step", "decode_step clears the padded keys in place, h_proj.masked_fill_(~mask[..., None], 0) ('padding must not count'): energy 0, not -inf, and the caller's h_proj changes",
        ("    e = torch.bmm(h_proj, d.unsqueeze(2)).squeeze(2)",
         "    h_proj.masked_fill_(~mask[..., None], 0)                                # padding must not count\n"
         "    e = torch.bmm(h_proj, d.unsqueeze(2)).squeeze(2)"),
        ("    e = e.masked_fill(~mask, float(\"-inf\"))                                    # padded positions get nothing\n", ""))
mistake("ch09", "r09c", "ch09_teacher_forcing", "decode_teacher_forcing passes h_proj twice, decode_step(model, y, o, state, h_proj, h_proj, mask) (the encoder states h replaced by their projection)",
        ("decode_step(model, tgt_in[:, t], o, state, h, h_proj, mask)", "decode_step(model, tgt_in[:, t], o, state, h_proj, h_proj, mask)"))
mistake("ch09", "r09d", "ch09_masked_loss", "masked_loss reshapes the scores with the size of the notebook's target vocabulary, len(TGT_VOCAB), instead of logits.shape[-1]",
        ("logits.reshape(-1, logits.shape[-1])", "logits.reshape(-1, len(TGT_VOCAB))"))
mistake("ch09", "r09e", "ch09_beam_search", "beam_search calls step_fn(tokens[-1], state) for every hypothesis (the SOS of the empty hypothesis forgotten)",
        ("step_fn(tokens[-1] if tokens else SOS, state)", "step_fn(tokens[-1], state)"))
variant("ch09", "u09a", "ch09_masked_loss", "masked_loss: log-probabilities of the targets picked with gather, the real ones kept with masked_select, then the mean",
        code=("def masked_loss(logits, tgt_out):\n"
              "    lp = F.log_softmax(logits, dim=-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)   # (B, Ty)\n"
              "    return -lp.masked_select(tgt_out != PAD).mean()\n"))
variant("ch09", "u09b", "ch09_beam_search", "beam_search keeps the candidates ranked as they come with bisect.insort (key = -score)",
        ("        candidates = []\n", "        import bisect\n        candidates = []\n"),
        ("                candidates.append((score + lp, tokens + [tok], new_state))\n"
         "        candidates.sort(key=lambda cand: -cand[0])\n",
         "                bisect.insort(candidates, (score + lp, tokens + [tok], new_state), key=lambda cand: -cand[0])\n"))

CASES = M + OK

# Phase 4: case -> (verdict, what the first failing visible test says), by the rule of trials 22f-22q.
VERDICTS: dict[str, tuple[str, str]] = {
    'ch01-r01a': ('P', "at the rnn call: 'Expected hidden size (1, 2, 4), got [1, 5, 4] -- the state has the wrong shape ...: (1, B, H) for nn.LSTM (did a .squeeze() also remove the batch axis ...?)': the state named and its batch axis wrong (5 = T); the squeeze guess is not the student's and the h0 line is not named (strict reading: Pa)"),
    'ch01-r01b': ('P', "'self.rnn is built with num_layers=6, but the docstring asks for num_layers=1 (pass num_layers=1 to RNN, or leave it out ...)'"),
    'ch01-r01c': ('P', '\'look at the line that returns it ("return self.head(outputs + h_n.transpose(0, 1))"; ... yours reads `h_n` and adds (+), which the reference\'s does not)\''),
    'ch01-r01d': ('Pa', "PyTorch's own 'Expected floating point type for target with class probabilities, got Long' at the student's loss line, nothing added (that model(x)[:, -1] turns the (B, C) logits into (B,) is left to the student)"),
    'ch01-r01e': ('Pa', "PyTorch's own 'INDICES element is out of DATA bounds, id=362 axis_dim=11' at the student's line, nothing added (axis_dim=11 = T hints at the axis; lenient reading: P)"),
    'ch02-r02a': ('P', "'add() takes 2 positional arguments but 3 were given -- torch.add takes (input, other, *, alpha=1, out=None): 2 positional arguments, and your line gives it 3: ...'"),
    'ch02-r02b': ('P', "'rnn_cell() got an unexpected keyword argument 'h' -- rnn_cell takes (x_t, h_prev, W_hx, W_hh, b_h): it has no argument called h'"),
    'ch02-r02c': ('P', '\'`grad` is right where it is first made, and its third value, from your line "grad = (grad * (1 - h_T ** 2)) @ W_hh", is not the reference\'s\': the line named, h_T visible in it; that every step needs its own state is left to the student (strict reading: Pa)'),
    'ch02-r02d': ('Pa', "'bptt_gradient_norms(states, W_hh): must be a 1-dim tensor, got shape (5, 1, 1)': the right result and what is wrong with its shape; keepdim=True not named (lenient reading: P)"),
    'ch02-r02e': ('Pa', "'a.grad after clipping to 3.5: ... Likely cause: your values are 0.2857 times the expected ones (a factor missing or extra?)': a factor, not which (0.2857 = 1 / 3.5: max_norm left out; lenient reading: P)"),
    'ch03-r03a': ('P', '\'`f` is the first variable whose value differs ... look at your line "f = torch.sigmoid(hx @ W["f"].T + b["f"] + 1.0)"\': the + 1.0 visible in the named line (strict reading: Pa)'),
    'ch03-r03b': ('P', "'lstm_cell_nobias's argument c_prev was changed by your function ...; it writes into its input (an in-place operation ...): compute a new tensor'"),
    'ch03-r03c': ('Pa', "PyTorch's own 'expected Tensor as element 0 in argument 0, but got tuple' at the return line's torch.stack, nothing added (that the outputs hold the (h, c) tuples is left to the student)"),
    'ch03-r03d': ('P', '\'hidden0 has inconsistent hidden_size: got 3, expected 4 -- ... h has shape (2, 3) here, but (2, 4) ...; it goes wrong at your line "h = x.new_zeros(B, H)" ... fix it there\''),
    'ch03-r03e': ('M', "'b['i']: expected shape (2,), got (); axis 0 (size 2) ... is missing: indexed away ([:, -1] or [0] ...?) or reduced over (a sum or mean too many?)': the right tensor; both guessed causes are not the student's (the .chunk(4) forgotten: zip walks the vector's numbers) (lenient reading: Pa)"),
    'ch04-r04a': ('P', "'gru_cell_textbook's argument h was changed by your function ...; it writes into its input (an in-place operation ...): compute a new tensor'"),
    'ch04-r04b': ('Pa', 'Python\'s own "name \'h_prev\' is not defined" at the student\'s r line, nothing added (lenient reading: P, the argument is h)'),
    'ch04-r04c': ('P', "'your values are what you get with `torch.sigmoid(i_r) + torch.sigmoid(h_r)` where `torch.sigmoid(i_r + h_r)` is needed (... the line that computes `r`)'"),
    'ch04-r04d': ('-', 'no visible test fails: the float64 result passes every visible test of gru_cell_pytorch'),
    'ch04-r04e': ('P', '\'count_parameters(\'gru\', 10, 20): got 1940, expected 1920 ... your line "per_direction += hidden_size # b_hn ..." ... goes wrong there\': the student\'s added line named'),
    'ch05-r05a': ('M', 'reverse_padded\'s own visible test passes; the padded BiLSTM test\'s error in reverse_padded \'called from your line "out_b, ... = lstm_direction(self.bwd, reverse_padded(x, lengths), lengths)" ...: if reverse_padded passed its own test, check what forward passes to it -- expand and expand_as only stretch axes of size 1: add the missing axis ...\': blames the (right) caller and an axis; the cause (T taken as lengths.max(), shorter than x.shape[1]) is not named (lenient reading: N)'),
    'ch05-r05b': ('M', "IndexError at the student's line 'h = torch.stack(hs, dim=1)[rows, lengths]': 'index 4 is out of bounds ... -- Likely cause: ... the loop over `t`: a loop that starts or ends one step off; or ... the line that computes `h_new, c_new`: an index one step off (x[:, t - 1] ...)': the line is right, but both guessed causes point to other (right) lines; lengths for lengths - 1 is not said (lenient reading: Pa)"),
    'ch05-r05c': ('P', '\'reverse_padded is called with x (2, 5) where the reference\'s call gets (2, 4, 3) ..., from your line "h_b, c_b = reverse_padded(h_b, lengths), ..."\': the extra call named'),
    'ch05-r05d': ('P', '\'`h_n` is right where it is first made, and its second value, from your line "out, (h_n, c_n) = layer(packed, None if l == 0 else (h_n, c_n))", is not the reference\'s\': the line with the passed state named (strict reading: Pa)'),
    'ch05-r05e': ('P', "at the LSTM call: 'mat1 and mat2 must have the same dtype, but got Long and Float -- ... token ids (int64) go through an embedding first ... (.float(), or the right tensor?)': token ids not embedded, the student's cause"),
    'ch06-r06a': ('-', "no visible test fails: numericalize's values are right; the caller's stoi grows (setdefault) and no visible test checks it"),
    'ch06-r06b': ('P', '\'look at your line "d = self.cell(F.relu(self.embedding(y_prev)), d_prev)" (... yours calls relu, which the reference\'s does not)\''),
    'ch06-r06c': ('P', "'the loss: must be a 0-dim tensor, got shape (2, 4, 10) -- Likely cause: ... the returned value: two items in the wrong order; ...'"),
    'ch06-r06d': ('P', "'got [[6, 7, 8, 0], [9, 0, 0, 0], ...], expected [[6, 7, 8], [9], ...]; ... each of your lists starts with the expected items but some go on after them: ... drop what follows': the trailing <pad> tokens shown and to be dropped (strict reading: Pa, <pad> not named)"),
    'ch06-r06e': ('P', "'step 1 must feed <sos> to every sequence, fed [2, 2, 2]'"),
    'ch07-r07a': ('N', "'outputs (padded batch): 32 of 96 entries differ; first at index (0, 0, 4) ... Likely cause: the padded positions are right; every wrong entry is elsewhere': true but nothing leads to the right-to-left loop's mask index (the right half, features 4-7, is not said)"),
    'ch07-r07b': ('P', '\'`h` is the first variable whose value differs ...: look at your line "h, c = self.lstm_cell(..." (... yours calls zeros_like and reads `h_prev` ...; the reference\'s reads `state`, which yours does not)\''),
    'ch07-r07c': ('Pa', "'tokens ...: got [[5, 7, 6], []], expected [[5, 6], [7]]; first difference at [0][1]': a bare value mismatch of the right result (the interleaving of the rows left to the student)"),
    'ch07-r07d': ('P', "'Attention.forward's return value: must be a torch.Tensor, got a tuple of 2 items'"),
    'ch07-r07e': ('M', "'hidden (padded batch): ... Likely cause: your values are what you get with `left[0]` where `state[0]` is needed (in EncoderRNN.forward, the line that computes `h_left`)': blames the student's h_left line, which is right; the wrong line is fc(outputs[:, 0]) (lenient reading: Pa, 'left[0]' describes the value used)"),
    'ch08-r08a': ('M', '\'weights: contains NaN ...: a softmax gives NaN over entries that are all -inf, or ... +inf ...; take the softmax over dimension 2 ... (the first variable that holds NaN is `weights` ..., made at your line "weights = weights / weights.sum(dim=1, keepdim=True)" ...) -- Likely cause: ... the sign flipped; or another number (an index, axis ...)\': a wrong named cause first (-inf / +inf rows), then the right line and \'axis\' among guesses (lenient reading: P)'),
    'ch08-r08b': ('Pa', '\'every variable that can be compared agrees ..., but the result differs: look at the line that returns it ("return attend(energies.softmax(dim=-1), enc, mask)")\': the right line, not what is wrong in it (lenient reading: P, the .softmax is visible)'),
    'ch08-r08c': ('P', "'your values are what you get with `dec @ enc.transpose(1, 2) * math.sqrt(D)` where `... / math.sqrt(D)` is needed'"),
    'ch08-r08d': ('P', "'weights: expected shape (2, 3, 4), got (2, 2, 4); ... dimension 1 has 2 (B) where 3 (Ty) is expected: the B axis kept where another one is asked ..., or ... an off-by-one in a range ...': B for Ty in the student's range"),
    'ch08-r08e': ('P', "'reduced_rank_macs's return value (once, per_step): must be a Python tuple, got a list of 2 items'"),
    'ch09-r09a': ('P', "'h: ... Likely cause: the two halves along dimension 2 are swapped (the two directions ... in the wrong order)'"),
    'ch09-r09b': ('P', "'decode_step's argument h_proj was changed by your function ...; it writes into its input (... masked_fill_ ...): compute a new tensor'"),
    'ch09-r09c': ('P', 'decode_teacher_forcing\'s own visible test passes (stand-ins); the BLEU test\'s error in decode_step \'called from your line "... decode_step(model, tgt_in[:, t], o, state, h_proj, h_proj, mask)" ...: if decode_step passed its own test, check what decode_teacher_forcing passes to it -- model.W_u ... 96 input features, ... 64 ...; ... is model.W_h the layer meant ...?\': the call named and the check on what it passes; the closing W_h guess is wrong (strict reading: Pa)'),
    'ch09-r09d': ('P', 'at the student\'s line: "shape \'[-1, 67]\' is invalid for input of size 48 -- ... print the tensor\'s shape (the wrong tensor, or a size of another tensor used ...?)": a size from elsewhere (len(TGT_VOCAB) = 67) (strict reading: Pa)'),
    'ch09-r09e': ('Pa', "at the student's line: 'list index out of range -- tokens has 0 items and -1 is -1: -1 counts something else than tokens holds ...': the empty hypothesis shown; that it needs SOS is left to the student (lenient reading: P)"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.trial_main(sys.modules[__name__], "/tmp/student_trial_22r", argv)


if __name__ == "__main__":
    main()
