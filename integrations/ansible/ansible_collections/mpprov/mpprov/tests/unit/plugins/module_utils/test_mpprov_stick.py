# -*- coding: utf-8 -*-
# The temporary stick's folder: locked while its run lives, swept by the next run once it is dead.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import signal
import stat
import subprocess
import sys
import time

from ansible_collections.mpprov.mpprov.plugins.module_utils.mpprov_stick import LockedFolder, sweep_stale

# A run that makes a stick folder, writes a secret into it, says where, and waits to be killed.
HOLDER = '''
import sys, time
from ansible_collections.mpprov.mpprov.plugins.module_utils.mpprov_stick import LockedFolder
folder = LockedFolder(sys.argv[1])
folder.write_document({'secret': 'Held-SeCrEt-7'})
print(folder.path, flush=True)
time.sleep(600)
'''


def start_holder(root):
    here = os.path.dirname(os.path.abspath(__file__))
    collections = os.path.abspath(os.path.join(here, '..', '..', '..', '..', '..', '..', '..'))
    code = ('from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder\n'
            '_AnsibleCollectionFinder(paths=[%r])._install()\n' % collections) + HOLDER
    child = subprocess.Popen([sys.executable, '-c', code, root], stdout=subprocess.PIPE)
    path = child.stdout.readline().decode().strip()
    assert path.startswith(os.path.join(root, 'mpprov-')), path
    return child, path


def test_a_folder_is_private_and_locked_and_leaves_nothing_when_removed(tmp_path):
    root = str(tmp_path / 'sticks')
    folder = LockedFolder(root)
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(folder.path).st_mode) == 0o700
    assert os.path.exists(folder.path + '.lock')
    assert sweep_stale(root) == 0 and os.path.isdir(folder.path)
    folder.remove()
    assert os.listdir(root) == []


def test_a_wider_sticks_folder_is_made_private(tmp_path):
    root = tmp_path / 'sticks'
    root.mkdir(mode=0o755)
    os.chmod(str(root), 0o755)
    LockedFolder(str(root)).remove()
    assert stat.S_IMODE(os.stat(str(root)).st_mode) == 0o700


def test_forks_making_the_sticks_folder_at_once_all_get_one(tmp_path, monkeypatch):
    # Another fork makes the folder between this one's look and its own makedirs.
    root = str(tmp_path / 'sticks')
    real_makedirs = os.makedirs

    def other_fork_first(path, mode=0o777, *args, **kwargs):
        if path == root and not os.path.isdir(root):
            os.mkdir(root, 0o700)
        return real_makedirs(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, 'makedirs', other_fork_first)
    LockedFolder(root).remove()
    assert os.listdir(root) == []


def test_a_live_run_is_never_swept_and_a_sigkilled_one_is(tmp_path):
    root = str(tmp_path / 'sticks')
    child, path = start_holder(root)
    try:
        with open(os.path.join(path, 'mpprov.yaml')) as f:
            assert 'Held-SeCrEt-7' in f.read()
        assert sweep_stale(root) == 0
        assert os.path.isdir(path)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    folder = LockedFolder(root)
    assert folder.swept == 1
    assert sorted(os.listdir(root)) == sorted([os.path.basename(folder.path), os.path.basename(folder.path) + '.lock'])
    folder.remove()


def test_an_unlocked_empty_folder_is_removed_only_once_old(tmp_path):
    root = tmp_path / 'sticks'
    root.mkdir()
    orphan = root / 'mpprov-orphan'
    orphan.mkdir()
    assert sweep_stale(str(root)) == 0
    old = time.time() - 3600
    os.utime(str(orphan), (old, old))
    unrelated = root / 'other'
    unrelated.mkdir()
    os.utime(str(unrelated), (old, old))
    assert sweep_stale(str(root)) == 1
    assert os.listdir(str(root)) == ['other']


def test_a_new_lock_file_is_left_alone_while_young_and_removed_with_its_folder_once_old_and_free(tmp_path):
    root = tmp_path / 'sticks'
    root.mkdir()
    (root / 'mpprov-new').mkdir()
    (root / 'mpprov-new.lock.new').write_text(u'')
    assert sweep_stale(str(root)) == 0
    old = time.time() - 3600
    os.utime(str(root / 'mpprov-new.lock.new'), (old, old))
    assert sweep_stale(str(root)) == 1
    assert os.listdir(str(root)) == []
