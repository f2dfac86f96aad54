# -*- coding: utf-8 -*-
# The desired state as a temporary stick, and mpprov's command line: secrets only in 0600 files.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import stat

import pytest

from ansible_collections.mpprov.mpprov.plugins.module_utils import mpprov_engine
from ansible_collections.mpprov.mpprov.plugins.module_utils.mpprov_engine import (
    DesiredStateError, StickFolder, device_changed, engine_command, secret_values)

PARAMS = dict(mpprov_path='mpprov', agent_config=None, state_dir='/srv/state', secrets_record=None,
              update_secrets='on_create', restart_timeout=30.0, dot1x_grace=None, lock_wait=600.0,
              discard_pending=False, rollback=True)


def desired(tmp_path, **extra):
    ca = tmp_path / 'radius-ca.pem'
    ca.write_text(u'-----BEGIN CERTIFICATE-----\n')
    point = dict(name='mp-1', url='https://192.0.2.10', username='admin', password='Admin-SeCrEt-1',
                 password_file=None, tls=dict(fingerprint_sha256='AB' * 32, ca=None, insecure=None),
                 service_hostname=None, acl=None, paths=None, allow_disconnect=None, prune=None,
                 interfaces=dict(eth1=dict(dot1x=dict(eap='peap', identity='mp-1', password='Dot1x-SeCrEt-2', ca_cert=str(ca)))))
    point.update(extra)
    return point


def test_secret_values_finds_every_inline_secret_at_any_depth(tmp_path):
    point = desired(tmp_path, interfaces=dict(
        eth1=dict(dot1x=dict(password='a-1', private_key_password='b-2')),
        wlan0=dict(wireless=dict(ssid='corp', passphrase='c-3'))))
    assert sorted(secret_values(point)) == ['Admin-SeCrEt-1', 'a-1', 'b-2', 'c-3']


def test_a_key_named_like_a_secret_is_one_whatever_it_holds_but_a_path_is_not(tmp_path):
    point = desired(tmp_path, password=None, interfaces=dict(
        wlan0=dict(wireless=dict(psk='p-1', wifi_password=['p-2', {'x': 'p-3'}]),
                   dot1x=dict(private_key='/etc/k.pem', private_key_password_file='/etc/p', api_token=12345678))))
    assert sorted(secret_values(point)) == ['12345678', 'p-1', 'p-2', 'p-3']


def test_the_stick_is_private_copies_the_files_and_leaves_out_unset_options(tmp_path):
    folder = StickFolder(str(tmp_path / 'sticks'))
    try:
        path = folder.write([desired(tmp_path)])
        assert stat.S_IMODE(os.stat(folder.path).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        with open(path) as f:
            stick = json.load(f)
        point = stick['monitoring_points'][0]
        assert stick['version'] == 1
        assert 'service_hostname' not in point and 'password_file' not in point
        assert point['tls'] == {'fingerprint_sha256': 'AB' * 32}
        copied = point['interfaces']['eth1']['dot1x']['ca_cert']
        assert copied == 'files/1-radius-ca.pem'
        assert stat.S_IMODE(os.stat(os.path.join(folder.path, copied)).st_mode) == 0o600
    finally:
        folder.remove()
    assert not os.path.exists(folder.path)


def test_a_missing_file_is_one_sentence_naming_the_option(tmp_path):
    folder = StickFolder(str(tmp_path / 'sticks'))
    try:
        with pytest.raises(DesiredStateError) as raised:
            folder.write([desired(tmp_path, tls=dict(ca=str(tmp_path / 'nope.pem')))])
        assert str(raised.value) == 'mp-1.tls.ca: %s is not a readable file on the controller' % (tmp_path / 'nope.pem')
    finally:
        folder.remove()


def test_the_command_line_holds_no_secret_and_the_policy_and_lock():
    cmd = engine_command('/usr/bin/mpprov', PARAMS, False, '/tmp/x/mpprov.yaml')
    assert cmd == ['/usr/bin/mpprov', 'apply', '--json', '--state-dir', '/srv/state', '--update-secrets', 'on_create',
                   '--restart-timeout', '30', '--lock-wait', '600', '/tmp/x/mpprov.yaml']


def test_check_mode_plans_without_a_lock():
    cmd = engine_command('mpprov', dict(PARAMS, rollback=False, update_secrets='always'), True, 's.yaml', concurrency=20)
    assert cmd[:3] == ['mpprov', 'plan', '--json']
    assert '--lock-wait' not in cmd and '--no-rollback' not in cmd
    assert cmd[cmd.index('--update-secrets') + 1] == 'always'
    assert cmd[cmd.index('--concurrency') + 1] == '20'


def test_changed_means_a_changing_request_was_sent():
    assert device_changed({'outcome': 'changed'}, False, False)
    assert not device_changed({'outcome': 'no-change'}, False, False)
    assert not device_changed({'outcome': 'failed', 'steps': [{'status': 'failed'}]}, False, False)
    assert device_changed({'outcome': 'failed', 'steps': [{'status': 'done'}, {'status': 'failed'}]}, False, False)
    assert device_changed({'outcome': 'changed'}, True, True)
    assert not device_changed({'outcome': 'no-change'}, True, False)


def test_a_password_written_into_a_url_is_a_secret_too(tmp_path):
    assert secret_values(desired(tmp_path, password=None, interfaces=None, url='https://admin:In-Url-1@192.0.2.10')) == ['In-Url-1']
    assert secret_values(desired(tmp_path, password=None, interfaces=None, url='https://admin:In-Url-2@[::1')) == ['In-Url-2']
    assert secret_values(desired(tmp_path, password=None, interfaces=None, url='https://admin@192.0.2.10')) == []


def test_output_beyond_the_bound_is_read_and_dropped_not_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(mpprov_engine, 'MAX_OUTPUT', 1000)
    lock = os.open(str(tmp_path / 'x.lock'), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        script = 'head -c 300000 /dev/zero | tr "\\0" x; echo said >&2; test -e /proc/self/fd/%d && exit 3' % lock
        rc, stdout, stderr, overflow = mpprov_engine.run_bounded(['sh', '-c', script], lock)
    finally:
        os.close(lock)
    assert (rc, overflow, stderr) == (3, 'stdout', 'said\n')
    assert len(stdout) <= 1000
