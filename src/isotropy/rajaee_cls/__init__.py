"""The Rajaee & Pilehvar (2021) CLS study: the cluster-based method on the CLS token."""
