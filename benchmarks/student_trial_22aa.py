"""Student trial 22aa: an acceptance trial of issue 22, new mistakes and correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed before solutions/ and the catalogues
were read: benchmarks/results/student_trial_22aa_plan.md); every planned mistake and variant repeated, or came close
to, an old mutant, an alternative or an earlier trial's case, and was replaced by a new one written the same way where
one could be found (the plan's second table lists what each replaced case repeated; slots with no new case were left
empty). A mistake is one or more edits of one cell's reference code, ``(old, new)`` pairs whose ``old`` occurs once; a
variant rewrites the cell (or edits it) and must keep full marks. Only the cases and the verdicts live here: building,
grading (the class grader, one run per assignment), the Jupyter view and the report are benchmarks/student_trial.py's
and student_trial_22d.py's (``run_trial``).

Run from the repository root (results in /tmp/student_trial_22aa unless --root says otherwise):

    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22aa.py --student-view [ch01 ...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22aa.py --grade [ch01 ...]
    /work/main/.venv/bin/python benchmarks/student_trial_22aa.py --table     # benchmarks/results/student_trial_22aa.md's tables
    /work/main/.venv/bin/python benchmarks/student_trial_22aa.py --save benchmarks/results/student_trial_22aa.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()


# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "a01a", "ch01_many_to_one", "ManyToOne passes num_classes as nn.RNN's third positional argument, nn.RNN(input_size, hidden_size, num_classes, batch_first=True) (the constructor's arguments read like nn.Linear's): it is num_layers, so the RNN has C stacked layers",
        ("self.rnn = nn.RNN(input_size, hidden_size, batch_first=True)", "self.rnn = nn.RNN(input_size, hidden_size, num_classes, batch_first=True)"))
mistake("ch01", "a01b", "ch01_many_to_many_sync", "ManyToManySync passes an explicit zero initial state, x.new_zeros(1, x.shape[1], H) ('(1, B, H) like h_n'), with the time axis x.shape[1] typed for the batch",
        ("outputs, _ = self.rnn(x)", "outputs, _ = self.rnn(x, x.new_zeros(1, x.shape[1], self.rnn.hidden_size))"))
mistake("ch01", "a01c", "ch01_one_to_many", "OneToMany builds its inputs as torch.stack([x] + [torch.zeros_like(x)] * steps - 1, dim=1) (the parentheses around steps - 1 left out: a list minus an int)",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])  # (B, steps, D), all zeros", "inputs = torch.stack([x] + [torch.zeros_like(x)] * steps - 1, dim=1)  # (B, steps, D)"),
        ("        inputs[:, 0] = x                                     # x only at the first step\n", ""))
mistake("ch01", "a01d", "ch01_many_to_many_async", "ManyToManyAsync runs the decoder on src (the encoder's line copied, only the module renamed): the decoder reads the source, not the target-side inputs",
        ("outputs, _ = self.decoder(tgt, h_n)", "outputs, _ = self.decoder(src, h_n)"))
mistake("ch01", "a01e", "ch01_fit", "fit draws its batches from a shuffling DataLoader(TensorDataset(x, y), batch_size, shuffle=True, generator=g) (the usual PyTorch loop), epoch after epoch: batches without replacement, not the docstring's randint draws",
        ("    losses = []\n"
         "    for _ in range(steps):\n"
         "        idx = torch.randint(0, len(x), (batch_size,), generator=g)   # (batch_size,)\n"
         "        losses.append(train_step(model, optimizer, x[idx], y[idx]))\n",
         "    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch_size,\n"
         "                                         shuffle=True, generator=g)\n"
         "    batches = iter(loader)\n"
         "    losses = []\n"
         "    for _ in range(steps):\n"
         "        try:\n"
         "            xb, yb = next(batches)\n"
         "        except StopIteration:          # a new epoch\n"
         "            batches = iter(loader)\n"
         "            xb, yb = next(batches)\n"
         "        losses.append(train_step(model, optimizer, xb, yb))\n"))
variant("ch01", "b01a", "ch01_train_step", "train_step gives F.cross_entropy the log-probabilities, cross_entropy(log_softmax(model(x)), y) (log_softmax of log-probabilities changes nothing)",
        ("loss = F.cross_entropy(model(x), y)", "loss = F.cross_entropy(F.log_softmax(model(x), dim=-1), y)"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "a02a", "ch02_rnn_layer", "rnn_layer copies a given h0 with h0.clone().detach() ('do not touch the caller's tensor', PyTorch's own advice for copies): no gradient reaches h0",
        ("h = x.new_zeros(B, W_hh.shape[0]) if h0 is None else h0", "h = x.new_zeros(B, W_hh.shape[0]) if h0 is None else h0.clone().detach()"))
mistake("ch02", "a02b", "ch02_bptt_gradient_norms", "bptt applies W_hh^T first and the tanh derivative after, grad @ W_hh * (1 - h_t ** 2) (the factors read left to right from the formula)",
        ("grad = (grad * (1 - states[:, t] ** 2)) @ W_hh", "grad = grad @ W_hh * (1 - states[:, t] ** 2)"))
mistake("ch02", "a02c", "ch02_bptt_gradient_norms", "bptt takes 'the Euclidean norm' as torch.linalg.norm(grad, 2): for a (B, H) matrix ord=2 is the largest singular value, not the norm of all entries",
        ("norms = [torch.linalg.vector_norm(grad)]", "norms = [torch.linalg.norm(grad, 2)]"),
        ("norms.append(torch.linalg.vector_norm(grad))", "norms.append(torch.linalg.norm(grad, 2))"))
mistake("ch02", "a02d", "ch02_rnn_cell", "rnn_cell transposes W_hx with .t_() (the in-place twin of .t()): the caller's W_hx is turned round; the first call is right, the next one multiplies by the transposed weight",
        ("x_t @ W_hx.T", "x_t @ W_hx.t_()"))
mistake("ch02", "a02e", "ch02_clip_grad_norm", "clip_grad_norm measures the parameters themselves, sqrt(sum(p ** 2)), where their gradients are meant (p.grad kept aside for the scaling)",
        ("grads = [p.grad for p in parameters if p.grad is not None]", "params = [p for p in parameters if p.grad is not None]\n    grads = [p.grad for p in params]"),
        ("total_norm = torch.sqrt(sum((g.detach() ** 2).sum() for g in grads))", "total_norm = torch.sqrt(sum((p.detach() ** 2).sum() for p in params))"))
variant("ch02", "b02a", "ch02_bptt_gradient_norms", "bptt fills a preallocated tensor of T + 1 norms, norms[k] for k = 1..T from states[:, T - k]",
        code=("def bptt_gradient_norms(states, W_hh):\n"
              "    T = states.shape[1]\n"
              "    norms = states.new_empty(T + 1)\n"
              "    grad = torch.ones_like(states[:, -1])\n"
              "    norms[0] = torch.linalg.vector_norm(grad)\n"
              "    for k in range(1, T + 1):\n"
              "        h_t = states[:, T - k]\n"
              "        grad = (grad * (1 - h_t ** 2)) @ W_hh\n"
              "        norms[k] = torch.linalg.vector_norm(grad)\n"
              "    return norms\n"))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "a03a", "ch03_lstm_cell_nobias", "lstm_cell_nobias swaps the two gates in the cell update, c = i * c_prev + f * g (the input gate on the old cell, the forget gate on the candidate)",
        ("c = f * c_prev + i * g", "c = i * c_prev + f * g"))
mistake("ch03", "a03b", "ch03_split_gates", "split_gates reads the stacked rows as interleaved per unit, gate j at rows j, j + 4, j + 8, ... (weight_ih[j::4]) instead of four blocks one below the other",
        ("Wx = dict(zip(GATES, cell.weight_ih.chunk(4, dim=0)))", "Wx = {k: cell.weight_ih[j::4] for j, k in enumerate(GATES)}"),
        ("Wh = dict(zip(GATES, cell.weight_hh.chunk(4, dim=0)))", "Wh = {k: cell.weight_hh[j::4] for j, k in enumerate(GATES)}"),
        ("b = dict(zip(GATES, (cell.bias_ih + cell.bias_hh).chunk(4)))", "b = {k: (cell.bias_ih + cell.bias_hh)[j::4] for j, k in enumerate(GATES)}"))
mistake("ch03", "a03c", "ch03_lstm_layer", "lstm_layer joins the hidden states with torch.cat(outputs, dim=1) where torch.stack is meant: (B, T * H), not (B, T, H)",
        ("return torch.stack(outputs, dim=1)", "return torch.cat(outputs, dim=1)"))
variant("ch03", "b03a", "ch03_lstm_layer", "lstm_layer writes each step's h into a preallocated (B, T, H) buffer, outputs[:, t] = h",
        code=("def lstm_layer(cell, x, hidden_size, state=None):\n"
              "    B, T, _ = x.shape\n"
              "    if state is None:\n"
              "        h = c = x.new_zeros(B, hidden_size)\n"
              "    else:\n"
              "        h, c = state[0][0], state[1][0]\n"
              "    outputs = x.new_empty(B, T, hidden_size)\n"
              "    for t in range(T):\n"
              "        h, c = cell(x[:, t], (h, c))\n"
              "        outputs[:, t] = h\n"
              "    return outputs, (h.unsqueeze(0), c.unsqueeze(0))\n"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "a04a", "ch04_gru_cell_textbook", "gru_cell_textbook interpolates between the candidate and itself, (1 - z) * h_tilde + z * h_tilde (h_tilde typed twice): the old state is never kept",
        ("return (1 - z) * h_tilde + z * h", "return (1 - z) * h_tilde + z * h_tilde"))
mistake("ch04", "a04b", "ch04_gru_cell_pytorch", "gru_cell_pytorch computes the update gate from the reset block of the hidden product, sigmoid(i_z + h_r) (the r line copied, one letter changed)",
        ("z = torch.sigmoid(i_z + h_z)", "z = torch.sigmoid(i_z + h_r)"))
mistake("ch04", "a04c", "ch04_count_parameters", "count_parameters gives the GRU 2 blocks ('two gates, r and z'), forgetting the candidate's block",
        ('"gru": 3', '"gru": 2'))
variant("ch04", "b04a", "ch04_gru_cell_pytorch", "gru_cell_pytorch squashes r and z with one sigmoid over the first 2H columns and chunk(2), n from the last H",
        code=("def gru_cell_pytorch(x, h, weight_ih, weight_hh, bias_ih, bias_hh):\n"
              "    H = h.shape[1]\n"
              "    gi = x @ weight_ih.T + bias_ih\n"
              "    gh = h @ weight_hh.T + bias_hh\n"
              "    r, z = torch.sigmoid(gi[:, :2 * H] + gh[:, :2 * H]).chunk(2, dim=1)\n"
              "    n = torch.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])\n"
              "    return (1 - z) * n + z * h\n"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "a05a", "ch05_lstm_direction", "lstm_direction returns the last step's (h_new, c_new) as the final states (the cell's own result of the last step), where the kept (h, c) after each sequence's last real step is meant",
        ("return torch.stack(outputs, dim=1), (h, c)", "return torch.stack(outputs, dim=1), (h_new, c_new)"))
mistake("ch05", "a05b", "ch05_bilstm_from_cells", "BiLSTMFromCells stacks the backward HIDDEN state into c_n, torch.stack([c_f, h_b]) (h typed for c)",
        ("torch.stack([c_f, c_b])", "torch.stack([c_f, h_b])"))
mistake("ch05", "a05c", "ch05_masked_mean", "masked_mean divides by the per-row count of the mask, total / mask.sum(1) ((B,) against (B, F): no column axis)",
        ("return total / lengths.unsqueeze(1).to(outputs.dtype)", "return total / mask.sum(1)"))
mistake("ch05", "a05d", "ch05_residual_stack", "ResidualLSTMStack keeps each layer's final hidden state as the result's last column, h[:, -1] (after the residual, and in the padding of short sequences), not its nn.LSTM's h_n",
        ("hs.append(h_n[0])", "hs.append(h[:, -1])"))
variant("ch05", "b05a", "ch05_reverse_padded", "reverse_padded as a loop that indexes each real prefix with torch.arange(n - 1, -1, -1)",
        code=("def reverse_padded(x, lengths):\n"
              "    y = x.clone()\n"
              "    for b, n in enumerate(lengths.tolist()):\n"
              "        y[b, :n] = x[b, torch.arange(n - 1, -1, -1, device=x.device)]\n"
              "    return y\n"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "a06a", "ch06_numericalize", "numericalize gives dict.get the token '<unk>' as the default (the token where its index UNK_INDEX is meant): an unknown token stays a string in the list",
        ("stoi.get(token, UNK_INDEX)", 'stoi.get(token, "<unk>")'))
mistake("ch06", "a06b", "ch06_encoder", "Encoder packs the embedded batch, then runs the GRU on emb (the unpacked tensor; the variable names mixed up)",
        ("packed_out, h_n = self.rnn(packed)", "packed_out, h_n = self.rnn(emb)"))
mistake("ch06", "a06c", "ch06_teacher_forced_loss", "teacher_forced_loss flattens dec_in as the loss's targets (the input tokens, the two names next to each other)",
        ("dec_out.reshape(-1)", "dec_in.reshape(-1)"))
mistake("ch06", "a06d", "ch06_pad_batch", "pad_batch sorts the lengths longest first, .sort(descending=True).values ('pack_padded_sequence wants them sorted'): the lengths no longer belong to their rows",
        ("lengths = torch.tensor([len(seq) for seq in sequences], dtype=torch.long)", "lengths = torch.tensor([len(seq) for seq in sequences], dtype=torch.long).sort(descending=True).values"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "a07a", "ch07_attention", "Attention takes the energies as the MEAN of v * tanh(...) over the attention units, (energy * self.v).mean(-1), where the dot product (a sum) is meant",
        ("scores = energy @ self.v", "scores = (energy * self.v).mean(-1)"))
mistake("ch07", "a07b", "ch07_attention", "Attention repeats the decoder state with the new axis in front, hidden.unsqueeze(0).expand(Tx, B, Hd) ('Tx copies of the state'): (Tx, B, Hd) against the (B, Tx, De) encoder outputs",
        ("d = hidden[:, None, :].expand(B, Tx, hidden.shape[-1])", "d = hidden.unsqueeze(0).expand(Tx, B, hidden.shape[-1])"))
mistake("ch07", "a07c", "ch07_lstm_cell", "LSTMCell calls torch.sigmoid(f), torch.sigmoid(i), torch.sigmoid(o) on lines of their own, results not assigned (as if they squashed in place): the gates stay raw pre-activations",
        ("f, i, o = torch.sigmoid(f), torch.sigmoid(i), torch.sigmoid(o)", "torch.sigmoid(f)\n        torch.sigmoid(i)\n        torch.sigmoid(o)"))
mistake("ch07", "a07d", "ch07_decoder", "AttnDecoderRNN takes the contexts as torch.bmm(...)[0] (the first row of the batch) where [:, 0] (the one step) is meant: (1, De) for every sentence",
        ("torch.bmm(weights[:, None, :], encoder_outputs)[:, 0]", "torch.bmm(weights[:, None, :], encoder_outputs)[0]"))
mistake("ch07", "a07e", "ch07_greedy", "greedy_translate accumulates the finished flags with Python's or, done = done or (y == eos_index) (a tensor's truth value)",
        ("done |= y == eos_index", "done = done or (y == eos_index)"))
variant("ch07", "b07a", "ch07_encoder", "EncoderRNN puts the right cell's states back in order with right[::-1] in the stack instead of right.reverse()",
        ("        right.reverse()\n", ""),
        ("torch.stack(right, 1)", "torch.stack(right[::-1], 1)"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "a08a", "ch08_attend", "attend inverts the mask with mask[:, None, :].logical_not_() (the method's in-place twin): the caller's mask is inverted; the first call is right",
        ("~mask[:, None, :]", "mask[:, None, :].logical_not_()"))
mistake("ch08", "a08b", "ch08_dot", "dot_attention turns the encoder states round with view(B, D, Tx) where transpose(1, 2) is meant: the entries are re-read in memory order, not transposed",
        ("energies = dec @ enc.transpose(1, 2)", "energies = dec @ enc.view(enc.shape[0], enc.shape[2], enc.shape[1])"))
mistake("ch08", "a08c", "ch08_scaled_dot", "scaled_dot_attention reads D as dec.size[-1] (NumPy's size attribute; in PyTorch size is a method, dec.size(-1))",
        ("D = dec.shape[-1]", "D = dec.size[-1]"))
variant("ch08", "b08a", "ch08_dot", "dot_attention transposes the encoder states with .mT",
        ("energies = dec @ enc.transpose(1, 2)", "energies = dec @ enc.mT"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "a09a", "ch09_encode", "encode packs the embedded batch, then runs the LSTM on x (the unpacked tensor; the packed one made and left unused)",
        ("out, (h_n, c_n) = model.encoder(packed)", "out, (h_n, c_n) = model.encoder(x)"))
mistake("ch09", "a09b", "ch09_teacher_forcing", "decode_teacher_forcing passes h_proj and h in the other order, decode_step(..., state, h_proj, h, mask)",
        ("decode_step(model, tgt_in[:, t], o, state, h, h_proj, mask)", "decode_step(model, tgt_in[:, t], o, state, h_proj, h, mask)"))
mistake("ch09", "a09c", "ch09_masked_loss", "masked_loss ignores PAD_INDEX (exercise 6's name for the padding index; here it is PAD)",
        ("ignore_index=PAD)", "ignore_index=PAD_INDEX)"))
mistake("ch09", "a09d", "ch09_decode_step", "decode_step builds u_t = [a_t; c_t] (the cell state typed for d: both come from the same unpacking)",
        ("u = torch.cat([a, d], dim=-1)", "u = torch.cat([a, c], dim=-1)"))
mistake("ch09", "a09e", "ch09_beam_search", "beam_search loops range(max_len - 1) ('the <sos> is the first step'): one step fewer than max_len",
        ("for _ in range(max_len):", "for _ in range(max_len - 1):"))

CASES = M + OK

# The first failing visible test's message as the student sees it in Jupyter, judged by the rule of trials 22f-22z.
VERDICTS: dict[str, tuple[str, str]] = {
    'ch01-a01a': ('P', "'self.rnn is built with num_layers=6, but the docstring asks for num_layers=1 (pass num_layers=1 to RNN, or leave it out where it is the default)': the constructor line, and that its third argument made 6 layers (strict reading: Pa, that the third positional argument of nn.RNN is num_layers is not said)"),
    'ch01-a01b': ('P', "at the student's line: 'Expected hidden size (1, 2, 4), got [1, 5, 4] -- x.new_zeros(1, x.shape[1], self.rnn.hidden_size) is (1, 5, 4): axis 1 has 5 where 2 (the batch size B) is expected'"),
    'ch01-a01c': ('P', "at the student's line: 'unsupported operand type(s) for -: 'list' and 'int' -- [x] + [torch.zeros_like(x)] * steps is a list of 6 tensors and 1 is 1: - does not take these two': the grouping Python made is shown (strict reading: Pa, the parentheses around steps - 1 are not said)"),
    'ch01-a01d': ('P', "at the student's line: 'input.size(-1) must be equal to input_size. Expected 8, got 3 -- self.decoder is an nn.RNN built with input_size=8 ..., but `src` has 3 on its last axis': src named as what the decoder reads (strict reading: Pa, tgt is not named)"),
    'ch01-a01e': ('P', "'losses of fit(...) ...: 5 of 5 entries differ ... Likely cause: the FIRST loss, before any update, already differs: the first batch is not the expected one (draw it with torch.randint(0, len(x), (batch_size,), generator=g) ...; one generator made once, seeded with the seed argument)': the DataLoader batches are what differs, and the draw asked for is written out"),
    'ch02-a02a': ('M', "'the gradient of h_last.sum() with respect to h0: no gradient arrived (it is None): the result was computed outside the autograd graph (torch.no_grad(), .detach(), ...); your line \"W_hx = rnn.weight_ih_l0.detach() # (H, D)\" in rnn_weights cuts it (.detach())': the one line named is the locked setup's rnn_weights (right code, and not on the path to h0); the student's `h0.clone().detach()` is not named (lenient reading: Pa, .detach() is in the generic list and h0 is the tensor named)"),
    'ch02-a02b': ('P', "'bptt_gradient_norms(states, W_hh): 4 of 5 entries differ ... Likely cause: your values are what you get if you multiply by W_hh first and by the tanh derivative after it (the derivative of step t comes first)'"),
    'ch02-a02c': ('M', "'bptt_gradient_norms(states, W_hh): 4 of 5 entries differ ... Likely cause: the entries at index 0 of dimension 0 are right and every later index is wrong: if dimension 0 is time, what one step passes to the next goes wrong (the state carried over, or the input fed to the next step: the target token with teacher forcing ...?); if it is the batch, the first example's value used for all': guessed causes, none the student's (the recursion is right; torch.linalg.norm(grad, 2) is the spectral norm, which equals the norm of all entries only for the all-ones start) (lenient reading: N)"),
    'ch02-a02d': ('Pa', "at the student's line: 'mat1 and mat2 shapes cannot be multiplied (2x3 and 4x3) -- a matrix product whose inner sizes differ: a .T missing or one too many, or the wrong matrix?': the line is named, but not that .t_() transposed the caller's W_hx on the first call (the first call is right, the test's second call fails) (strict reading: N; lenient: P, 'one .T too many' leads to replacing .t_() by .T)"),
    'ch02-a02e': ('M', "'total norm returned (before clipping): got 0, expected 13. Likely cause: clip_grad_norm.<locals>.<listcomp> is called with .0 a list_iterator where the reference's call gets a generator ..., from your line \"grads = [p.grad for p in params]\" in clip_grad_norm: what that line passes to it goes wrong there (or before it)': a comprehension's internal argument (.0) named as the cause and a right line blamed; that the norm is taken of the parameters p, not of their gradients, is not said (lenient reading: N)"),
    'ch03-a03a': ('Pa', "'c (the new cell state): 8 of 8 entries differ ... Likely cause: your values are what you get if you compute the gates i, f, g, o with the weights of f, i, g, o (gates mixed up)': true of the values (i and f exchanged), but it points at the gate lines, which are right; the exchange is in the c line, c = i * c_prev + f * g (strict reading: M, right lines named; lenient: P, i and f named)"),
    'ch03-a03b': ('P', "'Wx[...] stacked: 18 of 24 entries differ ... Likely cause: your values are the expected ones interleaved along dimension 0: your block j holds the entries j, j + 4, j + 8, ... instead of 4 consecutive blocks (a reshape or view where chunk or split was needed?)'"),
    'ch03-a03c': ('P', "'outputs: expected shape (2, 5, 4), got (2, 20); one axis fewer: your axis 1 (size 20) holds the expected axes 1 and 2 (5 x 4) merged: torch.cat joins tensors along an axis they already have, torch.stack makes a new one (cat where stack was needed?) ... -- Likely cause: ... (in lstm_layer, the returned value): another function in place of the right one'"),
    'ch04-a04a': ('P', "'gru_cell_textbook(x, h, ...): 8 of 8 entries differ ... Likely cause: your values are what you get with `z * h_tilde` where `z * h` is needed (in gru_cell_textbook, the returned value)'"),
    'ch04-a04b': ('P', "'gru_cell_pytorch(x, h, ...): 8 of 8 entries differ ... Likely cause: The update gate z adds the reset gate r's hidden block (the r block where the z block is needed: a copy-paste slip?)'"),
    'ch04-a04c': ('P', "'count_parameters('gru', 10, 20): got 1280, expected 1920 ... `blocks` is the first variable whose value differs ... (2 where the reference's is 3): look at your line \"blocks = {\"rnn\": 1, \"lstm\": 4, \"gru\": 2}[kind]\"'"),
    'ch05-a05a': ('P', "'h_n (after the last REAL step): 5 of 10 entries differ ... Likely cause: your values are what you get with `h_new` where `h` is needed (in lstm_direction, the returned value)'"),
    'ch05-a05b': ('P', "'c_n (no padding): 10 of 20 entries differ ... Likely cause: your values are what you get with `torch.stack([c_f, h_b])` where `torch.stack([c_f, c_b])` is needed (in BiLSTMFromCells.forward, the returned value)'"),
    'ch05-a05c': ('P', "at the student's line: '... total has shape (2, 3) and mask.sum(1) has shape (2,) ...; mask.sum(1) reduced away the axis 1 of (2, 3): keepdim=True in the sum keeps it with size 1 (or index its result with [..., None])'"),
    'ch05-a05d': ('Pa', "'h_n of the stack: 20 of 24 entries differ; ... got 0, expected 0.2265 ... Likely cause: ... every variable that can be compared agrees with the reference's, but the result differs: look at the line that returns it (\"return h, (torch.stack(hs), torch.stack(cs))\") (or a value changed in place after it was made)': h_n and its return line are named, not what hs holds (the result's last column h[:, -1], zero in the padding, where each layer's own h_n[0] is meant) (strict reading: M, the right return line named; lenient: Pa)"),
    'ch06-a06a': ('P', "'numericalize's return value[3]: must be a Python int, got a Python str': the one str in the list is the default of the student's stoi.get (strict reading: Pa, no line named)"),
    'ch06-a06b': ('Pa', "at the pad_packed_sequence line: ''Tensor' object has no attribute 'batch_sizes'': PyTorch's own error with nothing added, at a right line; that packed_out is a plain tensor because the GRU was given emb, not packed, is not said (strict reading: N; lenient: Pa)"),
    'ch06-a06c': ('P', "'loss: got 3.97472, expected 3.4983 ... `loss` is the first variable whose value differs ... look at your line \"loss = F.cross_entropy(..., dec_in.reshape(-1), ...)\" (... yours reads `dec_in`, which the reference's does not; the reference's reads `dec_out`, which yours does not)'"),
    'ch06-a06d': ('P', "'lengths: expected [3, 1, 2], got [3, 2, 1]': the lengths come back sorted, the one thing the student's .sort(descending=True) does (strict reading: Pa, a bare value mismatch)"),
    'ch07-a07a': ('P', "'weights (with a mask): 6 of 12 entries differ ... Likely cause: your weights are a softmax of the expected energies times 0.1999 = 1/k (k=5 was given): a factor k missing, or a division by it too many?': .mean(-1) divides the dot product by the A = 5 attention units"),
    'ch07-a07b': ('P', "at the cat line: '... d has shape (6, 2, 3) here, but (2, 6, 3) in the reference ...; it goes wrong at your line \"d = hidden.unsqueeze(0).expand(Tx, B, hidden.shape[-1])\" -- fix it there'"),
    'ch07-a07c': ('P', "'c: 8 of 8 entries differ ... Likely cause: your line \"torch.sigmoid(f)\" in LSTMCell.forward computes a new value and throws it away (torch.sigmoid(f) changes nothing by itself): write torch = torch.sigmoid(f) (or its in-place form torch.sigmoid_())': the cause is right, but the fix written out assigns to `torch` (the module) where `f = torch.sigmoid(f)` is meant (strict reading: Pa, the fix as written breaks the cell)"),
    'ch07-a07d': ('P', "at the lstm_cell line: '... Likely cause: ... (the line that computes `weighted_encoder`): two items in the wrong order; or an axis left out of an index (x[t] where x[:, t] is needed: the batch axis indexed) ...; weighted_encoder has shape (1, 6) here, but (2, 6) ...; it goes wrong at your line \"weighted_encoder = torch.bmm(...)[0]\" -- fix it there' (strict reading: Pa, the right cause is the second of two at the same line)"),
    'ch07-a07e': ('P', "at the student's line: 'Boolean value of Tensor with more than one value is ambiguous -- ... `and`/`or` between tensors ...: combine masks with & and |' (a tail about loss classes follows)"),
    'ch08-a08a': ('M', "'weights: all the weight is on the masked positions and none on the real ones: the mask is used the wrong way round (it is True at REAL positions)': the inversion in the student's line is right; logical_not_() inverted the caller's mask in place, so the test's next call got the inverted mask; the named cause would lead the student to drop the (needed) inversion"),
    'ch08-a08b': ('P', "'weights: 18 of 24 entries differ ... Likely cause: your values are what you get with a reshape (or view) of `enc` where `enc.transpose(1, 2)` is needed (in dot_attention, the line that computes `energies`): a reshape keeps the order of the entries in memory, it does not swap axes'"),
    'ch08-a08c': ('P', "at the student's line: ''builtin_function_or_method' object is not subscriptable -- a method indexed without calling it: x.size(0) or x.shape[0], not x.size[0]'"),
    'ch09-a09a': ('Pa', "at the pad_packed_sequence line: ''Tensor' object has no attribute 'batch_sizes'': PyTorch's own error with nothing added, at a right line; that `out` is a plain tensor because the LSTM was given x, not packed, is not said (strict reading: N; lenient: Pa)"),
    'ch09-a09b': ('P', "at the student's line: '... decode_step takes (model, y_prev, o_prev, state, h, h_proj, mask), and your line passes `h_proj` as h and `h` as h_proj: two arguments in each other's place?'"),
    'ch09-a09c': ('Pa', "at the student's line: 'name 'PAD_INDEX' is not defined': Python's own error with nothing added; the name is named but not the one to use (PAD) (lenient reading: P, the unknown name is the slip)"),
    'ch09-a09d': ('P', "'o_1 (tilde d_1): 8 of 8 entries differ ... Likely cause: your values are what you get with `torch.cat([a, c], dim=-1)` where `torch.cat([a, d], dim=-1)` is needed (in decode_step, the line that computes `u`)'"),
    'ch09-a09e': ('P', "'beam_size=2, max_len=3, alpha=0.5: hypotheses [[5, 3], [5]], expected [[5, 3, 3], [5]]. Likely cause: the last expected item is missing: a loop or range that stops one step early ...'"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.first_view = report.first_view_past_warnings     # a warning on stderr is not a failure
    report.run_trial(sys.modules[__name__], "/tmp/student_trial_22aa", argv)


if __name__ == "__main__":
    main()
