"""Every quantity the two pages judge, measured once from this run's result tables, by study.

:func:`measure` (in ``run``) turns the result tables into one long table, one row per quantity ×
setup; the claims page and the comparison with the papers read this table only. One module per
concern, each study's quantities in its own:

rows           the long table's columns and one row (:func:`measurement`), the seeds' std
seeds          tests over seeds: spread against the change, a difference of two groups, the
               learning guard's note on a group of fine-tuning runs
optimisation   the direct optimisation studies (main, GLUE): counts, correlations, traces' ends
istar          the I-STAR grid: IsoScore* change and metric gain over the baseline
cai            the geometry study after Cai et al.: LID, cosine statistics, S_inter
sts            the geometry study after Rajaee & Pilehvar: STS, I(W), SST-2 classification
rajaee_cls     the Rajaee CLS study: dev accuracy and I(W) with and without the method
run            :func:`measure` over every study, the result tables read, a preview's rows stamped
"""
