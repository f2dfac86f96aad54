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
