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
VERDICTS: dict[str, tuple[str, str]] = {}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.first_view = report.first_view_past_warnings     # a warning on stderr is not a failure
    report.run_trial(sys.modules[__name__], "/tmp/student_trial_22aa", argv)


if __name__ == "__main__":
    main()
