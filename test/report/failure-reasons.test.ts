import { describe, expect, it } from 'vitest';
import type { DeviceResult } from '../../src/apply/index.js';
import { ErrorCode } from '../../src/core/errors.js';
import { Severity } from '../../src/core/problem.js';
import { endOnBoard } from '../../src/agent/board-feed.js';
import { createJobBoard } from '../../src/agent/job-board.js';
import { Redactor } from '../../src/core/redact.js';
import { announcementFor } from '../../src/notify/index.js';
import { FailureClass, failureClassOf, invalidStickReason } from '../../src/report/failure-reasons.js';
import { concludeJob, resultText } from '../../src/report/index.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickHead, stickWithConfig } from '../support/stick-workspace.js';
import { applyFile } from '../apply/apply-helpers.js';

/**
 * One table from failure class to reason and on-site action: the result file, the status page's
 * banner and the notification say the same, per class, instead of "read usb.log" for everything.
 */

const failed = (extra: Partial<DeviceResult>): DeviceResult => ({
  device: 'mp1',
  url: 'https://192.0.2.10',
  outcome: 'failed',
  message: 'it failed',
  steps: [],
  warnings: [],
  durationMs: 1,
  ...extra,
});

describe('the failure table', () => {
  it('classes a failure by its code and facts', () => {
    expect(failureClassOf(failed({ code: ErrorCode.DeviceUnreachable }))).toBe(FailureClass.Unreachable);
    expect(failureClassOf(failed({ code: ErrorCode.DeviceNotAnswering }))).toBe(FailureClass.Unreachable);
    expect(failureClassOf(failed({ code: ErrorCode.DevicePinMismatch }))).toBe(FailureClass.TlsIdentity);
    expect(failureClassOf(failed({ code: ErrorCode.DevicePinMismatch, deviceLost: true }))).toBe(
      FailureClass.TlsIdentity,
    );
    expect(failureClassOf(failed({ code: ErrorCode.DeviceAuth }))).toBe(FailureClass.Credentials);
    expect(failureClassOf(failed({ code: ErrorCode.DeviceRefused }))).toBe(FailureClass.DeviceRefused);
    expect(failureClassOf(failed({ code: ErrorCode.DeviceTimeout, deviceLost: true }))).toBe(FailureClass.DeviceLost);
    expect(
      failureClassOf(
        failed({
          code: ErrorCode.VerificationFailed,
          dot1xRefused: ['eth1'],
          rollback: { outcome: 'restored', message: 'x' },
        }),
      ),
    ).toBe(FailureClass.Dot1xNotAuthorized);
    expect(
      failureClassOf(failed({ code: ErrorCode.VerificationFailed, rollback: { outcome: 'none', message: 'x' } })),
    ).toBe(FailureClass.WrongResult);
  });

  it('an invalid stick: its first three errors with their lines, then how many more usb.log has', () => {
    const problems = [1, 2, 3, 4, 5].map((line) => ({
      severity: Severity.Error,
      file: 'mpprov.yaml',
      line: line * 10,
      column: 3,
      path: `monitoring_points[0].k${line}`,
      message: `problem ${line}`,
    }));
    const warning = { ...problems[0]!, severity: Severity.Warning, line: 1, message: 'only a warning' };
    expect(invalidStickReason('mpprov.yaml', [warning, ...problems]).reason).toBe(
      'mpprov.yaml is invalid: line 10: monitoring_points[0].k1: problem 1; line 20: monitoring_points[0].k2: problem 2; line 30: monitoring_points[0].k3: problem 3; and 2 more in usb.log',
    );
  });
});

const { start } = useSimulators(PROFILE_DEVICE);

describe('a device that cannot be reached, end to end', () => {
  it('the result file, the banner and the notification name the cable, the port, the address and what answers', async () => {
    const device = await start();
    const file = stickWithConfig(stickHead(device, '    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n'));
    await device.close();
    const { result } = await applyFile(file);
    expect(result.devices[0]?.code).toBe(ErrorCode.DeviceUnreachable);
    const conclusion = concludeJob({ result, configName: 'mpprov.yaml', stopped: false });
    const action = `Check that the MP is powered and its link LED is on, that the laptop's cable is in the MP's management port (the port whose address the stick names), that the laptop has an address in that network, and that ${device.url} is the MP's address (open it in a browser: does anything answer there?).`;
    expect(conclusion.advice).toBe(`What to do: mp1: ${result.devices[0]?.message}. ${action}`);

    const text = resultText({
      conclusion,
      jobId: 'j1',
      finished: new Date(),
      label: 'MPSTICK',
      configName: 'mpprov.yaml',
    });
    expect(text).toContain(action);
    expect(text).not.toContain('read usb.log on this stick');

    const board = createJobBoard({ redactor: new Redactor(), version: '0', hostname: 'laptop' });
    board.start('j1', {
      kind: 'stick',
      label: 'MPSTICK',
      location: '/media/MPSTICK',
      config: 'mpprov.yaml',
      started: new Date(),
      stage: 'x',
    });
    board.expect('j1', [{ name: 'mp1', url: device.url }]);
    endOnBoard({ id: 'j1', marker: { stage: '' } }, board, {
      kind: 'stick',
      label: 'MPSTICK',
      configName: 'mpprov.yaml',
      conclusion,
      finished: new Date(),
      localLog: '/x.log',
      release: { kind: 'released', how: 'fusermount -u' },
    });
    const job = board.snapshot().jobs[0]!;
    expect(job.banner).toBe('FAILED');
    expect(job.advice).toContain(action);
    expect(announcementFor(job).body).toContain('cannot reach');
  });
});
