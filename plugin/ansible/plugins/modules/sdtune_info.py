#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, the sdtune authors
# CDDL-1.0 (see conf/LICENSE of sdtune)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: sdtune_info
short_description: Disks, sd.conf state, findings and records of an appliance
version_added: "1.0.0"
description:
  - Runs C(sdtune disks), C(sdtune verify), C(sdtune audit) and
    C(sdtune results), each with C(-o json), and returns their documents.
  - Reads only; never changes the appliance.
  - C(audit) and C(verify) exit 1 when they find problems; that is
    reported in the facts, not as a failure.
author: The sdtune authors (!UNKNOWN)
extends_documentation_fragment:
  - sdtune.illumos.sdtune
attributes:
  check_mode:
    support: full
    description: Reads only; the same in check mode.
  diff_mode:
    support: none
    description: Changes nothing, so there is nothing to show.
"""

EXAMPLES = r"""
- name: Read what sdtune knows
  sdtune.illumos.sdtune_info:
  register: sdtune

- name: Fail on findings
  ansible.builtin.assert:
    that: sdtune.findings | length == 0

- name: An appliance without Python 3, over sdtune's own SSH
  sdtune.illumos.sdtune_info:
    host: root@{{ inventory_hostname }}
  delegate_to: localhost
"""

RETURN = r"""
disks:
  description: The disks of C(sdtune disks -o json).
  returned: success
  type: list
  elements: dict
verify:
  description: Per disk, the state of C(sdtune verify -o json).
  returned: success
  type: list
  elements: dict
findings:
  description: The findings of C(sdtune audit -o json).
  returned: success
  type: list
  elements: dict
records:
  description: The certification records of C(sdtune results -o json).
  returned: success
  type: list
  elements: dict
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.sdtune.illumos.plugins.module_utils.sdtune import (  # noqa: E402, E501
    COMMON_ARGS, EXIT_PROBLEMS, SdtuneFailure, base_argv, info_argvs,
    info_result, run_json)


def main():
    module = AnsibleModule(argument_spec=dict(COMMON_ARGS),
                           supports_check_mode=True)

    def run(argv, data=None):
        return module.run_command(argv, check_rc=False, data=data,
                                  binary_data=True)

    argvs = info_argvs(base_argv(module.params))
    docs, warnings = {}, []
    try:
        for name, argv in argvs:
            ok = (0, EXIT_PROBLEMS) if name in ("audit", "verify") else (0,)
            rc, docs[name], said = run_json(run, argv, ok)
            # Each command reads the inventory: say its notes once.
            warnings += [w for w in said if w not in warnings]
        result = info_result(docs, argvs)
    except SdtuneFailure as e:
        module.fail_json(**e.fail_args())
    for warning in warnings:
        module.warn(warning)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
