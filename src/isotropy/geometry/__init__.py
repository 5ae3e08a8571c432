"""Cluster analyses of contextual embedding spaces (docs/methods.md, "Geometry"), on the metrics
engine (``isotropy.metrics``): Cai et al. (ICLR 2021) per layer (:mod:`isotropy.geometry.layers`),
Rajaee & Pilehvar (ACL 2021) STS (:mod:`isotropy.geometry.sts`). Plain functions of arrays and
tables; callers import from the module that holds a name.
"""
