# -*- coding: utf-8 -*-
# Reading `mpprov apply|plan --json`: its JSON lines gathered by type, Ansible's diff from the plan's
# structured diff, and the one failure sentence. Shared by the modules; mpprov does the work.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

# The JSON-lines format this module reads (mpprov's `format`): a new one may change what a line
# means, so it is refused rather than misread.
JSON_FORMAT = 1

EXIT_CHANGES = 2  # plan: there are changes (not a failure)
EXIT_NOT_CONNECTED = 3  # apply: configured and verified, not confirmed by the monitoring service
EXIT_USAGE = 64


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
        if number == 1:
            if kind != 'version':
                return out, 'mpprov\'s output does not start with its version line ({"type":"version","format":1,...}): an mpprov older than this collection?'
            if event.get('format') != JSON_FORMAT:
                return out, ('mpprov %s writes JSON output format %r; this module reads format %d: use the collection released with that mpprov'
                             % (event.get('mpprov', '(unknown version)'), event.get('format'), JSON_FORMAT))
            out.version = event.get('mpprov')
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
            out.warnings.append('%s: %s' % (event.get('device'), event.get('message')))
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
        sentences.append('%s: %s%s' % (where or p.get('path', ''), p.get('message'), ' (%s)' % p['hint'] if p.get('hint') else ''))
    result = output.result or {}
    if result.get('outcome') == 'invalid':
        what = 'the desired state' if by_key_path else result.get('file')
        sentences.append('%s is invalid: nothing was sent to any device' % what)
    for device in result.get('devices') or []:
        if device.get('outcome') == 'failed':
            sentences.append('%s: FAILED: %s' % (device.get('device'), device.get('message')))
    if rc == EXIT_NOT_CONNECTED and not check_mode:
        for device in result.get('devices') or []:
            service = device.get('service') or {}
            if service and not service.get('connected'):
                sentences.append('%s: configured and verified, but NOT CONFIRMED by the monitoring service: %s'
                                 % (device.get('device'), service.get('sentence', '')))
    if output.stopped is not None:
        sentences.append(output.stopped.get('sentence') or 'stopped by %s' % output.stopped.get('signal'))
    if rc == EXIT_USAGE:
        # commander's sentence is stderr's first line; the usage text after it is not for a task result.
        said = next((line.strip() for line in stderr.splitlines() if line.strip()), '')
        sentences.append('mpprov refused its command line (exit status 64): %s '
                         '(an mpprov older than this collection lacks --limit, --secrets-record, --update-secrets or --lock-wait)' % said)
    elif not sentences:
        # mpprov's stderr passes its redactor, so it may be quoted; its stdout is not returned at all.
        sentences.append('mpprov exited with status %s%s' % (rc, ': %s' % stderr.strip() if stderr.strip() else ''))
    return '; '.join(sentences)


def located_by_key_path(problems):
    """Problems of a temporary stick: its file, line and column name nothing once it is removed; the key path stays."""
    return [dict((k, v) for k, v in p.items() if k not in ('file', 'line', 'column')) for p in problems]
