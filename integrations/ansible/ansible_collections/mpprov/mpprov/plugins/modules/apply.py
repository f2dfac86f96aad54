#!/usr/bin/python
# -*- coding: utf-8 -*-
# Runs `mpprov apply --json` (or `mpprov plan --json` in check mode) and turns its JSON lines into
# an Ansible result. The module holds no provisioning logic: mpprov plans, applies, verifies and
# redacts; this file only builds the command line and reads the output.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: apply
short_description: Configure Monitoring Points with mpprov, idempotently
version_added: "0.1.0"
description:
  - Runs C(mpprov apply --json PROFILE) on the host the module runs on, which reads the profile (an
    C(mpprov.yaml) file, or a folder holding one), plans the changes for every Monitoring Point
    named in it, sends only what differs, restarts networking when needed, verifies the result and
    rolls back a wrong one.
  - In check mode it runs C(mpprov plan --json PROFILE) instead, which only reads from the devices
    (GET requests); C(changed) then says whether an apply would change anything.
  - With C(--diff), each stanza that would change (or did change) is shown before and after, from
    the structured diff of mpprov's plan; secrets appear only as marks, "(changed)", "(unchanged)" or "(set)". An
    mpprov whose plan carries no structured diff yields the plan's step list instead.
  - >-
    Monitoring Points are appliances reached over HTTPS, not SSH hosts. Run the module on the
    controller (C(delegate_to: localhost), or C(connection: local) in the play) with one inventory
    host per Monitoring Point, so C(throttle), C(serial), C(--limit) and the play recap work per
    device. The profile's paths are then paths on the controller.
  - mpprov keeps a keyed hash of each secret it applied in its state directory (the secrets record),
    so that an unchanged 802.1X password is not sent again and does not restart networking. Keep the
    same C(state_dir) (or C(agent_config)) on the controller from run to run, or share a record with
    C(secrets_record); a fresh record resends every secret once and reports C(changed).
  - The module passes no secret on the command line; the profile names its secrets (password files,
    inline 802.1X passwords, key passphrases) and mpprov redacts every one of them from its output.
    The module never returns mpprov's raw output.
author:
  - mpprov maintainers (@mpprov)
deprecated:
  removed_in: 1.0.0
  why: >-
    It applies profiles kept on the controller and is idempotent only with a state folder kept from run to run,
    which an AWX job does not have.
  alternative: Use M(mpprov.mpprov.monitoring_point) (the desired state as options) or M(mpprov.mpprov.fleet) (many at once).
requirements:
  - mpprov (the C(mpprov) command of the same release, or any release whose JSON output has format 1)
options:
  profile:
    description:
      - The profile to apply, on the host the module runs on (the controller, with C(delegate_to) set
        to C(localhost)) - an C(mpprov.yaml) file, a profile named after its Monitoring Point, or a stick
        folder holding C(mpprov.yaml). Paths inside it (certificates, password files) are relative to
        its folder.
      - Give an absolute path, for example C({{ playbook_dir }}/profiles/{{ inventory_hostname }}.yaml).
    type: path
    required: true
  limit:
    description:
      - Only these Monitoring Points of the profile (their C(name) in C(monitoring_points)), passed as
        C(--limit NAME,NAME). Use C([ "{{ inventory_hostname }}" ]) when one profile holds a whole site
        and the inventory has one host per Monitoring Point.
      - Needs an mpprov with C(--limit); an older one refuses the command line and the task fails
        saying so.
    type: list
    elements: str
  agent_config:
    description:
      - mpprov's own configuration (C(agent.yaml)) on the host the module runs on, passed as
        C(--agent-config). Default, as for the command, C($MPPROV_AGENT_CONFIG), else
        C(/etc/mpprov/agent.yaml); a missing file means all defaults.
    type: path
  state_dir:
    description:
      - mpprov's state directory (overrides C(agent.yaml)'s C(state_dir)), passed as C(--state-dir). It
        holds the secrets record unless C(secrets_record) names another file.
    type: path
  secrets_record:
    description:
      - The secrets record to read and update, passed as C(--secrets-record), for a team that keeps one
        record on the automation controller. It holds keyed hashes, never the secrets themselves.
      - Needs an mpprov with C(--secrets-record); an older one refuses the command line and the task
        fails saying so.
    type: path
  mpprov:
    description:
      - The mpprov executable, a name looked up in C(PATH) or a path.
    type: str
    default: mpprov
  allow_disconnect:
    description:
      - Allow changes to the interface mpprov reaches the device through (C(--allow-disconnect)).
    type: bool
    default: false
  discard_pending:
    description:
      - Drop pending changes on the device that mpprov did not make (C(--discard-pending)); without it
        they stop the run.
    type: bool
    default: false
  rollback:
    description:
      - Roll a device back to its previous configuration when the result is wrong. C(false) passes
        C(--no-rollback). Ignored in check mode, which changes nothing.
    type: bool
    default: true
  restart_timeout:
    description:
      - Seconds to wait for a device to come back after a networking restart (C(--restart-timeout)).
    type: float
  dot1x_grace:
    description:
      - Seconds an 802.1X port may take to authorize after a restart (C(--dot1x-grace)).
    type: float
  concurrency:
    description:
      - Devices of the profile provisioned at once (C(--concurrency)); with one Monitoring Point per
        inventory host, use the play's C(throttle) or C(forks) instead.
    type: int
notes:
  - Supports check mode (C(mpprov plan)) and diff mode.
  - The JSON output's first line must be C({"type":"version","format":1,...}); another format fails
    the task instead of being misread.
  - C(failed) when the profile is invalid (nothing was sent), when a device failed (the others still
    ran), or when every device was configured and verified but one was not confirmed connected to the
    monitoring service (mpprov's exit status 3).
  - mpprov's README, section "Automating fleets with Ansible", describes installing this collection.
'''

EXAMPLES = r'''
# One inventory host per Monitoring Point; the module runs on the controller.
- name: Provision Monitoring Points, at most 4 of a site at once
  hosts: site_berlin
  gather_facts: false
  tasks:
    - name: Apply each MP's profile
      mpprov.mpprov.apply:
        profile: "{{ playbook_dir }}/profiles/{{ inventory_hostname }}.yaml"
        agent_config: /etc/mpprov/agent.yaml
      delegate_to: localhost
      throttle: 4

# One profile per site holding every MP of the site: each inventory host applies only its own MP.
- name: Apply only this host's Monitoring Point of the site's profile
  mpprov.mpprov.apply:
    profile: "{{ playbook_dir }}/profiles/berlin.yaml"
    limit:
      - "{{ inventory_hostname }}"
    secrets_record: /srv/mpprov/secrets-record.json
  delegate_to: localhost

# What would change, without changing anything: ansible-playbook site.yml --check --diff
- name: Plan only
  mpprov.mpprov.apply:
    profile: /srv/mpprov/profiles/mp-berlin-01.yaml
  check_mode: true
  delegate_to: localhost
  register: plan

- name: Show the steps
  ansible.builtin.debug:
    var: plan.plans
'''

RETURN = r'''
outcome:
  description: The run's outcome, from mpprov's final result line.
  returned: when mpprov printed its result line
  type: str
  sample: changed
  choices: [changed, no-change, failed, invalid]
mpprov_version:
  description: The mpprov version, from the output's version line.
  returned: when mpprov printed its version line
  type: str
  sample: 0.1.0
devices:
  description:
    - One entry per Monitoring Point, from mpprov's result line (fields as in C(mpprov apply --json)).
      In check mode C(steps) is empty and C(message) says how many steps would run.
  returned: when mpprov printed its result line
  type: list
  elements: dict
  sample:
    - device: mp-berlin-01
      url: https://192.0.2.10
      outcome: changed
      message: "applied: 1 stanza(s) added; the settings are active as requested"
      steps:
        - {index: 0, description: POST eth1 inet (create), status: done, elapsedMs: 10}
      warnings: []
      durationMs: 349
plans:
  description: Per Monitoring Point, the steps mpprov planned, whether it has changes, and what it refused.
  returned: always
  type: list
  elements: dict
  sample:
    - device: mp-berlin-01
      has_changes: true
      steps: [POST eth1 inet (create), restart networking (1 stanza change(s))]
      refusals: []
problems:
  description: The profile's located problems (errors and warnings), as mpprov reports them.
  returned: always
  type: list
  elements: dict
  sample:
    - severity: warning
      file: profiles/mp-berlin-01.yaml
      line: 11
      column: 16
      path: monitoring_points[0].interfaces.eth1.dot1x
      message: "PEAP without ca_cert: the Monitoring Point will not verify the RADIUS server"
      hint: "add ca_cert: with the CA that issued the RADIUS server certificate"
results:
  description: One line per Monitoring Point - its name, outcome and sentence, separated by colons.
  returned: always
  type: list
  elements: str
  sample: ["mp-berlin-01: changed: applied: 1 stanza(s) added; the settings are active as requested"]
exit_status:
  description:
    - mpprov's exit status. plan - 0 nothing to change, 2 changes; apply - 0 success, 3 not confirmed by the
      monitoring service; 1 failure; 64 a refused command line.
    - Named so, not C(rc), because Ansible reads a non-zero C(rc) as a failure, and plan's 2 is not one.
  returned: always
  type: int
  sample: 0
cmd:
  description: The mpprov command line that ran (it never holds a secret).
  returned: always
  type: list
  elements: str
  sample: [mpprov, apply, --json, /srv/mpprov/profiles/mp-berlin-01.yaml]
'''

import json

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.mpprov.mpprov.plugins.module_utils.mpprov_output import (
    EXIT_CHANGES, EXIT_USAGE, build_diff, failure_message, format_number, parse_output)

# The argument spec beside DOCUMENTATION's options: ansible-test's validate-modules compares the two.
ARGUMENT_SPEC = dict(
    profile=dict(type='path', required=True),
    limit=dict(type='list', elements='str'),
    agent_config=dict(type='path'),
    state_dir=dict(type='path'),
    secrets_record=dict(type='path'),
    mpprov=dict(type='str', default='mpprov'),
    allow_disconnect=dict(type='bool', default=False),
    discard_pending=dict(type='bool', default=False),
    rollback=dict(type='bool', default=True),
    restart_timeout=dict(type='float'),
    dot1x_grace=dict(type='float'),
    concurrency=dict(type='int'),
)


def build_command(executable, params, check_mode):
    cmd = [executable, 'plan' if check_mode else 'apply', '--json']
    if params['limit']:
        cmd += ['--limit', ','.join(params['limit'])]
    for option, flag in (('agent_config', '--agent-config'), ('state_dir', '--state-dir'), ('secrets_record', '--secrets-record')):
        if params[option] is not None:
            cmd += [flag, params[option]]
    for option, flag in (('restart_timeout', '--restart-timeout'), ('dot1x_grace', '--dot1x-grace'), ('concurrency', '--concurrency')):
        if params[option] is not None:
            cmd += [flag, format_number(params[option])]
    if params['allow_disconnect']:
        cmd.append('--allow-disconnect')
    if params['discard_pending']:
        cmd.append('--discard-pending')
    # plan has no --no-rollback: it changes nothing, so there is nothing to roll back.
    if not params['rollback'] and not check_mode:
        cmd.append('--no-rollback')
    cmd.append(params['profile'])
    return cmd


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    executable = params['mpprov']
    if '/' not in executable:
        executable = module.get_bin_path(executable, required=True)
    bad = [name for name in params['limit'] or [] if ',' in name or name.strip() == '']
    if bad:
        # mpprov takes the names comma-separated: a name with a comma would name two devices.
        module.fail_json(msg='limit: %s is not the name of a Monitoring Point (names are not empty and hold no comma)' % json.dumps(bad[0]))
    cmd = build_command(executable, params, module.check_mode)

    rc, stdout, stderr = module.run_command(cmd)
    output, parse_error = parse_output(stdout)

    devices = (output.result or {}).get('devices') or output.device_results
    outcome = (output.result or {}).get('outcome')
    response = dict(
        cmd=cmd,
        exit_status=rc,
        plans=output.plans,
        problems=output.problems,
        results=['%s: %s: %s' % (d.get('device'), d.get('outcome'), d.get('message')) for d in devices],
    )
    if output.version is not None:
        response['mpprov_version'] = output.version
    if output.result is not None:
        response['outcome'] = outcome
        response['devices'] = devices
    if module.check_mode:
        response['changed'] = any(plan['has_changes'] for plan in output.plans)
    else:
        # A failed run may have changed some devices (or rolled them back): say so when it did.
        response['changed'] = outcome == 'changed' or any(d.get('outcome') == 'changed' for d in devices)
    if module._diff:
        response['diff'] = build_diff(output)

    for p in output.problems:
        if p.get('severity') == 'warning':
            module.warn('%s:%s:%s: %s' % (p.get('file'), p.get('line'), p.get('column'), p.get('message')))
    for warning in output.warnings:
        module.warn(warning)
    # mpprov's stderr (through its redactor) carries run-wide warnings, e.g. an unreadable secrets record.
    for line in stderr.splitlines():
        if line.startswith('WARNING: '):
            module.warn(line[len('WARNING: '):])

    if parse_error is not None:
        module.fail_json(msg=parse_error, **response)
    if output.version is None:
        # No JSON at all: mpprov did not start its run (not found, a refused command line, a crash).
        module.fail_json(msg=failure_message(rc, output, stderr, module.check_mode), **response)
    ok_codes = (0, EXIT_CHANGES) if module.check_mode else (0,)
    if rc not in ok_codes or outcome in ('failed', 'invalid') or output.result is None:
        module.fail_json(msg=failure_message(rc, output, stderr, module.check_mode), **response)
    module.exit_json(**response)


if __name__ == '__main__':
    main()
