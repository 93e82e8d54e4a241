"""The capstone: English-to-French neural machine translation with attention.

- :mod:`seqcourse.nmt.data`      -- corpora (Tatoeba, Multi30k), normalisation, splits, subword and word tokenizers,
                                   batches
- :mod:`seqcourse.nmt.model`     -- the model (bidirectional LSTM encoder, attentional LSTM decoder) and its loss
- :mod:`seqcourse.nmt.decode`    -- greedy decoding and beam search, batched
- :mod:`seqcourse.nmt.configs`   -- the ``gpu``, ``laptop`` (and ``laptop-word``), Multi30k and ``smoke`` configurations
- :mod:`seqcourse.nmt.errors`    -- ``NMTError``: a bad input, reported by the commands in one line
- :mod:`seqcourse.nmt.train`     -- ``python -m seqcourse.nmt.train --config laptop``
- :mod:`seqcourse.nmt.translate` -- ``python -m seqcourse.nmt.translate --checkpoint model.pt "Hello."``
"""
