# -*- coding: utf-8 -*-
# Running the installed mpprov on a desired state given as module options: the options become a
# temporary stick (mpprov.yaml and copies of the files it names) in a private folder, mode 0700,
# its files 0600, removed when mpprov ends. Secrets travel only in those files, never on the
# command line. mpprov plans, applies, verifies and redacts; nothing of that is repeated here.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import tempfile

from ansible_collections.mpprov.mpprov.plugins.module_utils.mpprov_output import format_number

# A Monitoring Point's desired state: the stick format's monitoring point keys (stick-format.md).
MONITORING_POINT_SPEC = dict(
    name=dict(type='str', required=True),
    url=dict(type='str', required=True),
    username=dict(type='str'),
    password=dict(type='str', no_log=True),
    password_file=dict(type='path', no_log=False),
    tls=dict(type='dict', options=dict(
        fingerprint_sha256=dict(type='str'),
        ca=dict(type='path'),
        insecure=dict(type='bool'),
    )),
    service_hostname=dict(type='str'),
    interfaces=dict(type='dict'),
    acl=dict(type='list', elements='dict'),
    paths=dict(type='list', elements='dict'),
    allow_disconnect=dict(type='bool'),
    prune=dict(type='bool'),
)

UPDATE_SECRETS = ['on_create', 'on_change', 'always']

# How mpprov runs: the command's options, shared by both modules.
ENGINE_SPEC = dict(
    mpprov_path=dict(type='str', default='mpprov'),
    agent_config=dict(type='path'),
    state_dir=dict(type='path'),
    secrets_record=dict(type='path', no_log=False),
    update_secrets=dict(type='str', choices=UPDATE_SECRETS, default='on_create'),
    restart_timeout=dict(type='float'),
    dot1x_grace=dict(type='float'),
    lock_wait=dict(type='float', default=600),
    discard_pending=dict(type='bool', default=False),
    rollback=dict(type='bool', default=True),
)

# Inline secrets of an interface (its map has free keys, so they cannot be declared no_log).
SECRET_KEYS = frozenset(['password', 'passphrase', 'private_key_password'])
# Keys whose value is a file on the controller, copied into the temporary stick.
FILE_KEYS = frozenset(['ca', 'ca_cert', 'client_cert', 'private_key', 'password_file', 'passphrase_file', 'private_key_password_file'])
SECRET_FILE_KEYS = frozenset(['password_file', 'passphrase_file', 'private_key_password_file'])

DEFAULT_USER_STATE_DIR = '~/.local/state/mpprov'


class DesiredStateError(Exception):
    """A desired state that cannot become a stick (a file that cannot be read), said in one sentence."""


def secret_values(value, key=None):
    """Every inline secret in a desired state (any depth), to be masked in whatever the module returns."""
    found = []
    if isinstance(value, dict):
        for k, v in value.items():
            found.extend(secret_values(v, k))
    elif isinstance(value, list):
        for item in value:
            found.extend(secret_values(item, key))
    elif key in SECRET_KEYS and value is not None and str(value) != '':
        found.append(str(value))
    return found


def without_none(value):
    """Options Ansible filled with None (unset suboptions) are not keys of the stick."""
    if isinstance(value, dict):
        return dict((k, without_none(v)) for k, v in value.items() if v is not None)
    if isinstance(value, list):
        return [without_none(item) for item in value]
    return value


class StickFolder(object):
    """The temporary stick: files copied in under files/, one mpprov.yaml."""

    def __init__(self):
        self.path = tempfile.mkdtemp(prefix='mpprov-ansible-')
        os.chmod(self.path, 0o700)
        os.mkdir(os.path.join(self.path, 'files'), 0o700)
        self.copied = 0

    def copy_in(self, source, where):
        source = os.path.abspath(os.path.expanduser(str(source)))
        if not os.path.isfile(source):
            raise DesiredStateError('%s: %s is not a readable file on the controller' % (where, source))
        self.copied += 1
        relative = 'files/%d-%s' % (self.copied, os.path.basename(source))
        target = os.path.join(self.path, relative)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with open(source, 'rb') as src:
                os.write(fd, src.read())
        except (IOError, OSError):
            raise DesiredStateError('%s: %s cannot be read' % (where, source))
        finally:
            os.close(fd)
        return relative

    def with_files(self, value, where):
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if k in FILE_KEYS and isinstance(v, str):
                    out[k] = self.copy_in(v, '%s.%s' % (where, k))
                else:
                    out[k] = self.with_files(v, '%s.%s' % (where, k))
            return out
        if isinstance(value, list):
            return [self.with_files(item, '%s[%d]' % (where, i)) for i, item in enumerate(value)]
        return value

    def write(self, points):
        """Writes mpprov.yaml for these desired states (JSON, which YAML reads) and returns its path."""
        entries = []
        for i, point in enumerate(points):
            entry = without_none(dict((k, point.get(k)) for k in MONITORING_POINT_SPEC))
            entries.append(self.with_files(entry, point.get('name') or 'monitoring_points[%d]' % i))
        document = json.dumps({'version': 1, 'monitoring_points': entries}, indent=1, sort_keys=True)
        path = os.path.join(self.path, 'mpprov.yaml')
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, document.encode('utf-8'))
        finally:
            os.close(fd)
        return path

    def remove(self):
        shutil.rmtree(self.path, ignore_errors=True)


def engine_command(executable, params, check_mode, stick, concurrency=None):
    cmd = [executable, 'plan' if check_mode else 'apply', '--json']
    state_dir = params.get('state_dir')
    if state_dir is None and params.get('agent_config') is None and os.geteuid() != 0:
        # The .deb's state folder is root's; a controller user keeps its own, as XDG says.
        state_dir = os.path.expanduser(DEFAULT_USER_STATE_DIR)
    for flag, value in (('--agent-config', params.get('agent_config')), ('--state-dir', state_dir),
                        ('--secrets-record', params.get('secrets_record'))):
        if value is not None:
            cmd += [flag, value]
    cmd += ['--update-secrets', params['update_secrets']]
    for option, flag in (('restart_timeout', '--restart-timeout'), ('dot1x_grace', '--dot1x-grace')):
        if params.get(option) is not None:
            cmd += [flag, format_number(params[option])]
    if concurrency is not None:
        cmd += ['--concurrency', str(concurrency)]
    if not check_mode:
        cmd += ['--lock-wait', format_number(params['lock_wait'])]
        if not params['rollback']:
            cmd.append('--no-rollback')
    if params['discard_pending']:
        cmd.append('--discard-pending')
    cmd.append(stick)
    return cmd


def run_engine(module, points, concurrency=None):
    """Runs mpprov on these desired states; returns (cmd without the temporary path, rc, stdout, stderr)."""
    params = module.params
    for point in points:
        for value in secret_values(point):
            module.no_log_values.add(value)
    executable = params['mpprov_path']
    if '/' not in executable:
        executable = module.get_bin_path(executable, required=True)
    folder = StickFolder()
    try:
        try:
            stick = folder.write(points)
        except DesiredStateError as error:
            module.fail_json(msg=str(error))
        cmd = engine_command(executable, params, module.check_mode, stick, concurrency)
        rc, stdout, stderr = module.run_command(cmd)
    finally:
        folder.remove()
    # The temporary folder is gone: the returned command names the stick as what it was.
    return cmd[:-1] + ['(desired state)'], rc, stdout, stderr


def device_changed(device, check_mode, has_changes):
    """Changed only when a changing request was sent (or, in check mode, would be)."""
    if check_mode:
        return has_changes
    if device.get('outcome') == 'changed':
        return True
    # A failed device may have been changed (then rolled back): a step done is a request sent.
    return any(step.get('status') == 'done' for step in device.get('steps') or [])
