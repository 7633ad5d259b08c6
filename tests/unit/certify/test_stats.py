# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Student's t in certify/stats.py: its quantile against the values of
the printed tables (NIST/SEMATECH e-Handbook 1.3.6.7.2 has them to three
decimals; these carry the usual further digits), its density against the
slope of its distribution, and the quantile as the distribution's
inverse."""

import math

import pytest

from sdtune.certify.stats import t_cdf, t_pdf, t_quantile

# (p, df, t) with P(T <= t) = p.
QUANTILES = [
    (0.975, 1, 12.70620474),
    (0.975, 2, 4.302652730),
    (0.975, 5, 2.570581836),
    (0.975, 10, 2.228138852),
    (0.975, 30, 2.042272456),
    (0.975, math.inf, 1.959963985),
    (0.995, 3, 5.840909310),
    (0.95, 7, 1.894578605),
    (0.6, 1, 0.3249196962),
    (0.9995, 1, 636.6192488),
]


@pytest.mark.parametrize("p,df,t", QUANTILES)
def test_quantile_matches_the_table(p, df, t):
    assert t_quantile(p, df) == pytest.approx(t, rel=1e-8)
    assert t_cdf(t, df) == pytest.approx(p, abs=1e-9)


@pytest.mark.parametrize("df", [1, 2, 4, 9, 40, math.inf])
def test_density_is_the_slope_of_the_distribution(df):
    for t in (0.0, 0.5, 1.7, 6.0):
        h = 1e-5
        slope = (t_cdf(t + h, df) - t_cdf(t - h, df)) / (2 * h)
        assert t_pdf(t, df) == pytest.approx(slope, rel=1e-6, abs=1e-9)


def test_quantile_inverts_the_distribution_everywhere():
    for df in (1, 2, 3, 6, 15, 100):
        for p in (0.5001, 0.55, 0.8, 0.9, 0.99, 0.99999):
            assert t_cdf(t_quantile(p, df), df) == pytest.approx(p, abs=1e-11)
