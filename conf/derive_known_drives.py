#!/usr/bin/env python3
# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Derive conf/known-drives.tsv from the collected table
(tests/fixtures/knowndrives/collected.tsv, with its provenance) and the
facts listed below, for sdtune's plan and audit.

Kept: rows that state a usable fact (a physical block size, or a cache
that is non-volatile, volatile, or protected for data at rest only) and
whose pattern sdtune can match:

  inquiry         the exact 24-byte INQUIRY vendor+product key
  inquiry-prefix  a prefix of it (sd's own tables; sd_sdconf_id_match)
  pid-substring   *TEXT* inside the product id (sd's wildcard form)
  ata-glob        fnmatch pattern over the full ATA model string
  ata-regex       Python regular expression over the full ATA model
                  (smartmontools' drive database syntax is compatible)

nonvolatile_cache is yes, no, data-at-rest or - (unknown).  data-at-rest
marks a family whose vendor promises power-loss protection only for data
already written to flash ("data at rest"): its DRAM write cache is lost
at power loss, so sd must keep flushing it (never cache-nonvolatile).

Dropped: family names (text for people, not patterns) and rows with no
fact.  Every kept row keeps its source.  The collected table is read
from the file given; the facts gathered after it (platforms.md part 4)
are the lists ADDED and AMENDED below, each with its source, so that
running this again reproduces the shipped table exactly.  Usage:

  python3 conf/derive_known_drives.py SOURCE.tsv > conf/known-drives.tsv
"""

import csv
import re
import sys

KIND = {"exact": "inquiry", "prefix": "inquiry-prefix",
        "substring (*..* in PID)": "pid-substring", "glob": "ata-glob",
        "regex": "ata-regex"}
NV_VALUES = ("yes", "no", "data-at-rest")

# Facts gathered after the collected table (shared/spec/platforms.md part
# 4), as (match, pattern, physical_block_bytes, nonvolatile_cache, vendor,
# source).  A row with no fact ('-', '-') documents the family's INQUIRY
# key and is dropped like any other row without a fact.
#
# The INQUIRY key of a SATA disk is "ATA     " and the first 16
# characters of its ATA model, so models that differ only after
# character 16 share one key (illumos-facts.md, INQUIRY): the patterns
# below are over the full ATA model wherever the fact is about one model
# of several that share a key.
ADDED = [
    # Intel's S4500/S4600 product specification describes an "enhanced
    # power-loss data protection" feature (capacitors flush in-flight
    # data).  It covers the G7 generation (S4500 SSDSC2KB..G7, S4600
    # SSDSC2KG..G7); the S4510/S4610 (G8) specification was not retrieved,
    # so G8 models stay unknown here although they share the G7 keys.
    ("ata-glob", "INTEL SSDSC2KB*G7*", "-", "yes", "Intel",
     "Intel SSD DC S4500/S4600 product specification, enhanced power-loss "
     "data protection (https://manualzz.com/doc/48879893); covers the G7 "
     "models only (S4510 G8 shares the INQUIRY key, not verified)"),
    ("ata-glob", "INTEL SSDSC2KG*G7*", "-", "yes", "Intel",
     "Intel SSD DC S4500/S4600 product specification, enhanced power-loss "
     "data protection (https://manualzz.com/doc/48879893); covers the G7 "
     "models only (S4610 G8 shares the INQUIRY key, not verified)"),
    ("inquiry", "ATA     INTEL SSDSC2KB48", "-", "-", "Intel",
     "S4500 480G (G7) and S4510 480G (G8) share this key"),
    ("inquiry", "ATA     INTEL SSDSC2KB96", "-", "-", "Intel",
     "S4500/S4510 960G share this key"),
    ("inquiry", "ATA     INTEL SSDSC2KG48", "-", "-", "Intel",
     "S4600/S4610 480G share this key"),
    ("inquiry", "ATA     INTEL SSDSC2KG96", "-", "-", "Intel",
     "S4600/S4610 960G share this key"),
    # Micron 5100/5200/5210/5300/5400: every capacity and variant (ECO,
    # PRO, MAX) of a series shares one key; no retrieved document states
    # a page size or a protected cache.  The 5100 datasheet's "sector
    # size 512" is the logical sector, not a physical one.
    ("inquiry", "ATA     Micron_5100_MTFD", "-", "-", "Micron",
     "Micron 5100 datasheet part chart (https://manualmachine.com/micron/"
     "mtfddak240t/8099401-user-manual): logical sector 512 only"),
    ("inquiry", "ATA     Micron_5200_MTFD", "-", "-", "Micron",
     "every Micron 5200 ECO/PRO/MAX capacity shares this key"),
    ("inquiry", "ATA     Micron_5210_MTFD", "-", "-", "Micron",
     "Micron 5210 ION key; listed by the OpenZFS docs' power-failure "
     "list, whose criterion does not prove a non-volatile cache"),
    ("inquiry", "ATA     Micron_5300_MTFD", "-", "-", "Micron",
     "every Micron 5300 PRO/MAX capacity shares this key"),
    ("inquiry", "ATA     Micron_5400_MTFD", "-", "-", "Micron",
     "Micron 5400 key (smartmontools drivedb model string)"),
    ("inquiry", "ATA     SAMSUNG MZ7LM240", "-", "-", "Samsung",
     "Samsung PM863 240G key; OpenZFS docs' power-failure list only"),
    ("inquiry", "ATA     SAMSUNG MZ7KH1T9", "-", "-", "Samsung",
     "Samsung SM883 1.92T key (https://docslib.org/doc/6884123)"),
    ("inquiry", "ATA     KINGSTON SEDC500", "-", "-", "Kingston",
     "Kingston DC500M and DC500R share this key; OpenZFS docs' "
     "power-failure list only"),
    # Crucial consumer drives: "power loss protection" in their material
    # means data at rest (the mapping tables in flash), not the write
    # cache.  The OpenZFS docs list the MX100/MX200/MX300 and
    # M500/M550/M600 families as power-failure protected: that list asks
    # only that flushed data and metadata survive, so it conflicts with
    # nothing the vendor says, but it is no evidence for
    # cache-nonvolatile.  Model strings as smartmontools' drivedb shows
    # them (the MX300 and M550 carry a "Crucial_" prefix; the MX500 does
    # not).
    ("ata-regex", r"(Crucial_)?CT[0-9]+MX300SSD[0-9]", "-", "data-at-rest",
     "Crucial",
     "Crucial MX300 datasheet: power loss protection for data-at-rest "
     "(https://pdfslide.us/documents/mx300-25-inch-and-m2-nand-flash-ssd"
     ".html); conflicts with the OpenZFS docs' PLP list, which names the "
     "MX300"),
    ("pid-substring", "*MX500SSD*", "-", "data-at-rest", "Crucial",
     "TechPowerUp Crucial MX500 review: its power loss immunity protects "
     "data at rest and needs no large capacitors (https://www."
     "techpowerup.com/review/crucial-mx500-1-tb/)"),
    ("ata-regex", r"Crucial_CT[0-9]+M550SSD[0-9]|"
     r"(Micron_)?M550[_-]MTFDDA[KTV][0-9A-Z]+MAY.*", "-", "data-at-rest",
     "Crucial/Micron",
     "Micron M550 datasheet: power loss protection for data-at-rest "
     "(https://dokumen.tips/documents/m550-msata-nand-flash-ssd-micron-"
     "mediadocumentsproductsdata-sheetssdm550.html); conflicts with the "
     "OpenZFS docs' PLP list (M500/M550/M600 family)"),
    # Consumer drives with no power-loss claim from their vendor.
    ("pid-substring", "*BX500SSD*", "-", "no", "Crucial",
     "Crucial BX500: consumer drive, no power-loss protection claim "
     "found; treated as a volatile cache"),
    ("inquiry", "ATA     KINGSTON SA400S3", "-", "no", "Kingston",
     "Kingston A400 (every capacity shares this key): consumer drive, no "
     "power-loss protection claim found; treated as a volatile cache"),
]

# Facts that change rows of the collected table: (match, pattern) ->
# (nonvolatile_cache or None to keep it, text added to the source).
AMENDED = {
    ("ata-glob", "KINGSTON SE100S3*"): (
        "yes", "; Kingston E100 technical brief: tantalum hold-up "
        "capacitors and a pFAIL circuit write in-flight data to flash "
        "(http://www.kingston.com/en/ssd/enterprise/technical_brief/"
        "tantalum_capacitors)"),
    ("ata-glob", "VID=ATA PID=KINGSTON SE100S3*"): (
        "yes", "; Kingston E100 technical brief: tantalum hold-up "
        "capacitors and a pFAIL circuit write in-flight data to flash "
        "(http://www.kingston.com/en/ssd/enterprise/technical_brief/"
        "tantalum_capacitors)"),
    ("inquiry", "ATA     KINGSTON SH103S3"): (
        None, "; smartctl on a real unit reports 512 bytes physical "
        "(https://pastebin.com/5gW9gRJT): the drive under-reports"),
}


def derive(rows):
    out = []
    for r in rows:
        kind = KIND.get(r["pattern_kind"])
        pbs = r["physical_block_size"]
        nv = r["nonvolatile_cache"]
        pbs = pbs if pbs.isdigit() else "-"
        nv = nv if nv in NV_VALUES else "-"
        if kind is None or (pbs == "-" and nv == "-"):
            continue
        if kind == "ata-regex":
            re.compile(r["model_pattern"])      # must be valid Python re
        source = r["source"]
        amend = AMENDED.get((kind, r["model_pattern"]))
        if amend is not None:
            nv = amend[0] or nv
            source += amend[1]
        out.append([kind, r["model_pattern"], pbs, nv, r["vendor"], source])
    for kind, pattern, pbs, nv, vendor, source in ADDED:
        if pbs == "-" and nv == "-":
            continue
        if kind == "ata-regex":
            re.compile(pattern)
        out.append([kind, pattern, pbs, nv, vendor, source])
    return out


def main(argv):
    with open(argv[1], newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    w = sys.stdout
    w.write("# known-drives.tsv: drives whose physical sector size or cache\n"
            "# kind is known, derived by conf/derive_known_drives.py from\n"
            "# the facts collected from OpenZFS, FreeBSD, illumos, SmartOS\n"
            "# and smartmontools tables and vendor documents (each row\n"
            "# names its source).\n"
            "# Columns: match, pattern, physical_block_bytes,\n"
            "# nonvolatile_cache, vendor, source.  '-' = not known.\n"
            "# nonvolatile_cache data-at-rest: the vendor protects only data\n"
            "# already in flash; the write cache is volatile.\n")
    w.write("match\tpattern\tphysical_block_bytes\tnonvolatile_cache\t"
            "vendor\tsource\n")
    for row in derive(rows):
        w.write("\t".join(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
