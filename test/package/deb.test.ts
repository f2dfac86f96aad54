import { execFile } from 'node:child_process';
import { readdir, readFile, readlink, stat, writeFile } from 'node:fs/promises';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * The Debian package as a technician's laptop gets it: packaging/build-package.mjs (what
 * `npm run package` runs after tsc) builds the bundle and the .deb into a folder of this test, the
 * real dpkg installs it into a throwaway root (its maintainer scripts run with DPKG_ROOT, so
 * deb-systemd-helper enables the unit inside that root, never on this machine), and the installed
 * /usr/bin/mpprov runs with the system's node, far from any node_modules. lintian judges the
 * result. Every tool is required: a missing one fails with a sentence, never a skip.
 */

const run = promisify(execFile);
const packageJson = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
const debVersion = `${packageJson.version}-1`;

interface Built {
  out: string;
  deb: string;
  root: string;
  /** `mpprov describe-cli` of the bundle: every command and option the package must document. */
  tree: { commands: { name: string; commands: { name: string }[] }[] };
}

let built: Built;

async function need(tool: string, why: string): Promise<void> {
  await run('sh', ['-c', `command -v ${tool}`]).catch(() => {
    throw new Error(`${tool} is not installed: ${why} (.ci/run installs it)`);
  });
}

beforeAll(async () => {
  for (const [tool, why] of [
    ['dpkg-deb', 'it builds the package'],
    ['dpkg', 'it installs the package into a throwaway root'],
    ['deb-systemd-helper', 'the postinst enables the unit with it'],
    ['lintian', 'it checks the package'],
    ['man', 'it renders the man pages'],
    ['zsh', 'it loads the zsh completion'],
  ] as const) {
    await need(tool, why);
  }
  const out = tempFolder('package');
  await run(process.execPath, [join(repoRoot, 'packaging/build-package.mjs'), '--out', out], { cwd: repoRoot });
  const deb = join(out, `mpprov_${debVersion}_all.deb`);
  // A dpkg database of its own: nothing of this machine's is read or changed.
  const root = join(out, 'root');
  for (const folder of ['info', 'updates', 'triggers'])
    mkdirSync(join(root, 'var/lib/dpkg', folder), { recursive: true });
  writeFileSync(join(root, 'var/lib/dpkg/status'), '');
  // --force-depends: the throwaway root has no nodejs package; the installed CLI runs with this machine's node.
  await run('dpkg', [`--root=${root}`, '--force-script-chrootless', '--force-depends', '--install', deb], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  const { stdout } = await run(join(root, 'usr/bin/mpprov'), ['describe-cli'], { encoding: 'utf8' });
  built = { out, deb, root, tree: JSON.parse(stdout) as Built['tree'] };
}, 120_000);

describe('the .deb: control fields, files, modes, conffiles', () => {
  it('declares the package, its version and its dependencies', async () => {
    const field = async (name: string) =>
      (await run('dpkg-deb', ['--field', built.deb, name], { encoding: 'utf8' })).stdout.trim();
    expect(await field('Package')).toBe('mpprov');
    expect(await field('Version')).toBe(debVersion);
    expect(await field('Architecture')).toBe('all');
    expect(await field('Depends')).toBe(
      'nodejs (>= 20.19), util-linux (>= 2.38), openssh-client, init-system-helpers (>= 1.54~)',
    );
    expect(await field('Recommends')).toBe('udisks2, libnotify-bin');
  });

  it('holds every file with its mode, all owned by root', async () => {
    const { stdout } = await run('dpkg-deb', ['--contents', built.deb], { encoding: 'utf8' });
    const entries = stdout
      .trim()
      .split('\n')
      .map((line) => {
        const [mode = '', owner = '', , , , path = ''] = line.split(/\s+/);
        return { mode, owner, path: path.replace(/^\.\//, '/') };
      });
    expect(entries.length).toBeGreaterThan(10);
    expect(entries.filter((e) => e.owner !== 'root/root')).toEqual([]);
    const files = new Map(entries.filter((e) => e.mode.startsWith('-')).map((e) => [e.path, e.mode]));
    expect(Object.fromEntries(files)).toMatchObject({
      '/usr/bin/mpprov': '-rwxr-xr-x',
      '/usr/lib/mpprov/mpprov-app.cjs': '-rw-r--r--',
      '/usr/lib/mpprov/mpprov-apply.cjs': '-rw-r--r--',
      '/usr/lib/systemd/system/mpprov.service': '-rw-r--r--',
      '/usr/lib/systemd/system/mpprov-observe.service': '-rw-r--r--',
      '/etc/mpprov/agent.yaml': '-rw-------',
      '/usr/share/man/man1/mpprov.1.gz': '-rw-r--r--',
      '/usr/share/man/man5/mpprov.yaml.5.gz': '-rw-r--r--',
      '/usr/share/bash-completion/completions/mpprov': '-rw-r--r--',
      '/usr/share/zsh/vendor-completions/_mpprov': '-rw-r--r--',
      '/usr/share/doc/mpprov/copyright': '-rw-r--r--',
      '/usr/share/doc/mpprov/changelog.Debian.gz': '-rw-r--r--',
      '/usr/share/doc/mpprov/agent-config.md': '-rw-r--r--',
      '/usr/share/doc/mpprov/stick-format.md': '-rw-r--r--',
      '/usr/share/doc/mpprov/device-model.md': '-rw-r--r--',
    });
    // One file for the whole CLI: no node_modules, no dist/ tree.
    expect([...files.keys()].filter((p) => p.includes('node_modules') || p.includes('/dist/'))).toEqual([]);
    // The user unit for the desktop notifier exactly when the repository has one.
    const notify = await stat(join(repoRoot, 'systemd/mpprov-notify.service')).then(
      () => true,
      () => false,
    );
    expect(files.has('/usr/lib/systemd/user/mpprov-notify.service')).toBe(notify);
  });

  it('marks agent.yaml as a conffile, lists every other file in md5sums, and its maintainer scripts parse', async () => {
    const control = join(built.out, 'control');
    await run('dpkg-deb', ['--control', built.deb, control]);
    expect(await readFile(join(control, 'conffiles'), 'utf8')).toBe('/etc/mpprov/agent.yaml\n');
    const sums = (await readFile(join(control, 'md5sums'), 'utf8')).trim().split('\n');
    expect(sums.length).toBeGreaterThan(10);
    expect(sums.some((l) => l.endsWith('  usr/bin/mpprov'))).toBe(true);
    // The package's own node, never the first `node` on systemd's PATH (/usr/local/bin comes first).
    expect((await readFile(join(built.root, 'usr/bin/mpprov'), 'utf8')).split('\n', 1)[0]).toBe('#!/usr/bin/node');
    expect(sums.some((l) => l.includes('etc/mpprov'))).toBe(false);
    for (const script of ['postinst', 'prerm', 'postrm']) {
      expect((await stat(join(control, script))).mode & 0o777).toBe(0o755);
      await run('sh', ['-n', join(control, script)]);
    }
    // The events receiver is stopped, masked and purged like the agent; postinst never starts it.
    const script = (name: string) => readFile(join(control, name), 'utf8');
    expect(await script('prerm')).toContain("deb-systemd-invoke stop 'mpprov.service' 'mpprov-observe.service'");
    const postrm = await script('postrm');
    for (const verb of ['mask', 'purge', 'unmask'])
      expect(postrm).toContain(`deb-systemd-helper ${verb} 'mpprov.service' 'mpprov-observe.service'`);
    const postinst = await script('postinst');
    expect(postinst).not.toMatch(/deb-systemd-invoke "?(start|restart|\$action)"? 'mpprov-observe\.service'/);
    expect(postinst).toContain("deb-systemd-invoke try-restart 'mpprov-observe.service'");
    // dpkg --verify checks every installed file against md5sums: prints nothing when all match.
    const verify = await run('dpkg', [`--root=${built.root}`, '--verify', 'mpprov'], { encoding: 'utf8' });
    expect(verify.stdout).toBe('');
  });
});

describe('installed into a throwaway root with dpkg', () => {
  it('the postinst enabled the unit with deb-systemd-helper and made the state directory 0700 root', async () => {
    const wants = join(built.root, 'etc/systemd/system/multi-user.target.wants/mpprov.service');
    expect(await readlink(wants)).toBe('/usr/lib/systemd/system/mpprov.service');
    const state = await stat(join(built.root, 'var/lib/mpprov'));
    expect(state.isDirectory()).toBe(true);
    expect(state.mode & 0o777).toBe(0o700);
    expect(state.uid).toBe(0);
    // The events receiver is installed, not enabled: no symlink to it anywhere under /etc/systemd.
    await stat(join(built.root, 'usr/lib/systemd/system/mpprov-observe.service'));
    const links = await readdir(join(built.root, 'etc/systemd/system'), { recursive: true });
    expect(links.filter((l) => l.includes('mpprov-observe'))).toEqual([]);
    const { stdout } = await run('dpkg', [`--root=${built.root}`, '--status', 'mpprov'], { encoding: 'utf8' });
    expect(stdout).toContain('Status: install ok installed');
    expect(stdout).toMatch(/^Conffiles:\n \/etc\/mpprov\/agent\.yaml [0-9a-f]{32}$/m);
  });

  it('the unit runs /usr/bin/mpprov, does not wait for network-online, and passes systemd-analyze verify', async () => {
    const unit = await readFile(join(built.root, 'usr/lib/systemd/system/mpprov.service'), 'utf8');
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/mpprov run --agent-config \/etc\/mpprov\/agent\.yaml$/m);
    expect(unit).toMatch(/^Documentation=man:mpprov\(1\)$/m);
    expect(unit).not.toMatch(/^(Wants|After)=.*network-online/m);
    expect(unit).not.toContain('/usr/local');
    // The desktop notifier's user unit, when the repository has one, runs the same file.
    const notify = await readFile(join(built.root, 'usr/lib/systemd/user/mpprov-notify.service'), 'utf8').catch(
      () => undefined,
    );
    if (notify !== undefined) {
      expect(notify).toMatch(/^ExecStart=\/usr\/bin\/mpprov notify/m);
      expect(notify).not.toContain('/usr/local');
    }
    // The events receiver's unit runs the same file, off by default.
    const observe = await readFile(join(built.root, 'usr/lib/systemd/system/mpprov-observe.service'), 'utf8');
    expect(observe).toMatch(/^ExecStart=\/usr\/bin\/mpprov observe --agent-config \/etc\/mpprov\/agent\.yaml$/m);
    expect(observe).toMatch(/^Documentation=man:mpprov\(1\)$/m);
    expect(observe).toContain('Installed by\n# the mpprov Debian package and OFF by default');
    expect(observe).not.toContain('/usr/local');
    // verify needs the command to exist on this machine: the same units, pointed at the installed file.
    for (const [name, text] of [
      ['mpprov.service', unit],
      ['mpprov-observe.service', observe],
    ] as const) {
      const check = join(built.out, name);
      await writeFile(check, text.replace('ExecStart=/usr/bin/mpprov', `ExecStart=${built.root}/usr/bin/mpprov`));
      const { stdout, stderr } = await run('systemd-analyze', ['verify', '--man=no', check], { encoding: 'utf8' });
      expect(`${stdout}${stderr}`.trim()).toBe('');
    }
  });

  it('the installed mpprov runs with the system node: --version, validate and schema', async () => {
    const mpprov = join(built.root, 'usr/bin/mpprov');
    const cwd = tempFolder('installed-cli');
    const version = await run(mpprov, ['--version'], { cwd, encoding: 'utf8' });
    expect(version.stdout).toBe(`${packageJson.version}\n`);
    // A PFX key and certificates: node-forge, yaml and zod all work from the one file (the profile's
    // client certificate comes from another CA than ca_cert: the one warning proves it was read).
    const profile = join(repoRoot, 'profiles/eap-tls-pfx.yaml');
    const valid = await run(mpprov, ['validate', profile], { cwd, encoding: 'utf8' });
    expect(valid.stdout).toContain('in certs/mp01.p12 was not issued by the CA in ca_cert');
    expect(valid.stdout.endsWith(`${profile}: valid (0 errors, 1 warning)\n`)).toBe(true);
    const broken = join(cwd, 'mpprov.yaml');
    await writeFile(broken, 'version: 2\nmonitoring_points: []\n');
    const invalid = await run(mpprov, ['validate', broken], { cwd, encoding: 'utf8' }).then(
      () => ({ code: 0, stdout: '' }),
      (error: { code?: number; stdout?: string }) => ({ code: error.code, stdout: error.stdout ?? '' }),
    );
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toContain(`${broken}: INVALID`);
    const schema = await run(mpprov, ['schema'], { cwd, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
    expect(JSON.parse(schema.stdout)).toEqual(
      JSON.parse(await readFile(join(repoRoot, 'profiles/mpprov.schema.json'), 'utf8')),
    );
  });
});

describe('man pages and shell completion, generated from the CLI', () => {
  const commandNames = (): string[] => built.tree.commands.map((c) => c.name);

  it('man renders mpprov(1) and mpprov.yaml(5) without a warning, mpprov(1) naming every command', async () => {
    expect(commandNames().length).toBeGreaterThan(5);
    const render = async (page: string) =>
      run('man', ['--warnings', '-l', join(built.root, page)], {
        encoding: 'utf8',
        env: { ...process.env, MANWIDTH: '100', MAN_KEEP_FORMATTING: '' },
      });
    const one = await render('usr/share/man/man1/mpprov.1.gz');
    expect(one.stderr).toBe('');
    for (const section of ['NAME', 'SYNOPSIS', 'COMMANDS', 'EXIT STATUS', 'AGENT CONFIGURATION', 'SEE ALSO'])
      expect(one.stdout).toContain(`\n${section}\n`);
    const documented = commandNames().filter((name) => one.stdout.includes(`mpprov ${name}`));
    expect(documented).toEqual(commandNames());
    expect(one.stdout).not.toContain('describe-cli');
    const five = await render('usr/share/man/man5/mpprov.yaml.5.gz');
    expect(five.stderr).toBe('');
    expect(five.stdout).toContain('monitoring_points');
    expect(five.stdout).toContain('SIGNED STICKS');
  });

  it('bash: the completion loads and completes commands, subcommands and options', async () => {
    const file = join(built.root, 'usr/share/bash-completion/completions/mpprov');
    const complete = async (...words: string[]) => {
      const script = `source '${file}'; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _mpprov; printf '%s\\n' "\${COMPREPLY[@]}"`;
      return (await run('bash', ['-c', script], { encoding: 'utf8' })).stdout.split('\n').filter((w) => w !== '');
    };
    const { stdout } = await run('bash', ['-c', `source '${file}'; complete -p mpprov`], { encoding: 'utf8' });
    expect(stdout.trim()).toBe('complete -o bashdefault -o default -F _mpprov mpprov');
    expect(await complete('mpprov', '')).toEqual(commandNames());
    expect(await complete('mpprov', 'service', '')).toEqual(['check', 'status', 'paths']);
    expect(await complete('mpprov', 'apply', '--state-dir', '/tmp', '--no')).toEqual(['--no-rollback']);
    // The value of an option that takes one: nothing offered here, so bash falls back to file names.
    expect(await complete('mpprov', 'validate', '--allowed-signers', '')).toEqual([]);
  });

  it('zsh: the completion parses and compinit registers it for mpprov', async () => {
    const file = join(built.root, 'usr/share/zsh/vendor-completions/_mpprov');
    await run('zsh', ['-n', file]);
    const text = await readFile(file, 'utf8');
    expect(text.startsWith('#compdef mpprov\n')).toBe(true);
    for (const name of commandNames()) expect(text).toContain(`    '${name}:`);
    const dump = join(built.out, 'zcompdump');
    const { stdout } = await run(
      'zsh',
      [
        '-fc',
        `fpath=('${join(built.root, 'usr/share/zsh/vendor-completions')}' $fpath); autoload -Uz compinit; compinit -u -d '${dump}'; print -r -- $_comps[mpprov]`,
      ],
      {
        encoding: 'utf8',
      },
    );
    expect(stdout.trim()).toBe('_mpprov');
  });
});

describe('lintian', () => {
  it('finds no error, and every warning it gives is listed in docs/service.md', { timeout: 120_000 }, async () => {
    const { stdout } = await run('lintian', ['--tag-display-limit', '0', built.deb], { encoding: 'utf8' }).catch(
      (error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }),
    );
    const lines = stdout.split('\n').filter((l) => /^[EWIPX]: /.test(l));
    expect(lines.filter((l) => l.startsWith('E: '))).toEqual([]);
    // The package's page says which lintian warnings are deliberate, and why.
    const servicePage = await readFile(join(repoRoot, 'docs/service.md'), 'utf8');
    const warnings = lines.filter((l) => l.startsWith('W: ')).map((l) => /^W: mpprov: (\S+)/.exec(l)?.[1] ?? l);
    expect(warnings.filter((tag) => !servicePage.includes(`\`${tag}\``))).toEqual([]);
  });
});
