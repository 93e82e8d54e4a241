"""Student trial 22q: an acceptance trial of issue 22, 45 new mistakes and 18 correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed before solutions/ and the catalogues
were read: benchmarks/results/student_trial_22q_plan.md); every planned mistake and variant that repeated an old
mutant, an alternative or an earlier trial's case was replaced by a new one written the same way (the plan's second
table lists what each replaced case repeated, and the replacements that stay near an old case). A mistake is one or
more edits of one cell's reference code, ``(old, new)`` pairs whose ``old`` occurs once; a variant rewrites the cell
(or edits it) and must keep full marks. Only the cases and the verdicts live here: building, grading (the class
grader, one run per assignment), the Jupyter view and the report are benchmarks/student_trial.py's and
student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22q unless --root says otherwise):

    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22q.py --student-view [ch01 ...] [--students ch01-q01a,...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22q.py --grade [ch01 ...]
    /work/main/.venv/bin/python benchmarks/student_trial_22q.py --table     # benchmarks/results/student_trial_22q.md's tables
    /work/main/.venv/bin/python benchmarks/student_trial_22q.py --save benchmarks/results/student_trial_22q.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "q01a", "ch01_many_to_many_sync", "ManyToManySync drops outputs[:, 0] ('index 0 is h_0'): nn.RNN's outputs read as h_0..h_T, so T - 1 outputs",
        ("return self.head(outputs)     # (B, T, C): nn.Linear acts on the last dimension",
         "return self.head(outputs[:, 1:])   # outputs[:, 0] is h_0: skip it"))
mistake("ch01", "q01b", "ch01_one_to_many", "OneToMany writes x[0] at the first step ('one input vector'): the first example's input broadcast to every row of the batch",
        ("inputs[:, 0] = x                                     # x only at the first step",
         "inputs[:, 0] = x[0]                                  # the one input, at the first step"))
mistake("ch01", "q01c", "ch01_many_to_many_async", "ManyToManyAsync emits one output per step of BOTH sequences: head(cat([encoder outputs, decoder outputs], 1)), (B, Tx + Ty, C)",
        ("_, h_n = self.encoder(src)            # h_n: (1, B, H), the state after the last source step",
         "enc_out, h_n = self.encoder(src)      # h_n: (1, B, H), the state after the last source step"),
        ("return self.head(outputs)             # (B, Ty, C)",
         "return self.head(torch.cat([enc_out, outputs], dim=1))   # many to many: an output at every step"))
mistake("ch01", "q01d", "ch01_train_step", "train_step returns loss.item() / len(x) ('the loss per example': cross_entropy already averages)",
        ("    return loss.item()\n", "    return loss.item() / len(x)   # the loss per example\n"))
mistake("ch01", "q01e", "ch01_fit", "fit reuses the names: x, y = x[idx], y[idx] inside the loop, so every later batch is drawn from the previous batch",
        ("        losses.append(train_step(model, optimizer, x[idx], y[idx]))",
         "        x, y = x[idx], y[idx]\n        losses.append(train_step(model, optimizer, x, y))"))
variant("ch01", "s01a", "ch01_fit", "fit with Adam's defaults written out (betas, eps, weight_decay=0) and randint by keywords, high=x.shape[0]",
        ("torch.optim.Adam(model.parameters(), lr=lr)",
         "torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0)"),
        ("idx = torch.randint(0, len(x), (batch_size,), generator=g)   #",
         "idx = torch.randint(low=0, high=x.shape[0], size=(batch_size,), generator=g)   #"))
variant("ch01", "s01b", "ch01_many_to_many_async", "ManyToManyAsync runs the ENCODER one source step at a time, carrying h_n, then the decoder on the whole target",
        code=("class ManyToManyAsync(nn.Module):\n"
              "    def __init__(self, src_size, tgt_size, hidden_size, num_classes):\n"
              "        super().__init__()\n"
              "        self.encoder = nn.RNN(src_size, hidden_size, batch_first=True)\n"
              "        self.decoder = nn.RNN(tgt_size, hidden_size, batch_first=True)\n"
              "        self.head = nn.Linear(hidden_size, num_classes)\n"
              "\n"
              "    def forward(self, src, tgt):\n"
              "        h = None\n"
              "        for t in range(src.shape[1]):              # the source one step at a time\n"
              "            _, h = self.encoder(src[:, t:t + 1], h)\n"
              "        outputs, _ = self.decoder(tgt, h)\n"
              "        return self.head(outputs)\n"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "q02a", "ch02_rnn_cell", "rnn_cell squashes with torch.atanh (the autocompleted name next to tanh): NaN wherever |pre-activation| > 1",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)", "return torch.atanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)"))
mistake("ch02", "q02b", "ch02_rnn_layer", "rnn_layer stacks the states in the layout of x, dim=1 if batch_first else 0, and keeps the transpose back: time-first outputs turned round twice",
        ("    outputs = torch.stack(outputs, dim=1)              # (B, T, H)\n",
         "    outputs = torch.stack(outputs, dim=1 if batch_first else 0)   # in the layout of x\n"))
mistake("ch02", "q02c", "ch02_rnn_layer", "rnn_layer starts from h0.detach() ('the given state is an input, not something to train'): no gradient reaches h0",
        ("h = x.new_zeros(B, W_hh.shape[0]) if h0 is None else h0   # (B, H)",
         "h = x.new_zeros(B, W_hh.shape[0]) if h0 is None else h0.detach()   # (B, H): an input, not trained"))
mistake("ch02", "q02d", "ch02_bptt_gradient_norms", "bptt starts from a float64 gradient, ones_like(..., dtype=torch.float64) ('for precision'), then multiplies it by the float32 W_hh",
        ("grad = torch.ones_like(states[:, -1])                  # (B, H): dL/dh_T",
         "grad = torch.ones_like(states[:, -1], dtype=torch.float64)   # (B, H): dL/dh_T, in float64 for precision"))
mistake("ch02", "q02e", "ch02_bptt_gradient_norms", "bptt starts from dL/dh_T = 1 - h_T^2 (the last tanh's derivative taken for the gradient of the loss at h_T)",
        ("grad = torch.ones_like(states[:, -1])                  # (B, H): dL/dh_T",
         "grad = 1 - states[:, -1] ** 2                         # (B, H): dL/dh_T through the last tanh"))
variant("ch02", "s02a", "ch02_bptt_gradient_norms", "bptt takes each norm as the norm of the per-example norms, grad.norm(dim=1).norm()",
        ("norms = [torch.linalg.vector_norm(grad)]", "norms = [grad.norm(dim=1).norm()]"),
        ("norms.append(torch.linalg.vector_norm(grad))", "norms.append(grad.norm(dim=1).norm())"))
variant("ch02", "s02b", "ch02_rnn_cell", "rnn_cell adds the two products by stacking them and summing over the new axis, then .tanh()",
        code=("def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):\n"
              "    terms = torch.stack([h_prev @ W_hh.T, x_t @ W_hx.T])   # (2, B, H)\n"
              "    return (terms.sum(dim=0) + b_h).tanh()\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "q03a", "ch03_lstm_cell", "lstm_cell unpacks the weight dicts, W_i, W_f, W_g, W_o = W (unpacking a dict gives its KEYS, the strings)",
        ("    hx = torch.cat([h_prev, x], dim=1)             # (B, H + D): [h_{t-1}; x_t] for every example\n",
         "    hx = torch.cat([h_prev, x], dim=1)             # (B, H + D): [h_{t-1}; x_t] for every example\n"
         "    W_i, W_f, W_g, W_o = W                         # the four gates' matrices\n"
         "    b_i, b_f, b_g, b_o = b\n"),
        ('i = torch.sigmoid(hx @ W["i"].T + b["i"])', "i = torch.sigmoid(hx @ W_i.T + b_i)"),
        ('f = torch.sigmoid(hx @ W["f"].T + b["f"])', "f = torch.sigmoid(hx @ W_f.T + b_f)"),
        ('g = torch.tanh(hx @ W["g"].T + b["g"])', "g = torch.tanh(hx @ W_g.T + b_g)"),
        ('o = torch.sigmoid(hx @ W["o"].T + b["o"])', "o = torch.sigmoid(hx @ W_o.T + b_o)"))
mistake("ch03", "q03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias feeds the previous CELL state to the recurrent weights, c_prev @ Wh[k].T, in all four gates ('the previous state')",
        ('i = torch.sigmoid(x @ Wx["i"].T + h_prev @ Wh["i"].T)', 'i = torch.sigmoid(x @ Wx["i"].T + c_prev @ Wh["i"].T)'),
        ('f = torch.sigmoid(x @ Wx["f"].T + h_prev @ Wh["f"].T)', 'f = torch.sigmoid(x @ Wx["f"].T + c_prev @ Wh["f"].T)'),
        ('g = torch.tanh(x @ Wx["g"].T + h_prev @ Wh["g"].T)', 'g = torch.tanh(x @ Wx["g"].T + c_prev @ Wh["g"].T)'),
        ('o = torch.sigmoid(x @ Wx["o"].T + h_prev @ Wh["o"].T)', 'o = torch.sigmoid(x @ Wx["o"].T + c_prev @ Wh["o"].T)'))
mistake("ch03", "q03c", "ch03_split_gates", "split_gates tests `if cell.bias is None:` (the docstring says cell.bias is False then): a bias-free cell reaches None + None",
        ("    if not cell.bias:\n", "    if cell.bias is None:\n"))
mistake("ch03", "q03d", "ch03_lstm_layer", "lstm_layer makes the zero states in float64 ('double precision for the states'), torch.zeros(B, H, dtype=torch.float64)",
        ("        h = x.new_zeros(B, hidden_size)            # (B, H)\n        c = x.new_zeros(B, hidden_size)            # (B, H)\n",
         "        h = torch.zeros(B, hidden_size, dtype=torch.float64)   # double precision for the states\n"
         "        c = torch.zeros(B, hidden_size, dtype=torch.float64)\n"))
mistake("ch03", "q03e", "ch03_lstm_cell", "lstm_cell concatenates h_prev.detach() ('the previous state is a constant of this step'): values right, no gradient through time",
        ("hx = torch.cat([h_prev, x], dim=1)", "hx = torch.cat([h_prev.detach(), x], dim=1)"))
variant("ch03", "s03a", "ch03_lstm_cell", "lstm_cell with the logistic function written through tanh, sigmoid(z) = (1 + tanh(z / 2)) / 2",
        code=("def lstm_cell(x, h_prev, c_prev, W, b):\n"
              "    sig = lambda z: 0.5 * (1 + torch.tanh(0.5 * z))   # the logistic function, through tanh\n"
              "    hx = torch.cat([h_prev, x], dim=1)\n"
              "    i = sig(hx @ W['i'].T + b['i'])\n"
              "    f = sig(hx @ W['f'].T + b['f'])\n"
              "    g = torch.tanh(hx @ W['g'].T + b['g'])\n"
              "    o = sig(hx @ W['o'].T + b['o'])\n"
              "    c = f * c_prev + i * g\n"
              "    return o * torch.tanh(c), c\n"))
variant("ch03", "s03b", "ch03_lstm_layer", "lstm_layer written recursively over time (run(t, h, c) returns the later outputs and the last state)",
        code=("def lstm_layer(cell, x, hidden_size, state=None):\n"
              "    B, T, _ = x.shape\n"
              "    if state is None:\n"
              "        state = (x.new_zeros(1, B, hidden_size), x.new_zeros(1, B, hidden_size))\n"
              "\n"
              "    def run(t, h, c):\n"
              "        if t == T:\n"
              "            return [], (h, c)\n"
              "        h, c = cell(x[:, t], (h, c))\n"
              "        rest, last = run(t + 1, h, c)\n"
              "        return [h] + rest, last\n"
              "\n"
              "    outs, (h, c) = run(0, state[0][0], state[1][0])\n"
              "    return torch.stack(outs, dim=1), (h[None], c[None])\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "q04a", "ch04_gru_cell_textbook", "gru_cell_textbook adds the update gate's bias b_z in the reset gate (copy slip from the line below)",
        ("r = torch.sigmoid(x @ W_rx.T + h @ W_rh.T + b_r)", "r = torch.sigmoid(x @ W_rx.T + h @ W_rh.T + b_z)"))
mistake("ch04", "q04b", "ch04_gru_cell_textbook", "gru_cell_textbook multiplies x (not h) by W_rh in the reset gate, x @ W_rh.T (a slip of the variable)",
        ("h @ W_rh.T + b_r", "x @ W_rh.T + b_r"))
mistake("ch04", "q04c", "ch04_gru_cell_pytorch", "gru_cell_pytorch treats the update gate as a switch, torch.where(z > 0.5, h, n) ('a gate near 1 keeps the old state')",
        ("    return (1 - z) * n + z * h              # (B, H)\n",
         "    return torch.where(z > 0.5, h, n)       # the update gate decides: keep h or take n\n"))
mistake("ch04", "q04d", "ch04_gru_cell_pytorch", "gru_cell_pytorch cuts the hidden blocks from gi (copy slip of the line above): h_r, h_z, h_n = gi.chunk(3, dim=1)",
        ("h_r, h_z, h_n = gh.chunk(3, dim=1)", "h_r, h_z, h_n = gi.chunk(3, dim=1)"))
mistake("ch04", "q04e", "ch04_count_parameters", "count_parameters starts its running total at 0.0 (a float accumulator): returns a float",
        ("    total = 0\n", "    total = 0.0\n"))
variant("ch04", "s04a", "ch04_gru_cell_textbook", "gru_cell_textbook with the logistic function written out, 1 / (1 + exp(-a)), and slices of the stacked weights",
        code=("def gru_cell_textbook(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    sig = lambda a: 1 / (1 + torch.exp(-a))\n"
              "    H = h.shape[1]\n"
              "    b = bias_ih + bias_hh\n"
              "    blk = lambda w, k: w[k * H:(k + 1) * H]\n"
              "    r = sig(x @ blk(weight_ih, 0).T + h @ blk(weight_hh, 0).T + blk(b, 0))\n"
              "    z = sig(x @ blk(weight_ih, 1).T + h @ blk(weight_hh, 1).T + blk(b, 1))\n"
              "    h_tilde = torch.tanh(x @ blk(weight_ih, 2).T + (r * h) @ blk(weight_hh, 2).T + blk(b, 2))\n"
              "    return (1 - z) * h_tilde + z * h\n"))
variant("ch04", "s04b", "ch04_count_parameters", "count_parameters over itertools.product(layers, directions), one direction's tensors at a time",
        code=("import itertools\n\n\n"
              "def count_parameters(kind, input_size, hidden_size, num_layers=1, bias=True, bidirectional=False):\n"
              "    blocks = {'rnn': 1, 'lstm': 4, 'gru': 3}[kind]\n"
              "    dirs = 2 if bidirectional else 1\n"
              "    total = 0\n"
              "    for layer, _ in itertools.product(range(num_layers), range(dirs)):\n"
              "        d_in = input_size if layer == 0 else hidden_size * dirs\n"
              "        total += blocks * hidden_size * (d_in + hidden_size) + (2 * blocks * hidden_size if bias else 0)\n"
              "    return total\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "q05a", "ch05_lstm_direction", "lstm_direction sizes its zero states with cell.input_size (D) where cell.hidden_size is meant",
        ("    h = x.new_zeros(B, cell.hidden_size)                        # (B, H)\n    c = x.new_zeros(B, cell.hidden_size)                        # (B, H)\n",
         "    h = x.new_zeros(B, cell.input_size)                         # (B, H)\n    c = x.new_zeros(B, cell.input_size)                         # (B, H)\n"))
mistake("ch05", "q05b", "ch05_bilstm_from_cells", "BiLSTMFromCells gives the backward cell x as it is and reverses only its outputs ('reverse once, at the end')",
        ("lstm_direction(self.bwd, reverse_padded(x, lengths), lengths)", "lstm_direction(self.bwd, x, lengths)"))
mistake("ch05", "q05c", "ch05_residual_stack", "ResidualLSTMStack applies the dropout to each upper layer's OUTPUT before the residual, dropout(LSTM_l(h)) + h, not to its input",
        ("inp = h if l == 0 else self.dropout(h)", "inp = h"),
        ("h = out if l == 0 else out + h", "h = out if l == 0 else self.dropout(out) + h"))
mistake("ch05", "q05d", "ch05_sentence_classifier", "SentenceClassifier pads back to total_length=tokens.shape[0] (the batch size where T = tokens.shape[1] is meant)",
        ("total_length=tokens.shape[1])", "total_length=tokens.shape[0])"))
mistake("ch05", "q05e", "ch05_sentence_classifier", "SentenceClassifier sorts the batch by length for packing (enforce_sorted's default) and never puts the logits back in the input's order",
        ("        emb = self.embed(tokens)                                                  # (B, T, E)\n"
         "        packed = pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)\n",
         "        lengths, order = lengths.sort(descending=True)                            # packing wants them sorted\n"
         "        emb = self.embed(tokens[order])                                           # (B, T, E)\n"
         "        packed = pack_padded_sequence(emb, lengths.cpu(), batch_first=True)\n"))
variant("ch05", "s05a", "ch05_final_states", "final_states gathers the forward half with an index only H wide, (lengths - 1) expanded to (B, 1, H)",
        code=("def final_states(outputs, lengths):\n"
              "    B, T, two_h = outputs.shape\n"
              "    H = two_h // 2\n"
              "    idx = (lengths - 1).to(outputs.device).view(B, 1, 1).expand(B, 1, H)\n"
              "    forward_last = outputs.gather(1, idx)[:, 0]          # the first H features at the last real step\n"
              "    return torch.cat([forward_last, outputs[:, 0, H:]], dim=-1)\n"))
variant("ch05", "s05b", "ch05_sentence_classifier", "SentenceClassifier counts the lengths from the tokens itself, (tokens != 0).sum(1) (0 is <pad>, never a word)",
        ("        emb = self.embed(tokens)                                                  # (B, T, E)\n",
         "        lengths = (tokens != 0).sum(dim=1)                                        # the real lengths, from the tokens\n"
         "        emb = self.embed(tokens)                                                  # (B, T, E)\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "q06a", "ch06_build_vocab", "build_vocab reads min_freq as a relative frequency, count / total >= min_freq ('frequency' = a share of all tokens)",
        ("kept = [token for token, count in counts.items() if count >= min_freq]",
         "total = sum(counts.values())\n"
         "    kept = [token for token, count in counts.items() if count / total >= min_freq]   # frequency: a share of all tokens"))
mistake("ch06", "q06b", "ch06_numericalize", "numericalize adds <eos> with ids.insert(-1, EOS_INDEX) ('-1 is the end'): it goes in before the last token",
        ("        ids = ids + [EOS_INDEX]\n", "        ids.insert(-1, EOS_INDEX)   # at the end\n"))
mistake("ch06", "q06c", "ch06_decoder", "Decoder.step writes the new state into d_prev in place, d_prev.copy_(...) ('update the state'), and returns it: the caller's tensor changes",
        ("        d = self.cell(self.embedding(y_prev), d_prev)   # (B, H)\n",
         "        d = d_prev.copy_(self.cell(self.embedding(y_prev), d_prev))   # the state updated in place\n"))
mistake("ch06", "q06d", "ch06_teacher_forced_loss", "teacher_forced_loss sums the losses and divides by the real tokens of the whole tgt, (tgt != pad).sum() (the <sos> column counted too)",
        ("    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), ignore_index=pad_index)\n",
         "    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), ignore_index=pad_index,\n"
         "                           reduction=\"sum\")\n"
         "    loss = loss / (tgt != pad_index).sum()              # divided by the number of real tokens\n"))
mistake("ch06", "q06e", "ch06_greedy_decode", "greedy_decode turns the arg-max into Python ints once, y = logits.argmax(-1).tolist(), and feeds that list back to decoder.step",
        ("            y = logits.argmax(dim=-1)                                     # (B,)\n"
         "            for b, token in enumerate(y.tolist()):\n",
         "            y = logits.argmax(dim=-1).tolist()                            # the tokens, as ints\n"
         "            for b, token in enumerate(y):\n"))
variant("ch06", "s06a", "ch06_encoder", "Encoder passes padding_idx positionally, nn.Embedding(V, E, PAD_INDEX), and returns h_n[-1] (the last layer's state)",
        ("self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=PAD_INDEX)", "self.embedding = nn.Embedding(vocab_size, emb_size, PAD_INDEX)"),
        ("return outputs, h_n[0]", "return outputs, h_n[-1]"))
variant("ch06", "s06b", "ch06_numericalize", "numericalize as one list display with starred conditional parts",
        code=("def numericalize(tokens, stoi, add_sos=False, add_eos=False):\n"
              "    return [*([SOS_INDEX] if add_sos else []),\n"
              "            *(stoi.get(t, UNK_INDEX) for t in tokens),\n"
              "            *([EOS_INDEX] if add_eos else [])]\n"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "q07a", "ch07_lstm_cell", "LSTMCell cuts the four blocks with z.split(4, dim=-1) (pieces of 4 columns) where chunk(4) (4 pieces) is meant",
        ("f, i, o, g = z.chunk(4, dim=-1)", "f, i, o, g = z.split(4, dim=-1)"))
mistake("ch07", "q07b", "ch07_encoder", "EncoderRNN zeroes the padded outputs with outputs * mask, the (B, Tx) mask without its feature axis",
        ("outputs = outputs * mask[:, :, None]", "outputs = outputs * mask"))
mistake("ch07", "q07c", "ch07_attention", "Attention masks the (B, Tx, A) tanh energies with -inf before the dot product with v (inf - inf: NaN rows)",
        ("        scores = energy @ self.v                                   # (B, Tx)\n"
         "        if mask is not None:\n"
         "            scores = scores.masked_fill(~mask, float(\"-inf\"))\n",
         "        if mask is not None:\n"
         "            energy = energy.masked_fill(~mask[:, :, None], float(\"-inf\"))   # padded positions get -inf\n"
         "        scores = energy @ self.v                                   # (B, Tx)\n"))
mistake("ch07", "q07d", "ch07_decoder", "AttnDecoderRNN squeezes the bmm's (B, 1, De) result with .squeeze() (a batch of one loses its batch axis)",
        ("weighted_encoder = torch.bmm(weights[:, None, :], encoder_outputs)[:, 0]",
         "weighted_encoder = torch.bmm(weights[:, None, :], encoder_outputs).squeeze()"))
mistake("ch07", "q07e", "ch07_greedy", "greedy_translate leaves <eos> out with row.remove(eos_index) (removes the first <eos> only; what follows it stays)",
        ("        out.append(row[: row.index(eos_index)] if eos_index in row else row)\n",
         "        if eos_index in row:\n"
         "            row.remove(eos_index)                                   # <eos> left out\n"
         "        out.append(row)\n"))
variant("ch07", "s07a", "ch07_lstm_cell", "LSTMCell with z.unflatten(-1, (4, H)).unbind(-2) for the blocks and torch.addcmul for the cell",
        code=("class LSTMCell(nn.Module):\n"
              "    def __init__(self, input_size, hidden_size):\n"
              "        super().__init__()\n"
              "        self.hidden_size = hidden_size\n"
              "        self.W = nn.Linear(input_size, 4 * hidden_size, bias=False)\n"
              "        self.U = nn.Linear(hidden_size, 4 * hidden_size, bias=False)\n"
              "\n"
              "    def forward(self, x, state):\n"
              "        h_prev, c_prev = state\n"
              "        z = self.W(x) + self.U(h_prev)\n"
              "        f, i, o, g = z.unflatten(-1, (4, self.hidden_size)).unbind(-2)\n"
              "        c = torch.addcmul(torch.sigmoid(f) * c_prev, torch.sigmoid(i), torch.tanh(g))\n"
              "        return torch.sigmoid(o) * torch.tanh(c), c\n"))
variant("ch07", "s07b", "ch07_greedy", "greedy_translate cuts each row at its first <eos> with itertools.takewhile",
        ("        out.append(row[: row.index(eos_index)] if eos_index in row else row)\n",
         "        out.append(list(itertools.takewhile(lambda tok: tok != eos_index, row)))\n"),
        ("    memory, state = model.encode(src, src_lengths)\n",
         "    import itertools\n    memory, state = model.encode(src, src_lengths)\n"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "q08a", "ch08_attend", "attend calls masked_fill with its two arguments the other way round, masked_fill(float('-inf'), mask)",
        ('energies = energies.masked_fill(~mask[:, None, :], float("-inf"))', 'energies = energies.masked_fill(float("-inf"), ~mask[:, None, :])'))
mistake("ch08", "q08b", "ch08_dot", "dot_attention transposes the keys with enc.t() (t() is for 2-D matrices)",
        ("energies = dec @ enc.transpose(1, 2)", "energies = dec @ enc.t()"))
mistake("ch08", "q08c", "ch08_scaled_dot", "scaled_dot_attention takes the root with np.sqrt (the NumPy habit; the notebook imports math, not numpy)",
        ("/ math.sqrt(D)", "/ np.sqrt(D)"))
mistake("ch08", "q08d", "ch08_macs", "reduced_rank_macs multiplies the per_step queries by Ty once more ('the query at every target step'), though `queries` already counts all Ty of them",
        ("per_step = B * (Ty * keys + queries + dots)", "per_step = B * (Ty * keys + Ty * queries + dots)"))
mistake("ch08", "q08e", "ch08_dot", "dot_attention returns (contexts, weights), the pair in the other order",
        ("    return attend(energies, enc, mask)\n", "    weights, contexts = attend(energies, enc, mask)\n    return contexts, weights\n"))
variant("ch08", "s08a", "ch08_reduced_rank", "reduced_rank_attention computes the queries one target step at a time and stacks them (the keys still once)",
        ("queries = dec @ U.T                          # (B, Ty, R): U d_t for every target step",
         "queries = torch.stack([dec[:, t] @ U.T for t in range(dec.shape[1])], dim=1)   # (B, Ty, R)"))
variant("ch08", "s08b", "ch08_bilinear", "bilinear_attention with torch.tensordot(dec, W, dims=1) for dec @ W",
        ("energies = (dec @ W) @ enc.transpose(1, 2)", "energies = torch.tensordot(dec, W, dims=1) @ enc.transpose(1, 2)"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "q09a", "ch09_encode", "encode returns the packed outputs as h (pad_packed_sequence forgotten): a PackedSequence, not (B, Tx, 2H)",
        ("h, _ = pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])", "h = out"))
mistake("ch09", "q09b", "ch09_decode_step", "decode_step attends with the new CELL state c_t, bmm(h_proj, c.unsqueeze(2)) (a slip between the two states)",
        ("e = torch.bmm(h_proj, d.unsqueeze(2)).squeeze(2)", "e = torch.bmm(h_proj, c.unsqueeze(2)).squeeze(2)"))
mistake("ch09", "q09c", "ch09_teacher_forcing", "decode_teacher_forcing scores the decoder state d_t, W_vocab(d_t) (chapter 6's decoder predicts from its state), not the combined output",
        ("        outputs.append(o)\n", "        outputs.append(state[0])   # d_t: the decoder's state\n"))
mistake("ch09", "q09d", "ch09_masked_loss", "masked_loss flattens the targets with tgt_out.view(-1): the training loop's tgt[:, 1:] is not contiguous",
        ("tgt_out.reshape(-1)", "tgt_out.view(-1)"))
mistake("ch09", "q09e", "ch09_beam_search", "beam_search finishes EVERY candidate that ends in <eos>, not only the kept ones; the live ones fill what is left of the beam",
        ("for score, tokens, state in candidates[: beam_size - len(finished)]:", "for score, tokens, state in candidates:"),
        ("            else:\n                live.append((tokens, score, state))",
         "            elif len(live) < beam_size - len(finished):\n                live.append((tokens, score, state))"))
variant("ch09", "s09a", "ch09_masked_loss", "masked_loss through an nn.CrossEntropyLoss(ignore_index=PAD) module on flatten(0, 1)",
        code=("def masked_loss(logits, tgt_out):\n"
              "    return nn.CrossEntropyLoss(ignore_index=PAD)(logits.flatten(0, 1), tgt_out.flatten())\n"))
variant("ch09", "s09b", "ch09_encode", "encode reads d_0's two states from the padded outputs (backward at position 0, forward at the last real token), c_0 from c_n",
        ("    d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1))                        # (B, H)\n",
         "    H = model.hidden_size\n"
         "    fwd_last = h[torch.arange(src.shape[0]), (src_len - 1).to(h.device), :H]   # forward h at the last real token\n"
         "    d0 = model.W_h(torch.cat([h[:, 0, H:], fwd_last], dim=-1))                 # (B, H)\n"))

CASES = M + OK

# Phase 4: case -> (verdict, what the first failing visible test says), by the rule of trials 22f-22p.
VERDICTS: dict[str, tuple[str, str]] = {
    "ch01-q01a": ('P', "'expected shape (2, 5, 6), got (2, 4, 6); dimension 1 has 4 instead of 5: one too few (an off-by-one in a range or a slice?)': the student's only slice, outputs[:, 1:]"),
    "ch01-q01b": ('M', "'outputs is the first variable whose value differs ... (the variables made before it agree: inputs): look at your line \"outputs, _ = self.rnn(inputs)\"': inputs are wrong (x[0] in every row); the comparison is made before the in-place write, so the message clears the wrong line and blames the right one (lenient reading: N)"),
    "ch01-q01c": ('Pa', "'expected shape (2, 7, 6), got (2, 12, 6); dimension 1 has size 12 instead of 7 (the wrong tensor, weight or size used there?)': the right tensor and axis, a generic cause (12 = Tx + Ty left to the student)"),
    "ch01-q01d": ('P', "'look at the line that returns it (\"return loss.item() / len(x)\"; ... yours reads `x` and divides (/), which the reference's does not)'"),
    "ch01-q01e": ('M', "'the first loss is right and a later one differs: the update differs (Adam with the lr argument, gradients cleared before each backward, one optimizer step per batch)': three guessed causes, none the student's (x, y rebound to the batch: later batches are drawn from it) (lenient reading: N)"),
    "ch02-q02a": ('Pa', "'every variable that can be compared agrees ..., but the result differs: look at the line that returns it (\"return torch.atanh(...)\")': the right line, not what is wrong in it (no NaN in the test's values; lenient reading: P, atanh is visible in the quoted line)"),
    "ch02-q02b": ('Pa', "'outputs of rnn_layer(x, ..., batch_first=False): expected (5, 2, 4), got (2, 5, 4); ... axes swapped (batch_first? a transpose or permute missing, or a view/reshape ...)': the right tensor and case; the cause named is a transpose MISSING where the student's has one too many (strict reading: M; lenient: P, 'batch_first?' sends the student to the two layout changes)"),
    "ch02-q02c": ('P', "'the gradient of h_last.sum() with respect to h0: no gradient arrived (it is None): ... (torch.no_grad(), .detach(), .data, ...)': the .detach() named"),
    "ch02-q02d": ('M', "PyTorch's 'expected m1 and m2 to have the same dtype, but got: double != float' at the loop's product, then '-- integer and float tensors in one operation: token ids (int64) go through an embedding first ...': the added cause (integers, token ids) is not the student's (a float64 start gradient); the line where grad is made is not named (lenient reading: Pa)"),
    "ch02-q02e": ('P', "'grad is the first variable whose value differs ...: look at your line \"grad = 1 - states[:, -1] ** 2\" (... the reference's calls ones_like, which yours does not)'"),
    "ch03-q03a": ('Pa', "Python's own \"'str' object has no attribute 'T'\" at the student's first gate line, nothing added (that unpacking a dict gives its keys is left to the student)"),
    "ch03-q03b": ('P', "'c (the new cell state): ... Likely cause: your result does not change when h_prev is replaced by other numbers: that input is not used (a term left out?)': h_prev unused, c_prev in its place (strict reading: Pa, c_prev not named)"),
    "ch03-q03c": ('Pa', "\"unsupported operand type(s) for +: 'NoneType' and 'NoneType' -- cell.bias_ih is None and cell.bias_hh is None: ... (list.sort() ...), an argument that may be None ..., or a function ... without return\" at the bias line: the right tensors; the guard `if cell.bias is None` that let a bias-free cell through is not named"),
    "ch03-q03d": ('M', "PyTorch's 'mat1 and mat2 must have the same dtype, but got Double and Float' at the cell call, then '-- integer and float tensors in one operation: token ids (int64) go through an embedding first ...': the added cause is not the student's (float64 zero states), and the line that makes them is not named (lenient reading: Pa)"),
    "ch03-q03e": ('-', "no visible test fails: lstm_cell's values are right; no visible test of lstm_cell checks the gradient with respect to h_prev (10/10)"),
    "ch04-q04a": ('P', "'your values are what you get with `x @ W_rx.T + h @ W_rh.T + b_z` where `... + b_r` is needed (in gru_cell_textbook, the line that computes `r`)'"),
    "ch04-q04b": ('P', "at the student's r line: 'x (2, 3) @ W_rh.T (4, 4) ...; W_nh in place of x would give (4, 4), W_rh ..., W_zh ..., h in place of x would give (2, 4): which one is your equation?': the right replacement among four (strict reading: Pa, three of the four offered are wrong)"),
    "ch04-q04c": ('P', "'look at the line that returns it (\"return torch.where(z > 0.5, h, n)\"; ... the reference's multiplies (*) and adds (+) and subtracts (-), which yours does not)': the interpolation (1 - z) n + z h is what is missing (strict reading: Pa)"),
    "ch04-q04d": ('P', "'your values are what you get with `gi.chunk(3, dim=1)` where `gh.chunk(3, dim=1)` is needed (in gru_cell_pytorch, the line that computes (h_r, h_z, h_n))'"),
    "ch04-q04e": ('M', "'must be a Python int, got a Python float (count with integers: // instead of /, or int(...)) -- Likely cause: ... one edit (in count_parameters, the line that computes `per_direction`): another arithmetic operation (+ for -, * for /, ...)': the type is right, but the line and edit named are not the student's (`total = 0.0`) (lenient reading: Pa)"),
    "ch05-q05a": ('P', "'h has shape (2, 3) here, but (2, 5) ...; it goes wrong at your line \"h = x.new_zeros(B, cell.input_size)\" ... -- fix it there'"),
    "ch05-q05b": ('Pa', "'out_b is the first variable whose value differs ...: look at your line \"out_b, (h_b, c_b) = lstm_direction(self.bwd, x, lengths) # reversed time\"': the right line; that x is not reversed is left to the student (lenient reading: P)"),
    "ch05-q05c": ('Pa', "'outputs in training mode with dropout=1.0: ... your values are what you get with `h` where `out + h` is needed ...; or with `inp + h` ...': the right line and the test's dropout context, not that the dropout acts on the output instead of the input (lenient reading: P)"),
    "ch05-q05d": ('P', "at the pad_packed_sequence line: 'Expected total_length to be at least the length of the longest sequence ..., but got total_length=3 ... -- ... another number (an index, axis, size or count off?)': tokens.shape[0]"),
    "ch05-q05e": ('Pa', "'logits: ... the 3 blocks of size 1 along dimension 0 are in the wrong order: your block j holds the expected block [1, 0, 2][j] (gates in another order than the stated one?)': the batch rows permuted is said (as 'blocks'), the guessed cause (gates) is not the student's (strict reading: M; lenient: P)"),
    "ch06-q06a": ('M', "'build_vocab(seqs) gives the same result for min_freq=1 and min_freq=3: it ignores its min_freq argument (a value written in its place, a default or a global ...?)': the student's code uses min_freq (as a share of all tokens): the named cause is wrong (lenient reading: N)"),
    "ch06-q06b": ('P', "'(<sos> = 1 in front, <eos> = 2 at the end): got [1, 5, 4, 2, 6], expected [1, 5, 4, 6, 2] ... (appended where it is put in front, or the other way round?)': <eos> not at the end, the insert/append confusion (strict reading: Pa, the text speaks of the item 6)"),
    "ch06-q06c": ('P', "'the state d_0 given to step was changed by your function ...; it writes into its input (an in-place operation ...): compute a new tensor'"),
    "ch06-q06d": ('M', "'loss: got 2.62369, expected 3.4983 ... your value is 0.75 times the expected one: what you get if you zero the padded positions but divide by every position, the padding included (6 real targets of 8)': the divisor is the right place, but the named cause (padding counted) is not the student's (the <sos> column counted: tgt for dec_out) (lenient reading: Pa)"),
    "ch06-q06e": ('Pa', "at the decoder.step call: \"'list' object has no attribute 'tolist'\" (raised in the test's stand-in decoder), nothing added: the fed y is a list"),
    "ch07-q07a": ('-', "no visible test fails: the visible tests use H = 4, where split(4) and chunk(4) cut the same four blocks"),
    "ch07-q07b": ('P', "'outputs has shape (2, 6, 8) and mask has shape (2, 6): ...; mask[:, :, None] would line its axes up'"),
    "ch07-q07c": ('M', "'weights: contains NaN ...: a softmax gives NaN over entries that are all -inf, or over entries of which one is +inf (...); take the softmax over dimension 1 and set -inf only where the mask is False': none of the named causes is the student's (-inf put into the (B, Tx, A) energies before the product with v: inf - inf) (lenient reading: N)"),
    "ch07-q07d": ('P', "'weighted_encoder has shape (6,) here, but (1, 6) ...; it goes wrong at your line \"... .squeeze()\" -- fix it there'"),
    "ch07-q07e": ('P', "'each of your lists starts with the expected items but some go on after them: stop ... at the first <eos>, which is not kept, and drop what follows'"),
    "ch08-q08a": ('Pa', "PyTorch's own 'masked_fill() received an invalid combination of arguments - got (float, Tensor), but expected ... (Tensor mask, Tensor value)' at the student's line, nothing added (lenient reading: P, the expected order is in it)"),
    "ch08-q08b": ('Pa', "PyTorch's own 't() expects a tensor with <= 2 dimensions, but self is 3D' at the student's line, nothing added (lenient reading: P)"),
    "ch08-q08c": ('P', "\"name 'np' is not defined -- np is a module: `import numpy as np` at the top of your cell\" (or math.sqrt, which the notebook imports)"),
    "ch08-q08d": ('P', "'your values are what you get if you count the queries U d_t Ty=3 times too often (504 instead of 168: multiplied by Ty where it is not)'"),
    "ch08-q08e": ('Pa', "'weights: expected shape (2, 3, 4), got (2, 3, 5); dimension 2 has 5 (D) where 4 (Tx) is expected: ... (a sum ..., operands in the wrong order, or the wrong tensor?)': the right tensor; the pair returned in the other order is one generic guess among several"),
    "ch09-q09a": ('P', "'h: expected a torch.Tensor, got a PackedSequence of 4 items': pad_packed_sequence forgotten (the part's hint names it)"),
    "ch09-q09b": ('P', "'your values are what you get with `c.unsqueeze(2)` where `d.unsqueeze(2)` is needed (in decode_step, the line that computes `e`)'"),
    "ch09-q09c": ('P', "'your values are what you get if you score the decoder state d_t instead of the combined output tilde d_t'"),
    "ch09-q09d": ('P', "in the BLEU test's training: 'view size is not compatible ... Use .reshape(...) instead. -- view needs the entries in memory order ...: use .reshape(...)' (masked_loss's own visible test passes: its target is contiguous)"),
    "ch09-q09e": ('Pa', "'beam_size=1 ...: hypotheses [[5], []], expected [[5, 3, 3, 5]]; ... your search ended while it was still live ...: a hypothesis that finishes does not end the search': what goes wrong is said; the cause suggested (stopping at the first finished) is not the student's (every <eos> candidate finished, beyond the beam, which then has no room) (strict reading: M)"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.trial_main(sys.modules[__name__], "/tmp/student_trial_22q", argv)


if __name__ == "__main__":
    main()
