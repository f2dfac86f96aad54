#!/usr/bin/python
# -*- coding: utf-8 -*-
# Many Monitoring Points' desired states in one mpprov process: the batch path for a fleet, where
# one Node process per host (the per-host module) would cost most of a run that changes nothing.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: fleet
short_description: Configure many Monitoring Points at once with one mpprov run
version_added: "0.1.0"
description:
  - Makes every Monitoring Point in C(monitoring_points) match its desired state with one
    C(mpprov apply --json --concurrency N) on the controller (in check mode C(mpprov plan)), and returns
    one result per Monitoring Point in C(results).
  - Run it once (C(run_once), or a play on C(localhost)); each inventory host then takes its own
    entry of C(results) (the examples show how), so the play recap still counts per device.
  - Use M(mpprov.mpprov.monitoring_point) for per-host control (C(serial), C(throttle), one failed site
    apart from the others) and M(mpprov.mpprov.fleet) when a fleet is large and speed matters (one
    process for all of them instead of one per host).
  - The desired states are checked together, as one stick - a problem in one of them sends nothing to
    any device; the task fails then. A device that fails does not fail the task; its entry says so.
author:
  - mpprov maintainers (@mpprov)
extends_documentation_fragment:
  - mpprov.mpprov.engine
options:
  monitoring_points:
    description:
      - The desired state of each Monitoring Point, each with the options of
        M(mpprov.mpprov.monitoring_point) (C(name), C(url), C(username), C(password), C(password_file),
        C(tls), C(service_hostname), C(interfaces), C(acl), C(paths), C(allow_disconnect), C(prune)).
      - Inline secrets anywhere in them are masked in everything the module returns.
    type: list
    elements: dict
    required: true
    suboptions:
        name:
          description:
            - The Monitoring Point's name, as in logs and results.
          type: str
          required: true
        url:
          description:
            - C(https://host[:port]) of the device's Admin API.
          type: str
          required: true
        username:
          description:
            - The Admin API user; default C(agent.yaml)'s C(defaults.username).
          type: str
        password:
          description:
            - The Admin API password, for example from an AWX credential or Ansible Vault.
            - Mutually exclusive with C(password_file).
          type: str
        password_file:
          description:
            - A file on the controller holding the Admin API password.
          type: path
        tls:
          description:
            - How to trust the device's HTTPS certificate, exactly one of the three.
          type: dict
          suboptions:
            fingerprint_sha256:
              description:
                - The SHA-256 fingerprint of the device certificate, 32 bytes in hex, colons optional.
              type: str
            ca:
              description:
                - A CA certificate on the controller that issued the device certificate.
              type: path
            insecure:
              description:
                - Skip verification (always warned about).
              type: bool
        service_hostname:
          description:
            - The Monitoring Point's hostname as the monitoring service knows it; default C(name).
          type: str
        interfaces:
          description:
            - The stick format's map of interface name to settings (C(vlan), C(ipv4), C(ipv6), C(link),
              C(dot1x), C(wireless)).
            - Certificates, keys and C(*_file) values are paths on the controller.
            - Inline secrets in it (C(password), C(passphrase), C(private_key_password)) are masked in
              everything the module returns, though the map cannot declare them C(no_log).
          type: dict
        acl:
          description:
            - Inbound access rules, each C(protocol), C(ports), C(sources), C(interfaces) as in the stick format.
          type: list
          elements: dict
        paths:
          description:
            - Network paths the Monitoring Point is to measure, each C(target) and an optional C(location).
            - Needs an mpprov that reads C(paths) and a C(service) block in C(agent.yaml).
          type: list
          elements: dict
        allow_disconnect:
          description:
            - Allow changes to the interface mpprov reaches the device through.
          type: bool
        prune:
          description:
            - Remove interfaces that C(interfaces) does not name.
          type: bool
  concurrency:
    description:
      - Monitoring Points provisioned at once (C(--concurrency)).
    type: int
    default: 20
'''

EXAMPLES = r'''
- name: Configure the whole fleet in one mpprov run
  mpprov.mpprov.fleet:
    monitoring_points: "{{ groups['monitoring_points'] | map('extract', hostvars, 'mpprov_desired') | list }}"
    concurrency: 20
    state_dir: /srv/mpprov-state
  run_once: true
  register: fleet

- name: Each host takes its own result, so the recap counts per Monitoring Point
  ansible.builtin.assert:
    that: (fleet.results | selectattr('name', 'equalto', inventory_hostname) | first).outcome != 'failed'
    quiet: true
'''

RETURN = r'''
results:
  description: One entry per Monitoring Point, in the order of C(monitoring_points).
  returned: when mpprov ran
  type: list
  elements: dict
  contains:
    name:
      description: The Monitoring Point's name.
      type: str
    outcome:
      description: C(changed), C(no-change) or C(failed) (C(not-run) when mpprov gave it no result).
      type: str
    changed:
      description: Whether a changing request was sent to it (in check mode, would be).
      type: bool
    message:
      description: mpprov's sentence for it.
      type: str
    diff:
      description: Its stanzas before and after, as in diff mode; secrets only as marks.
      type: list
      elements: dict
    service:
      description: The monitoring service's post-check, when C(agent.yaml) has a service block.
      type: dict
counts:
  description: How many Monitoring Points changed, did not change, failed.
  returned: when mpprov ran
  type: dict
  sample: {changed: 3, no-change: 16, failed: 1}
mpprov_version:
  description: The mpprov version that ran.
  returned: when mpprov printed its version line
  type: str
problems:
  description: The desired states' located problems, as mpprov reports them.
  returned: always
  type: list
  elements: dict
ansible_stats:
  description: Custom stats for the fleet summary (C(mpprov_changed), C(mpprov_unchanged)).
  returned: success
  type: dict
cmd:
  description: The mpprov command line that ran; never a secret.
  returned: always
  type: list
  elements: str
'''

from collections import Counter

from ansible_collections.mpprov.mpprov.plugins.module_utils.mpprov_engine import (
    ENGINE_SPEC, MONITORING_POINT_SPEC, MaskingModule, device_changed, run_engine)
from ansible_collections.mpprov.mpprov.plugins.module_utils.mpprov_output import (
    EXIT_CHANGES, EXIT_NOT_CONNECTED, MAX_QUOTED, diff_by_device, failure_message, located_by_key_path, parse_output,
    visible)


def per_device_results(points, output, check_mode):
    devices = dict((d.get('device'), d) for d in ((output.result or {}).get('devices') or output.device_results))
    plans = dict((p['device'], p) for p in output.plans)
    diffs = diff_by_device(output)
    results = []
    for point in points:
        name = point['name']
        device = devices.get(name)
        plan = plans.get(name)
        entry = dict(name=name, outcome='not-run', changed=False, message='mpprov gave no result for it', diff=[])
        if device is not None:
            entry.update(outcome=device.get('outcome'), message=visible(device.get('message'), MAX_QUOTED),
                         changed=device_changed(device, check_mode, plan is not None and plan['has_changes']))
            if device.get('service') is not None:
                entry['service'] = device.get('service')
        entry['diff'] = diffs.get(name, [])
        results.append(entry)
    return results


def main():
    argument_spec = dict(
        monitoring_points=dict(type='list', elements='dict', required=True, options=MONITORING_POINT_SPEC,
                               mutually_exclusive=[('password', 'password_file')]),
        concurrency=dict(type='int', default=20),
    )
    argument_spec.update(ENGINE_SPEC)
    module = MaskingModule(argument_spec=argument_spec, supports_check_mode=True)
    points = module.params['monitoring_points']
    # Counted once, not names.count() per name: a fleet of thousands is one pass.
    doubled = sorted(n for n, times in Counter(p['name'] for p in points).items() if times > 1)
    if doubled:
        module.fail_json(msg='monitoring_points: %s is named more than once' % ', '.join(doubled))
    if module.params['concurrency'] < 1:
        module.fail_json(msg='concurrency: must be 1 or more')
    if not points:
        module.exit_json(changed=False, results=[], counts={}, problems=[], cmd=[])

    cmd, rc, stdout, stderr = run_engine(module, points, concurrency=module.params['concurrency'])
    output, parse_error = parse_output(stdout)
    response = dict(cmd=cmd, problems=located_by_key_path(output.problems))
    if output.version is not None:
        response['mpprov_version'] = output.version
    results = per_device_results(points, output, module.check_mode) if output.result is not None else []
    response['results'] = results
    counts = {}
    for entry in results:
        counts[entry['outcome']] = counts.get(entry['outcome'], 0) + 1
    response['counts'] = counts
    response['changed'] = any(entry['changed'] for entry in results)
    if module._diff:
        response['diff'] = [d for entry in results for d in entry['diff']]
    for warning in output.warnings:
        module.warn(warning)
    for line in stderr.splitlines():
        if line.startswith('WARNING: '):
            module.warn(visible(line[len('WARNING: '):], MAX_QUOTED))

    if parse_error is not None:
        module.fail_json(msg=parse_error, **response)
    outcome = (output.result or {}).get('outcome')
    # A failed device is a result, not a failed task: each host judges its own entry.
    ran = output.version is not None and output.result is not None and outcome != 'invalid'
    ok_codes = (0, 1, EXIT_CHANGES) if module.check_mode else (0, 1, EXIT_NOT_CONNECTED)
    if not ran or rc not in ok_codes:
        module.fail_json(msg=failure_message(rc, output, stderr, module.check_mode, by_key_path=True), **response)
    response['ansible_stats'] = dict(
        data=dict(mpprov_changed=sum(1 for e in results if e['changed']),
                  mpprov_unchanged=sum(1 for e in results if not e['changed'] and e['outcome'] != 'failed')),
        per_host=False, aggregate=True)
    module.exit_json(**response)


if __name__ == '__main__':
    main()
