"""Student trial 22x: an acceptance trial of issue 22, new mistakes and correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed before solutions/ and the catalogues
were read: benchmarks/results/student_trial_22x_plan.md); every planned mistake and variant that repeated, or came
close to, an old mutant, an alternative or an earlier trial's case was replaced by a new one written the same way (the
plan's second table lists what each replaced case repeated). A mistake is one or more edits of one cell's reference
code, ``(old, new)`` pairs whose ``old`` occurs once; a variant rewrites the cell (or edits it) and must keep full marks.
Only the cases and the verdicts live here: building, grading (the class grader, one run per assignment), the Jupyter
view and the report are benchmarks/student_trial.py's and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22x unless --root says otherwise):

    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22x.py --student-view [ch01 ...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22x.py --grade [ch01 ...]
    /work/main/.venv/bin/python benchmarks/student_trial_22x.py --table     # benchmarks/results/student_trial_22x.md's tables
    /work/main/.venv/bin/python benchmarks/student_trial_22x.py --save benchmarks/results/student_trial_22x.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()


# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "x01a", "ch01_many_to_one", "ManyToOne calls super(ManyToOne).__init__() (Python 2's form with self left out): the Module is never initialised",
        ("super().__init__()", "super(ManyToOne).__init__()"))
mistake("ch01", "x01b", "ch01_many_to_many_sync", "ManyToManySync gives the head the RNN's whole return value, self.head(self.rnn(x)) (the (outputs, h_n) pair)",
        ("        outputs, _ = self.rnn(x)      # (B, T, H)\n        return self.head(outputs)     # (B, T, C)",
         "        return self.head(self.rnn(x))     # (B, T, C)"))
mistake("ch01", "x01c", "ch01_one_to_many", "OneToMany builds its inputs time first, (steps, B, D), and writes x at inputs[0] (chapter 1's time-first habit; the RNN is batch_first)",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])", "inputs = x.new_zeros(steps, x.shape[0], x.shape[1])"),
        ("inputs[:, 0] = x", "inputs[0] = x"))
mistake("ch01", "x01d", "ch01_train_step", "train_step passes the loss to optimizer.step(loss) ('step on the loss')",
        ("optimizer.step()", "optimizer.step(loss)"))
mistake("ch01", "x01e", "ch01_fit", "fit gives randint the batch size as an int, torch.randint(0, len(x), batch_size, generator=g) (NumPy's size=int habit)",
        ("idx = torch.randint(0, len(x), (batch_size,), generator=g)   #", "idx = torch.randint(0, len(x), batch_size, generator=g)   #"))
variant("ch01", "z01a", "ch01_many_to_one", "ManyToOne reads the last step as outputs[:, x.shape[1] - 1]",
        ("return self.head(outputs[:, -1])", "return self.head(outputs[:, x.shape[1] - 1])"))
variant("ch01", "z01b", "ch01_train_step", "train_step clears the gradients with optimizer.zero_grad(set_to_none=True)",
        ("optimizer.zero_grad()", "optimizer.zero_grad(set_to_none=True)"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "x02a", "ch02_rnn_cell", "rnn_cell squashes with np.tanh (the NumPy habit)",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)", "import numpy as np\n    return np.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)"))
mistake("ch02", "x02b", "ch02_rnn_layer", "rnn_layer returns outputs[-1] as h_last (the last state of a time-first layout; with batch_first it is the last example)",
        ("    return outputs, h\n", "    return outputs, outputs[-1]\n"))
mistake("ch02", "x02c", "ch02_bptt_gradient_norms", "bptt takes the derivative of tanh at states[:, t - 1] ('the step back uses h_{t-1}'), one step early",
        ("grad = (grad * (1 - states[:, t] ** 2)) @ W_hh", "grad = (grad * (1 - states[:, t - 1] ** 2)) @ W_hh"))
mistake("ch02", "x02d", "ch02_bptt_gradient_norms", "bptt records the norm of grad * (1 - h_t^2), the gradient before W_hh^T (of the pre-activation), not of dL/dh_{t-1}",
        ("        grad = (grad * (1 - states[:, t] ** 2)) @ W_hh     # (B, H): dL/dh_t\n        norms.append(torch.linalg.vector_norm(grad))",
         "        delta = grad * (1 - states[:, t] ** 2)             # through the tanh\n        norms.append(torch.linalg.vector_norm(delta))\n        grad = delta @ W_hh"))
mistake("ch02", "x02e", "ch02_clip_grad_norm", "clip_grad_norm joins the gradients into one long vector (chapter 2's picture), torch.cat([g.view(-1) ...]), and scales that vector",
        ("    total_norm = torch.sqrt(sum((g.detach() ** 2).sum() for g in grads))\n    if total_norm > max_norm:\n        scale = max_norm / (total_norm + 1e-6)\n        for g in grads:\n            g.mul_(scale)\n",
         "    flat = torch.cat([g.view(-1) for g in grads])      # one long vector, as in chapter 2\n    total_norm = flat.norm()\n    if total_norm > max_norm:\n        flat.mul_(max_norm / (total_norm + 1e-6))\n"))
variant("ch02", "z02a", "ch02_rnn_layer", "rnn_layer without transposes: step t read as x[:, t] or x[t] by the layout, the states stacked on the time axis of the layout",
        code=("def rnn_layer(x, W_hx, W_hh, b_h, h0=None, batch_first=True):\n"
              "    t_axis = 1 if batch_first else 0\n"
              "    B, T = (x.shape[0], x.shape[1]) if batch_first else (x.shape[1], x.shape[0])\n"
              "    h = x.new_zeros(B, W_hh.shape[0]) if h0 is None else h0\n"
              "    outputs = []\n"
              "    for t in range(T):\n"
              "        x_t = x[:, t] if batch_first else x[t]\n"
              "        h = rnn_cell(x_t, h, W_hx, W_hh, b_h)\n"
              "        outputs.append(h)\n"
              "    return torch.stack(outputs, dim=t_axis), h\n"))
variant("ch02", "z02b", "ch02_clip_grad_norm", "clip_grad_norm always multiplies by min(1.0, max_norm / (total_norm + 1e-6)) (1 when nothing is to be clipped)",
        ("    if total_norm > max_norm:\n        scale = max_norm / (total_norm + 1e-6)\n        for g in grads:\n            g.mul_(scale)\n",
         "    scale = min(1.0, float(max_norm / (total_norm + 1e-6)))\n    for g in grads:\n        g.mul_(scale)\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "x03a", "ch03_lstm_cell", "lstm_cell joins [h; x] with torch.cat([h_prev, x]) (no dim: the rows joined)",
        ("hx = torch.cat([h_prev, x], dim=1)", "hx = torch.cat([h_prev, x])"))
mistake("ch03", "x03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias squashes each product on its own, sigma(W x) + sigma(U h) ('a gate per input')",
        ('i = torch.sigmoid(x @ Wx["i"].T + h_prev @ Wh["i"].T)', 'i = torch.sigmoid(x @ Wx["i"].T) + torch.sigmoid(h_prev @ Wh["i"].T)'),
        ('f = torch.sigmoid(x @ Wx["f"].T + h_prev @ Wh["f"].T)', 'f = torch.sigmoid(x @ Wx["f"].T) + torch.sigmoid(h_prev @ Wh["f"].T)'),
        ('g = torch.tanh(x @ Wx["g"].T + h_prev @ Wh["g"].T)', 'g = torch.tanh(x @ Wx["g"].T) + torch.tanh(h_prev @ Wh["g"].T)'),
        ('o = torch.sigmoid(x @ Wx["o"].T + h_prev @ Wh["o"].T)', 'o = torch.sigmoid(x @ Wx["o"].T) + torch.sigmoid(h_prev @ Wh["o"].T)'))
mistake("ch03", "x03c", "ch03_lstm_cell", "lstm_cell ends with `return (h, c),` (a trailing comma: a one-item tuple holding the pair)",
        ("    return h, c\n", "    return (h, c),\n"))
mistake("ch03", "x03d", "ch03_split_gates", "split_gates returns an empty dict for a bias-free cell ('no biases': b = {}), not None",
        ("        return Wx, Wh, None\n", "        return Wx, Wh, {}\n"))
mistake("ch03", "x03e", "ch03_lstm_layer", "lstm_layer takes a given state as state[0][0], state[0][1] (the first two rows of h_0 read as h and c)",
        ("h, c = state[0][0], state[1][0]", "h, c = state[0][0], state[0][1]"))
variant("ch03", "z03a", "ch03_lstm_layer", "lstm_layer keeps the state as one tuple with a chained assignment, h, c = state_t = cell(x[:, t], state_t)",
        ("    outputs = []\n    for t in range(T):\n        h, c = cell(x[:, t], (h, c))",
         "    outputs = []\n    state_t = (h, c)\n    for t in range(T):\n        h, c = state_t = cell(x[:, t], state_t)"))
variant("ch03", "z03b", "ch03_split_gates", "split_gates slices each block by its position in GATES, rows GATES.index(k) * H to (GATES.index(k) + 1) * H",
        ("    Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))", "    H = cell.hidden_size\n    Wx = {k: cell.weight_ih[GATES.index(k) * H:(GATES.index(k) + 1) * H] for k in GATES}"),
        ("    Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))", "    Wh = {k: cell.weight_hh[GATES.index(k) * H:(GATES.index(k) + 1) * H] for k in GATES}"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "x04a", "ch04_gru_cell_textbook", "gru_cell_textbook splits the two biases and 'adds' the pieces, bias_ih.split(H) + bias_hh.split(H) (tuples: + joins them, six pieces)",
        ("b_r, b_z, b_n = (bias_ih + bias_hh).split(H)", "b_r, b_z, b_n = bias_ih.split(H) + bias_hh.split(H)"))
mistake("ch04", "x04b", "ch04_gru_cell_textbook", "gru_cell_textbook cuts the input weights from weight_hh (copy slip of the next line)",
        ("W_rx, W_zx, W_nx = weight_ih.split(H)", "W_rx, W_zx, W_nx = weight_hh.split(H)"))
mistake("ch04", "x04c", "ch04_gru_cell_pytorch", "gru_cell_pytorch returns gru_cell_textbook(...) ('same arguments and layout': the part-1 cell reused)",
        ("\n    gi = x @ weight_ih.T + bias_ih          # (B, 3H): the input's contributions, blocks r, z, n\n    gh = h @ weight_hh.T + bias_hh          # (B, 3H): ONE product for all three hidden blocks\n    i_r, i_z, i_n = gi.chunk(3, dim=1)      # each (B, H)\n    h_r, h_z, h_n = gh.chunk(3, dim=1)      # each (B, H)\n    r = torch.sigmoid(i_r + h_r)            # (B, H)\n    z = torch.sigmoid(i_z + h_z)            # (B, H)\n    n = torch.tanh(i_n + r * h_n)           # (B, H): reset AFTER the product, b_hn included\n    return (1 - z) * n + z * h              # (B, H)\n",
         '\n    return gru_cell_textbook(x, h, weight_ih, weight_hh, bias_ih, bias_hh)   # same arguments and layout\n'))
mistake("ch04", "x04d", "ch04_count_parameters", "count_parameters builds the module and sums its numel, the docstring's formula taken literally",
        ('\n    blocks = {"rnn": 1, "lstm": 4, "gru": 3}[kind]\n    directions = 2 if bidirectional else 1\n    total = 0\n    for layer in range(num_layers):\n        layer_input = input_size if layer == 0 else hidden_size * directions\n        per_direction = blocks * (hidden_size * layer_input + hidden_size * hidden_size)\n        if bias:\n            per_direction += blocks * 2 * hidden_size   # bias_ih and bias_hh\n        total += directions * per_direction\n    return total\n',
         '\n    module = getattr(nn, kind.upper())(input_size, hidden_size, num_layers=num_layers, bias=bias,\n                                      bidirectional=bidirectional)\n    return sum(p.numel() for p in module.parameters())\n'))
mistake("ch04", "x04e", "ch04_count_parameters", "count_parameters writes the biases into one line with a conditional, A + B if bias else 0 (the conditional takes the whole sum)",
        ("        per_direction = blocks * (hidden_size * layer_input + hidden_size * hidden_size)\n        if bias:\n            per_direction += blocks * 2 * hidden_size   # bias_ih and bias_hh\n",
         "        per_direction = blocks * (hidden_size * layer_input + hidden_size * hidden_size) + blocks * 2 * hidden_size if bias else 0\n"))
variant("ch04", "z04a", "ch04_count_parameters", "count_parameters looks the blocks up by kind.upper() in a dict keyed 'RNN', 'LSTM', 'GRU'",
        ('blocks = {"rnn": 1, "lstm": 4, "gru": 3}[kind]', 'blocks = {"RNN": 1, "LSTM": 4, "GRU": 3}[kind.upper()]'))
variant("ch04", "z04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch writes the interpolation expanded, n - z * n + z * h",
        ("return (1 - z) * n + z * h", "return n - z * n + z * h"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "x05a", "ch05_reverse_padded", "reverse_padded as a loop reading x[b, -1 - arange(L)] (Python's negative index: the last L steps of T, padding included)",
        ('\n    B, T = x.shape[:2]\n    t = torch.arange(T, device=x.device)                       # (T,)\n    L = lengths.to(x.device).unsqueeze(1)                       # (B, 1)\n    idx = torch.where(t < L, L - 1 - t, t)                      # (B, T): where each output step reads from\n    idx = idx.reshape(B, T, *([1] * (x.dim() - 2))).expand_as(x)  # (B, T, ...)\n    return x.gather(1, idx)\n',
         '\n    y = x.clone()\n    for b in range(x.shape[0]):\n        L = int(lengths[b])\n        y[b, :L] = x[b, -1 - torch.arange(L)]      # the real steps, last first\n    return y\n'))
mistake("ch05", "x05b", "ch05_bilstm_from_cells", "BiLSTMFromCells tests the default with `if not lengths:` (truthiness for 'is None')",
        ("if lengths is None:", "if not lengths:"))
mistake("ch05", "x05c", "ch05_bilstm_from_cells", "BiLSTMFromCells shares one cell for both directions, self.bwd = self.fwd ('the same LSTM reads both ways')",
        ("self.bwd = nn.LSTMCell(input_size, hidden_size)", "self.bwd = self.fwd"))
mistake("ch05", "x05d", "ch05_final_states", "final_states joins the two halves with torch.cat([...]) without dim (rows joined: (2B, H))",
        ("return torch.cat([forward_last, backward_first], dim=-1)", "return torch.cat([forward_last, backward_first])"))
mistake("ch05", "x05e", "ch05_masked_mean", "masked_mean zeroes the padding in place, outputs.masked_fill_(~mask.unsqueeze(-1), 0), then sums",
        ("total = (outputs * mask.unsqueeze(-1)).sum(dim=1)", "total = outputs.masked_fill_(~mask.unsqueeze(-1), 0).sum(dim=1)"))
variant("ch05", "z05a", "ch05_lstm_direction", "lstm_direction zeroes the padded outputs with torch.where(real, h_new, 0.0) (a scalar other)",
        ("outputs.append(torch.where(real, h_new, torch.zeros_like(h_new)))", "outputs.append(torch.where(real, h_new, 0.0))"))
variant("ch05", "z05b", "ch05_sentence_classifier", "SentenceClassifier keeps the lengths pad_packed_sequence returns, out, lengths = pad_packed_sequence(...) (the same lengths, in the batch's order)",
        ("out, _ = pad_packed_sequence(out, batch_first=True, total_length=tokens.shape[1])", "out, lengths = pad_packed_sequence(out, batch_first=True, total_length=tokens.shape[1])"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "x06a", "ch06_numericalize", "numericalize writes ids = [SOS_INDEX] if add_sos else [] + body (the conditional takes `[] + body`: with add_sos only [SOS])",
        ("    ids = [stoi.get(token, UNK_INDEX) for token in tokens]\n    if add_sos:\n        ids = [SOS_INDEX] + ids\n",
         "    body = [stoi.get(token, UNK_INDEX) for token in tokens]\n    ids = [SOS_INDEX] if add_sos else [] + body\n"))
mistake("ch06", "x06b", "ch06_numericalize", "numericalize appends <eos> with ids += EOS_INDEX (an int, not a list)",
        ("ids = ids + [EOS_INDEX]", "ids += EOS_INDEX"))
mistake("ch06", "x06c", "ch06_pad_batch", "pad_batch takes T = max(sequences, key=len) (the longest sequence itself, not its length)",
        ("    padded = torch.full((len(sequences), int(lengths.max())), pad_index, dtype=torch.long)",
         "    T = max(sequences, key=len)\n    padded = torch.full((len(sequences), T), pad_index, dtype=torch.long)"))
mistake("ch06", "x06d", "ch06_decoder", "Decoder builds its output layer on the embedding size, nn.Linear(emb_size, vocab_size) (copy of the embedding line)",
        ("self.out = nn.Linear(hidden_size, vocab_size)", "self.out = nn.Linear(emb_size, vocab_size)"))
mistake("ch06", "x06e", "ch06_greedy_decode", "greedy_decode sets finished[b] = token == EOS_INDEX at every step (overwritten, not kept)",
        ("                if not finished[b]:\n                    if token == EOS_INDEX:\n                        finished[b] = True\n                    else:\n                        outputs[b].append(token)",
         "                finished[b] = token == EOS_INDEX\n                if not finished[b]:\n                    outputs[b].append(token)"))
variant("ch06", "z06a", "ch06_pad_batch", "pad_batch writes each row with torch.as_tensor(seq)",
        ("padded[b, : len(seq)] = torch.tensor(seq, dtype=torch.long)", "padded[b, : len(seq)] = torch.as_tensor(seq)"))
variant("ch06", "z06b", "ch06_build_vocab", "build_vocab sorts twice: alphabetically, then by count with key=counts.get, reverse=True (a stable sort keeps the ties in order)",
        ("kept.sort(key=lambda token: (-counts[token], token))", "kept.sort()\n    kept.sort(key=counts.get, reverse=True)"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "x07a", "ch07_lstm_cell", "LSTMCell splits the blocks with z.view(-1, H, 4).unbind(-1) (the four blocks read as interleaved)",
        ("f, i, o, g = z.chunk(4, dim=-1)", "f, i, o, g = z.view(-1, self.hidden_size, 4).unbind(-1)"))
mistake("ch07", "x07b", "ch07_encoder", "EncoderRNN sets mask = None when src_lengths is None and indexes it in the loops",
        ("        if src_lengths is None:\n            mask = torch.ones(B, Tx, dtype=torch.bool)\n        else:\n            mask = source_mask(src_lengths, Tx)",
         "        mask = source_mask(src_lengths, Tx) if src_lengths is not None else None"))
mistake("ch07", "x07c", "ch07_attention", "Attention applies the tanh before the linear layer, self.Attn(torch.tanh(pairs))",
        ("energy = torch.tanh(self.Attn(pairs))", "energy = self.Attn(torch.tanh(pairs))"))
mistake("ch07", "x07d", "ch07_decoder", "AttnDecoderRNN returns log_probs, h, c, weights (the state not grouped into a tuple)",
        ("return F.log_softmax(scores, dim=-1), (h, c), weights", "return F.log_softmax(scores, dim=-1), h, c, weights"))
mistake("ch07", "x07e", "ch07_greedy", "greedy_translate drops the <eos> tokens from each row, [t for t in row if t != eos_index] (what follows <eos> kept)",
        ("out.append(row[: row.index(eos_index)] if eos_index in row else row)", "out.append([t for t in row if t != eos_index])"))
variant("ch07", "z07a", "ch07_decoder", "AttnDecoderRNN returns F.softmax(scores, dim=-1).log()",
        ("return F.log_softmax(scores, dim=-1), (h, c), weights", "return F.softmax(scores, dim=-1).log(), (h, c), weights"))
variant("ch07", "z07b", "ch07_attention", "Attention takes the dot products with v by energy.matmul(self.v)",
        ("scores = energy @ self.v", "scores = energy.matmul(self.v)"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "x08a", "ch08_attend", "attend calls F.softmax(energies) without dim (PyTorch's implicit dim for 3-D input is 0, the batch)",
        ("weights = torch.softmax(energies, dim=-1)", "weights = F.softmax(energies)"))
mistake("ch08", "x08b", "ch08_attend", "attend broadcasts the mask as mask[None] (1, B, Tx) where mask[:, None, :] is meant",
        ("masked_fill(~mask[:, None, :], float(\"-inf\"))", "masked_fill(~mask[None], float(\"-inf\"))"))
mistake("ch08", "x08c", "ch08_dot", "dot_attention with einsum 'btd,bsd->bst' (the output's axes in the other order)",
        ("energies = dec @ enc.transpose(1, 2)", "energies = torch.einsum(\"btd,bsd->bst\", dec, enc)"))
mistake("ch08", "x08d", "ch08_macs", "reduced_rank_macs leaves B out of per_step (only once is for the batch)",
        ("per_step = B * (Ty * keys + queries + dots)", "per_step = Ty * keys + queries + dots"))
mistake("ch08", "x08e", "ch08_macs", "reduced_rank_macs counts per_step as once * Ty ('everything again at every step')",
        ("per_step = B * (Ty * keys + queries + dots)", "per_step = once * Ty"))
variant("ch08", "z08a", "ch08_scaled_dot", "scaled_dot_attention divides by torch.sqrt(torch.tensor(D))",
        ("/ math.sqrt(D)", "/ torch.sqrt(torch.tensor(D))"))
variant("ch08", "z08b", "ch08_reduced_rank", "reduced_rank_attention transposes the keys with .mT",
        ("energies = queries @ keys.transpose(1, 2)", "energies = queries @ keys.mT"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "x09a", "ch09_encode", "encode keeps pad_packed_sequence's whole return value, h = pad_packed_sequence(...) (the (padded, lengths) pair)",
        ("h, _ = pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])", "h = pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])"))
mistake("ch09", "x09b", "ch09_decode_step", "decode_step returns the state as (c, d) (TensorFlow's LSTMStateTuple order, c first)",
        ("return (d, c), o, alpha", "return (c, d), o, alpha"))
mistake("ch09", "x09c", "ch09_teacher_forcing", "decode_teacher_forcing starts the combined output as zeros_like(h[:, 0]) ('zeros like an encoder state': 2H wide)",
        ("o = h.new_zeros(src.shape[0], model.hidden_size)", "o = torch.zeros_like(h[:, 0])"))
mistake("ch09", "x09d", "ch09_masked_loss", "masked_loss sums the token losses and divides by the number of sentences (a loss per sentence)",
        ("return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)",
         "return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD, reduction=\"sum\") / logits.shape[0]"))
mistake("ch09", "x09e", "ch09_beam_search", "beam_search calls step_fn with the whole hypothesis, step_fn(tokens if tokens else SOS, state) (the token list, not its last token)",
        ("step_fn(tokens[-1] if tokens else SOS, state)", "step_fn(tokens if tokens else SOS, state)"))
variant("ch09", "z09a", "ch09_decode_step", "decode_step takes the energies as bmm(d (B, 1, H), h_proj^T (B, H, Tx))",
        ("e = torch.bmm(h_proj, d.unsqueeze(2)).squeeze(2)", "e = torch.bmm(d.unsqueeze(1), h_proj.transpose(1, 2)).squeeze(1)"))
variant("ch09", "z09b", "ch09_masked_loss", "masked_loss keeps the real positions with a boolean index, cross_entropy(logits[mask], tgt_out[mask])",
        ("return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)",
         "mask = tgt_out != PAD\n    return F.cross_entropy(logits[mask], tgt_out[mask])"))

CASES = M + OK

# The first failing visible test's message as the student sees it in Jupyter, judged by the rule of trials 22f-22w.
VERDICTS: dict[str, tuple[str, str]] = {
    'ch01-x01a': ('Pa', "at the student's line \"self.rnn = nn.RNN(...)\" (the line after the super call): PyTorch's own 'cannot assign module before Module.__init__() call', nothing added: Module.__init__ not run is said, that super(ManyToOne) without self initialises nothing is not (lenient reading: P, the only __init__ call is the super line; strict: Pa)"),
    'ch01-x01b': ('P', "at the student's line \"return self.head(self.rnn(x))\": 'linear(): argument 'input' ... must be Tensor, not tuple -- self.head takes (input: torch.Tensor); your line gives it input=self.rnn(x) ...': the RNN's return value is a tuple; unpack it (strict reading: Pa, that nn.RNN returns (outputs, h_n) is not said)"),
    'ch01-x01c': ('P', "'OneToMany(x, steps=5): expected shape (2, 5, 6), got (5, 2, 6); the same sizes in another order: axes swapped (batch_first? a transpose or permute missing ...)': the time-first inputs for a batch_first RNN (strict reading: Pa, the line that makes inputs is not named)"),
    'ch01-x01d': ('M', "at the student's line \"optimizer.step(loss)\": PyTorch's \"'Tensor' object is not callable\" -- 'Likely cause: ... two variables in each other's place; or ... (in train_step, the line that computes `loss`): another variable in place of the right one ...; a tensor called like a function: a name that held a layer or a function now holds a tensor ...': guessed causes, none the student's (step's only argument is a closure; the loss is not passed); the loss line is blamed (lenient reading: Pa, the step(loss) line is named)"),
    'ch01-x01e': ('P', "at the student's line: 'torch.randint takes (low=0, high, size, ...); your line gives it ... size=batch_size 16 ...: size is a tuple of sizes, (batch_size,) with its comma'"),
    'ch02-x02a': ('M', "caught by the rnn_layer test (rnn_cell's own test passes), at the student's line \"return np.tanh(...)\" called from rnn_layer: PyTorch's 'Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.' -- '.detach() before .numpy() (or keep the tensor)': the fix offered first (.detach()) cuts the gradient the same test checks; that np.tanh turns the tensor into NumPy and torch.tanh is meant is not said (lenient reading: Pa, the np.tanh line is named and '(or keep the tensor)' hints at it)"),
    'ch02-x02b': ('Pa', "'h_last of rnn_layer(x, ..., batch_first=True): expected shape (2, 4), got (5, 4); dimension 0 has size 5 instead of 2 (the wrong tensor, weight or size used there?)': the returned h_last and its shape named; that outputs[-1] is the last example (batch first), not the last step, is not said; no line (lenient reading: P, (5, 4) = (T, H) shows a row of the batch)"),
    'ch02-x02c': ('P', "'bptt_gradient_norms(states, W_hh): 4 of 5 entries differ ... Likely cause: your values are what you get if you take the tanh derivative at h_{t-1} instead of h_t'"),
    'ch02-x02d': ('M', "'bptt_gradient_norms(states, W_hh): 4 of 5 entries differ ... Likely cause: the entries at index 0 ... are right and every later index is wrong: if dimension 0 is time, what one step passes to the next goes wrong (the state carried over, or the input fed to the next step ...)': guessed causes, none the student's (the carried gradient is right; the norm recorded is that of grad * (1 - h^2), before W_hh^T); no line (lenient reading: N)"),
    'ch02-x02e': ('P', "'a.grad after clipping to 3.5: ... got 3, expected 0.807692 ... Likely cause: ... nothing was clipped (...; or `g = g * scale` makes a new tensor and leaves p.grad unchanged: scale p.grad itself, e.g. p.grad.mul_(scale); ...)': the student scales a new tensor (the cat copy), not p.grad (strict reading: Pa, torch.cat's copy is not named)"),
    'ch03-x03a': ('P', "at the student's line \"hx = torch.cat([h_prev, x])\": 'torch.cat joins along dim 0 (no dim given: the first axis, the batch) ...: dim=-1 would join them there'"),
    'ch03-x03b': ('Pa', "'c (the new cell state): 8 of 8 entries differ ... `i` is the first variable whose value differs ...: look at your line \"i = torch.sigmoid(x @ Wx[\"i\"].T) + torch.sigmoid(h_prev @ Wh[\"i\"].T)\"': the line named, with no note of what differs (one sigmoid around the sum) (lenient reading: P, the line against the formula)"),
    'ch03-x03c': ('Pa', "'lstm_cell must return the pair (h, c), got tuple ((tensor([[ ...': the return named and the nesting visible in '((', not said (the trailing comma) (lenient reading: P; strict: N, the one-item tuple is not named)"),
    'ch03-x03d': ('P', "'b must be None itself for a cell without biases (return ..., None), got {}'"),
    'ch03-x03e': ('P', "at the student's line \"h, c = state[0][0], state[0][1]\": 'index 1 is out of bounds for dimension 0 with size 1 -- Likely cause: ... another number (an index, axis, size or count off?)': state[0][1] reads a row of h_0 that a batch of one does not have; c is state[1][0] (strict reading: Pa, which index is not said)"),
    'ch04-x04a': ('M', "at the student's line \"b_r, b_z, b_n = bias_ih.split(H) + bias_hh.split(H)\": 'too many values to unpack (expected 3) -- bias_ih.split(H) cuts axis 0 of bias_ih (12,) ... into 3 pieces of shape (4,); ...: is the size you split by the one you meant, or the tensor you split (12)?': both named causes blame right code (H and bias_ih are right); that + on the two tuples of pieces joins them into six is not said (lenient reading: Pa, the line is named)"),
    'ch04-x04b': ('P', "at the r line: 'W_rx has shape (4, 4) here, but (4, 3) in the reference ...; it goes wrong at your line \"W_rx, W_zx, W_nx = weight_hh.split(H)\" -- fix it there'"),
    'ch04-x04c': ('P', "'gru_cell_pytorch(x, h, ...): 8 of 8 entries differ ... Likely cause: your values are what you get if you apply the reset gate to h before the product (that is the textbook cell, part 1)'"),
    'ch04-x04d': ('P', "at the student's line: 'count_parameters must not call torch.nn.RNNBase: compute the count from the sizes'"),
    'ch04-x04e': ('M', "'count_parameters('rnn', 5, 7, bias=False): got 0, expected 84 ... Likely cause: ... `total` is right where it is first made ..., but yours never makes it again, where the reference's `total` gets 2 values: ... (a loop's new value of `total` kept under another name, or never assigned back to `total`?)': a named wrong cause (the loop update); that `A + B if bias else 0` makes the whole count 0 without biases is not said (lenient reading: Pa, bias=False -> 0 points to the bias term)"),
    'ch05-x05a': ('M', "'reverse_padded, 2-D: 4 of 15 entries differ ... Likely cause: the padding ... are right; every wrong entry is elsewhere; ... `L` ... gets 3 different values where the reference's gets 1: its second, from your line \"L = int(lengths[b])\", is one the reference's never gets (a line that runs where it should not ...)': the right line (L per row of the loop) is blamed; that x[b, -1 - arange(L)] counts from the end of T, the padding included, is not said (lenient reading: N)"),
    'ch05-x05b': ('P', "at the student's line \"if not lengths:\": 'Boolean value of Tensor with more than one value is ambiguous -- a tensor of several values used as one True or False (`if t:`, `while t:`, `not t` ...)': `is None` follows"),
    'ch05-x05c': ('P', "'outputs (no padding, lengths=None): 40 of 80 entries differ ... Likely cause: self.bwd and self.fwd are one and the same layer ...: build them in two statements, so that each has its own weights'"),
    'ch05-x05d': ('P', "'final_states(outputs, lengths): expected shape (3, 4), got (6, 2); ... 2 parts joined along dimension 0 where dimension 1 is asked (torch.cat(..., dim=1)?) -- ... an option of a call left out (its default used: dim ...)'"),
    'ch05-x05e': ('P', "'masked_mean's argument outputs was changed by your function ...: your line \"total = outputs.masked_fill_(...).sum(dim=1)\" ... writes into outputs (.masked_fill_(), the in-place form of .masked_fill()); compute a new tensor instead'"),
    'ch06-x06a': ('N', "'numericalize(list('nab'), stoi, add_sos=True, add_eos=True) ...: got [1, 2], expected [1, 5, 4, 6, 2]; first difference at [1]: 2 instead of 5; only 2 of the 5 expected items (stopped too early, or some dropped?)': the symptom; that the conditional expression takes `[] + body` (with add_sos only [SOS]) is not said; no line (strict reading: M, 'stopped too early' is a guess; lenient: Pa, the body is visibly missing after <sos>)"),
    'ch06-x06b': ('P', "at the student's line \"ids += EOS_INDEX\": ''int' object is not iterable -- a_list.extend(x) and a_list += x add the ITEMS of x ...: one value is added with a_list.append(x) (or a_list += [x])'"),
    'ch06-x06c': ('Pa', "at the student's torch.full line: PyTorch's 'argument 'size' failed to unpack the object at pos 2 ... got list' -- 'torch.full takes (size, fill_value, ...); your line gives it size=(len(sequences), T) ...': the line and the size named; that T = max(sequences, key=len) is the longest sequence (a list), not its length, is not said (lenient reading: P, 'pos 2 ... got list' is T)"),
    'ch06-x06d': ('P', "'self.out maps 3 features to 9, but the docstring asks for nn.Linear(hidden_size, vocab_size), 4 -> 9 here ...'"),
    'ch06-x06e': ('Pa', "'greedy_decode's tokens ...: got [[6, 7, 8, 4], [9, 4, 4, 4], ...], expected [[6, 7, 8], [9], ...]; ... some go on after them: stop where the docstring says (at the first <eos>, which is not kept) and drop what follows': the symptom named, not why (finished[b] is overwritten at every step instead of kept) (lenient reading: P)"),
    'ch07-x07a': ('P', "'c: 8 of 8 entries differ ... `f` is the first variable whose value differs ...: look at your line \"f, i, o, g = z.view(-1, self.hidden_size, 4).unbind(-1)\" (... yours calls unbind ...; the reference's calls chunk, which yours does not)' (strict reading: Pa, that view(-1, H, 4) interleaves the blocks is not said)"),
    'ch07-x07b': ('Pa', "at the student's line \"keep = mask[:, t, None]\": ''NoneType' object is not subscriptable -- Likely cause: ... (the line that computes `state`): another variable in place of the right one; or ... (the line that computes `mask`): another variable in place of a value ...; an argument that may be None (does the docstring allow ... lengths=None?)': the mask line and lengths=None are among the causes, after a wrong one (strict reading: M, a wrong cause first; lenient: P)"),
    'ch07-x07c': ('P', "'weights (with a mask): ... Likely cause: your values are what you get with `self.Attn(torch.tanh(pairs))` where `torch.tanh(self.Attn(pairs))` is needed'"),
    'ch07-x07d': ('P', "at the test's 'log_probs, (h, c), weights = result': 'too many values to unpack (expected 3) -- ... unpacking a call means the function returns another number of values than its docstring says': four values returned where three (the state a tuple) are asked (strict reading: Pa, no line of the student's)"),
    'ch07-x07e': ('P', "'tokens (each without its <eos> and what follows): got [[5, 6], [7, 9]], expected [[5, 6], [7]]; ... some go on after them: stop where the docstring says (at the first <eos>, which is not kept) and drop what follows': the student drops only the <eos>"),
    'ch08-x08a': ('P', "'weights: the weights sum to 1 along dimension 0 (batch), not along dimension 2 (source positions): the softmax is taken over the wrong axis (use dim=-1)'"),
    'ch08-x08b': ('P', "at the student's line: '... ~mask[None] has shape (1, 2, 4): broadcasting lines shapes up from the RIGHT ...; a new axis in the wrong place: mask[:, None, :] would line its axes up ...'"),
    'ch08-x08c': ('P', "'dot_attention passes attend energies of shape (2, 4, 3) ...: the product is the wrong way round ... it goes wrong at your line \"energies = torch.einsum(\"btd,bsd->bst\", dec, enc)\" -- fix it there'"),
    'ch08-x08d': ('P', "'per_step ...: got 1344, expected 2688 ... look at your line \"per_step = Ty * keys + queries + dots\" (... the reference's reads `B`, which yours does not); ... (the count for one sentence (of the B): multiply by B)'"),
    'ch08-x08e': ('P', "'per_step ...: got 3444, expected 2688 ... look at your line \"per_step = once * Ty\" (... yours multiplies `Ty` by `once` ...; the reference's multiplies `Ty` by `keys` ...); ... parentheses lost or added ...': Ty multiplies the keys only (strict reading: Pa, 'parentheses' is a guess)"),
    'ch09-x09a': ('P', "'h: expected a torch.Tensor, got a tuple of 2 items': pad_packed_sequence's (padded, lengths) pair kept whole (strict reading: Pa, no line)"),
    'ch09-x09b': ('P', "'d_1: 8 of 8 entries differ ... Likely cause: your values are what you get with `(c, d)` where `(d, c)` is needed (in decode_step, the returned value) ...'"),
    'ch09-x09c': ('P', "at the decode_step call: 'o has shape (2, 8) here, but (2, 4) in the reference ...; it goes wrong at your line \"o = torch.zeros_like(h[:, 0])\" -- fix it there'"),
    'ch09-x09d': ('P', "'masked loss: got 5.21556, expected 1.73852 ... Likely cause: your values are what you get if you sum over the real tokens and divide by the number of sentences'"),
    'ch09-x09e': ('M', "at the student's line \"candidates.append((score + lp, tokens + [tok], new_state))\": 'unsupported operand type(s) for +: 'float' and 'list' -- score is -0.9099 and lp is a list of 6 floats: + joins a list only to a list: put the item in a list ([score]), or use .append / .insert': the fix offered ([score]) is wrong and right code is blamed; that step_fn was given the whole token list (so log_probs came back one row per token) is not said (lenient reading: N)"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.first_view = report.first_view_past_warnings     # a warning on stderr is not a failure
    report.run_trial(sys.modules[__name__], "/tmp/student_trial_22x", argv)


if __name__ == "__main__":
    main()
