# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune report` opened in a real headless browser (Debian's chromium,
installed by tests/deps.sh): for the demo's three drives and for a shelf
of 24 units of one model, the page renders with no console message (the
page's Content-Security-Policy logs any fetch or script it blocks), the
screenshot's charts have area (coloured pixels of the series, decoded
from the PNG here with zlib), every <svg> parses as XML, and the shelf's
page is under 500 KB.  Two browser runs, about 2 s each."""

import os
import re
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "tests"))

from marks import needs  # noqa: E402
from tests import builders, reportdata  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402
from tests.sim.testing import sdtune_checked as run  # noqa: E402

pytestmark = pytest.mark.browser


def chromium(page: str, png: str, width: int, height: int,
             profile: str) -> str:
    """Screenshot ``page`` into ``png``; chromium's log (stderr)."""
    needs("browser", "a headless chromium")
    exe = shutil.which("chromium")
    assert exe, "chromium is missing: run tests/deps.sh"
    proc = subprocess.run(
        [exe, "--headless", "--no-sandbox", "--disable-gpu",
         "--hide-scrollbars", "--no-first-run", "--user-data-dir=" + profile,
         # Half scale: a quarter of the pixels for the pure-Python PNG
         # decoder below, the charts still many pixels each.
         "--force-device-scale-factor=0.5",
         "--enable-logging=stderr", "--v=0", "--screenshot=" + png,
         "--window-size=%d,%d" % (width, height), "file://" + page],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        universal_newlines=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stderr


def console_lines(log: str):
    """What the page logged: chromium writes console messages (and CSP
    violations) as ':CONSOLE' lines."""
    return [line for line in log.splitlines() if ":CONSOLE" in line]


def read_png(path: str):
    """(width, height, rows of (r, g, b)) of an 8-bit, non-interlaced
    RGB or RGBA PNG, as chromium writes them."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    bpp = 4 if colour == 6 else 3
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xff
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xff
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xff
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 0xff
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def ink(path: str):
    """(fraction of pixels not white, coloured pixels (the series: grey
    text and axes are not), their bounding box)."""
    width, height, bpp, rows = read_png(path)
    dark = coloured = 0
    xs, ys = [], []
    for y, row in enumerate(rows):
        for x in range(0, width * bpp, bpp):
            r, g, b = row[x], row[x + 1], row[x + 2]
            if min(r, g, b) < 235:
                dark += 1
            if max(r, g, b) - min(r, g, b) > 80:
                coloured += 1
                xs.append(x // bpp)
                ys.append(y)
    box = (min(xs), min(ys), max(xs), max(ys)) if xs else None
    return dark / float(width * height), coloured, box


def report(tmp_path, recs):
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    for rec in recs:
        builders.store_record(app.root, rec)
    page = str(tmp_path / "report.html")
    proc = run(app, "report", "-o", page)
    assert proc.returncode == 0, proc.stderr
    with open(page, encoding="utf-8") as f:
        doc = f.read()
    charts = re.findall(r"<svg\b.*?</svg>", doc, re.S)
    assert charts
    for chart in charts:
        ET.fromstring(chart)
    ET.fromstring(doc.split("\n", 1)[1])
    return page, doc, charts


def test_the_demo_drives_report_renders_with_charts(tmp_path):
    page, doc, charts = report(tmp_path, reportdata.demo_records())
    assert len(charts) == 17
    png = str(tmp_path / "demo.png")
    log = chromium(page, png, 1200, 4200, str(tmp_path / "profile"))
    assert console_lines(log) == [], log
    dark, coloured, box = ink(png)
    # Charts, not an empty page: ink on a good part of the page, series
    # in colour spread over most of its width and height.
    assert dark > 0.03, dark
    assert coloured > 5000, coloured
    left, top, right, bottom = box
    assert right - left > 300 and bottom - top > 1250, box


def test_a_shelf_of_24_drives_renders_and_stays_small(tmp_path):
    page, doc, charts = report(tmp_path, reportdata.shelf_records(24))
    assert os.path.getsize(page) < 500 * 1024
    assert len(charts) == 24 * 6 + 1
    png = str(tmp_path / "shelf.png")
    # The top of the page: the summary and the units side by side.
    log = chromium(page, png, 1200, 1600, str(tmp_path / "profile"))
    assert console_lines(log) == [], log
    dark, coloured, box = ink(png)
    assert dark > 0.03 and coloured > 1500, (dark, coloured)
