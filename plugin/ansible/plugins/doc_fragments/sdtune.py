# -*- coding: utf-8 -*-
# Copyright (c) 2026, the sdtune authors
# CDDL-1.0 (see conf/LICENSE of sdtune)
"""The options every sdtune.illumos module takes (module_utils/sdtune.py
COMMON_ARGS), documented once."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r"""
options:
  sdtune:
    description:
      - Path of the sdtune launcher.
    type: path
    default: /usr/sbin/sdtune
  root:
    description:
      - System root for sd.conf and sdtune's state (C(sdtune -R)).
    type: path
  config:
    description:
      - Configuration file overriding sdtune.conf (C(sdtune --config)).
    type: path
  host:
    description:
      - Work on the appliance O(host) over SSH (C(sdtune --host)), for
        appliances without Python 3; run the task with C(delegate_to)
        set to V(localhost).
    type: str
"""
