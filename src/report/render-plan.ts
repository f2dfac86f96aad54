import { visibleJson, visibleText } from '../core/visible-text.js';
import { describeStep, type Plan, type StanzaChange } from '../plan/index.js';

/**
 * `mpprov plan`'s text: per device, the stanza diff (secrets only as "(changed)" or
 * "(unchanged)") and the ordered steps apply would run. Names and values come from the stick and
 * the device: each line is escaped (visibleText), so one line of text is one line on the terminal.
 */
export function renderPlan(plan: Plan): string {
  const lines: string[] = [];
  const changed = plan.stanzas.filter((s) => s.action !== 'unchanged');
  const restarts = plan.steps.filter((s) => s.kind === 'restart-networking').length;
  lines.push(
    `${plan.device.name} (${plan.device.url}): ${plan.hasChanges ? `${plan.steps.length} step(s), ${restarts} networking restart(s)` : 'no change, no restart'}`,
  );
  if (plan.managementInterface !== undefined) lines.push(`  reached through ${plan.managementInterface}`);
  for (const refusal of plan.refusals) lines.push(`  REFUSED: ${refusal.message}`);
  for (const stanza of changed) lines.push(...renderStanzaChange(stanza));
  if (plan.steps.length > 0) {
    lines.push('  steps:');
    plan.steps.forEach((step, i) => lines.push(`    ${i + 1}. ${describeStep(step)}`));
  }
  return lines.map(visibleText).join('\n');
}

const MARK = { create: '+', update: '~', delete: '-', unchanged: '=' } as const;

function renderStanzaChange(stanza: StanzaChange): string[] {
  const lines = [`  ${MARK[stanza.action]} ${stanza.name} ${stanza.family} (${stanza.action})`];
  for (const change of stanza.changes) {
    if (change.secret) {
      lines.push(`      ${change.field}: ${change.to === undefined ? '(removed)' : '(changed)'}`);
    } else if (stanza.action === 'create') {
      lines.push(`      ${change.field}: ${show(change.to)}`);
    } else {
      lines.push(`      ${change.field}: ${show(change.from)} -> ${show(change.to)}`);
    }
  }
  for (const field of stanza.unchangedSecrets) lines.push(`      ${field}: (unchanged)`);
  return lines;
}

function show(value: unknown): string {
  return value === undefined ? '(none)' : visibleJson(JSON.stringify(value));
}
