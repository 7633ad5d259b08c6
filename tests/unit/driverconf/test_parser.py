# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for sdtune.driverconf.parser: the model of hwc_parse_now(),
get_hwc_spec() and make_prop() (facts §2.2).

Rules are tested one by one; a differential test then runs generated
token soup through the product's parser and through the simulator's
independent model of the kernel's reader, tests/sim/driverconf.py.
"""

import os
import re
import sys

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sdtune.driverconf.parser import (getvalue, parse, parse_bytes,
                                      to_int32)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", ".."))
from tests.sim import driverconf  # noqa: E402


def errors(conf):
    return [d.message for d in conf.diagnostics if d.severity == "error"]


def where(conf, d):
    return conf.line_col(d.offset)


def only_diag(conf):
    assert len(conf.diagnostics) == 1, conf.diagnostics
    return conf.diagnostics[0]


def props(stmt):
    return [(p.name, p.kind, [v.value for v in p.values])
            for p in stmt.properties]


def gval(conf, name):
    prop = conf.global_property(name)
    return None if prop is None else [v.value for v in prop.values]


# -- global properties and node specs -----------------------------------------

def test_statement_without_name_is_global_with_name_is_a_node_spec():
    conf = parse('ddi-devid-registrant=1;\n'
                 'name="sd" class="scsi" target=3 lun=0;\n')
    g, n = conf.statements
    assert (g.kind, props(g)) == \
        ("global", [("ddi-devid-registrant", "int", [1])])
    assert (n.kind, n.node_name, n.class_name, n.parent) == \
        ("node", "sd", "scsi", None)
    # class= is also a property of the node (make_prop() is called for it)
    assert props(n) == [("class", "string", ["scsi"]),
                        ("target", "int", [3]), ("lun", "int", [0])]
    assert [p.name for p in conf.global_properties()] == \
        ["ddi-devid-registrant"]
    assert conf.diagnostics == []


def test_parent_alone_makes_a_node_spec():
    conf = parse('name="sd" parent="mpt" target=7 lun=0;')
    (n,) = conf.statements
    assert (n.kind, n.node_name, n.parent, n.class_name) == \
        ("node", "sd", "mpt", None)
    assert props(n) == [("target", "int", [7]), ("lun", "int", [0])]


def test_keywords_are_all_lower_or_all_upper_case():
    conf = parse('NAME="sd" PARENT="mpt" CLASS="scsi";\nName="x";')
    n, g = conf.statements
    assert (n.kind, n.node_name, n.parent, n.class_name) == \
        ("node", "sd", "mpt", "scsi")
    # "Name" is not the keyword: an ordinary global property.
    assert (g.kind, props(g)) == ("global", [("Name", "string", ["x"])])


@pytest.mark.parametrize("text", ['class="scsi" target=0;',
                                  'parent="mpt" target=0;',
                                  'target=0\n  class="scsi";'])
def test_parent_or_class_without_name_is_dropped(text):
    conf = parse(text)
    assert [s.kind for s in conf.statements] == ["dropped"]
    assert conf.global_properties() == []
    d = only_diag(conf)
    assert (d.message, d.severity, where(conf, d)) == \
        ("missing name attribute", "error", (1, 1))


def test_name_without_parent_or_class_is_dropped():
    conf = parse('a=1;\n name="sd" target=0;')
    assert [s.kind for s in conf.statements] == ["global", "dropped"]
    d = only_diag(conf)
    assert (d.message, where(conf, d)) == \
        ("missing parent or class attribute", (2, 2))


def test_property_without_value_is_a_boolean():
    conf = parse("foo;\nbar baz=2;")
    assert props(conf.statements[0]) == [("foo", "boolean", [])]
    assert props(conf.statements[1]) == [("bar", "boolean", []),
                                         ("baz", "int", [2])]
    assert conf.diagnostics == []


def test_mixed_types_never_reach_make_prop():
    """Facts §2.2 says a list mixing strings and integers gives "Mixed
    types in value list" and no property.  get_hwc_spec() never builds
    such a list: after `"x",` a number is an unexpected token (and after
    `1,` a string is), so the odd value is skipped with a warning and the
    property keeps the values of the first type."""
    conf = parse('a = "x", 1, "y";')
    assert gval(conf, "a") == ["x", "y"]
    assert [(d.message, where(conf, d)) for d in conf.diagnostics] == [
        ("Unexpected token '1'", (1, 10)), ("Unexpected token ','", (1, 11))]
    assert "Mixed types in value list" not in errors(conf)


def test_mixed_list_ending_after_a_comma_makes_no_property():
    conf = parse('a = 1, "x";')
    assert gval(conf, "a") is None
    assert errors(conf) == ["Unexpected token 'x'", "Unexpected end of line"]


@pytest.mark.parametrize("src,shown", [
    ("a\\/b", "a/b"), ("a\\:b", "a:b"), ("a\\@b", "a@b"), ("a\\[b", "a[b"),
    ("a\\]b", "a]b"), ("a\\\\b", "a\\b"), ("a\\ b", "a b"),
    ("a\\\x01b", "a\\x01b"),
    # valid_prop_name() compares a signed char: bytes >= 0x80 fail too.
    ("a\\\xe9b", "a\\xe9b"),
])
def test_invalid_property_name_makes_no_property(src, shown):
    conf = parse("ok=1 " + src + "=2;")
    (s,) = conf.statements
    assert props(s) == [("ok", "int", [1])]
    d = only_diag(conf)
    assert (d.message, d.code, d.severity, where(conf, d)) == \
        ("invalid property name '%s'" % shown, "property-name", "error",
         (1, 6))


def test_escaped_ordinary_character_gives_a_valid_name():
    conf = parse("a\\-b=1;")
    assert gval(conf, "a-b") == [1]
    assert conf.diagnostics == []


def test_second_name_in_a_spec_drops_it():
    """Facts §2.2: the kernel's check is `if (ddi_get_name(devi))`, and
    ddi_get_name() returns devi_binding_name, which ddi_impldefs.h makes
    the same field as devi_name, set by the first name=.  So a second
    name= gives "'name' property already specified ..." and drops the
    spec; the kernel reads on right after that string, and what follows
    (here `target=1`, with neither parent nor class) becomes a
    driver-global statement."""
    conf = parse('name="a" class="scsi"\nname="b" target=1;')
    assert [s.kind for s in conf.statements] == ["dropped", "global"]
    assert props(conf.statements[1]) == [("target", "int", [1])]
    d = only_diag(conf)
    assert (d.severity, d.code, where(conf, d)) == \
        ("error", "missing-semicolon", (2, 6))
    assert d.message == ("'name' property already specified (the ';' may "
                         "have been omitted on previous spec!)")


def test_second_name_before_sd_config_list_makes_it_global_again():
    """A node spec missing its ';' before sd-config-list would make the
    list a property of that node, but a second name= in between drops
    the spec and leaves what follows global (facts §2.2)."""
    conf = parse('name="sd" class="scsi" target=0 lun=0\n'
                 'name="x"\nsd-config-list="ATA     X","physical-block-'
                 'size:4096";\n')
    assert [s.kind for s in conf.statements] == ["dropped", "global"]
    assert [p[0] for p in props(conf.statements[1])] == ["sd-config-list"]


def test_two_node_specs_run_together_lose_both():
    """The usual missing-';' accident between two target specs (facts
    §2.2): the second name= drops the first spec, the kernel resumes
    after that string, and the rest has a class but no name, so it is
    dropped too ("missing name attribute")."""
    conf = parse('name="sd" class="scsi" target=0 lun=0\n'
                 'name="sd" class="scsi" target=1 lun=0;\n')
    assert [s.kind for s in conf.statements] == ["dropped", "dropped"]
    e = [d for d in conf.diagnostics if d.severity == "error"]
    assert [(d.message, d.code, where(conf, d)) for d in e] == [
        ("'name' property already specified (the ';' may have been "
         "omitted on previous spec!)", "missing-semicolon", (2, 6)),
        ("missing name attribute", "syntax", (2, 11))]
    assert gval(conf, "target") is None and gval(conf, "lun") is None


def test_second_class_drops_the_spec():
    """A second class= without a second name: "'class' property already
    specified", the spec is dropped and the rest becomes global."""
    conf = parse('name="sd" class="scsi" target=0 lun=0\n'
                 'class="scsi" target=1 lun=0;\n')
    assert [s.kind for s in conf.statements] == ["dropped", "global"]
    e = [d for d in conf.diagnostics if d.severity == "error"]
    assert [(d.message, d.code, where(conf, d)) for d in e] == [
        ("'class' property already specified", "missing-semicolon",
         (2, 7))]
    assert gval(conf, "target") == [1] and gval(conf, "lun") == [0]


def test_second_parent_drops_the_spec():
    conf = parse('name="sd" parent="mpt" target=0\n'
                 'parent="mpt" target=1;')
    assert conf.statements[0].kind == "dropped"
    e = [d for d in conf.diagnostics if d.severity == "error"]
    assert [(d.message, where(conf, d)) for d in e] == [
        ("'parent' property already specified (the ';' may have been "
         "omitted on previous spec!)", (2, 8))]
    assert gval(conf, "target") == [1]


def test_missing_semicolon_after_globals_makes_them_node_properties():
    conf = parse('ddi-forceattach=1\n'
                 'sd-config-list = "ATA     X", "disksort:false"\n'
                 'name="sd" class="scsi" target=0 lun=0;\n')
    (s,) = conf.statements
    assert (s.kind, s.node_name) == ("node", "sd")
    assert [p.name for p in s.properties] == [
        "ddi-forceattach", "sd-config-list", "class", "target", "lun"]
    assert conf.global_properties() == []
    assert conf.global_property("sd-config-list") is None
    # The kernel says nothing about it.
    assert conf.diagnostics == []


@pytest.mark.parametrize("text", ["a = 1, 2", 'a = "x"\n', "a b c",
                                  "a = 1 # comment"])
def test_eof_inside_a_statement_drops_it(text):
    conf = parse(text)
    assert [s.kind for s in conf.statements] == ["dropped"]
    assert conf.global_properties() == []
    d = only_diag(conf)
    assert (d.message, d.offset) == ("Unexpected EOF", len(text))


def test_unexpected_token_of_another_kind_drops_the_statement_and_resumes():
    conf = parse("a = 1 : b = 2;\nc = 3;")
    assert [s.kind for s in conf.statements] == ["dropped", "global",
                                                 "global"]
    d = only_diag(conf)
    assert (d.message, where(conf, d)) == ("Unexpected token ':'", (1, 7))
    assert gval(conf, "a") is None
    assert gval(conf, "b") == [2] and gval(conf, "c") == [3]


def test_form_feed_inside_a_statement_is_an_unexpected_token():
    conf = parse("a =\f1;\nb=2;")
    assert gval(conf, "a") is None and gval(conf, "b") == [2]
    first = conf.diagnostics[0]
    assert (first.message, where(conf, first)) == \
        ("Unexpected token '\\x0c'", (1, 4))


def test_misplaced_tokens_of_the_statement_grammar_only_warn():
    conf = parse("a = 1 = 2, , b;")
    (s,) = conf.statements
    assert s.kind == "global"
    # '=' after a value, the value 2 that follows it, the second ','
    # and the NAME after a comma are refused one by one; the statement
    # goes on, and a keeps the value read before.
    assert errors(conf) == ["Unexpected token '='", "Unexpected token '2'",
                            "Unexpected token ','", "Unexpected token 'b'",
                            "Unexpected end of line"]
    assert props(s) == []


def test_unexpected_end_of_line_keeps_the_earlier_properties():
    conf = parse("x=1 a = ;")
    (s,) = conf.statements
    assert props(s) == [("x", "int", [1])]
    d = only_diag(conf)
    assert (d.message, d.offset) == ("Unexpected end of line", 8)


def test_tokens_between_statements_are_unexpected():
    conf = parse('= ; "s" 5 a=1;')
    assert errors(conf) == ["Unexpected token '='", "Unexpected token ';'",
                            "Unexpected token 's'", "Unexpected token '5'"]
    assert gval(conf, "a") == [1]


def test_unterminated_string_value_becomes_a_newline():
    conf = parse('a = "abc\nb = 1;')
    (s,) = conf.statements
    assert props(s) == [("a", "string", ["\n"]), ("b", "int", [1])]
    d = only_diag(conf)
    assert (d.message, d.code, where(conf, d)) == \
        ('Missing "', "string", (1, 5))


def test_overlong_string_is_reported_with_the_limit():
    conf = parse('a = "' + "x" * 1024 + '";')
    first = conf.diagnostics[0]
    assert first.code == "syntax" and first.offset == 4
    assert first.message.startswith("Unexpected token 'xxx")
    assert "1023-character limit" in first.message
    assert gval(conf, "a") is None


def test_class_value_list_is_the_class_property():
    conf = parse('name="sd" class="scsi", "other";')
    (s,) = conf.statements
    assert s.class_name == "scsi"
    assert props(s) == [("class", "string", ["scsi", "other"])]


# -- repeated properties ------------------------------------------------------

def test_repeated_property_in_one_statement_is_replaced_in_place():
    conf = parse("a=1 b=2 a=3, 4;")
    assert props(conf.statements[0]) == [("a", "int", [3, 4]),
                                         ("b", "int", [2])]


def test_across_statements_the_first_global_property_wins():
    conf = parse('sd-config-list = "A", "x:1";\n'
                 'sd-config-list = "B", "y:2";\n')
    assert [p.name for p in conf.global_properties()] == \
        ["sd-config-list", "sd-config-list"]
    assert gval(conf, "sd-config-list") == ["A", "x:1"]
    assert conf.global_property("sd-config-list").statement is \
        conf.statements[0]


def test_node_property_does_not_shadow_a_global_one():
    conf = parse('name="sd" class="scsi" a=1;\na=2;')
    assert gval(conf, "a") == [2]


# -- integers -----------------------------------------------------------------

@pytest.mark.parametrize("src,value", [
    ("0", 0), ("10", 10), ("0x1F", 31), ("0xff", 255), ("0x", 0),
    ("010", 8), ("0777", 511), ("-5", -5), ("-010", -8), ("-0x10", -16),
    ("~3", -4), ("~0x0", -1),
    ("~0", 0),               # kobj_getvalue() returns before the '~'
    ("089", None), ("08", None), ("0128", None),     # bad octal digits
    ("0x100000000", 0), ("0xffffffff", -1), ("4294967296", 0),
    ("2147483648", -2147483648), ("-0x80000000", -2147483648),
    ("0x1ffffffff", -1),
    ("99999999999999999999999", -159383553),   # mod 2^64, then int
])
def test_integers(src, value):
    assert getvalue(src) == value
    conf = parse("a = " + src + ";")
    assert props(conf.statements[0]) == [("a", "int", [value])]
    assert conf.diagnostics == []


@pytest.mark.parametrize("value,expected", [
    (0, 0), (1, 1), (0x7FFFFFFF, 0x7FFFFFFF), (0x80000000, -0x80000000),
    (0xFFFFFFFF, -1), (1 << 32, 0), (-1, -1), (-(1 << 31) - 1, 0x7FFFFFFF),
])
def test_to_int32(value, expected):
    assert to_int32(value) == expected


def test_int_list_and_upper_case_0X_is_not_a_number():
    conf = parse("a = 1, 0x2, 03;\nb = 0X10;")
    assert gval(conf, "a") == [1, 2, 3]
    # 0X10 lexes as DECVAL 0 then NAME X10: b = 0 and a boolean X10.
    assert props(conf.statements[1]) == [("b", "int", [0]),
                                         ("X10", "boolean", [])]


# -- comments -----------------------------------------------------------------

def test_comments_between_list_values():
    text = ('a = "x", # one\n'
            '\t"y" # two, "no"\n'
            '\t# three; really\n'
            '\t, "z";  # after\n')
    conf = parse(text)
    assert gval(conf, "a") == ["x", "y", "z"]
    assert [text[c.start:c.end] for c in conf.comments] == [
        "# one", '# two, "no"', "# three; really", "# after"]
    assert conf.diagnostics == []


def test_comment_anywhere_inside_a_statement():
    conf = parse("a # c\n = # d\n 1 # e\n ;")
    assert gval(conf, "a") == [1]
    assert len(conf.comments) == 3


def test_comment_ends_at_a_form_feed():
    conf = parse("# c\fa=1;")
    assert errors(conf) == ["Unexpected token '\\x0c'"]
    assert gval(conf, "a") == [1]


# -- spans and positions ------------------------------------------------------

def test_spans_of_statements_properties_and_values():
    text = '# hdr\n  a = "x",\t"y" ;\nname="sd" class="scsi" t=1;'
    conf = parse(text)
    g, n = conf.statements
    assert text[g.start:g.end] == 'a = "x",\t"y" ;'
    (a,) = g.properties
    assert text[a.start:a.end] == 'a = "x",\t"y"'
    assert [text[v.token.start:v.token.end] for v in a.values] == \
        ['"x"', '"y"']
    assert text[n.start:n.end] == 'name="sd" class="scsi" t=1;'
    t = n.properties[-1]
    assert (text[t.start:t.end], t.statement) == ("t=1", n)


def test_boolean_property_span_is_its_name():
    text = "  flag ;"
    conf = parse(text)
    (p,) = conf.global_properties()
    assert text[p.start:p.end] == "flag"


@pytest.mark.parametrize("offset,expected", [
    (0, (1, 1)), (2, (1, 3)), (3, (1, 4)), (4, (2, 1)), (6, (2, 3)),
    (7, (3, 1)), (8, (3, 2)), (9, (3, 3)),
])
def test_line_col(offset, expected):
    conf = parse("ab\r\ncd\n\tz")     # CR counts as a column, not a line
    assert conf.line_col(offset) == expected


def test_line_col_of_diagnostics_in_a_longer_file():
    text = "a=1;\n\n# x\n  b = 1 : 2;\n"
    conf = parse(text)
    assert [(d.message, where(conf, d)) for d in conf.diagnostics] == [
        ("Unexpected token ':'", (4, 9)), ("Unexpected token '2'", (4, 11)),
        ("Unexpected token ';'", (4, 12))]


def test_parse_bytes_keeps_every_byte():
    data = b'a = "\xe9\x00\x93", "\\377";\n'
    conf = parse_bytes(data)
    assert gval(conf, "a") == ["\xe9\x00\x93", "\xff"]
    assert conf.render().encode("latin-1") == data
    # "\377" is above 127: the kernel warns about it.
    assert errors(conf) == ["Character overflow detected."]


# -- differential test against the reference reader ---------------------------

def model_view(text):
    conf = parse(text)
    stmts = [(s.kind, s.node_name, s.parent, s.class_name,
              [(p.name, p.kind, [v.value for v in p.values])
               for p in s.properties])
             for s in conf.statements if s.kind != "dropped"]
    msgs = []
    for d in conf.diagnostics:
        if d.severity != "error":
            continue
        m = d.message
        for prefix in ("Unexpected token", "invalid property name"):
            if m.startswith(prefix):
                m = prefix
        msgs.append(m)
    return stmts, msgs


_ON_LINE = re.compile(r" on line [0-9]+ of /kernel/drv/sd\.conf\Z")


def ref_view(text):
    """The simulator's reading of the same bytes in model_view's terms: a
    boolean has no values (the kernel stores an int 0), and the messages
    lose their token text and their "on line N of FILE"."""
    conf = driverconf.parse(text.encode("latin-1"))
    stmts = [(k, n, p, c, [(name, kind, vals if kind != "boolean" else [])
                           for name, kind, vals in props])
             for k, n, p, c, props in conf.statements]
    msgs = []
    for m in conf.warnings:
        m = _ON_LINE.sub("", m)
        for prefix in ("Unexpected token", "invalid property name"):
            if m.startswith(prefix):
                m = prefix
        msgs.append(m)
    return stmts, msgs


_VOCAB = ["name", "NAME", "parent", "PARENT", "class", "CLASS", "Name", "a",
          "b", "sd-config-list", "a\\/b", "x\\\xe9", '"sd"', '"scsi"',
          '"x"', '""', '"a\\"b"', '"\\377"', '"open', "1", "010", "089",
          "0x10", "0X10", "-5", "~3", "~0", "0xffffffff", "0x100000000",
          "=", "=", ",", ",", ";", ";", "#c\n", "\n", "\r", ":", "\f", "-",
          "@"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_VOCAB),
                          st.sampled_from([" ", "", "\t", "\n"])),
                max_size=30))
def test_parser_agrees_with_the_reference_on_token_soup(parts):
    text = "".join(tok + sep for tok, sep in parts)
    ref = ref_view(text)
    # A property repeated in one statement with a value of the other type
    # is a second property to the kernel (ddi_prop_update() looks a name
    # up with its type) and to the simulator, but the product's parser
    # replaces the first one: a known difference, so such soup (rare) is
    # not compared.
    assume(all(len({name for name, _, _ in props}) == len(props)
               for _, _, _, _, props in ref[0]))
    assert model_view(text) == ref


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["", "-", "~"]),
       st.sampled_from(["", "0", "0x", "0X"]),
       st.text(alphabet="0123456789abcdefxX", max_size=24))
def test_getvalue_agrees_with_the_reference(sign, prefix, digits):
    token = sign + prefix + digits
    if token in ("", "-", "~"):
        return
    assert getvalue(token) == driverconf.getvalue(token)
