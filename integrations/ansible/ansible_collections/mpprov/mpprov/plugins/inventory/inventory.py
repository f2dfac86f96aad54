# -*- coding: utf-8 -*-
# The fleet from mpprov's inventory file (the one `mpprov stick build` reads): one host per
# Monitoring Point, one group per site, the inventory's variables as host and group vars. The
# inventory stays the one source of truth; nothing is repeated in Ansible's own files.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: inventory
short_description: Monitoring Points from an mpprov inventory file
version_added: "0.1.0"
description:
  - Reads an mpprov inventory file (YAML with C(version), C(defaults) and C(sites), or CSV with the
    columns C(site), C(name), C(url), a file named C(.csv) in any letter case), the file C(mpprov stick build) reads.
  - Each Monitoring Point becomes a host named after it, in a group per site (C(group_prefix) and the
    site's name) under the group C(monitoring_points). The inventory's C(defaults) become
    C(monitoring_points)' vars, a site's C(vars) its group's vars, a Monitoring Point's other keys its
    host vars, each name with C(var_prefix) in front; so Ansible's lookup order is the inventory's (the
    Monitoring Point, its site, the defaults). C(url) and the site's name are host vars too.
  - Every host gets C(ansible_connection=local); the modules talk HTTPS to the Monitoring Point.
  - The configuration file's name ends in C(.mpprov.yml) or C(.mpprov.yaml).
author:
  - mpprov maintainers (@mpprov)
options:
  plugin:
    description: The name of this plugin; C(mpprov.mpprov.inventory).
    required: true
    choices: [mpprov.mpprov.inventory]
    type: str
  source:
    description:
      - The mpprov inventory file, relative to this configuration file's folder (or absolute), inside
        that folder or below it; a file elsewhere (C(../), a symbolic link out) is refused unread.
    required: true
    type: str
  group_prefix:
    description: Put before each site's name to make its group's name.
    type: str
    default: site_
  var_prefix:
    description: Put before each inventory variable's name to make its Ansible variable's name.
    type: str
    default: mpprov_
'''

EXAMPLES = r'''
# fleet.mpprov.yml
plugin: mpprov.mpprov.inventory
source: inventory.yaml
# ansible-inventory -i fleet.mpprov.yml --graph
#   @monitoring_points: @site_berlin: mp-berlin-01 (mpprov_url, mpprov_eth1_address, ...)
'''

import csv
import io
import os
import re

from ansible.errors import AnsibleParserError
from ansible.module_utils.common.text.converters import to_native, to_text
from ansible.plugins.inventory import BaseInventoryPlugin
from ansible.utils.unsafe_proxy import wrap_var

try:
    import yaml
except ImportError:  # ansible-core itself needs PyYAML; said plainly should it be missing
    yaml = None

SITE_NAME = re.compile(r'^[a-z0-9][a-z0-9-]{0,31}$')
COLUMN_NAME = re.compile(r'^[a-z][a-z0-9_]*$')
# A host name Ansible's patterns (--limit, hosts:) can name and a terminal shows as it is: letters
# (any script), digits, . _ -; no space, comma, colon, slash or control character. mpprov itself
# allows any label of 1-100.
HOST_NAME = re.compile(r'^[^\W_][\w.-]{0,99}$', re.UNICODE)
# mpprov's own bound for an inventory file (src/stick-build/read-inventory.ts).
MAX_INVENTORY_BYTES = 32 * 1024 * 1024
# Values after YAML aliases are expanded: Ansible copies variables whole, so a few nested aliases
# (each a list of the one before) would make billions of values and hang the run.
MAX_EXPANDED_VALUES = 1000000


class InventoryError(Exception):
    pass


# `mpprov stick build` reads the inventory as YAML 1.2 (core schema). PyYAML's SafeLoader is YAML 1.1,
# where no, on and off are booleans, 12:30 a count of minutes, 0777 octal and 2026-12-31 a date: the
# same file would give Ansible other values than the builder sees (the site "no" would be False).
# The 1.1 resolvers for those types go; the core schema's bool, int and float come in their place.
CORE_BOOL = re.compile(r'^(?:true|True|TRUE|false|False|FALSE)$')
CORE_INT = re.compile(r'^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$')
CORE_FLOAT = re.compile(r'^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$')
YAML_1_1_ONLY = ('tag:yaml.org,2002:bool', 'tag:yaml.org,2002:int', 'tag:yaml.org,2002:float',
                 'tag:yaml.org,2002:timestamp', 'tag:yaml.org,2002:value')


def construct_core_int(loader, node):
    value = loader.construct_scalar(node)
    if value.startswith('0o'):
        return int(value[2:], 8)
    if value.startswith('0x'):
        return int(value[2:], 16)
    return int(value, 10)  # 0777 is 777 in YAML 1.2


if yaml is not None:
    class CoreSchemaLoader(yaml.SafeLoader):  # pylint: disable=too-many-ancestors

        def construct_mapping(self, node, deep=False):
            # The builder refuses a key given twice (the whole file); PyYAML would keep the last
            # one, and Ansible would then configure what the builder never accepts.
            seen = set()
            for key_node, _value in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag == 'tag:yaml.org,2002:merge':
                    # A merge key is YAML 1.1: the builder reads << as a key of its own and refuses it,
                    # so merged values here would be a configuration the builder never accepts.
                    raise yaml.constructor.ConstructorError(None, None, 'a merge key (<<) is not YAML 1.2: write the values out',
                                                            key_node.start_mark)
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = self.construct_object(key_node)
                if key in seen:
                    raise yaml.constructor.ConstructorError(None, None, 'the key "%s" is given twice' % visible(key),
                                                            key_node.start_mark)
                seen.add(key)
            return super(CoreSchemaLoader, self).construct_mapping(node, deep=deep)

    CoreSchemaLoader.yaml_implicit_resolvers = dict(
        (first, [(tag, regexp) for tag, regexp in resolvers if tag not in YAML_1_1_ONLY])
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items())
    CoreSchemaLoader.add_implicit_resolver('tag:yaml.org,2002:bool', CORE_BOOL, list(u'tTfF'))
    # int before float: both match 12, which is an int.
    CoreSchemaLoader.add_implicit_resolver('tag:yaml.org,2002:int', CORE_INT, list(u'-+0123456789'))
    CoreSchemaLoader.add_implicit_resolver('tag:yaml.org,2002:float', CORE_FLOAT, list(u'-+0123456789.'))
    CoreSchemaLoader.add_constructor('tag:yaml.org,2002:int', construct_core_int)


def visible(text):
    """A name from the file as a message shows it: control characters escaped, never sent to the terminal."""
    return ''.join(c if c.isprintable() else c.encode('unicode_escape').decode('ascii') for c in to_text(text))


def expanded_size(value, sizes=None):
    """How many values a loaded document holds once its aliases are copied out (each shared part counted where used)."""
    sizes = {} if sizes is None else sizes
    if not isinstance(value, (dict, list)):
        return 1
    if id(value) in sizes:
        return sizes[id(value)]
    sizes[id(value)] = MAX_EXPANDED_VALUES + 1  # a cycle (an alias inside its own anchor) is too many
    items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
    total = 1
    for key, item in items:
        total += expanded_size(key, sizes) + expanded_size(item, sizes)
        if total > MAX_EXPANDED_VALUES:
            break
    sizes[id(value)] = total
    return total


def check_host_name(name, where):
    if not HOST_NAME.match(name):
        raise InventoryError('%s: name: "%s" cannot be an Ansible host name (1-100 letters, digits, ., _ and -, '
                             'starting with a letter or digit)' % (where, visible(name)))


def parse_yaml_inventory(text, where):
    try:
        data = yaml.load(text, Loader=CoreSchemaLoader)  # a SafeLoader with YAML 1.2 core types
    except RecursionError:
        raise InventoryError('%s: nested too deeply to be an mpprov inventory' % where)
    if expanded_size(data) > MAX_EXPANDED_VALUES:
        raise InventoryError('%s: more than %d values once its YAML aliases are expanded (an alias bomb?)' % (where, MAX_EXPANDED_VALUES))
    if not isinstance(data, dict) or data.get('version') != 1:
        raise InventoryError('%s: not an mpprov inventory (version: 1 with sites:)' % where)
    sites = data.get('sites')
    if not isinstance(sites, dict) or not sites:
        raise InventoryError('%s: sites: must map each site name to its vars and monitoring_points' % where)
    defaults = data.get('defaults') or {}
    if not isinstance(defaults, dict):
        raise InventoryError('%s: defaults: must be a mapping of variables' % where)
    out = []
    for site, body in sites.items():
        site = to_text(site)
        if not SITE_NAME.match(site):
            raise InventoryError('%s: sites.%s: a site name is 1-32 of a-z, 0-9 and -, starting with a letter or digit' % (where, visible(site)))
        body = body or {}
        site_vars = body.get('vars') or {}
        points = body.get('monitoring_points') or []
        if not isinstance(site_vars, dict) or not isinstance(points, list):
            raise InventoryError('%s: sites.%s: vars must be a mapping and monitoring_points a list' % (where, site))
        hosts = []
        for i, mp in enumerate(points):
            if not isinstance(mp, dict) or not mp.get('name') or not mp.get('url'):
                raise InventoryError('%s: sites.%s.monitoring_points[%d]: needs name and url' % (where, site, i))
            check_host_name(to_text(mp['name']), '%s: sites.%s.monitoring_points[%d]' % (where, site, i))
            hosts.append(dict((to_text(k), v) for k, v in mp.items()))
        out.append((site, site_vars, hosts))
    return defaults, out


def parse_csv_inventory(text, where):
    if text.startswith(u'\ufeff'):
        text = text[1:]
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise InventoryError('%s: empty' % where)
    header = rows[0]
    for column in ('site', 'name', 'url'):
        if column not in header:
            raise InventoryError('%s:1: the column %s is missing' % (where, column))
    for column in header:
        if not COLUMN_NAME.match(column):
            raise InventoryError('%s:1: "%s" is not a column name ([a-z][a-z0-9_]*)' % (where, visible(column)))
    by_site = {}
    order = []
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise InventoryError('%s:%d: %d cells where the header has %d' % (where, number, len(row), len(header)))
        # A cell is never evaluated: text it is, and an empty one leaves the variable unset.
        values = dict((k, v) for k, v in zip(header, row) if v != '')
        site = values.pop('site', '')
        if not SITE_NAME.match(site) or not values.get('name') or not values.get('url'):
            raise InventoryError('%s:%d: needs a site (a-z, 0-9, -), a name and a url' % (where, number))
        check_host_name(values['name'], '%s:%d' % (where, number))
        if site not in by_site:
            by_site[site] = []
            order.append(site)
        by_site[site].append(values)
    return {}, [(site, {}, by_site[site]) for site in order]


class InventoryModule(BaseInventoryPlugin):

    NAME = 'mpprov.mpprov.inventory'

    def verify_file(self, path):
        return super(InventoryModule, self).verify_file(path) and path.endswith(('.mpprov.yml', '.mpprov.yaml'))

    def parse(self, inventory, loader, path, cache=True):
        super(InventoryModule, self).parse(inventory, loader, path, cache)
        self._read_config_data(path)
        if yaml is None:
            raise AnsibleParserError('the mpprov inventory plugin needs PyYAML')
        folder = os.path.dirname(os.path.abspath(path))
        source = os.path.join(folder, os.path.expanduser(self.get_option('source')))
        # The configuration names one file beside it or below it: a path that leads elsewhere
        # (../, a symbolic link out of the folder) is refused before anything is read from it.
        real_folder = os.path.realpath(folder)
        if not os.path.realpath(source).startswith(real_folder + os.sep):
            raise AnsibleParserError('%s: source: %s is outside %s, the folder of this configuration: the mpprov inventory '
                                     'must be in that folder or below it' % (path, visible(self.get_option('source')), real_folder))
        try:
            if os.path.getsize(source) > MAX_INVENTORY_BYTES:
                raise AnsibleParserError('%s is larger than %d MiB: not an mpprov inventory' % (source, MAX_INVENTORY_BYTES // (1024 * 1024)))
            with io.open(source, 'r', encoding='utf-8') as f:
                text = f.read()
        except (IOError, OSError, UnicodeDecodeError) as error:
            raise AnsibleParserError('%s cannot be read as UTF-8 text: %s' % (source, to_native(error)))
        try:
            # CSV by its name in any letter case (FLEET.CSV from Windows), as mpprov stick build decides.
            if source.lower().endswith('.csv'):
                defaults, sites = parse_csv_inventory(text, source)
            else:
                defaults, sites = parse_yaml_inventory(text, source)
        except (InventoryError, yaml.YAMLError) as error:
            raise AnsibleParserError(to_native(error))
        self.populate(defaults, sites)

    def _set(self, target, key, value):
        # Every value is the inventory's data, as `mpprov stick build` reads it: a cell is never
        # evaluated, and "{{ ... }}" in one (a spreadsheet anyone edits) must not become a Jinja
        # template Ansible runs on the controller. Unsafe values stay text wherever they are used.
        # Nor does a name become one of Ansible's own (ansible_python_interpreter, ansible_connection):
        # with var_prefix '' a cell would choose the program Ansible runs on the controller.
        if key.startswith('ansible_'):
            raise AnsibleParserError('%s would be one of Ansible\'s own variables: an inventory variable never sets one '
                                     '(rename it, or give a var_prefix)' % visible(key))
        self.inventory.set_variable(target, key, wrap_var(value))

    def populate(self, defaults, sites):
        prefix = self.get_option('var_prefix')
        top = self.inventory.add_group('monitoring_points')
        for key, value in defaults.items():
            self._set(top, prefix + to_text(key), value)
        seen = {}
        for site, site_vars, hosts in sites:
            group = self.inventory.add_group(self.get_option('group_prefix') + site.replace('-', '_'))
            self.inventory.add_child(top, group)
            for key, value in site_vars.items():
                self._set(group, prefix + to_text(key), value)
            for mp in hosts:
                name = to_text(mp['name'])
                if name in seen:
                    raise AnsibleParserError('the Monitoring Point %s is in site %s and in site %s: names are unique' % (name, seen[name], site))
                seen[name] = site
                self.inventory.add_host(name, group=group)
                self._set(name, prefix + 'site', site)
                self.inventory.set_variable(name, 'ansible_connection', 'local')
                for key, value in mp.items():
                    if key != 'name':
                        self._set(name, prefix + key, value)
