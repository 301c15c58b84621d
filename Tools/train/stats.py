"""Paired A-vs-B statistics for the stall-model reports (issue 17 §2).

    import stats
    stats.paired_comparison(on_stalls, off_stalls, [(trace, offset), ...])

Every A-vs-B claim in the reports (controller on against off, simulator
against real) is about pairs: the same trace at the same offset played by A
and by B. `paired_comparison` takes A's and B's value per pair and returns

- the totals and means of A and B, and the mean paired difference A − B;
- the **Wilcoxon signed-rank test** (scipy.stats.wilcoxon, two-sided):
  `zero_method="wilcox"`, pairs with no difference are dropped before ranking
  (the usual choice: a tie says nothing about which side is lower; the sign
  test drops them too, so both tests see the same pairs). Up to
  WILCOXON_EXACT_MAX_PAIRS differing pairs the p-value is exact: the signed-rank
  statistic (the sum of the ranks of the positive differences, tied |d| given
  their average rank) against all 2^n sign flips (scipy.stats.permutation_test);
  stall counts are small integers, full of ties, for which neither SciPy's exact
  table nor its normal approximation holds at small n (four differences of −1
  would get p = 0.046 from the approximation; the exact p is 0.125). Beyond
  that, scipy.stats.wilcoxon's normal approximation with the tie correction and
  no continuity correction (`method="approx"`);
- the **sign test** (scipy.stats.binomtest, two-sided, p = ½): of the pairs
  that differ, how many have A above B;
- a **bootstrap confidence interval of the mean paired difference**
  (scipy.stats.bootstrap on the differences, `method="BCa"`, bias-corrected
  and accelerated, 9 999 resamples, seed BOOTSTRAP_SEED so a re-run gives the
  same interval). When BCa is undefined (every difference equal) the interval
  is that one value.

Pairs are keyed by (trace, offset): each key must appear once. When a key ran
more than once (replicates), average its replicates first (`mean_by_key`) so
that a trace offset counts as one pair, not as several independent ones.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy
import scipy.stats

CONFIDENCE_LEVEL = 0.95
BOOTSTRAP_RESAMPLES = 9999
BOOTSTRAP_SEED = 17  # fixed: the interval is reproducible
BOOTSTRAP_METHOD = "BCa"
WILCOXON_ZERO_METHOD = "wilcox"  # zero differences dropped before ranking
WILCOXON_METHOD = "approx"  # normal approximation with tie correction (accepted by SciPy 1.10 … 1.17)
WILCOXON_EXACT_MAX_PAIRS = 16  # up to this many differing pairs: exact over 2^n sign flips (65 536)


def mean_by_key(keys, values):
    """[(key, mean of that key's values)] in first-seen order, and how many keys had
    more than one value."""
    groups = {}
    for k, v in zip(keys, values):
        groups.setdefault(k, []).append(float(v))
    return [(k, float(np.mean(v))) for k, v in groups.items()], sum(1 for v in groups.values() if len(v) > 1)


def _bootstrap(d, confidence, seed):
    """BCa interval of the mean of d; (low, high, method)."""
    if np.all(d == d[0]):
        return float(d[0]), float(d[0]), "degenerate (every difference equal)"
    kwargs = dict(confidence_level=confidence, n_resamples=BOOTSTRAP_RESAMPLES, method=BOOTSTRAP_METHOD)
    try:  # SciPy >= 1.15 takes `rng`; Debian 12's 1.10 takes `random_state`
        res = scipy.stats.bootstrap((d,), np.mean, rng=np.random.default_rng(seed), **kwargs)
    except TypeError:
        res = scipy.stats.bootstrap((d,), np.mean, random_state=np.random.default_rng(seed), **kwargs)
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return low, high, BOOTSTRAP_METHOD


def _signed_rank_exact(nonzero):
    """(T+, two-sided exact p) of the signed-rank test over every sign flip of `nonzero`."""
    ranks = scipy.stats.rankdata(np.abs(nonzero))
    if len(nonzero) == 1:  # two equally likely signs: p = 1 (permutation_test needs two)
        return float(ranks[0] if nonzero[0] > 0 else 0.0), 1.0

    def t_plus(x, axis=-1):
        return np.sum(np.where(x > 0, ranks, 0.0), axis=axis)

    res = scipy.stats.permutation_test((nonzero,), t_plus, permutation_type="samples", vectorized=True,
                                       n_resamples=np.inf, alternative="two-sided")
    return float(res.statistic), float(res.pvalue)


def paired_comparison(a, b, pairs, *, confidence=CONFIDENCE_LEVEL, seed=BOOTSTRAP_SEED) -> dict:
    """A against B over the same pairs: `a[i]` and `b[i]` are the values of pair `pairs[i]`
    (a (trace, offset) key). Returns a JSON-ready dict (see the module's doc); p-values
    and interval bounds are None when there is nothing to test (no pair, or no pair
    that differs)."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    keys = [tuple(p) if isinstance(p, (list, tuple)) else p for p in pairs]
    if not (len(a) == len(b) == len(keys)):
        raise ValueError(f"a, b and pairs differ in length ({len(a)}, {len(b)}, {len(keys)})")
    if len(set(keys)) != len(keys):
        dup = sorted({str(k) for k in keys if keys.count(k) > 1})
        raise ValueError(f"pairs repeat a key ({', '.join(dup)}): average replicates first (mean_by_key)")
    d = a - b
    n = len(d)
    nonzero = d[d != 0]
    above, below = int((d > 0).sum()), int((d < 0).sum())
    out = dict(
        pairs=n, totalA=float(a.sum()), totalB=float(b.sum()),
        meanA=float(a.mean()) if n else None, meanB=float(b.mean()) if n else None,
        meanDifference=float(d.mean()) if n else None,
        pairsAAbove=above, pairsABelow=below, pairsEqual=n - above - below,
        wilcoxon=dict(test=("Wilcoxon signed-rank, two-sided "
                            "(exact: scipy.stats.permutation_test; else scipy.stats.wilcoxon)"),
                      zeroMethod=WILCOXON_ZERO_METHOD, method=None, statistic=None, pValue=None,
                      warnings=[]),
        signTest=dict(test="sign test (scipy.stats.binomtest, p = 0.5), two-sided",
                      aAbove=above, differing=above + below, pValue=None),
        meanDifferenceCI=dict(confidence=confidence, method=None, resamples=BOOTSTRAP_RESAMPLES, seed=seed,
                              low=None, high=None),
        scipyVersion=scipy.__version__,
    )
    if len(nonzero):
        if len(nonzero) <= WILCOXON_EXACT_MAX_PAIRS:
            t_plus, pvalue = _signed_rank_exact(nonzero)
            out["wilcoxon"].update(statistic=t_plus, statisticKind="sum of the ranks of A − B > 0",
                                   pValue=pvalue, method="exact (all sign flips, ties at their average rank)")
        else:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                w = scipy.stats.wilcoxon(d, zero_method=WILCOXON_ZERO_METHOD, method=WILCOXON_METHOD,
                                         alternative="two-sided")
            out["wilcoxon"].update(statistic=float(w.statistic), statisticKind="scipy.stats.wilcoxon (two-sided)",
                                   method=WILCOXON_METHOD,
                                   pValue=float(w.pvalue), warnings=sorted({str(c.message) for c in caught}))
        out["signTest"]["pValue"] = float(scipy.stats.binomtest(above, above + below, 0.5).pvalue)
    if n >= 2:
        low, high, method = _bootstrap(d, confidence, seed)
        if math.isnan(low) or math.isnan(high):
            low = high = None
        out["meanDifferenceCI"].update(low=low, high=high, method=method)
    return out


def describe(c: dict, unit: str = "", digits: int = 2) -> str:
    """One line for a report: mean difference, its CI, and both tests' p-values."""
    def f(x):
        return "—" if x is None else f"{x:.{digits}f}"

    def p(x):
        return "—" if x is None else f"{x:.2g}"
    ci = c["meanDifferenceCI"]
    return (f"mean A−B per pair {f(c['meanDifference'])}{unit} "
            f"({ci['confidence'] * 100:.0f} % CI {f(ci['low'])} … {f(ci['high'])}, "
            f"bootstrap {ci['method'] or '—'}), "
            f"{c['pairs']} pairs, A above/below/equal {c['pairsAAbove']}/{c['pairsABelow']}/{c['pairsEqual']}; "
            f"Wilcoxon p = {p(c['wilcoxon']['pValue'])}, sign test p = {p(c['signTest']['pValue'])}")
