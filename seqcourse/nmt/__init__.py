"""The capstone: English-to-French neural machine translation with attention.

- :mod:`seqcourse.nmt.data`      -- corpora (Tatoeba, Multi30k), normalisation, splits, tokenizer, Vocab, batches
- :mod:`seqcourse.nmt.model`     -- the model (bidirectional LSTM encoder, attentional LSTM decoder) and its loss
- :mod:`seqcourse.nmt.decode`    -- greedy decoding and beam search, batched
- :mod:`seqcourse.nmt.configs`   -- the ``gpu``, ``laptop`` and ``smoke`` configurations
- :mod:`seqcourse.nmt.train`     -- ``python -m seqcourse.nmt.train --config laptop``
- :mod:`seqcourse.nmt.translate` -- ``python -m seqcourse.nmt.translate --checkpoint model.pt "Hello."``
"""
