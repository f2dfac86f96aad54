# -*- coding: utf-8 -*-
# Reading `mpprov apply|plan --json`: its JSON lines gathered by type, Ansible's diff from the plan's
# structured diff, and the one failure sentence. Shared by the modules; mpprov does the work.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import signal

# The JSON-lines format this module reads (mpprov's `format`): a new one may change what a line
# means, so it is refused rather than misread.
JSON_FORMAT = 1

EXIT_CHANGES = 2  # plan: there are changes (not a failure)
EXIT_NOT_CONNECTED = 3  # apply: configured and verified, not confirmed by the monitoring service
EXIT_USAGE = 64


# What of mpprov's stderr a failure message quotes: a sentence, not a dump.
MAX_QUOTED = 1000


def visible(text, limit=None):
    """Text from mpprov (or from whatever answers as mpprov) as a message shows it: control characters
    escaped so that they reach no terminal, and at most `limit` characters."""
    text = u'%s' % (text,)
    more = ''
    if limit is not None and len(text) > limit:
        more = ' ... (%d more characters)' % (len(text) - limit)
        text = text[:limit]
    return ''.join(c if c.isprintable() else c.encode('unicode_escape').decode('ascii') for c in text) + more


def list_of(value, kind):
    return isinstance(value, list) and all(isinstance(item, kind) for item in value)


def well_formed(event, kind):
    """Whether a line has the shape this module reads: a line that does not is refused, never half-read."""
    if kind == 'plan':
        diff = event.get('diff') or []
        return (list_of(event.get('steps') or [], str) and list_of(event.get('refusals') or [], (str, dict))
                and list_of(diff, dict) and list_of(event.get('aclDiff') or [], dict)
                and all(isinstance(c.get('before') or {}, dict) and isinstance(c.get('after') or {}, dict) for c in diff))
    if kind == 'device-result':
        return isinstance(event.get('result') or {}, dict)
    if kind == 'result':
        devices = event.get('devices') or []
        return list_of(devices, dict) and all(
            list_of(d.get('steps') or [], dict) and isinstance(d.get('service') or {}, dict) for d in devices)
    return True


def signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return None


def format_number(value):
    # 20.0 -> "20": commander reads either, but the command line reads as a person wrote it.
    return str(int(value)) if float(value).is_integer() else str(value)


class Output(object):
    """What mpprov's JSON lines say, gathered by line type."""

    def __init__(self):
        self.version = None
        self.plans = []
        self.diffs = {}
        self.warnings = []
        self.problems = []
        self.device_results = []
        self.result = None
        self.stopped = None


def parse_output(stdout):
    """Returns (Output, error sentence or None). Never quotes a line: the raw output is not returned."""
    out = Output()
    lines = [line for line in stdout.splitlines() if line.strip() != '']
    if not lines:
        return out, None
    for number, line in enumerate(lines, start=1):
        try:
            event = json.loads(line)
        except ValueError:
            return out, 'line %d of mpprov\'s output is not JSON' % number
        if not isinstance(event, dict):
            return out, 'line %d of mpprov\'s output is not a JSON object' % number
        kind = event.get('type')
        if not well_formed(event, kind):
            return out, 'line %d of mpprov\'s output (type %s) is not in the form this module reads' % (number, visible(kind, 40))
        if number == 1:
            if kind != 'version':
                return out, 'mpprov\'s output does not start with its version line ({"type":"version","format":1,...}): an mpprov older than this collection?'
            if event.get('format') != JSON_FORMAT:
                return out, ('mpprov %s writes JSON output format %s; this module reads format %d: use the collection released with that mpprov'
                             % (visible(event.get('mpprov', '(unknown version)'), 100), visible(repr(event.get('format')), 100), JSON_FORMAT))
            out.version = visible(event.get('mpprov'), 100)
        elif kind == 'plan':
            out.plans.append({
                'device': event.get('device'),
                'has_changes': event.get('hasChanges') is True,
                'steps': event.get('steps') or [],
                'refusals': event.get('refusals') or [],
            })
            if 'diff' in event:
                out.diffs[event.get('device')] = (event.get('diff') or [], event.get('aclDiff') or [])
        elif kind == 'warning':
            out.warnings.append(visible('%s: %s' % (event.get('device'), event.get('message')), MAX_QUOTED))
        elif kind == 'problem':
            out.problems.append(dict((k, v) for k, v in event.items() if k != 'type'))
        elif kind == 'device-result':
            out.device_results.append(event.get('result') or {})
        elif kind == 'result':
            out.result = event
        elif kind == 'stopped':
            out.stopped = event
        # Other lines (step-start, step-done, waiting, service-*) are progress; the result repeats
        # what matters of them, and unknown types are new events of the same format.
    return out, None


# mpprov marks a secret that is sent and differs "(changed)" on both sides of its diff (it knows
# neither value); the same line on both sides would vanish from Ansible's unified diff, so the
# before side says what it stands for.
SECRET_CHANGED = '(changed)'
SECRET_BEFORE = '(previous secret)'


def render_settings(settings, other=None):
    """One "key: value" line per field, values as JSON, in mpprov's order (the spelling of `mpprov plan`).

    `other` is the after side when rendering the before side. Secrets arrive as marks only.
    """
    if settings is None:
        return ''
    lines = []
    for key, value in settings.items():
        if other is not None and value == SECRET_CHANGED and other.get(key) == SECRET_CHANGED:
            value = SECRET_BEFORE
        lines.append('%s: %s\n' % (key, json.dumps(value, ensure_ascii=False)))
    return ''.join(lines)


def diff_by_device(output):
    """Ansible's diff of each device (device name -> its entries): per stanza before/after text, or the
    plan's steps when mpprov has no structured diff. Built in one pass, so a batch of many devices
    costs no search of every device's entries for each device."""
    by_device = {}
    for plan in output.plans:
        device = plan['device']
        diff = by_device.setdefault(device, [])
        if device in output.diffs:
            stanzas, acl = output.diffs[device]
            for change in stanzas:
                # "eth1 inet": the interface and the family, as mpprov's plan names a stanza.
                stanza = ' '.join(str(part) for part in (change.get('stanza'), change.get('family')) if part)
                diff.append({
                    'before_header': '%s: %s (on the device)' % (device, stanza),
                    'after_header': '%s: %s (%s, from the profile)' % (device, stanza, change.get('action', 'update')),
                    'before': render_settings(change.get('before'), change.get('after') or {}),
                    'after': render_settings(change.get('after')),
                })
            if acl:
                # Rules are added or removed whole: the removed ones before, the added ones after.
                diff.append({
                    'before_header': '%s: acl (on the device)' % device,
                    'after_header': '%s: acl (from the profile)' % device,
                    'before': ''.join('%s\n' % json.dumps(rule.get('acl'), sort_keys=True) for rule in acl if rule.get('action') == 'delete'),
                    'after': ''.join('%s\n' % json.dumps(rule.get('acl'), sort_keys=True) for rule in acl if rule.get('action') == 'create'),
                })
        elif plan['has_changes']:
            steps = ''.join('  %d. %s\n' % (i, step) for i, step in enumerate(plan['steps'], start=1))
            diff.append({'prepared': '%s: %d step(s)\n%s' % (device, len(plan['steps']), steps)})
    return by_device


def build_diff(output):
    """Ansible's diff of every device, in the order of mpprov's plans."""
    by_device = diff_by_device(output)
    return [entry for plan in output.plans for entry in by_device.pop(plan['device'], [])]


def failure_message(rc, output, stderr, check_mode, by_key_path=False):
    """One sentence for a failed run. `by_key_path`: name problems by key path (the file was temporary)."""
    sentences = []
    errors = [p for p in output.problems if p.get('severity', 'error') == 'error']
    for p in errors:
        where = '' if by_key_path else p.get('file') or ''
        if p.get('line') is not None and not by_key_path:
            where += ':%s:%s' % (p.get('line'), p.get('column'))
        sentences.append(visible('%s: %s%s' % (where or p.get('path', ''), p.get('message'), ' (%s)' % p['hint'] if p.get('hint') else ''),
                                 MAX_QUOTED))
    result = output.result or {}
    if result.get('outcome') == 'invalid':
        what = 'the desired state' if by_key_path else result.get('file')
        sentences.append('%s is invalid: nothing was sent to any device' % what)
    for device in result.get('devices') or []:
        if device.get('outcome') == 'failed':
            sentences.append(visible('%s: FAILED: %s' % (device.get('device'), device.get('message')), MAX_QUOTED))
    if rc == EXIT_NOT_CONNECTED and not check_mode:
        for device in result.get('devices') or []:
            service = device.get('service') or {}
            if service and not service.get('connected'):
                sentences.append(visible('%s: configured and verified, but NOT CONFIRMED by the monitoring service: %s'
                                         % (device.get('device'), service.get('sentence', '')), MAX_QUOTED))
    if output.stopped is not None:
        sentences.append(visible(output.stopped.get('sentence') or 'stopped by %s' % output.stopped.get('signal'), MAX_QUOTED))
    if rc == EXIT_USAGE:
        # commander's sentence is stderr's first line; the usage text after it is not for a task result.
        said = visible(next((line.strip() for line in stderr.splitlines() if line.strip()), ''), MAX_QUOTED)
        sentences.append('mpprov refused its command line (exit status 64): %s '
                         '(an mpprov older than this collection lacks --limit, --secrets-record, --update-secrets or --lock-wait)' % said)
    elif not sentences and rc is not None and rc < 0:
        # A signal no handler saw (SIGKILL, the OOM killer): mpprov said nothing, the status says it all.
        sentences.append('mpprov was killed by signal %d%s' % (-rc, ' (%s)' % signal_name(-rc) if signal_name(-rc) else ''))
    elif not sentences:
        # mpprov's stderr passes its redactor, so it may be quoted; its stdout is not returned at all.
        sentences.append('mpprov exited with status %s%s' % (rc, ': %s' % visible(stderr.strip(), MAX_QUOTED) if stderr.strip() else ''))
    return '; '.join(sentences)


def located_by_key_path(problems):
    """Problems of a temporary stick: its file, line and column name nothing once it is removed; the key path stays."""
    return [dict((k, v) for k, v in p.items() if k not in ('file', 'line', 'column')) for p in problems]
