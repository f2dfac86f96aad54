import { expect } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { leakedForms } from '../support/secret-forms.js';
import { activeInterfaces, controlState, faultMet, leftPending, waitForPhase } from './device-end-state.js';
import type { Expected, Fault, ProfileTraits } from './matrix.js';

/** The assertions every cell shares, whichever runner ran it: the device's sentence and its end state. */

const ROLLED_BACK = 'rolled back: the device runs its previous configuration again (verified)';

/** The device's sentence: its family, and a roll-back (verified) exactly when one is expected. */
export function expectSentence(message: string | undefined, expected: Expected, context: string): void {
  expect(message, context).toMatch(expected.message);
  expect(message?.includes(ROLLED_BACK), `${context}\nroll-back verified in the sentence`).toBe(expected.rolledBack);
}

/**
 * What the control port shows once the run is over: restarts, phase, what is active, nothing
 * pending unless `message` names it, and whether the fault was met at all.
 */
export async function expectDeviceEnd(
  sim: SimulatorHandle,
  fault: Fault,
  profile: ProfileTraits,
  expected: Expected,
  message: string,
  context: string,
): Promise<void> {
  const end = expected.device;
  const state = fault.settles === true ? await waitForPhase(sim, end.phase) : await controlState(sim);
  const where = `${context}\ndevice end state: ${JSON.stringify({ phase: state.phase, restarts: state.restarts, active: state.interfaces.active, pending: state.interfaces.pending, acl: state.acl, faults: state.faults })}`;
  expect(state.phase, where).toBe(end.phase);
  expect(state.restarts, where).toBe(end.restarts);
  if (end.active === 'initial') {
    expect(activeInterfaces(state), where).toEqual(['eth0']);
    expect(state.acl, where).toEqual([]);
  } else {
    expect(activeInterfaces(state), where).toEqual(['eth0', ...profile.interfaces].sort());
    expect(state.acl, where).toHaveLength(profile.aclRules);
  }
  const pending = leftPending(state);
  if (end.pending === 'none') {
    expect(pending, where).toEqual([]);
  } else {
    // Left pending, and said: every such stanza is named in the sentence.
    expect(pending.length, where).toBeGreaterThan(0);
    for (const stanza of pending) expect(message, `${where}\n${stanza} is pending`).toContain(stanza);
  }
  if (fault.device !== undefined)
    expect(faultMet(state, fault.device), `${where}\nthe fault was met`).toBe(end.faultMet);
}

/** No secret in any form, and no private key, in what the run wrote. */
export function expectNoSecrets(texts: readonly string[], secrets: readonly string[], context: string): void {
  const all = texts.join('\n');
  expect(leakedForms(all, secrets), context).toEqual([]);
  expect(all.includes('PRIVATE KEY'), `${context}\na private key in the output`).toBe(false);
}
