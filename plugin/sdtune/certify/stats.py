# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Small statistics for certification verdicts: sample summaries of
per-interval measurements, one-sided Welch tests of "A costs more than B
by at least a factor" for independent samples, and one-sided paired tests
of the same on per-round log ratios.  Standard library only; pure.

Why interval means: a drive's per-I/O latency is far from normal and
autocorrelated (caches, garbage collection), but the mean over an
interval of hundreds of I/Os is close to normal and close to independent
of the next interval's mean, which is what the t-test needs.
"""

import functools
import math
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple


@dataclass(frozen=True)
class Sample:
    """Summary of n observations (interval means, say)."""

    n: int
    mean: float
    sd: float

    @classmethod
    def of(cls, values: Sequence[float]) -> "Sample":
        n = len(values)
        if n == 0:
            return cls(0, float("nan"), float("nan"))
        mean = math.fsum(values) / n
        if n == 1:
            return cls(1, mean, float("nan"))
        var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
        return cls(n, mean, math.sqrt(var))

    @property
    def se(self) -> float:
        """Standard error of the mean."""
        return self.sd / math.sqrt(self.n) if self.n > 1 else float("inf")

    @property
    def rel_se(self) -> float:
        return self.se / self.mean if self.mean else float("inf")


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta (Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = tiny if abs(d) < tiny else d
    d = 1.0 / d
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-12:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(lbeta + a * math.log(x) + b * math.log(1.0 - x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with df degrees of freedom."""
    if math.isinf(df):
        return 0.5 * math.erfc(-t / math.sqrt(2.0))
    x = df / (df + t * t)
    tail = 0.5 * betainc(df / 2.0, 0.5, x)
    return 1.0 - tail if t > 0 else tail


def prob_greater(a: Sample, b: Sample, factor: float = 1.0) -> float:
    """Confidence that mean(a) > factor * mean(b): one minus the p-value
    of a one-sided Welch t-test.  0.5 when the data cannot tell."""
    if a.n < 2 or b.n < 2:
        return 0.5
    mb = factor * b.mean
    va, vb = a.se ** 2, (factor * b.se) ** 2
    diff = a.mean - mb
    if va + vb == 0.0:
        return 1.0 if diff > 0 else 0.0 if diff < 0 else 0.5
    t = diff / math.sqrt(va + vb)
    # Welch-Satterthwaite degrees of freedom.
    df = (va + vb) ** 2 / ((va ** 2 / (a.n - 1) if va else 0.0) +
                           (vb ** 2 / (b.n - 1) if vb else 0.0))
    return t_cdf(t, max(df, 1.0))


def trimmed_mean(values: Sequence[float], trim: float = 0.2) -> float:
    """The mean of ``values`` without the ``trim`` share at each end."""
    ordered = sorted(values)
    g = int(trim * len(ordered))
    kept = ordered[g:len(ordered) - g] or ordered
    return math.fsum(kept) / len(kept) if kept else float("nan")


@dataclass(frozen=True)
class Yuen:
    """The trimmed centre of paired differences, its standard error from
    the winsorized variance, and the degrees of freedom of Yuen's test."""

    centre: float
    se: float
    df: int


def yuen(diffs: Sequence[float], trim: float = 0.2) -> Optional[Yuen]:
    """Yuen's trimmed-mean summary of ``diffs`` (``trim`` of the values
    cut from each end), or None when fewer than two values are left."""
    values = sorted(diffs)
    n = len(values)
    g = int(trim * n)
    h = n - 2 * g
    if h < 2:
        return None
    kept = values[g:n - g]
    centre = trimmed_mean(values, trim)
    wins = [values[g]] * g + kept + [values[n - g - 1]] * g
    wmean = math.fsum(wins) / n
    wvar = math.fsum((v - wmean) ** 2 for v in wins) / (n - 1)
    se = math.sqrt(wvar) / ((1 - 2 * g / n) * math.sqrt(n))
    return Yuen(centre, se, h - 1)


def prob_log_above(diffs: Sequence[float], threshold: float,
                   trim: float = 0.2) -> float:
    """Confidence that the centre of paired differences is above
    ``threshold``: one minus the p-value of Yuen's one-sided trimmed
    t-test (``trim`` of the values cut from each end, the variance
    winsorized).  0.5 when too few differences are known.

    Used on per-round log cost ratios, log(cost_a / cost_b), measured in
    the same round: what drifts between rounds (load, the drive's state)
    hits both and cancels in the ratio, so only the round-to-round
    scatter of the ratio itself is left in the error.  Trimming keeps a
    round in which one arm was stalled by the machine from deciding, or
    blocking, a verdict: a t-test on the plain mean is at the mercy of
    such heavy tails."""
    y = yuen(diffs, trim)
    if y is None:
        return 0.5
    diff = y.centre - threshold
    if y.se == 0.0:
        return 1.0 if diff > 0 else 0.0 if diff < 0 else 0.5
    return t_cdf(diff / y.se, y.df)


def t_pdf(t: float, df: float) -> float:
    """The density of Student's t with df degrees of freedom at t."""
    if math.isinf(df):
        return math.exp(-t * t / 2.0) / math.sqrt(2.0 * math.pi)
    lognorm = (math.lgamma((df + 1.0) / 2.0) - math.lgamma(df / 2.0)
               - 0.5 * math.log(df * math.pi))
    return math.exp(lognorm - (df + 1.0) / 2.0 * math.log1p(t * t / df))


@functools.lru_cache(maxsize=256)
def t_quantile(p: float, df: float) -> float:
    """The t value below which a share p (0.5 < p < 1) of Student's t
    distribution with df degrees of freedom lies.

    Newton's method on t_cdf, kept inside a bracket that bisection
    narrows whenever a step would leave it: a handful of t_cdf calls
    where plain bisection took a hundred (each a continued fraction), and
    memoized, since a certification asks for the same few (p, df) at
    every look."""
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2
    t = (lo + hi) / 2
    for _ in range(200):
        err = t_cdf(t, df) - p
        if err < 0:
            lo = t
        else:
            hi = t
        density = t_pdf(t, df)
        step = t - err / density if density > 0 else None
        if step is None or not lo < step < hi:
            step = (lo + hi) / 2
        if abs(step - t) <= 1e-13 * max(1.0, abs(t)) or hi - lo <= 1e-15:
            return step
        t = step
    return t


def log_interval(diffs: Sequence[float], level: float = 0.95,
                 trim: float = 0.2
                 ) -> Optional[Tuple[float, float, float, float]]:
    """(centre, low, high, confidence) of paired log differences: Yuen's
    trimmed centre, its two-sided ``level`` interval, and the one-sided
    confidence that the centre is above 0 (prob_log_above's test).  None
    when too few differences are known.  exp() of the first three is a
    ratio and its interval."""
    bounds = level_interval(diffs, level, trim)
    if bounds is None:
        return None
    return (trimmed_mean(diffs, trim), bounds[0], bounds[1],
            prob_log_above(diffs, 0.0, trim))


def level_interval(values: Sequence[float], level: float = 0.95,
                   trim: float = 0.2) -> Optional[Tuple[float, float]]:
    """The two-sided ``level`` interval of the trimmed mean of
    ``values`` (Yuen), or None when too few are known."""
    y = yuen(values, trim)
    if y is None:
        return None
    half = t_quantile(0.5 + level / 2, y.df) * y.se
    return y.centre - half, y.centre + half
