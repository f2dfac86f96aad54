# -*- coding: utf-8 -*-
# Reading mpprov's JSON lines: the version line first, the plan's structured diff per stanza.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.mpprov.mpprov.plugins.module_utils.mpprov_output import build_diff, failure_message, parse_output


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


def test_a_problem_of_the_temporary_stick_is_named_by_its_key_path():
    problem = {'type': 'problem', 'severity': 'error', 'file': '/tmp/mpprov-ansible-x/mpprov.yaml', 'line': 3, 'column': 5,
               'path': 'monitoring_points[0].interfaces.eth1.ipv4.address', 'message': 'is not an address'}
    result = {'type': 'result', 'file': '/tmp/mpprov-ansible-x/mpprov.yaml', 'outcome': 'invalid', 'devices': []}
    out, error = parse_output(lines(VERSION, problem, result))
    assert error is None
    assert failure_message(1, out, '', False, by_key_path=True) == (
        'monitoring_points[0].interfaces.eth1.ipv4.address: is not an address; '
        'the desired state is invalid: nothing was sent to any device')
