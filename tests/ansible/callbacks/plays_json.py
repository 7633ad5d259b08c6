# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""An Ansible callback for the tests of the sdtune.illumos collection:
every task's status and result, grouped by play, written as one JSON
document to the file named by $SDTUNE_TEST_EVENTS when the playbook
ends, so that tests count changed/ok per play and read module results
without parsing the screen output."""

import json
import os

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
    name: plays_json
    type: aggregate
    short_description: task results by play, as JSON, for tests
    description:
      - Writes the plays, each with its tasks' names, statuses and
        results, to $SDTUNE_TEST_EVENTS at the end of the playbook.
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "plays_json"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self.plays = []

    def v2_playbook_on_play_start(self, play):
        self.plays.append({"name": play.get_name(), "tasks": []})

    def _add(self, result, status):
        res = dict(result._result)
        if status == "ok" and res.get("changed"):
            status = "changed"
        self.plays[-1]["tasks"].append({"name": result._task.get_name(),
                                        "status": status, "result": res})

    def v2_runner_on_ok(self, result):
        self._add(result, "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._add(result, "failed")

    def v2_runner_on_skipped(self, result):
        self._add(result, "skipped")

    def v2_runner_on_unreachable(self, result):
        self._add(result, "unreachable")

    def v2_playbook_on_stats(self, stats):
        with open(os.environ["SDTUNE_TEST_EVENTS"], "w") as f:
            json.dump({"plays": self.plays}, f, default=str)
