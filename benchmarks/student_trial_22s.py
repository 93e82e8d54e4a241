"""Student trial 22s: an acceptance trial of issue 22, 45 new mistakes and 18 correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed before solutions/ and the catalogues
were read: benchmarks/results/student_trial_22s_plan.md); every planned mistake and variant that repeated an old
mutant, an alternative or an earlier trial's case was replaced by a new one written the same way (the plan's second
table lists what each replaced case repeated). A mistake is one or more edits of one cell's reference code,
``(old, new)`` pairs whose ``old`` occurs once; a variant rewrites the cell (or edits it) and must keep full marks.
Only the cases and the verdicts live here: building, grading (the class grader, one run per assignment), the Jupyter
view and the report are benchmarks/student_trial.py's and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22s unless --root says otherwise):

    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22s.py --student-view [ch01 ...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22s.py --grade [ch01 ...]
    /work/main/.venv/bin/python benchmarks/student_trial_22s.py --table     # benchmarks/results/student_trial_22s.md's tables
    /work/main/.venv/bin/python benchmarks/student_trial_22s.py --save benchmarks/results/student_trial_22s.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "s01a", "ch01_many_to_one", "ManyToOne builds self.rnn as an nn.RNNCell and loops over time itself (chapter 2's loop): the values are right, the attribute is not the nn.RNN the docstring names",
        ("self.rnn = nn.RNN(input_size, hidden_size, batch_first=True)", "self.rnn = nn.RNNCell(input_size, hidden_size)   # one step; the loop is in forward"),
        ("outputs, h_n = self.rnn(x)         # outputs: (B, T, H), h_n: (1, B, H)\n        return self.head(outputs[:, -1])   # (B, C): the last step's state",
         "h = x.new_zeros(x.shape[0], self.rnn.hidden_size)\n"
         "        for t in range(x.shape[1]):\n"
         "            h = self.rnn(x[:, t], h)\n"
         "        return self.head(h)                # (B, C): the last step's state"))
mistake("ch01", "s01b", "ch01_many_to_many_sync", "ManyToManySync gives the tagger an MLP head, nn.Sequential(Linear(H, H), Tanh(), Linear(H, C)) (a tutorial's classifier head) under the name self.head",
        ("batch_first=True)\n        self.head = nn.Linear(hidden_size, num_classes)\n",
         "batch_first=True)\n        self.head = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.Tanh(), nn.Linear(hidden_size, num_classes))\n"))
mistake("ch01", "s01c", "ch01_one_to_many", "OneToMany returns the RNN's states, 'a sequence of outputs', without the head: (B, steps, H), not logits",
        ("return self.head(outputs)                            # (B, steps, C)", "return outputs                                       # the sequence of outputs"))
mistake("ch01", "s01d", "ch01_many_to_many_async", "ManyToManyAsync squashes the encoder's summary before handing it on, d_0 = tanh(h_n) (Cho et al.'s d_0 = tanh(V c) without its matrix)",
        ("outputs, _ = self.decoder(tgt, h_n)", "outputs, _ = self.decoder(tgt, torch.tanh(h_n))"))
mistake("ch01", "s01e", "ch01_fit", "fit makes its generator with g.seed() (taken for 'seed the generator'; seed() draws a fresh nondeterministic seed), so the run is not reproducible",
        ("    g = torch.Generator().manual_seed(seed)\n    losses", "    g = torch.Generator()\n    g.seed()\n    losses"))
variant("ch01", "t01a", "ch01_many_to_many_async", "ManyToManyAsync hands the decoder the last layer's state as a slice, h_n[-1:] (still (1, B, H))",
        ("outputs, _ = self.decoder(tgt, h_n)", "outputs, _ = self.decoder(tgt, h_n[-1:])"))
variant("ch01", "t01b", "ch01_train_step", "train_step with per-example losses, reduction='none', averaged by hand",
        ("loss = F.cross_entropy(model(x), y)", "loss = F.cross_entropy(model(x), y, reduction=\"none\").mean()"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "s02a", "ch02_rnn_cell", "rnn_cell returns (h_t, pre-activation), keeping the pre-activation for part 3's derivative: a tuple where the docstring asks for h_t",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)   # (B, H)",
         "a = h_prev @ W_hh.T + x_t @ W_hx.T + b_h\n    return torch.tanh(a), a                    # the state, and the pre-activation for later"))
mistake("ch02", "s02b", "ch02_rnn_layer", "rnn_layer stacks the states with torch.stack(outputs) (stack's default dim 0: time first), then transposes for batch_first=False as before",
        ("outputs = torch.stack(outputs, dim=1)              # (B, T, H)", "outputs = torch.stack(outputs)                     # the states, one per step"))
mistake("ch02", "s02c", "ch02_bptt_gradient_norms", "bptt computes each step's gradient into a new name and records its norm, but never carries it: every norm is one step back from h_T",
        ("        grad = (grad * (1 - states[:, t] ** 2)) @ W_hh     # (B, H): dL/dh_t\n        norms.append(torch.linalg.vector_norm(grad))",
         "        prev = (grad * (1 - states[:, t] ** 2)) @ W_hh     # (B, H): dL/dh_t\n        norms.append(torch.linalg.vector_norm(prev))"))
mistake("ch02", "s02d", "ch02_clip_grad_norm", "clip_grad_norm sums the squares with torch.dot(g, g) ('a sum of squares is a dot product'): torch.dot takes 1-D tensors, the weight gradients are 2-D",
        ("total_norm = torch.sqrt(sum((g.detach() ** 2).sum() for g in grads))", "total_norm = torch.sqrt(sum(torch.dot(g, g) for g in grads))"))
mistake("ch02", "s02e", "ch02_bptt_gradient_norms", "bptt joins its 0-d norms with torch.cat(norms) (cat where stack is meant: 0-d tensors cannot be concatenated)",
        ("return torch.stack(norms)                              # (T + 1,)", "return torch.cat(norms)                                # (T + 1,)"))
variant("ch02", "u02a", "ch02_bptt_gradient_norms", "bptt with the tanh derivative expanded, (grad - grad * h * h) @ W_hh",
        ("grad = (grad * (1 - states[:, t] ** 2)) @ W_hh", "h = states[:, t]\n        grad = (grad - grad * h * h) @ W_hh"))
variant("ch02", "u02b", "ch02_rnn_cell", "rnn_cell with method calls, torch.matmul and the bias expanded to (B, H) explicitly",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)   # (B, H)",
         "return torch.matmul(h_prev, W_hh.t()).add(torch.matmul(x_t, W_hx.t())).add(b_h.expand(x_t.shape[0], -1)).tanh()"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "s03a", "ch03_lstm_cell", "lstm_cell squashes the cell state itself, c = tanh(f c_prev + i g), then h = o * c (h right, the returned c squashed)",
        ("c = f * c_prev + i * g                         # (B, H) cell state: keep some of the old, add some new\n    h = o * torch.tanh(c)                          # (B, H) hidden state",
         "c = torch.tanh(f * c_prev + i * g)             # (B, H) cell state, squashed\n    h = o * c                                      # (B, H) hidden state"))
mistake("ch03", "s03b", "ch03_lstm_cell", "lstm_cell returns torch.stack([h, c]), one (2, B, H) tensor 'like nn.LSTM's state' (h, c = ... still unpacks it)",
        ("    h = o * torch.tanh(c)                          # (B, H) hidden state\n    return h, c",
         "    h = o * torch.tanh(c)                          # (B, H) hidden state\n    return torch.stack([h, c])"))
mistake("ch03", "s03c", "ch03_lstm_cell_nobias", "lstm_cell_nobias multiplies h_prev by Wx['g'] in the candidate (the dict slipped: the input weights, (H, D))",
        ('g = torch.tanh(x @ Wx["g"].T + h_prev @ Wh["g"].T)', 'g = torch.tanh(x @ Wx["g"].T + h_prev @ Wx["g"].T)'))
mistake("ch03", "s03d", "ch03_split_gates", "split_gates returns a dict of Nones for a bias-free cell, {k: None for k in GATES} ('b[k] = None'), where the docstring asks for b = None",
        ("return Wx, Wh, None", "return Wx, Wh, {k: None for k in GATES}"))
mistake("ch03", "s03e", "ch03_lstm_layer", "lstm_layer starts from one zero row, torch.zeros(1, hidden_size) ('it broadcasts over the batch'): nn.LSTMCell wants a state per example",
        ("        h = x.new_zeros(B, hidden_size)            # (B, H)\n        c = x.new_zeros(B, hidden_size)            # (B, H)\n",
         "        h = torch.zeros(1, hidden_size)            # broadcasts over the batch\n        c = torch.zeros(1, hidden_size)\n"))
variant("ch03", "w03a", "ch03_lstm_layer", "lstm_layer carries the state in a dict {'h': ..., 'c': ...}",
        code=("def lstm_layer(cell, x, hidden_size, state=None):\n"
              "    B, T, _ = x.shape\n"
              "    if state is None:\n"
              "        s = {'h': x.new_zeros(B, hidden_size), 'c': x.new_zeros(B, hidden_size)}\n"
              "    else:\n"
              "        s = {'h': state[0][0], 'c': state[1][0]}\n"
              "    outs = []\n"
              "    for t in range(T):\n"
              "        s['h'], s['c'] = cell(x[:, t], (s['h'], s['c']))\n"
              "        outs.append(s['h'])\n"
              "    return torch.stack(outs, dim=1), (s['h'].unsqueeze(0), s['c'].unsqueeze(0))\n"))
variant("ch03", "w03b", "ch03_lstm_cell", "lstm_cell with tensor methods: hx.matmul(W[k].t()).add(b[k]).sigmoid(), c = c_prev.mul(f).add(i.mul(g))",
        code=("def lstm_cell(x, h_prev, c_prev, W, b):\n"
              "    hx = torch.cat([h_prev, x], dim=1)\n"
              "    pre = {k: hx.matmul(W[k].t()).add(b[k]) for k in ('i', 'f', 'g', 'o')}\n"
              "    i, f, o = pre['i'].sigmoid(), pre['f'].sigmoid(), pre['o'].sigmoid()\n"
              "    g = pre['g'].tanh()\n"
              "    c = c_prev.mul(f).add(i.mul(g))\n"
              "    return o.mul(c.tanh()), c\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "s04a", "ch04_gru_cell_textbook", "gru_cell_textbook reuses part 2 on the reset state, gru_cell_pytorch(x, r * h, ...) ('the two forms differ only in where r acts'): r and z are then computed from r * h",
        ("    h_tilde = torch.tanh(x @ W_nx.T + (r * h) @ W_nh.T + b_n)  # (B, H) reset BEFORE the product\n    return (1 - z) * h_tilde + z * h                            # (B, H)",
         "    return gru_cell_pytorch(x, r * h, weight_ih, weight_hh, bias_ih, bias_hh)   # the reset applied to h first"))
mistake("ch04", "s04b", "ch04_count_parameters", "count_parameters sizes bias_ih by the layer's input ('the input's bias'): blocks * (layer_input + H) instead of blocks * 2H",
        ("per_direction += blocks * 2 * hidden_size   # bias_ih and bias_hh", "per_direction += blocks * (layer_input + hidden_size)   # bias_ih (input) and bias_hh (hidden)"))
mistake("ch04", "s04c", "ch04_gru_cell_pytorch", "gru_cell_pytorch adds the hidden products into gi in place, gi += gh ('r and z in one sum'), then reads i_n from the summed gi: n = tanh(i_n + h_n + r h_n)",
        ("    i_r, i_z, i_n = gi.chunk(3, dim=1)      # each (B, H)\n",
         "    gi += gh                                # the sums for r and z in one go\n    i_r, i_z, i_n = gi.chunk(3, dim=1)      # each (B, H)\n"),
        ("r = torch.sigmoid(i_r + h_r)            # (B, H)", "r = torch.sigmoid(i_r)                  # (B, H)"),
        ("z = torch.sigmoid(i_z + h_z)            # (B, H)", "z = torch.sigmoid(i_z)                  # (B, H)"))
mistake("ch04", "s04d", "ch04_gru_cell_textbook", "gru_cell_textbook writes the interpolation in the one-product form with the difference the wrong way round, h~ + z (h~ - h)",
        ("return (1 - z) * h_tilde + z * h                            # (B, H)", "return h_tilde + z * (h_tilde - h)                         # (B, H)"))
mistake("ch04", "s04e", "ch04_count_parameters", "count_parameters tests the bias flag with `if bias is not None:` (False is not None: the biases are always counted)",
        ("        if bias:\n", "        if bias is not None:\n"))
variant("ch04", "v04a", "ch04_gru_cell_textbook", "gru_cell_textbook interpolates with torch.lerp(h, h_tilde, 1 - z)",
        ("return (1 - z) * h_tilde + z * h", "return torch.lerp(h, h_tilde, 1 - z)"))
variant("ch04", "v04b", "ch04_count_parameters", "count_parameters with a nested helper for one direction of one layer and a sum over a generator",
        code=("def count_parameters(kind, input_size, hidden_size, num_layers=1, bias=True, bidirectional=False):\n"
              "    blocks = dict(rnn=1, lstm=4, gru=3)[kind]\n"
              "    dirs = 1 + int(bidirectional)\n"
              "    H = hidden_size\n"
              "    def one(d_in):\n"
              "        return blocks * H * (d_in + H) + (2 * blocks * H if bias else 0)\n"
              "    return sum(dirs * one(input_size if l == 0 else dirs * H) for l in range(num_layers))\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "s05a", "ch05_reverse_padded", "reverse_padded works on a detached copy, y = x.detach().clone() ('inputs left unchanged'), and reverses each prefix in a loop: the values are right, no gradient reaches x",
        ("    t = torch.arange(T, device=x.device)                       # (T,)\n"
         "    L = lengths.to(x.device).unsqueeze(1)                       # (B, 1)\n"
         "    idx = torch.where(t < L, L - 1 - t, t)                      # (B, T): where each output step reads from\n"
         "    idx = idx.reshape(B, T, *([1] * (x.dim() - 2))).expand_as(x)  # (B, T, ...)\n"
         "    return x.gather(1, idx)",
         "    y = x.detach().clone()                                      # a copy: x stays as it is\n"
         "    for b in range(B):\n"
         "        L = int(lengths[b])\n"
         "        y[b, :L] = x[b, :L].flip(0)\n"
         "    return y"))
mistake("ch05", "s05b", "ch05_lstm_direction", "lstm_direction calls the cell without the state, cell(x[:, t]) ('the cell returns the next state'): nn.LSTMCell starts from zeros at every step",
        ("h_new, c_new = cell(x[:, t], (h, c))", "h_new, c_new = cell(x[:, t])"))
mistake("ch05", "s05c", "ch05_bilstm_from_cells", "BiLSTMFromCells adds the two directions, out_f + out_b (Keras' merge_mode='sum'), where the docstring asks for the concatenation: (B, T, H)",
        ("outputs = torch.cat([out_f, out_b], dim=-1)             # (B, T, 2H)", "outputs = out_f + out_b                                 # the two directions merged"))
mistake("ch05", "s05d", "ch05_final_states", "final_states takes H = outputs.shape[-1] (the whole row, 2H) for the half size: the 'forward half' is the whole row, the backward one empty",
        ("    B, _, two_h = outputs.shape\n    H = two_h // 2\n", "    B, _, H = outputs.shape\n"))
mistake("ch05", "s05e", "ch05_sentence_classifier", "SentenceClassifier gives pad_packed_sequence what the LSTM returns, the pair (packed outputs, (h_n, c_n)), in one line",
        ("        out, _ = self.rnn(packed)\n        out, _ = pad_packed_sequence(out, batch_first=True, total_length=tokens.shape[1])",
         "        out, _ = pad_packed_sequence(self.rnn(packed), batch_first=True, total_length=tokens.shape[1])"))
variant("ch05", "v05a", "ch05_residual_stack", "ResidualLSTMStack keeps each layer's (1, B, H) h_n and c_n and joins them with torch.cat (dim 0)",
        ("            hs.append(h_n[0])\n            cs.append(c_n[0])\n        return h, (torch.stack(hs), torch.stack(cs))",
         "            hs.append(h_n)\n            cs.append(c_n)\n        return h, (torch.cat(hs), torch.cat(cs))"))
variant("ch05", "v05b", "ch05_sentence_classifier", "SentenceClassifier calls pack_padded_sequence and pad_packed_sequence with positional arguments",
        ("packed = pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)",
         "packed = pack_padded_sequence(emb, lengths.cpu(), True, False)"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "s06a", "ch06_build_vocab", "build_vocab skips blank tokens, `if token.strip()` ('no whitespace in a vocabulary'): the space of the dates task is a token",
        ("kept = [token for token, count in counts.items() if count >= min_freq]",
         "kept = [token for token, count in counts.items() if count >= min_freq and token.strip()]"))
mistake("ch06", "s06b", "ch06_encoder", "Encoder builds an nn.LSTM (chapter 5's layer) under self.rnn: its h_n is the pair (h, c), and h_n[0] is the (1, B, H) hidden state",
        ("self.rnn = nn.GRU(emb_size, hidden_size, batch_first=True)", "self.rnn = nn.LSTM(emb_size, hidden_size, batch_first=True)"))
mistake("ch06", "s06c", "ch06_decoder", "Decoder predicts from [d_t; E[y_{t-1}]] (the output layer also sees the input, as chapter 7's Out does): self.out = nn.Linear(H + E, V)",
        ("self.out = nn.Linear(hidden_size, vocab_size)", "self.out = nn.Linear(hidden_size + emb_size, vocab_size)"),
        ("d = self.cell(self.embedding(y_prev), d_prev)   # (B, H)\n        logits = self.out(d)                            # (B, V)",
         "emb = self.embedding(y_prev)\n        d = self.cell(emb, d_prev)                      # (B, H)\n        logits = self.out(torch.cat([d, emb], dim=-1))  # (B, V)"))
mistake("ch06", "s06d", "ch06_teacher_forced_loss", "teacher_forced_loss takes V from the decoder's attribute, decoder.out.out_features (the stand-in decoders of the tests have the interface, not the attribute)",
        ("loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), ignore_index=pad_index)",
         "V = decoder.out.out_features\n    loss = F.cross_entropy(logits.reshape(-1, V), dec_out.reshape(-1), ignore_index=pad_index)"))
mistake("ch06", "s06e", "ch06_greedy_decode", "greedy_decode picks the next tokens with the tutorial's idiom, logits.topk(1)[1].squeeze() (a batch of one becomes a 0-d tensor)",
        ("y = logits.argmax(dim=-1)                                     # (B,)", "_, topi = logits.topk(1)\n            y = topi.squeeze().detach()                                  # (B,)"))
variant("ch06", "v06a", "ch06_pad_batch", "pad_batch joins each sequence with its padding by torch.cat and stacks the rows",
        code=("def pad_batch(sequences, pad_index=PAD_INDEX):\n"
              "    T = max(len(s) for s in sequences)\n"
              "    rows = [torch.cat([torch.tensor(s, dtype=torch.long), torch.full((T - len(s),), pad_index, dtype=torch.long)]) for s in sequences]\n"
              "    return torch.stack(rows), torch.tensor([len(s) for s in sequences], dtype=torch.long)\n"))
variant("ch06", "v06b", "ch06_encoder", "Encoder returns the final state as h_n.squeeze(0) (only the layer axis)",
        ("return outputs, h_n[0]", "return outputs, h_n.squeeze(0)"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "s07a", "ch07_lstm_cell", "LSTMCell cuts the blocks in chapter 3's order f, i, g, o (the notebook warns against it: the source's is f, i, o, g)",
        ("f, i, o, g = z.chunk(4, dim=-1)", "f, i, g, o = z.chunk(4, dim=-1)"))
mistake("ch07", "s07b", "ch07_encoder", "EncoderRNN returns its decoder state as the pair (fc(...), zeros) ('an LSTM decoder starts from (h, c)'), where the docstring asks for hidden (B, Hd)",
        ("hidden = self.fc(torch.cat([h_left, h_right], dim=-1))   # (B, Hd)",
         "hidden = self.fc(torch.cat([h_left, h_right], dim=-1))   # (B, Hd)\n        hidden = (hidden, torch.zeros_like(hidden))              # (h_0, c_0) for the LSTM decoder"))
mistake("ch07", "s07c", "ch07_attention", "Attention divides the energies by sqrt(attn_size) (the Transformer's scaling) before the softmax",
        ("scores = energy @ self.v                                   # (B, Tx)", "scores = energy @ self.v / self.v.shape[0] ** 0.5       # scaled, as in the Transformer"))
mistake("ch07", "s07d", "ch07_decoder", "AttnDecoderRNN returns the weights recomputed with the NEW state h (for the heatmap), while the context used d_{t-1}'s",
        ("return F.log_softmax(scores, dim=-1), (h, c), weights", "return F.log_softmax(scores, dim=-1), (h, c), self.attention(h, encoder_outputs, mask)"))
mistake("ch07", "s07e", "ch07_greedy", "greedy_translate calls model.encode(src) without the lengths (they are optional in EncoderRNN.forward)",
        ("memory, state = model.encode(src, src_lengths)", "memory, state = model.encode(src)"))
variant("ch07", "v07a", "ch07_attention", "Attention masks with torch.where(mask, scores, -inf)",
        ("scores = scores.masked_fill(~mask, float(\"-inf\"))", "scores = torch.where(mask, scores, torch.tensor(float(\"-inf\")))"))
variant("ch07", "v07b", "ch07_lstm_cell", "LSTMCell squashes the three gates with one sigmoid over the first 3H columns, chunk(3), and the candidate from the last H",
        ("        f, i, o, g = z.chunk(4, dim=-1)                        # (B, H) each\n        f, i, o = torch.sigmoid(f), torch.sigmoid(i), torch.sigmoid(o)\n        g = torch.tanh(g)                                      # (B, H)",
         "        H = self.hidden_size\n        f, i, o = torch.sigmoid(z[:, :3 * H]).chunk(3, dim=-1)\n        g = torch.tanh(z[:, 3 * H:])"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "s08a", "ch08_dot", "dot_attention returns only the contexts, attend(...)[1] ('attention gives the contexts'), where the docstring asks for (weights, contexts)",
        ("return attend(energies, enc, mask)", "return attend(energies, enc, mask)[1]"))
mistake("ch08", "s08b", "ch08_macs", "reduced_rank_macs counts the keys with the decoder's size, keys = Tx * R * Dd (a copy slip of the queries' line)",
        ("keys = Tx * R * Dh          # V h_s for every source position s", "keys = Tx * R * Dd          # V h_s for every source position s"))
mistake("ch08", "s08c", "ch08_reduced_rank", "reduced_rank_attention writes the queries in column form, U @ dec^T (B, R, Ty), and the keys in row form, then the product of part 2",
        ("queries = dec @ U.T                          # (B, Ty, R): U d_t for every target step", "queries = U @ dec.transpose(1, 2)           # U d_t for every target step"))
mistake("ch08", "s08d", "ch08_bilinear", "bilinear_attention averages the projected decoder states, attend(energies, dec @ W, mask) ('the values are W-projected too')",
        ("    energies = (dec @ W) @ enc.transpose(1, 2)   # (B, Ty, Dh) @ (B, Dh, Tx) -> (B, Ty, Tx)\n    return attend(energies, enc, mask)",
         "    proj = dec @ W                               # (B, Ty, Dh)\n    energies = proj @ enc.transpose(1, 2)        # (B, Ty, Tx)\n    return attend(energies, proj, mask)"))
mistake("ch08", "s08e", "ch08_reduced_rank", "reduced_rank_attention reuses part 2, dot_attention(dec @ U.T, enc @ V.T, mask) ('a dot product of two projections'): the contexts average the keys (close to reduced_projected_values, kept because it crosses functions)",
        ("    energies = queries @ keys.transpose(1, 2)    # (B, Ty, R) @ (B, R, Tx) -> (B, Ty, Tx)\n    return attend(energies, enc, mask)",
         "    return dot_attention(queries, keys, mask)"))
variant("ch08", "v08a", "ch08_scaled_dot", "scaled_dot_attention through part 4, bilinear_attention with W = I / sqrt(D)",
        ("    energies = dec @ enc.transpose(1, 2) / math.sqrt(D)      # (B, Ty, Tx)\n    return attend(energies, enc, mask)",
         "    W = torch.eye(D, dtype=dec.dtype) / math.sqrt(D)\n    return bilinear_attention(dec, enc, mask, W)"))
variant("ch08", "v08c", "ch08_scaled_dot", "scaled_dot_attention with one einsum and the scale as a power, D ** -0.5 (added after the run: v08a called a function defined in a later cell)",
        ("energies = dec @ enc.transpose(1, 2) / math.sqrt(D)      # (B, Ty, Tx)",
         "energies = torch.einsum(\"btd,bsd->bts\", dec, enc) * D ** -0.5   # (B, Ty, Tx)"))
variant("ch08", "v08b", "ch08_reduced_rank", "reduced_rank_attention with the projections as batched matrix-vector products, (U @ d[..., None]).squeeze(-1)",
        ("queries = dec @ U.T                          # (B, Ty, R): U d_t for every target step\n    keys = enc @ V.T                             # (B, Tx, R): V h_s for every source position, once",
         "queries = (U @ dec[..., None]).squeeze(-1)   # (B, Ty, R)\n    keys = (V @ enc[..., None]).squeeze(-1)      # (B, Tx, R)"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "s09a", "ch09_decode_step", "decode_step returns the scores W_vocab tilde d_t as o_t ('the step's output'): (B, V) where tilde d_t (B, H) is asked",
        ("return (d, c), o, alpha", "return (d, c), model.W_vocab(o), alpha"))
mistake("ch09", "s09b", "ch09_teacher_forcing", "decode_teacher_forcing starts its loop at t = 1 ('<sos> is not a word'): Ty - 1 scores",
        ("for t in range(tgt_in.shape[1]):", "for t in range(1, tgt_in.shape[1]):"))
mistake("ch09", "s09c", "ch09_beam_search", "beam_search extends each hypothesis by its beam_size best tokens with enumerate(log_probs.topk(beam_size).values.tolist()) (the rank taken for the token id)",
        ("for tok, lp in enumerate(log_probs.tolist()):", "for tok, lp in enumerate(log_probs.topk(beam_size).values.tolist()):"))
mistake("ch09", "s09d", "ch09_decode_step", "decode_step gives the LSTM cell only the hidden state, model.decoder(input, state[0]) ('the previous state d_{t-1}')",
        ("d, c = model.decoder(torch.cat([y_emb, o_prev], dim=-1), state)", "d, c = model.decoder(torch.cat([y_emb, o_prev], dim=-1), state[0])"))
mistake("ch09", "s09e", "ch09_masked_loss", "masked_loss keeps only the 'real words', tgt_out > EOS: <eos> is left out with the padding (close to loss_ignores_eos, which keeps the padding)",
        ("return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)",
         "real = (tgt_out > EOS).reshape(-1)\n    return F.cross_entropy(logits.reshape(-1, logits.shape[-1])[real], tgt_out.reshape(-1)[real])"))
variant("ch09", "v09a", "ch09_teacher_forcing", "decode_teacher_forcing stacks the combined outputs time first and turns them round with transpose(0, 1)",
        ("return model.W_vocab(torch.stack(outputs, dim=1))", "return model.W_vocab(torch.stack(outputs).transpose(0, 1))"))
variant("ch09", "v09b", "ch09_masked_loss", "masked_loss gives cross_entropy log(softmax(logits)) (a log-softmax of log-probabilities changes nothing)",
        ("return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)",
         "return F.cross_entropy(torch.log(torch.softmax(logits, dim=-1)).reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)"))

CASES = M + OK

# The first failing visible test's message as the student sees it in Jupyter, judged by the rule of trials 22f-22r.
VERDICTS: dict[str, tuple[str, str]] = {
    'ch01-s01a': ('P', "'use self.rnn = nn.RNN(...) and self.head = nn.Linear(...)': the module to use named (the student built an nn.RNNCell)"),
    'ch01-s01b': ('P', "'use self.rnn = nn.RNN(...) and self.head = nn.Linear(...)': the head must be one nn.Linear (the student's is an nn.Sequential)"),
    'ch01-s01c': ('Pa', "'OneToMany(x, steps=5): expected shape (2, 5, 6), got (2, 5, 4); dimension 2 has size 4 instead of 6 (the wrong tensor, weight or size used there?)': the right result and axis, a generic guess; that the head is missing (4 = H) is not said (lenient reading: P)"),
    'ch01-s01d': ('P', "'your values are what you get with an extra tanh around `h_n` (... the line that computes `(outputs, _)`)'"),
    'ch01-s01e': ('P', "'the losses of two runs with the same seed after different global seeds (draw the batches with the generator g made from `seed` ...)' then '`idx` is the first variable whose value differs ... look at your line \"idx = torch.randint(..., generator=g)\"': the cause (g not made from seed) said first; the line named is the right randint line, the wrong one is g.seed() (strict reading: Pa)"),
    'ch02-s02a': ('P', "'rnn_cell(x_t, h_prev, ...): expected a torch.Tensor, got a tuple of 2 items'"),
    'ch02-s02b': ('P', "'outputs ...: expected shape (2, 5, 4), got (5, 2, 4); ... axes swapped ... Likely cause: ... (the line that computes `outputs`): an option of a call left out (its default used: dim, ...)'"),
    'ch02-s02c': ('M', "'Likely cause: your values are what you get with `1 - states[:, t] ** 2` where `grad * (1 - states[:, t] ** 2)` is needed (... the line that computes `grad`)': a wrong named cause; the student's line holds grad * (1 - ...) and no loop line computes grad; the cause (the new gradient kept in `prev`, grad never updated) is not said (lenient reading: N)"),
    'ch02-s02d': ('P', "at the student's line: '1D tensors expected, but got 2D and 2D tensors -- torch.dot multiplies two 1-D vectors; your line gives it g (1, 1) (2-D): for a batch use (a * b).sum(-1) or @'"),
    'ch02-s02e': ('Pa', "PyTorch's own 'zero-dimensional tensor (at position 0) cannot be concatenated' at the student's return line, nothing added (torch.stack not suggested; lenient reading: P)"),
    'ch03-s03a': ('P', "'c (the new cell state): ... Likely cause: an extra tanh around `f * c_prev + i * g` (... the line that computes `c`); or `torch.tanh(c)` where `c` is needed (... the returned value)'"),
    'ch03-s03b': ('P', "'lstm_cell must return the pair (h, c)'"),
    'ch03-s03c': ('P', "at the student's line: 'h_prev (2, 4) @ Wx['g'].T (3, 4): ... which one is your equation (the order of the operands, a transpose, the tensor used)?': the slipped dict is in the named product (strict reading: Pa)"),
    'ch03-s03d': ('P', "'b must be None for a cell without biases'"),
    'ch03-s03e': ('P', "'Input batch size 2 doesn't match hidden0 batch size 1 -- h has shape (1, 4) here, but (2, 4) ...; it goes wrong at your line \"h = torch.zeros(1, hidden_size)\" ...'"),
    'ch04-s04a': ('Pa', "Python's own \"name 'gru_cell_pytorch' is not defined\" at the student's return line (part 2's function is defined in a later cell), nothing added: once part 2 runs first, the wrong math (r and z from r * h) is still to be found"),
    'ch04-s04b': ('P', "'count_parameters('rnn', 10, 20): got 630, expected 640 ... your line \"per_direction += blocks * (layer_input + hidden_size) ...\" ...: it goes wrong there': the bias line named, layer_input visible in it (strict reading: Pa)"),
    'ch04-s04c': ('P', "'`gi` ... gets 2 different values where the reference's gets 1: its second, from your line \"gi += gh\", is one the reference's never gets'"),
    'ch04-s04d': ('Pa', "'every variable that can be compared agrees ..., but the result differs: look at the line that returns it (\"return h_tilde + z * (h_tilde - h)\")': the right line, not what is wrong in it (lenient reading: P)"),
    'ch04-s04e': ('P', "'count_parameters('gru', 3, 6, num_layers=2) gives the same result for bias=True and bias=False (450), though ... your line \"if bias is not None:\" ... makes no difference between these values'"),
    'ch05-s05a': ('-', "no visible test fails, and 22/22: the detached copy gives the right values; no test of reverse_padded checks that a gradient reaches x"),
    'ch05-s05b': ('P', "'your values are what you get with `cell(x[:, t])` where `cell(x[:, t], (h, c))` is needed'"),
    'ch05-s05c': ('P', "'outputs: expected shape (2, 4, 10), got (2, 4, 5); dimension 2 is 2 times too small (... a block or a direction missing?) -- ... the line that computes `outputs`': a direction missing in the named line (strict reading: Pa)"),
    'ch05-s05d': ('M', "'Likely cause: your values are what you get if you take the backward state at the last real step instead of position 0': the student's backward line reads position 0 and is right; the wrong line is H = outputs.shape[-1] (the forward 'half' is the whole row)"),
    'ch05-s05e': ('Pa', "at the student's line: PyTorch's own \"'tuple' object has no attribute 'batch_sizes'\" and 'another variable in place of the right one': the line, not that self.rnn returns (outputs, state) (lenient reading: P)"),
    'ch06-s06a': ('P', "'got [..., '1', ...], expected [..., ' ', '1', ...]; first difference at [4]: '1' instead of ' '; only 9 of the 10 expected items (... some dropped?)': the dropped space token shown"),
    'ch06-s06b': ('P', "'use self.rnn = nn.GRU(emb_size, hidden_size, batch_first=True)'"),
    'ch06-s06c': ('M', "'RuntimeError: at \"\"compute the scores from d_{t-1} instead of the new state d_t\": decoder.out(d_prev).detach(),\": mat1 and mat2 shapes cannot be multiplied (2x4 and 7x9) -- ... a .T missing or one too many, or the wrong matrix?': the location is the test's own probe (a line the student never wrote, quoted as 'at'), the named causes (.T) are not the student's; that out reads H + E features is not said"),
    'ch06-s06d': ('-', "no visible test fails, and 16/16: every decoder the tests give has an `out` layer (the docstring's Decoder does), so decoder.out.out_features works; a weak mistake (the loss is only promised decoder.step)"),
    'ch06-s06e': ('P', "'y has shape () here, but (1,) ...; it goes wrong at your line \"y = topi.squeeze().detach()\"'"),
    'ch07-s07a': ('P', "'your values are what you get if you read the blocks in the order f, i, g, o instead of f, i, o, g'"),
    'ch07-s07b': ('P', "'hidden: expected a torch.Tensor, got a tuple of 2 items'"),
    'ch07-s07c': ('P', "'your weights are a softmax of the expected energies times 0.447 (a scale missing, doubled or of the wrong size?)': 0.447 = 1/sqrt(5), the added scale"),
    'ch07-s07d': ('Pa', "'weights at step 1: ... every variable ... agrees ..., but the result differs: look at the line that returns it (\"return ..., self.attention(h, encoder_outputs, mask)\")': the right line, not that the returned weights must be those of h_prev (lenient reading: P)"),
    'ch07-s07e': ('P', "at the student's line: 'encode() missing 1 required positional argument: 'src_lengths' -- ... an argument of a call left out'"),
    'ch08-s08a': ('P', "'dot_attention's return value (weights, contexts): must be a Python tuple, got a tensor ... `return weights, contexts`'"),
    'ch08-s08b': ('P', "'`keys` is the first variable whose value differs ...: look at your line \"keys = Tx * R * Dd\" (... yours reads `Dd` ...; the reference's reads `Dh`)'"),
    'ch08-s08c': ('P', "'queries has shape (2, 1, 3) here, but (2, 3, 1) ...; it goes wrong at your line \"queries = U @ dec.transpose(1, 2)\"'"),
    'ch08-s08d': ('P', "at the student's line: 'bilinear_attention passes attend values of shape (2, 3, 5); they must be the encoder states h_s, (B, Tx, Dh)'"),
    'ch08-s08e': ('P', "'contexts (the weighted average of the encoder states h_s, not of their projections V h_s): ... attend is called with values (2, 4, 1) ... from your line \"return attend(energies, enc, mask)\" in dot_attention ... (in reduced_rank_attention, the returned value): another variable in place of the right one'"),
    'ch09-s09a': ('Pa', "'o_t: expected shape (2, 4), got (2, 6); dimension 1 has size 6 instead of 4 (the wrong tensor, weight or size used there?)': the right result and axis, a generic guess; W_vocab not named (6 = V)"),
    'ch09-s09b': ('P', "'logits: expected shape (2, 4, 6), got (2, 3, 6); dimension 1 has 3 instead of 4: one too few (an off-by-one in a range or a slice?)'"),
    'ch09-s09c': ('M', "'your first hypothesis [0, 0, 0, 0, 0, 0] ...: your beam keeps worse candidates than the best ones (sorted lowest first, or nsmallest ...?), or scores them otherwise': two named wrong causes first; that the tokens are ranks (enumerate of topk values) is not said, though the hypothesis of 0s is shown (lenient reading: N)"),
    'ch09-s09d': ('P', "at the student's line: 'model.decoder is a cell (nn.LSTMCell): its state is the pair (h, c), and your line gives it state[0] (2, 4), one tensor' (a stray note on torch.cat follows)"),
    'ch09-s09e': ('Pa', "'masked loss: got 1.62758, expected 1.73852 ... look at the line that returns it': the right line, `real` visible in it, not that <eos> must count (lenient reading: P)"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.trial_main(sys.modules[__name__], "/tmp/student_trial_22s", argv)


if __name__ == "__main__":
    main()
