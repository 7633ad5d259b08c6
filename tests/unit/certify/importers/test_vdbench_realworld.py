# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The vdbench importer against what vdbench really writes (issue 11).

Part 1: every vdbench file of the real-world corpus
(tests/fixtures/realworld/vdbench/, INDEX.md section 1) with its exact
outcome: the runs read (names, sizes, queue depths) and each run that is
not usable with why, or the exact refusal.  No source in the corpus
states a drive's sector size, so no verdict is asserted for these files.

Part 2: the formats and quirks the issue lists, each made by changing a
copy of a corpus or constructed file in one place.

Part 3, `bin/sdtune infer --from FILE -o json` end to end on the
constructed files of tests/fixtures/vdbench/, is
tests/e2e/test_infer_vdbench.py.
"""

import os

import pytest

from sdtune.certify.importers.vdbench import parse_vdbench, read_vdbench
from sdtune.errors import ParseError

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "..", "..", "fixtures")
CORPUS = os.path.join(FIXTURES, "realworld", "vdbench")
MADE = os.path.join(FIXTURES, "vdbench")
REFUSAL = ("vdbench: no run is usable (writes only, one fixed transfer "
           "size, a raw device): ")

SPDK = "github-spdk-nvmf-aarch64-2020-vdbench50406-13col-avg-glued.txt"
ZH_GUIDE = \
    "github-zh-guide-vdbench50407-no-timestamp-column-seqwrite-8k-10sd.txt"
HERO_FSD = "hero0906-jiaoben-2021-fsd-filesystem-summary.html"
MASAKI_FLAT = "masakioui-vdb-2019-8host-randwrite-60s-flatfile.html"
MASAKI_SUMMARY = "masakioui-vdb-2019-8host-randwrite-60s-summary.html"
MASAKI_TOTALS = "masakioui-vdb-2019-8host-randwrite-60s-totals.html"
QUICKTEST = "masakioui-vdb-2019-quicktest-summary.html"
NVME_FSD = "masakioui-vdb_nvme-2019-fsd-format-write-raid0-totals.html"
TIGER_FLAT = "tiger7z-mac-m1-2023-zh-locale-quicktest-flatfile.html"

K4_14 = "vdbench50407-constructed-4kn-14col-timestamp.txt"
K4_NT = "vdbench50407-constructed-4kn-no-timestamp.txt"
N512_14 = "vdbench50407-constructed-512n-14col-timestamp.txt"
N512_NT = "vdbench50407-constructed-512n-no-timestamp.txt"


def corpus(name):
    with open(os.path.join(CORPUS, name), encoding="utf-8") as f:
        return f.read()


def made(name):
    with open(os.path.join(MADE, name), encoding="utf-8") as f:
        return f.read()


def runs(text):
    """(name, bs, qd) of each usable run, and the notes on the others."""
    steps, notes = read_vdbench(text)
    return [(s.name, s.bs, s.qd) for s in steps], notes


def refusal(text):
    with pytest.raises(ParseError) as e:
        parse_vdbench(text)
    return "%s%s: %s" % (e.value.command, " " + e.value.field
                         if e.value.field else "", e.value.reason)


# -- part 1: the corpus, file by file -----------------------------------------

def test_corpus_is_the_nine_files_tested_here():
    assert sorted(os.listdir(CORPUS)) == sorted([
        SPDK, ZH_GUIDE, HERO_FSD, MASAKI_FLAT, MASAKI_SUMMARY,
        MASAKI_TOTALS, QUICKTEST, NVME_FSD, TIGER_FLAT])


def test_spdk_13_columns_avg_glued_to_the_time_is_a_read_mix():
    # readpct=30 in the workload: the share the glued avg_31-150 line
    # reports (29.99; the eleven pasted intervals average 29.89).
    text = corpus(SPDK)
    assert runs(text) == ([], ["RD=rd1: 29.99 % reads"])
    assert refusal(text) == REFUSAL + "RD=rd1: 29.99 % reads"


def test_zh_guide_without_time_column_is_one_8k_write_run_at_2_threads():
    steps, notes = read_vdbench(corpus(ZH_GUIDE))
    assert notes == []
    assert [(s.name, s.bs, s.qd, s.pattern) for s in steps] == [
        ("vdbench rd1", 8192, 2, "seq")]
    step = steps[0]
    # avg_2-6: intervals 2 to 6; interval 1 is vdbench's warm-up.
    assert [iv.iops for iv in step.intervals] == [
        317936.2, 321929.0, 314911.0, 315841.4, 320851.4]
    assert [iv.lat_mean_ns for iv in step.intervals] == pytest.approx(
        [56000, 56000, 57000, 57000, 56000])
    assert step.iops == 318293.8
    assert step.lat_mean_ns == pytest.approx(57000)


def test_hero0906_fsd_summary_is_refused_naming_both_runs():
    text = corpus(HERO_FSD)
    notes = ["RD=format_for_rd1: file-system (FSD) report",
             "RD=rd1: file-system (FSD) report"]
    assert runs(text) == ([], notes)
    assert refusal(text) == REFUSAL + "; ".join(notes)


def test_masakioui_flatfile_xfersize_column_is_not_the_size_written():
    # The xfersize column says 512, the first size of the distribution;
    # the bytes per I/O say what was written: never read as 512.
    text = corpus(MASAKI_FLAT)
    note = ("RD=random_write: bytes per I/O (7463 to 8142) is not the "
            "xfersize 512: an xfersize distribution, not one fixed size")
    assert runs(text) == ([], [note])
    assert refusal(text) == REFUSAL + note


def test_masakioui_summary_distribution_is_not_one_size():
    text = corpus(MASAKI_SUMMARY)
    note = ("RD=random_write: bytes per I/O varies from 7463 to 8142: an "
            "xfersize distribution, not one fixed size")
    assert runs(text) == ([], [note])
    assert refusal(text) == REFUSAL + note


def test_masakioui_totals_average_only_is_not_one_size():
    text = corpus(MASAKI_TOTALS)
    note = ("RD=random_write: 7814 bytes per I/O is not a whole number of "
            "512-byte sectors: not one fixed size")
    assert runs(text) == ([], [note])
    assert refusal(text) == REFUSAL + note


def test_masakioui_quicktest_is_a_read_mix():
    text = corpus(QUICKTEST)
    assert runs(text) == ([], ["RD=rd1: 50.7 % reads"])
    assert refusal(text) == REFUSAL + "RD=rd1: 50.7 % reads"


def test_masakioui_nvme_fsd_format_totals_is_refused():
    text = corpus(NVME_FSD)
    assert runs(text) == ([], ["RD=format_for_rd1: file-system (FSD) "
                               "report"])
    assert refusal(text) == REFUSAL + \
        "RD=format_for_rd1: file-system (FSD) report"


def test_tiger7z_flatfile_format_pass_and_read_mix():
    text = corpus(TIGER_FLAT)
    notes = ["RD=SD_format: no interval measured after warm-up (vdbench's "
             "avg_2-1 averages none)", "RD=rd1: 50 % reads"]
    assert runs(text) == ([], notes)
    assert refusal(text) == REFUSAL + "; ".join(notes)


# -- part 2: formats and quirks -----------------------------------------------

K4_STEPS = [("vdbench rd1 (xfersize=512 threads=1)", 512, 1),
            ("vdbench rd1 (xfersize=4k threads=1)", 4096, 1)]


def latencies(text):
    return [[iv.lat_mean_ns for iv in s.intervals]
            for s in read_vdbench(text)[0]]


def test_constructed_files_read_as_made():
    assert runs(made(K4_14)) == (K4_STEPS, [])
    assert runs(made(K4_NT)) == ([
        ("vdbench rd1 (xfersize=512.0 threads=1.0)", 512, 1),
        ("vdbench rd1 (xfersize=4096.0 threads=1.0)", 4096, 1)], [])
    assert runs(made(N512_14)) == ([
        ("vdbench rd1 (xfersize=512 threads=1.0)", 512, 1),
        ("vdbench rd1 (xfersize=4k threads=1.0)", 4096, 1)], [])
    # No xfersize loop: the size is the bytes per I/O of every interval.
    assert runs(made(N512_NT)) == ([("vdbench rd512", 512, 1),
                                    ("vdbench rd4k", 4096, 1)], [])
    steps = read_vdbench(made(K4_14))[0]
    assert [len(s.intervals) for s in steps] == [5, 5]
    assert steps[0].latency(0).mean == pytest.approx(173000)
    assert steps[1].iops == 16500.4


def drop_cpu_columns(text):
    """The 12-column layout: vdbench without cpu% columns."""
    out = []
    for line in text.split("\n"):
        if "cpu%" in line or "sys+u" in line or \
                line[:12].count(":") == 2 and "Starting" not in line \
                and "Vdbench" not in line and "slave" not in line \
                and "argument" not in line:
            line = line[:line.rstrip().rfind(" ")].rstrip()
            line = line[:line.rfind(" ")].rstrip()
        out.append(line)
    return "\n".join(out)


def test_12_column_layout():
    text = drop_cpu_columns(made(K4_14))
    assert "sys+u" not in text and "cpu%" not in text
    assert runs(text) == (K4_STEPS, [])
    assert latencies(text) == latencies(made(K4_14))


def test_10_column_layout_of_old_vdbench():
    # vdbench 5.00-5.03: resp time, max, stddev; no queue depth column.
    text = ("10:00:00.001 Starting RD=rd1; I/O rate: Uncontrolled MAX; "
            "elapsed=15; For loops: xfersize=4k threads=1\n\n"
            "Jan 02, 2009  interval        i/o   MB/sec   bytes   read     "
            "resp     resp     resp    cpu%  cpu%\n"
            "                             rate  1024**2     i/o    pct     "
            "time      max   stddev sys+usr   sys\n")
    for n, resp in ((1, "0.081"), (2, "0.060"), (3, "0.061")):
        text += ("10:00:%02d.001 %9d   16000.00    62.50    4096   0.00    "
                 "%s     1.20    0.010    10.0   6.0\n" % (n * 5, n, resp))
    text += ("10:00:15.010   avg_2-3   16000.00    62.50    4096   0.00    "
             "0.061     1.20    0.010    10.0   6.0\n")
    assert runs(text) == ([("vdbench rd1", 4096, 1)], [])
    assert latencies(text) == [pytest.approx([60000, 61000])]
    # Without threads= nothing says how many I/Os were outstanding.
    assert runs(text.replace(" threads=1", "")) == ([], [
        "RD=rd1: no threads= setting and no queue depth column: the number "
        "of outstanding I/Os is not known"])


def test_localized_date_header():
    text = made(K4_14).replace("May 11, 2023", "5月 11, 2023")
    assert text.count("5月 11, 2023") == 2
    assert runs(text) == (K4_STEPS, [])


def test_header_repeated_mid_run_and_elided_rows():
    lines = made(K4_14).split("\n")
    header = lines[15:17]
    assert header[0].startswith("May 11, 2023    interval")
    assert lines[20].startswith("14:40:25.048           4 ")
    repeated = lines[:21] + [""] + header + lines[21:]
    assert runs("\n".join(repeated)) == (K4_STEPS, [])
    assert latencies("\n".join(repeated)) == latencies(made(K4_14))
    # A copy that left out interval 4 of the 512-byte run.
    elided = lines[:20] + ["..."] + lines[21:]
    assert runs("\n".join(elided)) == (K4_STEPS, [])
    assert len(latencies("\n".join(elided))[0]) == 4


def test_columns_that_touch_are_cut_by_their_decimals():
    # A write max of 1050.80 ms glued to the read max 0.00 (2 decimals);
    # a resp time of 1234.567 ms glued to the read resp (3 decimals).
    text = corpus(ZH_GUIDE).replace("    0.00    50.80", "    0.001050.80")
    assert "0.001050.80" in text
    assert runs(text) == ([("vdbench rd1", 8192, 2)], [])
    text = corpus(ZH_GUIDE).replace(
        "    0.056    0.000    0.056     0.00    50.80",
        " 1234.5670.000 1234.567     0.00  1234.56")
    assert latencies(text)[0][0] == pytest.approx(1234.567e6)
    # Where no other row shows the decimals, the row is refused.
    text = ("12:00:00.000 Starting RD=r; For loops: xfersize=4k threads=1\n"
            + "\n".join(made(K4_14).split("\n")[15:17]) + "\n"
            "12:00:05.000           1    16103.3    62.90    4096   0.00    "
            "0.061    0.000    0.061     0.001401.40    0.005    1.0   9.2"
            "   6.6\n")
    assert refusal(text) == ("vdbench line 4: 13 values under a header of "
                             "14 columns (RD=r)")


def test_nan_where_vdbench_leaves_a_value_out_and_where_it_is_needed():
    # NaN in the resp stddev (not used) is read; in the resp time of an
    # interval with I/O it is no measurement: refused, line and column.
    text = corpus(ZH_GUIDE).replace("0.094", "  NaN")
    assert runs(text) == ([("vdbench rd1", 8192, 2)], [])
    text = corpus(ZH_GUIDE).replace(
        "   0.056    0.000    0.056     0.00    50.80",
        "     NaN    0.000    0.056     0.00    50.80")
    assert refusal(text) == ("vdbench line 28 column 'resp time': not a "
                             "finite number: \"NaN\" (RD=rd1)")
    # NaN beside a rate of 0: a stall, not a value.
    text = corpus(ZH_GUIDE).replace(
        "   317936.2  2483.88    8192   0.00    0.056",
        "        0.0     0.00       0    NaN      NaN")
    step = read_vdbench(text)[0][0]
    assert [iv.ios for iv in step.intervals][:2] == [0, 321929]


def test_html_copy_of_a_logfile_reads_as_the_text():
    text = made(K4_14)
    wrapped = ("<title>Vdbench output/logfile.html</title><pre>\n" +
               text.replace("14:40:05.001 Starting RD=rd1; I/O rate: "
                            "Uncontrolled MAX; elapsed=30; For loops: "
                            "xfersize=512 threads=1",
                            '<a name="_12"></a><i><b>14:40:05.001 Starting '
                            'RD=rd1; I/O rate: Uncontrolled MAX; elapsed=30;'
                            ' For loops: xfersize=512 threads=1</b></i>'))
    assert wrapped.count("<i><b>") == 1
    assert runs(wrapped) == (K4_STEPS, [])
    assert runs(text.replace("\n", "\r\n")) == (K4_STEPS, [])


def test_forxfersize_runs_of_one_rd_and_an_unusable_run_beside_them():
    read_run = corpus(QUICKTEST).split("<b>", 1)[1].replace("</b></i>", "")
    text = made(K4_14) + read_run
    steps, notes = read_vdbench(text)
    assert [(s.name, s.bs) for s in steps] == [
        ("vdbench rd1 (xfersize=512 threads=1)", 512),
        ("vdbench rd1 (xfersize=4k threads=1)", 4096)]
    # Three runs called rd1, told apart by their loop values.
    assert notes == ["RD=rd1: 50.7 % reads"]


def test_xfersize_loop_that_the_bytes_column_contradicts():
    text = made(K4_14).replace("xfersize=4k threads=1", "xfersize=8k "
                               "threads=1")
    assert runs(text) == ([K4_STEPS[0]], [
        "RD=rd1 (xfersize=8k threads=1): bytes per I/O (4096) is not the "
        "xfersize 8192: an xfersize distribution, not one fixed size"])


def test_table_copied_without_its_starting_rd_line():
    text = "\n".join(line for line in made(K4_14).split("\n")
                     if "Starting RD" not in line)
    assert runs(text) == ([("vdbench table at line 15", 512, 1),
                           ("vdbench table at line 25", 4096, 1)], [])


def test_simulation_and_nothing_at_all():
    text = ("12:00:00.000 Simulating RD=rd1; I/O rate: Uncontrolled MAX; "
            "elapsed=30; For loops: xfersize=4k threads=1\n")
    assert refusal(text) == REFUSAL + \
        "RD=rd1: vdbench -s simulation: nothing was measured"
    assert refusal("[root@host]# ./vdbench -f parm\n") == (
        "vdbench: no write run ('Starting RD=' and interval lines) found")


def test_a_flatfile_of_a_fixed_size_write_run():
    # The quick test's rd1 rows made write-only: 1 KiB, threads=8,
    # seekpct=100 (random), intervals 2-5.
    lines = corpus(TIGER_FLAT).split("\n")
    rows = []
    for line in lines:
        if " rd1 " in line:
            v = line.split()
            v[8] = "0"                      # read%
            v[20] = "0"                     # rdpct
            line = " ".join(v)
        rows.append(line)
    steps, notes = read_vdbench("\n".join(rows))
    assert notes == ["RD=SD_format: no interval measured after warm-up "
                     "(vdbench's avg_2-1 averages none)"]
    assert [(s.name, s.bs, s.qd, s.pattern) for s in steps] == [
        ("vdbench rd1", 1024, 8, "rand")]
    assert [iv.lat_mean_ns for iv in steps[0].intervals] == pytest.approx(
        [30400, 24600, 25400, 23600])
    assert steps[0].iops == 105.25


def test_a_long_refusal_names_twelve_runs_and_counts_the_rest():
    text = corpus(QUICKTEST).split("<b>", 1)[1].replace("</b></i>", "")
    message = refusal(text * 15)
    assert message.count("% reads") == 12
    assert message.endswith("; and 3 more runs")
    assert "\n" not in message
