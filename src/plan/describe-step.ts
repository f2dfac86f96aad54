import type { AclRule } from '../admin-api/index.js';
import type { Step } from './plan-types.js';

/** One line per step, for progress displays, usb.log and `mpprov plan`. Never names a secret value. */
export function describeStep(step: Step): string {
  switch (step.kind) {
    case 'upload-files':
      return `upload ${step.files.length} file(s): ${step.files.map((f) => `${f.filename} (${f.slot}, from ${f.source})`).join(', ')}`;
    case 'delete-stanza':
      return `DELETE ${step.name} ${step.family} (${step.reason})`;
    case 'restore-stanza':
      return `POST ${step.name} ${step.family} back to its active settings (${step.reason})`;
    case 'post-stanza':
      return `POST ${step.stanza.name} ${step.stanza.family} (${step.action})`;
    case 'verify-pending':
      return `check the pending view holds ${step.expected.length} stanza change(s)`;
    case 'restart-networking':
      return `restart networking (${step.reason})`;
    case 'verify-active':
      return `check the active view after the restart (${step.expected.length} stanza(s))`;
    case 'add-acl-rule':
      return `add ACL rule ${describeRule(step.rule)}`;
    case 'remove-acl-rule':
      return `remove ACL rule ${describeRule(step.rule)}`;
  }
}

function describeRule(rule: AclRule): string {
  const ports = rule.from_port === rule.to_port ? `${rule.from_port}` : `${rule.from_port}-${rule.to_port}`;
  return `permit ${rule.protocol}/${ports} from ${rule.source_addresses.join(',')} on ${rule.interfaces.join(',')}`;
}
