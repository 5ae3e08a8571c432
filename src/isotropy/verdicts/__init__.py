"""Verdicts: the papers' claims and printed numbers judged on this run's results.

The verdict words, defined once (docs/verdicts.md gives the rules behind them with examples):

``agrees``
    equivalence: the 95% interval for D = paper − ours, which includes the paper's own seed
    noise (:mod:`isotropy.verdicts.equivalence`), lies wholly within the declared margin ±δ
    (Holm-adjusted within its family, one per paper × study: :mod:`isotropy.verdicts.families`);
    a count: equal.
``differs``
    that interval lies wholly outside ±δ (or our value is undefined); a count: not equal.
``consistent`` / ``not consistent``
    a bound or direction the paper states without a number holds / does not hold; for a
    direction tested over seeds, significant (one-sided p < 0.05, Holm-adjusted within its
    family) in the stated direction / in the other one.
``inconclusive``
    our seeds cannot decide: D's interval straddles ±δ, or a seed test is significant neither
    way.
``inconsistent across seeds``
    the per-seed correlations disagree in sign with each other or with the pooled value: the
    pooled number summarises nothing, so it is never judged as agreement.
``not comparable``
    our protocol differs from the paper's where the number depends on it (the row's declared
    ``protocol``, e.g. metric stride or updates; LID: another n or k) by more than the measured
    bound of that setting's effect, or by a setting whose effect is not measured
    (config/protocol_effects.csv); the row names it.
``stand-in: not judged``
    our model or data is a stand-in for the paper's (named in the row) and the rule sets our
    value against the paper's number (a bound such as ρ below −0.998 included): our value is
    shown beside the paper's, never set against it. Directions and signs are still judged on
    stand-ins, and their verdict cell says *on a stand-in*.
``not decided``
    (claims) the run cannot tell: for "the same optimum", both optima sit at the same end of the
    run (its first or last recorded update) in every seed, so neither turns within it.
``not judged: learning not shown``
    a claim or printed number about a fine-tuned model whose accuracy is not above its task's
    majority baseline by the one-sided test of :mod:`isotropy.verdicts.learning`, or whose
    baseline was not recorded (the test cannot be made).
``1 seed: not judged``
    the rule needs a spread across seeds and the run has one seed of a seeded quantity.
``stated``
    printed beside ours, not judged (e.g. a sample size).
``not run``
    this run has nothing to compare (the study, setup or data is not part of it); the note
    says why.

The claims page uses ``supported`` / ``not supported`` where the engine says consistent / not
consistent for a tested claim, and the other words as they are; a claim checked without a test
has its own words:

``untested: holds`` / ``untested: fails``
    one value (a mean over seeds, or a seed-free value) compared with a bound: it holds / it
    does not, with no test over seeds behind it, so no error rate is claimed.
"""
