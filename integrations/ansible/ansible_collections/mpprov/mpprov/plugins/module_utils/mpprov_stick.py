# -*- coding: utf-8 -*-
# The temporary stick a module writes for mpprov: mpprov.yaml and copies of the files it names,
# secrets included. It lives in a 0700 folder of the state folder, never in /tmp: a module killed
# with SIGKILL cannot remove it, so each run sweeps the folders of runs that are provably dead.
# Proof is an flock: every stick folder X has a lock file X.lock held (flock(2), exclusive) by the
# module and by the mpprov it starts for as long as either lives; the kernel drops it when both
# are gone, however they ended. A lock that can be taken therefore belongs to a dead run.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import fcntl
import json
import os
import shutil
import tempfile
import time

STICKS_FOLDER = 'ansible-sticks'
PREFIX = 'mpprov-'
LOCK = '.lock'
# A lock file is made under this name, locked, then renamed to X.lock: a sweeping run never sees
# an X.lock that is not yet locked.
NEW_LOCK = '.lock.new'
# A stick folder without a lock file is one whose run died between making it and locking it (it is
# empty then: files are written only once the lock is held), or one being made right now; only an
# empty one older than this is removed.
ORPHAN_AGE_S = 600


class DesiredStateError(Exception):
    """A desired state that cannot become a stick (a file that cannot be read), said in one sentence."""


def _try_lock(path):
    """Takes the lock of a file another run may hold: its fd when taken, None when held or gone."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (IOError, OSError):
        os.close(fd)
        return None
    return fd


def _older_than(path, seconds):
    try:
        return time.time() - os.stat(path).st_mtime > seconds
    except OSError:
        return False


def sweep_stale(root):
    """Removes the stick folders under root whose runs are dead; returns how many."""
    removed = 0
    try:
        names = os.listdir(root)
    except OSError:
        return 0
    for name in names:
        if not name.startswith(PREFIX):
            continue
        path = os.path.join(root, name)
        if name.endswith(LOCK) or name.endswith(NEW_LOCK):
            # A new lock file is locked right after it is made: one that young may be in between.
            if name.endswith(NEW_LOCK) and not _older_than(path, ORPHAN_AGE_S):
                continue
            fd = _try_lock(path)
            if fd is None:
                continue
            try:
                folder = path[:-len(LOCK)] if name.endswith(LOCK) else path[:-len(NEW_LOCK)]
                if os.path.isdir(folder):
                    shutil.rmtree(folder, ignore_errors=True)
                    removed += 1
                os.unlink(path)
            except OSError:
                pass
            finally:
                os.close(fd)
        elif os.path.isdir(path) and not os.path.exists(path + LOCK) and not os.path.exists(path + NEW_LOCK):
            if _older_than(path, ORPHAN_AGE_S):
                try:
                    os.rmdir(path)  # fails, as it should, unless empty
                    removed += 1
                except OSError:
                    pass
    return removed


class LockedFolder(object):
    """A temporary stick's folder: files copied in under files/, one mpprov.yaml, locked, 0700, in root.

    root is a folder of its own (the sweep reads every entry named mpprov-*), never /tmp itself.
    """

    def __init__(self, root):
        # Several forks may make it at once: one of them wins, the others find it there.
        try:
            os.makedirs(root, 0o700)
        except OSError as error:
            if error.errno != errno.EEXIST or not os.path.isdir(root):
                raise
        # Made by another tool or an older release with a wider mode: only its owner reads secrets.
        if os.stat(root).st_mode & 0o077:
            os.chmod(root, 0o700)
        self.root = root
        self.swept = sweep_stale(root)
        self.path = tempfile.mkdtemp(prefix=PREFIX, dir=root)
        self.lock_fd = os.open(self.path + NEW_LOCK, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        fcntl.flock(self.lock_fd, fcntl.LOCK_EX)
        os.rename(self.path + NEW_LOCK, self.path + LOCK)
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

    def with_files(self, value, where, file_keys):
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if k in file_keys and isinstance(v, str):
                    out[k] = self.copy_in(v, '%s.%s' % (where, k))
                else:
                    out[k] = self.with_files(v, '%s.%s' % (where, k), file_keys)
            return out
        if isinstance(value, list):
            return [self.with_files(item, '%s[%d]' % (where, i), file_keys) for i, item in enumerate(value)]
        return value

    def write_document(self, document):
        """Writes mpprov.yaml (JSON, which YAML reads) and returns its path."""
        path = os.path.join(self.path, 'mpprov.yaml')
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, json.dumps(document, indent=1, sort_keys=True).encode('utf-8'))
        finally:
            os.close(fd)
        return path

    def remove(self):
        # The folder first, its lock last: a folder never outlives the lock that says whose it is.
        shutil.rmtree(self.path, ignore_errors=True)
        try:
            os.unlink(self.path + LOCK)
        except OSError as error:
            if error.errno != errno.ENOENT:
                raise
        finally:
            os.close(self.lock_fd)
