#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, the sdtune authors
# CDDL-1.0 (see conf/LICENSE of sdtune)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: sdtune_tune
short_description: Apply sdtune's plan to sd.conf, or roll a change back
version_added: "1.0.0"
description:
  - O(state=applied) runs C(sdtune apply --yes -o json), which writes the
    sd-config-list entries that the certification records call for as one
    transaction (lock, backup, atomic write, update_drv, verify, journal).
    Nothing to change gives changed=false.
  - O(state=rolled_back) runs C(sdtune rollback ID --yes -o json) for
    O(journal_entry), or for the newest finished journal entry.  It is
    idempotent; without O(journal_entry) nothing is done when the newest
    entry is itself a rollback, with one nothing is done when a rollback
    of that entry exists (read from C(sdtune history -o json)).
  - In check mode sdtune makes a dry run (no C(--yes)); the module reports
    changed, the diff and reboot_required as a real run would.
author: The sdtune authors (!UNKNOWN)
extends_documentation_fragment:
  - sdtune.illumos.sdtune
options:
  state:
    description:
      - V(applied) applies the plan; V(rolled_back) undoes a journal entry.
    type: str
    choices: [applied, rolled_back]
    default: applied
  journal_entry:
    description:
      - With O(state=rolled_back), the id of the journal entry to roll back
        (C(sdtune history)), digits only; the newest finished entry when
        not given or V(last). Anything else is refused.
    type: str
  allow_firmware_mismatch:
    description:
      - Use certification records made with another firmware than the
        drives run (C(--allow-firmware-mismatch)).
    type: bool
    default: false
  allow_ashift_mismatch:
    description:
      - Propose physical-block-size even for models in or spare for
        ashift=9 vdevs (C(--allow-ashift-mismatch)).
    type: bool
    default: false
  allow_no_nv_evidence:
    description:
      - Propose cache-nonvolatile from flush timing without the drive's
        NV_SUP (C(--allow-no-nv-evidence)).
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: sdtune's dry run (C(apply) or C(rollback) without
      C(--yes)) reports the change without making it.
  diff_mode:
    support: full
    description: The unified diff of sd.conf (and of the platform's
      copies) that the change makes.
"""

EXAMPLES = r"""
- name: Tune sd.conf from the certification records
  sdtune.illumos.sdtune_tune:
    state: applied
  register: tuned

- name: Disks attached before the change keep their values until a reboot
  ansible.builtin.debug:
    msg: reboot needed
  when: tuned.reboot_required

- name: Undo the change
  sdtune.illumos.sdtune_tune:
    state: rolled_back
    journal_entry: "{{ tuned.journal_entry }}"

- name: An appliance without Python 3 (NexentaStor), over sdtune's own SSH
  sdtune.illumos.sdtune_tune:
    state: applied
    host: root@{{ inventory_hostname }}
  delegate_to: localhost
"""

RETURN = r"""
reboot_required:
  description: Disks keep their old values until the next boot, or the
    platform needs one.
  returned: success
  type: bool
journal_entry:
  description: Id of the journal entry of the change; null when nothing
    was done or in check mode.
  returned: success
  type: str
result:
  description: The journal entry's result words.
  returned: success
  type: str
dry_run:
  description: Whether sdtune only showed the change (check mode).
  returned: success
  type: bool
files:
  description: Each file written or removed, with its role and its sha256
    before and after.
  returned: success
  type: list
  elements: dict
rolled_back:
  description: The journal entry undone.
  returned: when O(state=rolled_back) and something was rolled back
  type: str
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.sdtune.illumos.plugins.module_utils.sdtune import (  # noqa: E402, E501
    COMMON_ARGS, EXIT_PROBLEMS, SdtuneFailure, apply_argv, base_argv,
    history_argv, rollback_argv, rollback_target, run_json, tune_result,
    unchanged_rollback)


def main():
    spec = dict(COMMON_ARGS)
    spec.update(
        state=dict(type="str", default="applied",
                   choices=["applied", "rolled_back"]),
        journal_entry=dict(type="str"),
        allow_firmware_mismatch=dict(type="bool", default=False),
        allow_ashift_mismatch=dict(type="bool", default=False),
        allow_no_nv_evidence=dict(type="bool", default=False),
    )
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)

    def run(argv, data=None):
        return module.run_command(argv, check_rc=False, data=data,
                                  binary_data=True)

    params = module.params
    base = base_argv(params)
    warnings = []
    try:
        if params["state"] == "applied":
            rc, doc, warnings = run_json(
                run, apply_argv(base, params, module.check_mode))
            result = tune_result(doc, module.check_mode, module._diff)
        else:
            # history exits 1 when it cannot read an entry, and says so.
            rc, history, warnings = run_json(run, history_argv(base),
                                             (0, EXIT_PROBLEMS))
            entry, why = rollback_target(history.get("entries") or [],
                                         params["journal_entry"])
            if entry is None:
                result = unchanged_rollback(why)
            else:
                rc, doc, more = run_json(
                    run, rollback_argv(base, entry, module.check_mode))
                warnings += more
                result = tune_result(doc, module.check_mode, module._diff)
    except SdtuneFailure as e:
        module.fail_json(**e.fail_args())
    for warning in warnings:
        module.warn(warning)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
