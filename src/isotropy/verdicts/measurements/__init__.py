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

Every public name is importable from here, as from the one module this package was.
"""

from isotropy.verdicts.measurements.cai import (
    COSINE_FILE,
    LID_FILE,
    cosine_measurements,
    lid_measurements,
)
from isotropy.verdicts.measurements.istar import ACC, ISTAR_QUANTITIES, istar_measurements
from isotropy.verdicts.measurements.optimisation import (
    CORRELATION_TABLES,
    COUNT_TABLES,
    optimisation_measurements,
    per_seed_correlations,
    per_seed_moments,
    run_protocol,
)
from isotropy.verdicts.measurements.rajaee_cls import rajaee_cls_measurements
from isotropy.verdicts.measurements.rows import COLUMNS, measurement, seed_std
from isotropy.verdicts.measurements.run import (
    as_preview,
    load_tables,
    measure,
)
from isotropy.verdicts.measurements.seeds import (
    SEED_SPREAD_LIMIT,
    fine_tuned_not_learned,
    seed_test,
    spread_test,
)
from isotropy.verdicts.measurements.sts import (
    CLASSIFICATION_FILE,
    CLASSIFICATION_READINGS,
    IW_READINGS,
    QUANTITY_OF_STS,
    SEED_FREE_METHODS,
    STS_FILE,
    classification_measurements,
    sts_measurements,
)

__all__ = [
    "ACC",
    "CLASSIFICATION_FILE",
    "CLASSIFICATION_READINGS",
    "COLUMNS",
    "CORRELATION_TABLES",
    "COSINE_FILE",
    "COUNT_TABLES",
    "ISTAR_QUANTITIES",
    "IW_READINGS",
    "LID_FILE",
    "QUANTITY_OF_STS",
    "SEED_FREE_METHODS",
    "SEED_SPREAD_LIMIT",
    "STS_FILE",
    "as_preview",
    "classification_measurements",
    "cosine_measurements",
    "fine_tuned_not_learned",
    "istar_measurements",
    "lid_measurements",
    "load_tables",
    "measure",
    "measurement",
    "optimisation_measurements",
    "per_seed_correlations",
    "per_seed_moments",
    "rajaee_cls_measurements",
    "run_protocol",
    "seed_std",
    "seed_test",
    "spread_test",
    "sts_measurements",
]
