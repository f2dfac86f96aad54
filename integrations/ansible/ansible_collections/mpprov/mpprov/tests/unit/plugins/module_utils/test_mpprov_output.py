# -*- coding: utf-8 -*-
# Reading mpprov's JSON lines: the version line first, the plan's structured diff per stanza.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.mpprov.mpprov.plugins.module_utils.mpprov_output import build_diff, diff_by_device, failure_message, parse_output


def lines(*events):
    return '\n'.join(json.dumps(e) for e in events)


VERSION = {'type': 'version', 'format': 1, 'mpprov': '0.1.0'}


def test_another_format_is_refused_not_misread():
    out, error = parse_output(lines({'type': 'version', 'format': 2, 'mpprov': '9.0.0'}))
    assert error == 'mpprov 9.0.0 writes JSON output format 2; this module reads format 1: use the collection released with that mpprov'


def test_a_changed_secret_shows_as_marks_on_both_sides():
    plan = {'type': 'plan', 'device': 'mp-1', 'steps': ['POST eth1 inet (update)'], 'hasChanges': True, 'refusals': [],
            'diff': [{'stanza': 'eth1', 'family': 'inet', 'action': 'update',
                      'before': {'method': 'dhcp', 'wpa_password': '(changed)'},
                      'after': {'method': 'static', 'wpa_password': '(changed)'}}]}
    out, error = parse_output(lines(VERSION, plan))
    assert error is None
    assert build_diff(out) == [{
        'before_header': 'mp-1: eth1 inet (on the device)',
        'after_header': 'mp-1: eth1 inet (update, from the profile)',
        'before': 'method: "dhcp"\nwpa_password: "(previous secret)"\n',
        'after': 'method: "static"\nwpa_password: "(changed)"\n',
    }]


def test_each_device_gets_its_own_diff_whatever_its_name_begins_with():
    def plan(device, address):
        return {'type': 'plan', 'device': device, 'steps': ['POST eth1 inet (update)'], 'hasChanges': True, 'refusals': [],
                'diff': [{'stanza': 'eth1', 'family': 'inet', 'action': 'update',
                          'before': {'address': '192.0.2.1/24'}, 'after': {'address': address}}]}
    steps_only = {'type': 'plan', 'device': 'mp1: b', 'steps': ['restart networking'], 'hasChanges': True, 'refusals': []}
    out, error = parse_output(lines(VERSION, plan('mp10', '192.0.2.10/24'), plan('mp1', '192.0.2.11/24'), steps_only))
    assert error is None
    by_device = diff_by_device(out)
    assert sorted(by_device) == ['mp1', 'mp10', 'mp1: b']
    assert [d['after'] for d in by_device['mp1']] == ['address: "192.0.2.11/24"\n']
    assert [d['after'] for d in by_device['mp10']] == ['address: "192.0.2.10/24"\n']
    assert by_device['mp1: b'] == [{'prepared': 'mp1: b: 1 step(s)\n  1. restart networking\n'}]
    assert build_diff(out) == by_device['mp10'] + by_device['mp1'] + by_device['mp1: b']


def test_a_problem_of_the_temporary_stick_is_named_by_its_key_path():
    problem = {'type': 'problem', 'severity': 'error', 'file': '/tmp/mpprov-ansible-x/mpprov.yaml', 'line': 3, 'column': 5,
               'path': 'monitoring_points[0].interfaces.eth1.ipv4.address', 'message': 'is not an address'}
    result = {'type': 'result', 'file': '/tmp/mpprov-ansible-x/mpprov.yaml', 'outcome': 'invalid', 'devices': []}
    out, error = parse_output(lines(VERSION, problem, result))
    assert error is None
    assert failure_message(1, out, '', False, by_key_path=True) == (
        'monitoring_points[0].interfaces.eth1.ipv4.address: is not an address; '
        'the desired state is invalid: nothing was sent to any device')


def test_a_line_of_the_wrong_shape_is_refused_in_a_sentence_not_a_traceback():
    for event in ({'type': 'result', 'outcome': 'failed', 'devices': [{'device': 'mp-1', 'steps': 'notalist'}]},
                  {'type': 'result', 'devices': 'mp-1'},
                  {'type': 'plan', 'device': 'mp-1', 'steps': [{'a': 1}]},
                  {'type': 'plan', 'device': 'mp-1', 'diff': [{'after': 'x'}]},
                  {'type': 'device-result', 'result': ['x']}):
        out, error = parse_output(lines(VERSION, event))
        assert error == "line 2 of mpprov's output (type %s) is not in the form this module reads" % event['type']


def test_what_mpprov_says_is_quoted_escaped_and_bounded():
    out, error = parse_output(lines(dict(VERSION, mpprov=u'\x1b[2J9'),
                                    {'type': 'result', 'outcome': 'failed',
                                     'devices': [{'device': 'mp-1', 'outcome': 'failed', 'message': u'evil \x1b[31m red\x07'}]}))
    assert error is None and out.version == '\\x1b[2J9'
    assert failure_message(1, out, '', False) == 'mp-1: FAILED: evil \\x1b[31m red\\x07'
    said = failure_message(1, parse_output('')[0], u'\x1b[31mboom ' + u'x' * 5000, False)
    assert said == 'mpprov exited with status 1: \\x1b[31mboom ' + 'x' * 990 + ' ... (4010 more characters)'


def test_a_killed_mpprov_is_named_by_its_signal():
    assert failure_message(-9, parse_output('')[0], '', False) == 'mpprov was killed by signal 9 (SIGKILL)'
    assert failure_message(-99, parse_output('')[0], '', False) == 'mpprov was killed by signal 99'
