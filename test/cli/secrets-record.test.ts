import { execFile, execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { type CliResult, runCli } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import {
  PROFILE_ADMIN_PASSWORD,
  PROFILE_DEVICE,
  profilesDir,
  stateDir,
  stickFromProfile,
} from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';
import { worldReadableCli } from '../support/world-readable-cli.js';

/**
 * A secrets record shared by several installations: real `mpprov` child
 * processes against a simulated device, each "machine" a state directory of its own, the record in
 * a folder of the team's. The key moves only by `secrets-record export|import`.
 */

const { start } = useSimulators(PROFILE_DEVICE);
const PEAP_PASSWORD = readFileSync(join(profilesDir, 'secrets/mp01-peap.pw'), 'utf8').trim();
const SECRETS = [PROFILE_ADMIN_PASSWORD, PEAP_PASSWORD];
const NO_AGENT = ['--agent-config', '/nonexistent/agent.yaml'];

const machine = (state: string, record: string): string[] => [
  ...NO_AGENT,
  '--state-dir',
  state,
  '--secrets-record',
  record,
];
const keyText = (state: string): string => readFileSync(join(state, 'secrets-record.key'), 'utf8').trim();
const outputs = (...results: CliResult[]): string => results.map((r) => `${r.stdout}\n${r.stderr}`).join('\n');
const restarts = (device: SimulatorHandle): number =>
  device.requests().filter((r) => r.method === 'PUT' && r.path.startsWith('/api/v1/service/networking')).length;

/** Every text this test can see: outputs, the record, and the key files' bytes in their forms. */
function expectNoSecretNoKey(text: string, keys: readonly string[]): void {
  expect(keys.length).toBeGreaterThan(0);
  for (const secret of SECRETS) expect(text).not.toContain(secret);
  for (const key of keys) {
    expect(text).not.toContain(key);
    expect(text).not.toContain(Buffer.from(key, 'base64').toString('hex'));
  }
}

describe('a secrets record shared by two installations', () => {
  it(
    'with the imported key the second machine plans wpa_password (unchanged) and applies with no restart; without it, one warning and (changed)',
    { timeout: 90_000 },
    async () => {
      const device = await start();
      const file = stickFromProfile('peap-mschapv2.yaml', device.url);
      const team = tempFolder('team');
      const record = join(team, 'secrets-record.json');
      const [a, b, c] = [stateDir(), stateDir(), stateDir()];

      const first = await runCli(['apply', file, ...machine(a, record)]);
      expect(first.stdout).toContain('RESULT: CHANGED');
      expect(first.stderr).toBe('');
      expect(existsSync(join(a, 'secrets-record.json'))).toBe(false);
      expect(statSync(record).mode & 0o777).toBe(0o600);

      // Machine B takes A's key on purpose, and names the shared record in its agent.yaml (relative to it).
      const keyFile = join(tempFolder('carry'), 'mpprov.key');
      const exported = await runCli(['secrets-record', 'export', '--key-out', keyFile, ...NO_AGENT, '--state-dir', a]);
      expect(exported.code).toBe(0);
      expect(exported.stdout).toMatch(
        new RegExp(`^wrote the secrets-record key \\(key id [0-9a-f]{16}\\) to ${keyFile}, mode 0600`),
      );
      const imported = await runCli(['secrets-record', 'import', '--key-in', keyFile, ...NO_AGENT, '--state-dir', b]);
      expect(imported.code).toBe(0);
      expect(imported.stdout).toContain(`imported the secrets-record key (key id `);
      expect(keyText(b)).toBe(keyText(a));
      expect(statSync(join(b, 'secrets-record.key')).mode & 0o777).toBe(0o600);
      const agentYaml = join(team, 'agent.yaml');
      writeFileSync(agentYaml, `state_dir: ${b}\nsecrets_record: secrets-record.json\n`);

      device.clearRequests();
      const planB = await runCli(['plan', file, '--agent-config', agentYaml]);
      expect(planB.stderr).toBe('');
      expect(planB.code).toBe(0);
      expect(planB.stdout).toContain('no change, no restart');
      const applyB = await runCli(['apply', file, '--agent-config', agentYaml]);
      expect(applyB.code).toBe(0);
      expect(applyB.stdout).toContain('RESULT: NO CHANGE (branch-12-mp1 no-change)');
      expect(restarts(device)).toBe(0);
      expect(device.requests().filter((r) => r.method !== 'GET')).toEqual([]);

      // Machine C never imported the key: its own key hashes differently, and it says so once.
      const planC = await runCli(['plan', file, ...machine(c, record)]);
      expect(planC.code).toBe(2);
      const warning = `WARNING: the secrets record ${record} was made with another key; every secret counts as changed`;
      expect(planC.stderr.startsWith(warning)).toBe(true);
      expect(planC.stderr.split('\n').filter((l) => l !== '')).toHaveLength(1);
      expect(planC.stdout).toContain('      wpa_password: (changed)');
      expect(planC.stdout).not.toContain('WARNING');

      const everything = [
        outputs(first, exported, imported, planB, applyB, planC),
        readFileSync(record, 'utf8'),
        readFileSync(agentYaml, 'utf8'),
      ].join('\n');
      expectNoSecretNoKey(everything, [keyText(a), keyText(c)]);
      // The record names its key by id only; the id is not a piece of the key.
      const stored = JSON.parse(readFileSync(record, 'utf8')) as {
        version: number;
        devices: Record<string, { key_id: string }>;
      };
      expect(stored.version).toBe(3);
      expect(Object.values(stored.devices).map((d) => d.key_id)).toEqual([expect.stringMatching(/^[0-9a-f]{16}$/)]);
    },
  );

  it(
    'two runners applying different devices at once to one record both keep their entries',
    { timeout: 90_000 },
    async () => {
      const [one, two] = [await start(), await start()];
      const record = join(tempFolder('team'), 'secrets-record.json');
      const [a, b] = [stateDir(), stateDir()];
      const keyFile = join(tempFolder('carry'), 'mpprov.key');
      expect(
        (await runCli(['secrets-record', 'export', '--key-out', keyFile, ...NO_AGENT, '--state-dir', a])).code,
      ).toBe(0);
      expect(
        (await runCli(['secrets-record', 'import', '--key-in', keyFile, ...NO_AGENT, '--state-dir', b])).code,
      ).toBe(0);
      const [fileOne, fileTwo] = [
        stickFromProfile('peap-mschapv2.yaml', one.url),
        stickFromProfile('peap-mschapv2.yaml', two.url),
      ];
      const [runOne, runTwo] = await Promise.all([
        runCli(['apply', fileOne, ...machine(a, record)]),
        runCli(['apply', fileTwo, ...machine(b, record)]),
      ]);
      expect(runOne.stdout).toContain('RESULT: CHANGED');
      expect(runTwo.stdout).toContain('RESULT: CHANGED');
      const devices = Object.keys((JSON.parse(readFileSync(record, 'utf8')) as { devices: object }).devices).sort();
      expect(devices).toEqual([one.url, two.url].sort());
      // Each runner now finds the other's device unchanged.
      expect((await runCli(['plan', fileTwo, ...machine(a, record)])).code).toBe(0);
      expect((await runCli(['plan', fileOne, ...machine(b, record)])).code).toBe(0);
      expect(readdirSync(dirname(record))).toEqual(['secrets-record.json']);
    },
  );
});

describe('mpprov secrets-record export and import', () => {
  it('export writes 0600, refuses to overwrite (or to follow a link), and never prints the key', async () => {
    const state = stateDir();
    const dir = tempFolder('carry');
    const out = join(dir, 'key');
    const first = await runCli(['secrets-record', 'export', '--key-out', out, ...NO_AGENT, '--state-dir', state]);
    expect(first.code).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const written = readFileSync(out, 'utf8');
    expect(written).toBe(`mpprov-secrets-record-key 1\n${keyText(state)}\n`);

    writeFileSync(join(dir, 'taken'), 'someone else\n');
    const again = await runCli([
      'secrets-record',
      'export',
      '--key-out',
      join(dir, 'taken'),
      ...NO_AGENT,
      '--state-dir',
      state,
    ]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(
      `${join(dir, 'taken')} exists already: mpprov never overwrites a key file (remove it, or name a new file)\n`,
    );
    expect(readFileSync(join(dir, 'taken'), 'utf8')).toBe('someone else\n');
    symlinkSync(join(dir, 'elsewhere'), join(dir, 'link'));
    const viaLink = await runCli([
      'secrets-record',
      'export',
      '--key-out',
      join(dir, 'link'),
      ...NO_AGENT,
      '--state-dir',
      state,
    ]);
    expect(viaLink.code).toBe(1);
    expect(existsSync(join(dir, 'elsewhere'))).toBe(false);
    // umask 0 must not widen the file either.
    const wide = join(dir, 'wide');
    execFileSync(
      'sh',
      [
        '-c',
        `umask 0 && exec "${process.execPath}" dist/cli/main.js secrets-record export --key-out "${wide}" --agent-config /nonexistent/agent.yaml --state-dir "${state}"`,
      ],
      { cwd: join(profilesDir, '..') },
    );
    expect(statSync(wide).mode & 0o777).toBe(0o600);
    expectNoSecretNoKey(outputs(first, again, viaLink), [keyText(state)]);
  });

  it('import refuses a malformed key in one sentence, and a different key without --replace', async () => {
    const dir = tempFolder('carry');
    const state = stateDir();
    const bad = [
      [
        'short',
        'mpprov-secrets-record-key 1\nAAAA\n',
        'it is not an mpprov secrets-record key (a key is 32 bytes in base64)',
      ],
      ['text', 'my-Team-Pass-99\n', 'it is not an mpprov secrets-record key (its key line is not base64)'],
      [
        'two-lines',
        'mpprov-secrets-record-key 1\nAAAA\nBBBB\n',
        'it is not an mpprov secrets-record key (expected the file `mpprov secrets-record export` writes)',
      ],
    ] as const;
    for (const [name, text] of bad) writeFileSync(join(dir, name), text);
    const results = await Promise.all(
      bad.map(([name]) =>
        runCli(['secrets-record', 'import', '--key-in', join(dir, name), ...NO_AGENT, '--state-dir', state]),
      ),
    );
    expect(results.map((r) => r.code)).toEqual([1, 1, 1]);
    expect(results.map((r) => r.stderr)).toEqual(
      bad.map(([name, , reason]) => `${join(dir, name)} is refused: ${reason}; nothing was imported\n`),
    );
    expect(outputs(...results)).not.toContain('my-Team-Pass-99');
    expect(existsSync(join(state, 'secrets-record.key'))).toBe(false);

    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const fromFifo = await runCli(['secrets-record', 'import', '--key-in', fifo, ...NO_AGENT, '--state-dir', state]);
    expect(fromFifo.stderr).toBe(`${fifo} cannot be read as a key file (not a regular file); nothing was imported\n`);

    const [x, y] = [stateDir(), stateDir()];
    const keyX = join(dir, 'x.key');
    expect((await runCli(['secrets-record', 'export', '--key-out', keyX, ...NO_AGENT, '--state-dir', x])).code).toBe(0);
    expect(
      (await runCli(['secrets-record', 'export', '--key-out', join(dir, 'y.key'), ...NO_AGENT, '--state-dir', y])).code,
    ).toBe(0);
    const refused = await runCli(['secrets-record', 'import', '--key-in', keyX, ...NO_AGENT, '--state-dir', y]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/holds another key \(key id [0-9a-f]{16}\); give --replace to use the imported one/);
    expect(keyText(y)).not.toBe(keyText(x));
    const replaced = await runCli([
      'secrets-record',
      'import',
      '--key-in',
      keyX,
      '--replace',
      ...NO_AGENT,
      '--state-dir',
      y,
    ]);
    expect(replaced.code).toBe(0);
    expect(keyText(y)).toBe(keyText(x));
    expectNoSecretNoKey(outputs(refused, replaced, fromFifo), [keyText(x)]);
  });
});

describe('a record that cannot be read', () => {
  const cases: [string, (record: string) => void, string][] = [
    ['corrupt JSON', (r) => writeFileSync(r, '{"version": 3, "devices": {'), 'it is not JSON'],
    [
      'the wrong shape',
      (r) => writeFileSync(r, '{"version": 3, "devices": {"https://x": {"key_id": "nothex", "stanzas": {}}}}'),
      'it is not an mpprov secrets record (unexpected content)',
    ],
    ['a FIFO', (r) => execFileSync('mkfifo', [r]), 'it is not a regular file (a FIFO)'],
    [
      'a symbolic link',
      (r) => {
        writeFileSync(`${r}.real`, '{"version": 3, "devices": {}}');
        symlinkSync(`${r}.real`, r);
      },
      'it is a symbolic link (give the path of the file itself)',
    ],
    ['a directory', (r) => mkdirSync(r), 'it is not a regular file (a directory)'],
    ['larger than the cap', (r) => execFileSync('truncate', ['-s', '40M', r]), 'it is larger than 32 MiB'],
  ];

  it.each(cases)(
    '%s: one warning, plan and apply go on treating every secret as changed, the file is left as it was',
    { timeout: 60_000 },
    async (_name, make, reason) => {
      const device = await start();
      const file = stickFromProfile('peap-mschapv2.yaml', device.url);
      const state = stateDir();
      const record = join(tempFolder('team'), 'secrets-record.json');
      make(record);
      const before = statSync(record, { throwIfNoEntry: false });
      const warning = `WARNING: the secrets record ${record} cannot be read: ${reason}; every secret counts as changed, and this run's are not recorded (fix or remove the file)\n`;

      const plan = await runCli(['plan', file, ...machine(state, record)]);
      expect(plan.code).toBe(2);
      expect(plan.stderr).toBe(warning);
      expect(plan.stdout).toContain('      wpa_password: (changed)');
      const apply = await runCli(['apply', file, ...machine(state, record)]);
      expect(apply.stderr).toBe(warning);
      expect(apply.stdout).toContain('RESULT: CHANGED');
      expect(apply.stdout).not.toContain('WARNING');
      // Left alone: a record mpprov cannot read may be someone else's, or of a newer format.
      const after = statSync(record);
      expect(after.ino).toBe(before?.ino);
      expect(after.mtimeMs).toBe(before?.mtimeMs);
      expect(lstatSync(record).isSymbolicLink()).toBe(_name === 'a symbolic link');
      expectNoSecretNoKey(outputs(plan, apply), [keyText(state)]);
    },
  );
});

describe('a record the user may not read (plan without sudo)', () => {
  it('is one warning, the up-front one, not a second "cannot be read"', { timeout: 60_000 }, async () => {
    if (process.getuid?.() !== 0)
      throw new Error('this test runs the CLI as "nobody": run it as root (the CI container is)');
    const device = await start();
    const file = stickFromProfile('peap-mschapv2.yaml', device.url);
    execFileSync('chmod', ['-R', 'a+rX', dirname(file)]);
    const state = stateDir();
    expect((await runCli(['apply', file, ...NO_AGENT, '--state-dir', state])).code).toBe(0);
    // The state directory stays root's 0700, as /var/lib/mpprov is.
    expect(statSync(state).mode & 0o777).toBe(0o700);
    const wrapper = join(tempFolder('as-nobody'), 'as-nobody.mjs');
    writeFileSync(
      wrapper,
      'process.setgid(65534);\nprocess.setuid(65534);\nprocess.argv.splice(1, 1);\nawait import(process.argv[1]);\n',
    );
    execFileSync('chmod', ['-R', 'a+rX', dirname(wrapper)]);
    const cli = worldReadableCli();
    const plan = await new Promise<CliResult>((resolve, reject) => {
      execFile(
        process.execPath,
        [wrapper, cli, 'plan', file, ...NO_AGENT, '--state-dir', state],
        { env: { ...process.env, NO_COLOR: '1' } },
        (error, stdout, stderr) => {
          if (error !== null && typeof error.code !== 'number')
            reject(new Error(`node did not run the wrapper: ${error.message}`, { cause: error }));
          else resolve({ code: error === null ? 0 : (error.code as number), signal: null, stdout, stderr });
        },
      );
    });
    expect(plan.code).toBe(2);
    const record = join(state, 'secrets-record.json');
    expect(plan.stderr).toBe(
      `WARNING: the secrets record ${record} cannot be written (EACCES): every run sends the secrets again and restarts networking; give a writable --state-dir (or state_dir in agent.yaml), or run as the agent does (sudo)\n`,
    );
    expect(plan.stdout).toContain('      wpa_password: (changed)');
  });
});
