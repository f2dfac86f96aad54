# -*- coding: utf-8 -*-
# Imports of ansible_collections.mpprov.mpprov go through Ansible's collection loader, as they do
# when Ansible runs the plugins (and under ansible-test units): it is installed once, over the
# folder that holds ansible_collections/.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..'))
_AnsibleCollectionFinder(paths=[ROOT])._install()
