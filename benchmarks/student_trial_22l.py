"""Student trial 22l: the acceptance trial of issue 22, 45 new mistakes and 18 correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed in 0e58341, before solutions/
and the catalogues were read: benchmarks/results/student_trial_22l_plan.md); every one of them turned out to repeat
an old mutant, an earlier trial's mistake or its class, and was replaced by a new one written the same way (the
plan's second table); so were the variants that the reference, tests/alternatives or an old trial already had. A
mistake is one or more edits of one cell's reference code, ``(old, new)`` pairs whose ``old`` occurs once; a
variant rewrites the cell (or edits it) and must keep full marks. Only the cases and the verdicts live here:
building, grading (the class grader, one run per assignment), the Jupyter view and the report are
benchmarks/student_trial.py's and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22l unless --root says otherwise):

    nice -n 5 .venv/bin/python benchmarks/student_trial_22l.py --student-view [ch01 ...] [--students ch01-h01a,...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22l.py --grade [ch01 ...]
    .venv/bin/python benchmarks/student_trial_22l.py --table        # benchmarks/results/student_trial_22l.md's tables
    .venv/bin/python benchmarks/student_trial_22l.py --save benchmarks/results/student_trial_22l.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "h01a", "ch01_many_to_one", "ManyToOne classifies from the last INPUT, head(x[:, -1]) (x where the states `outputs` are meant: a slip of the name)",
        ("return self.head(outputs[:, -1])", "return self.head(x[:, -1])"))
mistake("ch01", "h01b", "ch01_one_to_many", "OneToMany: the zeros sized x.new_zeros(x.shape[0], steps, x.shape[0]) (the batch size typed for D in the last slot)",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])", "inputs = x.new_zeros(x.shape[0], steps, x.shape[0])"))
mistake("ch01", "h01c", "ch01_many_to_many_async", "ManyToManyAsync passes the encoder's state by keyword as h_0=h_n (the name in nn.RNN's documentation formulas; the argument is hx)",
        ("outputs, _ = self.decoder(tgt, h_n)", "outputs, _ = self.decoder(tgt, h_0=h_n)"))
mistake("ch01", "h01d", "ch01_train_step", "train_step clears the gradients by hand, p.grad.zero_() for every parameter (p.grad is None before the first backward)",
        ("    optimizer.zero_grad()\n", "    for p in model.parameters():\n        p.grad.zero_()\n"))
mistake("ch01", "h01e", "ch01_fit", "fit returns `loss` (the last step's loss, a float) where the list `losses` is asked (a one-letter slip)",
        ("        losses.append(train_step(model, optimizer, x[idx], y[idx]))\n    return losses\n",
         "        loss = train_step(model, optimizer, x[idx], y[idx])\n        losses.append(loss)\n    return loss\n"))
variant("ch01", "x01a", "ch01_train_step", "train_step keeps the logits and returns the cross-entropy recomputed from them (the same value, before the update)",
        code=("def train_step(model, optimizer, x, y):\n"
              "    optimizer.zero_grad()\n"
              "    logits = model(x)\n"
              "    F.cross_entropy(logits, y).backward()\n"
              "    optimizer.step()\n"
              "    return float(F.cross_entropy(logits.detach(), y))\n"))
variant("ch01", "x01b", "ch01_many_to_many_sync", "ManyToManySync: the head applied step by step and the logits stacked on the time axis",
        ("return self.head(outputs)     #",
         "return torch.stack([self.head(outputs[:, t]) for t in range(outputs.shape[1])], dim=1)     #"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "h02a", "ch02_rnn_cell", "rnn_cell in per-example column form, W_hh @ h_prev.unsqueeze(-1), the squeeze(-1) forgotten on that term ((B, H, 1) + (B, H) broadcasts to (B, H, H))",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)",
         "return torch.tanh(torch.matmul(W_hh, h_prev.unsqueeze(-1)) + torch.matmul(W_hx, x_t.unsqueeze(-1)).squeeze(-1) + b_h)"))
mistake("ch02", "h02b", "ch02_rnn_layer", "rnn_layer with batch_first=False transposes the given h0 too ('turn everything round'), h0 (B, H) -> (H, B)",
        ("        x = x.transpose(0, 1)                          # (B, T, D)\n",
         "        x = x.transpose(0, 1)                          # (B, T, D)\n"
         "        if h0 is not None:\n"
         "            h0 = h0.transpose(0, 1)\n"))
mistake("ch02", "h02c", "ch02_rnn_layer", "rnn_layer stacks the states along the last axis, torch.stack(outputs, dim=-1) ('time as a new axis'): (B, H, T)",
        ("outputs = torch.stack(outputs, dim=1)", "outputs = torch.stack(outputs, dim=-1)"))
mistake("ch02", "h02d", "ch02_bptt_gradient_norms", "bptt uses the sigmoid's derivative h (1 - h) for the tanh's 1 - h^2",
        ("grad = (grad * (1 - states[:, t] ** 2)) @ W_hh",
         "grad = (grad * (states[:, t] * (1 - states[:, t]))) @ W_hh"))
mistake("ch02", "h02e", "ch02_clip_grad_norm", "clip_grad_norm scales the parameters themselves, p.data.mul_(scale), not their gradients",
        ("    grads = [p.grad for p in parameters if p.grad is not None]\n",
         "    params = [p for p in parameters if p.grad is not None]\n"
         "    grads = [p.grad for p in params]\n"),
        ("        for g in grads:\n            g.mul_(scale)\n",
         "        for p in params:\n            p.data.mul_(scale)\n"))
variant("ch02", "x02a", "ch02_rnn_cell", "rnn_cell in per-example column form: batched matrix-vector products W @ v[..., None], squeezed back",
        code=("def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):\n"
              "    pre = (W_hh @ h_prev.unsqueeze(-1)).squeeze(-1) + (W_hx @ x_t.unsqueeze(-1)).squeeze(-1)\n"
              "    return torch.tanh(pre + b_h)\n"))
variant("ch02", "x02b", "ch02_bptt_gradient_norms", "bptt with one einsum per step for the Jacobian product, the norms from squares summed",
        code=("def bptt_gradient_norms(states, W_hh):\n"
              "    B, T, H = states.shape\n"
              "    grad = states.new_ones(B, H)\n"
              "    norms = [grad.pow(2).sum().sqrt()]\n"
              "    for t in reversed(range(T)):\n"
              "        grad = torch.einsum('bi,bi,ij->bj', grad, 1 - states[:, t] ** 2, W_hh)\n"
              "        norms.append(grad.pow(2).sum().sqrt())\n"
              "    return torch.stack(norms)\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "h03a", "ch03_lstm_cell", "lstm_cell names the candidate's weights W[\"c\"], b[\"c\"] (other texts' W_c for the candidate c~; the dict's key is \"g\")",
        ('g = torch.tanh(hx @ W["g"].T + b["g"])', 'g = torch.tanh(hx @ W["c"].T + b["c"])'))
mistake("ch03", "h03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias transposes the caller's weight dicts once at the top, Wx[k] = Wx[k].T (the dicts it was given are changed: a second call gets them transposed)",
        ('    i = torch.sigmoid(x @ Wx["i"].T + h_prev @ Wh["i"].T)   # (B, H) input gate\n'
         '    f = torch.sigmoid(x @ Wx["f"].T + h_prev @ Wh["f"].T)   # (B, H) forget gate\n'
         '    g = torch.tanh(x @ Wx["g"].T + h_prev @ Wh["g"].T)      # (B, H) candidate cell\n'
         '    o = torch.sigmoid(x @ Wx["o"].T + h_prev @ Wh["o"].T)   # (B, H) output gate\n',
         '    for k in GATES:                                         # row form: transpose once\n'
         '        Wx[k], Wh[k] = Wx[k].T, Wh[k].T\n'
         '    i = torch.sigmoid(x @ Wx["i"] + h_prev @ Wh["i"])   # (B, H) input gate\n'
         '    f = torch.sigmoid(x @ Wx["f"] + h_prev @ Wh["f"])   # (B, H) forget gate\n'
         '    g = torch.tanh(x @ Wx["g"] + h_prev @ Wh["g"])      # (B, H) candidate cell\n'
         '    o = torch.sigmoid(x @ Wx["o"] + h_prev @ Wh["o"])   # (B, H) output gate\n'))
mistake("ch03", "h03c", "ch03_split_gates", "split_gates: cell.weight_ih.reshape(4, -1) read as 'four blocks' (each block flattened to (H * D,))",
        ("Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))", "Wx = dict(zip(GATES, cell.weight_ih.reshape(4, -1)))"),
        ("Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))", "Wh = dict(zip(GATES, cell.weight_hh.reshape(4, -1)))"))
mistake("ch03", "h03d", "ch03_lstm_layer", "lstm_layer unpacks T, B, _ = x.shape (the time-first habit of exercise 2's batch_first=False) on a batch-first x",
        ("    B, T, _ = x.shape\n", "    T, B, _ = x.shape\n"))
mistake("ch03", "h03e", "ch03_lstm_layer", "lstm_layer starts the outputs list with the initial state, outputs = [h] ('keep every state'): T + 1 outputs",
        ("    outputs = []\n", "    outputs = [h]\n"))
variant("ch03", "x03a", "ch03_lstm_cell", "lstm_cell with the logistic function and tanh written by hand from torch.exp",
        code=("def lstm_cell(x, h_prev, c_prev, W, b):\n"
              "    def sig(z):\n"
              "        return 1 / (1 + torch.exp(-z))\n"
              "    def th(z):\n"
              "        return 2 * sig(2 * z) - 1\n"
              "    hx = torch.cat([h_prev, x], dim=1)\n"
              "    i, f, o = (sig(hx @ W[k].T + b[k]) for k in 'ifo')\n"
              "    g = th(hx @ W['g'].T + b['g'])\n"
              "    c = f * c_prev + i * g\n"
              "    return o * th(c), c\n"))
variant("ch03", "x03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias through part 1: lstm_cell with W[k] = [Wh[k] Wx[k]] (hidden first, as part 1's hx) and zero biases",
        code=("def lstm_cell_nobias(x, h_prev, c_prev, Wx, Wh):\n"
              "    W = {k: torch.cat([Wh[k], Wx[k]], dim=1) for k in GATES}   # (H, H + D)\n"
              "    b = {k: x.new_zeros(Wh[k].shape[0]) for k in GATES}\n"
              "    return lstm_cell(x, h_prev, c_prev, W, b)\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "h04a", "ch04_gru_cell_textbook", "gru_cell_textbook computes z after the candidate and types h_tilde for h in it, z = sigmoid(W_zx x + W_zh h~ + b_z)",
        ("    z = torch.sigmoid(x @ W_zx.T + h @ W_zh.T + b_z)            # (B, H) update gate\n"
         "    h_tilde = torch.tanh(x @ W_nx.T + (r * h) @ W_nh.T + b_n)  # (B, H) reset BEFORE the product\n",
         "    h_tilde = torch.tanh(x @ W_nx.T + (r * h) @ W_nh.T + b_n)  # (B, H) reset BEFORE the product\n"
         "    z = torch.sigmoid(x @ W_zx.T + h_tilde @ W_zh.T + b_z)      # (B, H) update gate\n"))
mistake("ch04", "h04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch cuts the (B, 3H) products with .view(3, -1, H) (the three blocks read as a leading axis: the memory order mixes the batch rows)",
        ("    i_r, i_z, i_n = gi.chunk(3, dim=1)      # each (B, H)\n"
         "    h_r, h_z, h_n = gh.chunk(3, dim=1)      # each (B, H)\n",
         "    H = h.shape[1]\n"
         "    i_r, i_z, i_n = gi.view(3, -1, H)      # each (B, H)\n"
         "    h_r, h_z, h_n = gh.view(3, -1, H)      # each (B, H)\n"))
mistake("ch04", "h04c", "ch04_gru_cell_pytorch", "gru_cell_pytorch: torch.addmm(x, weight_ih.T, bias_ih) ('add + matmul' read in that order; addmm(input, mat1, mat2) adds its FIRST argument)",
        ("gi = x @ weight_ih.T + bias_ih", "gi = torch.addmm(x, weight_ih.T, bias_ih)"))
mistake("ch04", "h04d", "ch04_count_parameters", "count_parameters counts each block's two biases as 2 numbers, blocks * 2 (hidden_size forgotten)",
        ("per_direction += blocks * 2 * hidden_size", "per_direction += blocks * 2"))
mistake("ch04", "h04e", "ch04_count_parameters", "count_parameters sets the number of blocks with if kind == 'lstm' / elif kind == 'gru' and no branch for 'rnn'",
        ('    blocks = {"rnn": 1, "lstm": 4, "gru": 3}[kind]\n',
         '    if kind == "lstm":\n        blocks = 4\n    elif kind == "gru":\n        blocks = 3\n'))
variant("ch04", "x04a", "ch04_gru_cell_textbook", "gru_cell_textbook: r and z from one product over the first 2H rows, the candidate apart, h' as torch.lerp(h~, h, z)",
        code=("def gru_cell_textbook(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    H = h.shape[-1]\n"
              "    b = bias_ih + bias_hh\n"
              "    rz = torch.sigmoid(x @ weight_ih[:2 * H].T + h @ weight_hh[:2 * H].T + b[:2 * H])   # (B, 2H)\n"
              "    r, z = rz[:, :H], rz[:, H:]\n"
              "    n = torch.tanh(x @ weight_ih[2 * H:].T + (r * h) @ weight_hh[2 * H:].T + b[2 * H:])\n"
              "    return torch.lerp(n, h, z)\n"))
variant("ch04", "x04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch with tensor_split(3, dim=-1) and h' = n + z * (h - n)",
        code=("def gru_cell_pytorch(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    i_r, i_z, i_n = torch.tensor_split(torch.matmul(x, weight_ih.t()) + bias_ih, 3, dim=-1)\n"
              "    h_r, h_z, h_n = torch.tensor_split(torch.matmul(h, weight_hh.t()) + bias_hh, 3, dim=-1)\n"
              "    r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)\n"
              "    n = torch.tanh(i_n + r * h_n)\n"
              "    return n + z * (h - n)\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "h05a", "ch05_reverse_padded", "reverse_padded as a loop into torch.zeros_like(x): the real prefixes reversed, the padding left zero (assumed to be zeros) instead of kept",
        ("    B, T = x.shape[:2]\n", "    y = torch.zeros_like(x)\n    for b in range(x.shape[0]):\n        L = int(lengths[b])\n        y[b, :L] = x[b, :L].flip(0)\n    return y\n    B, T = x.shape[:2]\n"))
mistake("ch05", "h05b", "ch05_residual_stack", "ResidualLSTMStack adds the stack's input x as the residual, out + x ('skip connection from the input'), not the previous layer's result",
        ("h = out if l == 0 else out + h", "h = out if l == 0 else out + x"))
mistake("ch05", "h05c", "ch05_bilstm_from_cells", "BiLSTMFromCells: lengths=None replaced by the number T itself, lengths = x.shape[1] ('every sequence has length T')",
        ("lengths = torch.full((x.shape[0],), x.shape[1], dtype=torch.long)", "lengths = x.shape[1]"))
mistake("ch05", "h05d", "ch05_masked_mean", "masked_mean builds the mask from torch.arange(1, T + 1) < lengths (positions counted from 1: the last real step left out)",
        ("mask = torch.arange(T, device=outputs.device) < lengths.unsqueeze(1)",
         "mask = torch.arange(1, T + 1, device=outputs.device) < lengths.unsqueeze(1)"))
mistake("ch05", "h05e", "ch05_residual_stack", "ResidualLSTMStack reads each layer's final hidden state from the residual sum at the last real step, h[arange(B), lengths - 1], not its nn.LSTM's h_n",
        ("            hs.append(h_n[0])\n", "            hs.append(h[torch.arange(B), lengths - 1])\n"))
variant("ch05", "x05a", "ch05_reverse_padded", "reverse_padded as a loop: each row joined from its flipped prefix and its padding with torch.cat, the rows stacked",
        code=("def reverse_padded(x, lengths):\n"
              "    rows = []\n"
              "    for b in range(x.shape[0]):\n"
              "        L = int(lengths[b])\n"
              "        rows.append(torch.cat([x[b, :L].flip(0), x[b, L:]], dim=0))\n"
              "    return torch.stack(rows)\n"))
variant("ch05", "x05b", "ch05_final_states", "final_states with torch.gather along time for the forward half (index expanded to (B, 1, 2H))",
        code=("def final_states(outputs, lengths):\n"
              "    B, T, two_h = outputs.shape\n"
              "    H = two_h // 2\n"
              "    idx = (lengths - 1).to(outputs.device).view(B, 1, 1).expand(B, 1, two_h)\n"
              "    last = outputs.gather(1, idx)[:, 0]              # (B, 2H) at each last real step\n"
              "    return torch.cat([last[:, :H], outputs[:, 0, H:]], dim=-1)\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "h06a", "ch06_build_vocab", "build_vocab returns the dict token -> index (stoi) instead of the list itos",
        ("    return SPECIALS + kept\n", "    return {token: index for index, token in enumerate(SPECIALS + kept)}\n"))
mistake("ch06", "h06b", "ch06_numericalize", "numericalize: ids = SOS_INDEX + ids (the brackets around SOS_INDEX forgotten)",
        ("ids = [SOS_INDEX] + ids", "ids = SOS_INDEX + ids"))
mistake("ch06", "h06c", "ch06_pad_batch", "pad_batch with nn.utils.rnn.pad_sequence(..., padding_value=pad_index) without batch_first=True (its default is time first: (T, B))",
        ("    padded = torch.full((len(sequences), int(lengths.max())), pad_index, dtype=torch.long)  # (B, T)\n"
         "    for b, seq in enumerate(sequences):\n"
         "        padded[b, : len(seq)] = torch.tensor(seq, dtype=torch.long)\n",
         "    padded = nn.utils.rnn.pad_sequence([torch.tensor(seq, dtype=torch.long) for seq in sequences],\n"
         "                                       padding_value=pad_index)\n"))
mistake("ch06", "h06d", "ch06_teacher_forced_loss", "teacher_forced_loss scores against the whole target row, tgt.reshape(-1), not the shifted dec_out (B * (Ty + 1) targets for B * Ty scores)",
        ("dec_out.reshape(-1), ignore_index=pad_index)", "tgt.reshape(-1), ignore_index=pad_index)"))
mistake("ch06", "h06e", "ch06_greedy_decode", "greedy_decode: y = logits.argmax(dim=0) (the arg-max over the batch axis, not over the vocabulary)",
        ("y = logits.argmax(dim=-1)", "y = logits.argmax(dim=0)"))
variant("ch06", "x06a", "ch06_encoder", "Encoder: the final state read from the unpacked outputs at each sequence's last real token, outputs[arange(B), lengths - 1]",
        ("return outputs, h_n[0]", "return outputs, outputs[torch.arange(src.shape[0]), src_lengths - 1]"))
variant("ch06", "x06b", "ch06_pad_batch", "pad_batch: each sequence padded with F.pad(..., value=pad_index) to the longest, then stacked",
        code=("def pad_batch(sequences, pad_index=PAD_INDEX):\n"
              "    T = max(len(seq) for seq in sequences)\n"
              "    padded = torch.stack([F.pad(torch.tensor(seq, dtype=torch.long), (0, T - len(seq)), value=pad_index)\n"
              "                          for seq in sequences])\n"
              "    return padded, torch.tensor([len(seq) for seq in sequences], dtype=torch.long)\n"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "h07a", "ch07_lstm_cell", "LSTMCell in exercise 3's concatenated form, z = self.W(torch.cat([h_prev, x], -1)) (W read as acting on [h; x]; U unused)",
        ("z = self.W(x) + self.U(h_prev)", "z = self.W(torch.cat([h_prev, x], dim=-1))"))
mistake("ch07", "h07b", "ch07_encoder", "EncoderRNN keeps the state with torch.where(keep, new, state) on the (h, c) tuples themselves",
        ("            new = self.lstm_cell_left(emb[:, t], state)\n"
         "            keep = mask[:, t, None]                            # (B, 1)\n"
         "            state = (torch.where(keep, new[0], state[0]),\n"
         "                     torch.where(keep, new[1], state[1]))\n",
         "            new = self.lstm_cell_left(emb[:, t], state)\n"
         "            keep = mask[:, t, None]                            # (B, 1)\n"
         "            state = torch.where(keep, new, state)\n"))
mistake("ch07", "h07c", "ch07_attention", "Attention calls v like a layer, self.v(energy) (v is an nn.Parameter, the vector itself)",
        ("scores = energy @ self.v", "scores = self.v(energy)"))
mistake("ch07", "h07d", "ch07_decoder", "AttnDecoderRNN gives its attention the whole state tuple, self.attention(state, ...), where the hidden state h_prev is meant",
        ("weights = self.attention(h_prev, encoder_outputs, mask)", "weights = self.attention(state, encoder_outputs, mask)"))
mistake("ch07", "h07e", "ch07_greedy", "greedy_translate turns the per-step token lists into rows with zip(*tokens) (tuples, not lists)",
        ("        tokens.append(y)\n", "        tokens.append(y.tolist())\n"),
        ("    for row in torch.stack(tokens, dim=1).tolist():\n", "    for row in zip(*tokens):\n"))
variant("ch07", "x07a", "ch07_attention", "Attention with masked_fill(~mask, -1e9) (a large negative number: exp gives exactly 0) and softmax(dim=1)",
        ('scores = scores.masked_fill(~mask, float("-inf"))', "scores = scores.masked_fill(~mask, -1e9)"),
        ("return torch.softmax(scores, dim=-1)", "return torch.softmax(scores, dim=1)"))
variant("ch07", "x07b", "ch07_decoder", "AttnDecoderRNN: the context as the weighted encoder outputs summed over the positions, (weights[:, :, None] * encoder_outputs).sum(1)",
        ("weighted_encoder = torch.bmm(weights[:, None, :], encoder_outputs)[:, 0]",
         "weighted_encoder = (weights[:, :, None] * encoder_outputs).sum(dim=1)"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "h08a", "ch08_attend", "attend: the contexts in column form, values^T weights^T (B, Dh, Ty) (the transpose back forgotten)",
        ("contexts = weights @ values ", "contexts = values.transpose(1, 2) @ weights.transpose(1, 2) "))
mistake("ch08", "h08b", "ch08_dot", "dot_attention calls attend without `return` (the function returns None)",
        ("    return attend(energies, enc, mask)\n", "    attend(energies, enc, mask)\n"))
mistake("ch08", "h08c", "ch08_bilinear", "bilinear_attention: torch.matmul(dec, W, enc.transpose(1, 2)) (matmul read as a chain of products; it takes two)",
        ("energies = (dec @ W) @ enc.transpose(1, 2)", "energies = torch.matmul(dec, W, enc.transpose(1, 2))"))
mistake("ch08", "h08d", "ch08_reduced_rank", "reduced_rank_attention: the keys in column form V h (B, R, Tx), then transposed once more in the product (Part 2's habit)",
        ("keys = enc @ V.T ", "keys = V @ enc.transpose(1, 2) "))
mistake("ch08", "h08e", "ch08_macs", "reduced_rank_macs counts the dot products of one target step only, dots = Tx * R (the Ty factor forgotten)",
        ("dots = Ty * Tx * R ", "dots = Tx * R "))
variant("ch08", "x08a", "ch08_dot", "dot_attention with a broadcast product summed over the features, (dec[:, :, None] * enc[:, None]).sum(-1)",
        ("energies = dec @ enc.transpose(1, 2) ", "energies = (dec[:, :, None, :] * enc[:, None, :, :]).sum(-1) "))
variant("ch08", "x08b", "ch08_reduced_rank", "reduced_rank_attention: the energies as a broadcast product of queries and keys summed over R",
        ("energies = queries @ keys.transpose(1, 2) ", "energies = (queries[:, :, None, :] * keys[:, None, :, :]).sum(-1) "))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "h09a", "ch09_decode_step", "decode_step feeds the previous decoder state d_{t-1} (state[0]) where the previous combined output tilde d_{t-1} (o_prev) is meant",
        ("torch.cat([y_emb, o_prev], dim=-1)", "torch.cat([y_emb, state[0]], dim=-1)"))
mistake("ch09", "h09b", "ch09_teacher_forcing", "decode_teacher_forcing starts the combined output from d_0, o = state[0] ('tilde d_0' read as d_0), not zeros",
        ("o = h.new_zeros(src.shape[0], model.hidden_size)", "o = state[0]"))
mistake("ch09", "h09c", "ch09_masked_loss", "masked_loss: per-token losses (reduction='none', flattened) times the (B, Ty) mask, not flattened",
        ("    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)\n",
         "    losses = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), reduction='none')\n"
         "    mask = (tgt_out != PAD).float()\n"
         "    return (losses * mask).sum() / mask.sum()\n"))
mistake("ch09", "h09d", "ch09_beam_search", "beam_search multiplies the log-probabilities, starting from 1.0 (the product of probabilities carried over to their logs)",
        ("live = [([], 0.0, start_state)]", "live = [([], 1.0, start_state)]"),
        ("candidates.append((score + lp, tokens + [tok], new_state))", "candidates.append((score * lp, tokens + [tok], new_state))"))
mistake("ch09", "h09e", "ch09_beam_search", "beam_search writes the length normalisation with ^ (score / len(tokens) ^ alpha: the math's power sign, Python's exclusive or)",
        ("finished.append((tokens[:-1], score / len(tokens) ** alpha))", "finished.append((tokens[:-1], score / len(tokens) ^ alpha))"))
variant("ch09", "x09a", "ch09_masked_loss", "masked_loss: per-token losses (reduction='none'), the real ones picked by the flattened mask and averaged",
        code=("def masked_loss(logits, tgt_out):\n"
              "    losses = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), reduction='none')   # (B * Ty,)\n"
              "    return losses[tgt_out.flatten() != PAD].mean()\n"))
variant("ch09", "x09b", "ch09_teacher_forcing", "decode_teacher_forcing: zeros_like(d_0) as the first combined output, W_vocab applied at each step, the scores stacked",
        code=("def decode_teacher_forcing(model, src, src_len, tgt_in):\n"
              "    h, state = encode(model, src, src_len)\n"
              "    h_proj = model.W_attProj(h)\n"
              "    mask = src != PAD\n"
              "    o = torch.zeros_like(state[0])\n"
              "    scores = []\n"
              "    for t in range(tgt_in.shape[1]):\n"
              "        state, o, _ = decode_step(model, tgt_in[:, t], o, state, h, h_proj, mask)\n"
              "        scores.append(model.W_vocab(o))\n"
              "    return torch.stack(scores, dim=1)\n"))

CASES = M + OK

# The first failing visible test's message as a student reads it (student_trial_22k.py's rule). Filled after the runs.
VERDICTS = {
    "ch01-h01a": ('P', "at `return self.head(x[:, -1])`: 'self.head is an nn.Linear built for 4 input features, but the tensor you give it has 3 ...: give it the tensor it was built for (the parts the equation asks for)': x[:, -1] is the only tensor there, the states are meant; the second option, 'if you built the layer yourself, build it with in_features=3', is a wrong fix the student could take (they did build it; strict reading: Pa)"),
    "ch01-h01b": ('P', "'one edit (in OneToMany.forward, the line that computes `inputs`): another number (an index, axis, size or count off?); inputs has shape (2, 5, 2) ..., but (2, 5, 3) in the reference ...; fix it there': the new_zeros line and its last size"),
    "ch01-h01c": ('Pa', 'PyTorch\'s own "RNN.forward() got an unexpected keyword argument \'h_0\'" at the decoder line, nothing added (pass it positionally or as hx: not said); self-sufficient reading: P'),
    "ch01-h01d": ('M', 'at `p.grad.zero_()`: "\'NoneType\' object has no attribute \'zero_\' -- a value is None: the result of a method that works in place and returns None (list.sort() ...), an argument that may be None (mask=None?), or a function of yours that ends without `return`": none of the three is the cause (p.grad is None until the first backward: optimizer.zero_grad() or a None check)'),
    "ch01-h01e": ('P', "'the value fit returns: must be a Python list, got a Python float': `return loss` for `return losses`"),
    "ch02-h02a": ('P', "'torch.matmul(W_hh, h_prev.unsqueeze(-1)) has shape (2, 4, 1) ... has a last axis of size 1 ...: torch.matmul(W_hh, h_prev.unsqueeze(-1)).squeeze(-1) drops it'"),
    "ch02-h02b": ('Pa', "at rnn_cell's product: 'rnn_cell received ... h_prev (4, 2) ...: if rnn_cell passed its own test, check what rnn_layer passes to it', then transposes and operand orders offered inside rnn_cell (right code): the right function and tensor, not that h0 is transposed (strict reading: M)"),
    "ch02-h02c": ('P', "'expected shape (2, 5, 4), got (2, 4, 5) ... one edit (in rnn_layer, the line that computes `outputs`): another number (an index, axis ...)': the stack's dim"),
    "ch02-h02d": ('M', "'4 of 5 entries differ ... index 0 right and every later index wrong: if dimension 0 is time, what one step passes to the next goes wrong (the state carried over, or the input fed to the next step: the target token with teacher forcing ...); if it is the batch, ... an index [0]': guesses none of which is the cause (the derivative h (1 - h) for 1 - h^2 is not named)"),
    "ch02-h02e": ('P', "'your values are what you get if you leave the gradients as they were: nothing was clipped (... scale p.grad itself, e.g. p.grad.mul_(scale) ...)': the gradients untouched and the fix; the mechanisms listed are not the student's (p.data scaled; strict reading: Pa)"),
    "ch03-h03a": ('Pa', "Python's own KeyError 'c' at the candidate's line, nothing added (the keys are i, f, g, o: not said); self-sufficient reading: P"),
    "ch03-h03b": ('-', "no visible test fails, and the grader gives full marks: the caller's Wx and Wh dicts are changed (every weight transposed in place of the original), which only a second call with the same dicts shows"),
    "ch03-h03c": ('P', '"Wx[\'i\']: expected shape (2, 3), got (6,); ... axes 0 and 1 (2 x 3) merged: torch.cat ... (cat where stack was needed?), or a flatten/reshape too many": the reshape is named, after a wrong first guess (strict reading: Pa)'),
    "ch03-h03d": ('P', "'one edit (in lstm_layer): two variables in each other's place; ... h has shape (5, 4) here, but (2, 4) ...; it goes wrong at your line h = x.new_zeros(B, hidden_size)': B is T (5): the unpack's two names swapped"),
    "ch03-h03e": ('P', "'outputs: expected shape (2, 5, 4), got (2, 6, 4); dimension 1 has 6 instead of 5: one too many (an off-by-one in a range or a slice?)': one output too many, so where outputs gets its items (the list started with [h]); the guessed places are not it (strict reading: Pa)"),
    "ch04-h04a": ('Pa', "'gru_cell_textbook(x, h, ...): 8 of 8 entries differ': a bare mismatch (z computed from h~ not named)"),
    "ch04-h04b": ('Pa', "'gru_cell_pytorch(x, h, ...): 8 of 8 entries differ': a bare mismatch (the view(3, -1, H) that mixes the batch rows not named)"),
    "ch04-h04c": ('Pa', "PyTorch's own 'mat2 must be a matrix, got 1-D tensor' at the addmm line, nothing added (addmm adds its FIRST argument: not said)"),
    "ch04-h04d": ('P', '"count_parameters(\'rnn\', 10, 20): got 602, expected 640 ... one edit (in count_parameters, the line that computes `per_direction`): a term or a factor left out": the bias line\'s hidden_size'),
    "ch04-h04e": ('M', 'Python\'s own "cannot access local variable \'blocks\'" at the per_direction line, then \'Likely cause: ... one edit (in count_parameters): two variables in each other\'s place\': a wrong cause (no branch sets blocks for \'rnn\')'),
    "ch05-h05a": ('P', "'got 0, expected 8 ... Likely cause: every wrong entry is in the padding (it must stay where it is, unchanged)': the zeros_like result whose padding is never copied"),
    "ch05-h05b": ('Pa', "at `h = out if l == 0 else out + x`: PyTorch's broadcast error with 'out has shape (2, 5, 4) and x has shape (2, 5, 3)': the right line and operands, the cause (x where the previous layer's h belongs) not said"),
    "ch05-h05c": ('P', "'lstm_direction received cell (LSTMCell), x (2, 4, 3), lengths 4: if lstm_direction passed its own test, check what forward passes to it': the number 4 where a (B,) tensor belongs, the call named"),
    "ch05-h05d": ('Pa', "'masked_mean: 6 of 6 entries differ': a bare mismatch (the mask's arange(1, T + 1) not named)"),
    "ch05-h05e": ('P', "'Likely cause: your values are what you get if you return the final states after the residual is added'"),
    "ch06-h06a": ('P', '"build_vocab\'s return value (itos): must be a Python list, got a Python dict"'),
    "ch06-h06b": ('Pa', 'Python\'s own "unsupported operand type(s) for +: \'int\' and \'list\'" at `ids = SOS_INDEX + ids`, nothing added ([SOS_INDEX]: not said); self-sufficient reading: P'),
    "ch06-h06c": ('Pa', "'expected right padding with 0, got [[5, 8, 9], [6, 0, 10], [7, 0, 0]] -- ... one edit (in pad_batch, the line that writes into `padded`): two items in the wrong order': the right line, and the printed batch shows the sequences in columns, but pad_sequence's time-first default (batch_first) is not named and 'two items in the wrong order' fits nothing in the call (strict reading: M)"),
    "ch06-h06d": ('P', "'logits.reshape(...) has 8 rows of scores but tgt.reshape(-1) has 10 targets ...: one step for a batch of 2? (a loop that runs one step too many or too few, or targets not shifted by one)': tgt for the shifted dec_out, the last guess and the only target at the line"),
    "ch06-h06e": ('Pa', "Python's own 'list index out of range' at `if not finished[b]:`, nothing added: the loop over y's tokens is named, y's shape (the argmax over dim 0 gives V tokens) is not"),
    "ch07-h07a": ('P', "at the z line: 'self.W is an nn.Linear built for 3 input features, but the tensor you give it has 7 (the parts joined: h_prev 4 + x 3 = 7): give it the tensor it was built for': W takes x alone (the constructor is given, so the in_features option does not apply)"),
    "ch07-h07b": ('Pa', "PyTorch's own 'where() received an invalid combination of arguments - got (Tensor, tuple, tuple) ...' at `state = torch.where(keep, new, state)`, nothing added (one where per tensor of the pair: not said); self-sufficient reading: P"),
    "ch07-h07c": ('M', '"\'Parameter\' object is not callable -- Likely cause: ... one edit (in Attention.forward, the line that computes `energy`): another attribute of the same object (a copy-paste slip?)": the energy line is right; v is a vector to multiply with (energy @ self.v), not a layer: a wrong cause at a wrong line'),
    "ch07-h07d": ('P', "'Attention.forward received hidden (tuple), encoder_outputs (2, 5, 6), mask (2, 5): if Attention.forward passed its own test, check what forward passes to it': the state tuple where h_prev belongs"),
    "ch07-h07e": ('P', "'tokens[0]: must be a Python list, got a tuple of 2 items (build a list, e.g. with .append or list(...))'"),
    "ch08-h08a": ('P', "'contexts: expected shape (2, 3, 5), got (2, 5, 3); the same sizes in another order: axes swapped (... a transpose or permute missing ...)': the column-form contexts, not transposed back"),
    "ch08-h08b": ('P', '"dot_attention\'s return value (weights, contexts): must be a Python tuple, got None": the `return` left out'),
    "ch08-h08c": ('Pa', "Python's own 'matmul() takes 2 positional arguments but 3 were given' at the energies line, nothing added (two products, or @ twice: not said); self-sufficient reading: P"),
    "ch08-h08d": ('P', "'keys has shape (2, 1, 4) here, but (2, 4, 1) in the reference ...; it goes wrong at your line keys = V @ enc.transpose(1, 2) -- fix it there': making the keys (B, Tx, R) there fixes the function (the student's column keys were meant, and their extra transpose in the energies line is listed only as 'a function call left out ... or another number'; strict reading: Pa)"),
    "ch08-h08e": ('P', "'your values are what you get if you count the dot products Ty=3 times too rarely (70 instead of 210 ...)'"),
    "ch09-h09a": ('Pa', "'d_1: 7 of 8 entries differ': a bare mismatch of the new state (so the LSTM step's input), d_{t-1} fed for tilde d_{t-1} not named"),
    "ch09-h09b": ('Pa', "'logits with the stand-in encode and decode_step: 40 of 48 entries differ': a bare mismatch (the first combined output d_0 instead of zeros not named)"),
    "ch09-h09c": ('Pa', "PyTorch's broadcast error at `return (losses * mask).sum() / mask.sum()` with 'losses has shape (8,) and mask has shape (2, 4)', nothing added (flatten the mask: not said); self-sufficient reading: P"),
    "ch09-h09d": ('Pa', "'beam_size=1, max_len=6, alpha=1.0: hypotheses [[5, 0]], expected [[5, 3, 3, 5]]': a bare mismatch (the scores multiplied, not added, not named)"),
    "ch09-h09e": ('Pa', 'Python\'s own "unsupported operand type(s) for ^: \'float\' and \'float\'" at the line, nothing added (** is the power, ^ the exclusive or: not said)'),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.run_trial(sys.modules[__name__], "/tmp/student_trial_22l", argv)


if __name__ == "__main__":
    main()
