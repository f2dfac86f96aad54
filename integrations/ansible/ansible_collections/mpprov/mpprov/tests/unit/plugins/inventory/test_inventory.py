# -*- coding: utf-8 -*-
# mpprov's inventory file (YAML and CSV) as sites of Monitoring Points with their variables.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.mpprov.mpprov.plugins.inventory.inventory import InventoryError, parse_csv_inventory, parse_yaml_inventory

YAML = u'''
version: 1
defaults: {username: admin}
sites:
  berlin:
    vars: {vlan: 120}
    monitoring_points:
      - {name: mp-berlin-01, url: "https://192.0.2.10", path_targets: [192.0.2.80]}
'''


def test_yaml_sites_keep_their_variables_with_their_types():
    defaults, sites = parse_yaml_inventory(YAML, 'fleet.yaml')
    assert defaults == {'username': 'admin'}
    assert sites == [('berlin', {'vlan': 120}, [{'name': 'mp-berlin-01', 'url': 'https://192.0.2.10', 'path_targets': ['192.0.2.80']}])]


def test_a_monitoring_point_without_url_is_refused_by_its_place():
    with pytest.raises(InventoryError) as raised:
        parse_yaml_inventory(u'version: 1\nsites:\n  berlin:\n    monitoring_points:\n      - {name: a}\n', 'fleet.yaml')
    assert str(raised.value) == 'fleet.yaml: sites.berlin.monitoring_points[0]: needs name and url'


def test_csv_cells_are_text_never_evaluated_and_empty_cells_unset():
    text = u'\ufeffsite,name,url,vlan,note\r\nberlin,mp-1,https://192.0.2.10,120,=1+2\r\nberlin,mp-2,https://192.0.2.11,,\r\n'
    defaults, sites = parse_csv_inventory(text, 'fleet.csv')
    assert defaults == {}
    assert sites == [('berlin', {}, [{'name': 'mp-1', 'url': 'https://192.0.2.10', 'vlan': '120', 'note': '=1+2'},
                                     {'name': 'mp-2', 'url': 'https://192.0.2.11'}])]


def test_csv_without_a_required_column_is_refused():
    with pytest.raises(InventoryError) as raised:
        parse_csv_inventory(u'site,name\nberlin,mp-1\n', 'fleet.csv')
    assert str(raised.value) == 'fleet.csv:1: the column url is missing'


def point_yaml(name, extra=u''):
    return u'version: 1\nsites:\n  s1:\n    monitoring_points:\n      - name: %s\n        url: https://192.0.2.1\n%s' % (name, extra)


@pytest.mark.parametrize('name, shown', [
    (u'"mp-\\x1b[31m1"', u'mp-\\x1b[31m1'),
    (u'"../../etc"', u'../../etc'),
    (u'"a b,c"', u'a b,c'),
])
def test_a_name_that_cannot_be_a_host_name_is_refused_with_its_control_characters_escaped(name, shown):
    with pytest.raises(InventoryError) as raised:
        parse_yaml_inventory(point_yaml(name), 'fleet.yaml')
    assert str(raised.value) == (u'fleet.yaml: sites.s1.monitoring_points[0]: name: "%s" cannot be an Ansible host name '
                                 u'(1-100 letters, digits, ., _ and -, starting with a letter or digit)' % shown)
    assert u'\x1b' not in str(raised.value)


def test_a_name_in_another_script_is_a_host_name():
    defaults, sites = parse_yaml_inventory(point_yaml(u'mp-münchen_01'), 'fleet.yaml')
    assert sites[0][2][0]['name'] == u'mp-münchen_01'


def test_a_csv_name_that_cannot_be_a_host_name_is_refused_by_its_row():
    with pytest.raises(InventoryError) as raised:
        parse_csv_inventory(u'site,name,url\nberlin,mp/1,https://192.0.2.1\n', 'fleet.csv')
    assert str(raised.value).startswith(u'fleet.csv:2: name: "mp/1" cannot be an Ansible host name')


def test_an_alias_bomb_is_refused_before_ansible_copies_it():
    text = u'        x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n'
    for i in range(1, 9):
        text += u'        x%d: &a%d [%s]\n' % (i, i, u', '.join([u'*a%d' % (i - 1)] * 9))
    with pytest.raises(InventoryError) as raised:
        parse_yaml_inventory(point_yaml(u'mp-1', text), 'fleet.yaml')
    assert str(raised.value) == u'fleet.yaml: more than 1000000 values once its YAML aliases are expanded (an alias bomb?)'


def test_a_few_shared_values_by_alias_are_fine():
    defaults, sites = parse_yaml_inventory(point_yaml(u'mp-1', u'        a: &x [1, 2]\n        b: *x\n'), 'fleet.yaml')
    assert sites[0][2][0]['b'] == [1, 2]


def test_deep_nesting_is_a_sentence_not_a_recursion_error():
    with pytest.raises(InventoryError) as raised:
        parse_yaml_inventory(point_yaml(u'mp-1', u'        deep: %s%s\n' % (u'[' * 50000, u']' * 50000)), 'fleet.yaml')
    assert str(raised.value) == u'fleet.yaml: nested too deeply to be an mpprov inventory'


def test_yaml_values_are_read_as_mpprov_stick_build_reads_them_yaml_1_2_core():
    # YAML 1.1 (PyYAML's safe_load) would make the site "no" False, 12:34:56 a number of seconds,
    # 0777 octal and the date a datetime: mpprov's builder (YAML 1.2, core schema) reads text there.
    text = (u'version: 1\nsites:\n  no:\n    vars: {flag: on, enabled: TRUE, off_hours: 12:34:56}\n'
            u'    monitoring_points:\n      - name: mp-no-1\n        url: https://192.0.2.1\n'
            u'        mode: 0777\n        octal: 0o17\n        hex: 0x1F\n        day: 2026-12-31\n'
            u'        grouped: 1_000\n        ratio: .5\n        big: 1e3\n        none: ~\n        eq: =\n')
    defaults, sites = parse_yaml_inventory(text, 'fleet.yaml')
    assert sites == [(u'no', {u'flag': u'on', u'enabled': True, u'off_hours': u'12:34:56'},
                      [{u'name': u'mp-no-1', u'url': u'https://192.0.2.1', u'mode': 777, u'octal': 15, u'hex': 31,
                        u'day': u'2026-12-31', u'grouped': u'1_000', u'ratio': 0.5, u'big': 1000.0, u'none': None,
                        u'eq': u'='}])]


def test_a_key_given_twice_is_refused_as_the_builder_refuses_it_never_the_last_one_taken():
    import yaml
    with pytest.raises(yaml.YAMLError) as raised:
        parse_yaml_inventory(point_yaml(u'mp-1', u'        vlan: 120\n        vlan: 130\n'), 'fleet.yaml')
    assert u'"vlan" is given twice' in str(raised.value)
    assert u'line 8, column 9' in str(raised.value)


def test_a_merge_key_is_refused_as_the_builder_refuses_it_never_merged():
    import yaml
    text = (u'version: 1\ndefaults: &d {vlan: 120}\nsites:\n  berlin:\n    monitoring_points:\n'
            u'      - name: mp-1\n        url: https://192.0.2.1\n        <<: *d\n')
    with pytest.raises(yaml.YAMLError) as raised:
        parse_yaml_inventory(text, 'fleet.yaml')
    assert u'a merge key (<<) is not YAML 1.2' in str(raised.value)
    assert u'line 8, column 9' in str(raised.value)
