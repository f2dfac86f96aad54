# -*- coding: utf-8 -*-
# The options both modules take to run mpprov, and the attributes they share.

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  mpprov_path:
    description:
      - The mpprov executable (the C(.deb)'s C(/usr/bin/mpprov)), a name looked up in C(PATH) or a path.
    type: str
    default: mpprov
  agent_config:
    description:
      - mpprov's own configuration (C(agent.yaml)) on the controller, passed as C(--agent-config).
        Default, as for the command, C($MPPROV_AGENT_CONFIG), else C(/etc/mpprov/agent.yaml); a
        missing file means all defaults.
    type: path
  state_dir:
    description:
      - mpprov's state folder, passed as C(--state-dir). It holds the per-device lock files and, unless
        C(secrets_record) names another file, the secrets record.
      - Default C(agent.yaml)'s C(state_dir); when neither this nor C(agent_config) is given and the
        module runs as a user other than root, C(~/.local/state/mpprov).
      - Controllers that may run at once against the same Monitoring Points (AWX jobs, two engineers)
        must share this folder (a shared volume, NFS) for the per-device lock to keep them apart.
    type: path
  secrets_record:
    description:
      - The secrets record to read and update (keyed hashes of the secrets mpprov applied, never the
        secrets), passed as C(--secrets-record).
    type: path
  update_secrets:
    description:
      - When a write-only secret (802.1X password, WPA passphrase, key password) that the device
        already holds is sent again. The device never returns a secret, so this is a policy.
      - C(on_create) sends it when its stanza is created or any other field of the stanza changes, or
        when a secrets record exists for it and says it changed. With no record, a second run from a
        fresh controller changes nothing.
      - C(on_change) sends it unless the secrets record holds it unchanged (no record - sent once).
      - C(always) sends it every run, reports changed, and updates the record.
    type: str
    choices: [on_create, on_change, always]
    default: on_create
  restart_timeout:
    description:
      - Seconds to wait for a device to come back after a networking restart (C(--restart-timeout)).
    type: float
  dot1x_grace:
    description:
      - Seconds an 802.1X port may take to authorize after a restart (C(--dot1x-grace)).
    type: float
  lock_wait:
    description:
      - Seconds to wait for another run's lock on the same Monitoring Point (a lock file per device in
        the state folder) before failing that device in one sentence naming the other run. The
        waiting run then plans against what the other left, usually nothing to do. Check mode takes
        no lock.
    type: float
    default: 600
  discard_pending:
    description:
      - Drop pending changes on the device that mpprov did not make (C(--discard-pending)); without it
        they stop the run for that device.
    type: bool
    default: false
  rollback:
    description:
      - Roll a device back to its previous configuration when the result is wrong. C(false) passes
        C(--no-rollback).
    type: bool
    default: true
attributes:
  check_mode:
    description: Runs C(mpprov plan), which only reads from the devices, and predicts C(changed).
    support: full
  diff_mode:
    description: Returns each stanza that changes (or would change) before and after; secrets only as marks.
    support: full
requirements:
  - mpprov on the controller (the C(.deb)), a release with C(--update-secrets) and C(--lock-wait)
notes:
  - The module runs on the controller (C(connection=local)) and talks HTTPS to the Monitoring Point.
  - No secret is passed on mpprov's command line; the desired state goes to a temporary stick
    (a 0700 folder, 0600 files) that is removed when mpprov ends.
'''
