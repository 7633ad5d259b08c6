# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Hypothesis strategies more than one test module draws from."""

from hypothesis import strategies as st

# The characters driver.conf's lexer treats specially, and some that are
# not ASCII, so that random text hits them often.
_DRIVER_CONF_CHARS = list('"\\=,;#:-~0x18aZ_ \t\n\r\f\x00\xe9\x93\x94')


def driver_conf_text(max_size: int = 80) -> st.SearchStrategy:
    """Any latin-1 text, and text made of driver.conf's own characters."""
    return st.one_of(
        st.text(alphabet=st.characters(max_codepoint=255),
                max_size=max_size),
        st.text(alphabet=_DRIVER_CONF_CHARS, max_size=max_size))
