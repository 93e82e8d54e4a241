"""Student trial 22w: an acceptance trial of issue 22, new mistakes and correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed before solutions/ and the catalogues
were read: benchmarks/results/student_trial_22w_plan.md); every planned mistake and variant that repeated, or came
close to, an old mutant, an alternative or an earlier trial's case was replaced by a new one written the same way (the
plan's second table lists what each replaced case repeated). A mistake is one or more edits of one cell's reference
code, ``(old, new)`` pairs whose ``old`` occurs once; a variant rewrites the cell (or edits it) and must keep full marks.
Only the cases and the verdicts live here: building, grading (the class grader, one run per assignment), the Jupyter
view and the report are benchmarks/student_trial.py's and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22w unless --root says otherwise):

    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22w.py --student-view [ch01 ...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22w.py --grade [ch01 ...]
    /work/main/.venv/bin/python benchmarks/student_trial_22w.py --table     # benchmarks/results/student_trial_22w.md's tables
    /work/main/.venv/bin/python benchmarks/student_trial_22w.py --save benchmarks/results/student_trial_22w.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()


# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "w01a", "ch01_many_to_many_sync", "ManyToManySync gives its head the word and its context, head([h_t; x_t]) ('a tag uses the word itself too'): the head built on H + D features",
        ("self.head = nn.Linear(hidden_size, num_classes)\n", "self.head = nn.Linear(hidden_size + input_size, num_classes)   # the state and the word\n"),
        ("return self.head(outputs)     # (B, T, C)", "return self.head(torch.cat([outputs, x], dim=-1))     # (B, T, C)"))
mistake("ch01", "w01b", "ch01_one_to_many", "OneToMany writes x with inputs[..., 0] = x (the Ellipsis read as 'every leading axis', 0 as the step)",
        ("inputs[:, 0] = x", "inputs[..., 0] = x"))
mistake("ch01", "w01c", "ch01_many_to_many_async", "ManyToManyAsync shifts the target inputs right by one step, a zero vector first ('teacher forcing: the decoder reads y_{t-1}', chapter 6's habit)",
        ("outputs, _ = self.decoder(tgt, h_n)",
         "tgt_in = torch.cat([torch.zeros_like(tgt[:, :1]), tgt[:, :-1]], dim=1)   # the decoder reads y_{t-1}\n"
         "        outputs, _ = self.decoder(tgt_in, h_n)"))
mistake("ch01", "w01d", "ch01_train_step", "train_step adds label_smoothing=0.1 to F.cross_entropy (a tutorial's option for classifiers)",
        ("loss = F.cross_entropy(model(x), y)", "loss = F.cross_entropy(model(x), y, label_smoothing=0.1)"))
mistake("ch01", "w01e", "ch01_train_step", "train_step writes the cross-entropy as nll_loss of log_softmax(..., dim=0) (the softmax over the batch axis)",
        ("loss = F.cross_entropy(model(x), y)", "loss = F.nll_loss(F.log_softmax(model(x), dim=0), y)"))
variant("ch01", "z01a", "ch01_one_to_many", "OneToMany makes its zeros with zeros_like(x)[:, None].repeat(1, steps, 1) (a copy, not a view) and writes x at step 0",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])", "inputs = torch.zeros_like(x)[:, None].repeat(1, steps, 1)"))
variant("ch01", "z01b", "ch01_train_step", "train_step flattens the logits and the labels with view(-1, C) and view(-1) (the sequence-loss habit; a no-op for (B, C))",
        ("loss = F.cross_entropy(model(x), y)", "logits = model(x)\n    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "w02a", "ch02_rnn_cell", "rnn_cell squeezes its result ('drop the size-1 axes to be safe'): a batch of one comes back (H,), not (1, H)",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)", "return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h).squeeze()"))
mistake("ch02", "w02b", "ch02_rnn_layer", "rnn_layer returns (h_last, outputs), the pair in the other order",
        ("    return outputs, h\n", "    return h, outputs\n"))
mistake("ch02", "w02c", "ch02_bptt_gradient_norms", "bptt starts from dL/dh_T = h_T (the gradient of the usual 1/2 ||h_T||^2 example), not from ones",
        ("grad = torch.ones_like(states[:, -1])", "grad = states[:, -1].clone()"))
mistake("ch02", "w02d", "ch02_bptt_gradient_norms", "bptt squares the states in place, 1 - states[:, t].pow_(2) ('no temporary'): the values are right, the caller's states are squared",
        ("grad = (grad * (1 - states[:, t] ** 2)) @ W_hh", "grad = (grad * (1 - states[:, t].pow_(2))) @ W_hh"))
mistake("ch02", "w02e", "ch02_clip_grad_norm", "clip_grad_norm keeps the gradients with `if p.grad` (Python's truthiness for 'is not None')",
        ("grads = [p.grad for p in parameters if p.grad is not None]", "grads = [p.grad for p in parameters if p.grad]"))
variant("ch02", "z02a", "ch02_rnn_layer", "rnn_layer turns a time-first input round with swapaxes (NumPy's name)",
        ("x = x.transpose(0, 1)", "x = x.swapaxes(0, 1)"),
        ("outputs = outputs.transpose(0, 1)", "outputs = outputs.swapaxes(0, 1)"))
variant("ch02", "z02b", "ch02_bptt_gradient_norms", "bptt takes each norm with torch.linalg.norm of the (B, H) gradient (Frobenius by default for a matrix)",
        ("norms = [torch.linalg.vector_norm(grad)]", "norms = [torch.linalg.norm(grad)]"),
        ("norms.append(torch.linalg.vector_norm(grad))", "norms.append(torch.linalg.norm(grad))"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "w03a", "ch03_lstm_cell", "lstm_cell in the column form of the math, W[k] @ hx with hx = [h; x] as columns (H + D, B), and never turned back: h and c come out (H, B)",
        ("hx = torch.cat([h_prev, x], dim=1)", "hx = torch.cat([h_prev, x], dim=1).T"),
        ("i = torch.sigmoid(hx @ W[\"i\"].T + b[\"i\"])", "i = torch.sigmoid(W[\"i\"] @ hx + b[\"i\"][:, None])"),
        ("f = torch.sigmoid(hx @ W[\"f\"].T + b[\"f\"])", "f = torch.sigmoid(W[\"f\"] @ hx + b[\"f\"][:, None])"),
        ("g = torch.tanh(hx @ W[\"g\"].T + b[\"g\"])", "g = torch.tanh(W[\"g\"] @ hx + b[\"g\"][:, None])"),
        ("o = torch.sigmoid(hx @ W[\"o\"].T + b[\"o\"])", "o = torch.sigmoid(W[\"o\"] @ hx + b[\"o\"][:, None])"),
        ("c = f * c_prev + i * g", "c = f * c_prev.T + i * g"))
mistake("ch03", "w03b", "ch03_lstm_cell_nobias", "lstm_cell_nobias squashes the three gates with nn.Sigmoid(z) (the module class called like the function)",
        ("i = torch.sigmoid(x @ Wx[\"i\"].T", "i = nn.Sigmoid(x @ Wx[\"i\"].T"),
        ("f = torch.sigmoid(x @ Wx[\"f\"].T", "f = nn.Sigmoid(x @ Wx[\"f\"].T"),
        ("o = torch.sigmoid(x @ Wx[\"o\"].T", "o = nn.Sigmoid(x @ Wx[\"o\"].T"))
mistake("ch03", "w03c", "ch03_split_gates", "split_gates slices the blocks as weight[n*H:n+1*H] (precedence: the end is n + H, not (n + 1) * H)",
        ("    Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))",
         "    H = cell.hidden_size\n    Wx = {k: cell.weight_ih[n*H:n+1*H] for n, k in enumerate(GATES)}"),
        ("    Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))", "    Wh = {k: cell.weight_hh[n*H:n+1*H] for n, k in enumerate(GATES)}"),
        ("b = dict(zip(GATES, (cell.bias_ih + cell.bias_hh).chunk(4)))", "b = {k: cell.bias_ih[n*H:n+1*H] + cell.bias_hh[n*H:n+1*H] for n, k in enumerate(GATES)}"))
mistake("ch03", "w03d", "ch03_lstm_layer", "lstm_layer loops over x.unbind() ('the steps of x'): unbind's default is dim 0, the batch",
        ("    for t in range(T):\n        h, c = cell(x[:, t], (h, c))", "    for x_t in x.unbind():\n        h, c = cell(x_t, (h, c))"))
mistake("ch03", "w03e", "ch03_lstm_layer", "lstm_layer calls cell.forward(x_t, (h, c)) (the nn.Module habit): a plain function cell has no forward",
        ("h, c = cell(x[:, t], (h, c))", "h, c = cell.forward(x[:, t], (h, c))"))
variant("ch03", "z03a", "ch03_lstm_cell_nobias", "lstm_cell_nobias with torch.addmm(x @ Wx[k].T, h_prev, Wh[k].T) for each gate",
        ("i = torch.sigmoid(x @ Wx[\"i\"].T + h_prev @ Wh[\"i\"].T)", "i = torch.sigmoid(torch.addmm(x @ Wx[\"i\"].T, h_prev, Wh[\"i\"].T))"),
        ("f = torch.sigmoid(x @ Wx[\"f\"].T + h_prev @ Wh[\"f\"].T)", "f = torch.sigmoid(torch.addmm(x @ Wx[\"f\"].T, h_prev, Wh[\"f\"].T))"),
        ("g = torch.tanh(x @ Wx[\"g\"].T + h_prev @ Wh[\"g\"].T)", "g = torch.tanh(torch.addmm(x @ Wx[\"g\"].T, h_prev, Wh[\"g\"].T))"),
        ("o = torch.sigmoid(x @ Wx[\"o\"].T + h_prev @ Wh[\"o\"].T)", "o = torch.sigmoid(torch.addmm(x @ Wx[\"o\"].T, h_prev, Wh[\"o\"].T))"))
variant("ch03", "z03b", "ch03_lstm_layer", "lstm_layer makes its zero states with torch.zeros(..., dtype=x.dtype, device=x.device)",
        ("h = x.new_zeros(B, hidden_size)", "h = torch.zeros(B, hidden_size, dtype=x.dtype, device=x.device)"),
        ("c = x.new_zeros(B, hidden_size)", "c = torch.zeros(B, hidden_size, dtype=x.dtype, device=x.device)"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "w04a", "ch04_gru_cell_textbook", "gru_cell_textbook interpolates with z * x (x typed for h: both are the step's inputs)",
        ("return (1 - z) * h_tilde + z * h", "return (1 - z) * h_tilde + z * x"))
mistake("ch04", "w04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch computes r but writes the candidate without it, n = tanh(i_n + h_n)",
        ("n = torch.tanh(i_n + r * h_n)", "n = torch.tanh(i_n + h_n)"))
mistake("ch04", "w04c", "ch04_count_parameters", "count_parameters sizes each weight with np.prod of its shape: the count comes back a numpy.int64, not a Python int",
        ("def count_parameters(", "import numpy as np\n\n\ndef count_parameters("),
        ("per_direction = blocks * (hidden_size * layer_input + hidden_size * hidden_size)",
         "per_direction = blocks * (np.prod((hidden_size, layer_input)) + np.prod((hidden_size, hidden_size)))   # weight_ih, weight_hh"))
mistake("ch04", "w04d", "ch04_count_parameters", "count_parameters gives a GRU 2 blocks ('a lighter cell with two gates'), not 3 (the candidate is a block too)",
        ("blocks = {\"rnn\": 1, \"lstm\": 4, \"gru\": 3}[kind]", "blocks = {\"rnn\": 1, \"lstm\": 4, \"gru\": 2}[kind]   # a GRU has two gates"))
mistake("ch04", "w04e", "ch04_count_parameters", "count_parameters returns inside the layer loop (return indented one level too deep): only the first layer is counted",
        ("        total += directions * per_direction\n    return total", "        total += directions * per_direction\n        return total"))
variant("ch04", "z04a", "ch04_gru_cell_textbook", "gru_cell_textbook writes the candidate's product as torch.mm(r * h, W_nh.t())",
        ("(r * h) @ W_nh.T", "torch.mm(r * h, W_nh.t())"))
variant("ch04", "z04b", "ch04_count_parameters", "count_parameters picks the number of blocks with a match statement",
        ("    blocks = {\"rnn\": 1, \"lstm\": 4, \"gru\": 3}[kind]\n",
         "    match kind:\n        case \"rnn\":\n            blocks = 1\n        case \"lstm\":\n            blocks = 4\n        case \"gru\":\n            blocks = 3\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "w05a", "ch05_reverse_padded", "reverse_padded reads with x[:, idx] (the (B, T) index meant per row, applied to the time axis of every row)",
        ("    idx = idx.reshape(B, T, *([1] * (x.dim() - 2))).expand_as(x)  # (B, T, ...)\n    return x.gather(1, idx)",
         "    return x[:, idx]                                            # step t of row b reads idx[b, t]"))
mistake("ch05", "w05b", "ch05_final_states", "final_states computes the last index with lengths.sub_(1) ('in place, no copy'): the values are right, the caller's lengths are one less",
        ("last = (lengths - 1).to(outputs.device)", "last = lengths.sub_(1).to(outputs.device)"))
mistake("ch05", "w05c", "ch05_bilstm_from_cells", "BiLSTMFromCells joins the two directions with torch.cat(..., dim=1) ('the second axis'): (B, 2T, H), not (B, T, 2H)",
        ("outputs = torch.cat([out_f, out_b], dim=-1)", "outputs = torch.cat([out_f, out_b], dim=1)"))
mistake("ch05", "w05d", "ch05_masked_mean", "masked_mean finds the real steps as those with a nonzero output, outputs.abs().sum(-1) > 0 ('the padding is zeros'; the docstring says it may not be)",
        ("mask = torch.arange(T, device=outputs.device) < lengths.unsqueeze(1)", "mask = outputs.abs().sum(-1) > 0"))
mistake("ch05", "w05e", "ch05_residual_stack", "ResidualLSTMStack takes each layer's final hidden state as the last column of its padded outputs, out[:, -1]",
        ("            hs.append(h_n[0])\n", "            hs.append(out[:, -1])                                        # the last step's output\n"))
variant("ch05", "z05a", "ch05_lstm_direction", "lstm_direction takes the first step from the cell's default zero state, cell(x[:, 0]), then loops from t = 1 (every sequence has a real first step)",
        code=("def lstm_direction(cell, x, lengths):\n"
              "    B, T, _ = x.shape\n"
              "    h, c = cell(x[:, 0])                       # step 0 is real for every sequence; hx=None means zeros\n"
              "    outputs = [h]\n"
              "    for t in range(1, T):\n"
              "        h_new, c_new = cell(x[:, t], (h, c))\n"
              "        real = (t < lengths).unsqueeze(1)\n"
              "        h = torch.where(real, h_new, h)\n"
              "        c = torch.where(real, c_new, c)\n"
              "        outputs.append(torch.where(real, h_new, torch.zeros_like(h_new)))\n"
              "    return torch.stack(outputs, dim=1), (h, c)\n"))
variant("ch05", "z05b", "ch05_bilstm_from_cells", "BiLSTMFromCells fills lengths=None with x.new_full((B,), T, dtype=torch.long)",
        ("lengths = torch.full((x.shape[0],), x.shape[1], dtype=torch.long)", "lengths = x.new_full((x.shape[0],), x.shape[1], dtype=torch.long)"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "w06a", "ch06_numericalize", "numericalize adds <eos> under `elif add_eos:` (one chain of ifs): with both flags only <sos> is added",
        ("    if add_eos:\n", "    elif add_eos:\n"))
mistake("ch06", "w06b", "ch06_encoder", "Encoder pads the outputs back to total_length=src.shape[0] (the batch size typed for Tx)",
        ("total_length=src.shape[1]", "total_length=src.shape[0]"))
mistake("ch06", "w06c", "ch06_teacher_forced_loss", "teacher_forced_loss splits the targets as tgt[:-1], tgt[1:] (a 1-D sequence's slices on the (B, Ty + 1) batch: rows, not columns)",
        ("dec_in, dec_out = tgt[:, :-1], tgt[:, 1:]", "dec_in, dec_out = tgt[:-1], tgt[1:]"))
mistake("ch06", "w06d", "ch06_greedy_decode", "greedy_decode takes the arg-max with keepdim=True ('keep the shape'): the next input is (B, 1), the tokens one-element lists",
        ("y = logits.argmax(dim=-1)", "y = logits.argmax(dim=-1, keepdim=True)"))
mistake("ch06", "w06e", "ch06_decoder", "Decoder.step calls the GRU cell on the embedding alone, self.cell(emb) (d_prev forgotten: the cell starts from zeros every step)",
        ("d = self.cell(self.embedding(y_prev), d_prev)", "d = self.cell(self.embedding(y_prev))"))
variant("ch06", "z06a", "ch06_pad_batch", "pad_batch sizes the batch with max(map(len, sequences))",
        ("int(lengths.max())", "max(map(len, sequences))"))
variant("ch06", "z06b", "ch06_teacher_forced_loss", "teacher_forced_loss gives cross_entropy the logits as (B, V, Ty), logits.permute(0, 2, 1), and the (B, Ty) targets",
        ("F.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1), ignore_index=pad_index)",
         "F.cross_entropy(logits.permute(0, 2, 1), dec_out, ignore_index=pad_index)"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "w07a", "ch07_lstm_cell", "LSTMCell squashes all four blocks with one sigmoid and then applies tanh to g (the candidate becomes tanh(sigmoid(.)))",
        ("        f, i, o, g = z.chunk(4, dim=-1)                        # (B, H) each\n        f, i, o = torch.sigmoid(f), torch.sigmoid(i), torch.sigmoid(o)\n",
         "        f, i, o, g = torch.sigmoid(z).chunk(4, dim=-1)         # the gates, squashed at once\n"))
mistake("ch07", "w07b", "ch07_encoder", "EncoderRNN joins the two final states with torch.cat without dim= (dim 0: (2B, H))",
        ("hidden = self.fc(torch.cat([h_left, h_right], dim=-1))", "hidden = self.fc(torch.cat([h_left, h_right]))"))
mistake("ch07", "w07c", "ch07_attention", "Attention fills the padded energies with -1e-9 (a typo for -1e9: almost zero, so padding keeps its weight)",
        ("scores = scores.masked_fill(~mask, float(\"-inf\"))", "scores = scores.masked_fill(~mask, -1e-9)   # a very negative number"))
mistake("ch07", "w07d", "ch07_greedy", "greedy_translate sets done = y == eos_index at every step (not accumulated): it stops only when all sentences emit <eos> at the same step",
        ("done |= y == eos_index", "done = y == eos_index"))
mistake("ch07", "w07e", "ch07_decoder", "AttnDecoderRNN embeds y_prev.unsqueeze(1) ('one time step', the batch-first (B, 1) habit): embedded is (B, 1, E)",
        ("embedded = self.embedding(y_prev)", "embedded = self.embedding(y_prev.unsqueeze(1))"))
variant("ch07", "z07a", "ch07_attention", "Attention fills where mask == 0 (a bool mask compared with 0)",
        ("scores.masked_fill(~mask, ", "scores.masked_fill(mask == 0, "))
variant("ch07", "z07b", "ch07_greedy", "greedy_translate updates done out of place, done = done (bitwise or) y.eq(eos_index)",
        ("done |= y == eos_index", "done = done | y.eq(eos_index)"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "w08a", "ch08_attend", "attend fills the padded energies with float('inf') (the minus sign dropped)",
        ("float(\"-inf\")", "float(\"inf\")"))
mistake("ch08", "w08b", "ch08_dot", "dot_attention calls attend on its last line but does not return it ('finish with your attend'): the function returns None",
        ("    return attend(energies, enc, mask)", "    attend(energies, enc, mask)"))
mistake("ch08", "w08c", "ch08_scaled_dot", "scaled_dot_attention takes D = len(dec) ('the length of the vector'): len of a (B, Ty, D) tensor is B",
        ("D = dec.shape[-1]", "D = len(dec)"))
mistake("ch08", "w08d", "ch08_reduced_rank", "reduced_rank_attention computes the keys under torch.no_grad() ('computed once, a constant'): the values are right, no gradient reaches V or enc through the keys",
        ("    keys = enc @ V.T", "    with torch.no_grad():                        # the keys are computed once: a constant\n        keys = enc @ V.T"))
variant("ch08", "z08a", "ch08_dot", "dot_attention zeroes the padded energies before attend (which masks them anyway)",
        ("energies = dec @ enc.transpose(1, 2)", "energies = (dec @ enc.transpose(1, 2)) * mask[:, None, :]"))
variant("ch08", "z08b", "ch08_macs", "reduced_rank_macs writes per_step as once plus the keys of the other Ty - 1 steps",
        ("per_step = B * (Ty * keys + queries + dots)", "per_step = once + B * (Ty - 1) * keys"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "w09a", "ch09_encode", "encode joins the two final states with torch.cat without dim= (dim 0: (2B, H))",
        ("d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1))", "d0 = model.W_h(torch.cat([h_n[1], h_n[0]]))"),
        ("c0 = model.W_c(torch.cat([c_n[1], c_n[0]], dim=-1))", "c0 = model.W_c(torch.cat([c_n[1], c_n[0]]))"))
mistake("ch09", "w09b", "ch09_teacher_forcing", "decode_teacher_forcing makes the mask a float, (src != PAD).float() (the multiply-by-mask habit)",
        ("mask = src != PAD", "mask = (src != PAD).float()"))
mistake("ch09", "w09c", "ch09_teacher_forcing", "decode_teacher_forcing joins the combined outputs with torch.cat(outputs, dim=1) (cat for stack: (B, Ty * H))",
        ("return model.W_vocab(torch.stack(outputs, dim=1))", "return model.W_vocab(torch.cat(outputs, dim=1))"))
mistake("ch09", "w09d", "ch09_beam_search", "beam_search ranks the candidates with sorted(candidates, ...) and drops the result (sorted returns a new list): the first candidates in order of generation are kept",
        ("candidates.sort(key=lambda cand: -cand[0])", "sorted(candidates, key=lambda cand: -cand[0])"))
mistake("ch09", "w09e", "ch09_beam_search", "beam_search finishes the live hypotheses at max_len with their raw sums ('they did not finish: no length to normalise by')",
        ("finished += [(tokens, score / len(tokens) ** alpha) for tokens, score, _ in live]", "finished += [(tokens, score) for tokens, score, _ in live]"))
variant("ch09", "z09a", "ch09_teacher_forcing", "decode_teacher_forcing starts the combined output from torch.zeros_like(state[0]) (d_0's shape)",
        ("o = h.new_zeros(src.shape[0], model.hidden_size)", "o = torch.zeros_like(state[0])"))
variant("ch09", "z09b", "ch09_beam_search", "beam_search sorts the candidates with key=score and reverse=True (stable, like the negated key)",
        ("candidates.sort(key=lambda cand: -cand[0])", "candidates.sort(key=lambda cand: cand[0], reverse=True)"))

CASES = M + OK

# The first failing visible test's message as the student sees it in Jupyter, judged by the rule of trials 22f-22v.
VERDICTS: dict[str, tuple[str, str]] = {
    'ch01-w01a': ('P', "'every variable that can be compared agrees ..., but the result differs: look at the line that returns it (\"return self.head(torch.cat([outputs, x], dim=-1))\"; ... yours calls cat, which no line of the reference's ManyToManySync.forward does; yours reads `x`, which the reference's does not)': the extra input x and the cat named (strict reading: Pa, the head's size in __init__ is not said)"),
    'ch01-w01b': ('M', "at the student's line \"inputs[..., 0] = x\": PyTorch's 'expanded size ... (5) must match ... (3)' -- 'inputs[..., 0] has shape (2, 5) but x has shape (2, 3): inputs was made with other sizes than what is written into it (inputs is (2, 5, 3)): check the line that creates it (made like another tensor, e.g. empty_like(x) ...?)': the creating line, which is right, is blamed; that [..., 0] picks feature 0 of every step (B, steps) where step 0, inputs[:, 0], is meant is not said (lenient reading: Pa, the shapes show what [..., 0] selects)"),
    'ch01-w01c': ('P', "'`outputs` is the first variable whose value differs ...: look at your line \"outputs, _ = self.decoder(tgt_in, h_n)\" (... the reference's reads `tgt`, which yours does not); that line also reads `tgt_in` (your line \"tgt_in = torch.cat([torch.zeros_like(tgt[:, :1]), tgt[:, :-1]], dim=1)\"), which has no counterpart ...: the wrong value may come from it': the shift named; the decoder reads tgt itself"),
    'ch01-w01d': ('Pa', "'loss of the first step (before the update): got 1.08141, expected 1.0733 ... `loss` is the first variable whose value differs ...: look at your line \"loss = F.cross_entropy(model(x), y, label_smoothing=0.1)\"': the line named, with no note of what differs (the label_smoothing option is not named, as the extra call is in w01e) (lenient reading: P, the option is the line's only departure)"),
    'ch01-w01e': ('P', "'look at your line \"loss = F.nll_loss(F.log_softmax(model(x), dim=0), y)\" (... yours calls log_softmax and nll_loss, which the reference's does not; the reference's calls cross_entropy ...)': going back to F.cross_entropy fixes it (strict reading: Pa, dim=0 (the batch axis) is not named)"),
    'ch02-w02a': ('P', "'rnn_cell for a batch of one (B=1): ... expected shape (1, 4), got (4,); your values are right but a dimension of size 1 is missing (unsqueeze it)': the batch axis that .squeeze() removes (strict reading: Pa, the squeeze line is not named)"),
    'ch02-w02b': ('P', "'outputs of rnn_layer(...): expected shape (2, 5, 4), got (2, 4) ... Likely cause: ... (in rnn_layer, the returned value): two items in the wrong order; ...': the first named cause is the student's"),
    'ch02-w02c': ('P', "'`grad` is the first variable whose value differs ...: look at your line \"grad = states[:, -1].clone()\" (... the reference's calls ones_like, which yours does not)'"),
    'ch02-w02d': ('P', "'bptt_gradient_norms's argument states was changed by your function: 24 of 24 entries differ after the call ...; it writes into its input (an in-place operation such as x[...] = ..., +=, masked_fill_ ...): compute a new tensor': the student's only in-place call is pow_ (strict reading: Pa, the line is not named)"),
    'ch02-w02e': ('P', "at the student's line \"grads = [p.grad for p in parameters if p.grad]\": 'Boolean value of Tensor with more than one value is ambiguous -- a tensor of several values used as one True or False (`if t:` ...)': the `if p.grad` named by its pattern; `is not None` follows"),
    'ch03-w03a': ('P', "'h: expected shape (2, 4), got (4, 2); the same sizes in another order: axes swapped (... a transpose or permute missing or one too many ...)': the column form never turned back (strict reading: Pa, no line)"),
    'ch03-w03b': ('Pa', "at the student's line \"i = nn.Sigmoid(x @ Wx[...] ...)\": PyTorch's 'Sigmoid.__init__() takes 1 positional argument but 2 were given' -- 'more positional arguments than the call takes: sizes go in one tuple (torch.zeros((B, H)) ...), options by name': the line and __init__ named; the added hint (sizes in a tuple) is beside the point; that nn.Sigmoid is a module class to build first, or torch.sigmoid the function, is not said (strict reading: M, a guessed cause; lenient: P, __init__ in the error shows a class was built)"),
    'ch03-w03c': ('M', "'Wx['f']: expected shape (2, 3), got (1, 3); dimension 0 holds ONE entry where 2 are expected: one value kept where one per example, step or position is meant (an index on the wrong axis, x[:, 0] where x[0] is meant; a list appended once, after the loop; or a variable overwritten at every step?)': guessed causes, none the student's; no line; the slice bound n*H:n+1*H (read n + H) is not named (lenient reading: Pa, Wx['f'] and its one row point to the slice)"),
    'ch03-w03d': ('P', "at the student's line \"h, c = cell(x_t, (h, c))\": 'Input batch size 5 doesn't match hidden0 batch size 2 -- Likely cause: ... an axis left out of an index (x[t] where x[:, t] is needed: the batch axis indexed) ...; step t of a batch-first x is x[:, t] (x[t] is example t)': the loop reads examples, not steps, which is what unbind() does (strict reading: Pa, unbind's default dim 0 is not named)"),
    'ch03-w03e': ('Pa', "at the student's line \"h, c = cell.forward(x[:, t], (h, c))\": Python's own \"'function' object has no attribute 'forward'\", nothing added (lenient reading: P, calling the cell directly is the obvious fix)"),
    'ch04-w04a': ('P', "at the student's line \"return (1 - z) * h_tilde + z * x\": 'The size of tensor a (4) must match ... (3) -- z has shape (2, 4) and x has shape (2, 3) ...': the term z * x and x's size named; x typed for h (strict reading: Pa, that h is meant is not said)"),
    'ch04-w04b': ('P', "'Likely cause: your values are what you get with `h_n` where `r * h_n` is needed (in gru_cell_pytorch, the line that computes `n`)'"),
    'ch04-w04c': ('P', "'count_parameters('rnn', 10, 20): must be a Python int, got a numpy.int64 (convert it with int(...))'"),
    'ch04-w04d': ('P', "'count_parameters('gru', 10, 20): got 1280, expected 1920 ... `blocks` is the first variable whose value differs ... (2 where the reference's is 3): look at your line \"blocks = {... \"gru\": 2}[kind]\"'"),
    'ch04-w04e': ('P', "'count_parameters('gru', 3, 6) gives the same result for num_layers=2 and num_layers=1 ... Likely cause: ... (in count_parameters, the loop over `layer`): a line indented into a loop, or out of it (a return, a break or an update in the wrong place)'"),
    'ch05-w05a': ('M', "'reverse_padded(x, lengths): expected shape (3, 5), got (3, 3, 5); an extra axis 0 of size 3: every step kept where one is asked (index it), or a reduction over it missing?': guessed causes, none the student's (x[:, idx] applies every row's index to every row); no line (lenient reading: N)"),
    'ch05-w05b': ('N', "'final_states of a batch of one (B=1): 2 of 4 entries differ; first at index (0, 0): got 32, expected 36 ... Likely cause: the wrong entries are only at indices [0, 1] of dimension 1': the forward half of a later call is wrong because the first call's lengths.sub_(1) changed the caller's lengths; that the argument lengths was changed is not said (the check that compares inputs before and after names states in w02d, not lengths here) (lenient reading: Pa, the forward half points to the `last` line)"),
    'ch05-w05c': ('P', "'outputs: expected shape (2, 4, 10), got (2, 8, 5); ... 2 parts joined along dimension 1 where dimension 2 is asked (torch.cat(..., dim=2)?)'"),
    'ch05-w05d': ('P', "'masked_mean: 6 of 6 entries differ ... Likely cause: your values are what you get if you sum over every step, the padding included': the student's nonzero test keeps the padding, which is not zero (strict reading: Pa, the mask line is not named)"),
    'ch05-w05e': ('P', "'h_n of the stack: 12 of 24 entries differ ... Likely cause: your values are what you get if you take each layer's final state from the last (padded) position of its outputs'"),
    'ch06-w06a': ('M', "'numericalize(list('nab'), stoi, add_sos=True, add_eos=True) ...: got [1, 5, 4, 6], expected [1, 5, 4, 6, 2]; ... the last expected item is missing: a loop or range that stops one step early, a slice that ends one item early (x[:k - 1] for x[:k]), or the last step not kept?': guessed causes, none the student's (`elif add_eos` skips <eos> when add_sos is set) (lenient reading: Pa, the call with both flags and the missing <eos> are shown)"),
    'ch06-w06b': ('P', "at the student's line \"... total_length=src.shape[0])\": 'Expected total_length to be at least the length of the longest sequence ..., but got total_length=3 and max sequence length being 5 -- Likely cause: ... another number (an index, axis, size or count off?) ...': shape[0] is the batch, the length is shape[1]"),
    'ch06-w06c': ('P', "at the loss line: '... dec_out has shape (1, 5) here, but (2, 4) in the reference solution ...; it goes wrong at your line \"dec_in, dec_out = tgt[:-1], tgt[1:]\" -- fix it there ...'"),
    'ch06-w06d': ('P', "'the tokens of sequence 0[0]: must be a Python int, got a list of 1 item': each token a one-item list, from the (B, 1) arg-max that keepdim=True makes (strict reading: Pa, no line)"),
    'ch06-w06e': ('P', "'state d_1: 8 of 8 entries differ ... Likely cause: your values are what you get with `self.cell(self.embedding(y_prev))` where `self.cell(self.embedding(y_prev), d_prev)` is needed (in Decoder.step, the line that computes `d`)'"),
    'ch07-w07a': ('P', "'c: 8 of 8 entries differ ... `f` is the first variable whose value differs ...: look at your line \"f, i, o, g = torch.sigmoid(z).chunk(4, dim=-1)\" (... yours calls sigmoid, which the reference's does not)': the sigmoid over all four blocks named (strict reading: Pa, that g then gets tanh(sigmoid(.)) is not said)"),
    'ch07-w07b': ('P', "at the student's line \"hidden = self.fc(torch.cat([h_left, h_right]))\": '... self.fc is an nn.Linear built for 8 input features, but the tensor you give it has 4 on its last axis (the parts joined: h_left 4 + h_right 4 = 8): give it the tensor it was built for': the parts must be joined on the features (strict reading: Pa, dim=-1 is not named)"),
    'ch07-w07c': ('P', "'weights: masked (padded) positions get weight up to 0.1957; they must get exactly 0: set their energies to -inf before the softmax'"),
    'ch07-w07d': ('Pa', "'the number of decoding steps (stop as soon as EVERY sentence has produced <eos>: after step 3 here, not before, not later): got 6, expected 3': the stop named, not why it comes late (done is overwritten at every step instead of accumulated with |=) (lenient reading: P, 'EVERY sentence has produced' leads to the done update)"),
    'ch07-w07e': ('P', "at the LSTM-cell line: '... embedded has shape (2, 1, 3) here, but (2, 3) in the reference ...; it goes wrong at your line \"embedded = self.embedding(y_prev.unsqueeze(1))\" -- fix it there'"),
    'ch08-w08a': ('P', "'weights: contains NaN ...: a softmax gives NaN over entries that are all -inf, or over entries of which one is +inf (a mask filled with float('inf') where float('-inf') is meant) ...': the student's edit named (the line named is the softmax's, not the masked_fill's)"),
    'ch08-w08b': ('P', "'dot_attention's return value (weights, contexts): must be a Python tuple, got None': the missing return (strict reading: Pa, no line)"),
    'ch08-w08c': ('P', "'weights: ... Likely cause: your values are what you get with `dec.shape[0]` where `dec.shape[-1]` is needed (in scaled_dot_attention, the line that computes `D`)': len(dec) is dec.shape[0]"),
    'ch08-w08d': ('P', "'the gradient of a loss of the contexts with respect to V (through the keys V h_s): no gradient arrived (it is None): the result was computed outside the autograd graph (torch.no_grad(), .detach(), ...)'"),
    'ch09-w09a': ('M', "at the student's line \"d0 = model.W_h(torch.cat([h_n[1], h_n[0]]))\": 'mat1 and mat2 shapes cannot be multiplied (4x4 and 8x4) -- model.W_h is an nn.Linear from 8 features to 4, and the tensor you give it has 4 on its last axis, its OUTPUT size: that tensor already went through model.W_h (or a layer like it) -- model.W_h applied twice? give it the 8-feature tensor, once': a named wrong cause (W_h applied twice); the cat without dim (rows joined, (2B, H)) is not said (lenient reading: Pa, the line is named)"),
    'ch09-w09b': ('P', "at the decode_step call: '~ (operator.invert) is only implemented on integer and Boolean-type tensors -- ~ negates a bool mask only: this tensor holds floats (a mask of 0.0/1.0 ...); build the mask as bool (...or .bool())': the float mask (strict reading: Pa, the mask line itself is not named)"),
    'ch09-w09c': ('Pa', "at the student's line \"return model.W_vocab(torch.cat(outputs, dim=1))\": 'mat1 and mat2 shapes cannot be multiplied (2x16 and 4x6) -- model.W_vocab is an nn.Linear built for 4 input features, but the tensor you give it has 16 ...: give it the tensor it was built for ..., or, if you built the layer yourself, build it with in_features=16': the line and the sizes named; that cat joined the Ty steps into the features where stack is meant is not said (strict reading: M, in_features=16 offered as a fix; lenient: P, 16 = 4 steps x 4)"),
    'ch09-w09d': ('M', "'beam_size=1, max_len=6, alpha=1.0: hypotheses [[0, 0, 0, 0, 0, 0]], expected [[5, 3, 3, 5]]; every token ... below beam_size=1 ...: the RANK of a candidate ... taken for its token id ..., or a beam that keeps the worst candidates (sorted lowest first, or nsmallest ...)?': guessed causes, none the student's (the candidates are never sorted: sorted(...) returns a list the code drops); no line (lenient reading: Pa, 'sorted' leads to the sort line)"),
    'ch09-w09e': ('P', "'beam_size=2, max_len=3, alpha=0.5: scores: ... got -1.54224, expected -0.890413 ... Likely cause: ... (in beam_search, the line that computes `finished`): a term or a factor left out; ...': the normalisation factor left out in the line that finishes the live hypotheses (strict reading: Pa, which factor is not said)"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.first_view = report.first_view_past_warnings     # a warning on stderr is not a failure
    report.run_trial(sys.modules[__name__], "/tmp/student_trial_22w", argv)


if __name__ == "__main__":
    main()
