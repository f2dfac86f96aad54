#!/usr/bin/env node
// The newcomer's tour: start a simulated Monitoring Point, provision it from a profile exactly as a
// stick would be provisioned, show the steps, the result and what the device now runs, then run
// the same stick again to show that an unchanged stick changes nothing.
// Run with `npm run demo` (it builds first). Everything stays on loopback and in a temp folder.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const { startSimulator } = await import(join(root, 'dist/simulator/index.js'));
const profile = process.argv[2] ?? 'vlan-dot1x.yaml';

const say = (text) => process.stdout.write(`\n=== ${text}\n`);
const cli = (args) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'dist/cli/main.js'), ...args], { stdio: 'inherit' });
    child.on('close', (code) => resolve(code));
  });

say('1. Start a simulated Monitoring Point (m50: eth0, eth1, wlan0) on loopback');
const device = await startSimulator({
  password: readFileSync(join(root, 'profiles/secrets/admin.pw'), 'utf8').trim(),
  certificatePem: readFileSync(join(root, 'profiles/certs/device-https-cert.pem'), 'utf8'),
  privateKeyPem: readFileSync(join(root, 'profiles/certs/device-https-key.pem'), 'utf8'),
  restartMs: 1500,
});
console.log(`device ${device.url}, certificate SHA-256 ${device.fingerprintSha256}`);

try {
  say(`2. Prepare a stick from profiles/${profile}, pointed at the simulated device`);
  const stick = mkdtempSync(join(tmpdir(), 'mpprov-demo-stick-'));
  cpSync(join(root, 'profiles'), stick, { recursive: true });
  const file = join(stick, 'mpprov.yaml');
  writeFileSync(file, readFileSync(join(stick, profile), 'utf8').replace('https://192.0.2.10', device.url));
  console.log(readFileSync(file, 'utf8'));
  const state = mkdtempSync(join(tmpdir(), 'mpprov-demo-state-'));
  const engine = ['--agent-config', join(stick, 'no-agent.yaml'), '--state-dir', state];

  say('3. mpprov validate: the file and every certificate it names');
  await cli(['validate', file]);

  say('4. mpprov plan: what would change (secrets only as "(changed)")');
  await cli(['plan', file, ...engine]);

  say('5. mpprov apply: upload, post, restart networking, ride out the outage, verify');
  const code = await cli(['apply', file, ...engine]);
  console.log(`exit status ${code}`);

  say('6. What the device runs now (its active view)');
  for (const iface of device.state().interfaces.active) console.log(JSON.stringify(iface));

  say('7. The same stick again: nothing to change, no restart');
  await cli(['apply', file, ...engine]);
  const writes = device.requests().filter((r) => r.method !== 'GET').length;
  console.log(`networking restarts on the device: ${device.state().restarts}; write requests in total: ${writes}`);
} finally {
  await device.close();
}
