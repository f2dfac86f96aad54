#!/usr/bin/python
# -*- coding: utf-8 -*-
# One Monitoring Point's desired state, as module options, applied by the installed mpprov. The
# module keeps no state of its own: the device is read every run, and what differs is sent.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: monitoring_point
short_description: Configure one Monitoring Point to a desired state with mpprov
version_added: "0.1.0"
description:
  - Makes one network Monitoring Point match the desired state given in the options, which are named
    as the monitoring point keys of mpprov's stick format (C(mpprov.yaml)).
  - Runs the installed C(mpprov apply --json) on the controller, which reads the device, plans, sends
    only what differs, restarts networking when needed, verifies the result and rolls back a wrong
    one. In check mode it runs C(mpprov plan --json), which sends GET requests only.
  - Run it with C(connection=local) (or C(delegate_to=localhost)), one inventory host per Monitoring
    Point, so C(serial), C(throttle), C(--limit) and the play recap work per device.
  - C(changed) only when a changing request was sent. Each result carries C(ansible_stats) (the
    counts C(mpprov_changed) and C(mpprov_unchanged)), summed over the play by Ansible's custom stats.
  - For many Monitoring Points at once in one process, see M(mpprov.mpprov.fleet).
author:
  - mpprov maintainers (@mpprov)
extends_documentation_fragment:
  - mpprov.mpprov.engine
options:
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
'''

EXAMPLES = r'''
- name: Configure each Monitoring Point from its host and group vars
  mpprov.mpprov.monitoring_point:
    name: "{{ inventory_hostname }}"
    url: "{{ mpprov_url }}"
    username: admin
    password: "{{ mpprov_admin_password }}"
    tls:
      fingerprint_sha256: "{{ mpprov_fingerprint }}"
    interfaces:
      eth1:
        ipv4:
          method: static
          address: "{{ mpprov_eth1_address }}"
        dot1x:
          eap: peap
          inner: mschapv2
          identity: "{{ inventory_hostname }}"
          password: "{{ mpprov_dot1x_password }}"
          ca_cert: "{{ playbook_dir }}/certs/radius-ca.pem"
    state_dir: /srv/mpprov-state
  throttle: 4

- name: Send the 802.1X password again even though nothing else changed (a rotation)
  mpprov.mpprov.monitoring_point:
    name: "{{ inventory_hostname }}"
    url: "{{ mpprov_url }}"
    password: "{{ mpprov_admin_password }}"
    interfaces: "{{ mpprov_interfaces }}"
    update_secrets: always
'''

RETURN = r'''
outcome:
  description: The device's outcome.
  returned: when mpprov ran the device
  type: str
  sample: changed
  choices: [changed, no-change, failed]
message:
  description: mpprov's sentence for the device.
  returned: when mpprov ran the device
  type: str
  sample: "applied and verified: 1 stanza(s) added"
steps:
  description: The steps mpprov planned for the device (in check mode, would run).
  returned: when mpprov planned the device
  type: list
  elements: str
  sample: [POST eth1 inet (create), restart networking (1 stanza change(s))]
service:
  description: The monitoring service's post-check of the device, when C(agent.yaml) has a service block.
  returned: when checked
  type: dict
  sample: {connected: true, hostname: mp-berlin-01, sentence: AVAILABLE}
mpprov_version:
  description: The mpprov version that ran.
  returned: when mpprov printed its version line
  type: str
  sample: 0.2.0
problems:
  description: The desired state's located problems (errors and warnings), as mpprov reports them.
  returned: always
  type: list
  elements: dict
ansible_stats:
  description: Custom stats for the fleet summary (C(mpprov_changed), C(mpprov_unchanged)), aggregated over hosts.
  returned: success
  type: dict
  sample: {data: {mpprov_changed: 1, mpprov_unchanged: 0}, per_host: false, aggregate: true}
cmd:
  description: The mpprov command line that ran (the temporary stick shown as C((desired state))); never a secret.
  returned: always
  type: list
  elements: str
'''

from ansible_collections.mpprov.mpprov.plugins.module_utils.mpprov_engine import (
    ENGINE_SPEC, MONITORING_POINT_SPEC, MaskingModule, device_changed, run_engine)
from ansible_collections.mpprov.mpprov.plugins.module_utils.mpprov_output import (
    EXIT_CHANGES, MAX_QUOTED, build_diff, failure_message, located_by_key_path, parse_output, visible)


def main():
    argument_spec = dict(MONITORING_POINT_SPEC)
    argument_spec.update(ENGINE_SPEC)
    module = MaskingModule(
        argument_spec=argument_spec,
        supports_check_mode=True,
        mutually_exclusive=[('password', 'password_file')],
    )
    point = dict((key, module.params[key]) for key in MONITORING_POINT_SPEC)
    cmd, rc, stdout, stderr = run_engine(module, [point])
    output, parse_error = parse_output(stdout)

    name = module.params['name']
    devices = [d for d in ((output.result or {}).get('devices') or output.device_results) if d.get('device') == name]
    device = devices[0] if devices else {}
    plan = next((p for p in output.plans if p['device'] == name), None)
    has_changes = plan is not None and plan['has_changes']
    changed = bool(device) and device_changed(device, module.check_mode, has_changes)
    response = dict(cmd=cmd, changed=changed, problems=located_by_key_path(output.problems))
    if output.version is not None:
        response['mpprov_version'] = output.version
    if device:
        response['outcome'] = device.get('outcome')
        response['message'] = visible(device.get('message'), MAX_QUOTED)
        if device.get('service') is not None:
            response['service'] = device.get('service')
    if plan is not None:
        response['steps'] = plan['steps']
    if module._diff:
        response['diff'] = build_diff(output)
    for p in output.problems:
        if p.get('severity') == 'warning':
            module.warn(visible('%s: %s' % (p.get('path'), p.get('message')), MAX_QUOTED))
    for warning in output.warnings:
        module.warn(warning)
    for line in stderr.splitlines():
        if line.startswith('WARNING: '):
            module.warn(visible(line[len('WARNING: '):], MAX_QUOTED))

    if parse_error is not None:
        module.fail_json(msg=parse_error, **response)
    ok_codes = (0, EXIT_CHANGES) if module.check_mode else (0,)
    outcome = (output.result or {}).get('outcome')
    if output.version is None or rc not in ok_codes or outcome in ('failed', 'invalid') or output.result is None:
        module.fail_json(msg=failure_message(rc, output, stderr, module.check_mode, by_key_path=True), **response)
    response['ansible_stats'] = dict(
        data=dict(mpprov_changed=1 if changed else 0, mpprov_unchanged=0 if changed else 1),
        per_host=False, aggregate=True)
    module.exit_json(**response)


if __name__ == '__main__':
    main()
