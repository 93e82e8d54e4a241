"""The LSTM attention translator of chapter 7, in the order the chapter builds it.

(Lines are kept under 82 characters: the chapter shows these classes as they are.)

- :class:`LSTMCell` -- the bias-free LSTM step of chapter 3: gates f, i, o and
  candidate g from ``W x_t + U h_{t-1}``;
- :class:`EncoderRNN` -- a bidirectional LSTM made of two such cells,
  ``lstm_cell_left`` (reads left to right) and ``lstm_cell_right`` (right to
  left), fed the whole sentence at once; its outputs are the two directions
  concatenated, and a linear layer ``fc`` turns the two final hidden states into
  the decoder's first hidden state;
- :class:`Attention` -- energies ``E = tanh(Attn([d_{t-1}; h_s]))``, weights
  ``softmax(v . E)``;
- :class:`AttnDecoderRNN` -- one decoder step: an LSTM cell on
  ``[weighted_encoder; embedded]`` and the output
  ``log_softmax(Out([d_t; weighted_encoder; embedded]))``;
- :class:`Translator` -- the two together, a
  :class:`seqcourse.seq2seq.EncoderDecoder` (so chapter 6's ``train_seq2seq``
  and ``accuracy_by_length`` work), with a :meth:`Translator.translate` method;
- :func:`show_attention` -- a heatmap of one sentence pair's attention weights.

``Translator(..., masked=False, precompute_keys=False)`` is the model as first
described: no padding masks, meant to be trained one sentence at a time. The
defaults add what batches of padded sentences need (each direction of the
encoder starts and stops at the sentence's own ends, padded encoder outputs are
zero, padded source positions get attention weight exactly 0) and compute the
encoder's part of the attention energies once per sentence.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from .seq2seq import EncoderDecoder, greedy_decode, source_mask
from .text import EOS_INDEX, PAD_INDEX, SOS_INDEX, Vocab, pad_batch

__all__ = ["LSTMCell", "EncoderRNN", "Attention", "AttnDecoderRNN", "Translator",
           "greedy_translate", "show_attention"]


class LSTMCell(nn.Module):
    """One LSTM step without biases (chapter 3's bias-free form).

    ``W`` stacks the input weights of the gates f, i, o and of the candidate g,
    in that order, ``(4H, D)``; ``U`` the recurrent ones, ``(4H, H)``.
    ``forward(x (B, D), (h, c) (B, H) each) -> (h, c)``.
    """

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.hidden_size = hidden_size
        # [W_fx; W_ix; W_ox; W_gx] and [W_fh; W_ih; W_oh; W_gh]
        self.W = nn.Linear(input_size, 4 * hidden_size, bias=False)
        self.U = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(self, x, state):
        h_prev, c_prev = state                       # (B, H), (B, H)
        z = self.W(x) + self.U(h_prev)               # (B, 4H)
        f, i, o, g = z.chunk(4, dim=-1)              # (B, H) each
        f, i, o = torch.sigmoid(f), torch.sigmoid(i), torch.sigmoid(o)
        g = torch.tanh(g)                            # (B, H)
        c = f * c_prev + i * g                       # (B, H)
        h = o * torch.tanh(c)                        # (B, H)
        return h, c


class EncoderRNN(nn.Module):
    """A bidirectional encoder of two :class:`LSTMCell`, fed the whole sentence.

    ``forward(src (B, Tx), src_lengths (B,) or None)`` returns ``outputs``
    ``(B, Tx, 2H)``, the states ``[h_left_s; h_right_s]`` of every position,
    and ``hidden = fc([h_left_Tx; h_right_1])`` ``(B, Hd)``, the decoder's
    first hidden state. With ``src_lengths``, a padded step leaves the states
    unchanged, so each direction starts and ends at the sentence's own ends,
    and padded outputs are 0.
    """

    def __init__(self, vocab_size: int, emb_size: int, hidden_size: int,
                 dec_hidden_size: int, pad_index: int = PAD_INDEX):
        super().__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(vocab_size, emb_size,
                                      padding_idx=pad_index)
        self.lstm_cell_left = LSTMCell(emb_size, hidden_size)   # x_1 .. x_Tx
        self.lstm_cell_right = LSTMCell(emb_size, hidden_size)  # x_Tx .. x_1
        self.fc = nn.Linear(2 * hidden_size, dec_hidden_size)

    def forward(self, src, src_lengths=None):
        B, Tx = src.shape
        emb = self.embedding(src)             # (B, Tx, E): the whole sentence
        if src_lengths is None:               # as described: no padding
            mask = torch.ones(B, Tx, dtype=torch.bool, device=src.device)
        else:
            mask = source_mask(src_lengths, Tx, device=src.device)  # (B, Tx)
        zeros = emb.new_zeros(B, self.hidden_size)                  # (B, H)
        state, left = (zeros, zeros), []
        for t in range(Tx):                                  # left to right
            h, c = self.lstm_cell_left(emb[:, t], state)
            keep = mask[:, t, None]                 # (B, 1): padding keeps
            state = (torch.where(keep, h, state[0]),
                     torch.where(keep, c, state[1]))
            left.append(state[0])
        h_left = state[0]                     # (B, H) after the last token
        state, right = (zeros, zeros), []
        for t in reversed(range(Tx)):                        # right to left
            h, c = self.lstm_cell_right(emb[:, t], state)
            keep = mask[:, t, None]                 # (B, 1): padding keeps
            state = (torch.where(keep, h, state[0]),
                     torch.where(keep, c, state[1]))
            right.append(state[0])
        h_right = state[0]                    # (B, H) after reading x_1
        right.reverse()                       # back into source order
        outputs = torch.cat([torch.stack(left, 1), torch.stack(right, 1)],
                            dim=-1)                          # (B, Tx, 2H)
        outputs = outputs * mask[:, :, None]                 # padding: 0
        hidden = self.fc(torch.cat([h_left, h_right], dim=-1))   # (B, Hd)
        return outputs, hidden


class Attention(nn.Module):
    """Additive attention in its concatenated form.

    ``E = tanh(Attn([d_{t-1}; h_s]))`` for every source position s, ``(B, Tx,
    A)``; the weights are ``softmax_s(v . E_s)``, ``(B, Tx)``, with energy
    -inf (weight exactly 0) where ``mask`` is False. ``keys`` (from
    :meth:`keys`, once per sentence) gives the same weights without applying
    the encoder's part of ``Attn`` again at every step.
    """

    def __init__(self, enc_size: int, dec_size: int, attn_size: int):
        super().__init__()
        self.Attn = nn.Linear(dec_size + enc_size, attn_size)
        bound = 1 / math.sqrt(attn_size)
        self.v = nn.Parameter(torch.empty(attn_size).uniform_(-bound, bound))

    def forward(self, hidden, encoder_outputs, mask=None, keys=None):
        B, Tx, _ = encoder_outputs.shape
        if keys is None:                                  # as described
            d = hidden[:, None, :].expand(B, Tx, hidden.shape[-1])
            pairs = torch.cat([d, encoder_outputs], dim=-1)  # (B, Tx, Hd+2H)
            energy = torch.tanh(self.Attn(pairs))            # (B, Tx, A)
        else:                                             # keys computed once
            W_d = self.Attn.weight[:, : hidden.shape[-1]]    # (A, Hd)
            query = hidden @ W_d.T + self.Attn.bias          # (B, A)
            energy = torch.tanh(keys + query[:, None, :])    # (B, Tx, A)
        scores = energy @ self.v                             # (B, Tx)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        return torch.softmax(scores, dim=-1)                 # (B, Tx)

    def keys(self, encoder_outputs):
        """``W_h h_s`` for every s, the encoder's part of ``Attn``: (B, Tx, A)."""
        split = self.Attn.in_features - encoder_outputs.shape[-1]
        W_h = self.Attn.weight[:, split:]                    # (A, 2H)
        return encoder_outputs @ W_h.T                       # (B, Tx, A)


class AttnDecoderRNN(nn.Module):
    """One step of the attention decoder.

    ``forward(y_prev (B,), (h, c) (B, Hd) each, encoder_outputs (B, Tx, 2H),
    mask (B, Tx) or None, keys=None)`` returns ``(log_probs (B, V), (h, c),
    weights (B, Tx))``: attend with the previous state h, average the encoder
    outputs into ``weighted_encoder``, run the LSTM cell on
    ``[weighted_encoder; embedded]``, predict from
    ``[h_new; weighted_encoder; embedded]``.
    """

    def __init__(self, vocab_size: int, emb_size: int, hidden_size: int,
                 enc_size: int, attn_size: int, pad_index: int = PAD_INDEX):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_size,
                                      padding_idx=pad_index)
        self.attention = Attention(enc_size, hidden_size, attn_size)
        self.lstm_cell = LSTMCell(enc_size + emb_size, hidden_size)
        self.Out = nn.Linear(hidden_size + enc_size + emb_size, vocab_size)

    def forward(self, y_prev, state, encoder_outputs, mask=None, keys=None):
        h_prev, c_prev = state                               # (B, Hd) each
        embedded = self.embedding(y_prev)                    # (B, E)
        weights = self.attention(h_prev, encoder_outputs, mask, keys)
        weighted_encoder = torch.bmm(weights[:, None, :],
                                     encoder_outputs)[:, 0]  # (B, 2H)
        h, c = self.lstm_cell(torch.cat([weighted_encoder, embedded], dim=-1),
                              state)                         # (B, Hd) each
        scores = self.Out(torch.cat([h, weighted_encoder, embedded], dim=-1))
        return F.log_softmax(scores, dim=-1), (h, c), weights   # (B, V), ..


class Translator(EncoderDecoder):
    """:class:`EncoderRNN` + :class:`AttnDecoderRNN`, vocabularies, translate().

    The decoder starts from ``h_0 = fc([h_left_Tx; h_right_1])`` and
    ``c_0 = 0``. ``masked=False, precompute_keys=False`` is the model as first
    described (no masks: one sentence at a time); ``masked=True`` masks the
    padding, ``precompute_keys=True`` computes the encoder's part of the
    attention energies once per sentence instead of at every step (the same
    function, fewer products). ``model(src, src_lengths, tgt_in)`` gives
    teacher-forced log-probabilities ``(B, Ty, V)``.
    """

    def __init__(self, src_vocab: Vocab, tgt_vocab: Vocab, emb_size: int = 32,
                 hidden_size: int = 64, attn_size: int = 64, masked: bool = True,
                 precompute_keys: bool = True,
                 tokenize: Callable[[str], list[str]] = str.split,
                 join: str = " "):
        super().__init__()
        self.src_vocab, self.tgt_vocab = src_vocab, tgt_vocab
        self.masked, self.precompute_keys = masked, precompute_keys
        self.tokenize, self.join = tokenize, join
        self.encoder = EncoderRNN(len(src_vocab), emb_size, hidden_size,
                                  hidden_size, src_vocab.pad_index)
        self.decoder = AttnDecoderRNN(len(tgt_vocab), emb_size, hidden_size,
                                      2 * hidden_size, attn_size,
                                      tgt_vocab.pad_index)
        self.last_weights = None

    def encode(self, src, src_lengths):
        mask = None
        if self.masked:
            mask = source_mask(src_lengths, src.shape[1], device=src.device)
        lengths = src_lengths if self.masked else None
        outputs, hidden = self.encoder(src, lengths)   # (B, Tx, 2H), (B, Hd)
        keys = None
        if self.precompute_keys:
            keys = self.decoder.attention.keys(outputs)      # (B, Tx, A)
        memory = (outputs, mask, keys)
        return memory, (hidden, torch.zeros_like(hidden))    # .., (d_0, c_0)

    def decode_step(self, y_prev, state, memory):
        outputs, mask, keys = memory
        if keys is None:                                      # as described
            log_probs, state, weights = self.decoder(y_prev, state, outputs,
                                                     mask)
        else:
            log_probs, state, weights = self.decoder(y_prev, state, outputs,
                                                     mask, keys=keys)
        self.last_weights = weights                           # (B, Tx)
        return log_probs, state                               # (B, V), ..

    @torch.no_grad()
    def translate(self, sentences: str | Sequence[str], max_len: int = 30):
        """Greedy translation. One sentence (a string) gives ``(words,
        weights)``: the output tokens (<eos> left out) and the attention
        weights ``(len(words) + 1, Tx)`` (the last row produced <eos>). A
        list of sentences gives a list of such pairs, decoded in one padded
        batch (masked models) or one sentence at a time."""
        if isinstance(sentences, str):
            return self.translate([sentences], max_len)[0]
        if not self.masked:
            return [self.translate_batch([s], max_len)[0] for s in sentences]
        return self.translate_batch(list(sentences), max_len)

    @torch.no_grad()
    def translate_batch(self, sentences: Sequence[str], max_len: int = 30):
        ids = [self.src_vocab.encode(self.tokenize(s)) for s in sentences]
        device = next(self.parameters()).device
        src, lengths = pad_batch(ids, self.src_vocab.pad_index)  # (B, Tx), (B,)
        tokens, weights = greedy_translate(self, src.to(device), lengths,
                                           max_len, self.tgt_vocab.sos_index,
                                           self.tgt_vocab.eos_index)
        out = []
        for i, toks in enumerate(tokens):
            rows = min(len(toks) + 1, weights.shape[1])
            w = weights[i, :rows, : int(lengths[i])]
            out.append((self.tgt_vocab.decode(toks), w))
        return out


@torch.no_grad()
def greedy_translate(model: EncoderDecoder, src: torch.Tensor,
                     src_lengths: torch.Tensor, max_len: int,
                     sos_index: int = SOS_INDEX, eos_index: int = EOS_INDEX):
    """Greedy decoding that records the attention weights (``model.last_weights``
    after each step).

    Returns ``(tokens, weights)``: ``B`` lists of token ids (<eos> left out)
    and ``(B, steps, Tx)``, row t holding the weights that produced token t."""
    return greedy_decode(model, src, src_lengths, max_len, sos_index, eos_index,
                         record=lambda m, _logits: m.last_weights)   # weights (B, steps, Tx)


def show_attention(source: str | Sequence[str], output: Sequence[str],
                   weights: torch.Tensor, ax=None, title: str | None = None):
    """Heatmap of one sentence pair: ``weights`` ``(len(output) + 1, Tx)``, one
    row per output token and one for <eos>, one column per source token.
    ``source`` a string (split on spaces) or a token list."""
    from .plot import attention_heatmap

    src_tokens = source.split() if isinstance(source, str) else list(source)
    out_tokens = list(output) + ["<eos>"]
    w = weights[: len(out_tokens), : len(src_tokens)]
    return attention_heatmap(w, src_tokens, out_tokens[: w.shape[0]], ax=ax,
                             title=title)
