# Reproduction of "Isotropy, Clusters, and Classifiers" (Mickus, Grönroos & Attieh, ACL 2024)
# and the studies around it. Stages, in data-flow order; see README.md.
# Nothing is imported before rules/common.smk, which takes the workflow's folder off sys.path.


configfile: "config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/embed.smk"


# The studies, one record each (isotropy.studies): each brings its rule file, its target rule
# builds its record's final files, and rule all builds a study one way, the one its record says
# (listed in config `studies`, or configured).
for study_rules in studies.rule_files():

    include: study_rules


for study_target, final_files in studies.target_rules(SETTINGS).items():

    rule:
        name:
            study_target
        input:
            final_files,


include: "rules/provenance.smk"
include: "rules/report.smk"


rule all:
    default_target: True
    input:
        studies.rule_all_targets(SETTINGS),
        paths.CLAIMS,
        paths.PAPER_COMPARISON,
        paths.REPORT_OVERVIEW,
