"""Student trial 22ab: an acceptance trial of issue 22, new mistakes and correct variants, by a fresh pair of eyes.

The mistakes were first written from the student notebooks alone (plan committed before solutions/ and the catalogues
were read: benchmarks/results/student_trial_22ab_plan.md); every planned case that repeated, or came close to, an old
mutant, an alternative or an earlier trial's case of the same cell was replaced by a new one written the same way where
one could be found, or dropped (the plan's second table lists what each replaced case repeated). A mistake is one or
more edits of one cell's reference code, ``(old, new)`` pairs whose ``old`` occurs once; a variant edits the cell and
must keep full marks. Only the cases and the verdicts live here: building, grading (the class grader, one run per
assignment), the Jupyter view and the report are benchmarks/student_trial.py's and student_trial_22d.py's
(``run_trial``).

Run from the repository root (results in /tmp/student_trial_22ab unless --root says otherwise):

    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22ab.py --student-view [ch01 ...]
    nice -n 5 /work/main/.venv/bin/python benchmarks/student_trial_22ab.py --grade [ch01 ...]
    /work/main/.venv/bin/python benchmarks/student_trial_22ab.py --table     # benchmarks/results/student_trial_22ab.md's tables
    /work/main/.venv/bin/python benchmarks/student_trial_22ab.py --save benchmarks/results/student_trial_22ab.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (registry() of cases; the first trial's own cases are not used)
import student_trial_22d as report  # noqa: E402  (the command line and the report: run_trial)

M, OK, mistake, variant = st.registry()


# ------------------------------------------------------------------------------------------------------ ch01
mistake("ch01", "m01a", "ch01_many_to_one", "ManyToOne takes 'the last' state as outputs[:, :, -1] (the last index of the last axis, the hidden units, where the last time step, axis 1, is meant)",
        ("return self.head(outputs[:, -1])", "return self.head(outputs[:, :, -1])"))
mistake("ch01", "m01b", "ch01_one_to_many", "OneToMany builds its inputs with x.repeat(steps, 1).view(B, steps, D) (repeat where repeat_interleave is meant: the rows are repeated batch after batch, so the view pairs the steps with other examples) and zeroes the steps after the first",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])  # (B, steps, D), all zeros", "inputs = x.repeat(steps, 1).view(x.shape[0], steps, x.shape[1])  # x at every step"),
        ("        inputs[:, 0] = x                                     # x only at the first step\n", "        inputs[:, 1:] = 0                                    # zeros after the first step\n"))
mistake("ch01", "m01c", "ch01_many_to_many_async", "ManyToManyAsync hands the decoder the encoder's 'last output', enc_out[-1].unsqueeze(0) (the last EXAMPLE's outputs over time, (1, Tx, H), where the last step enc_out[:, -1] is meant)",
        ("_, h_n = self.encoder(src)", "enc_out, h_n = self.encoder(src)"),
        ("outputs, _ = self.decoder(tgt, h_n)", "outputs, _ = self.decoder(tgt, enc_out[-1].unsqueeze(0))"))
mistake("ch01", "m01d", "ch01_train_step", "train_step returns loss.detach().numpy() ('a plain number', the NumPy habit): a 0-d NumPy array, not a Python float",
        ("return loss.item()", "return loss.detach().numpy()"))
mistake("ch01", "m01e", "ch01_fit", "fit seeds the global generator and then makes a fresh one, torch.manual_seed(seed); g = torch.Generator() (a new Generator has its own fixed default seed: the seed argument is never used)",
        ("    g = torch.Generator().manual_seed(seed)\n    losses = []", "    torch.manual_seed(seed)\n    g = torch.Generator()\n    losses = []"))
variant("ch01", "v01a", "ch01_one_to_many", "OneToMany builds the zero inputs with torch.zeros(..., dtype=x.dtype, device=x.device) and copies x into step 0 with copy_",
        ("inputs = x.new_zeros(x.shape[0], steps, x.shape[1])  # (B, steps, D), all zeros", "inputs = torch.zeros(x.shape[0], steps, x.shape[1], dtype=x.dtype, device=x.device)"),
        ("inputs[:, 0] = x", "inputs[:, 0].copy_(x)"))

# ------------------------------------------------------------------------------------------------------ ch02
mistake("ch02", "m02a", "ch02_rnn_cell", "rnn_cell computes in float64 'for precision', h_prev.double() @ W_hh.double().T + ..., and never converts back: the new state comes back float64",
        ("return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)", "return torch.tanh(h_prev.double() @ W_hh.double().T + x_t.double() @ W_hx.double().T + b_h.double())"))
mistake("ch02", "m02b", "ch02_rnn_layer", "rnn_layer makes its zero initial state with torch.zeros(B, H) (float32 on the CPU whatever x is), not x.new_zeros",
        ("h = x.new_zeros(B, W_hh.shape[0]) if h0 is None else h0", "h = torch.zeros(B, W_hh.shape[0]) if h0 is None else h0"))
mistake("ch02", "m02c", "ch02_rnn_layer", "rnn_layer collects the states with outputs += h (+= on a list extends it with the B rows of the tensor, not one item)",
        ("outputs.append(h)", "outputs += h"))
mistake("ch02", "m02d", "ch02_bptt_gradient_norms", "bptt collects the norms in time order with norms.insert(0, ...) and turns them round with NumPy's [::-1] (a negative step, which a tensor does not take)",
        ("norms.append(torch.linalg.vector_norm(grad))", "norms.insert(0, torch.linalg.vector_norm(grad))"),
        ("return torch.stack(norms)", "return torch.stack(norms)[::-1]"))
mistake("ch02", "m02e", "ch02_clip_grad_norm", "clip_grad_norm without the case where no parameter has a gradient: sum() of nothing is the int 0, and torch.sqrt(0) raises",
        ("    if not grads:\n        return torch.tensor(0.0)\n", ""))

# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "m03a", "ch03_lstm_cell", "lstm_cell squashes the OLD cell state into h, h = o * tanh(c_prev) (c_prev typed for c)",
        ("h = o * torch.tanh(c)", "h = o * torch.tanh(c_prev)"))
mistake("ch03", "m03b", "ch03_lstm_cell", "lstm_cell gates the candidate on its own line, g = tanh(...) * i ('the gated candidate'), and keeps c = f * c_prev + i * g: the input gate applied twice",
        ('g = torch.tanh(hx @ W["g"].T + b["g"])', 'g = torch.tanh(hx @ W["g"].T + b["g"]) * i'))
mistake("ch03", "m03c", "ch03_lstm_cell_nobias", "lstm_cell_nobias leaves the input term out of the forget gate, f = sigmoid(h_prev @ Wh['f'].T) ('the forget gate looks at the memory')",
        ('f = torch.sigmoid(x @ Wx["f"].T + h_prev @ Wh["f"].T)', 'f = torch.sigmoid(h_prev @ Wh["f"].T)'))
mistake("ch03", "m03d", "ch03_split_gates", "split_gates tests for a bias-free cell with not hasattr(cell, 'bias_ih') (a bias-free nn.LSTMCell still has the attribute, set to None)",
        ("if not cell.bias:", 'if not hasattr(cell, "bias_ih"):'))
mistake("ch03", "m03e", "ch03_lstm_layer", "lstm_layer stores each step's output detached, outputs.append(h.detach()) ('keep the value, not the graph', the logging habit): the values are right, no gradient flows through the outputs",
        ("outputs.append(h)", "outputs.append(h.detach())"))

# ------------------------------------------------------------------------------------------------------ ch04
mistake("ch04", "m04a", "ch04_gru_cell_textbook", "gru_cell_textbook closes the candidate's tanh before its bias, tanh(W_nx x + W_nh (r * h)) + b_n",
        ("h_tilde = torch.tanh(x @ W_nx.T + (r * h) @ W_nh.T + b_n)", "h_tilde = torch.tanh(x @ W_nx.T + (r * h) @ W_nh.T) + b_n"))
mistake("ch04", "m04c", "ch04_gru_cell_pytorch", "gru_cell_pytorch types + for * in the candidate, tanh(i_n + r + h_n)",
        ("n = torch.tanh(i_n + r * h_n)", "n = torch.tanh(i_n + r + h_n)"))
mistake("ch04", "m04d", "ch04_gru_cell_pytorch", "gru_cell_pytorch copies the input's line for the hidden product and changes only the weight, gh = x @ weight_hh.T + bias_hh",
        ("gh = h @ weight_hh.T + bias_hh", "gh = x @ weight_hh.T + bias_hh"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "m05b", "ch05_lstm_direction", "lstm_direction zeroes the padded outputs with torch.zeros_like(x[:, t]) (zeros like the step's input, D wide, where the H-wide state is meant)",
        ("torch.zeros_like(h_new)", "torch.zeros_like(x[:, t])"))
mistake("ch05", "m05c", "ch05_residual_stack", "ResidualLSTMStack reads the docstring's 'layer l >= 2' with its 0-based loop index, h = out + h if l >= 2 else out: the residual starts at the third layer",
        ("h = out if l == 0 else out + h", "h = out + h if l >= 2 else out"))
mistake("ch05", "m05e", "ch05_bilstm_from_cells", "BiLSTMFromCells joins the two directions backward first, torch.cat([out_b, out_f], dim=-1)",
        ("torch.cat([out_f, out_b], dim=-1)", "torch.cat([out_b, out_f], dim=-1)"))
variant("ch05", "v05b", "ch05_masked_mean", "masked_mean divides by the mask's count per row, mask.sum(1, keepdim=True)",
        ("return total / lengths.unsqueeze(1).to(outputs.dtype)", "return total / mask.sum(1, keepdim=True).to(outputs.dtype)"))

# ------------------------------------------------------------------------------------------------------ ch06
mistake("ch06", "m06b", "ch06_numericalize", "numericalize looks the special tokens up in the vocabulary, stoi['<sos>'] and stoi['<eos>'] (the tokens' names, where the docstring's SOS_INDEX and EOS_INDEX are meant)",
        ("ids = [SOS_INDEX] + ids", 'ids = [stoi["<sos>"]] + ids'),
        ("ids = ids + [EOS_INDEX]", 'ids = ids + [stoi["<eos>"]]'))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "m07a", "ch07_lstm_cell", "LSTMCell.forward returns c, h (the order in which they are computed), where the docstring asks for (h, c)",
        ("return h, c", "return c, h"))
mistake("ch07", "m07b", "ch07_encoder", "EncoderRNN's left-to-right loop takes the mask column without the new axis, keep = mask[:, t] (B,), against the (B, H) states",
        ("new = self.lstm_cell_left(emb[:, t], state)\n            keep = mask[:, t, None]", "new = self.lstm_cell_left(emb[:, t], state)\n            keep = mask[:, t]"))
mistake("ch07", "m07c", "ch07_attention", "Attention squashes the energies with relu (the MLP habit) where the source's tanh is meant",
        ("energy = torch.tanh(self.Attn(pairs))", "energy = torch.relu(self.Attn(pairs))"))
mistake("ch07", "m07d", "ch07_decoder", "AttnDecoderRNN applies F.dropout(p=0.1) to the embedding (PyTorch's seq2seq tutorial's decoder does; functional dropout drops in eval mode too)",
        ("embedded = self.embedding(y_prev)", "embedded = F.dropout(self.embedding(y_prev), p=0.1)"))
mistake("ch07", "m07e", "ch07_greedy", "greedy_translate makes the start tokens torch.full((src.shape[1],), sos_index) (the source length Tx where the batch size src.shape[0] is meant)",
        ("y = torch.full((src.shape[0],), sos_index, dtype=torch.long)", "y = torch.full((src.shape[1],), sos_index, dtype=torch.long)"))

# ------------------------------------------------------------------------------------------------------ ch08
mistake("ch08", "m08c", "ch08_bilinear", "bilinear_attention writes d_t^T W with *, (dec * W) @ enc^T (the math's juxtaposition read as an element-wise product)",
        ("energies = (dec @ W) @ enc.transpose(1, 2)", "energies = (dec * W) @ enc.transpose(1, 2)"))
variant("ch08", "v08a", "ch08_reduced_rank", "reduced_rank_attention takes the dot products of queries and keys with einsum 'btr,bsr->bts'",
        ("energies = queries @ keys.transpose(1, 2)", 'energies = torch.einsum("btr,bsr->bts", queries, keys)'))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "m09b", "ch09_decode_step", "decode_step unpacks the state into the LSTM cell's call, model.decoder(input, *state) (two arguments where nn.LSTMCell takes the pair)",
        ("d, c = model.decoder(torch.cat([y_emb, o_prev], dim=-1), state)", "d, c = model.decoder(torch.cat([y_emb, o_prev], dim=-1), *state)"))

CASES = M + OK

# The first failing visible test's message as the student sees it in Jupyter, judged by the rule of trials 22f-22aa.
VERDICTS: dict[str, tuple[str, str]] = {
    'ch01-m01a': ('Pa', "at the student's line: 'mat1 and mat2 shapes cannot be multiplied (2x5 and 4x6) -- self.head is an nn.Linear built for 4 input features, but the tensor you give it has 5 on its last axis: give it the tensor it was built for ..., or, if you built the layer yourself, build it with in_features=5': the line and the tensor are named, not that [:, :, -1] takes the last hidden unit of every step (axis 2) where the last step (axis 1) is meant; the second fix offered changes the head, which is right (strict reading: M, right code offered for a change; lenient: Pa)"),
    'ch01-m01b': ('-', "no visible test fails (the visible test's step count and batch size make x.repeat(steps, 1).view(B, steps, D) put each example's own x at step 0); the grader takes 2 points"),
    'ch01-m01c': ('P', "at the student's line: 'Expected hidden size (1, 2, 4), got [1, 5, 4] -- enc_out[-1].unsqueeze(0) is (1, 5, 4): axis 1 has 5 where 2 (the batch size B) is expected; the state ... is (num_layers * num_directions, B, H)': the expression is named and that it carries the time length where the batch belongs (strict reading: Pa, that [-1] indexes the batch axis, and h_n or enc_out[:, -1] is meant, is not said)"),
    'ch01-m01d': ('P', "'the loss train_step returns: must be a Python float, got a numpy.ndarray (convert it with float(...))'"),
    'ch01-m01e': ('P', "'fit changed PyTorch's global random state (torch.manual_seed(seed) reseeds the global generator ...): make ONE generator of your own, g = torch.Generator().manual_seed(seed), and draw every batch with generator=g': the student's torch.manual_seed(seed) is named and the line to write is given"),
    'ch02-m02a': ('-', "no visible test fails (the float64 state passes the visible checks)"),
    'ch02-m02b': ('-', "no visible test fails (the visible tests run rnn_layer on float32 CPU inputs only)"),
    'ch02-m02c': ('P', "'your line \"outputs += h\" in rnn_layer adds a tensor to the list outputs with +=, which adds the tensor's ITEMS ...: outputs.append(h) adds it as one item'"),
    'ch02-m02d': ('Pa', "at the student's line: 'step must be greater than zero': PyTorch's own error with nothing added; the line holds one slice with a step, [::-1], so the student finds it, but not what to use instead (.flip(0)) (strict reading: N; lenient: P)"),
    'ch02-m02e': ('-', "no visible test fails (no visible test gives parameters none of which has a gradient)"),
    'ch03-m03a': ('P', "'h (the new hidden state): 8 of 8 entries differ ... Likely cause: your values are what you get if you squash the OLD cell in h_t = o * tanh(c_t) (c_{t-1} instead of c_t)'"),
    'ch03-m03b': ('P', "'c (the new cell state): 8 of 8 entries differ ... `g` is the first variable whose value differs ...: look at your line \"g = torch.tanh(hx @ W[\"g\"].T + b[\"g\"]) * i\" (... yours reads `i` and multiplies (*), which the reference's does not)'"),
    'ch03-m03c': ('P', "'c (the new cell state): 8 of 8 entries differ ... Likely cause: your values are what you get with `h_prev @ Wh['f'].T` where `x @ Wx['f'].T + h_prev @ Wh['f'].T` is needed (in lstm_cell_nobias, the line that computes `f`)'"),
    'ch03-m03d': ('P', "at the bias line: 'unsupported operand type(s) for +: 'NoneType' and 'NoneType' -- cell.bias_ih is None and cell.bias_hh is None: cell is built with bias=False, so its biases are None ...: test `if cell.bias:` (or `cell.bias_ih is not None`) and leave the bias out when there is none': the test to write is given (strict reading: Pa, the student's hasattr line is not named: the error is shown at the right bias line)"),
    'ch03-m03e': ('-', "no visible test fails (the outputs' values are right; the gradient checks of lstm_layer do not reach the detached outputs)"),
    'ch04-m04a': ('P', "'gru_cell_textbook(x, h, ...): 8 of 8 entries differ ... Likely cause: your values are what you get if you add the bias of h after its nonlinearity (tanh(...) + b_h): it goes inside' (strict reading: Pa, the bias is called b_h, the candidate's line is not named)"),
    'ch04-m04c': ('P', "'... `n` is the first variable whose value differs ...: look at your line \"n = torch.tanh(i_n + r + h_n)\" (... the reference's multiplies `h_n` by `r`, which yours does not)'"),
    'ch04-m04d': ('P', "at the student's line: 'x (2, 3) @ weight_hh.T (4, 12): ... h in place of x would give (2, 12), ...: which one is your equation'"),
    'ch05-m05b': ('P', "at the student's line: 'h_new has shape (2, 5) and torch.zeros_like(x[:, t]) has shape (2, 3): broadcasting lines shapes up from the RIGHT' (strict reading: Pa, zeros_like(h_new) is not written out)"),
    'ch05-m05c': ('Pa', "'outputs of the stack: 28 of 40 entries differ ... `h` is right where it is first made, and its third value, from your line \"h = out + h if l >= 2 else out\", is not the reference's third value: it goes wrong there': the line is named (and the iteration, the second layer), not that the residual is left out there (l >= 2 with a 0-based l) (lenient reading: P)"),
    'ch05-m05e': ('P', "'outputs (no padding, lengths=None): 80 of 80 entries differ ... Likely cause: your values are what you get with `[out_b, out_f]` where `[out_f, out_b]` is needed'"),
    'ch06-m06b': ('-', "no visible test fails (the visible tests' stoi holds the special tokens at their indices)"),
    'ch07-m07a': ('P', "'c: 8 of 8 entries differ ... Likely cause: your values are what you get if you return (c, h) instead of (h, c)'"),
    'ch07-m07b': ('P', "at the torch.where line: 'keep has shape (2,) here, but (2, 1) in the reference solution ...; it goes wrong at your line \"keep = mask[:, t]\" -- fix it there'"),
    'ch07-m07c': ('P', "'weights (with a mask): 6 of 12 entries differ ... Likely cause: your values are what you get with `torch.relu(self.Attn(pairs))` where `torch.tanh(self.Attn(pairs))` is needed'"),
    'ch07-m07d': ('P', "'h at step 1: ... `embedded` is the first variable whose value differs ...: look at your line \"embedded = F.dropout(self.embedding(y_prev), p=0.1)\" (... yours calls dropout, which the reference's does not)'"),
    'ch07-m07e': ('M', "'the tokens fed at steps 1 and 2 (<sos>, then each sentence's own previous output): got [[1, 1, 1, 1], [5, 7]], expected [[1, 1], [5, 7]]; ... 4 items instead of 2 items; each of your lists starts with the expected items but some go on after them: stop where the docstring says (at the first <eos>, which is not kept) and drop what follows': the named cause (tokens kept past <eos>) is not the student's; the data shows 4 start tokens for 2 sentences (the start tensor sized with src.shape[1] = Tx), which the message does not say (lenient reading: Pa, [1, 1, 1, 1] shows the size of the start tensor)"),
    'ch08-m08c': ('P', "at the student's line: 'dec has shape (2, 3, 6) and W has shape (6, 5): broadcasting lines shapes up from the RIGHT, so their axis -1 meets 6 against 5': the * is read as the element-wise product it is (strict reading: Pa, @ is not named)"),
    'ch09-m09b': ('P', "at the student's line: 'LSTMCell.forward() takes from 2 to 3 positional arguments but 4 were given -- model.decoder takes (input, hx: tuple[...] | None = None)': the pair is what it takes"),
}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.first_view = report.first_view_past_warnings     # a warning on stderr is not a failure
    report.run_trial(sys.modules[__name__], "/tmp/student_trial_22ab", argv)


if __name__ == "__main__":
    main()
