"""Student trial 22t: an acceptance trial of issue 22, 45 new mistakes and 18 correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed before solutions/ and the catalogues
were read: benchmarks/results/student_trial_22t_plan.md); every planned mistake and variant that repeated an old
mutant, an alternative or an earlier trial's case was replaced by a new one written the same way (the plan's second
table lists what each replaced case repeated). A mistake is one or more edits of one cell's reference code,
``(old, new)`` pairs whose ``old`` occurs once; a variant rewrites the cell (or edits it) and must keep full marks.
Only the cases and the verdicts live here: building, grading (the class grader, one run per assignment), the Jupyter
view and the report are benchmarks/student_trial.py's and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22t unless --root says otherwise):

    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22t.py --student-view [ch01 ...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22t.py --grade [ch01 ...]
    /work/main/.venv/bin/python benchmarks/student_trial_22t.py --table     # benchmarks/results/student_trial_22t.md's tables
    /work/main/.venv/bin/python benchmarks/student_trial_22t.py --save benchmarks/results/student_trial_22t.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "t01a", "ch01_one_to_many", "OneToMany writes x into the first step with x.unsqueeze(1) ('a step axis for the one input'): a (B, 1, D) value for the (B, D) slot inputs[:, 0]",
        ("inputs[:, 0] = x                                     # x only at the first step",
         "inputs[:, 0] = x.unsqueeze(1)                        # x, with its step axis, at the first step"))
mistake("ch01", "t01b", "ch01_many_to_many_sync", "ManyToManySync writes the output layer out with F.linear(outputs, self.head.weight) ('W_yh h_t'), the bias b_y forgotten",
        ("return self.head(outputs)     # (B, T, C): nn.Linear acts on the last dimension",
         "return F.linear(outputs, self.head.weight)   # W_yh h_t for every step"))
mistake("ch01", "t01c", "ch01_train_step", "train_step passes ignore_index=0 to F.cross_entropy (the padding habit of sequence losses): the examples of class 0 drop out of the loss",
        ("loss = F.cross_entropy(model(x), y)   # logits (B, C), targets (B,)",
         "loss = F.cross_entropy(model(x), y, ignore_index=0)   # logits (B, C), targets (B,)"))
mistake("ch01", "t01d", "ch01_fit", "fit calls train_step(optimizer, model, ...) (the two first arguments in the order they were made in fit): the optimizer is called as the model",
        ("losses.append(train_step(model, optimizer, x[idx], y[idx]))", "losses.append(train_step(optimizer, model, x[idx], y[idx]))"))
mistake("ch01", "t01e", "ch01_fit", "fit gives randint its size as (batch_size) without the comma (an int in parentheses, not a one-element tuple)",
        ("idx = torch.randint(0, len(x), (batch_size,), generator=g)   #", "idx = torch.randint(0, len(x), (batch_size), generator=g)    #"))
variant("ch01", "w01a", "ch01_one_to_many", "OneToMany builds its input sequence and hands it to part 2's forward, ManyToManySync.forward(self, inputs) (the same attributes rnn and head)",
        ("outputs, _ = self.rnn(inputs)                        # (B, steps, H)\n        return self.head(outputs)                            # (B, steps, C)",
         "return ManyToManySync.forward(self, inputs)          # part 2 does the rest: (B, steps, C)"))
variant("ch01", "w01b", "ch01_many_to_many_async", "ManyToManyAsync in one line, indexing nn.RNN's pairs: self.decoder(tgt, self.encoder(src)[1])[0]",
        ("_, h_n = self.encoder(src)            # h_n: (1, B, H), the state after the last source step\n        outputs, _ = self.decoder(tgt, h_n)   # (B, Ty, H), starting from the encoder's summary",
         "outputs = self.decoder(tgt, self.encoder(src)[1])[0]   # the encoder's h_n starts the decoder"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "t02a", "ch02_rnn_cell", "rnn_cell multiplies with torch.bmm ('a batch matrix product for a batch of rows'): bmm wants 3-D batches of matrices",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)   # (B, H)",
         "return torch.tanh(torch.bmm(h_prev, W_hh.T) + torch.bmm(x_t, W_hx.T) + b_h)   # (B, H)"))
mistake("ch02", "t02b", "ch02_rnn_cell", "rnn_cell with einsum subscripts that read the weights as (in, out), 'bd,dh->bh' for W_hx (H, D) and 'bh,hk->bk' for W_hh",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)   # (B, H)",
         "return torch.tanh(torch.einsum(\"bh,hk->bk\", h_prev, W_hh) + torch.einsum(\"bd,dh->bh\", x_t, W_hx) + b_h)"))
mistake("ch02", "t02c", "ch02_rnn_layer", "rnn_layer returns the outputs alone ('the unrolled network's output'), h_last forgotten in the return",
        ("    return outputs, h\n", "    return outputs\n"))
mistake("ch02", "t02d", "ch02_bptt_gradient_norms", "bptt writes the norm by hand with the square root inside the sum, torch.sqrt(grad ** 2).sum() (the sum of the absolute values)",
        ("norms = [torch.linalg.vector_norm(grad)]", "norms = [torch.sqrt(grad ** 2).sum()]"),
        ("norms.append(torch.linalg.vector_norm(grad))", "norms.append(torch.sqrt(grad ** 2).sum())"))
mistake("ch02", "t02e", "ch02_bptt_gradient_norms", "bptt starts its list from the docstring's norms[0] = sqrt(B * H), typed B * H ** 0.5 (the power binds first: B sqrt(H))",
        ("norms = [torch.linalg.vector_norm(grad)]", "norms = [torch.tensor(states.shape[0] * states.shape[2] ** 0.5)]   # norms[0] = sqrt(B * H)"))
variant("ch02", "x02a", "ch02_rnn_cell", "rnn_cell with the matrix products written as broadcast products summed over the input axis, (x_t[:, None, :] * W_hx).sum(-1)",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)   # (B, H)",
         "wh = (h_prev[:, None, :] * W_hh).sum(-1)     # (B, H, H) summed over the previous state's units\n"
         "    wx = (x_t[:, None, :] * W_hx).sum(-1)        # (B, H, D) summed over the input features\n"
         "    return torch.tanh(wh + wx + b_h)"))
variant("ch02", "x02b", "ch02_rnn_layer", "rnn_layer grows its outputs with torch.cat along time from an empty (B, 0, H) tensor",
        ("    outputs = []\n", "    outputs = x.new_zeros(B, 0, W_hh.shape[0])        # (B, 0, H): no step yet\n"),
        ("        outputs.append(h)\n    outputs = torch.stack(outputs, dim=1)              # (B, T, H)\n",
         "        outputs = torch.cat([outputs, h[:, None]], dim=1)   # (B, t + 1, H)\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "t03a", "ch03_lstm_cell", "lstm_cell's output gate multiplies x by W['o'] (x typed for hx on that line): (B, D) against the (H, H + D) weight",
        ('o = torch.sigmoid(hx @ W["o"].T + b["o"])', 'o = torch.sigmoid(x @ W["o"].T + b["o"])'))
mistake("ch03", "t03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias updates the cell without the forget gate, c = c_prev + i * g (the original 1997 LSTM's constant error carousel; f computed, never used)",
        ("c = f * c_prev + i * g                                  # (B, H)", "c = c_prev + i * g                                      # (B, H)"))
mistake("ch03", "t03c", "ch03_split_gates", "split_gates keys its dicts with the string \"i f g o\" (spaces included) instead of GATES: zip pairs the blocks with 'i', ' ', 'f', ' '",
        ("Wx = dict(zip(GATES, cell.weight_ih", 'Wx = dict(zip("i f g o", cell.weight_ih'),
        ("Wh = dict(zip(GATES, cell.weight_hh", 'Wh = dict(zip("i f g o", cell.weight_hh'),
        ("b = dict(zip(GATES, (cell.bias_ih", 'b = dict(zip("i f g o", (cell.bias_ih'))
mistake("ch03", "t03d", "ch03_lstm_layer", "lstm_layer turns a given (1, B, H) state batch first, state[0].transpose(0, 1) ('batch_first=True, like x'): (B, 1, H) states for the cell",
        ("h, c = state[0][0], state[1][0]", "h, c = state[0].transpose(0, 1), state[1].transpose(0, 1)"))
variant("ch03", "x03a", "ch03_lstm_layer", "lstm_layer takes a given state apart with a generator, h, c = (s.squeeze(0) for s in state) (squeeze of the layer axis only)",
        ("h, c = state[0][0], state[1][0]", "h, c = (s.squeeze(0) for s in state)"))
variant("ch03", "x03b", "ch03_split_gates", "split_gates cuts the stacked weights with torch.vsplit (rows) into four blocks",
        ("Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))", "Wx = dict(zip(GATES, torch.vsplit(cell.weight_ih, 4)))"),
        ("Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))", "Wh = dict(zip(GATES, torch.vsplit(cell.weight_hh, 4)))"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "t04a", "ch04_gru_cell_textbook", "gru_cell_textbook types the interpolation's weight as (z - 1) for (1 - z) (a sign slip)",
        ("return (1 - z) * h_tilde + z * h", "return (z - 1) * h_tilde + z * h"))
mistake("ch04", "t04b", "ch04_gru_cell_textbook", "gru_cell_textbook adds the two biases with Python's sum(bias_ih, bias_hh) (the list brackets forgotten: sum iterates over bias_ih and starts from bias_hh)",
        ("b_r, b_z, b_n = (bias_ih + bias_hh).split(H)", "b_r, b_z, b_n = sum(bias_ih, bias_hh).split(H)"))
mistake("ch04", "t04c", "ch04_gru_cell_pytorch", "gru_cell_pytorch cuts the blocks from the transposed products, gi.T.chunk(3) ('the blocks are stacked by rows, like the weights'): (H, B) blocks",
        ("i_r, i_z, i_n = gi.chunk(3, dim=1)", "i_r, i_z, i_n = gi.T.chunk(3)"),
        ("h_r, h_z, h_n = gh.chunk(3, dim=1)", "h_r, h_z, h_n = gh.T.chunk(3)"))
mistake("ch04", "t04d", "ch04_gru_cell_pytorch", "gru_cell_pytorch keeps the hidden product under the name h, h = h @ weight_hh.T + bias_hh, so the interpolation's z * h uses the (B, 3H) product",
        ("gh = h @ weight_hh.T + bias_hh", "h = h @ weight_hh.T + bias_hh "),
        ("h_r, h_z, h_n = gh.chunk(3, dim=1)", "h_r, h_z, h_n = h.chunk(3, dim=1)"))
mistake("ch04", "t04e", "ch04_count_parameters", "count_parameters with a helper one_direction(hidden, layer_input) called as one_direction(layer_input, hidden_size) (the arguments in the other order)",
        ("    total = 0\n    for layer in range(num_layers):\n        layer_input = input_size if layer == 0 else hidden_size * directions\n"
         "        per_direction = blocks * (hidden_size * layer_input + hidden_size * hidden_size)\n"
         "        if bias:\n            per_direction += blocks * 2 * hidden_size   # bias_ih and bias_hh\n"
         "        total += directions * per_direction\n",
         "\n    def one_direction(hidden, layer_input):\n"
         "        n = blocks * (hidden * layer_input + hidden * hidden)   # weight_ih and weight_hh\n"
         "        if bias:\n            n += blocks * 2 * hidden                            # bias_ih and bias_hh\n"
         "        return n\n\n"
         "    total = 0\n    for layer in range(num_layers):\n        layer_input = input_size if layer == 0 else hidden_size * directions\n"
         "        total += directions * one_direction(layer_input, hidden_size)\n"))
variant("ch04", "x04a", "ch04_gru_cell_pytorch", "gru_cell_pytorch cuts the (B, 3H) products into their column blocks with torch.hsplit",
        ("i_r, i_z, i_n = gi.chunk(3, dim=1)", "i_r, i_z, i_n = torch.hsplit(gi, 3)"),
        ("h_r, h_z, h_n = gh.chunk(3, dim=1)", "h_r, h_z, h_n = torch.hsplit(gh, 3)"))
variant("ch04", "x04b", "ch04_count_parameters", "count_parameters adds the biases with a conditional expression on the += line (+= binds last: the condition covers the bias term only)",
        ("        if bias:\n            per_direction += blocks * 2 * hidden_size   # bias_ih and bias_hh\n",
         "        per_direction += blocks * 2 * hidden_size if bias else 0   # bias_ih and bias_hh\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "t05a", "ch05_reverse_padded", "reverse_padded tests t <= L ('up to the length') in the where: at t = L it reads index -1, which gather refuses",
        ("idx = torch.where(t < L, L - 1 - t, t)", "idx = torch.where(t <= L, L - 1 - t, t)"))
mistake("ch05", "t05b", "ch05_lstm_direction", "lstm_direction precomputes the (B, T) mask and reads step t's column as mask[t] (the row of example t) instead of mask[:, t]",
        ("    outputs = []\n", "    outputs = []\n    mask = torch.arange(T) < lengths.unsqueeze(1)              # (B, T): the real steps\n"),
        ("real = (t < lengths).to(x.device).unsqueeze(1)", "real = mask[t].unsqueeze(1)                           "))
mistake("ch05", "t05c", "ch05_bilstm_from_cells", "BiLSTMFromCells joins the directions with torch.stack(..., dim=-1).flatten(2) ('stack, then merge the last two axes'): the features interleaved, f0 b0 f1 b1 ...",
        ("outputs = torch.cat([out_f, out_b], dim=-1)", "outputs = torch.stack([out_f, out_b], dim=-1).flatten(2)"))
mistake("ch05", "t05d", "ch05_bilstm_from_cells", "BiLSTMFromCells gives the backward direction the lengths reversed too, lengths.flip(0) ('everything backwards'): each sentence gets another's length",
        ("lstm_direction(self.bwd, reverse_padded(x, lengths), lengths)", "lstm_direction(self.bwd, reverse_padded(x, lengths), lengths.flip(0))"))
mistake("ch05", "t05e", "ch05_residual_stack", "ResidualLSTMStack builds nn.Dropout(1 - dropout) (TensorFlow 1's keep_prob habit): the default dropout=0.0 drops everything",
        ("self.dropout = nn.Dropout(dropout)", "self.dropout = nn.Dropout(1 - dropout)"))
variant("ch05", "x05a", "ch05_reverse_padded", "reverse_padded as a batched permutation: one-hot rows of the read index (B, T, T) times the flattened batch",
        code=("def reverse_padded(x, lengths):\n"
              "    B, T = x.shape[:2]\n"
              "    t = torch.arange(T)\n"
              "    L = lengths.unsqueeze(1)                                    # (B, 1)\n"
              "    src = torch.where(t < L, L - 1 - t, t)                      # (B, T): the step each output step reads\n"
              "    P = F.one_hot(src, T).to(x.dtype)                           # (B, T, T): one permutation per sentence\n"
              "    return (P @ x.reshape(B, T, -1)).reshape(x.shape)\n"))
variant("ch05", "x05b", "ch05_masked_mean", "masked_mean as the mean over all T steps of the masked outputs divided by the mean of the mask (the 1/T cancels)",
        code=("def masked_mean(outputs, lengths):\n"
              "    T = outputs.shape[1]\n"
              "    mask = (torch.arange(T) < lengths.unsqueeze(1)).to(outputs.dtype)   # (B, T): 1 at real steps\n"
              "    return (outputs * mask.unsqueeze(-1)).mean(dim=1) / mask.mean(dim=1, keepdim=True)\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "t06a", "ch06_build_vocab", "build_vocab sorts with key (counts[token], token), the minus sign forgotten: the rarest tokens first",
        ("kept.sort(key=lambda token: (-counts[token], token))", "kept.sort(key=lambda token: (counts[token], token))"))
mistake("ch06", "t06b", "ch06_numericalize", "numericalize writes `ids + [EOS_INDEX]` as a statement (the assignment forgotten): the <eos> is never added",
        ("ids = ids + [EOS_INDEX]", "ids + [EOS_INDEX]"))
mistake("ch06", "t06c", "ch06_encoder", "Encoder returns the final state turned batch first, h_n.transpose(0, 1) ('batch first, like the outputs'): (B, 1, H), not (B, H)",
        ("return outputs, h_n[0]", "return outputs, h_n.transpose(0, 1)"))
mistake("ch06", "t06d", "ch06_decoder", "Decoder.step squashes the scores, torch.tanh(self.out(d)) ('an RNN output goes through a tanh'): logits bounded in (-1, 1)",
        ("logits = self.out(d)", "logits = torch.tanh(self.out(d))"))
mistake("ch06", "t06e", "ch06_teacher_forced_loss", "teacher_forced_loss sums the real tokens' losses and divides by the batch size (the per-sentence loss of seq2seq tutorials)",
        ("dec_out.reshape(-1), ignore_index=pad_index)", "dec_out.reshape(-1), ignore_index=pad_index, reduction=\"sum\") / tgt.shape[0]"))
mistake("ch06", "t06f", "ch06_greedy_decode", "greedy_decode takes the encoder's whole (outputs, h) pair as the decoder state, d = encoder(...) (not unpacked)",
        ("_, d = encoder(src, src_lengths)", "d = encoder(src, src_lengths)   "))
variant("ch06", "x06a", "ch06_build_vocab", "build_vocab ranks with a comparison function (functools.cmp_to_key): higher count first, then Python's string order",
        code=("def build_vocab(sequences, min_freq=1):\n"
              "    import functools\n"
              "    counts = Counter(token for seq in sequences for token in seq)\n"
              "    def compare(a, b):\n"
              "        if counts[a] != counts[b]:\n"
              "            return counts[b] - counts[a]\n"
              "        return (a > b) - (a < b)\n"
              "    kept = sorted((token for token in counts if counts[token] >= min_freq), key=functools.cmp_to_key(compare))\n"
              "    return SPECIALS + kept\n"))
variant("ch06", "x06b", "ch06_greedy_decode", "greedy_decode keeps the finished rows in a set of indices and stops when it holds every row",
        code=("def greedy_decode(encoder, decoder, src, src_lengths, max_len):\n"
              "    with torch.no_grad():\n"
              "        _, d = encoder(src, src_lengths)\n"
              "        B = src.shape[0]\n"
              "        y = torch.full((B,), SOS_INDEX, dtype=torch.long)\n"
              "        outputs = [[] for _ in range(B)]\n"
              "        done = set()\n"
              "        step = 0\n"
              "        while step < max_len and len(done) < B:\n"
              "            logits, d = decoder.step(y, d)\n"
              "            y = logits.argmax(dim=-1)\n"
              "            for b in range(B):\n"
              "                if b in done:\n"
              "                    continue\n"
              "                token = int(y[b])\n"
              "                if token == EOS_INDEX:\n"
              "                    done.add(b)\n"
              "                else:\n"
              "                    outputs[b].append(token)\n"
              "            step += 1\n"
              "    return outputs\n"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "t07a", "ch07_lstm_cell", "LSTMCell calls f.sigmoid(), i.sigmoid(), o.sigmoid() and g.tanh() as statements (taken for in-place: the results are thrown away), so the gates stay raw",
        ("f, i, o = torch.sigmoid(f), torch.sigmoid(i), torch.sigmoid(o)\n        g = torch.tanh(g)",
         "f.sigmoid()\n        i.sigmoid()\n        o.sigmoid()\n        g.tanh()"))
mistake("ch07", "t07b", "ch07_attention", "Attention returns F.log_softmax of the scores (the decoder's log-softmax copied): log-weights, -inf at padding",
        ('return torch.softmax(scores, dim=-1)', 'return F.log_softmax(scores, dim=-1)'))
mistake("ch07", "t07c", "ch07_attention", "Attention normalises the scores by their sum, scores / scores.sum(-1) ('weights that sum to 1'), padding set to 0, no exponential",
        ('scores = scores.masked_fill(~mask, float("-inf"))\n        return torch.softmax(scores, dim=-1)',
         'scores = scores.masked_fill(~mask, 0.0)\n        return scores / scores.sum(dim=-1, keepdim=True)'))
mistake("ch07", "t07d", "ch07_decoder", "AttnDecoderRNN unpacks its LSTM cell's result as c, h = self.lstm_cell(...) (the cell state first): the state returned and the output layer's h are swapped",
        ("h, c = self.lstm_cell(", "c, h = self.lstm_cell("))
mistake("ch07", "t07e", "ch07_greedy", "greedy_translate unpacks three values from model.decode_step (part 4's decoder returns three; decode_step returns two)",
        ("log_probs, state = model.decode_step(y, state, memory)", "log_probs, state, _ = model.decode_step(y, state, memory)"))
mistake("ch07", "t07f", "ch07_greedy", "greedy_translate loops range(max_len + 1) ('after max_len steps' read as one more)",
        ("for _ in range(max_len):", "for _ in range(max_len + 1):"))
variant("ch07", "x07a", "ch07_encoder", "EncoderRNN runs both directions through one nested helper run(cell, order) that returns the states in source order and the final state",
        code=("class EncoderRNN(nn.Module):\n"
              "    def __init__(self, vocab_size, emb_size, hidden_size, dec_hidden_size):\n"
              "        super().__init__()\n"
              "        self.hidden_size = hidden_size\n"
              "        self.embedding = nn.Embedding(vocab_size, emb_size)\n"
              "        self.lstm_cell_left = LSTMCell(emb_size, hidden_size)\n"
              "        self.lstm_cell_right = LSTMCell(emb_size, hidden_size)\n"
              "        self.fc = nn.Linear(2 * hidden_size, dec_hidden_size)\n"
              "\n"
              "    def forward(self, src, src_lengths=None):\n"
              "        B, Tx = src.shape\n"
              "        emb = self.embedding(src)\n"
              "        mask = torch.ones(B, Tx, dtype=torch.bool) if src_lengths is None else source_mask(src_lengths, Tx)\n"
              "\n"
              "        def run(cell, order):\n"
              "            h = c = emb.new_zeros(B, self.hidden_size)\n"
              "            states = [None] * Tx\n"
              "            for t in order:\n"
              "                nh, nc = cell(emb[:, t], (h, c))\n"
              "                keep = mask[:, t].unsqueeze(1)\n"
              "                h, c = torch.where(keep, nh, h), torch.where(keep, nc, c)\n"
              "                states[t] = h\n"
              "            return torch.stack(states, dim=1), h\n"
              "\n"
              "        left, h_left = run(self.lstm_cell_left, range(Tx))\n"
              "        right, h_right = run(self.lstm_cell_right, range(Tx - 1, -1, -1))\n"
              "        outputs = torch.cat([left, right], dim=-1) * mask.unsqueeze(-1)\n"
              "        return outputs, self.fc(torch.cat([h_left, h_right], dim=-1))\n"))
variant("ch07", "x07b", "ch07_decoder", "AttnDecoderRNN joins the LSTM input and the output layer's input with torch.hstack",
        ("h, c = self.lstm_cell(torch.cat([weighted_encoder, embedded], dim=-1),", "h, c = self.lstm_cell(torch.hstack([weighted_encoder, embedded]),"),
        ("scores = self.Out(torch.cat([h, weighted_encoder, embedded], dim=-1))", "scores = self.Out(torch.hstack([h, weighted_encoder, embedded]))"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "t08a", "ch08_dot", "dot_attention hands attend the decoder states as the values, attend(energies, dec, mask) (dec and enc side by side: the wrong one)",
        ("return attend(energies, enc, mask)", "return attend(energies, dec, mask)"))
mistake("ch08", "t08b", "ch08_scaled_dot", "scaled_dot_attention stores D = math.sqrt(dec.shape[-1]) ('the size for the scale') and divides by math.sqrt(D): the fourth root of D",
        ("D = dec.shape[-1]", "D = math.sqrt(dec.shape[-1])"))
mistake("ch08", "t08c", "ch08_bilinear", "bilinear_attention finishes d_t^T W h_s as an element-wise product summed over the features, ((dec @ W) * enc).sum(-1) (a dot product per position pair read as one product)",
        ("energies = (dec @ W) @ enc.transpose(1, 2)", "energies = ((dec @ W) * enc).sum(-1)      "))
mistake("ch08", "t08d", "ch08_reduced_rank", "reduced_rank_attention takes the dot products as (queries * keys).sum(-1), element by element (query t with key t only)",
        ("energies = queries @ keys.transpose(1, 2)", "energies = (queries * keys).sum(-1)      "))
variant("ch08", "x08a", "ch08_bilinear", "bilinear_attention puts W on the encoder side with F.linear(enc, W) (= enc @ W^T, the keys W h_s) and takes dec @ keys^T",
        ("energies = (dec @ W) @ enc.transpose(1, 2)", "energies = dec @ F.linear(enc, W).transpose(1, 2)"))
variant("ch08", "x08b", "ch08_dot", "dot_attention with a 4-D broadcast matmul, (B, Ty, 1, 1, D) @ (B, 1, Tx, D, 1), squeezed",
        ("energies = dec @ enc.transpose(1, 2)", "energies = (dec[:, :, None, None, :] @ enc[:, None, :, :, None])[..., 0, 0]"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "t09a", "ch09_encode", "encode joins the two final states with slices, torch.cat([h_n[1:], h_n[:1]], -1) (slices keep the direction axis): d_0 and c_0 are (1, B, H)",
        ("d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1))", "d0 = model.W_h(torch.cat([h_n[1:], h_n[:1]], dim=-1))"),
        ("c0 = model.W_c(torch.cat([c_n[1], c_n[0]], dim=-1))", "c0 = model.W_c(torch.cat([c_n[1:], c_n[:1]], dim=-1))"))
mistake("ch09", "t09b", "ch09_decode_step", "decode_step squashes u_t before the projection, W_u(tanh(u_t)), instead of tanh(W_u u_t)",
        ("o = model.dropout(torch.tanh(model.W_u(u)))", "o = model.dropout(model.W_u(torch.tanh(u)))"))
mistake("ch09", "t09c", "ch09_teacher_forcing", "decode_teacher_forcing applies W_vocab at every step AND once more on the stacked result (the scores projected twice)",
        ("outputs.append(o)", "outputs.append(model.W_vocab(o))"))
mistake("ch09", "t09d", "ch09_masked_loss", "masked_loss passes the padding mask as cross_entropy's weight= ('weigh the padding 0'): weight is one number per CLASS",
        ("return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)",
         "real = (tgt_out != PAD).reshape(-1).float()   # 1 at real tokens, 0 at padding\n"
         "    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), weight=real)"))
mistake("ch09", "t09e", "ch09_beam_search", "beam_search unpacks enumerate the other way round, for lp, tok in enumerate(log_probs.tolist()): the token ids become the scores and the log-probabilities the tokens",
        ("for tok, lp in enumerate(log_probs.tolist()):", "for lp, tok in enumerate(log_probs.tolist()):"))
variant("ch09", "x09a", "ch09_masked_loss", "masked_loss from its definition with logsumexp: logsumexp(logits) - the target's logit, averaged over the real tokens",
        ("return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)",
         "nll = torch.logsumexp(logits, dim=-1) - logits.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)   # (B, Ty)\n"
         "    real = tgt_out != PAD\n"
         "    return nll[real].mean()"))
variant("ch09", "x09b", "ch09_encode", "encode reads the final states in nn.LSTM's documented layout, h_n.view(num_layers, num_directions, B, H), [-1, 1] and [-1, 0]",
        ("d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1))",
         "hv, cv = h_n.view(1, 2, -1, model.hidden_size), c_n.view(1, 2, -1, model.hidden_size)   # (layers, directions, B, H)\n"
         "    d0 = model.W_h(torch.cat([hv[-1, 1], hv[-1, 0]], dim=-1))"),
        ("c0 = model.W_c(torch.cat([c_n[1], c_n[0]], dim=-1))", "c0 = model.W_c(torch.cat([cv[-1, 1], cv[-1, 0]], dim=-1))"))

CASES = M + OK

# The first failing visible test's message as the student sees it in Jupyter, judged by the rule of trials 22f-22s.
VERDICTS: dict[str, tuple[str, str]] = {
    'ch01-t01a': ('Pa', "at the student's line 'inputs[:, 0] = x.unsqueeze(1)': PyTorch's own 'expand(... [2, 1, 3], size=[2, 3]): the number of sizes provided (2) must be greater or equal to the number of dimensions in the tensor (3)', nothing added (lenient reading: P, the extra axis is the unsqueeze on that line)"),
    'ch01-t01b': ('P', "'every variable ... agrees ..., look at the line that returns it (\"return F.linear(outputs, self.head.weight)\"; yours calls linear, which no line of the reference's ManyToManySync.forward does)': the call to replace named; that the bias is missing is not said (strict reading: Pa)"),
    'ch01-t01c': ('P', "'loss ... got 1.22864, expected 1.0733 ... `loss` is the first variable whose value differs ...: look at your line \"loss = F.cross_entropy(model(x), y, ignore_index=0)\"': the line named, its one extra option visible in it (strict reading: Pa)"),
    'ch01-t01d': ('P', "''Adam' object is not callable -- train_step takes (model, optimizer, x, y), and your line passes `optimizer` as model and `model` as optimizer: two arguments in each other's place?'"),
    'ch01-t01e': ('Pa', "at the student's line: 'randint() received an invalid combination of arguments ... torch.randint takes (low=0, high, size, ...); your line gives it ... size=batch_size 16': the argument named, that size must be a tuple (the comma) not said (lenient reading: P)"),
    'ch02-t02a': ('P', "at the student's line: 'batch1 must be a 3D tensor -- torch.bmm multiplies two 3-D batches ...; your line gives it h_prev (2, 4) (2-D): a 2-D weight needs @'"),
    'ch02-t02b': ('Pa', "at the student's line: PyTorch's own 'einsum(): subscript d has size 4 for operand 1 which does not broadcast with previously seen size 3'; the added note lists the arguments of the line's FIRST einsum ('bh,hk->bk', h_prev, W_hh), which is not the one that fails; that W_hx is (H, D) is not said (strict reading: N)"),
    'ch02-t02c': ('M', "'outputs ...: expected shape (2, 5, 4), got (5, 4); axis 0 (size 2) of the expected shape is missing: indexed away ([:, -1] or [0] ...) or reduced over (a sum or mean too many?)': guessed causes, none the student's; the function returns one tensor where the pair (outputs, h_last) is asked, and the test's unpacking took its first row (lenient reading: N)"),
    'ch02-t02d': ('P', "'`norms` is the first variable whose value differs ...: look at your line \"norms = [torch.sqrt(grad ** 2).sum()]\" (... yours calls sqrt and sum ...; the reference's calls vector_norm ...)'"),
    'ch02-t02e': ('Pa', "'1 of 5 entries differ; first at index (0,): got 3.4641, expected 2.4495 ... look at your line \"norms = [torch.tensor(states.shape[0] * states.shape[2] ** 0.5)]\"': the line and the entry, not the precedence of ** (lenient reading: P)"),
    'ch03-t03a': ('P', "at the student's line: 'x (2, 3) @ W['o'].T (7, 4): ...; hx in place of x would give (2, 4)'"),
    'ch03-t03b': ('P', "'your values are what you get with `c_prev` where `f * c_prev` is needed (in lstm_cell_nobias, the line that computes `c`)'"),
    'ch03-t03c': ('P', "'Wx must be a dict with the keys i, f, g, o, got the keys ['i', ' ', 'f']': the blank keys show the string's spaces"),
    'ch03-t03d': ('P', "'h has shape (2, 1, 4) here, but (2, 4) ...; it goes wrong at your line \"h = x.new_zeros(B, hidden_size)\" or \"h, c = state[0].transpose(0, 1), ...\" (whichever ran)': the transpose line named, with the shape it must give (strict reading: Pa, two candidate lines)"),
    'ch04-t04a': ('P', "'your values are what you get with `z - 1` where `1 - z` is needed (in gru_cell_textbook, the returned value)' (an equivalent tanh(-...) named second)"),
    'ch04-t04b': ('P', "'`b_r` is the first variable whose value differs ...: look at your line \"b_r, b_z, b_n = sum(bias_ih, bias_hh).split(H)\" (yours calls sum, ...; the reference's adds (+) ...)'"),
    'ch04-t04c': ('P', "'z has shape (4, 2) here, but (2, 4) ... made from h_z (4, 2); it goes wrong at your line \"h_r, h_z, h_n = gh.T.chunk(3)\"': the transposed blocks and the line (the gi line, the same edit, is found with it)"),
    'ch04-t04d': ('P', "'h has shape (2, 12) here, but (2, 4) ...; it goes wrong at your line \"h = h @ weight_hh.T + bias_hh\"'"),
    'ch04-t04e': ('Pa', "'`total` ... its second value, from your line \"total += directions * one_direction(layer_input, hidden_size)\", is not the reference's (320 where the reference's is 640): it goes wrong there': the call named, not that its two arguments are in each other's place (lenient reading: P)"),
    'ch05-t05a': ('Pa', "at the student's line \"return x.gather(1, idx)\": PyTorch's own 'index -1 is out of bounds for dimension 1 with size 5', nothing added; the wrong line is the where (t <= L) that makes idx (strict reading: N)"),
    'ch05-t05b': ('P', "'real has shape (4, 1) here, but (2, 1) ...; it goes wrong at your line \"real = mask[t].unsqueeze(1)\"'"),
    'ch05-t05c': ('P', "'`outputs` is the first variable whose value differs ...: look at your line \"outputs = torch.stack([out_f, out_b], dim=-1).flatten(2)\" (yours calls flatten and stack ...; the reference's calls cat ...)'"),
    'ch05-t05d': ('P', "'`out_b` is the first variable whose value differs ...: look at your line \"... lengths.flip(0)) ...\" (yours calls flip, which the reference's does not)'"),
    'ch05-t05e': ('M', "'outputs in training mode with dropout=1.0 ... Likely cause: your values are what you get with `h` where `self.dropout(h)` is needed (the line that computes `inp`); or with pack_padded_sequence(h, ...)': the student's inp line does apply self.dropout; the module was built with nn.Dropout(1 - dropout), p = 0 here; the constructor is not named (lenient reading: Pa, the header's dropout=1.0)"),
    'ch06-t06a': ('P', "'build_vocab(min_freq=1) gave [...] (least frequent first: sort by decreasing count) -- ... the sign flipped'"),
    'ch06-t06b': ('M', "'got [1, 5, 4, 6], expected [1, 5, 4, 6, 2]; ... the last expected item is missing: a loop or range that stops one step early, a slice that ends one item early ..., or the last step not kept?': guessed causes, none the student's (the statement ids + [EOS_INDEX] never assigned); the header says <eos> = 2 at the end, the only lead (lenient reading: Pa)"),
    'ch06-t06c': ('P', "'h (the final states): expected shape (3, 4), got (3, 1, 4); an extra dimension of size 1 (index it with [0] or squeeze it)'"),
    'ch06-t06d': ('P', "'your values are what you get with an extra tanh around `self.out(d)` (in Decoder.step, the line that computes `logits`)'"),
    'ch06-t06e': ('P', "'your value is 3 times the expected one: what you get if you divide the summed loss by the number of sentences (2) instead of the number of real targets (6)'"),
    'ch06-t06f': ('Pa', "at the student's line \"logits, d = decoder.step(y, d)\": Python's own ''tuple' object has no attribute 'shape'', nothing added: d is the encoder's (outputs, h) pair, which the line that makes d does not unpack (lenient reading: P)"),
    'ch07-t07a': ('M', "'`c` is the first variable whose value differs ... (the variables made before it agree: h_prev, c_prev, z, f): look at your line \"c = f * c_prev + i * g\"': the named line is right; f, i, g are raw because f.sigmoid() etc. were called as statements; that f 'agrees' is said of its first (raw) value (lenient reading: Pa)"),
    'ch07-t07b': ('P', "'weights: each slice along dimension 1 must sum to 1, but ... sums to -inf (is it a softmax?) -- ... another function in place of the right one (... softmax or its log)' at the returned value"),
    'ch07-t07c': ('P', "'look at the line that returns it (\"return scores / scores.sum(dim=-1, keepdim=True)\"; ... yours calls sum and divides (/), ...; the reference's calls softmax ...)'"),
    'ch07-t07d': ('P', "'your values are what you get if you return the state as (c, h) instead of (h, c)': the effect right; the student's return reads (h, c), the swap is in `c, h = self.lstm_cell(...)` one line up (strict reading: Pa)"),
    'ch07-t07e': ('P', "at the student's line: 'not enough values to unpack (expected 3, got 2) -- ... unpacking a call means the function returns another number of values than its docstring says'"),
    'ch07-t07f': ('P', "'weights with max_len=2: expected shape (2, 2, 4), got (2, 3, 4); ... one too many (an off-by-one in a range ...) -- ... (in greedy_translate, the loop over `_`): a loop that starts or ends one step off'"),
    'ch08-t08a': ('P', "at the student's line: 'dot_attention passes attend values of shape (2, 3, 5); they must be the encoder states h_s, (B, Tx, Dh)'"),
    'ch08-t08b': ('M', "'your weights are a softmax of the expected energies times 1.495 = Ty/B (Ty=3, B=2): divided by B where Ty is asked?': a wrong named cause (the factor is 5 ** 0.25 = 1.495, the scale taken as the fourth root of D: D = math.sqrt(...) then sqrt(D)); the D line is not named"),
    'ch08-t08c': ('Pa', "at the student's line: 'dec @ W has shape (2, 3, 5) and enc has shape (2, 4, 5): broadcasting lines shapes up from the RIGHT, so their axis -2 meets 3 against 4': why the element-wise product fails, not that a product with enc^T is meant (lenient reading: P)"),
    'ch08-t08d': ('Pa', "at the student's line: 'queries has shape (2, 3, 1) and keys has shape (2, 4, 1): broadcasting lines shapes up from the RIGHT ...': as t08c, the line and the clash, not the pairwise product (lenient reading: P)"),
    'ch09-t09a': ('P', "'d0: expected shape (2, 4), got (1, 2, 4); an extra dimension of size 1 (index it with [0] or squeeze it)': the slices h_n[1:] keep the axis, h_n[1] is the fix"),
    'ch09-t09b': ('Pa', "'`o` is the first variable whose value differs ...: look at your line \"o = model.dropout(model.W_u(torch.tanh(u)))\"': the line, not that the tanh is on the wrong side of W_u (lenient reading: P)"),
    'ch09-t09c': ('Pa', "at the student's return line: 'model.W_vocab is an nn.Linear built for 4 input features, but the tensor you give it has 6 on its last axis: give it the tensor it was built for': the right line, not that the outputs are already W_vocab's scores (applied in the loop) (lenient reading: P)"),
    'ch09-t09d': ('Pa', "at the student's line: PyTorch's own 'weight tensor should be defined either for all 6 classes or no classes but got weight tensor of shape: [8]', nothing added (lenient reading: P, 'for all 6 classes' says what weight is)"),
    'ch09-t09e': ('P', "'`lp` is the first variable whose value differs from the reference's `lp` (0 where the reference's is -1000000000.0), made at your line \"for lp, tok in enumerate(log_probs.tolist()):\"' (strict reading: Pa)"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.trial_main(sys.modules[__name__], "/tmp/student_trial_22t", argv)


if __name__ == "__main__":
    main()
