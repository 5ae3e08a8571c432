"""Turn texts into vectors: sentence transformers and static word vectors (:mod:`.texts`), and
every layer's hidden states of a pretrained transformer (:mod:`.hidden_states`; torch is imported
only when a model runs)."""
