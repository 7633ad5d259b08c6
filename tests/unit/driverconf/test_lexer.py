# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for sdtune.driverconf.lexer: the model of the kernel's kobj_lex()
(facts §2.1 and the lexer's docstring).

Besides one test per lexical rule, the simulator's model of the kernel's
reader (tests/sim/driverconf.py: kobj_lex() one byte at a time, no fast
paths, nothing imported from the product) is run against the product's
lexer on generated text: both must produce the same tokens with the same
byte spans.
"""

import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdtune.driverconf import lexer as lx
from sdtune.driverconf.lexer import Lexer, tokenize

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", ".."))
from tests.sim import driverconf  # noqa: E402


def kinds(text):
    return [t.kind for t in tokenize(text)]


def toks(text):
    """(kind, value, start, end) of every token but the final EOF."""
    out = [(t.kind, t.value, t.start, t.end) for t in tokenize(text)]
    assert out[-1][0] == lx.EOF
    return out[:-1]


def one(text):
    """The single token `text` lexes to (followed only by EOF)."""
    got = tokenize(text)
    assert len(got) == 2 and got[1].kind == lx.EOF, got
    return got[0]


# -- token kinds (facts §2.1 table) -------------------------------------------

@pytest.mark.parametrize("ch,kind", [
    ("=", lx.EQUALS), ("&", lx.AMPERSAND), ("|", lx.BIT_OR),
    ("*", lx.STAR), (":", lx.COLON), (";", lx.SEMICOLON),
    (",", lx.COMMA), ("/", lx.SLASH), ("\n", lx.NEWLINE),
    ("\r", lx.NEWLINE),
])
def test_single_character_tokens(ch, kind):
    tok = one(ch)
    assert (tok.kind, tok.value, tok.start, tok.end) == (kind, ch, 0, 1)


def test_pound_starts_a_comment_that_runs_to_the_end_of_the_line():
    # tokenize() gives the text kobj_find_eol() skips after the '#'.
    assert toks("# a \"b\" ; c\nx") == [
        (lx.POUND, "#", 0, 1), (lx.COMMENT, ' a "b" ; c', 1, 11),
        (lx.NEWLINE, "\n", 11, 12), (lx.NAME, "x", 12, 13)]


@pytest.mark.parametrize("eol", ["\r", "\f"])
def test_comment_also_ends_at_cr_and_form_feed(eol):
    # kobj_find_eol() stops at isnewline(): '\n', '\r' and '\f'.
    got = toks("#c" + eol + "x")
    assert got[1] == (lx.COMMENT, "c", 1, 2)
    assert got[2][2] == 2


def test_blanks_and_tabs_between_tokens_are_skipped():
    assert toks(" \t a\t=  1 ") == [
        (lx.NAME, "a", 3, 4), (lx.EQUALS, "=", 5, 6), (lx.DECVAL, "1", 8, 9)]


def test_cr_is_a_newline_token_and_crlf_is_two():
    assert kinds("a\r\nb") == [lx.NAME, lx.NEWLINE, lx.NEWLINE, lx.NAME,
                               lx.EOF]


def test_form_feed_is_a_white_space_token_not_skipped():
    # The lexer docstring: a form feed starts a WHITE_SPACE token (the
    # facts table simplifies it as skipped); blanks after it join it.
    assert toks("a\f \f\tb") == [
        (lx.NAME, "a", 0, 1), (lx.WHITE_SPACE, "\f \f\t", 1, 5),
        (lx.NAME, "b", 5, 6)]


def test_eof_token_sits_at_the_end():
    tok = tokenize("ab  ")[-1]
    assert (tok.kind, tok.start, tok.end) == (lx.EOF, 4, 4)
    assert kinds("") == [lx.EOF]


# -- strings ------------------------------------------------------------------

@pytest.mark.parametrize("src,value", [
    (r'"plain"', "plain"),
    (r'""', ""),
    (r'"a\"b"', 'a"b'),                 # \" is a quote
    (r'"a\\b"', "a\\b"),                # \\ is a backslash
    (r'"\101\102"', "AB"),              # octal escapes
    (r'"\0"', "\0"),
    (r'"\8"', "\x008"),                 # \8: a NUL, then the 8 itself
    (r'"\9x"', "\x009x"),
    (r'"\08"', "\x008"),                # octal stops at the first 8
    (r'"\n\t"', "nt"),                  # no C escapes: the letter itself
    (r'"\q"', "q"),
    ('"a#b,c:d;e"', "a#b,c:d;e"),       # all literal inside quotes
    ('"a\rb"', "a\rb"),                 # a CR does not end a string
    ('"a\fb"', "a\fb"),
    ('"\xe9\x93"', "\xe9\x93"),         # bytes >= 0x80 are kept
])
def test_string_escapes(src, value):
    tok = one(src)
    assert tok.kind == lx.STRING
    assert tok.value == value
    assert (tok.start, tok.end) == (0, len(src))
    assert not tok.warnings


def test_backslash_newline_continues_a_string():
    tok = tokenize('x "ab\\\ncd" y')[1]
    assert (tok.kind, tok.value, tok.start, tok.end) == \
        (lx.STRING, "ab\ncd", 2, 10)
    assert not tok.warnings


def test_octal_escape_takes_every_octal_digit_and_keeps_the_low_byte():
    tok = one(r'"\1011"')                 # 0o1011 = 521 -> (char) 9
    assert tok.value == "\t"
    assert list(tok.warnings) == ["Character overflow detected."]


def test_octal_escape_above_127_warns_but_keeps_the_byte():
    tok = one(r'"\377"')
    assert tok.value == "\xff"
    assert list(tok.warnings) == ["Character overflow detected."]
    assert list(one(r'"\177"').warnings) == []


def test_newline_inside_a_string_gives_missing_quote_and_a_newline_value():
    got = tokenize('a = "abc\nb;')
    s = got[2]
    assert (s.kind, s.value, s.start, s.end) == (lx.STRING, "\n", 4, 8)
    assert list(s.warnings) == ['Missing "']
    assert s.damaged
    # The newline itself is left for the next token.
    assert (got[3].kind, got[3].start) == (lx.NEWLINE, 8)
    assert got[4].value == "b"


def test_eof_inside_a_string_gives_missing_quote():
    got = tokenize('"abc')
    assert (got[0].kind, got[0].value, got[0].start, got[0].end) == \
        (lx.STRING, "\n", 0, 4)
    assert list(got[0].warnings) == ['Missing "']
    assert got[1].kind == lx.EOF


def test_escape_offsets_point_into_the_file():
    tok = tokenize('x="a\\101b"')[2]
    assert tok.value == "aAb"
    assert [tok.offset_of(i) for i in range(3)] == [3, 4, 8]


def test_plain_string_offsets_point_after_the_quote():
    tok = tokenize('  "key"')[0]
    assert [tok.offset_of(i) for i in range(3)] == [3, 4, 5]


# -- the 1023-character limit -------------------------------------------------

def test_string_of_1023_characters_is_accepted():
    tok = one('"' + "a" * 1023 + '"')
    assert tok.kind == lx.STRING and len(tok.value) == 1023


def test_string_of_1024_characters_is_unexpected():
    text = '"' + "a" * 1024 + '"'
    got = tokenize(text)
    assert got[0].kind == lx.UNEXPECTED
    assert got[0].value == "a" * 1023
    # The character that overflowed is consumed with the token.
    assert (got[0].start, got[0].end) == (0, 1025)
    # The closing quote now opens a string that runs to the end of file.
    assert (got[1].kind, got[1].start, list(got[1].warnings)) == \
        (lx.STRING, 1025, ['Missing "'])


def test_escape_counts_one_character_against_the_limit():
    assert one('"' + "a" * 1022 + '\\b"').value == "a" * 1022 + "b"
    assert tokenize('"' + "a" * 1023 + '\\b"')[0].kind == lx.UNEXPECTED


def test_octal_escape_digits_do_not_count_against_the_limit():
    tok = one('"' + "a" * 1022 + '\\101"')
    assert tok.kind == lx.STRING and tok.value.endswith("aA")


@pytest.mark.parametrize("first,more,kind", [
    ("a", "b", lx.NAME), ("1", "2", lx.DECVAL), ("0x", "f", lx.HEXVAL),
    ("-a", "b", lx.NAME), ("-1", "2", lx.DECVAL), ("\\a", "b", lx.NAME),
])
def test_name_and_number_limit_is_1023_characters(first, more, kind):
    # Count characters of the token's value: a name's leading backslash
    # escape is not part of it.
    stored = len(first.replace("\\", ""))
    ok = first + more * (1023 - stored)
    tok = one(ok + " ")
    assert tok.kind == kind and len(tok.value) == 1023
    over = tokenize(ok + more + " ;")
    assert over[0].kind == lx.UNEXPECTED
    assert len(over[0].value) == 1023
    assert over[0].end == len(ok) + 1
    assert [t.kind for t in over[1:]] == [lx.SEMICOLON, lx.EOF]


def test_whitespace_token_limit():
    assert one("\f" * 1023).kind == lx.WHITE_SPACE
    got = tokenize("\f" * 1024 + "a")
    assert (got[0].kind, got[0].end) == (lx.UNEXPECTED, 1024)
    assert got[1].kind == lx.NAME


# -- numbers ------------------------------------------------------------------

@pytest.mark.parametrize("src,kind", [
    ("0", lx.DECVAL), ("42", lx.DECVAL), ("010", lx.DECVAL),
    ("089", lx.DECVAL), ("0x1F", lx.HEXVAL), ("0xff", lx.HEXVAL),
    ("0x", lx.HEXVAL), ("-5", lx.DECVAL), ("~3", lx.DECVAL),
    ("-0x10", lx.HEXVAL), ("~0x0", lx.HEXVAL),
])
def test_numbers(src, kind):
    tok = one(src)
    assert (tok.kind, tok.value, tok.start, tok.end) == \
        (kind, src, 0, len(src))


def test_upper_case_0X_is_not_hex():
    assert toks("0X10") == [(lx.DECVAL, "0", 0, 1), (lx.NAME, "X10", 1, 4)]


def test_hex_stops_at_a_non_hex_character():
    assert toks("0x1g") == [(lx.HEXVAL, "0x1", 0, 3), (lx.NAME, "g", 3, 4)]


def test_a_number_ends_where_the_digits_end():
    assert toks("12ab") == [(lx.DECVAL, "12", 0, 2), (lx.NAME, "ab", 2, 4)]
    assert toks("10x") == [(lx.DECVAL, "10", 0, 2), (lx.NAME, "x", 2, 3)]


# -- signs and names ----------------------------------------------------------

@pytest.mark.parametrize("after", [" ", "\t", "\n"])
def test_lone_minus_before_a_blank_is_a_name(after):
    got = toks("-" + after)
    assert got[0] == (lx.NAME, "-", 0, 1)


def test_minus_before_letters_is_part_of_a_name():
    assert toks("-abc") == [(lx.NAME, "-abc", 0, 4)]
    assert toks("~abc") == [(lx.NAME, "~abc", 0, 4)]


def test_minus_before_anything_else_is_unexpected_and_eats_it():
    # The character after the sign is read with it.
    assert toks("-;x") == [(lx.UNEXPECTED, "-;", 0, 2), (lx.NAME, "x", 2, 3)]
    assert toks("-\r")[0] == (lx.UNEXPECTED, "-\r", 0, 2)
    assert toks("~ ")[0] == (lx.UNEXPECTED, "~ ", 0, 2)
    assert toks("--5") == [(lx.UNEXPECTED, "--", 0, 2),
                           (lx.DECVAL, "5", 2, 3)]


@pytest.mark.parametrize("src,value", [
    ("sd-config-list", "sd-config-list"),
    ("_x9", "_x9"),
    ("class_prop", "class_prop"),
    ("a\\/b", "a/b"),        # an escaped character joins the name
    ("\\abc", "abc"),
    ("a\\ b", "a b"),
    ("a\\\\", "a\\"),
])
def test_names(src, value):
    tok = one(src)
    assert (tok.kind, tok.value, tok.start, tok.end) == \
        (lx.NAME, value, 0, len(src))


def test_name_cannot_start_with_a_digit():
    assert toks("9abc") == [(lx.DECVAL, "9", 0, 1), (lx.NAME, "abc", 1, 4)]


@pytest.mark.parametrize("ch", ["@", "!", "$", "\x00", "\xe9", "\x93",
                                "[", "'", "\x7f"])
def test_other_characters_are_unexpected(ch):
    assert toks(ch + "a") == [(lx.UNEXPECTED, ch, 0, 1), (lx.NAME, "a", 1, 2)]


def test_token_spans_of_a_statement():
    text = 'sd-config-list =\t"A", # c\n\t"b:1";'
    got = toks(text)
    assert [(k, text[s:e]) for k, _, s, e in got] == [
        (lx.NAME, "sd-config-list"), (lx.EQUALS, "="), (lx.STRING, '"A"'),
        (lx.COMMA, ","), (lx.POUND, "#"), (lx.COMMENT, " c"),
        (lx.NEWLINE, "\n"), (lx.STRING, '"b:1"'), (lx.SEMICOLON, ";")]


def test_lexer_reads_one_token_at_a_time():
    lexer = Lexer("a=1;")
    got = [lexer.lex().kind for _ in range(5)]
    assert got == [lx.NAME, lx.EQUALS, lx.DECVAL, lx.SEMICOLON, lx.EOF]
    assert lexer.lex().kind == lx.EOF     # EOF is sticky


# -- a differential test against the simulator's kobj_lex() -------------------

def reference(text):
    """The simulator's kobj_lex() on the same bytes, in the lexer's terms
    (the value of an UNEXPECTED token is left out)."""
    return [(getattr(lx, kind), value if kind != "UNEXPECTED" else None,
             start, end)
            for kind, value, start, end in
            driverconf.tokenize(text.encode("latin-1"))]


def _compare(text):
    got = [(t.kind, t.value if t.kind != lx.UNEXPECTED else None,
            t.start, t.end) for t in tokenize(text)]
    assert got == reference(text)


# Characters that matter to kobj_lex(), plus a few that do not.
_ALPHABET = list('"\\=,;:#&|*/-~0178x9X_aZ \t\n\r\f\x00\xe9\x93')
# Any byte of a file, as latin-1 text, but 0xFF: the kernel reads it as
# end of file (facts §2.1) and the product's lexer does not model that.
_ANY_BYTE = st.characters(min_codepoint=0, max_codepoint=0xFE)
_LONG = ["a" * 1023, "a" * 1024, "1" * 1023, "1" * 1024, "0x" + "f" * 1021,
         "0x" + "f" * 1022, '"' + "s" * 1023 + '"', '"' + "s" * 1024 + '"',
         "\f" * 1024, '"' + "s" * 1022 + "\\", "\\" + "n" * 1023,
         "-" + "m" * 1022, "-" + "m" * 1023]


@pytest.mark.parametrize("text", [
    'name="sd" class="scsi" target=0 lun=0;',
    'a = "x\\"y", "\\101\\8", 0x1F, -5, ~3, 010;',
    "# comment\r\nb\fc", '"abc', '"ab\\', "-", "~", "a\\", "0x", "-\n",
] + _LONG)
def test_reference_lexer_agrees_on_examples(text):
    _compare(text)


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.text(alphabet=_ALPHABET, max_size=12),
                          st.text(alphabet=_ANY_BYTE, max_size=4),
                          st.sampled_from(_LONG)), max_size=8))
def test_reference_lexer_agrees_on_generated_text(chunks):
    _compare("".join(chunks))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=60))
def test_tokens_tile_the_text_with_only_blanks_between(text):
    """Token spans are in order, do not overlap, and what lies between
    them is blanks and TABs only: every byte of the file is accounted
    for, which is what the lossless parser relies on."""
    pos = 0
    for tok in tokenize(text):
        assert pos <= tok.start <= tok.end <= len(text)
        assert set(text[pos:tok.start]) <= {" ", "\t"}
        if tok.kind in (lx.DECVAL, lx.HEXVAL, lx.COMMENT):
            assert tok.value == text[tok.start:tok.end]
        if tok.kind == lx.STRING and not tok.damaged:
            assert text[tok.start] == '"' and text[tok.end - 1] == '"'
        pos = tok.end
    assert pos == len(text)
