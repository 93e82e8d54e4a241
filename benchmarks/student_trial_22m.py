"""Student trial 22m: the acceptance trial of issue 22, 45 new mistakes and 18 correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed in 0bbd0f4, before solutions/
and the catalogues were read: benchmarks/results/student_trial_22m_plan.md); every planned mistake and variant turned
out to repeat an old mutant, an earlier trial's case or its class, and was replaced by a new one written the same way
(the plan's second table, commit 480c457). A mistake is one or more edits of one cell's reference code, ``(old, new)``
pairs whose ``old`` occurs once; a variant rewrites the cell (or edits it) and must keep full marks. Only the cases
and the verdicts live here: building, grading (the class grader, one run per assignment), the Jupyter view and the
report are benchmarks/student_trial.py's and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22m unless --root says otherwise):

    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22m.py --student-view [ch01 ...] [--students ch01-n01a,...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22m.py --grade [ch01 ...]
    /work/main/.venv/bin/python benchmarks/student_trial_22m.py --table     # benchmarks/results/student_trial_22m.md's tables
    /work/main/.venv/bin/python benchmarks/student_trial_22m.py --save benchmarks/results/student_trial_22m.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "n01a", "ch01_many_to_one", "ManyToOne classifies from h_n.flatten() (flatten() to drop the layer axis of h_n (1, B, H): it flattens the batch too, (B * H,))",
        ("return self.head(outputs[:, -1])", "return self.head(h_n.flatten())"))
mistake("ch01", "n01b", "ch01_many_to_many_sync", "ManyToManySync unpacks nn.RNN's pair the other way round, `_, outputs = self.rnn(x)` (the head gets h_n (1, B, H))",
        ("outputs, _ = self.rnn(x)      # (B, T, H)", "_, outputs = self.rnn(x)      # (B, T, H)"))
mistake("ch01", "n01c", "ch01_one_to_many", "OneToMany makes its zero inputs with requires_grad=True ('gradients must reach every weight'), then writes x into them in place (a leaf that requires grad)",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])", "inputs = x.new_zeros(x.shape[0], steps, x.shape[1], requires_grad=True)"))
mistake("ch01", "n01d", "ch01_many_to_many_async", "ManyToManyAsync gives the decoder the pair (h_n, h_n), the (h, c) state of LSTM seq2seq tutorials, where nn.RNN takes one tensor",
        ("outputs, _ = self.decoder(tgt, h_n)", "outputs, _ = self.decoder(tgt, (h_n, h_n))"))
mistake("ch01", "n01e", "ch01_fit", "fit draws randint(0, batch_size, (len(x),)) (bounds and size confused: len(x) indices, all below batch_size)",
        ("idx = torch.randint(0, len(x), (batch_size,), generator=g)   #", "idx = torch.randint(0, batch_size, (len(x),), generator=g)   #"))
variant("ch01", "y01a", "ch01_train_step", "train_step computes the loss first, then clears the gradients with model.zero_grad(), back-propagates, steps, returns float(loss.detach())",
        code=("def train_step(model, optimizer, x, y):\n"
              "    loss = F.cross_entropy(model(x), y)\n"
              "    model.zero_grad()\n"
              "    loss.backward()\n"
              "    optimizer.step()\n"
              "    return float(loss.detach())\n"))
variant("ch01", "y01b", "ch01_fit", "fit: Adam(params=..., lr=lr) by keyword, randint(len(x), (batch_size,), generator=g) with the low bound omitted",
        ("optimizer = torch.optim.Adam(model.parameters(), lr=lr)", "optimizer = torch.optim.Adam(params=model.parameters(), lr=lr)"),
        ("idx = torch.randint(0, len(x), (batch_size,), generator=g)   #", "idx = torch.randint(len(x), (batch_size,), generator=g)   #"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "n02a", "ch02_rnn_cell", "rnn_cell in the concatenated form with the weights joined along the wrong axis, torch.cat([W_hh, W_hx], 0)",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)",
         "return torch.tanh(torch.cat([h_prev, x_t], 1) @ torch.cat([W_hh, W_hx], 0).T + b_h)"))
mistake("ch02", "n02b", "ch02_rnn_layer", "rnn_layer calls rnn_cell(h, x[:, t], ...) (the state first, as the math writes W_hh h_{t-1} first; the cell takes x_t first)",
        ("h = rnn_cell(x[:, t], h, W_hx, W_hh, b_h)", "h = rnn_cell(h, x[:, t], W_hx, W_hh, b_h)"))
mistake("ch02", "n02c", "ch02_bptt_gradient_norms", "bptt reads step t as states[t] (exercise 2's time-first layout) on the batch-first states",
        ("grad = (grad * (1 - states[:, t] ** 2)) @ W_hh", "grad = (grad * (1 - states[t] ** 2)) @ W_hh"))
mistake("ch02", "n02d", "ch02_clip_grad_norm", "clip_grad_norm works on copies, [p.grad.clone() ...] ('inputs left unchanged'): the copies are scaled, the gradients never",
        ("grads = [p.grad for p in parameters if p.grad is not None]", "grads = [p.grad.clone() for p in parameters if p.grad is not None]"))
mistake("ch02", "n02e", "ch02_bptt_gradient_norms", "bptt adds each step's back-propagated gradient to the running one, grad = grad + (...) @ W_hh (BPTT read as a sum over time)",
        ("grad = (grad * (1 - states[:, t] ** 2)) @ W_hh", "grad = grad + (grad * (1 - states[:, t] ** 2)) @ W_hh"))
variant("ch02", "y02a", "ch02_rnn_cell", "rnn_cell with torch.inner (inner(a, W) = a @ W.T for the rows of a)",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)",
         "return torch.tanh(torch.inner(h_prev, W_hh) + torch.inner(x_t, W_hx) + b_h)"))
variant("ch02", "y02b", "ch02_bptt_gradient_norms", "bptt keeps every gradient, stacks them (T + 1, B, H) and takes all the norms at once with vector_norm(dim=(1, 2))",
        code=("def bptt_gradient_norms(states, W_hh):\n"
              "    grads = [torch.ones_like(states[:, -1])]\n"
              "    for t in reversed(range(states.shape[1])):\n"
              "        grads.append((grads[-1] * (1 - states[:, t] ** 2)) @ W_hh)\n"
              "    return torch.linalg.vector_norm(torch.stack(grads), dim=(1, 2))\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "n03a", "ch03_lstm_cell", "lstm_cell adds the whole bias dict to the forget gate, + b (the [\"f\"] forgotten)",
        ('f = torch.sigmoid(hx @ W["f"].T + b["f"])', 'f = torch.sigmoid(hx @ W["f"].T + b)'))
mistake("ch03", "n03b", "ch03_lstm_cell", "lstm_cell returns h alone (c computed, not returned: 'the new hidden state')",
        ("    return h, c\n", "    return h\n"))
mistake("ch03", "n03c", "ch03_lstm_layer", "lstm_layer unpacks a given state as h, c = state[0] (state[0] read as 'the first layer's (h, c)')",
        ("h, c = state[0][0], state[1][0]", "h, c = state[0]"))
mistake("ch03", "n03d", "ch03_lstm_layer", "lstm_layer calls the cell with the state first, cell((h, c), x[:, t])",
        ("h, c = cell(x[:, t], (h, c))", "h, c = cell((h, c), x[:, t])"))
mistake("ch03", "n03e", "ch03_lstm_cell_nobias", "lstm_cell_nobias squashes the three gates with torch.logit ('the logistic function' looked up: logit is its inverse)",
        ('i = torch.sigmoid(x @ Wx["i"].T', 'i = torch.logit(x @ Wx["i"].T'),
        ('f = torch.sigmoid(x @ Wx["f"].T', 'f = torch.logit(x @ Wx["f"].T'),
        ('o = torch.sigmoid(x @ Wx["o"].T', 'o = torch.logit(x @ Wx["o"].T'))
variant("ch03", "y03a", "ch03_split_gates", "split_gates with Tensor.unflatten(0, (4, -1)).unbind(0) for the four blocks",
        ("Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))", "Wx = dict(zip(GATES, cell.weight_ih.unflatten(0, (4, -1)).unbind(0)))"),
        ("Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))", "Wh = dict(zip(GATES, cell.weight_hh.unflatten(0, (4, -1)).unbind(0)))"))
variant("ch03", "y03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias with one einsum per product in a dict comprehension",
        code=("def lstm_cell_nobias(x, h_prev, c_prev, Wx, Wh):\n"
              "    pre = {k: torch.einsum('bd,hd->bh', x, Wx[k]) + torch.einsum('bj,hj->bh', h_prev, Wh[k]) for k in GATES}\n"
              "    i, f, o = torch.sigmoid(pre['i']), torch.sigmoid(pre['f']), torch.sigmoid(pre['o'])\n"
              "    g = torch.tanh(pre['g'])\n"
              "    c = f * c_prev + i * g\n"
              "    return o * torch.tanh(c), c\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "n04a", "ch04_gru_cell_textbook", "gru_cell_textbook unpacks the stacked weight_ih itself, W_rx, W_zx, W_nx = weight_ih (as if it held three blocks)",
        ("W_rx, W_zx, W_nx = weight_ih.split(H)", "W_rx, W_zx, W_nx = weight_ih"))
mistake("ch04", "n04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch: torch.mv(weight_ih, x) for 'W_ir x' (a matrix times a vector; x is a batch)",
        ("gi = x @ weight_ih.T + bias_ih", "gi = torch.mv(weight_ih, x) + bias_ih"))
mistake("ch04", "n04c", "ch04_gru_cell_pytorch", "gru_cell_pytorch: n = tanh(i_n + r) * h_n (the closing parenthesis typed one term early)",
        ("n = torch.tanh(i_n + r * h_n)", "n = torch.tanh(i_n + r) * h_n"))
mistake("ch04", "n04d", "ch04_count_parameters", "count_parameters counts a bidirectional module as twice as many one-direction layers ('a bidirectional layer is two layers')",
        ("    directions = 2 if bidirectional else 1\n",
         "    directions = 1\n    if bidirectional:\n        num_layers *= 2\n"))
mistake("ch04", "n04e", "ch04_count_parameters", "count_parameters always adds the biases in the loop and, for bias=False, subtracts one set (blocks * 2 * H) once after it",
        ("        if bias:\n            per_direction += blocks * 2 * hidden_size   # bias_ih and bias_hh\n",
         "        per_direction += blocks * 2 * hidden_size   # bias_ih and bias_hh\n"),
        ("    return total\n", "    if not bias:\n        total -= blocks * 2 * hidden_size\n    return total\n"))
variant("ch04", "y04a", "ch04_gru_cell_pytorch", "gru_cell_pytorch: the (B, 3H) products cut with unflatten(1, (3, H)).unbind(1)",
        ("    i_r, i_z, i_n = gi.chunk(3, dim=1)      # each (B, H)\n"
         "    h_r, h_z, h_n = gh.chunk(3, dim=1)      # each (B, H)\n",
         "    H = h.shape[1]\n"
         "    i_r, i_z, i_n = gi.unflatten(1, (3, H)).unbind(1)\n"
         "    h_r, h_z, h_n = gh.unflatten(1, (3, H)).unbind(1)\n"))
variant("ch04", "y04b", "ch04_gru_cell_textbook", "gru_cell_textbook: h' = h_tilde.mul(1 - z).addcmul_(z, h) (in place on the fresh product)",
        ("return (1 - z) * h_tilde + z * h", "return h_tilde.mul(1 - z).addcmul_(z, h)"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "n05a", "ch05_reverse_padded", "reverse_padded reads with x.index_select(1, idx) (index_select taken for gather; it wants a 1-D index)",
        ("    idx = idx.reshape(B, T, *([1] * (x.dim() - 2))).expand_as(x)  # (B, T, ...)\n    return x.gather(1, idx)\n",
         "    return x.index_select(1, idx)\n"))
mistake("ch05", "n05b", "ch05_sentence_classifier", "SentenceClassifier passes masked_mean the lengths shaped (B, 1), lengths.unsqueeze(1) ('for the division')",
        ("return self.head(masked_mean(out, lengths))", "return self.head(masked_mean(out, lengths.unsqueeze(1)))"))
mistake("ch05", "n05c", "ch05_bilstm_from_cells", "BiLSTMFromCells builds both cells in one line, self.fwd = self.bwd = nn.LSTMCell(...): the two directions share one module",
        ("        self.fwd = nn.LSTMCell(input_size, hidden_size)\n        self.bwd = nn.LSTMCell(input_size, hidden_size)\n",
         "        self.fwd = self.bwd = nn.LSTMCell(input_size, hidden_size)\n"))
mistake("ch05", "n05d", "ch05_residual_stack", "ResidualLSTMStack gives the dropout to each nn.LSTM (dropout=dropout) and never applies self.dropout",
        ("nn.LSTM(d, hidden_size, batch_first=True)", "nn.LSTM(d, hidden_size, batch_first=True, dropout=dropout)"),
        ("inp = h if l == 0 else self.dropout(h)", "inp = h"))
mistake("ch05", "n05e", "ch05_masked_mean", "masked_mean takes T as the longest sentence, T = int(lengths.max()) (the padded outputs may be longer)",
        ("    T = outputs.shape[1]\n", "    T = int(lengths.max())\n"))
variant("ch05", "y05a", "ch05_sentence_classifier", "SentenceClassifier pads the LSTM's outputs back only to the longest sentence (no total_length): masked_mean needs nothing beyond it",
        ("out, _ = pad_packed_sequence(out, batch_first=True, total_length=tokens.shape[1])", "out, _ = pad_packed_sequence(out, batch_first=True)"))
variant("ch05", "y05b", "ch05_residual_stack", "ResidualLSTMStack with lengths=None runs each layer on the tensor itself (no packing: every sequence is full)",
        ("        if lengths is None:\n            lengths = torch.full((B,), T, dtype=torch.long)\n", ""),
        ("            packed = pack_padded_sequence(inp, lengths.cpu(), batch_first=True, enforce_sorted=False)\n"
         "            out, (h_n, c_n) = layer(packed)                              # h_n, c_n: (1, B, H)\n"
         "            out, _ = pad_packed_sequence(out, batch_first=True, total_length=T)  # (B, T, H)\n",
         "            if lengths is None:\n"
         "                out, (h_n, c_n) = layer(inp)\n"
         "            else:\n"
         "                packed = pack_padded_sequence(inp, lengths.cpu(), batch_first=True, enforce_sorted=False)\n"
         "                out, (h_n, c_n) = layer(packed)\n"
         "                out, _ = pad_packed_sequence(out, batch_first=True, total_length=T)\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "n06a", "ch06_decoder", "Decoder.step embeds y_prev.unsqueeze(1) (the (B, 1) layout of sequence models for one step): (B, 1, E) for the GRU cell",
        ("d = self.cell(self.embedding(y_prev), d_prev)", "d = self.cell(self.embedding(y_prev.unsqueeze(1)), d_prev)"))
mistake("ch06", "n06b", "ch06_teacher_forced_loss", "teacher_forced_loss joins the steps' logits with torch.cat(logits, dim=1) where stack is meant: (B, Ty * V)",
        ("logits = torch.stack(logits, dim=1)", "logits = torch.cat(logits, dim=1)"))
mistake("ch06", "n06c", "ch06_greedy_decode", "greedy_decode samples the next token, torch.multinomial(softmax(logits), 1) (sampling code copied), instead of the arg-max",
        ("y = logits.argmax(dim=-1) ", "y = torch.multinomial(logits.softmax(dim=-1), 1).squeeze(1) "))
mistake("ch06", "n06d", "ch06_numericalize", "numericalize filters the unknown tokens out, [stoi[t] for t in tokens if t in stoi], instead of mapping them to <unk>",
        ("ids = [stoi.get(token, UNK_INDEX) for token in tokens]", "ids = [stoi[token] for token in tokens if token in stoi]"))
mistake("ch06", "n06e", "ch06_build_vocab", "build_vocab types the special tokens from memory in another order, ['<pad>', '<unk>', '<sos>', '<eos>']",
        ("    return SPECIALS + kept\n", '    return ["<pad>", "<unk>", "<sos>", "<eos>"] + kept\n'))
variant("ch06", "y06a", "ch06_pad_batch", "pad_batch with itertools.zip_longest(*sequences, fillvalue=pad_index) (time first), transposed",
        code=("def pad_batch(sequences, pad_index=PAD_INDEX):\n"
              "    import itertools\n"
              "    columns = list(itertools.zip_longest(*sequences, fillvalue=pad_index))   # T tuples of B ids\n"
              "    padded = torch.tensor(columns, dtype=torch.long).T.contiguous()          # (B, T)\n"
              "    return padded, torch.tensor([len(s) for s in sequences], dtype=torch.long)\n"))
variant("ch06", "y06b", "ch06_teacher_forced_loss", "teacher_forced_loss sums each step's loss in the loop (reduction='sum') and divides by the number of real targets",
        code=("def teacher_forced_loss(encoder, decoder, src, src_lengths, tgt, pad_index=PAD_INDEX):\n"
              "    _, d = encoder(src, src_lengths)\n"
              "    total, logits = 0.0, []\n"
              "    for t in range(1, tgt.shape[1]):\n"
              "        step_logits, d = decoder.step(tgt[:, t - 1], d)\n"
              "        logits.append(step_logits)\n"
              "        total = total + F.cross_entropy(step_logits, tgt[:, t], ignore_index=pad_index, reduction='sum')\n"
              "    n_real = (tgt[:, 1:] != pad_index).sum()\n"
              "    return total / n_real, torch.stack(logits, dim=1)\n"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "n07a", "ch07_lstm_cell", "LSTMCell squashes the four chunks in place, f.sigmoid_() ... g.tanh_() (to save memory: views of one tensor)",
        ("        f, i, o = torch.sigmoid(f), torch.sigmoid(i), torch.sigmoid(o)\n"
         "        g = torch.tanh(g)                                      # (B, H)\n",
         "        f.sigmoid_(); i.sigmoid_(); o.sigmoid_()\n"
         "        g.tanh_()                                              # (B, H)\n"))
mistake("ch07", "n07b", "ch07_encoder", "EncoderRNN's right-to-left loop reads emb[:, Tx - t] (the position counted from the right, 1-based, inside a loop that already runs backwards)",
        ("            new = self.lstm_cell_right(emb[:, t], state)\n", "            new = self.lstm_cell_right(emb[:, Tx - t], state)\n"))
mistake("ch07", "n07c", "ch07_attention", "Attention: hidden.unsqueeze(1) without the expand, then torch.cat with the encoder outputs (cat expected to broadcast)",
        ("d = hidden[:, None, :].expand(B, Tx, hidden.shape[-1])", "d = hidden.unsqueeze(1)"))
mistake("ch07", "n07d", "ch07_decoder", "AttnDecoderRNN: the context from torch.bmm without [:, 0] (B, 1, De), joined with the (B, E) embedding",
        ("weighted_encoder = torch.bmm(weights[:, None, :], encoder_outputs)[:, 0]",
         "weighted_encoder = torch.bmm(weights[:, None, :], encoder_outputs)"))
mistake("ch07", "n07e", "ch07_greedy", "greedy_translate joins the steps' weights with torch.cat(weights, dim=1) where stack is meant: (B, steps * Tx)",
        ("return out, torch.stack(weights, dim=1)", "return out, torch.cat(weights, dim=1)"))
variant("ch07", "y07a", "ch07_attention", "Attention masks by adding log(mask) to the scores (0 at real tokens, -inf at padding)",
        ('            scores = scores.masked_fill(~mask, float("-inf"))\n', "            scores = scores + torch.log(mask.float())\n"))
variant("ch07", "y07b", "ch07_encoder", "EncoderRNN reads the final states from the kept states, h_left = left[-1] and h_right = right[0] (after right.reverse())",
        ("        h_left = state[0]                                      # (B, H)\n", ""),
        ("        h_right = state[0]                                     # (B, H)\n", ""),
        ("        right.reverse()\n", "        right.reverse()\n        h_left, h_right = left[-1], right[0]\n"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "n08a", "ch08_attend", "attend masks by boolean-index assignment, energies[~mask] = -inf, with the (B, Tx) mask on the (B, Ty, Tx) energies",
        ('    energies = energies.masked_fill(~mask[:, None, :], float("-inf"))', '    energies[~mask] = float("-inf")'))
mistake("ch08", "n08b", "ch08_scaled_dot", "scaled_dot_attention divides the energies by their own standard deviation, energies.std() ('divides by the standard deviation' read literally)",
        ("    energies = dec @ enc.transpose(1, 2) / math.sqrt(D)      # (B, Ty, Tx)\n",
         "    energies = dec @ enc.transpose(1, 2)\n    energies = energies / energies.std()      # (B, Ty, Tx)\n"))
mistake("ch08", "n08c", "ch08_bilinear", "bilinear_attention appends W to part 2's product, dec @ enc^T @ W, instead of placing it between the states",
        ("energies = (dec @ W) @ enc.transpose(1, 2)", "energies = dec @ enc.transpose(1, 2) @ W"))
mistake("ch08", "n08d", "ch08_reduced_rank", "reduced_rank_attention caches the keys in a module-level dict on its first call ('compute the keys once' read as once for all calls)",
        ("def reduced_rank_attention(", "_KEYS = {}\n\n\ndef reduced_rank_attention("),
        ("keys = enc @ V.T ", "keys = _KEYS.setdefault('keys', enc @ V.T) "))
mistake("ch08", "n08e", "ch08_macs", "reduced_rank_macs swaps the two lengths, keys = Ty * R * Dh and queries = Tx * R * Dd (which side is the source?)",
        ("keys = Tx * R * Dh ", "keys = Ty * R * Dh "), ("queries = Ty * R * Dd ", "queries = Tx * R * Dd "))
variant("ch08", "y08a", "ch08_bilinear", "bilinear_attention with F.linear(dec, W.T) for dec @ W (F.linear multiplies by its weight transposed)",
        ("energies = (dec @ W) @ enc.transpose(1, 2)", "energies = F.linear(dec, W.T) @ enc.transpose(1, 2)"))
variant("ch08", "y08b", "ch08_scaled_dot", "scaled_dot_attention scales the queries and the keys each by D ** -0.25 (the values unscaled)",
        ("energies = dec @ enc.transpose(1, 2) / math.sqrt(D) ", "energies = (dec * D ** -0.25) @ (enc * D ** -0.25).transpose(1, 2) "))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "n09a", "ch09_encode", "encode writes W_h [a; b] as W_h a + W_h b with the same W_h, model.W_h(h_n[1]) + model.W_h(h_n[0])",
        ("d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1))", "d0 = model.W_h(h_n[1]) + model.W_h(h_n[0])"))
mistake("ch09", "n09b", "ch09_decode_step", "decode_step unpacks the LSTM cell's result with [0] (nn.LSTM's (output, state) habit): d, c = model.decoder(...)[0]",
        ("d, c = model.decoder(torch.cat([y_emb, o_prev], dim=-1), state)", "d, c = model.decoder(torch.cat([y_emb, o_prev], dim=-1), state)[0]"))
mistake("ch09", "n09c", "ch09_teacher_forcing", "decode_teacher_forcing passes the state and the combined output in each other's place, decode_step(model, y, state, o, ...)",
        ("state, o, _ = decode_step(model, tgt_in[:, t], o, state, h, h_proj, mask)", "state, o, _ = decode_step(model, tgt_in[:, t], state, o, h, h_proj, mask)"))
mistake("ch09", "n09d", "ch09_masked_loss", "masked_loss shifts again, logits[:, :-1] against tgt_out[:, 1:] (exercise 6's shift; the caller already shifted)",
        ("    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)\n",
         "    logits, tgt_out = logits[:, :-1], tgt_out[:, 1:]\n"
         "    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)\n"))
mistake("ch09", "n09e", "ch09_beam_search", "beam_search adds the live hypotheses left at max_len with their raw sums (the normalisation forgotten for them)",
        ("finished += [(tokens, score / len(tokens) ** alpha) for tokens, score, _ in live]",
         "finished += [(tokens, score) for tokens, score, _ in live]"))
variant("ch09", "y09a", "ch09_masked_loss", "masked_loss from a one-hot target: -(log_softmax * one_hot(tgt_out, V)).sum(-1), averaged over the real tokens",
        code=("def masked_loss(logits, tgt_out):\n"
              "    nll = -(F.log_softmax(logits, dim=-1) * F.one_hot(tgt_out, logits.shape[-1])).sum(-1)   # (B, Ty)\n"
              "    real = tgt_out != PAD\n"
              "    return nll[real].sum() / real.sum()\n"))
variant("ch09", "y09b", "ch09_teacher_forcing", "decode_teacher_forcing: the scores by einsum('bth,vh->btv') with W_vocab's weight",
        ("return model.W_vocab(torch.stack(outputs, dim=1))", "return torch.einsum('bth,vh->btv', torch.stack(outputs, dim=1), model.W_vocab.weight)"))

CASES = M + OK

# The first failing visible test's message as a student reads it (trials 22f-22l's rule). Filled after the runs.
VERDICTS = {
    "ch01-n01a": ('Pa', "at `return self.head(h_n.flatten())`: 'self.head is an nn.Linear built for 4 input features, but the tensor you give it has 8 on its last axis: give it the tensor it was built for (the parts the equation asks for), or ... build it with in_features=8': the right line and tensor; that flatten() merged the batch into the features (8 = B * H) is not said, and the second option is a wrong fix (lenient reading: P)"),
    "ch01-n01b": ('P', "'expected shape (2, 5, 6), got (1, 2, 6) -- ... one edit (in ManyToManySync.forward, the returned value): another variable in place of the right one': `outputs` holds nn.RNN's second value, so the unpacking line"),
    "ch01-n01c": ('P', "at `inputs[:, 0] = x`: PyTorch's 'a view of a leaf Variable that requires grad is being used in an in-place operation', then 'an in-place change ... of an input that requires grad: compute a new tensor instead': the zeros the student made with requires_grad=True are that leaf, and the fix works (dropping requires_grad=True is not said)"),
    "ch01-n01d": ('Pa', "PyTorch's own \"'tuple' object has no attribute 'dim'\" at the decoder line, nothing added (nn.RNN takes one state tensor, not an (h, c) pair: not said); self-sufficient reading: P"),
    "ch01-n01e": ('P', "'the FIRST loss, before any update, already differs: the first batch is not the expected one (draw it with torch.randint(0, len(x), (batch_size,), generator=g) ...)': the call to rewrite, written out"),
    "ch02-n02a": ('M', "at the rnn_cell line: 'torch.cat joins along dim=1, so every other axis must be equal: h_prev (2, 4), x_t (2, 3); they differ only on axis -1: dim=-1 would join them there ...': it explains the first cat, [h_prev, x_t] along dim 1, which is right; the failing cat is the weights' [W_hh, W_hx] along dim 0 (lenient reading: Pa, the right line, and 'dim=-1' is the fix for the other cat)"),
    "ch02-n02b": ('P', "'rnn_cell received x_t (2, 4), h_prev (2, 3), W_hx (4, 3), W_hh (4, 4) ...: if rnn_cell passed its own test, check what rnn_layer passes to it': x_t has the state's size and h_prev the input's, so the call's two arguments; the tail then offers operand orders inside rnn_cell (right code; strict reading: Pa)"),
    "ch02-n02c": ('P', "at the grad line, 'index 3 is out of bounds for dimension 0 with size 2 -- one edit ...: two items in the wrong order; or an axis left out of an index (x[t] where x[:, t] is needed: the batch axis indexed)': the second option is the student's, after a wrong first guess (strict reading: Pa)"),
    "ch02-n02d": ('P', "'your values are what you get if you leave the gradients as they were: nothing was clipped (... scale p.grad itself, e.g. p.grad.mul_(scale) ...)': the gradients untouched and the fix; the mechanisms listed (inverted test, g = g * scale, generator read twice) are not the student's clone() (strict reading: Pa)"),
    "ch02-n02e": ('Pa', "'every variable agrees ... but `grad` differs at the end: it goes wrong where it is made again (a step of a loop?): look at your lines grad = torch.ones_like(...) or grad = grad + (grad * ...) @ W_hh': the right line among two, not what is wrong (the running gradient added back)"),
    "ch03-n03a": ('P', "at the forget gate's line: 'hx @ W[\\'f\\'].T is (2, 4) and b is a dict: + does not take these two': b['f']"),
    "ch03-n03b": ('P', "'lstm_cell must return the pair (h, c)'"),
    "ch03-n03c": ('M', "at `h, c = state[0]`: Python's 'not enough values to unpack (expected 2, got 1)', then 'unpacking x.shape means x has another number of axes ...; unpacking a call means the function returns another number of values ...': neither is the student's (a (1, B, H) tensor unpacked along its first axis; state is the pair (h_0, c_0)); lenient reading: Pa (the line and Python's own error)"),
    "ch03-n03d": ('P', "at `h, c = cell((h, c), x[:, t])`: \"'tuple' object has no attribute 'dim' -- one edit ...: two arguments of a call in each other's place (f(b, a) for f(a, b))\""),
    "ch03-n03e": ('Pa', "'c (the new cell state): contains NaN; NaN comes from 0/0, from the log of a negative number, from a softmax over entries that are all -inf ...': the right output and a list of NaN sources, one of which (a log) is hidden inside torch.logit; that logit is the sigmoid's inverse is not said, and the mask/softmax causes do not apply to this cell"),
    "ch04-n04a": ('M', "at `W_rx, W_zx, W_nx = weight_ih`: Python's 'too many values to unpack (expected 3)', then 'unpacking x.shape means ...; unpacking a call means ...': neither is the student's (a (3H, D) tensor unpacked along its rows: split(H) is meant); lenient reading: Pa"),
    "ch04-n04b": ('Pa', "PyTorch's own 'vector + matrix @ vector expected, got 1, 2, 2' at the mv line, nothing added (x is a batch: x @ weight_ih.T is meant); self-sufficient reading: P"),
    "ch04-n04c": ('P', "'your values are what you get with `h_n * torch.tanh(i_n + r)` where `torch.tanh(i_n + r * h_n)` is needed (... the line that computes `n`)'"),
    "ch04-n04d": ('Pa', "'`directions` is the first variable whose value differs from the reference's ...: look at your line \"directions = 1\"': one of the two edited lines, not what is wrong (a bidirectional layer counted as two layers: num_layers doubled, directions kept at 1); restoring directions alone would leave num_layers doubled (lenient reading: P)"),
    "ch04-n04e": ('Pa', "'`total` differs at the end: it goes wrong where it is made again: look at your lines total = 0 or total += directions * per_direction or total -= blocks * 2 * hidden_size': the right line among three, not what is wrong (one set of biases subtracted for all layers and directions)"),
    "ch05-n05a": ('Pa', "PyTorch's own 'index_select(): Index is supposed to be a vector' at the line, nothing added (gather takes the (B, T, ...) index: not said); self-sufficient reading: P"),
    "ch05-n05b": ('Pa', "'logits: expected shape (3, 2), got (3, 6, 2); an extra axis 1 of size 6: every step kept where one is asked (index it), or a reduction over it missing?': the right output and symptom (the time axis survives masked_mean), not that the lengths passed to masked_mean are (B, 1)"),
    "ch05-n05c": ('M', "'your values are what you get with `lstm_direction(self.fwd, reverse_padded(x, lengths), lengths)` where `lstm_direction(self.bwd, ...)` is needed (in BiLSTMFromCells.forward, the line that computes (out_b, (h_b, c_b)))': that line is right (it calls self.bwd); the cause is in __init__, where self.bwd IS self.fwd; a student who reads it twice may see it (lenient reading: P)"),
    "ch05-n05d": ('P', "first test that fails (ch05_test_residual_dropout; the test before it passes with PyTorch's own warning 'dropout option adds dropout after all but last recurrent layer ... num_layers=1' printed): 'your values are what you get with `h` where `self.dropout(h)` is needed (... the line that computes `inp`)'"),
    "ch05-n05e": ('P', "'mask has shape (2, 3) here, but (2, 4) in the reference ...; it goes wrong at your line mask = torch.arange(T, ...) < lengths.unsqueeze(1) -- fix it there': arange(T) is one step short, so T, the line above"),
    "ch06-n06a": ('Pa', "PyTorch's own 'GRUCell: Expected input to be 1D or 2D, got 3D instead' at the step's line, nothing added (the unsqueeze(1) makes it 3-D: not said); self-sufficient reading: P"),
    "ch06-n06b": ('M', "'logits has shape (2, 40) here, but (2, 4, 10) in the reference ...; it is made at your line logits = torch.cat(logits, dim=1) from the list logits: what fills that list goes wrong (how many items, of which shape: the loop that appends to it?) -- fix it there': the line is right but the named cause is not: the list's items are right, cat joins them where stack is meant (lenient reading: P, the shapes and the cat line are enough)"),
    "ch06-n06c": ('Pa', "'got [[6, 9, 8], ...], expected [[6, 7, 8], ...]; ... `y` differs at the end: ... look at your lines y = torch.full(...) or y = torch.multinomial(...)': the right line among two, not that greedy decoding takes the arg-max (lenient reading: P)"),
    "ch06-n06d": ('M', "'numericalize(list(\\'banjo\\'), stoi) (unknown tokens map to UNK_INDEX = 3): got [6, 4, 5], expected [6, 4, 5, 3, 3]; ... your list stops before the end: the loop was left too early (a break ..., a condition ..., a range ...), or a slice ends too early': the causes named are not the student's (the unknown tokens are filtered out by the comprehension's `if`); the test's title and the expected 3s are the right lead (lenient reading: P)"),
    "ch06-n06e": ('P', "'the special tokens must come first, in the order [\\'<pad>\\', \\'<sos>\\', \\'<eos>\\', \\'<unk>\\']; got [\\'<pad>\\', \\'<unk>\\', \\'<sos>\\', \\'<eos>\\']'"),
    "ch07-n07a": ('M', "in the encoder's test (the cell's own test passes): PyTorch's 'Output 0 of Split is a view and is being modified inplace ... You should replace the inplace operation by an out-of-place one' at `f.sigmoid_()`, then the course's 'LSTMCell.forward received x (2, 3), state (tuple): if LSTMCell.forward passed its own test, check what forward passes to it': the added lead blames the encoder's call (right code); PyTorch's own sentence alone would say what to do (lenient reading: P)"),
    "ch07-n07b": ('Pa', "PyTorch's own 'index 6 is out of bounds for dimension 1 with size 6' at the right-to-left line, nothing added (Tx - t at t = Tx... the loop already runs backwards: not said); self-sufficient reading: P"),
    "ch07-n07c": ('P', "'d has shape (2, 1, 3) here, but (2, 6, 3) in the reference ...; it goes wrong at your line d = hidden.unsqueeze(1) -- fix it there'"),
    "ch07-n07d": ('P', "'weighted_encoder has shape (2, 1, 6) here, but (2, 6) ...; it goes wrong at your line weighted_encoder = torch.bmm(...) -- fix it there'"),
    "ch07-n07e": ('P', "'expected shape (2, 3, 4), got (2, 12); one axis fewer ... torch.cat joins tensors along an axis they already have, torch.stack makes a new one (cat where stack was needed?)': the cause; the 'Likely cause' after it (another function in place of the right one: an activation, a reduction, softmax) has the right form with wrong examples (strict reading: Pa)"),
    "ch08-n08a": ('Pa', "PyTorch's own 'The shape of the mask [2, 4] at index 1 does not match the shape of the indexed tensor [2, 3, 4] at index 1' at the line, nothing added (masked_fill with mask[:, None, :] is meant; the assignment also writes into the caller's energies: not said)"),
    "ch08-n08b": ('P', "'your weights are a softmax of the expected energies times 1.919 (a scale missing, doubled or of the wrong size?)': the scale, the one thing the function adds to part 2"),
    "ch08-n08c": ('Pa', "at the energies line: 'dec (2, 3, 6) @ enc.transpose(1, 2) (2, 5, 4): a matrix product sums the LAST axis ... (6) against ... (5) ...; enc in place of dec would give (2, 4, 4), energies in place of dec would give (2, 4, 4): which one is your equation?': the right line and the first product, whose sizes show that W must come between; the substitutions offered are not the student's (strict reading: M; lenient: P)"),
    "ch08-n08d": ('P', "'keys has shape (2, 4, 1) here, but (2, 4, 2) in the reference ...; it goes wrong at your line keys = _KEYS.setdefault(\\'keys\\', enc @ V.T) -- fix it there': the cached keys of an earlier call"),
    "ch08-n08e": ('Pa', "'once (B=2, Tx=5, Ty=3, ...): got 952, expected 1148. Likely cause: ... (the line that computes `dots`): a term or a factor left out; or ... two variables in each other\\'s place; or ... another variable in place of the right one': the second guess is the student's (Tx and Ty swapped) but not where; the first names a right line (lenient reading: P)"),
    "ch09-n09a": ('P', "'model.W_h is an nn.Linear built for 8 input features, but the tensor you give it has 4 ...: give it the tensor it was built for (the parts the equation asks for)': the concatenation [h_1; h_Tx]; the second option, 'build it with in_features=4', does not apply (the model is given; strict reading: Pa)"),
    "ch09-n09b": ('P', "'d has shape (4,) here, but (2, 4) ...; it goes wrong at your line d, c = model.decoder(...)[0] -- fix it there'"),
    "ch09-n09c": ('Pa', "Python's own \"can't multiply sequence by non-int of type 'float'\" at the student's decode_step call, nothing added (the state and the combined output in each other's place: not said)"),
    "ch09-n09d": ('M', "'masked loss: got 1.90874, expected 1.73852. Likely cause: ... every variable that can be compared agrees with the reference\\'s, but the result differs: look at the line that returns it': the return line is right; the student's extra line that shifts logits and tgt_out again is the cause (lenient reading: Pa, the right function)"),
    "ch09-n09e": ('P', "'your values are what you get with one edit (in beam_search, the line that computes `finished`): a term or a factor left out; or a length counted ...': the leftovers' `finished +=` line and its missing normalisation (two lines compute finished; strict reading: Pa)"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.trial_main(sys.modules[__name__], "/tmp/student_trial_22m", argv)


if __name__ == "__main__":
    main()
