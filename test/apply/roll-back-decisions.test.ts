import { describe, expect, it } from 'vitest';
import { chooseRecovery, stanzasTouched, type FailedRun } from '../../src/apply/choose-recovery.js';
import { Dot1xNotAuthorizedError, dot1xWatches } from '../../src/apply/dot1x-authorization.js';
import { notRestored, restoreActions, restoreOrder } from '../../src/apply/restore-actions.js';
import { DeviceLostError, RestartSkippedError } from '../../src/apply/restart-and-wait.js';
import { stepFailure, type StepFailure } from '../../src/apply/step-failure.js';
import { DeviceRefusedError } from '../../src/client/index.js';
import { ErrorCode, MpprovError, VerificationError } from '../../src/core/errors.js';
import type { DesiredStanza, Step } from '../../src/plan/index.js';
import { deviceView } from '../plan/device-view.js';

/**
 * What a failed run does, decided without a device: which error means what (stepFailure), whether
 * to roll back, take back or leave alone (chooseRecovery), and per stanza how to put it back
 * (restoreActions, notRestored).
 */

const eth1: DesiredStanza = { name: 'eth1', family: 'inet', fields: { method: 'dhcp' }, secrets: {} };
const vlan: DesiredStanza = {
  name: 'eth1.100',
  family: 'inet',
  fields: { method: 'dhcp', vlan_raw_device: 'eth1' },
  secrets: {},
};
const postVlan: Step = { kind: 'post-stanza', stanza: vlan, action: 'create' };
const verifyPending: Step = { kind: 'verify-pending', expected: [] };
const restart: Step = { kind: 'restart-networking', reason: '3 stanza change(s)', expected: [] };
const verifyActive: Step = { kind: 'verify-active', expected: [] };
const STEPS: Step[] = [
  { kind: 'upload-files', files: [] },
  { kind: 'delete-stanza', name: 'eth2', family: 'inet6', reason: 'not in the file for this interface' },
  { kind: 'post-stanza', stanza: eth1, action: 'update' },
  postVlan,
  verifyPending,
  restart,
  verifyActive,
];

const failure = (extra: Partial<StepFailure> = {}): StepFailure => ({
  message: 'x',
  code: ErrorCode.ApplyFailed,
  deviceLost: false,
  wrongResult: false,
  ...extra,
});
const run = (extra: Partial<FailedRun>): FailedRun => ({
  failure: failure(),
  steps: STEPS,
  failedIndex: 6,
  restarted: true,
  rollback: true,
  ...extra,
});

describe('stepFailure', () => {
  const post = postVlan;

  it('makes a wrong active configuration the one case for a roll-back', () => {
    expect(
      stepFailure(
        new VerificationError('active', ['eth1 inet: address is 192.0.2.9, expected 192.0.2.20']),
        verifyActive,
        'check',
        20_000,
      ),
    ).toEqual({
      message:
        'after the restart the device runs a different configuration than requested: eth1 inet: address is 192.0.2.9, expected 192.0.2.20',
      code: ErrorCode.ApplyFailed,
      deviceLost: false,
      wrongResult: true,
    });
    expect(
      stepFailure(new VerificationError('pending', ['eth1 inet is missing']), verifyPending, 'check', 20_000),
    ).toEqual({
      message:
        "the device's pending configuration differs from what was posted, so networking was not restarted: eth1 inet is missing",
      code: ErrorCode.ApplyFailed,
      deviceLost: false,
      wrongResult: false,
    });
    expect(
      stepFailure(new VerificationError('never-active', ['eth1 inet is missing']), verifyActive, 'check', 20_000),
    ).toMatchObject({
      message:
        'the networking restart did not make the changes active (they are still pending): eth1 inet is missing; a reboot of the MP may be needed',
      wrongResult: false,
    });
  });

  it('recognises a verification by its class and code, not by a name string', () => {
    const error = new VerificationError('active', ['p']);
    expect(error).toBeInstanceOf(MpprovError);
    expect(error.code).toBe('MPPROV_VERIFICATION_FAILED');
    expect(error.message).toBe('after the restart the device runs a different configuration than requested: p');
    // The old recognition: any Error named VerificationError. It must not count any more.
    const impostor = Object.assign(new Error('p'), { name: 'VerificationError', view: 'active', problems: ['p'] });
    expect(stepFailure(impostor, post, 'POST eth1.100 inet (create)', 20_000)).toEqual({
      message: 'POST eth1.100 inet (create) failed: p',
      code: ErrorCode.Internal,
      deviceLost: false,
      wrongResult: false,
    });
  });

  it('says a lost device is lost, where to look, and that shutting down skipped the restart', () => {
    const lost = stepFailure(new DeviceLostError(20_000, new Error('refused')), restart, 'restart', 20_000);
    expect(lost).toMatchObject({ code: ErrorCode.DeviceUnreachable, deviceLost: true, wrongResult: false });
    expect(lost.message).toMatch(
      /^the device did not answer again within 20 s after the networking restart \(no answer for 20 s\); on site, check the link/,
    );
    expect(stepFailure(new RestartSkippedError(), restart, 'restart', 20_000)).toEqual({
      message: 'the agent is shutting down: networking was not restarted',
      code: ErrorCode.ApplyFailed,
      deviceLost: false,
      wrongResult: false,
    });
  });

  it('makes a port that did not authorize 802.1X a wrong result, naming the interfaces for the roll-back report', () => {
    const refused = new Dot1xNotAuthorizedError([{ name: 'eth1', families: ['inet'], facts: undefined }], 20_000);
    expect(stepFailure(refused, verifyActive, 'check', 20_000)).toEqual({
      message:
        'the switch port did not authorize the 802.1X of eth1: eth1 inet got no address within 20 s after the restart (an interface whose 802.1X is refused carries no traffic)',
      code: ErrorCode.ApplyFailed,
      deviceLost: false,
      wrongResult: true,
      dot1xRefused: ['eth1'],
    });
    expect(chooseRecovery(run({ failure: stepFailure(refused, verifyActive, 'check', 20_000) }))).toEqual({
      kind: 'roll-back',
    });
  });

  it('keeps a device error code, and counts any failure of the active check as a wrong result', () => {
    const refused = new DeviceRefusedError({
      url: 'https://192.0.2.10',
      method: 'POST',
      path: '/interface/',
      status: 400,
      deviceMessage: 'no',
    });
    expect(stepFailure(refused, post, 'POST eth1.100 inet (create)', 20_000)).toEqual({
      message: `POST eth1.100 inet (create) failed: ${refused.message}`,
      code: ErrorCode.DeviceRefused,
      deviceLost: false,
      wrongResult: false,
    });
    expect(stepFailure(new Error('socket hang up'), verifyActive, 'check', 20_000).wrongResult).toBe(true);
  });
});

describe('chooseRecovery', () => {
  it('rolls back a wrong result after the restart, unless roll-back is off', () => {
    expect(chooseRecovery(run({ failure: failure({ wrongResult: true }) }))).toEqual({ kind: 'roll-back' });
    expect(chooseRecovery(run({ failure: failure({ wrongResult: true }), rollback: false }))).toEqual({ kind: 'none' });
  });

  it('leaves a lost device alone, and after the restart leaves nothing pending to take back', () => {
    expect(chooseRecovery(run({ failure: failure({ deviceLost: true, wrongResult: true }) }))).toEqual({
      kind: 'none',
    });
    expect(chooseRecovery(run({ failure: failure({ wrongResult: false }) }))).toEqual({ kind: 'none' });
  });

  it('before the restart takes back what was posted, the failed step only when the device may have taken it', () => {
    const refused = run({ failure: failure({ code: ErrorCode.DeviceRefused }), failedIndex: 3, restarted: false });
    expect(chooseRecovery(refused)).toEqual({
      kind: 'take-back',
      stanzas: [
        { name: 'eth2', family: 'inet6' },
        { name: 'eth1', family: 'inet' },
      ],
    });
    const dropped = run({ failure: failure({ code: ErrorCode.DeviceUnreachable }), failedIndex: 3, restarted: false });
    expect(chooseRecovery(dropped)).toEqual({
      kind: 'take-back',
      stanzas: [
        { name: 'eth2', family: 'inet6' },
        { name: 'eth1', family: 'inet' },
        { name: 'eth1.100', family: 'inet' },
      ],
    });
    // A failed upload (first step) has posted nothing.
    expect(
      chooseRecovery(
        run({ failure: failure({ code: ErrorCode.DeviceUnreachable }), failedIndex: 0, restarted: false }),
      ),
    ).toEqual({ kind: 'none' });
  });

  it('counts restore steps as touching their stanza too', () => {
    expect(
      stanzasTouched([
        { kind: 'restore-stanza', name: 'eth3', family: 'inet', fields: { method: 'dhcp' }, reason: 'r' },
        { kind: 'verify-pending', expected: [] },
      ]),
    ).toEqual([{ name: 'eth3', family: 'inet' }]);
  });
});

describe('restoreActions and notRestored', () => {
  const before = deviceView([
    {
      name: 'eth1',
      families: {
        inet: {
          method: 'static',
          address: '192.0.2.20',
          netmask: '255.255.255.0',
          x_vendor_tuning: 'keep',
          in_use: { address: '192.0.2.20' },
        },
      },
    },
    {
      name: 'eth2',
      families: {
        inet: { method: 'dhcp', wpa_key_mgmt: 'IEEE8021X', wpa_eap: 'MD5', wpa_identity: 'mp', wpa_password_set: true },
      },
    },
  ]);
  const actions = restoreActions(before, [
    { name: 'eth1', family: 'inet' },
    { name: 'eth2', family: 'inet' },
    { name: 'eth3', family: 'inet' },
  ]);

  it('re-posts the old settings (unknown device fields kept, view-only ones dropped), gives up on secrets, deletes what is new', () => {
    expect(actions).toEqual([
      {
        kind: 'restore',
        name: 'eth1',
        family: 'inet',
        fields: { method: 'static', address: '192.0.2.20', netmask: '255.255.255.0', x_vendor_tuning: 'keep' },
      },
      { kind: 'unrestorable', name: 'eth2', family: 'inet', secrets: ['wpa_password'] },
      { kind: 'delete', name: 'eth3', family: 'inet' },
    ]);
  });

  it('checks the restored stanzas only, and by configuration, not spelling', () => {
    const back = deviceView([
      {
        name: 'eth1',
        families: {
          inet: {
            method: 'static',
            address: '192.0.2.20',
            netmask: '24',
            x_vendor_tuning: 'keep',
            in_use: { address: '192.0.2.20' },
          },
        },
      },
      { name: 'eth2', families: { inet: { method: 'dhcp' } } },
    ]);
    expect(notRestored(back, actions)).toEqual([]);
    const notBack = deviceView([
      { name: 'eth1', families: { inet: { method: 'dhcp' } } },
      { name: 'eth3', families: { inet: { method: 'dhcp' } } },
    ]);
    expect(notRestored(notBack, actions)).toEqual(['eth1 inet', 'eth3 inet']);
  });
});

describe('restoreOrder', () => {
  it('puts a VLAN losing its 802.1X, or going, before its parent; a parent regaining 802.1X before its VLAN', () => {
    const before = deviceView([
      { name: 'eth1', families: { inet: { method: 'dhcp' } } },
      { name: 'eth1.100', families: { inet: { method: 'dhcp', vlan_raw_device: 'eth1' } } },
      {
        name: 'eth1.200',
        families: {
          inet: {
            method: 'dhcp',
            vlan_raw_device: 'eth1',
            wpa_key_mgmt: 'IEEE8021X',
            wpa_eap: 'TLS',
            wpa_identity: 'v',
          },
        },
      },
    ]);
    // This run had turned 802.1X on for eth1 and eth1.100 and created eth1.300; eth1.200 changed otherwise.
    const actions = restoreActions(before, [
      { name: 'eth1', family: 'inet' },
      { name: 'eth1.200', family: 'inet' },
      { name: 'eth1.300', family: 'inet' },
      { name: 'eth1.100', family: 'inet' },
    ]);
    expect(restoreOrder(actions).map((a) => `${a.kind} ${a.name}`)).toEqual([
      'restore eth1.100',
      'delete eth1.300',
      'restore eth1',
      'restore eth1.200',
    ]);
  });
});

describe('dot1xWatches', () => {
  const want = (name: string, family: 'inet' | 'inet6', fields: Record<string, unknown>) => ({
    name,
    family,
    stanza: { name, family, fields, secrets: {} },
  });
  const DOT1X = { wpa_key_mgmt: 'IEEE8021X', wpa_eap: 'MD5', wpa_identity: 'mp' };

  it('watches interfaces with an 802.1X dhcp or SLAAC stanza; static-only ones are not visible', () => {
    expect(
      dot1xWatches([
        want('eth1', 'inet', { method: 'static', address: '192.0.2.5', netmask: '255.255.255.0', ...DOT1X }),
        want('eth1', 'inet6', { method: 'auto', ...DOT1X }),
        want('eth2', 'inet', { method: 'static', address: '192.0.2.6', netmask: '255.255.255.0', ...DOT1X }),
        want('eth2', 'inet6', { method: 'manual', ...DOT1X }),
        want('eth3', 'inet', { method: 'dhcp' }),
        { name: 'eth4', family: 'inet', stanza: null },
      ]),
    ).toEqual({
      watches: [{ name: 'eth1', families: ['inet6'], facts: undefined }],
      notVisible: ['eth2 inet', 'eth2 inet6'],
    });
  });
});
