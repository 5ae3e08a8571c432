# Reproduction of "Isotropy, Clusters, and Classifiers" (Mickus, Grönroos & Attieh, ACL 2024)
# and the studies around it. Stages, in data-flow order; see README.md.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/embed.smk"
include: "rules/optimize.smk"
include: "rules/sensitivity.smk"
include: "rules/extensions.smk"
include: "rules/istar.smk"
include: "rules/rajaee_cls.smk"
include: "rules/geometry.smk"
include: "rules/provenance.smk"
include: "rules/report.smk"


rule all:
    default_target: True
    input:
        targets.study_targets(config, config["studies"]),
        targets.istar_estimator_outputs(config),
        targets.section2_outputs(config),
        paths.CLAIMS,
        paths.PAPER_COMPARISON,
        paths.REPORT_OVERVIEW,
