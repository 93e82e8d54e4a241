"""Student trial 22z: an acceptance trial of issue 22, new mistakes and correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed before solutions/ and the catalogues
were read: benchmarks/results/student_trial_22z_plan.md); every planned mistake and variant that repeated, or came
close to, an old mutant, an alternative or an earlier trial's case was replaced by a new one written the same way (the
plan's second table lists what each replaced case repeated). A mistake is one or more edits of one cell's reference
code, ``(old, new)`` pairs whose ``old`` occurs once; a variant rewrites the cell (or edits it) and must keep full marks.
Only the cases and the verdicts live here: building, grading (the class grader, one run per assignment), the Jupyter
view and the report are benchmarks/student_trial.py's and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22z unless --root says otherwise):

    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22z.py --student-view [ch01 ...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22z.py --grade [ch01 ...]
    /work/main/.venv/bin/python benchmarks/student_trial_22z.py --table     # benchmarks/results/student_trial_22z.md's tables
    /work/main/.venv/bin/python benchmarks/student_trial_22z.py --save benchmarks/results/student_trial_22z.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()


# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "t01a", "ch01_many_to_many_sync", "ManyToManySync returns probabilities, self.head(outputs).softmax(-1) ('one distribution per step'), where the docstring asks for logits",
        ("return self.head(outputs)     # (B, T, C)", "return self.head(outputs).softmax(-1)     # (B, T, C)"))
mistake("ch01", "t01b", "ch01_one_to_many", "OneToMany writes x into a one-step slice, inputs[:, :1] = x ('the first step'): a (B, D) value for a (B, 1, D) slot broadcasts only for a batch of one",
        ("inputs[:, 0] = x ", "inputs[:, :1] = x "))
mistake("ch01", "t01c", "ch01_many_to_many_async", "ManyToManyAsync unpacks the encoder's pair the other way round, h_n, _ = self.encoder(src): the (B, Tx, H) outputs handed on as the state",
        ("_, h_n = self.encoder(src)", "h_n, _ = self.encoder(src)"))
mistake("ch01", "t01d", "ch01_train_step", "train_step squeezes the logits before the loss, model(x).squeeze() ('drop any extra axis'): a batch of one loses its batch axis",
        ("loss = F.cross_entropy(model(x), y)", "loss = F.cross_entropy(model(x).squeeze(), y)"))
mistake("ch01", "t01e", "ch01_fit", "fit rebinds the list at every step, losses = [train_step(...)] (the brackets where .append was meant): one loss returned",
        ("losses.append(train_step(model, optimizer, x[idx], y[idx]))", "losses = [train_step(model, optimizer, x[idx], y[idx])]"))
variant("ch01", "w01a", "ch01_many_to_many_sync", "ManyToManySync applies the head's weights with einsum and adds its bias",
        ("return self.head(outputs)     # (B, T, C)", "return torch.einsum('bth,ch->btc', outputs, self.head.weight) + self.head.bias     # (B, T, C)"))
variant("ch01", "w01b", "ch01_many_to_one", "ManyToOne applies the head to every step and keeps the last step's logits, self.head(outputs)[:, -1]",
        ("return self.head(outputs[:, -1])", "return self.head(outputs)[:, -1]"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "t02a", "ch02_rnn_cell", "rnn_cell adds the bias as a column, b_h.unsqueeze(1) (the math's column vector b_h): (H, 1) against (B, H) rows",
        ("x_t @ W_hx.T + b_h)", "x_t @ W_hx.T + b_h.unsqueeze(1))"))
mistake("ch02", "t02b", "ch02_rnn_layer", "rnn_layer names the new state h_t and keeps it, but never carries it: every step starts from h0, and h0 is returned as h_last",
        ("h = rnn_cell(x[:, t], h, W_hx, W_hh, b_h)", "h_t = rnn_cell(x[:, t], h, W_hx, W_hh, b_h)"),
        ("outputs.append(h)", "outputs.append(h_t)"))
mistake("ch02", "t02c", "ch02_bptt_gradient_norms", "bptt starts the list of norms empty, norms = [] ('the loop records them'): norms[0] = ||dL/dh_T|| is missing, T entries instead of T + 1",
        ("norms = [torch.linalg.vector_norm(grad)]", "norms = []"))
mistake("ch02", "t02d", "ch02_clip_grad_norm", "clip_grad_norm scales by total_norm / (max_norm + 1e-6), the ratio upside down: the gradients grow instead of shrinking",
        ("scale = max_norm / (total_norm + 1e-6)", "scale = total_norm / (max_norm + 1e-6)"))
mistake("ch02", "t02e", "ch02_clip_grad_norm", "clip_grad_norm's scaling loop is indented one level too little (outside the if): under the threshold `scale` was never set",
        ("        scale = max_norm / (total_norm + 1e-6)\n        for g in grads:\n            g.mul_(scale)",
         "        scale = max_norm / (total_norm + 1e-6)\n    for g in grads:\n        g.mul_(scale)"))
variant("ch02", "w02a", "ch02_rnn_cell", "rnn_cell with torch.nn.functional.linear for both products, the bias given to the input's",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)", "return torch.tanh(torch.nn.functional.linear(h_prev, W_hh) + torch.nn.functional.linear(x_t, W_hx, b_h))"))
variant("ch02", "w02b", "ch02_clip_grad_norm", "clip_grad_norm takes the norm of the per-gradient norms (PyTorch's own bookkeeping)",
        ("total_norm = torch.sqrt(sum((g.detach() ** 2).sum() for g in grads))",
         "total_norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g.detach()) for g in grads]))"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "t03a", "ch03_lstm_cell", "lstm_cell closes the input gate's sigmoid before the bias, torch.sigmoid(hx @ W['i'].T) + b['i']",
        ('i = torch.sigmoid(hx @ W["i"].T + b["i"])', 'i = torch.sigmoid(hx @ W["i"].T) + b["i"]'))
mistake("ch03", "t03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias couples the gates, c = f * c_prev + (1 - f) * g (chapter 4's GRU interpolation habit): the input gate is never used",
        ("    c = f * c_prev + i * g                                  # (B, H)", "    c = f * c_prev + (1 - f) * g                            # (B, H)"))
mistake("ch03", "t03c", "ch03_split_gates", "split_gates keys the blocks with sorted(GATES) ('a fixed key order'): f, g, i, o, where the stacked order is i, f, g, o",
        ("Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))", "Wx = dict(zip(sorted(GATES), cell.weight_ih.chunk(4, dim=0)))"),
        ("Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))", "Wh = dict(zip(sorted(GATES), cell.weight_hh.chunk(4, dim=0)))"),
        ("b = dict(zip(GATES, (cell.bias_ih", "b = dict(zip(sorted(GATES), (cell.bias_ih"))
mistake("ch03", "t03d", "ch03_lstm_layer", "lstm_layer returns its final states as one tensor, torch.stack([h, c]) ('h_n and c_n together'): it unpacks into two (B, H) states, not (1, B, H)",
        ("(h.unsqueeze(0), c.unsqueeze(0))   #", "torch.stack([h, c])   #"))
mistake("ch03", "t03e", "ch03_lstm_layer", "lstm_layer takes a given state as h, c = state[0], state[1] (the pair unpacked, the layer axis kept): (1, B, H) states given to the cell",
        ("h, c = state[0][0], state[1][0]", "h, c = state[0], state[1]"))
variant("ch03", "w03a", "ch03_split_gates", "split_gates with explicit row slices per gate, k * H to (k + 1) * H",
        code=("def split_gates(cell):\n"
              "    H = cell.hidden_size\n"
              "    rows = {k: slice(j * H, (j + 1) * H) for j, k in enumerate(GATES)}\n"
              "    Wx = {k: cell.weight_ih[s] for k, s in rows.items()}\n"
              "    Wh = {k: cell.weight_hh[s] for k, s in rows.items()}\n"
              "    if cell.bias_ih is None:\n"
              "        return Wx, Wh, None\n"
              "    b = {k: cell.bias_ih[s] + cell.bias_hh[s] for k, s in rows.items()}\n"
              "    return Wx, Wh, b\n"))
variant("ch03", "w03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias through part 1's lstm_cell, W[k] = [Wh[k] Wx[k]] and zero biases H wide",
        code=("def lstm_cell_nobias(x, h_prev, c_prev, Wx, Wh):\n"
              "    W = {k: torch.cat([Wh[k], Wx[k]], dim=1) for k in GATES}\n"
              "    b = {k: h_prev.new_zeros(Wh[k].shape[0]) for k in GATES}\n"
              "    return lstm_cell(x, h_prev, c_prev, W, b)\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "t04a", "ch04_gru_cell_textbook", "gru_cell_textbook cuts the hidden blocks from weight_ih (the line above copied, only the names changed)",
        ("W_rh, W_zh, W_nh = weight_hh.split(H)", "W_rh, W_zh, W_nh = weight_ih.split(H)"))
mistake("ch04", "t04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch interpolates with torch.lerp(h, n, z) ('from h to n by z'): h + z (n - h), the gate on the wrong side",
        ("return (1 - z) * n + z * h", "return torch.lerp(h, n, z)"))
mistake("ch04", "t04c", "ch04_gru_cell_pytorch", "gru_cell_pytorch names the hidden product's n block `h` (h_r, h_z, h = gh.chunk(3)), so the interpolation keeps that block, not the old state",
        ("h_r, h_z, h_n = gh.chunk(3, dim=1)", "h_r, h_z, h = gh.chunk(3, dim=1)"),
        ("n = torch.tanh(i_n + r * h_n)", "n = torch.tanh(i_n + r * h)"))
mistake("ch04", "t04d", "ch04_count_parameters", "count_parameters counts the layers from 1, input_size if layer == 1 (range starts at 0): the first layer reads H * directions, the second D",
        ("layer_input = input_size if layer == 0 else", "layer_input = input_size if layer == 1 else"))
mistake("ch04", "t04e", "ch04_gru_cell_textbook", "gru_cell_textbook reads H from the stacked bias with exercise 3's // 4 (an LSTM stacks 4 blocks, a GRU 3): split(H) no longer gives three pieces",
        ("H = h.shape[1]", "H = len(bias_ih) // 4"))
variant("ch04", "w04a", "ch04_gru_cell_textbook", "gru_cell_textbook interpolates as h~ + z * (h - h~)",
        ("return (1 - z) * h_tilde + z * h ", "return h_tilde + z * (h - h_tilde) "))
variant("ch04", "w04b", "ch04_count_parameters", "count_parameters in closed form: the first layer and the num_layers - 1 upper layers",
        code=("def count_parameters(kind, input_size, hidden_size, num_layers=1, bias=True, bidirectional=False):\n"
              "    G = {'rnn': 1, 'lstm': 4, 'gru': 3}[kind] * hidden_size\n"
              "    dirs = 2 if bidirectional else 1\n"
              "    b = 2 * G if bias else 0\n"
              "    first = G * (input_size + hidden_size) + b\n"
              "    upper = G * (dirs * hidden_size + hidden_size) + b\n"
              "    return dirs * (first + (num_layers - 1) * upper)\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "t05a", "ch05_reverse_padded", "reverse_padded makes the lengths a row, lengths.unsqueeze(0) (1, B), where the (B, 1) column lines up with t (T,)",
        ("L = lengths.to(x.device).unsqueeze(1)", "L = lengths.to(x.device).unsqueeze(0)"))
mistake("ch05", "t05b", "ch05_lstm_direction", "lstm_direction makes its mask a row, (t < lengths).unsqueeze(0) (1, B), where the hint's (B, 1) column is meant",
        ("real = (t < lengths).to(x.device).unsqueeze(1)", "real = (t < lengths).to(x.device).unsqueeze(0)"))
mistake("ch05", "t05c", "ch05_bilstm_from_cells", "BiLSTMFromCells makes the default lengths with torch.full((x.shape[1],), x.shape[1]) (T entries: the time axis typed for the batch)",
        ("lengths = torch.full((x.shape[0],), x.shape[1], dtype=torch.long)", "lengths = torch.full((x.shape[1],), x.shape[1], dtype=torch.long)"))
mistake("ch05", "t05d", "ch05_final_states", "final_states indexes the forward half as outputs[last, rows, :H] (the two index tensors in the other order: time first)",
        ("forward_last = outputs[rows, last, :H]", "forward_last = outputs[last, rows, :H]"))
mistake("ch05", "t05e", "ch05_masked_mean", "masked_mean reads the running sum at index lengths, outputs.cumsum(1)[arange(B), lengths] (one past the last real step, which is lengths - 1)",
        ("    total = (outputs * mask.unsqueeze(-1)).sum(dim=1)                     # (B, F)",
         "    total = outputs.cumsum(dim=1)[torch.arange(len(lengths)), lengths]    # the running sum at the end of each sequence"))
variant("ch05", "w05a", "ch05_lstm_direction", "lstm_direction blends with a float mask, m * new + (1 - m) * old",
        ("        h = torch.where(real, h_new, h)                         # padded steps keep the old state\n        c = torch.where(real, c_new, c)\n        outputs.append(torch.where(real, h_new, torch.zeros_like(h_new)))",
         "        m = real.to(x.dtype)\n        h = m * h_new + (1 - m) * h\n        c = m * c_new + (1 - m) * c\n        outputs.append(m * h_new)"))
variant("ch05", "w05b", "ch05_reverse_padded", "reverse_padded as a loop over the batch: a clone, each real prefix flipped into it",
        code=("def reverse_padded(x, lengths):\n"
              "    y = x.clone()\n"
              "    for b, n in enumerate(lengths.tolist()):\n"
              "        y[b, :n] = x[b, :n].flip(0)\n"
              "    return y\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "t06a", "ch06_numericalize", "numericalize adds <eos> with ids = ids.append(EOS_INDEX) (list.append returns None)",
        ("        ids = ids + [EOS_INDEX]", "        ids = ids.append(EOS_INDEX)"))
mistake("ch06", "t06b", "ch06_teacher_forced_loss", "teacher_forced_loss swaps the two slices, dec_in, dec_out = tgt[:, 1:], tgt[:, :-1] (inputs and targets confused)",
        ("dec_in, dec_out = tgt[:, :-1], tgt[:, 1:]", "dec_in, dec_out = tgt[:, 1:], tgt[:, :-1]"))
mistake("ch06", "t06c", "ch06_greedy_decode", "greedy_decode takes the first item of the encoder's pair, d = encoder(src, src_lengths)[0]: the (B, Tx, H) outputs, not the final state",
        ("_, d = encoder(src, src_lengths)", "d = encoder(src, src_lengths)[0]"))
mistake("ch06", "t06d", "ch06_pad_batch", "pad_batch returns (lengths, padded), the two results in the order they were computed, where the docstring asks for (padded, lengths)",
        ("    return padded, lengths", "    return lengths, padded"))
mistake("ch06", "t06e", "ch06_teacher_forced_loss", "teacher_forced_loss feeds the decoder its own arg-max from the second step on (free running, as at test time), not the true previous token",
        ("    logits = []\n", "    logits = []\n    y = dec_in[:, 0]                                    # <sos>\n"),
        ("step_logits, d = decoder.step(dec_in[:, t], d)  # (B, V), (B, H)\n        logits.append(step_logits)",
         "step_logits, d = decoder.step(y, d)  # (B, V), (B, H)\n        logits.append(step_logits)\n        y = step_logits.argmax(dim=-1)      # the next input: the decoder's own guess"))
variant("ch06", "w06a", "ch06_numericalize", "numericalize in one expression with conditional lists",
        code=("def numericalize(tokens, stoi, add_sos=False, add_eos=False):\n"
              "    return ([SOS_INDEX] if add_sos else []) + [stoi[t] if t in stoi else UNK_INDEX for t in tokens] + ([EOS_INDEX] if add_eos else [])\n"))
variant("ch06", "w06b", "ch06_teacher_forced_loss", "teacher_forced_loss: the summed cross-entropy divided by the number of non-padding targets",
        ("    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), ignore_index=pad_index)",
         "    total = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), ignore_index=pad_index, reduction='sum')\n    loss = total / (dec_out != pad_index).sum()"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "t07b", "ch07_greedy", "greedy_translate accumulates done with done = done | y == eos_index (| binds tighter than ==: (done | y) == eos_index)",
        ("done |= y == eos_index", "done = done | y == eos_index"))
mistake("ch07", "t07a", "ch07_attention", "Attention zeroes the padded weights once more after the softmax, .masked_fill(~mask, 0), also when mask is None",
        ("return torch.softmax(scores, dim=-1)", "return torch.softmax(scores, dim=-1).masked_fill(~mask, 0)"))
mistake("ch07", "t07c", "ch07_encoder", "EncoderRNN sizes its zero states with emb.shape[-1] (the embedding size E where the hidden size H is meant)",
        ("zeros = emb.new_zeros(B, self.hidden_size)", "zeros = emb.new_zeros(B, emb.shape[-1])"))
mistake("ch07", "t07d", "ch07_decoder", "AttnDecoderRNN takes the previous hidden state as state[1] (counting the pair from 1): the cell state c attends",
        ("h_prev, _ = state", "h_prev = state[1]"))
variant("ch07", "w07a", "ch07_decoder", "AttnDecoderRNN takes the context as a broadcast product summed over the positions",
        ("weighted_encoder = torch.bmm(weights[:, None, :], encoder_outputs)[:, 0]", "weighted_encoder = (weights.unsqueeze(-1) * encoder_outputs).sum(dim=1)"))
variant("ch07", "w07b", "ch07_lstm_cell", "LSTMCell with one product of [x; h] against the two weight matrices side by side",
        ("z = self.W(x) + self.U(h_prev)", "z = torch.cat([x, h_prev], dim=-1) @ torch.cat([self.W.weight, self.U.weight], dim=1).T"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "t08a", "ch08_macs", "reduced_rank_macs counts a dot product of two R-vectors as one multiply-add, dots = Ty * Tx (the R forgotten)",
        ("dots = Ty * Tx * R ", "dots = Ty * Tx "))
mistake("ch08", "t08b", "ch08_bilinear", "bilinear_attention with einsum 'btd,ed,bse->bts' (W's two indices written in the order of W^T)",
        ("energies = (dec @ W) @ enc.transpose(1, 2)", "energies = torch.einsum('btd,ed,bse->bts', dec, W, enc)"))
mistake("ch08", "t08c", "ch08_macs", "reduced_rank_macs writes per_step = B * Ty * keys + queries + dots (the parentheses of the once line left out): the queries and dots of one sentence only",
        ("per_step = B * (Ty * keys + queries + dots)", "per_step = B * Ty * keys + queries + dots"))
variant("ch08", "w08a", "ch08_scaled_dot", "scaled_dot_attention splits the scale between the two sides, D ** 0.25 each",
        ("energies = dec @ enc.transpose(1, 2) / math.sqrt(D)", "energies = (dec / D ** 0.25) @ (enc / D ** 0.25).transpose(1, 2)"))
variant("ch08", "w08b", "ch08_macs", "reduced_rank_macs factored: B * (keys passes * Tx R Dh + Ty R (Dd + Tx))",
        code=("def reduced_rank_macs(B, Tx, Ty, Dd, Dh, R):\n"
              "    rest = Ty * R * (Dd + Tx)\n"
              "    return B * (Tx * R * Dh + rest), B * (Ty * Tx * R * Dh + rest)\n"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "t09a", "ch09_beam_search", "beam_search tests the kept candidate with `if tok == EOS` (the loop variable of the extension loop, not the candidate's last token)",
        ("if tokens[-1] == EOS:", "if tok == EOS:"))
mistake("ch09", "t09b", "ch09_beam_search", "beam_search unpacks the kept candidates as (tokens, score, state), the order of the docstring's hypothesis, where the candidates are (score, tokens, state)",
        ("for score, tokens, state in candidates[: beam_size - len(finished)]:", "for tokens, score, state in candidates[: beam_size - len(finished)]:"))
mistake("ch09", "t09c", "ch09_masked_loss", "masked_loss calls nn.CrossEntropyLoss(ignore_index=PAD)(logits, tgt_out) on the (B, Ty, V) logits as they are (the class axis must be 1, or the batch flattened)",
        ("    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)",
         "    return torch.nn.CrossEntropyLoss(ignore_index=PAD)(logits, tgt_out)"))
mistake("ch09", "t09d", "ch09_decode_step", "decode_step returns d, c, o, alpha flat (four values), where the docstring groups the state, ((d_t, c_t), o_t, alpha_t)",
        ("return (d, c), o, alpha", "return d, c, o, alpha"))
variant("ch09", "w09a", "ch09_masked_loss", "masked_loss keeps the real positions by boolean indexing, cross_entropy(logits[real], tgt_out[real])",
        ("    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)",
         "    real = tgt_out != PAD\n    return F.cross_entropy(logits[real], tgt_out[real])"))
variant("ch09", "w09b", "ch09_teacher_forcing", "decode_teacher_forcing applies W_vocab at every step and stacks the logits",
        ("        outputs.append(o)\n    return model.W_vocab(torch.stack(outputs, dim=1))",
         "        outputs.append(model.W_vocab(o))\n    return torch.stack(outputs, dim=1)"))

CASES = M + OK

# The first failing visible test's message as the student sees it in Jupyter, judged by the rule of trials 22f-22x.
VERDICTS: dict[str, tuple[str, str]] = {
    'ch01-t01a': ('P', "'ManyToManySync(x): 60 of 60 entries differ ... Likely cause: your values are probabilities (a softmax of the expected raw scores): return the raw scores (logits) themselves'"),
    'ch01-t01b': ('M', "at the student's line: 'The expanded size of the tensor (1) must match ... -- inputs[:, :1] has shape (2, 1, 3) but x has shape (2, 3): inputs was made with other sizes than what is written into it (inputs is (2, 5, 3)): check the line that creates it (made like another tensor, e.g. empty_like(x) ...)': the named cause blames the right new_zeros line; that the slice :1 keeps a step axis (inputs[:, 0] is the (B, D) slot) is not said (lenient reading: Pa, (2, 1, 3) against (2, 3) is shown at the student's line)"),
    'ch01-t01c': ('P', "at the decoder line: 'Expected hidden size (1, 2, 4), got [2, 5, 4] -- h_n has shape (2, 5, 4) here, but (1, 2, 4) in the reference ...; it goes wrong at your line \"h_n, _ = self.encoder(src)\" -- fix it there': the unpacking line named, h_n shown with the outputs' shape (B, Tx, H) (strict reading: Pa, the order of the pair is not said)"),
    'ch01-t01e': ('P', "'fit must return one loss per step: 30 steps, got 1 losses': the list holds one loss, so the line that builds it is the one to read (strict reading: Pa, no line named)"),
    'ch02-t02a': ('P', "at the student's line: '... b_h.unsqueeze(1) has shape (4, 1): broadcasting lines shapes up from the RIGHT ...; a new axis in the wrong place: b_h[None, :] would line its axes up with the equal sizes of (2, 4)'"),
    'ch02-t02b': ('P', "'outputs of rnn_layer(x, ..., h0=h0): 32 of 40 entries differ ... `h` is right where it is first made ..., but yours never makes it again, where the reference's `h` gets 6 values: the reference carries it from step to step (a loop's new value of `h` kept under another name, or never assigned back to `h`?)'"),
    'ch02-t02c': ('M', "'bptt_gradient_norms(states, W_hh): expected shape (5,), got (4,) ...: one too few (an off-by-one in a range or a slice?) ... -- Likely cause: this error is what you get with one edit (in bptt_gradient_norms, the loop over `t`): another number ...': the loop, which is right, is named; that norms[0] = ||dL/dh_T|| is missing from the start (norms = []) is not said (lenient reading: Pa, 'one too few' of T + 1 norms)"),
    'ch02-t02d': ('Pa', "'a.grad after clipping to 3.5: 2 of 2 entries differ ... got 11.1429, expected 0.807692 ... Likely cause: ... (the line that calls `mul_`): another function in place of the right one ...; or with one edit (in clip_grad_norm, the line that computes `scale`): two operands in the wrong order (these give the same values here) (your values are 13.8 times the expected ones)': the right cause is the second of two, after a wrong one on a right line (strict reading: M, a named wrong cause first; lenient: P)"),
    'ch02-t02e': ('P', "at the student's line \"g.mul_(scale)\": 'cannot access local variable 'scale' ... -- the variable is given a value only on some paths (an if/elif without the case this call takes ...) or only after this line: give it a value on every path': scale is set only inside the if"),
    'ch03-t03a': ('P', "'c (the new cell state): 8 of 8 entries differ ... Likely cause: your values are what you get if you add the bias of gate i after its nonlinearity (sigmoid(hx @ W['i'].T) + b['i']): the bias goes inside'"),
    'ch03-t03b': ('P', "'c ...: 8 of 8 entries differ ... `c` is the first variable whose value differs ...: look at your line \"c = f * c_prev + (1 - f) * g\" (... yours subtracts (-) ...; the reference's multiplies `g` by `i` and reads `i`, which yours does not)'"),
    'ch03-t03c': ('P', "'Wx[...] stacked: 18 of 24 entries differ ... Likely cause: the 4 blocks of size 2 along dimension 0 are in the wrong order: your block j holds the expected block [2, 0, 1, 3][j] (gates in another order than the stated one?)': the keys' order is the slip (strict reading: Pa, sorted(GATES) not named)"),
    'ch03-t03d': ('P', "'h_n: expected shape (1, 2, 4), got (2, 4); a dimension of size 1 is missing (unsqueeze it) -- Likely cause: ... (in lstm_layer, the returned value): another function in place of the right one': stack in place of the two unsqueezes, in the return (strict reading: Pa, that the stacked (2, B, H) unpacks into two (B, H) is not said)"),
    'ch03-t03e': ('P', "at the cell call: 'Expected hx[0] to be 1D or 2D, got 3D -- h has shape (1, 2, 4) here, but (2, 4) in the reference ...; it goes wrong at your line ... or \"h, c = state[0], state[1]\" (whichever ran) -- fix it there'"),
    'ch04-t04a': ('P', "at the r line: 'mat1 and mat2 shapes cannot be multiplied (2x4 and 3x4) -- W_rh has shape (4, 3) here, but (4, 4) in the reference ...; it goes wrong at your line \"W_rh, W_zh, W_nh = weight_ih.split(H)\" -- fix it there'"),
    'ch04-t04b': ('P', "'gru_cell_pytorch(x, h, ...): 8 of 8 entries differ ... Likely cause: your values are what you get if you swap z and 1 - z in h' = (1 - z) * n + z * h': lerp(h, n, z) puts z on n (strict reading: Pa, lerp not named)"),
    'ch04-t04c': ('Pa', "'gru_cell_pytorch(x, h, ...): 8 of 8 entries differ ... Likely cause: your values are what you get with `z * h_n` where `z * h` is needed (in gru_cell_pytorch, the returned value)': true of the values, but the return line already reads z * h; that the chunk line rebinds h to the hidden product's n block is not said (strict reading: M, the right return line is named; lenient: P, 'h_n where h' says what h holds)"),
    'ch04-t04d': ('P', "'count_parameters('rnn', 10, 20): got 840, expected 640 ... `layer_input` is the first variable whose value differs ... (20 where the reference's is 10) ...: look at your line \"layer_input = input_size if layer == 1 else hidden_size * directions\"'"),
    'ch04-t04e': ('P', "at the split line: 'too many values to unpack (expected 3) -- ... `H` is the first variable whose value differs ... (3 where the reference's is 4), made at your line \"H = len(bias_ih) // 4\": it goes wrong before the line that raises'"),
    'ch05-t05a': ('P', "at the where line: '... Likely cause: ... (the line that computes `L`): another number (an index, axis, size or count off?) ...; L has shape (1, 3) here, but (3, 1) in the reference ...; it goes wrong at your line \"L = lengths.to(x.device).unsqueeze(0)\" -- fix it there'"),
    'ch05-t05b': ('P', "at the where line: '... real has shape (1, 2) here, but (2, 1) in the reference ...; it goes wrong at your line \"real = (t < lengths).to(x.device).unsqueeze(0)\" -- fix it there'"),
    'ch05-t05c': ('P', "in lstm_direction called from forward: '... Likely cause: ... (in BiLSTMFromCells.forward, the line that computes `lengths`): another number ...; lengths has shape (4,) here, but (2,) in the reference ...; it goes wrong at your line \"lengths = torch.full((x.shape[1],), ...)\" -- fix it there'"),
    'ch05-t05d': ('P', "at the student's line: 'index 4 is out of bounds for dimension 0 with size 3 -- last holds [1, 4, 0] here, but the positions along axis 0 of outputs (3, 5, 4) run from 0 to 2': the time indices sit on the batch axis (strict reading: Pa, the order of the two index tensors is not said)"),
    'ch05-t05e': ('P', "'masked_mean: 6 of 6 entries differ ... Likely cause: your values are what you get if you count one padded step too many (t <= length instead of t < length)': the running sum read at lengths holds one step too many (strict reading: Pa, no line; the student's code has no t <= length)"),
    'ch06-t06a': ('M', "'numericalize's return value with <sos> and <eos>: must be a Python list, got None (a function that ends without `return` gives None: is the result returned?)': the one named cause is wrong (ids is returned); that list.append returns None, so ids = ids.append(EOS_INDEX) makes ids None, is not said (lenient reading: Pa, None only with <eos>)"),
    'ch06-t06b': ('P', "'logits at step 1: 20 of 20 entries differ ... Likely cause: your values are what you get if you feed the decoder y_t (the token it must predict) instead of y_{t-1}'"),
    'ch06-t06c': ('M', "at the decoder.step line: ''NoneType' object has no attribute 'shape' -- a value is None: the result of a method that works in place and returns None (list.sort(), ...), an argument that may be None (does the docstring allow mask=None ...?), or a function of yours that ends without `return`': three guessed causes, none the student's; the line that made d, encoder(...)[0] (the outputs, which the test's stand-in encoder gives as None, where the final state is the second item), is not named (lenient reading: Pa, d is the None at this line)"),
    'ch06-t06d': ('P', "'padded: expected shape (3, 3), got (3,) ... -- Likely cause: this error is what you get with one edit (in pad_batch, the returned value): two items in the wrong order; or one item written twice ...'"),
    'ch07-t07a': ('P', "at the student's line: 'bad operand type for unary ~: 'NoneType' -- `mask` is None at this line: the caller passed mask=None (or left it out), a case the docstring allows; handle it before this line (if mask is None: ...)'"),
    'ch07-t07b': ('Pa', "'the number of decoding steps (stop as soon as EVERY sentence has produced <eos>: after step 3 here, not before, not later): got 6, expected 3': the stopping bookkeeping is named, not what is wrong in it (| binds tighter than ==, so done = done | y == eos_index is (done | y) == eos_index) (lenient reading: P, the done line is the one to read; strict: N, no line)"),
    'ch07-t07c': ('M', "at LSTMCell's z line, called from the encoder's left loop: '... LSTMCell.forward received x (2, 3), state (tuple): if LSTMCell.forward passed its own test, check what forward passes to it -- h_prev has shape (2, 3) here, but (2, 4) ...; it goes wrong at your line \"h_prev, c_prev = state\" -- fix it there': the right unpacking line in LSTMCell is blamed ('fix it there'); the encoder's zeros sized emb.shape[-1] (E for H) are not named (lenient reading: Pa, 'check what forward passes to it' and (2, 3) against (2, 4))"),
    'ch07-t07d': ('P', "'weights at step 1: 7 of 10 entries differ ... Likely cause: your values are what you get if you attend with the cell state c_(t-1) instead of the hidden state d_(t-1)'"),
    'ch08-t08a': ('P', "'once ...: got 968, expected 1148 ... `dots` is the first variable whose value differs ... (15 where the reference's is 105) ...: look at your line \"dots = Ty * Tx\" (... the reference's reads `R`, which yours does not); that is why your values are what you get if you count the dot products R=7 times too rarely'"),
    'ch08-t08b': ('P', "at the student's line: 'einsum(): subscript d has size 5 for operand 1 ... -- the subscript d stands for 6 in dec (axis 2) and 5 in W (axis 1): one letter, one size: W is (6, 5), so its subscripts \"ed\" read it the wrong way round; \"de\" for it (or W.T) fits'"),
    'ch08-t08c': ('P', "'per_step ...: got 2499, expected 2688 ... look at your line \"per_step = B * Ty * keys + queries + dots\" (... yours multiplies `B` by `Ty`, which the reference's does not; the reference's multiplies `Ty` by `keys`, which yours does not)': B applies to the keys only, the parentheses of the once line are missing (strict reading: Pa, the parentheses are not said)"),
    'ch09-t09a': ('Pa', "'beam_size=1, max_len=6, alpha=1.0: hypotheses [[5, 3, 3, 5, 2, 3]], expected [[5, 3, 3, 5]]. Likely cause: each of your lists starts with the expected items but some go on after them: stop where the docstring says (at the first <eos>, which is not kept)': the symptom (no hypothesis ever finishes at <eos>) points to the EOS test, not to what is wrong in it (`tok`, the extension loop's last token, where the candidate's tokens[-1] is meant) (lenient reading: P, the EOS test is one line)"),
    'ch09-t09b': ('Pa', "at the student's line \"if tokens[-1] == EOS:\": ''float' object is not subscriptable': Python's own error with nothing added; that the candidates are (score, tokens, state), unpacked here as (tokens, score, state), is not said (lenient reading: P, tokens holding a float shows the order)"),
    'ch09-t09c': ('P', "at the student's line: 'Expected target size [2, 6], got [2, 4] -- F.cross_entropy takes scores (N, V) with targets (N,), or (B, V, T) with the class axis second: flatten (B, T, V) scores to (B*T, V) and the targets to (B*T,)'"),
    'ch09-t09d': ('P', "at the test's unpacking '(d1, c1), o1, a1 = result': 'too many values to unpack (expected 3) -- ... unpacking a call means the function returns another number of values than its docstring says'"),
    'ch01-t01d': ('-', "no visible test fails (and the class grader gives 15/15): train_step's forward runs on a batch of one, where model(x).squeeze() makes the logits (C,) and the target stays (1,); the backward then raises 'size mismatch (got input: [2], target: [1])', so fit(..., batch_size=1) crashes; no visible or hidden test calls train_step on a batch of one"),
    'ch06-t06e': ('Pa', "'logits at step 2: 20 of 20 entries differ ... `d` is right where it is first made, and its third value, from your line \"step_logits, d = decoder.step(y, d)\", is not the reference's third value: it goes wrong there (the values it is made from, or what the line does to them)': the step line is named and step 1 is right, but not what is wrong in it (y, the decoder's own arg-max, where teacher forcing feeds the true previous token dec_in[:, t]) (lenient reading: P, y is the one input that changes from step 2 on; strict: N)"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.first_view = report.first_view_past_warnings     # a warning on stderr is not a failure
    report.run_trial(sys.modules[__name__], "/tmp/student_trial_22z", argv)


if __name__ == "__main__":
    main()
