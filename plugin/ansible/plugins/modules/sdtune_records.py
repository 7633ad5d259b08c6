#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, the sdtune authors
# CDDL-1.0 (see conf/LICENSE of sdtune)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: sdtune_records
short_description: Import certification records exported by another appliance
version_added: "1.0.0"
description:
  - Runs C(sdtune results --import src -o json), which stores the records
    of a file written by C(sdtune results --export) on another appliance,
    marked as imported from it.
  - A local certification of the same drive is never overwritten, and a
    second import of the same file stores nothing, so the task is
    idempotent.
  - In check mode nothing is stored. sdtune's dry run,
    C(results --import src --dry-run), checks the file as an import
    would and says what it would store, skip or leave unchanged.
author: The sdtune authors (!UNKNOWN)
extends_documentation_fragment:
  - sdtune.illumos.sdtune
options:
  src:
    description:
      - Path of the export file where the module runs, that is on the
        target, or with O(host) (and C(delegate_to) V(localhost)) on the
        controller, whence the module gives it to sdtune on its standard
        input (with C(--host) the files sdtune names are the appliance's).
      - An absolute path. With O(host), a regular file of at most 64 MiB
        (a FIFO or a device is refused, never read).
    type: path
    required: true
attributes:
  check_mode:
    support: full
    description: sdtune's own dry run (C(results --import --dry-run))
      says what would be stored.
  diff_mode:
    support: none
    description: Records are not shown as a diff; the result lists
      them.
"""

EXAMPLES = r"""
- name: Bring the records certified on fs01
  ansible.builtin.copy:
    src: records/fs01.json
    dest: /var/tmp/fs01-records.json
    mode: "0600"

- name: Import them
  sdtune.illumos.sdtune_records:
    src: /var/tmp/fs01-records.json
"""

RETURN = r"""
imported:
  description: Records stored (key, serial, firmware, from_host).
  returned: success
  type: list
  elements: dict
unchanged:
  description: Records already imported from the same file.
  returned: success
  type: list
  elements: dict
skipped_records:
  description:
    - Records not stored, each with its reason (sdtune's "skipped";
      renamed because a true C(skipped) marks a task as skipped).
  returned: success
  type: list
  elements: dict
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.sdtune.illumos.plugins.module_utils.sdtune import (  # noqa: E402, E501
    COMMON_ARGS, SdtuneFailure, base_argv, import_argv, read_export,
    records_result, run_json)


def read_text(src):
    """The text of the export file src (module_utils read_export: a
    regular file, bounded), or SdtuneFailure."""
    try:
        return read_export(src).decode("utf-8")
    except ValueError:
        raise SdtuneFailure("cannot import '%s': not UTF-8 text" % src)


def main():
    spec = dict(COMMON_ARGS)
    spec["src"] = dict(type="path", required=True)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)

    def run(argv, data=None):
        return module.run_command(argv, check_rc=False, data=data,
                                  binary_data=True)

    base = base_argv(module.params)
    src = module.params["src"]
    remote = bool(module.params["host"])
    try:
        argv = import_argv(base, src, remote, module.check_mode)
        rc, doc, warnings = run_json(
            run, argv, data=read_text(src) if remote else None)
        result = records_result(doc, module.check_mode)
    except SdtuneFailure as e:
        module.fail_json(**e.fail_args())
    for warning in warnings:
        module.warn(warning)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
