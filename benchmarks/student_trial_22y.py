"""Student trial 22y: an acceptance trial of issue 22, new mistakes and correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed before solutions/ and the catalogues
were read: benchmarks/results/student_trial_22y_plan.md); every planned mistake and variant that repeated, or came
close to, an old mutant, an alternative or an earlier trial's case was replaced by a new one written the same way (the
plan's second table lists what each replaced case repeated). A mistake is one or more edits of one cell's reference
code, ``(old, new)`` pairs whose ``old`` occurs once; a variant rewrites the cell (or edits it) and must keep full marks.
Only the cases and the verdicts live here: building, grading (the class grader, one run per assignment), the Jupyter
view and the report are benchmarks/student_trial.py's and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22y unless --root says otherwise):

    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22y.py --student-view [ch01 ...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22y.py --grade [ch01 ...]
    /work/main/.venv/bin/python benchmarks/student_trial_22y.py --table     # benchmarks/results/student_trial_22y.md's tables
    /work/main/.venv/bin/python benchmarks/student_trial_22y.py --save benchmarks/results/student_trial_22y.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()


# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "y01a", "ch01_many_to_one", "ManyToOne loops over time itself with its nn.RNN, out, h = self.rnn(x[:, t], h) (chapter 2's loop): a 2-D (B, D) input is one UNBATCHED sequence of length B for nn.RNN",
        ("outputs, h_n = self.rnn(x)", "h = None\n        for t in range(x.shape[1]):                 # one step at a time, as in chapter 2\n            out, h = self.rnn(x[:, t], h)"),
        ("return self.head(outputs[:, -1])", "return self.head(out)"))
mistake("ch01", "y01b", "ch01_many_to_many_sync", "ManyToManySync puts a ReLU on the head's output, F.relu(self.head(outputs)) (Keras' Dense(activation='relu') habit): the logits cannot be negative",
        ("return self.head(outputs)     # (B, T, C)", "return F.relu(self.head(outputs))     # (B, T, C)"))
mistake("ch01", "y01c", "ch01_many_to_many_async", "ManyToManyAsync turns the encoder's state batch first before handing it on, h_n.transpose(0, 1) ('batch_first=True everywhere'): (B, 1, H) where nn.RNN takes (1, B, H)",
        ("outputs, _ = self.decoder(tgt, h_n)", "outputs, _ = self.decoder(tgt, h_n.transpose(0, 1))"))
mistake("ch01", "y01d", "ch01_train_step", "train_step returns loss.item without the call parentheses (a bound method, not the float)",
        ("return loss.item()", "return loss.item"))
mistake("ch01", "y01e", "ch01_fit", "fit samples the indices with torch.multinomial(torch.ones(len(x)), batch_size, replacement=True, generator=g) ('with replacement' read as multinomial's option), not the docstring's randint",
        ("idx = torch.randint(0, len(x), (batch_size,), generator=g)   #", "idx = torch.multinomial(torch.ones(len(x)), batch_size, replacement=True, generator=g)   #"))
variant("ch01", "z01a", "ch01_many_to_one", "ManyToOne reads the last step with outputs.narrow(1, T - 1, 1).squeeze(1)",
        ("return self.head(outputs[:, -1])", "return self.head(outputs.narrow(1, x.shape[1] - 1, 1).squeeze(1))"))
variant("ch01", "z01b", "ch01_one_to_many", "OneToMany builds its inputs with torch.nn.functional.one_hot of the step index (1 at step 0) times x",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])  # (B, steps, D), all zeros\n        inputs[:, 0] = x ",
         "first = F.one_hot(torch.zeros((), dtype=torch.long), steps).to(x.dtype)   # (steps,): 1 at step 0\n        inputs = first[None, :, None] * x[:, None, :]  "))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "y02a", "ch02_rnn_cell", "rnn_cell puts the .T on the product instead of the matrix, (h_prev @ W_hh).T",
        ("h_prev @ W_hh.T", "(h_prev @ W_hh).T"))
mistake("ch02", "y02b", "ch02_bptt_gradient_norms", "bptt starts from torch.ones(states.shape[0], states.shape[1]) (B, T): the second index where the hidden size, shape[2], is meant",
        ("grad = torch.ones_like(states[:, -1])", "grad = torch.ones(states.shape[0], states.shape[1])"))
mistake("ch02", "y02c", "ch02_bptt_gradient_norms", "bptt flips the states to walk forward from the end, states.flip(0) (the batch axis) where the time axis, 1, is meant",
        ("    for t in range(states.shape[1] - 1, -1, -1):           # states[:, t] holds h_{t+1}",
         "    states = states.flip(0)                                # the last step first\n    for t in range(states.shape[1]):"))
mistake("ch02", "y02d", "ch02_clip_grad_norm", "clip_grad_norm scales with g.mul(scale), the out-of-place method (the result thrown away), not mul_",
        ("g.mul_(scale)", "g.mul(scale)"))
mistake("ch02", "y02e", "ch02_clip_grad_norm", "clip_grad_norm keeps the parameters that require a gradient, `if p.requires_grad`, where the docstring skips those whose .grad is None",
        ("grads = [p.grad for p in parameters if p.grad is not None]", "grads = [p.grad for p in parameters if p.requires_grad]"))
variant("ch02", "z02a", "ch02_bptt_gradient_norms", "bptt with tensor methods, grad.mul(1 - h.square()).mm(W_hh), and torch.norm for each norm",
        ("grad = (grad * (1 - states[:, t] ** 2)) @ W_hh", "grad = grad.mul(1 - states[:, t].square()).mm(W_hh)"),
        ("norms.append(torch.linalg.vector_norm(grad))", "norms.append(torch.norm(grad))"))
variant("ch02", "z02b", "ch02_rnn_layer", "rnn_layer loops `for x_t in x.unbind(1)` and stacks with torch.stack(outputs, 1), the time-first layout through movedim",
        ("        x = x.transpose(0, 1)                          # (B, T, D)", "        x = x.movedim(0, 1)                            # (B, T, D)"),
        ("        outputs = outputs.transpose(0, 1)              # (T, B, H)", "        outputs = outputs.movedim(1, 0)                # (T, B, H)"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "y03a", "ch03_lstm_cell", "lstm_cell adds the previous hidden state to the new one, h = o * tanh(c) + h_prev (a skip connection, chapter 5's residual habit)",
        ("h = o * torch.tanh(c) ", "h = o * torch.tanh(c) + h_prev "))
mistake("ch03", "y03b", "ch03_split_gates", "split_gates takes H from the stacked bias at the top, H = len(cell.bias_ih) // 4, before the no-bias branch (a bias-free cell has bias_ih None)",
        ("    Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))", "    H = len(cell.bias_ih) // 4                               # the hidden size, from the stacked bias\n    Wx = dict(zip(GATES, cell.weight_ih.split(H, dim=0)))"),
        ("    Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))", "    Wh = dict(zip(GATES, cell.weight_hh.split(H, dim=0)))"))
mistake("ch03", "y03c", "ch03_lstm_layer", "lstm_layer runs the cell once more after the loop for 'the last states', h_n, c_n = cell(x[:, -1], (h, c)) (the last input read twice)",
        ("return torch.stack(outputs, dim=1), (h.unsqueeze(0), c.unsqueeze(0))",
         "h_n, c_n = cell(x[:, -1], (h, c))            # the last states\n    return torch.stack(outputs, dim=1), (h_n.unsqueeze(0), c_n.unsqueeze(0))"))
mistake("ch03", "y03d", "ch03_lstm_cell", "lstm_cell squashes the concatenation before the candidate's product, torch.tanh(hx) @ W['g'].T + b['g'] (the tanh's parenthesis closed on hx)",
        ('g = torch.tanh(hx @ W["g"].T + b["g"])', 'g = torch.tanh(hx) @ W["g"].T + b["g"]'))
mistake("ch03", "y03e", "ch03_lstm_cell_nobias", "lstm_cell_nobias reuses part 1 with W[k] = [Wh[k] Wx[k]] and zero biases sized torch.zeros(Wx['i'].shape[1]) (the input size D, where the biases are H wide)",
        ('    i = torch.sigmoid(x @ Wx["i"].T + h_prev @ Wh["i"].T)   # (B, H) input gate\n'
         '    f = torch.sigmoid(x @ Wx["f"].T + h_prev @ Wh["f"].T)   # (B, H) forget gate\n'
         '    g = torch.tanh(x @ Wx["g"].T + h_prev @ Wh["g"].T)      # (B, H) candidate cell\n'
         '    o = torch.sigmoid(x @ Wx["o"].T + h_prev @ Wh["o"].T)   # (B, H) output gate\n'
         '    c = f * c_prev + i * g                                  # (B, H)\n'
         '    h = o * torch.tanh(c)                                   # (B, H)\n'
         '    return h, c\n',
         "    W = {k: torch.cat([Wh[k], Wx[k]], dim=1) for k in GATES}   # [W_kh W_kx]: hidden first, as part 1 reads it\n"
         "    b = {k: torch.zeros(Wx['i'].shape[1]) for k in GATES}        # no biases\n"
         "    return lstm_cell(x, h_prev, c_prev, W, b)\n"))
variant("ch03", "z03a", "ch03_lstm_cell", "lstm_cell with the four gates in a dict comprehension over GATES and F.linear per gate, the cell with torch.addcmul",
        code=("def lstm_cell(x, h_prev, c_prev, W, b):\n"
              "    hx = torch.cat((h_prev, x), dim=-1)\n"
              "    pre = {k: F.linear(hx, W[k], b[k]) for k in GATES}\n"
              "    i, f, o = (torch.sigmoid(pre[k]) for k in 'ifo')\n"
              "    g = torch.tanh(pre['g'])\n"
              "    c = torch.addcmul(f * c_prev, i, g)\n"
              "    return o * torch.tanh(c), c\n"))
variant("ch03", "z03b", "ch03_lstm_layer", "lstm_layer takes a given state with h_0.select(0, 0) and returns the final states with h.expand(1, -1, -1)",
        ("h, c = state[0][0], state[1][0]", "h, c = state[0].select(0, 0), state[1].select(0, 0)"),
        ("(h.unsqueeze(0), c.unsqueeze(0))", "(h.expand(1, -1, -1), c.expand(1, -1, -1))"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "y04a", "ch04_gru_cell_textbook", "gru_cell_textbook computes z * h in place, zh = z.mul_(h) ('no new tensor'), and then uses z in (1 - z): the gate is now z * h",
        ("return (1 - z) * h_tilde + z * h                            # (B, H)",
         "zh = z.mul_(h)                                              # z * h, in place\n    return (1 - z) * h_tilde + zh                               # (B, H)"))
mistake("ch04", "y04b", "ch04_count_parameters", "count_parameters picks the blocks with two ifs and an else, if kind == 'lstm': 4 / if kind == 'gru': 3 / else: 1 (the else belongs to the second if: an LSTM gets 1)",
        ('    blocks = {"rnn": 1, "lstm": 4, "gru": 3}[kind]\n',
         '    if kind == "lstm":\n        blocks = 4\n    if kind == "gru":\n        blocks = 3\n    else:\n        blocks = 1\n'))
mistake("ch04", "y04c", "ch04_gru_cell_pytorch", "gru_cell_pytorch resets the hidden product with the update gate, tanh(i_n + z * h_n) (z typed for r; both were just computed)",
        ("n = torch.tanh(i_n + r * h_n)", "n = torch.tanh(i_n + z * h_n)"))
mistake("ch04", "y04d", "ch04_gru_cell_textbook", "gru_cell_textbook multiplies the reset state by W_zh in the candidate (copy slip of the z line; square, so no shape error)",
        ("(r * h) @ W_nh.T", "(r * h) @ W_zh.T"))
mistake("ch04", "y04e", "ch04_count_parameters", "count_parameters sizes the upper layers' input as hidden_size * bidirectional (the flag where the number of directions is meant): 0 for a unidirectional stack",
        ("layer_input = input_size if layer == 0 else hidden_size * directions", "layer_input = input_size if layer == 0 else hidden_size * (bidirectional + 0)"))
variant("ch04", "z04a", "ch04_gru_cell_pytorch", "gru_cell_pytorch interpolates with torch.lerp(n, h, z) (= n + z (h - n))",
        ("return (1 - z) * n + z * h              # (B, H)", "return torch.lerp(n, h, z)              # (B, H)"))
variant("ch04", "z04b", "ch04_count_parameters", "count_parameters with a dict of the tensors' sizes per layer and direction, summed with sum(dict.values())",
        code=("def count_parameters(kind, input_size, hidden_size, num_layers=1, bias=True, bidirectional=False):\n"
              "    gates = {'rnn': 1, 'lstm': 4, 'gru': 3}[kind] * hidden_size\n"
              "    dirs = ('', '_reverse') if bidirectional else ('',)\n"
              "    sizes = {}\n"
              "    for k in range(num_layers):\n"
              "        width = input_size if k == 0 else hidden_size * len(dirs)\n"
              "        for d in dirs:\n"
              "            sizes[f'weight_ih_l{k}{d}'] = gates * width\n"
              "            sizes[f'weight_hh_l{k}{d}'] = gates * hidden_size\n"
              "            if bias:\n"
              "                sizes[f'bias_ih_l{k}{d}'] = gates\n"
              "                sizes[f'bias_hh_l{k}{d}'] = gates\n"
              "    return sum(sizes.values())\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "y05a", "ch05_bilstm_from_cells", "BiLSTMFromCells builds the backward cell on hidden_size inputs, nn.LSTMCell(hidden_size, hidden_size) (a size slip in the copied line)",
        ("self.bwd = nn.LSTMCell(input_size, hidden_size)", "self.bwd = nn.LSTMCell(hidden_size, hidden_size)"))
mistake("ch05", "y05b", "ch05_final_states", "final_states joins the two states with torch.stack(..., dim=-1) ('stack the two final states'): (B, H, 2), not (B, 2H)",
        ("return torch.cat([forward_last, backward_first], dim=-1)", "return torch.stack([forward_last, backward_first], dim=-1)"))
mistake("ch05", "y05c", "ch05_lstm_direction", "lstm_direction marks step t real when t < lengths - 1 ('the last index is lengths - 1'): each sequence's last real step is treated as padding",
        ("real = (t < lengths)", "real = (t < lengths - 1)"))
mistake("ch05", "y05d", "ch05_sentence_classifier", "SentenceClassifier builds its LSTM with 2 * hidden_size ('the head reads 2H, so the LSTM has 2H'): the bidirectional outputs are 4H",
        ("self.rnn = nn.LSTM(embed_size, hidden_size, batch_first=True, bidirectional=True)", "self.rnn = nn.LSTM(embed_size, 2 * hidden_size, batch_first=True, bidirectional=True)"))
mistake("ch05", "y05e", "ch05_residual_stack", "ResidualLSTMStack drops the layer axis of each layer's final state with h_n.squeeze() (all size-1 axes: a batch of one loses its batch axis)",
        ("hs.append(h_n[0])", "hs.append(h_n.squeeze())"),
        ("cs.append(c_n[0])", "cs.append(c_n.squeeze())"))
variant("ch05", "z05a", "ch05_masked_mean", "masked_mean with torch.where(mask, outputs, 0) summed, divided by the mask's count per row",
        ("    total = (outputs * mask.unsqueeze(-1)).sum(dim=1)                     # (B, F)\n    return total / lengths.unsqueeze(1).to(outputs.dtype)                 # (B, F)",
         "    total = torch.where(mask.unsqueeze(-1), outputs, 0.0).sum(dim=1)       # (B, F)\n    return total / mask.sum(dim=1, keepdim=True).to(outputs.dtype)        # (B, F)"))
variant("ch05", "z05b", "ch05_final_states", "final_states takes the two halves with tensor_split and the forward state with take_along_dim over the whole rows",
        code=("def final_states(outputs, lengths):\n"
              "    fwd, bwd = outputs.tensor_split(2, dim=-1)\n"
              "    idx = (lengths - 1).view(-1, 1, 1).expand(-1, 1, fwd.shape[-1])\n"
              "    return torch.cat([torch.take_along_dim(fwd, idx, dim=1)[:, 0], bwd[:, 0]], dim=-1)\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "y06a", "ch06_numericalize", "numericalize maps with list(map(stoi.get, tokens)) (get without its default: an unknown token becomes None)",
        ("ids = [stoi.get(token, UNK_INDEX) for token in tokens]", "ids = list(map(stoi.get, tokens))"))
mistake("ch06", "y06b", "ch06_pad_batch", "pad_batch makes the padded batch with dtype=torch.int ('integers'), which is int32, not the int64 asked",
        ("int(lengths.max())), pad_index, dtype=torch.long)", "int(lengths.max())), pad_index, dtype=torch.int)"))
mistake("ch06", "y06c", "ch06_teacher_forced_loss", "teacher_forced_loss divides the loss by the batch size once more, loss / len(tgt) ('the mean over the batch'), after cross_entropy's mean",
        ("    return loss, logits", "    loss = loss / len(tgt)                              # the mean over the batch\n    return loss, logits"))
mistake("ch06", "y06d", "ch06_greedy_decode", "greedy_decode starts every output list with <sos>, outputs = [[SOS_INDEX] ...] ('the decoder's first token')",
        ("outputs = [[] for _ in range(src.shape[0])]", "outputs = [[SOS_INDEX] for _ in range(src.shape[0])]"))
mistake("ch06", "y06e", "ch06_decoder", "Decoder.step gives the GRU cell the state with a layer axis, d_prev.unsqueeze(0) (nn.GRU's (1, B, H) habit)",
        ("d = self.cell(self.embedding(y_prev), d_prev)", "d = self.cell(self.embedding(y_prev), d_prev.unsqueeze(0))"))
variant("ch06", "z06a", "ch06_encoder", "Encoder runs the GRU on the padded batch without packing (it is causal), zeroes the padded outputs and reads each final state at the last real token",
        code=("class Encoder(nn.Module):\n"
              "    def __init__(self, vocab_size, emb_size, hidden_size):\n"
              "        super().__init__()\n"
              "        self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=PAD_INDEX)\n"
              "        self.rnn = nn.GRU(emb_size, hidden_size, batch_first=True)\n"
              "\n"
              "    def forward(self, src, src_lengths):\n"
              "        out, _ = self.rnn(self.embedding(src))\n"
              "        real = torch.arange(src.shape[1]) < src_lengths[:, None]\n"
              "        out = out * real[..., None]\n"
              "        return out, out[torch.arange(src.shape[0]), src_lengths - 1]\n"))
variant("ch06", "z06b", "ch06_pad_batch", "pad_batch builds each row as a list, seq + [pad_index] * (T - len(seq)), then one torch.tensor",
        code=("def pad_batch(sequences, pad_index=PAD_INDEX):\n"
              "    T = max(len(s) for s in sequences)\n"
              "    rows = [list(s) + [pad_index] * (T - len(s)) for s in sequences]\n"
              "    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in sequences], dtype=torch.long)\n"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "y07a", "ch07_lstm_cell", "LSTMCell lets the output gate scale the candidate, c = f * c_prev + o * g (o typed for i)",
        ("c = f * c_prev + i * g", "c = f * c_prev + o * g"))
mistake("ch07", "y07b", "ch07_encoder", "EncoderRNN runs its loops only up to the longest sentence, Tx = int(src_lengths.max()) ('no need to run past it'): outputs shorter than the source when every sentence is padded",
        ("        B, Tx = src.shape\n", "        B, Tx = src.shape\n        if src_lengths is not None:\n            Tx = int(src_lengths.max())                        # no need to run past the longest sentence\n"))
mistake("ch07", "y07c", "ch07_attention", "Attention sums the tanh energies over their features, energy.sum(-1), where the dot product with v is meant (v never used)",
        ("scores = energy @ self.v", "scores = energy.sum(-1)"))
mistake("ch07", "y07d", "ch07_decoder", "AttnDecoderRNN feeds the LSTM cell [context; h_prev] (the previous state typed for the embedding)",
        ("torch.cat([weighted_encoder, embedded], dim=-1),", "torch.cat([weighted_encoder, h_prev], dim=-1),"))
mistake("ch07", "y07e", "ch07_greedy", "greedy_translate drops the last step's weights, torch.stack(weights[:-1], 1) ('the step that produced <eos> has no token'), where the docstring keeps that row",
        ("return out, torch.stack(weights, dim=1)", "return out, torch.stack(weights[:-1], dim=1)"))
variant("ch07", "z07a", "ch07_attention", "Attention masks with scores.masked_fill(mask == False, float('-inf')) and normalises with F.softmax(..., dim=1)",
        ('scores = scores.masked_fill(~mask, float("-inf"))', 'scores = scores.masked_fill(mask == False, float("-inf"))  # noqa: E712'),
        ("return torch.softmax(scores, dim=-1)", "return F.softmax(scores, dim=1)"))
variant("ch07", "z07b", "ch07_lstm_cell", "LSTMCell squashes f, i, o with one torch.sigmoid over the first 3H columns and cuts them with split(H)",
        ("        f, i, o, g = z.chunk(4, dim=-1)                        # (B, H) each\n        f, i, o = torch.sigmoid(f), torch.sigmoid(i), torch.sigmoid(o)\n",
         "        H = self.hidden_size\n        f, i, o = torch.sigmoid(z[:, :3 * H]).split(H, dim=1)\n        g = z[:, 3 * H:]\n"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "y08a", "ch08_attend", "attend normalises with F.softmin (the completion next to softmax): the largest energies get the smallest weights, and -inf padding overflows",
        ("weights = torch.softmax(energies, dim=-1)", "weights = F.softmin(energies, dim=-1)"))
mistake("ch08", "y08b", "ch08_dot", "dot_attention rebinds enc to its transpose for the product (enc = enc.transpose(1, 2)) and then passes that enc to attend as the values",
        ("    energies = dec @ enc.transpose(1, 2)", "    enc = enc.transpose(1, 2)              # (B, D, Tx)\n    energies = dec @ enc"))
mistake("ch08", "y08c", "ch08_scaled_dot", "scaled_dot_attention takes D as dec[0].numel() ('the size of one decoder vector'): dec[0] is one sentence, Ty * D numbers",
        ("D = dec.shape[-1]", "D = dec[0].numel()"))
mistake("ch08", "y08d", "ch08_bilinear", "bilinear_attention forms d^T W as a broadcast product summed over the wrong axis, (dec.unsqueeze(-1) * W).sum(-1) (B, Ty, Dd), where the sum over Dd (-2) gives dec @ W",
        ("energies = (dec @ W) @ enc.transpose(1, 2)", "energies = (dec.unsqueeze(-1) * W).sum(-1) @ enc.transpose(1, 2)"))
mistake("ch08", "y08e", "ch08_macs", "reduced_rank_macs sums the per_step cost over the target steps with range(1, Ty) (one step fewer)",
        ("    per_step = B * (Ty * keys + queries + dots)", "    per_step = B * sum(keys + R * Dd + Tx * R for t in range(1, Ty))"))
variant("ch08", "z08a", "ch08_reduced_rank", "reduced_rank_attention with torch.einsum for the energies of the two projections",
        ("energies = queries @ keys.transpose(1, 2)", "energies = torch.einsum('btr,bsr->bts', queries, keys)"))
variant("ch08", "z08b", "ch08_macs", "reduced_rank_macs counted per sentence in a helper and multiplied by B at the end",
        code=("def reduced_rank_macs(B, Tx, Ty, Dd, Dh, R):\n"
              "    def sentence(key_passes):\n"
              "        return key_passes * Tx * R * Dh + Ty * R * Dd + Ty * Tx * R\n"
              "    return B * sentence(1), B * sentence(Ty)\n"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "y09a", "ch09_encode", "encode puts the backward state first with list(h_n.flip(1)) (flip of the batch axis where the direction axis, 0, is meant)",
        ("d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1))", "d0 = model.W_h(torch.cat(list(h_n.flip(1)), dim=-1))"),
        ("c0 = model.W_c(torch.cat([c_n[1], c_n[0]], dim=-1))", "c0 = model.W_c(torch.cat(list(c_n.flip(1)), dim=-1))"))
mistake("ch09", "y09b", "ch09_decode_step", "decode_step embeds the previous target token with model.src_embed (encode's line copied)",
        ("y_emb = model.tgt_embed(y_prev)", "y_emb = model.src_embed(y_prev)"))
mistake("ch09", "y09c", "ch09_teacher_forcing", "decode_teacher_forcing calls encode twice, once for h and once for the state, h = encode(...)[0]; state = encode(...)[1]",
        ("    h, state = encode(model, src, src_len)", "    h = encode(model, src, src_len)[0]\n    state = encode(model, src, src_len)[1]"))
mistake("ch09", "y09d", "ch09_masked_loss", "masked_loss finds the padding from the predictions, logits.argmax(-1) != PAD, not from the targets",
        ("    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)",
         "    real = logits.argmax(-1) != PAD                                           # the positions that are not padding\n    return F.cross_entropy(logits[real], tgt_out[real])"))
mistake("ch09", "y09e", "ch09_beam_search", "beam_search keeps each hypothesis' tokens as a tuple, tokens + (tok,) (hashable), and returns tuples where lists of ints are asked",
        ("live = [([], 0.0, start_state)]", "live = [((), 0.0, start_state)]"),
        ("candidates.append((score + lp, tokens + [tok], new_state))", "candidates.append((score + lp, tokens + (tok,), new_state))"))
variant("ch09", "z09a", "ch09_encode", "encode reads the two final states as h_n.flip(0).unbind(0) joined with torch.cat",
        ("d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1))", "d0 = model.W_h(torch.cat(h_n.flip(0).unbind(0), dim=-1))"),
        ("c0 = model.W_c(torch.cat([c_n[1], c_n[0]], dim=-1))", "c0 = model.W_c(torch.cat(c_n.flip(0).unbind(0), dim=-1))"))
variant("ch09", "z09b", "ch09_decode_step", "decode_step masks with torch.where(mask, e, -inf) and takes the context with torch.einsum",
        ('e = e.masked_fill(~mask, float("-inf"))', 'e = torch.where(mask, e, float("-inf"))'),
        ("a = torch.bmm(alpha.unsqueeze(1), h).squeeze(1)", "a = torch.einsum('bs,bsk->bk', alpha, h)"))

CASES = M + OK

# The first failing visible test's message as the student sees it in Jupyter, judged by the rule of trials 22f-22x.
VERDICTS: dict[str, tuple[str, str]] = {
    'ch01-y01a': ('N', "'ManyToOne(x): 11 of 12 entries differ ... every variable that can be compared agrees with the reference's, but the result differs: look at the line that returns it (\"return self.head(out)\")': the return line is named, not the loop; that nn.RNN reads a 2-D (B, D) step as one unbatched sequence of length B is not said (strict reading: M, the return line is right code; lenient: Pa)"),
    'ch01-y01b': ('P', "'ManyToManySync(x): 40 of 60 entries differ ... Likely cause: your values are the expected ones with every negative entry set to 0: a ReLU (or clamp) where none is asked?'"),
    'ch01-y01c': ('P', "at the student's line: 'Expected hidden size (1, 2, 4), got [2, 1, 4] -- h_n.transpose(0, 1) is (2, 1, 4) ...; the state of nn.RNN ... is (num_layers * num_directions, B, H), with batch_first=True too (batch_first orders the input only)'"),
    'ch01-y01d': ('P', "'the loss train_step returns: must be a Python float, got a Python builtin_function_or_method': loss.item without its call (strict reading: Pa, the missing parentheses are not said)"),
    'ch01-y01e': ('P', "'losses of fit(...) ...: `idx` is the first variable whose value differs ...: look at your line \"idx = torch.multinomial(...)\" (... yours calls multinomial and ones ...; the reference's calls randint ...); ... draw it with torch.randint(0, len(x), (batch_size,), generator=g)' (a note on g.seed() in the middle is not the student's)"),
    'ch02-y02a': ('Pa', "at the student's line: 'The size of tensor a (2) must match the size of tensor b (4) ... -- (h_prev @ W_hh).T has shape (4, 2) and x_t @ W_hx.T has shape (2, 4) ...; or, if each row is meant to be one example: W_hx @ x_t.T gives (4, 2) ..., which broadcasts with (h_prev @ W_hh).T (4, 2) as it is': the (H, B) shape of the transposed product is shown; the only fix offered changes the right term (strict reading: M; lenient: P, (4, 2) against (2, 4) shows the .T in the wrong place)"),
    'ch02-y02b': ('Pa', "at the grad line: 'The size of tensor a (4) must match the size of tensor b (3) ... -- `norms` is the first variable whose value differs ... (2.82843 where the reference's is 2.44949), made at your line \"norms = [torch.linalg.vector_norm(grad)]\": it goes wrong before the line that raises': norms[0] = sqrt(B * T) points to the starting gradient, whose line is not named (lenient reading: P; strict: Pa)"),
    'ch02-y02c': ('P', "'bptt_gradient_norms(states, W_hh): 4 of 5 entries differ ... Likely cause: your values are what you get with `range(states.shape[1])` where `range(states.shape[1] - 1, -1, -1)` is needed': the loop runs forward over time (the flip reversed the batch, not time; the norms do not depend on the batch order, so the fix offered is a fix) (strict reading: Pa, flip(0) is not named)"),
    'ch02-y02d': ('P', "'a.grad after clipping ...: Likely cause: your line \"g.mul(scale)\" in clip_grad_norm computes a new value and throws it away ...: write g = g.mul(scale) (or its in-place form g.mul_())'"),
    'ch02-y02e': ('M', "at the sum line: ''NoneType' object has no attribute 'detach' -- Likely cause: this error is what you get with one edit (in clip_grad_norm, the line that computes `grads`): the object itself where one of its attributes is needed (p for p.grad, ...); a value is None: ... an argument that may be None ...': the grads line is named, with a wrong cause first; that `if p.requires_grad` keeps parameters whose .grad is None (the docstring skips them) is not said (lenient reading: Pa)"),
    'ch03-y03a': ('P', "'h (the new hidden state): 8 of 8 entries differ ... `h` is the first variable whose value differs ...: look at your line \"h = o * torch.tanh(c) + h_prev\" (... yours reads `h_prev` and adds (+), which the reference's does not)'"),
    'ch03-y03b': ('Pa', "at the student's line \"H = len(cell.bias_ih) // 4\": PyTorch's \"object of type 'NoneType' has no len()\" with the generic None causes (an in-place method, an argument that may be None, a missing return): the line is named; that a cell without biases has bias_ih None (read H elsewhere, or after the no-bias branch) is not said (lenient reading: P)"),
    'ch03-y03c': ('P', "'h_n (must equal the last output): 8 of 8 entries differ ... look at the line that returns it (...; the reference's reads `c` and `h`, which yours does not)': return the loop's last h and c (strict reading: Pa, the extra cell call is not named)"),
    'ch03-y03d': ('Pa', "'c (the new cell state): 8 of 8 entries differ ... `g` is the first variable whose value differs ...: look at your line \"g = torch.tanh(hx) @ W[\"g\"].T + b[\"g\"]\"': the line named, with no note of what differs (the tanh's parenthesis closes on hx) (lenient reading: P, the line against the formula)"),
    'ch03-y03e': ('P', "at lstm_cell's i line called from lstm_cell_nobias: '... if lstm_cell passed its own test, check what lstm_cell_nobias passes to it -- hx @ W['i'].T has shape (2, 4) and b['i'] has shape (3,)': the zero biases are D wide where H is needed"),
    'ch04-y04a': ('Pa', "'gru_cell_textbook(x, h, ...): 8 of 8 entries differ ... Likely cause: your values are what you get with `1 - z * h` where `1 - z` is needed (in gru_cell_textbook, the returned value)': true of the values (z now holds z * h), but it reads as a precedence slip in the return line, which is right; that z.mul_(h) changed z in place is not said (strict reading: M; lenient: P)"),
    'ch04-y04b': ('P', "'count_parameters('lstm', 10, 20): got 640, expected 2560 ... `blocks` ... gets 2 different values ...: its second, from your line \"blocks = 1\", is one the reference's never gets (a line that runs where it should not: a condition left out ...)': the else runs for an LSTM (strict reading: Pa, if/elif not said)"),
    'ch04-y04c': ('M', "'gru_cell_pytorch(x, h, ...): 7 of 8 entries differ ... Likely cause: The reset gate r adds the update gate z's input and hidden block (the z block where the r block is needed: a copy-paste slip?)': the r line is blamed, which is right; the student's slip is z for r in the candidate (lenient reading: Pa, 'z where r is needed' is the slip, at another line)"),
    'ch04-y04d': ('P', "'gru_cell_textbook(x, h, ...): 8 of 8 entries differ ... Likely cause: your values are what you get with `r * h @ W_zh.T` where `r * h @ W_nh.T` is needed (in gru_cell_textbook, the line that computes `h_tilde`)'"),
    'ch04-y04e': ('P', "'count_parameters('gru', 10, 20, num_layers=2): got 3240, expected 4440 ... `layer_input` ... its second value, from your line \"layer_input = ... hidden_size * (bidirectional + 0)\", is not the reference's second value (0 where the reference's is 20)'"),
    'ch05-y05a': ('P', "at lstm_direction's cell call, called from forward's backward line (self.bwd): 'input has inconsistent input_size: got 3 expected 5 -- ... the RNN was built for another number of input features than the input has: input_size is the size of the input's LAST axis' (strict reading: Pa, the constructor line is not named)"),
    'ch05-y05b': ('P', "'final_states(outputs, lengths): expected shape (3, 4), got (3, 2, 2); one axis more ...: torch.stack makes a new axis, torch.cat joins along an axis the tensors already have (stack where cat was needed?)' (a generic tail about 'another function' follows)"),
    'ch05-y05c': ('M', "'outputs: 10 of 40 entries differ ... the padded steps are right; every wrong entry is elsewhere; ... `h` ... its third value, from your line \"h = torch.where(real, h_new, h)\", is not the reference's third value ...: it goes wrong there (the values it is made from, or what the line does to them)': the where line, which is right, is blamed; that `real` treats each sequence's last real step as padding (t < lengths - 1) is not said (lenient reading: Pa, 'the values it is made from' includes real)"),
    'ch05-y05d': ('M', "at the head line: 'mat1 and mat2 shapes cannot be multiplied (3x16 and 8x2) -- out has shape (3, 6, 16) here, but (3, 6, 8) in the reference ...; it goes wrong at your line \"out, _ = pad_packed_sequence(...)\" -- fix it there': right code is blamed ('fix it there'); the LSTM built with 2 * hidden_size is not named (lenient reading: Pa, 16 = twice 8 points to the LSTM's size)"),
    'ch05-y05e': ('M', "'your line \"h = out if l == 0 else out + h\" in ResidualLSTMStack.forward: Python reads out if l == 0 else out + h as ... (out + h): if you mean (out if l == 0 else out) + h, write the parentheses -- h_n for a batch of one (B=1): expected shape (3, 1, 4), got (3, 4); ... your code calls .squeeze(), which removes EVERY axis of size 1 ...: squeeze only the axis meant': a wrong cause first (a right line's precedence), then the right one (lenient reading: P)"),
    'ch06-y06a': ('M', "'numericalize's return value[3]: must be a Python int, got None (a function that ends without `return` gives None: is the result returned?)': the one cause named is wrong; that stoi.get without a default gives None for an unknown token is not said (lenient reading: Pa, item 3 is the unknown token)"),
    'ch06-y06b': ('P', "'padded: must have dtype torch.int64, got torch.int32'"),
    'ch06-y06c': ('P', "'loss: got 1.74913, expected 3.4983 ... `loss` ... gets 2 different values ...: its second, from your line \"loss = loss / len(tgt)\", is one the reference's never gets (a line that runs where it should not ...)'"),
    'ch06-y06d': ('M', "'your line \"finished[b] = True\" in greedy_decode makes finished[b] again from this step alone ...; keep it, finished[b] = finished[b] or (True) -- greedy_decode's tokens ...: got [[1, 6, 7, 8], ...]; ... an extra first item 1 in each list ...: a start token kept ...': a wrong cause first (a right line blamed), then the right one (lenient reading: P)"),
    'ch06-y06e': ('P', "at the student's line: 'GRUCell: Expected hidden to be 1D or 2D, got 3D instead -- the state has the wrong shape for the cell or LSTM: (B, H) for a cell, (1, B, H) for nn.LSTM' (a squeeze aside follows)"),
    'ch07-y07a': ('Pa', "'c: 8 of 8 entries differ ... Likely cause: your values are what you get if you read the blocks in the order f, o, i, g instead of f, i, o, g; or: the input gate i is computed with the output gate o's block (a copy-paste slip: the o block where the i block is needed)': o where i belongs is said, but at the chunk / gate lines, which are right; the c line is not named (strict reading: M; lenient: P)"),
    'ch07-y07b': ('Pa', "'outputs: expected shape (2, 6, 8), got (2, 5, 8); dimension 1 has 5 instead of 6: one too few (an off-by-one in a range or a slice?) or another size of 5 ...': the time length of outputs is named, not why (Tx cut to the longest sentence); no line (lenient reading: P; strict: N)"),
    'ch07-y07c': ('P', "'weights (with a mask): ... `scores` is the first variable whose value differs ...: look at your line \"scores = energy.sum(-1)\" (... yours calls sum ...; the reference's calls a matrix product (@) ...)'"),
    'ch07-y07d': ('P', "at the student's line: 'AttnDecoderRNN passes its LSTMCell an input of shape (2, 10); it must be [weighted_encoder; embedded] = (B, De + E) = (B, 9): ... your embedded has 4 features, the size of H ... -- ... another variable in place of the right one'"),
    'ch07-y07e': ('P', "'weights (stop once every sentence has produced <eos>): expected shape (2, 3, 4), got (2, 2, 4); dimension 1 has 2 instead of 3: one too few (an off-by-one in a range or a slice?)': the [:-1] slice (strict reading: Pa, no line; that the <eos> row is kept is not said)"),
    'ch08-y08a': ('M', "'weights: contains NaN ...: the first variable that holds NaN is `weights` in attend, made at your line \"weights = F.softmin(...)\" ..., from `energies`, which holds -inf (since your line \"energies = energies.masked_fill(...)\"): a product or a sum with -inf gives NaN ..., so put -inf in only after the last product': the softmin line is named, but the cause given (where the -inf goes in) is wrong and blames the right mask line; softmin for softmax is not said (lenient reading: Pa)"),
    'ch08-y08b': ('P', "at the return line: 'dot_attention passes attend values of shape (2, 5, 4); they must be the encoder states h_s, (B, Tx, Dh) ... -- enc has shape (2, 5, 4) here, but (2, 4, 5) in the reference ...; it goes wrong at your line \"enc = enc.transpose(1, 2)\" -- fix it there'"),
    'ch08-y08c': ('P', "'weights: 18 of 24 entries differ ... Likely cause: your weights are a softmax of the expected energies times 0.5773 = 1/sqrt(Ty) (Ty=3): an extra division by sqrt(Ty)?': D = dec[0].numel() holds Ty * D (strict reading: Pa, the D line is not named)"),
    'ch08-y08d': ('M', "at the student's line: '(dec.unsqueeze(-1) * W).sum(-1) (2, 3, 6) @ enc.transpose(1, 2) (2, 5, 4): a matrix product sums the LAST axis of the left operand (6) against ...; dec.transpose(1, 2) in place of enc.transpose(1, 2) would give (2, 3, 3): which one is your equation (the order of the operands, a transpose, the tensor used)?': guessed causes, none the student's; that the broadcast product is summed over Dh (-1) where Dd (-2) gives dec @ W is not said (lenient reading: Pa, (2, 3, 6) shows the sum left Dd)"),
    'ch08-y08e': ('Pa', "'per_step ...: got 1792, expected 2688 ... `per_step` is the first variable whose value differs ...: look at your line \"per_step = B * sum(... for t in range(1, Ty))\" (... yours calls sum, which the reference's does not)': the line named, not what differs (one step fewer) (lenient reading: P, 1792 = 2688 * 2/3)"),
    'ch09-y09a': ('Pa', "'d0 = W_h [backward h_1; forward h_Tx]: 8 of 8 entries differ ... look at your line \"d0 = model.W_h(torch.cat(list(h_n.flip(1)), dim=-1))\" (... yours calls flip, which the reference's does not)': the line named; that flip(1) reverses the batch, not the directions, is not said (lenient reading: P)"),
    'ch09-y09b': ('P', "'d_1: 8 of 8 entries differ ... `y_emb` is the first variable whose value differs ...: look at your line \"y_emb = model.src_embed(y_prev)\" (... yours calls src_embed, which the reference's does not)'"),
    'ch09-y09c': ('P', "'call encode once per batch (it was called 2 times)'"),
    'ch09-y09d': ('N', "'masked loss: got 1.76059, expected 1.73852 ... every variable that can be compared agrees with the reference's, but the result differs: look at the line that returns it (\"return F.cross_entropy(logits[real], tgt_out[real])\")': the return line, not the mask; that `real` comes from the predictions (logits.argmax) instead of the targets is not said (strict reading: M, 'every variable agrees' and the return line blamed; lenient: Pa)"),
    'ch09-y09e': ('P', "'beam_size=1, max_len=6, alpha=1.0: the tokens of hypothesis 0: must be a Python list, got a tuple of 4 items (build a list, e.g. with .append or list(...))'"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.first_view = report.first_view_past_warnings     # a warning on stderr is not a failure
    report.run_trial(sys.modules[__name__], "/tmp/student_trial_22y", argv)


if __name__ == "__main__":
    main()
