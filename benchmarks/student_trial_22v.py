"""Student trial 22v: an acceptance trial of issue 22, new mistakes and correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed before solutions/ and the catalogues
were read: benchmarks/results/student_trial_22v_plan.md); every planned mistake and variant that repeated, or came
close to, an old mutant, an alternative or an earlier trial's case was replaced by a new one written the same way (the
plan's second table lists what each replaced case repeated). A mistake is one or more edits of one cell's reference
code, ``(old, new)`` pairs whose ``old`` occurs once; a variant rewrites the cell (or edits it) and must keep full marks.
Only the cases and the verdicts live here: building, grading (the class grader, one run per assignment), the Jupyter
view and the report are benchmarks/student_trial.py's and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22v unless --root says otherwise):

    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22v.py --student-view [ch01 ...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22v.py --grade [ch01 ...]
    /work/main/.venv/bin/python benchmarks/student_trial_22v.py --table     # benchmarks/results/student_trial_22v.md's tables
    /work/main/.venv/bin/python benchmarks/student_trial_22v.py --save benchmarks/results/student_trial_22v.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()

# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "v01a", "ch01_many_to_one", "ManyToOne builds its RNN with positional options, nn.RNN(input_size, hidden_size, 1, True) ('one layer, batch first'): the fourth positional argument of nn.RNN is the nonlinearity",
        ("self.rnn = nn.RNN(input_size, hidden_size, batch_first=True)", "self.rnn = nn.RNN(input_size, hidden_size, 1, True)   # one layer, batch first"))
mistake("ch01", "v01b", "ch01_many_to_many_sync", "ManyToManySync runs the RNN one step at a time and detaches the state after each step (truncated BPTT, a habit from language-model tutorials): values right, no gradient through time",
        ("outputs, _ = self.rnn(x)      # (B, T, H)\n",
         "steps, h = [], None\n"
         "        for t in range(x.shape[1]):\n"
         "            out, h = self.rnn(x[:, t:t + 1], h)   # one step, (B, 1, H)\n"
         "            h = h.detach()                        # truncated backprop through time\n"
         "            steps.append(out)\n"
         "        outputs = torch.cat(steps, dim=1)         # (B, T, H)\n"))
mistake("ch01", "v01c", "ch01_one_to_many", "OneToMany builds the inputs with x.new_ones (the autocompleted neighbour of new_zeros): the steps after the first read ones, not zeros",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])", "inputs = x.new_ones(x.shape[0], steps, x.shape[1])"))
mistake("ch01", "v01d", "ch01_many_to_many_async", "ManyToManyAsync hands the decoder the MEAN of the encoder's states over time ('the encoder's summary'), not its final state",
        ("_, h_n = self.encoder(src)            # h_n: (1, B, H), the state after the last source step",
         "enc_out, _ = self.encoder(src)         # (B, Tx, H)\n"
         "        h_n = enc_out.mean(dim=1).unsqueeze(0)  # (1, B, H): the summary of the source"))
mistake("ch01", "v01e", "ch01_fit", "fit makes its generator with torch.Generator(seed) (NumPy's default_rng(seed) habit): the argument of torch.Generator is the device",
        ("    g = torch.Generator().manual_seed(seed)\n    losses = []", "    g = torch.Generator(seed)\n    losses = []"))
variant("ch01", "z01a", "ch01_many_to_one", "ManyToOne reads the last step with outputs.select(1, -1)",
        ("return self.head(outputs[:, -1])", "return self.head(outputs.select(1, -1))"))
variant("ch01", "z01b", "ch01_fit", "fit converts each loss with float() before keeping it",
        ("losses.append(train_step(model, optimizer, x[idx], y[idx]))", "losses.append(float(train_step(model, optimizer, x[idx], y[idx])))"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "v02a", "ch02_rnn_cell", "rnn_cell writes tanh from the sigmoid as 2 sigmoid(z) - 1 (the identity misremembered: it is 2 sigmoid(2z) - 1)",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)   # (B, H)",
         "return 2 * torch.sigmoid(h_prev @ W_hh.T + x_t @ W_hx.T + b_h) - 1   # tanh = 2 sigmoid - 1"))
mistake("ch02", "v02b", "ch02_rnn_layer", "rnn_layer transposes the two weights once before the loop ('not at every step') and hands them to rnn_cell, which transposes them again",
        ("    outputs = []\n    for t in range(T):\n",
         "    W_hx, W_hh = W_hx.T, W_hh.T                    # transposed once, outside the loop\n    outputs = []\n    for t in range(T):\n"))
mistake("ch02", "v02c", "ch02_bptt_gradient_norms", "bptt builds the Jacobian diag(1 - h_t^2) W_hh as the broadcast product (1 - h_t^2) * W_hh (diag(a) M read as a * M)",
        ("grad = (grad * (1 - states[:, t] ** 2)) @ W_hh", "grad = grad @ ((1 - states[:, t] ** 2) * W_hh)   # the Jacobian diag(1 - h^2) W_hh"))
mistake("ch02", "v02d", "ch02_bptt_gradient_norms", "bptt preallocates torch.zeros(T) for the norms (the docstring's T + 1 entries forgotten) and fills them by index",
        ("    norms = [torch.linalg.vector_norm(grad)]\n    for t in range(states.shape[1] - 1, -1, -1):           # states[:, t] holds h_{t+1}\n        grad = (grad * (1 - states[:, t] ** 2)) @ W_hh     # (B, H): dL/dh_t\n        norms.append(torch.linalg.vector_norm(grad))\n    return torch.stack(norms)                              # (T + 1,)",
         "    T = states.shape[1]\n    norms = torch.zeros(T)                                 # one norm per distance k\n    norms[0] = torch.linalg.vector_norm(grad)\n    for t in range(T - 1, -1, -1):                         # states[:, t] holds h_{t+1}\n        grad = (grad * (1 - states[:, t] ** 2)) @ W_hh     # (B, H): dL/dh_t\n        norms[T - t] = torch.linalg.vector_norm(grad)\n    return norms"))
mistake("ch02", "v02e", "ch02_rnn_layer", "rnn_layer returns the Python list of states (the torch.stack forgotten; the transpose back is skipped for batch_first=True)",
        ("    outputs = torch.stack(outputs, dim=1)              # (B, T, H)\n    if not batch_first:\n        outputs = outputs.transpose(0, 1)              # (T, B, H)\n",
         "    if not batch_first:\n        outputs = torch.stack(outputs, dim=0)          # (T, B, H)\n"))
variant("ch02", "z02a", "ch02_rnn_cell", "rnn_cell transposes the weights with .mT",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)", "return torch.tanh(h_prev @ W_hh.mT + x_t @ W_hx.mT + b_h)"))
variant("ch02", "z02b", "ch02_bptt_gradient_norms", "bptt writes the tanh derivative as (1 - h) * (1 + h)",
        ("grad = (grad * (1 - states[:, t] ** 2)) @ W_hh", "grad = (grad * ((1 - states[:, t]) * (1 + states[:, t]))) @ W_hh"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "v03a", "ch03_lstm_cell", "lstm_cell computes the gates with F.linear(hx, W[k].T, b[k]) (the docstring's `hx @ W.T` carried into F.linear, which transposes its weight itself)",
        ("i = torch.sigmoid(hx @ W[\"i\"].T + b[\"i\"])", "i = torch.sigmoid(F.linear(hx, W[\"i\"].T, b[\"i\"]))"),
        ("f = torch.sigmoid(hx @ W[\"f\"].T + b[\"f\"])", "f = torch.sigmoid(F.linear(hx, W[\"f\"].T, b[\"f\"]))"),
        ("g = torch.tanh(hx @ W[\"g\"].T + b[\"g\"])", "g = torch.tanh(F.linear(hx, W[\"g\"].T, b[\"g\"]))"),
        ("o = torch.sigmoid(hx @ W[\"o\"].T + b[\"o\"])", "o = torch.sigmoid(F.linear(hx, W[\"o\"].T, b[\"o\"]))"))
mistake("ch03", "v03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias writes h before c (the order of the docstring's 'Returns (h, c)'): c is used before it is assigned",
        ("    c = f * c_prev + i * g                                  # (B, H)\n    h = o * torch.tanh(c)                                   # (B, H)\n",
         "    h = o * torch.tanh(c)                                   # (B, H)\n    c = f * c_prev + i * g                                  # (B, H)\n"))
mistake("ch03", "v03c", "ch03_split_gates", "split_gates tests `if cell.bias:` where `if not cell.bias:` is meant (the no-bias branch taken for a cell WITH biases)",
        ("    if not cell.bias:\n", "    if cell.bias:\n"))
mistake("ch03", "v03d", "ch03_split_gates", "split_gates cuts the summed bias with view(-1, 4) ('four pieces'), whose rows are 4 wide, not H",
        ("b = dict(zip(GATES, (cell.bias_ih + cell.bias_hh).chunk(4)))", "b = dict(zip(GATES, (cell.bias_ih + cell.bias_hh).view(-1, 4)))"))
mistake("ch03", "v03e", "ch03_lstm_layer", "lstm_layer collects the states with outputs += h (+= on a list extends it with the rows of the tensor)",
        ("        outputs.append(h)\n", "        outputs += h\n"))
variant("ch03", "z03a", "ch03_split_gates", "split_gates cuts the summed bias by iterating over its view(4, -1) rows",
        ("b = dict(zip(GATES, (cell.bias_ih + cell.bias_hh).chunk(4)))", "b = dict(zip(GATES, (cell.bias_ih + cell.bias_hh).view(4, -1)))"))
variant("ch03", "z03b", "ch03_lstm_layer", "lstm_layer returns the final states as torch.stack([h]) and torch.stack([c])",
        ("(h.unsqueeze(0), c.unsqueeze(0))", "(torch.stack([h]), torch.stack([c]))"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "v04a", "ch04_gru_cell_textbook", "gru_cell_textbook cuts the stacked blocks with view(H, 3, -1).unbind(1) ('3 blocks of H rows' written in the other order: every third row)",
        ("W_rx, W_zx, W_nx = weight_ih.split(H)", "W_rx, W_zx, W_nx = weight_ih.view(H, 3, -1).unbind(1)"),
        ("W_rh, W_zh, W_nh = weight_hh.split(H)", "W_rh, W_zh, W_nh = weight_hh.view(H, 3, -1).unbind(1)"),
        ("b_r, b_z, b_n = (bias_ih + bias_hh).split(H)", "b_r, b_z, b_n = (bias_ih + bias_hh).view(H, 3).unbind(1)"))
mistake("ch04", "v04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch returns (h', h') like nn.GRU's (output, h_n), where the docstring asks for h' alone",
        ("return (1 - z) * n + z * h              # (B, H)", "h_new = (1 - z) * n + z * h\n    return h_new, h_new                     # (output, h_n), as nn.GRU returns"))
mistake("ch04", "v04c", "ch04_gru_cell_textbook", "gru_cell_textbook transposes the stacked weights once and splits their columns ('so that x @ W works'), but keeps the .T in the products",
        ("W_rx, W_zx, W_nx = weight_ih.split(H)", "W_rx, W_zx, W_nx = weight_ih.T.split(H, dim=1)"),
        ("W_rh, W_zh, W_nh = weight_hh.split(H)", "W_rh, W_zh, W_nh = weight_hh.T.split(H, dim=1)"))
mistake("ch04", "v04d", "ch04_gru_cell_pytorch", "gru_cell_pytorch transposes the stacked weights with t_() ('in place: no copy'): the products are right, the caller's weight_ih and weight_hh are left transposed",
        ("gi = x @ weight_ih.T + bias_ih", "gi = x @ weight_ih.t_() + bias_ih"),
        ("gh = h @ weight_hh.T + bias_hh", "gh = h @ weight_hh.t_() + bias_hh"))
variant("ch04", "z04a", "ch04_gru_cell_textbook", "gru_cell_textbook unpacks the three blocks from view(3, H, -1)",
        ("W_rx, W_zx, W_nx = weight_ih.split(H)", "W_rx, W_zx, W_nx = weight_ih.view(3, H, -1)"),
        ("W_rh, W_zh, W_nh = weight_hh.split(H)", "W_rh, W_zh, W_nh = weight_hh.view(3, H, -1)"))
variant("ch04", "z04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch takes r and z from one sigmoid over the summed products (the third block thrown away)",
        ("    r = torch.sigmoid(i_r + h_r)            # (B, H)\n    z = torch.sigmoid(i_z + h_z)            # (B, H)\n",
         "    r, z, _ = torch.sigmoid(gi + gh).chunk(3, dim=1)\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "v05a", "ch05_bilstm_from_cells", "BiLSTMFromCells fills lengths=None with a Python list, [T] * B ('every sequence has length T')",
        ("lengths = torch.full((x.shape[0],), x.shape[1], dtype=torch.long)", "lengths = [x.shape[1]] * x.shape[0]            # every sequence has length T"))
mistake("ch05", "v05b", "ch05_final_states", "final_states makes the row index a column, torch.arange(B)[:, None] (NumPy's ix_ habit): the advanced index broadcasts to (B, B)",
        ("rows = torch.arange(B, device=outputs.device)               # (B,)", "rows = torch.arange(B, device=outputs.device)[:, None]       # (B, 1)"))
mistake("ch05", "v05c", "ch05_masked_mean", "masked_mean zeroes with masked_fill(mask, 0) (the mask of REAL steps used as the fill mask: the real steps are zeroed, the padding kept)",
        ("total = (outputs * mask.unsqueeze(-1)).sum(dim=1)", "total = outputs.masked_fill(mask.unsqueeze(-1), 0).sum(dim=1)   # padding zeroed"))
mistake("ch05", "v05d", "ch05_residual_stack", "ResidualLSTMStack stores the dropout probability itself, self.dropout = dropout (a float, not nn.Dropout)",
        ("self.dropout = nn.Dropout(dropout)", "self.dropout = dropout"))
mistake("ch05", "v05e", "ch05_sentence_classifier", "SentenceClassifier adds a row for the padding, nn.Embedding(vocab_size + 1, ...) ('one more for <pad>', a habit from vocabularies without a pad entry)",
        ("self.embed = nn.Embedding(vocab_size, embed_size, padding_idx=0)", "self.embed = nn.Embedding(vocab_size + 1, embed_size, padding_idx=0)   # + 1 for <pad>"))
variant("ch05", "z05a", "ch05_reverse_padded", "reverse_padded as a loop on a clone with flipud of each real prefix",
        code=("def reverse_padded(x, lengths):\n"
              "    y = x.clone()\n"
              "    for b, L in enumerate(lengths.tolist()):\n"
              "        y[b, :L] = x[b, :L].flipud()\n"
              "    return y\n"))
variant("ch05", "z05b", "ch05_lstm_direction", "lstm_direction zeroes the padded outputs by multiplying by the boolean mask",
        ("outputs.append(torch.where(real, h_new, torch.zeros_like(h_new)))", "outputs.append(h_new * real)"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "v06a", "ch06_numericalize", "numericalize adds <eos> with ids.extend(EOS_INDEX) (extend for append: an int is not iterable)",
        ("ids = ids + [EOS_INDEX]", "ids.extend(EOS_INDEX)"))
mistake("ch06", "v06b", "ch06_decoder", "Decoder builds its embedding with max_norm=1.0 (a tutorial's option): the looked-up rows are renormalised, and the weights with them",
        ("self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=PAD_INDEX)", "self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=PAD_INDEX, max_norm=1.0)"))
mistake("ch06", "v06c", "ch06_teacher_forced_loss", "teacher_forced_loss computes the loss inside the loop, one step's at a time (the loss of the LAST step is returned)",
        ("        logits.append(step_logits)\n    logits = torch.stack(logits, dim=1)                 # (B, Ty, V)\n    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), ignore_index=pad_index)\n",
         "        logits.append(step_logits)\n        loss = F.cross_entropy(step_logits, dec_out[:, t], ignore_index=pad_index)\n    logits = torch.stack(logits, dim=1)                 # (B, Ty, V)\n"))
mistake("ch06", "v06d", "ch06_build_vocab", "build_vocab breaks ties with ord(token[0]) ('alphabetical order'), the first character only",
        ("kept.sort(key=lambda token: (-counts[token], token))", "kept.sort(key=lambda token: (-counts[token], ord(token[0])))"))
mistake("ch06", "v06e", "ch06_greedy_decode", "greedy_decode takes logits.max(dim=-1)[0] (torch.max returns (values, indices): the values are fed back as tokens)",
        ("y = logits.argmax(dim=-1)", "y = logits.max(dim=-1)[0]"))
variant("ch06", "z06a", "ch06_numericalize", "numericalize with a conditional expression per token",
        ("ids = [stoi.get(token, UNK_INDEX) for token in tokens]", "ids = [stoi[token] if token in stoi else UNK_INDEX for token in tokens]"))
variant("ch06", "z06b", "ch06_greedy_decode", "greedy_decode reads each row's token with int(y[b])",
        ("for b, token in enumerate(y.tolist()):", "for b in range(len(y)):\n                token = int(y[b])"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "v07a", "ch07_lstm_cell", "LSTMCell squashes the three gates with F.hardsigmoid ('the fast sigmoid' of a mobile-model tutorial)",
        ("f, i, o = torch.sigmoid(f), torch.sigmoid(i), torch.sigmoid(o)", "f, i, o = F.hardsigmoid(f), F.hardsigmoid(i), F.hardsigmoid(o)   # the fast sigmoid"))
mistake("ch07", "v07b", "ch07_encoder", "EncoderRNN returns the decoder's first state as (1, B, Hd) ('like nn.LSTM's h_n'), hidden.unsqueeze(0)",
        ("        return outputs, hidden\n", "        return outputs, hidden.unsqueeze(0)                   # (1, B, Hd), like nn.LSTM's h_n\n"))
mistake("ch07", "v07c", "ch07_attention", "Attention returns its weights as (B, 1, Tx), 'ready for bmm', weights.unsqueeze(1)",
        ("return torch.softmax(scores, dim=-1)                       # (B, Tx)", "return torch.softmax(scores, dim=-1).unsqueeze(1)          # (B, 1, Tx): ready for bmm"))
mistake("ch07", "v07d", "ch07_decoder", "AttnDecoderRNN writes the log-softmax as scores - max (the stabilising shift kept, the normaliser log sum exp forgotten)",
        ("return F.log_softmax(scores, dim=-1), (h, c), weights", "log_probs = scores - scores.max(dim=-1, keepdim=True).values   # log-softmax, stable\n        return log_probs, (h, c), weights"))
mistake("ch07", "v07e", "ch07_greedy", "greedy_translate writes the weights into a preallocated (B, max_len, Tx) tensor and returns it whole (not cut to the steps taken)",
        ("tokens, weights = [], []", "tokens, weights = [], torch.zeros(src.shape[0], max_len, src.shape[1])"),
        ("for _ in range(max_len):", "for step in range(max_len):"),
        ("weights.append(model.last_weights)", "weights[:, step] = model.last_weights"),
        ("return out, torch.stack(weights, dim=1)", "return out, weights"))
variant("ch07", "z07a", "ch07_attention", "Attention scores with (energy * v).sum(-1)",
        ("scores = energy @ self.v", "scores = (energy * self.v).sum(-1)"))
variant("ch07", "z07b", "ch07_decoder", "AttnDecoderRNN takes the context as encoder_outputs^T times the weights as a column",
        ("weighted_encoder = torch.bmm(weights[:, None, :], encoder_outputs)[:, 0]", "weighted_encoder = torch.bmm(encoder_outputs.transpose(1, 2), weights[:, :, None])[:, :, 0]"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "v08a", "ch08_attend", "attend masks additively, energies + (1 - mask) * -inf ('0 at real tokens, -inf at padding'): 0 * -inf is NaN at every real position",
        ("energies = energies.masked_fill(~mask[:, None, :], float(\"-inf\"))", "energies = energies + (1 - mask[:, None, :].float()) * float(\"-inf\")"))
mistake("ch08", "v08b", "ch08_dot", "dot_attention computes the energies with torch.inner(dec, enc) ('the inner products d_t . h_s'): (B, Ty, B, Tx)",
        ("energies = dec @ enc.transpose(1, 2)", "energies = torch.inner(dec, enc)     "))
mistake("ch08", "v08c", "ch08_attend", "attend detaches the weights ('they are for the heatmap') before the contexts are computed from them: values right, no gradient to the energies",
        ("weights = torch.softmax(energies, dim=-1)", "weights = torch.softmax(energies, dim=-1).detach()"))
mistake("ch08", "v08d", "ch08_scaled_dot", "scaled_dot_attention divides with // (floor division typed for /)",
        ("energies = dec @ enc.transpose(1, 2) / math.sqrt(D)", "energies = dec @ enc.transpose(1, 2) // math.sqrt(D)"))
mistake("ch08", "v08e", "ch08_macs", "reduced_rank_macs leaves the queries out of the per_step count",
        ("per_step = B * (Ty * keys + queries + dots)", "per_step = B * (Ty * keys + dots)"))
variant("ch08", "z08a", "ch08_dot", "dot_attention with torch.vmap(torch.mm) over the batch",
        ("energies = dec @ enc.transpose(1, 2)", "energies = torch.vmap(torch.mm)(dec, enc.transpose(1, 2))"))
variant("ch08", "z08b", "ch08_attend", "attend with logical_not, unsqueeze and F.softmax over dim=2",
        ("energies = energies.masked_fill(~mask[:, None, :], float(\"-inf\"))", "energies = energies.masked_fill(mask.logical_not().unsqueeze(1), float(\"-inf\"))"),
        ("weights = torch.softmax(energies, dim=-1)", "weights = F.softmax(energies, dim=2)"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "v09a", "ch09_encode", "encode joins the cell states in reading order, [c_n[0]; c_n[1]], while d_0 has [backward; forward] (the c_0 line written anew)",
        ("c0 = model.W_c(torch.cat([c_n[1], c_n[0]], dim=-1))", "c0 = model.W_c(torch.cat([c_n[0], c_n[1]], dim=-1))"))
mistake("ch09", "v09b", "ch09_decode_step", "decode_step applies the model's dropout to the target embedding too (common NMT practice; the equations have none there)",
        ("y_emb = model.tgt_embed(y_prev)", "y_emb = model.dropout(model.tgt_embed(y_prev))"))
mistake("ch09", "v09c", "ch09_teacher_forcing", "decode_teacher_forcing scales h_proj by 1/sqrt(H) as the course's model does (the exercise's energies are unscaled)",
        ("h_proj = model.W_attProj(h)                                                # (B, Tx, H), once for all steps",
         "h_proj = model.W_attProj(h) / model.hidden_size ** 0.5                    # as the course's model"))
mistake("ch09", "v09d", "ch09_masked_loss", "masked_loss returns the SUM over the real tokens (CS224N's summed log-likelihood), reduction='sum'",
        ("ignore_index=PAD)", "ignore_index=PAD, reduction=\"sum\")"))
mistake("ch09", "v09e", "ch09_beam_search", "beam_search types the length normalisation as score / length * alpha (* for **)",
        ("finished.append((tokens[:-1], score / len(tokens) ** alpha))", "finished.append((tokens[:-1], score / len(tokens) * alpha))"),
        ("finished += [(tokens, score / len(tokens) ** alpha) for tokens, score, _ in live]", "finished += [(tokens, score / len(tokens) * alpha) for tokens, score, _ in live]"))
variant("ch09", "z09a", "ch09_encode", "encode reads the two final states with negative indices, h_n[-1] (backward) and h_n[-2] (forward)",
        ("d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1))", "d0 = model.W_h(torch.cat([h_n[-1], h_n[-2]], dim=-1))"),
        ("c0 = model.W_c(torch.cat([c_n[1], c_n[0]], dim=-1))", "c0 = model.W_c(torch.cat([c_n[-1], c_n[-2]], dim=-1))"))
variant("ch09", "z09b", "ch09_teacher_forcing", "decode_teacher_forcing sizes the first combined output as half the encoder states' size",
        ("o = h.new_zeros(src.shape[0], model.hidden_size)", "o = h.new_zeros(src.shape[0], h.shape[-1] // 2)"))

CASES = M + OK

# The first failing visible test's message as the student sees it in Jupyter, judged by the rule of trials 22f-22u.
VERDICTS: dict[str, tuple[str, str]] = {
    'ch01-v01a': ('Pa', "at the student's line \"self.rnn = nn.RNN(input_size, hidden_size, 1, True)\": PyTorch's own \"Unknown nonlinearity 'True'. Select from 'tanh' or 'relu'\", nothing added (lenient reading: P, the error shows True went to the nonlinearity slot; that batch_first must be a keyword is not said)"),
    'ch01-v01b': ('-', "no visible test fails: the values are right; the detached state only cuts the gradient through time, and no visible test of ManyToManySync looks at it"),
    'ch01-v01c': ('P', "'`inputs` is the first variable whose value differs ...: look at your line \"inputs = x.new_ones(...)\" (... yours calls new_ones, which the reference's does not; the reference's calls new_zeros ...)'"),
    'ch01-v01d': ('P', "'`h_n` is the first variable whose value differs ...: look at your line \"h_n = enc_out.mean(dim=1).unsqueeze(0)\" (yours calls mean, which the reference's does not; the reference's reads `src` and uses self.encoder ...)': the mean named and the encoder's own state pointed to (strict reading: Pa, 'the final state h_n' not said in words)"),
    'ch01-v01e': ('Pa', "at the student's line \"g = torch.Generator(seed)\": PyTorch's own 'Cannot access accelerator device when none is available', nothing added; that torch.Generator's argument is a device and the seed goes to manual_seed is not said (strict reading: N)"),
    'ch02-v02a': ('P', "'every variable that can be compared agrees ..., but the result differs: look at the line that returns it (\"return 2 * torch.sigmoid(...) - 1\"; ... yours calls sigmoid, which no line of the reference's rnn_cell does; yours multiplies (*) and subtracts (-) ...)': the sigmoid expression named as what differs from the tanh"),
    'ch02-v02b': ('P', "raised in rnn_cell: '... W_hx has shape (3, 4) here, but (4, 3) in the reference ...; it goes wrong at your line \"W_hx, W_hh = W_hx.T, W_hh.T\" -- fix it there ..., not at this line'"),
    'ch02-v02c': ('Pa', "at the student's line: 'The size of tensor a (2) must match ... -- 1 - states[:, t] ** 2 has shape (2, 3) and W_hh has shape (3, 3): broadcasting lines shapes up from the RIGHT ...': the line and the broadcast product named, not that diag(1 - h^2) is an element-wise product with the gradient rows, (grad * (1 - h^2)) @ W_hh (lenient reading: P)"),
    'ch02-v02d': ('P', "at the student's line \"norms[T - t] = ...\": 'index 4 is out of bounds for dimension 0 with size 4 -- T - t is 4 here (T = 4, t = 0), but the positions along axis 0 of norms (4,) run from 0 to 3': norms one entry short"),
    'ch02-v02e': ('P', "'outputs of rnn_layer(x, ..., batch_first=True): expected a torch.Tensor, got a list of 5 items'"),
    'ch03-v03a': ('Pa', "at the student's F.linear line: PyTorch's 'mat1 and mat2 shapes cannot be multiplied (2x7 and 4x7) -- a matrix product whose inner sizes differ: a .T missing or one too many, or the wrong matrix?': that F.linear transposes its weight itself is not said (lenient reading: P, 'one too many' is the .T in F.linear; the same reading as 22u's u08c)"),
    'ch03-v03b': ('P', "at the student's line \"h = o * torch.tanh(c)\": 'cannot access local variable 'c' ... -- ... given a value ... only after this line: give it a value on every path'"),
    'ch03-v03c': ('P', "'b must be a dict with the keys i, f, g, o, got None, for a cell WITH biases (cell.bias is True here ...): the test that tells them apart answers wrongly'"),
    'ch03-v03d': ('Pa', "'b must be a dict with the keys i, f, g, o, got the keys ['i', 'f'] (4 blocks of the stacked rows: chunk dimension 0) -- Likely cause: ... (in split_gates, the line that computes `b`): another function in place of the right one (an activation, a reduction, softmax or its log)': the b line and chunk along dimension 0 named; the examples of 'another function' are not view (strict reading: M, the listed functions are guesses; lenient: P)"),
    'ch03-v03e': ('M', "'outputs: expected shape (2, 5, 4), got (4, 10); the same number of entries in another shape (a reshape/view where a transpose was needed?)': a guessed cause the student's code does not have (no reshape, view or transpose; `outputs += h` extends the list with the rows of h); no line named (lenient reading: N)"),
    'ch04-v04a': ('P', "'`W_rx` is the first variable whose value differs ...: look at your line \"W_rx, W_zx, W_nx = weight_ih.view(H, 3, -1).unbind(1)\" (... yours calls unbind, which the reference's does not; the reference's calls split ...)' (strict reading: Pa, that view(H, 3, -1) takes every third row is not said)"),
    'ch04-v04b': ('P', "'gru_cell_pytorch(x, h, ...): expected a torch.Tensor, got a tuple of 2 items': return h' alone (strict reading: Pa, no line)"),
    'ch04-v04c': ('P', "at the reset-gate line: '... W_rx has shape (3, 4) here, but (4, 3) in the reference ...; it goes wrong at your line \"W_rx, W_zx, W_nx = weight_ih.T.split(H, dim=1)\" -- fix it there'"),
    'ch04-v04d': ('P', "at the student's line \"gi = x @ weight_ih.t_() + bias_ih\": 'a leaf Variable that requires grad is being used in an in-place operation. -- an in-place change ... of a parameter or of an input ...: compute a new tensor instead'"),
    'ch05-v05a': ('P', "raised in lstm_direction: \"'<' not supported between instances of 'int' and 'list' -- lstm_direction received ... lengths (list): if lstm_direction passed its own test, check what forward passes to it\": lengths must be a tensor (strict reading: Pa, the lengths=None line is not named)"),
    'ch05-v05b': ('P', "at the cat line: 'forward_last has shape (3, 3, 2) here, but (3, 2) ..., made from rows (3, 1) (the reference's: (3,)); it goes wrong at your line \"rows = torch.arange(B, ...)[:, None]\" -- fix it there'"),
    'ch05-v05c': ('Pa', "'masked_mean: 6 of 6 entries differ ... Likely cause: your values are what you get with `torch.arange(T, ...) >= lengths.unsqueeze(1)` where `... < lengths.unsqueeze(1)` is needed (in masked_mean, the line that computes `mask`)': the effect exactly (the real steps and the padding exchanged), through an equivalent edit of the mask line, which is right; the masked_fill that takes the real-step mask as its fill mask is not named (strict reading: M, right code blamed; lenient: P, flipping the mask line fixes it)"),
    'ch05-v05d': ('P', "at the dropout call: \"'float' object is not callable -- Likely cause: ... (in ResidualLSTMStack.__init__, the line that computes `self.dropout`): another variable in place of a value\": the constructor line named"),
    'ch05-v05e': ('-', "no visible test fails: an embedding with one row more changes neither the shapes nor what the visible tests compare"),
    'ch06-v06a': ('Pa', "at the student's line \"ids.extend(EOS_INDEX)\": \"'int' object is not iterable -- a loop over a number: for t in range(T)\": the line named; the added hint is about loops, not extend/append (strict reading: M, a guessed cause that is not the student's; lenient: P)"),
    'ch06-v06b': ('M', "'state d_1: 8 of 8 entries differ ... `d` is the first variable whose value differs ...: look at your line \"d = self.cell(self.embedding(y_prev), d_prev)\"': the line named is the reference's own line; the cause (max_norm=1.0 in the constructor, which renormalises the looked-up rows) is not said: right code blamed (lenient reading: N)"),
    'ch06-v06c': ('P', "'`loss` is the first variable whose value differs ...: look at your line \"loss = F.cross_entropy(step_logits, dec_out[:, t], ...)\" (... yours reads `step_logits` and `t` ...; the reference's reads `logits` ...)': the loss over all steps' logits"),
    'ch06-v06d': ('-', "no visible test fails: no visible test has two tokens of equal count that share their first character"),
    'ch06-v06e': ('M', "'the tokens of sequence 0[0]: must be a Python int, got a Python float (count with integers: // instead of /, or int(...))': the guessed causes are not the student's (max(dim=-1)[0] takes the values, not the indices); int(...) would turn logit values into wrong tokens (lenient reading: N)"),
    'ch07-v07a': ('P', "'c: 8 of 8 entries differ ... `f` is right where it is first made, and its second value, from your line \"f, i, o = F.hardsigmoid(f), ...\", is not the reference's ...: it goes wrong there': the hardsigmoid line named (strict reading: Pa, that hardsigmoid is not the sigmoid is not said)"),
    'ch07-v07b': ('P', "'hidden: expected shape (2, 5), got (1, 2, 5); an extra dimension of size 1 (index it with [0] or squeeze it)' (strict reading: Pa, no line)"),
    'ch07-v07c': ('P', "'weights: expected shape (2, 6), got (2, 1, 6); an extra dimension of size 1 (index it with [0] or squeeze it)' (strict reading: Pa, no line)"),
    'ch07-v07d': ('P', "'log_probs at step 1: ... Likely cause: your values are raw scores where log-probabilities are expected: apply log_softmax over the last axis': the fix, though the student's values are shifted scores, not raw ones (strict reading: Pa)"),
    'ch07-v07e': ('P', "'weights (stop once every sentence has produced <eos>): expected shape (2, 3, 4), got (2, 6, 4); dimension 1 is 2 times too large (6 instead of 3)': one row per max_len step where one per step taken is asked (strict reading: Pa, no line)"),
    'ch08-v08a': ('M', "'weights: contains NaN ... (the first variable that holds NaN is `energies` in attend, made at your line \"energies = energies + (1 - mask[...].float()) * float(\"-inf\")\" ...) -- Likely cause: this error is what you get with one edit ...: a mask or a condition inverted (~mask for mask, < for >=)': the line is named, then a wrong cause (the mask is not inverted: 0 * -inf is NaN at the real positions) (lenient reading: Pa)"),
    'ch08-v08b': ('P', "'dot_attention passes attend energies of shape (2, 3, 2, 4) ...; it goes wrong at your line \"energies = torch.inner(dec, enc)\" -- fix it there'"),
    'ch08-v08c': ('Pa', "first in Part 5's test (attend's own test and parts 2-4 pass): at the test's backward through reduced_rank_attention: 'element 0 of tensors does not require grad ... -- the result was cut from the graph (torch.no_grad(), .detach(), .item()): keep it a tensor computed from the inputs': .detach() named as a cause, but in the test of a function that has none; attend is not named (strict reading: M, the failure is put on Part 5; lenient: P, the notebook's only .detach() is attend's)"),
    'ch08-v08d': ('P', "'`energies` is the first variable whose value differs ...: look at your line \"energies = dec @ enc.transpose(1, 2) // math.sqrt(D)\" (... the reference's divides (/), which yours does not)'"),
    'ch08-v08e': ('P', "'`per_step` ...: look at your line \"per_step = B * (Ty * keys + dots)\" (... the reference's reads `queries`, which yours does not); ... what you get if you leave out the queries U d_t'"),
    'ch09-v09a': ('P', "'c0 = W_c [backward c_1; forward c_Tx]: ... Likely cause: your values are what you get if you concatenate [forward; backward] instead of [backward c_1; forward c_Tx]'"),
    'ch09-v09b': ('P', "'`y_emb` is the first variable whose value differs ...: look at your line \"y_emb = model.dropout(model.tgt_embed(y_prev))\" (... yours calls dropout, which the reference's does not)'"),
    'ch09-v09c': ('Pa', "'`h_proj` ...: look at your line \"h_proj = model.W_attProj(h) / model.hidden_size ** 0.5\" (Python reads ... as model.W_attProj(h) / (model.hidden_size ** 0.5): if you mean (model.W_attProj(h) / model.hidden_size) ** 0.5, write the parentheses) (... yours divides (/), which the reference's does not)': the line and the extra division named, but after a precedence note with a wrong fix (strict reading: M, a wrong fix offered first; lenient: P)"),
    'ch09-v09d': ('P', "'masked loss: got 10.4311, expected 1.73852 ... Likely cause: your value is 6 times the expected one: what you get if you sum the losses instead of averaging them over the 6 real tokens'"),
    'ch09-v09e': ('M', "'beam_size=3, max_len=6, alpha=0.0: scores: ... got -0, expected -2.64816 ... Likely cause: your values are the expected ones with every negative entry set to 0: a ReLU (or clamp) where none is asked?': a wrong named cause (score / length * alpha is 0 for alpha = 0); the normalisation line is not named (lenient reading: N, alpha=0.0 with scores 0 can lead to the * alpha)"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.trial_main(sys.modules[__name__], "/tmp/student_trial_22v", argv)


if __name__ == "__main__":
    main()
