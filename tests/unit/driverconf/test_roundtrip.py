# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The parser is lossless: parse(text).render() gives back the same bytes,
and the spans it records tile the file exactly, so edits can be spliced
in without touching anything else (facts §2.3, §16.1).

Fixtures are built by tests/fixtures/sdconf/sdconf_fixtures.py in the
shape of the shipped sd.conf files; a grammar-based generator then makes
valid-ish driver.conf files and checks that every global property comes
back with the values that were written.
"""

import os
import re
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdtune.driverconf import lexer as lx
from sdtune.driverconf.parser import parse, parse_bytes

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "fixtures", "sdconf"))
import sdconf_fixtures as fx  # noqa: E402
from tests import strategies  # noqa: E402

BLANKS = set(" \t\r\n")


def meaning(conf):
    """What the kernel keeps: statement kinds, node identity, props."""
    return [(s.kind, s.node_name, s.parent, s.class_name,
             [(p.name, p.kind, [v.value for v in p.values])
              for p in s.properties])
            for s in conf.statements]


def expected_meaning(fixture):
    """The meaning a fixture was built with, in file order (the builders
    put node specs first and the global statements after them)."""
    out = [("node", n.name, n.parent, n.class_name,
            [(k, kind, vals) for k, (kind, vals) in n.props.items()])
           for n in fixture.nodes]
    for name, (kind, vals) in fixture.globals.items():
        out.append(("global", None, None, None, [(name, kind, vals)]))
    return out


def assert_tiled(conf):
    """Statements, comments and blanks account for every byte, in order,
    without overlap: nothing is lost or counted twice."""
    text = conf.text
    spans = sorted([(s.start, s.end) for s in conf.statements] +
                   [(c.start, c.end) for c in conf.comments
                    if not any(s.start <= c.start < s.end
                               for s in conf.statements)])
    pos = 0
    for start, end in spans:
        assert pos <= start <= end <= len(text)
        assert set(text[pos:start]) <= BLANKS, text[pos:start]
        pos = end
    assert set(text[pos:]) <= BLANKS


def assert_spans_consistent(conf):
    """Every recorded span lies in the text, and a value's span re-lexes
    to the same token."""
    text = conf.text
    last = 0
    for s in conf.statements:
        assert last <= s.start <= s.end <= len(text)
        last = s.end
        for p in s.properties:
            assert s.start <= p.start <= p.end <= s.end
            assert text[p.name_token.start:p.name_token.end].replace(
                "\\", "") == p.name.replace("\\", "")
            for v in p.values:
                tok = v.token
                again = lx.Lexer(text[tok.start:tok.end]).lex()
                assert (again.kind, again.value) == (tok.kind, tok.value)
    for d in conf.diagnostics:
        assert 0 <= d.offset <= len(text)


# -- the shipped shapes -------------------------------------------------------

@pytest.mark.parametrize("name", sorted(fx.ALL))
def test_fixture_round_trips_and_means_what_it_was_built_with(name):
    fixture = fx.ALL[name]()
    conf = parse(fixture.text)
    assert conf.render() == fixture.text
    assert conf.diagnostics == []
    assert meaning(conf) == expected_meaning(fixture)
    assert_tiled(conf)
    assert_spans_consistent(conf)


def test_nexentastor_comment_inside_the_list_is_kept_as_a_comment():
    fixture = fx.nexentastor()
    conf = parse(fixture.text)
    prop = conf.global_property("sd-config-list")
    inside = [c for c in conf.comments
              if prop.start < c.start < prop.end]
    assert len(inside) == 1
    assert fixture.text[inside[0].start:inside[0].end].startswith(
        "# virtual disks")


# -- byte-level variants ------------------------------------------------------

def crlf(text):
    return text.replace("\n", "\r\n")


def tabs(text):
    # Blanks around '=' and between tokens become TABs and mixed runs.
    return text.replace("=", "\t= \t").replace('" ', '"\t\t')


def trailing_ws(text):
    return text.replace("\n", " \t \n")


def no_final_newline(text):
    return text.rstrip("\n")


def high_bytes_in_comments(text):
    # A UTF-8 name, a cp1252 quote pair and raw latin-1 in comments.
    return text.replace("#\n", "# M\xc3\xbcller \x93ok\x94 \xe9\xff\n", 2)


def nul_in_comment(text):
    return text.replace("#\n", "# \x00 nul\n", 1)


SAME_MEANING = [crlf, tabs, trailing_ws, no_final_newline,
                high_bytes_in_comments, nul_in_comment]


@pytest.mark.parametrize("variant", SAME_MEANING,
                         ids=[f.__name__ for f in SAME_MEANING])
@pytest.mark.parametrize("name", sorted(fx.ALL))
def test_variant_round_trips_with_the_same_meaning(name, variant):
    fixture = fx.ALL[name]()
    text = variant(fixture.text)
    assert text != fixture.text
    conf = parse(text)
    assert conf.render() == text
    assert conf.diagnostics == []
    assert meaning(conf) == expected_meaning(fixture)
    assert_tiled(conf)
    assert_spans_consistent(conf)
    data = text.encode("latin-1")
    assert parse_bytes(data).render().encode("latin-1") == data


@pytest.mark.parametrize("junk", ["\x00", "\xe9", "\x93", "\f", "@@"])
def test_junk_between_statements_round_trips_and_is_reported(junk):
    text = fx.upstream_intel().text.replace(
        "ddi-devid-registrant", junk + "\nddi-devid-registrant")
    conf = parse(text)
    assert conf.render() == text
    assert conf.diagnostics and all(d.severity == "error"
                                    for d in conf.diagnostics)
    assert conf.global_property("ddi-devid-registrant") is not None
    assert_spans_consistent(conf)


def test_binary_file_round_trips_byte_for_byte():
    data = bytes(range(256)) * 3 + fx.nexentastor().text.encode("latin-1")
    conf = parse_bytes(data)
    assert conf.render().encode("latin-1") == data
    assert_spans_consistent(conf)


def test_splicing_a_value_span_changes_only_that_value():
    fixture = fx.nexentastor()
    conf = parse(fixture.text)
    tok = conf.global_property("sd-config-list").values[1].token
    new = fixture.text[:tok.start] + '"io-time:60"' + fixture.text[tok.end:]
    after = parse(new)
    assert [v.value for v in after.global_property("sd-config-list").values] \
        == [fx.VMWARE_KEY, "io-time:60"]
    assert meaning(after)[:-1] == meaning(conf)[:-1]
    assert after.diagnostics == []


# -- property (a): any text at all --------------------------------------------

@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(strategies.driver_conf_text())
def test_any_text_round_trips_and_never_raises(text):
    conf = parse(text)
    assert conf.render() == text
    assert_spans_consistent(conf)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=120))
def test_any_bytes_round_trip(data):
    conf = parse_bytes(data)
    assert conf.render().encode("latin-1") == data


# -- property (b): a grammar of valid-ish driver.conf files -------------------

KEYWORDS = {"name", "NAME", "parent", "PARENT", "class", "CLASS"}
_NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
_NAME_MORE = _NAME_CHARS + "0123456789-"


def to32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


@st.composite
def prop_names(draw):
    first = draw(st.sampled_from(_NAME_CHARS))
    rest = draw(st.text(alphabet=_NAME_MORE, max_size=10))
    name = first + rest
    if name in KEYWORDS:
        name += "x"
    # Any name character may be written with a backslash before it.
    out = []
    for ch in name:
        out.append("\\" + ch if draw(st.integers(0, 9)) == 0 else ch)
    return name, "".join(out)


_STRING_CHARS = st.one_of(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E),
    st.sampled_from(['"', "\\", "\n", "\t", "\x00", "#", ";", ",", ":",
                     "\xe9", "\x93"]))


@st.composite
def strings(draw):
    """(value, literal): a string value and one way of writing it."""
    value = draw(st.text(alphabet=_STRING_CHARS, max_size=20))
    out = ['"']
    for i, ch in enumerate(value):
        nxt = value[i + 1:i + 2]
        how = draw(st.integers(0, 5))
        if ch in '"\\\n':
            out.append("\\" + ch)           # must be escaped
        elif how == 0 and not ch.isdigit():
            out.append("\\" + ch)           # needless escape: the char
        elif how == 1 and ord(ch) < 128 and not ("0" <= nxt <= "7"):
            out.append("\\%03o" % ord(ch))   # octal escape
        else:
            out.append(ch)
    out.append('"')
    return value, "".join(out)


@st.composite
def integers(draw):
    """(value as the kernel stores it, literal)."""
    n = draw(st.one_of(st.integers(0, 300), st.integers(0, 1 << 36)))
    form = draw(st.sampled_from(["dec", "hex", "HEX", "oct", "neg", "cpl"]))
    if form == "dec":
        return to32(n), "%d" % n
    if form == "hex":
        return to32(n), "0x%x" % n
    if form == "HEX":
        return to32(n), "0x%X" % n
    if form == "oct":
        return to32(n), ("0%o" % n) if n else "0"
    if form == "neg":
        return to32(-n), "-%d" % n
    return (to32(~n) if n else 0), "~%d" % n


SEP = st.sampled_from([" ", "\t", "\n", "  \t", " # note, \"x\"; y\n",
                       "\t#\n", "\r\n"])
TIGHT = st.one_of(st.just(""), SEP)


@st.composite
def properties(draw):
    """(name, kind, values, literals, source text)."""
    name, name_src = draw(prop_names())
    kind = draw(st.sampled_from(["string", "int", "boolean"]))
    if kind == "boolean":
        return name, kind, [], [], name_src
    gen = strings() if kind == "string" else integers()
    items = draw(st.lists(gen, min_size=1, max_size=4))
    src = name_src + draw(TIGHT) + "=" + draw(TIGHT)
    for i, (_, lit) in enumerate(items):
        if i:
            src += draw(TIGHT) + "," + draw(TIGHT)
        src += lit
    return name, kind, [v for v, _ in items], [lit for _, lit in items], src


def _merge(props_):
    """Within one statement a repeated name replaces the earlier value
    where the earlier one was."""
    merged = {}
    for name, kind, values, lits in props_:
        merged[name] = (kind, values, lits)
    return [(n,) + v for n, v in merged.items()]


@st.composite
def statements(draw):
    props_ = draw(st.lists(properties(), min_size=1, max_size=4))
    body = [src for *_, src in props_]
    plain = [(n, k, v, lits) for n, k, v, lits, _ in props_]
    if draw(st.booleans()):
        return ("global", None, None, _merge(plain), draw(SEP).join(body))
    node = draw(strings())
    cls = draw(strings())
    kw_name = draw(st.sampled_from(["name", "NAME"]))
    kw_class = draw(st.sampled_from(["class", "CLASS"]))
    head = "%s=%s%s%s=%s" % (kw_name, node[1], draw(SEP), kw_class, cls[1])
    merged = _merge([(kw_class, "string", [cls[0]], [cls[1]])] + plain)
    return ("node", node[0], cls[0], merged,
            head + draw(SEP) + draw(SEP).join(body))


@st.composite
def files(draw):
    stmts = draw(st.lists(statements(), max_size=6))
    parts = []
    for *_, src in stmts:
        parts.append(draw(st.sampled_from(["", "\n", "# c\n", "\n\n"])))
        parts.append(src + draw(TIGHT) + ";" + draw(st.sampled_from(
            ["\n", " # end\n", "\r\n", "\n\n"])))
    if draw(st.booleans()):
        parts.append("# trailing comment")
    return "".join(parts), [s[:4] for s in stmts]


# 100 structured files per run (each of several statements): the unit
# suite stays fast, and hypothesis keeps the failing ones it finds in its
# database; `make fuzz` covers the parser at depth.
@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(files())
def test_generated_files_round_trip_and_keep_every_value(generated):
    text, stmts = generated
    conf = parse(text)
    assert conf.render() == text
    assert conf.diagnostics == []
    assert_tiled(conf)
    assert_spans_consistent(conf)
    assert [s.kind for s in conf.statements] == [s[0] for s in stmts]

    expected_globals = {}
    for got, (kind, node, cls, props_) in zip(conf.statements, stmts):
        if kind == "node":
            assert (got.node_name, got.class_name) == (node, cls)
        assert [(p.name, p.kind, [v.value for v in p.values])
                for p in got.properties] == \
            [(n, k, v) for n, k, v, _ in props_]
        # Each value's span is exactly the literal that was written.
        assert [[text[v.token.start:v.token.end] for v in p.values]
                for p in got.properties] == [lits for *_, lits in props_]
        if kind == "global":
            for n, k, v, _ in props_:
                expected_globals.setdefault(n, (k, v))

    # Every global property is found, the first statement's one winning.
    for name, (kind, values) in expected_globals.items():
        prop = conf.global_property(name)
        assert (prop.kind, [v.value for v in prop.values]) == (kind, values)
    assert {p.name for p in conf.global_properties()} == \
        set(expected_globals)


def test_generator_example_by_hand():
    """One file of the generator's grammar written out, so a failure of
    the property test can be compared with a readable case."""
    text = ('a\\-b =\t"x\\"y", # c\n "\\101\\8",  "z" ;\n'
            'n = 0x1F, 010,-5 ,~3 ;  # end\r\n'
            'NAME="sd" CLASS="scsi"\tflag t=1;\n'
            'n = 1;')
    conf = parse(text)
    assert conf.diagnostics == []
    assert [v.value for v in conf.global_property("a-b").values] == \
        ['x"y', "A\x008", "z"]
    assert [v.value for v in conf.global_property("n").values] == \
        [31, 8, -5, -4]
    node = conf.statements[2]
    assert (node.kind, node.node_name, node.class_name) == \
        ("node", "sd", "scsi")
    assert [p.name for p in node.properties] == ["CLASS", "flag", "t"]
    assert re.search(r"n = 1;$", conf.render())
