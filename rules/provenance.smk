# Audit of every result against its provenance records, and the check of the paper's claims.
