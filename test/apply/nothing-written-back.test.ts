import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createEventFormatter, deviceWords } from '../../src/report/job-log-format.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickHead, stickWithConfig, testAgentConfig } from '../support/stick-workspace.js';
import { usePeapPort } from '../support/switch-ports.js';
import { applyFile } from './apply-helpers.js';

/**
 * A wrong active configuration where every stanza the run changed held an 802.1X password before
 * it: the device never returns one, so no request can put anything back. The words say exactly
 * that ("nothing was written back"), never "rolled back", and each sentence is said once.
 */

const peapPort = usePeapPort();
const { start } = useSimulators(PROFILE_DEVICE);

const eth1 = (nameserver?: string) => `    interfaces:
      eth1:
        ipv4: { method: dhcp${nameserver === undefined ? '' : `, nameservers: [${nameserver}]`} }
        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "example-peap-password", ca_cert: certs/radius-ca.pem }
`;

describe('a wrong result that nothing could be written back for', () => {
  it('says "nothing was written back", sends no write after the failure, and says each sentence once', async () => {
    const device = await start({ switchPorts: { eth1: peapPort.profile } });
    const agent = testAgentConfig();
    const file = stickWithConfig(stickHead(device, eth1()));
    expect((await applyFile(file, { agent })).result.devices[0]?.message).toBe(
      'applied and verified: 1 stanza(s) added',
    );

    writeFileSync(file, stickHead(device, eth1('198.51.100.53')));
    device.setFaults(['drop-field=dns_nameservers,times=1']);
    const before = device.requests().length;
    const { result, events } = await applyFile(file, { agent });
    const mp = result.devices[0];
    expect(mp?.outcome).toBe('failed');
    expect(mp?.rollback?.outcome).toBe('none');
    const kept =
      'eth1 inet keeps the NEW settings from this stick (the device does not return the previous 802.1X password, so it could not be restored): ' +
      'check that the switch port accepts them';
    expect(mp?.rollback?.message).toBe(`nothing was written back: ${kept}`);
    expect(mp?.message).not.toMatch(/rolled back|rolling back/);

    // The device's log: after the restart that activated the wrong result, only reads.
    const run = device.requests().slice(before);
    const restart = run.findIndex((r) => r.method === 'PUT' && r.path.startsWith('/api/v1/service/networking'));
    expect(restart).toBeGreaterThanOrEqual(0);
    expect(run.slice(restart + 1).filter((r) => r.method !== 'GET')).toEqual([]);

    // usb.log's lines for these events, as the daemon writes them: no roll-back announced, the
    // sentence once, and the result file's words.
    const format = createEventFormatter();
    const text = events
      .flatMap((event) => format(event))
      .map((line) => line.text)
      .join('\n');
    expect(text).not.toMatch(/ROLLBACK|rolled back|rolling back/);
    expect(text.split('nothing was written back').length - 1).toBe(1);
    expect(text.split(kept).length - 1).toBe(1);
    expect(deviceWords(mp!, false)).toBe('mp1: failed, wrong result, nothing was written back');
  }, 60_000);
});
