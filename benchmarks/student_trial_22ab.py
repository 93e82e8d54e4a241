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
VERDICTS: dict[str, tuple[str, str]] = {}


def main(argv=None):
    """Trial 22d's command line and report, on this trial's cases and verdicts."""
    report.first_view = report.first_view_past_warnings     # a warning on stderr is not a failure
    report.run_trial(sys.modules[__name__], "/tmp/student_trial_22ab", argv)


if __name__ == "__main__":
    main()
