"""Turn texts into vectors: sentence transformers, static word vectors, and the hidden states of
a pretrained transformer.

Sentence transformers are run batch by batch and streamed to a memory-mapped ``.npy`` file,
so even the largest GLUE tasks (~500k unique sentences) never sit in memory at once; word
vectors are looked up, and words missing from the vocabulary are reported and left out (both in
:mod:`isotropy.embeddings.texts`; the word2vec files are read in
:mod:`isotropy.embeddings.word_vectors`). The geometry studies read every layer's hidden states
(:mod:`isotropy.embeddings.hidden_states`; torch is imported only when a model runs). Each name is
imported from its module.
"""
