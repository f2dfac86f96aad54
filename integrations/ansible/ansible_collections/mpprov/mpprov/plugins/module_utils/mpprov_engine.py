# -*- coding: utf-8 -*-
# Running the installed mpprov on a desired state given as module options: the options become a
# temporary stick (mpprov.yaml and copies of the files it names) in a private folder of the state
# folder (mpprov_stick.py), its files 0600, removed when mpprov ends. Secrets travel only in those
# files, never on the command line. mpprov plans, applies, verifies and redacts; nothing of that is
# repeated here.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import selectors
import subprocess

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.six.moves.urllib.parse import urlsplit
from ansible_collections.mpprov.mpprov.plugins.module_utils.mpprov_output import format_number
from ansible_collections.mpprov.mpprov.plugins.module_utils.mpprov_stick import (
    STICKS_FOLDER, DesiredStateError, LockedFolder)

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
# A key the stick format does not know but that is named like a secret (`psk`, `wifi_password`,
# `api_token`): mpprov refuses it as unknown, yet what follows it was written as a secret. The
# pattern is mpprov's own (src/config/secret-spans.ts); paths (*_file, certificates, keys) are not.
SECRET_NAME = re.compile(r'^(?:pw|pwd|pass)$|passw|passphrase|secret|token|psk|private_?key')
# Keys whose value is a file on the controller, copied into the temporary stick.
FILE_KEYS = frozenset(['ca', 'ca_cert', 'client_cert', 'private_key', 'password_file', 'passphrase_file', 'private_key_password_file'])
SECRET_FILE_KEYS = frozenset(['password_file', 'passphrase_file', 'private_key_password_file'])

DEFAULT_USER_STATE_DIR = '~/.local/state/mpprov'
DEFAULT_ROOT_STATE_DIR = '/var/lib/mpprov'


def is_secret_key(key):
    key = str(key).lower()
    if key in SECRET_KEYS:
        return True
    return key not in FILE_KEYS and not key.endswith('_file') and SECRET_NAME.search(key) is not None


def secret_values(value, key=None, inside_secret=False):
    """Every inline secret in a desired state (any depth), to be masked in whatever the module returns.

    Whatever a secret key holds is secret, a list or a mapping too (a value of the wrong type is
    refused by mpprov, and its refusal is returned).
    """
    found = []
    inside_secret = inside_secret or (key is not None and is_secret_key(key))
    if isinstance(value, dict):
        for k, v in value.items():
            found.extend(secret_values(v, k, inside_secret))
    elif isinstance(value, list):
        for item in value:
            found.extend(secret_values(item, key, inside_secret))
    elif inside_secret and value is not None and str(value) != '':
        found.append(str(value))
    elif key == 'url' and isinstance(value, str):
        # mpprov refuses credentials in a URL without quoting them; Ansible's invocation shows the
        # option as given, so a password written there is masked too.
        found.extend(p for p in [url_password(value)] if p)
    return found


def url_password(url):
    try:
        return urlsplit(url).password
    except ValueError:
        # Not a URL Python can split (mpprov says why); the text after "user:" up to "@" is what would be the password.
        match = re.match(r'^[a-z]+://[^/@:]*:([^/@]*)@', url, re.IGNORECASE)
        return match.group(1) if match else None


class MaskingModule(AnsibleModule):
    """An AnsibleModule that masks the interfaces' inline secrets from the moment it reads its arguments.

    Ansible returns the module's arguments (`invocation`, shown at -vvv and by the json callback)
    with every failure, one of the argument validation itself included; `no_log` cannot mark a key
    of a free map, so the values are added here, before validation can fail.
    """

    def _load_params(self):
        super(MaskingModule, self)._load_params()
        self.no_log_values.update(secret_values(self.params))


def without_none(value):
    """Options Ansible filled with None (unset suboptions) are not keys of the stick."""
    if isinstance(value, dict):
        return dict((k, without_none(v)) for k, v in value.items() if v is not None)
    if isinstance(value, list):
        return [without_none(item) for item in value]
    return value


class StickFolder(LockedFolder):
    """The temporary stick for these desired states."""

    def write(self, points):
        """Writes mpprov.yaml for these desired states (JSON, which YAML reads) and returns its path."""
        entries = []
        for i, point in enumerate(points):
            entry = without_none(dict((k, point.get(k)) for k in MONITORING_POINT_SPEC))
            entries.append(self.with_files(entry, point.get('name') or 'monitoring_points[%d]' % i, FILE_KEYS))
        return self.write_document({'version': 1, 'monitoring_points': entries})


def state_folder(params):
    """The state folder mpprov uses, as far as the options say: the stick folder goes in it."""
    if params.get('state_dir') is not None:
        return params['state_dir']
    if os.geteuid() != 0:
        return os.path.expanduser(DEFAULT_USER_STATE_DIR)
    # root with agent.yaml's own state_dir: the .deb's folder, root's alone, still holds the sticks.
    return DEFAULT_ROOT_STATE_DIR


def stick_root(params):
    return os.path.join(state_folder(params), STICKS_FOLDER)


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
    elif not (os.path.isfile(executable) and os.access(executable, os.X_OK)):
        # Said before a temporary stick exists; starting it would say only "[Errno 2] ...".
        module.fail_json(msg='mpprov_path: %s is not an executable file on the controller' % executable)
    root = stick_root(params)
    try:
        folder = StickFolder(root)
    except (IOError, OSError) as error:
        module.fail_json(msg='the temporary stick cannot be made in %s: %s' % (root, error.strerror or error))
    if folder.swept:
        module.warn('removed %d temporary stick folder(s) in %s left by runs that were killed (they held secrets)'
                    % (folder.swept, root))
    try:
        try:
            stick = folder.write(points)
        except DesiredStateError as error:
            module.fail_json(msg=str(error))
        cmd = engine_command(executable, params, module.check_mode, stick, concurrency)
        try:
            rc, stdout, stderr, overflow = run_bounded(cmd, folder.lock_fd)
        except OSError as error:
            module.fail_json(msg='%s cannot be run: %s' % (executable, error.strerror or error))
    finally:
        folder.remove()
    if overflow:
        module.fail_json(msg='mpprov printed more than %d MiB on %s: not the output of an mpprov this module reads'
                         % (MAX_OUTPUT // (1024 * 1024), overflow), cmd=cmd[:-1] + ['(desired state)'])
    # The temporary folder is gone: the returned command names the stick as what it was.
    return cmd[:-1] + ['(desired state)'], rc, stdout, stderr


# What the module keeps of mpprov's output: a fleet's JSON lines are a few MiB at most; more is not
# mpprov talking, and kept whole it would take the controller's memory.
MAX_OUTPUT = 64 * 1024 * 1024


def run_bounded(cmd, lock_fd):
    """Runs cmd to its end, keeping at most MAX_OUTPUT bytes of each stream (the rest is read and
    dropped: the process is never killed for talking, a real mpprov may be mid-apply).

    Returns (rc, stdout, stderr, the name of a stream that overflowed or None). The lock's fd is
    passed on: mpprov holds the stick's lock too, so a module killed while its mpprov still reads
    the stick does not make the stick sweepable.
    """
    child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             pass_fds=(lock_fd,), close_fds=True)
    kept = {child.stdout: [], child.stderr: []}
    sizes = {child.stdout: 0, child.stderr: 0}
    overflow = None
    with selectors.DefaultSelector() as selector:
        for stream in kept:
            selector.register(stream, selectors.EVENT_READ)
        while selector.get_map():
            for key, dummy in selector.select():
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                if sizes[key.fileobj] + len(chunk) <= MAX_OUTPUT:
                    kept[key.fileobj].append(chunk)
                elif overflow is None:
                    overflow = 'stdout' if key.fileobj is child.stdout else 'stderr'
                sizes[key.fileobj] += len(chunk)
    rc = child.wait()
    text = dict((stream, b''.join(chunks).decode('utf-8', 'replace')) for stream, chunks in kept.items())
    child.stdout.close()
    child.stderr.close()
    return rc, text[child.stdout], text[child.stderr], overflow


def device_changed(device, check_mode, has_changes):
    """Changed only when a changing request was sent (or, in check mode, would be)."""
    if check_mode:
        return has_changes
    if device.get('outcome') == 'changed':
        return True
    # A failed device may have been changed (then rolled back): a step done is a request sent.
    return any(step.get('status') == 'done' for step in device.get('steps') or [])
