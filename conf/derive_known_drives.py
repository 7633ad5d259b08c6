#!/usr/bin/env python3
"""Derive conf/known-drives.tsv from the collected table
(../shared/data/known-drives.tsv) for sdtune's plan and audit.

Kept: rows that state a usable fact (a physical block size, or a cache
that is non-volatile or not) and whose pattern sdtune can match:

  inquiry         the exact 24-byte INQUIRY vendor+product key
  inquiry-prefix  a prefix of it (sd's own tables; sd_sdconf_id_match)
  pid-substring   *TEXT* inside the product id (sd's wildcard form)
  ata-glob        fnmatch pattern over the full ATA model string
  ata-regex       Python regular expression over the full ATA model
                  (smartmontools' drive database syntax is compatible)

Dropped: family names (text for people, not patterns) and rows with no
fact.  Every kept row keeps its source.  Usage:

  python3 conf/derive_known_drives.py SOURCE.tsv > conf/known-drives.tsv
"""

import csv
import re
import sys

KIND = {"exact": "inquiry", "prefix": "inquiry-prefix",
        "substring (*..* in PID)": "pid-substring", "glob": "ata-glob",
        "regex": "ata-regex"}


def derive(rows):
    out = []
    for r in rows:
        kind = KIND.get(r["pattern_kind"])
        pbs = r["physical_block_size"]
        nv = r["nonvolatile_cache"]
        pbs = pbs if pbs.isdigit() else "-"
        nv = nv if nv in ("yes", "no") else "-"
        if kind is None or (pbs == "-" and nv == "-"):
            continue
        if kind == "ata-regex":
            re.compile(r["model_pattern"])      # must be valid Python re
        out.append([kind, r["model_pattern"], pbs, nv, r["vendor"],
                    r["source"]])
    return out


def main(argv):
    with open(argv[1], newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    w = sys.stdout
    w.write("# known-drives.tsv: drives whose physical sector size or cache\n"
            "# kind is known, derived by conf/derive_known_drives.py from\n"
            "# the facts collected from OpenZFS, FreeBSD, illumos, SmartOS\n"
            "# and smartmontools tables (each row names its source).\n"
            "# Columns: match, pattern, physical_block_bytes,\n"
            "# nonvolatile_cache, vendor, source.  '-' = not known.\n")
    w.write("match\tpattern\tphysical_block_bytes\tnonvolatile_cache\t"
            "vendor\tsource\n")
    for row in derive(rows):
        w.write("\t".join(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
