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
VERDICTS: dict[str, tuple[str, str]] = {}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.first_view = report.first_view_past_warnings     # a warning on stderr is not a failure
    report.run_trial(sys.modules[__name__], "/tmp/student_trial_22x", argv)


if __name__ == "__main__":
    main()
