// The Debian package, staged under dist/deb/ (or OUT/deb/) and built with `dpkg-deb --root-owner-group -Zxz`:
// every file owned by root, modes set here explicitly (never the builder's umask). Maintainer
// scripts, control and changelog are in packaging/debian/; the unit, man pages and completions
// are generated from the repository's own sources at each build.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { APP_FILES } from './bundle.mjs';
import { bashCompletion, zshCompletion } from './completion.mjs';
import { mpprovManPage, stickFormatManPage } from './man-page.mjs';

/** Debian revision of this packaging; the upstream version is package.json's. */
const DEBIAN_REVISION = '1';

/** The conffiles: dpkg keeps an administrator's edits across upgrades and asks before replacing them. */
const CONFFILES = ['/etc/mpprov/agent.yaml'];

/**
 * The bundle as /usr/bin/mpprov: its `#!/usr/bin/env node` becomes `#!/usr/bin/node`, the node the
 * package depends on. Through env, systemd's PATH (/usr/local/bin first) would let any node placed
 * in /usr/local run the root agent, past `Depends: nodejs (>= 20.19)`.
 */
export function packagedBundle(text) {
  if (!text.startsWith('#!/usr/bin/env node\n'))
    throw new Error('dist/mpprov.cjs: no "#!/usr/bin/env node" first line to pin');
  return `#!/usr/bin/node\n${text.slice('#!/usr/bin/env node\n'.length)}`;
}

/**
 * systemd/mpprov.service as the package installs it: the command is /usr/bin/mpprov (the bundle,
 * run by the system's node through its #! line) and the documentation is the man page. Built from
 * the repository's unit so the hardening is written once; a unit whose ExecStart no longer has the
 * expected shape stops the build rather than shipping a wrong path.
 */
export function packagedUnit(text, name) {
  const execStart = /^ExecStart=\S*node \S+\/dist\/cli\/main\.js( .*)?$/m;
  if (!execStart.test(text))
    throw new Error(
      `systemd/${name}: no "ExecStart=... node .../dist/cli/main.js ..." line to point at /usr/bin/mpprov`,
    );
  return text
    .replace(execStart, (_line, args = '') => `ExecStart=/usr/bin/mpprov${args}`)
    .replace(/^ExecStart=\/usr\/local\/bin\/mpprov/m, 'ExecStart=/usr/bin/mpprov')
    .replace(/^Documentation=.*$/m, 'Documentation=man:mpprov(1)')
    .replace(/Installed by scripts\/install\.sh\./, 'Installed by the mpprov Debian package.')
    .replace(/Installed by\n# scripts\/install\.sh and OFF/, 'Installed by\n# the mpprov Debian package and OFF')
    .replace(
      /Installed by\n# scripts\/install\.sh to \/etc\/systemd\/user\//,
      'Installed by the mpprov\n# Debian package to /usr/lib/systemd/user/',
    )
    .replace(
      /Installed by scripts\/install\.sh to \/etc\/systemd\/user\//,
      'Installed by the mpprov Debian package to /usr/lib/systemd/user/',
    )
    .split('\n')
    .filter((line) => !/^# scripts\/install\.sh writes/.test(line))
    .join('\n');
}

/** The sample agent.yaml as /etc/mpprov/agent.yaml: it names where the package puts the reference. */
function packagedAgentConfig(text) {
  return text.replace(
    /\(installed by scripts\/install\.sh, mode 0600\)/,
    '(a configuration file of the mpprov package, mode 0600)',
  );
}

async function put(root, path, content, mode) {
  const file = join(root, path);
  await mkdir(dirname(file), { recursive: true, mode: 0o755 });
  await writeFile(file, content);
  await chmod(file, mode);
}

/** gzip -9n: no name and no time stamp in the header, so the same input gives the same bytes. */
const gzip = (text) => gzipSync(Buffer.from(text), { level: 9 });

async function filesUnder(root) {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** The bundled npm packages, from esbuild's metafile, with the licence each package.json states. */
async function bundledPackages(repo, metafile) {
  const names = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m !== null) names.add(m[1]);
  }
  const packages = [];
  for (const name of [...names].sort()) {
    const manifest = JSON.parse(await readFile(join(repo, 'node_modules', name, 'package.json'), 'utf8'));
    packages.push({ name, version: manifest.version, license: manifest.license ?? 'see its package' });
  }
  return packages;
}

async function copyright(repo, metafile) {
  const head = await readFile(join(repo, 'packaging/debian/copyright.head'), 'utf8');
  const packages = await bundledPackages(repo, metafile);
  const list = packages.map((p) => ` ${p.name} ${p.version} (${p.license})`).join('\n');
  return `${head}\nFiles: usr/bin/mpprov ${Object.keys(APP_FILES)
    .map((name) => `usr/lib/mpprov/${name}`)
    .join(
      ' ',
    )}\nCopyright: the authors of each bundled package, as each states\nLicense: bundled\n Bundled Node.js packages, with the licence each declares:\n${list}\n`;
}

export async function buildDeb({ repo, out, bundle, version, metafile }) {
  const debVersion = `${version}-${DEBIAN_REVISION}`;
  const changelog = await readFile(join(repo, 'packaging/debian/changelog'), 'utf8');
  const top = /^mpprov \(([^)]+)\)/.exec(changelog)?.[1];
  if (top !== debVersion)
    throw new Error(
      `packaging/debian/changelog starts with version ${top}, but package.json says ${version}: add a "mpprov (${debVersion})" entry`,
    );
  // The build's date for the man pages: the changelog's, so a rebuild of the same version is identical.
  const date = new Date(/^ -- .*> {2}(.+)$/m.exec(changelog)?.[1] ?? Date.now()).toISOString().slice(0, 10);

  const tree = JSON.parse(execFileSync(process.execPath, [bundle, 'describe-cli'], { encoding: 'utf8' }));
  const root = join(out, 'deb');
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { mode: 0o755 });

  // The launcher as the command; the bundles it runs in ../lib/mpprov/, where it looks (src/cli/bundle-launcher.ts).
  await put(root, 'usr/bin/mpprov', packagedBundle(await readFile(bundle, 'utf8')), 0o755);
  for (const name of Object.keys(APP_FILES))
    await put(root, `usr/lib/mpprov/${name}`, await readFile(join(dirname(bundle), name)), 0o644);
  await put(
    root,
    'usr/lib/systemd/system/mpprov.service',
    packagedUnit(await readFile(join(repo, 'systemd/mpprov.service'), 'utf8'), 'mpprov.service'),
    0o644,
  );
  // The events receiver (`mpprov observe`): shipped, never enabled or started by the package
  // (postinst only records it for purge); an administrator turns it on where the service reaches.
  await put(
    root,
    'usr/lib/systemd/system/mpprov-observe.service',
    packagedUnit(await readFile(join(repo, 'systemd/mpprov-observe.service'), 'utf8'), 'mpprov-observe.service'),
    0o644,
  );
  // The desktop notifier's user unit, once the repository has one (`mpprov notify`).
  const notifyUnit = join(repo, 'systemd/mpprov-notify.service');
  if (existsSync(notifyUnit)) {
    await put(
      root,
      'usr/lib/systemd/user/mpprov-notify.service',
      packagedUnit(await readFile(notifyUnit, 'utf8'), 'mpprov-notify.service'),
      0o644,
    );
  }
  await put(
    root,
    'etc/mpprov/agent.yaml',
    packagedAgentConfig(await readFile(join(repo, 'systemd/agent.yaml'), 'utf8')),
    0o600,
  );

  const readme = await readFile(join(repo, 'README.md'), 'utf8');
  const commandsDoc = await readFile(join(repo, 'docs/commands.md'), 'utf8');
  const agentConfigDoc = await readFile(join(repo, 'docs/agent-config.md'), 'utf8');
  const stickFormatDoc = await readFile(join(repo, 'docs/stick-format.md'), 'utf8');
  await put(
    root,
    'usr/share/man/man1/mpprov.1.gz',
    gzip(mpprovManPage({ tree, commandsDoc, agentConfigDoc, version, date })),
    0o644,
  );
  await put(
    root,
    'usr/share/man/man5/mpprov.yaml.5.gz',
    gzip(stickFormatManPage({ stickFormatDoc, version, date })),
    0o644,
  );
  await put(root, 'usr/share/bash-completion/completions/mpprov', bashCompletion(tree), 0o644);
  await put(root, 'usr/share/zsh/vendor-completions/_mpprov', zshCompletion(tree), 0o644);

  const doc = 'usr/share/doc/mpprov';
  await put(root, `${doc}/copyright`, await copyright(repo, metafile), 0o644);
  await put(root, `${doc}/changelog.Debian.gz`, gzip(changelog), 0o644);
  for (const name of [
    'commands.md',
    'json-output.md',
    'service.md',
    'agent-config.md',
    'stick-format.md',
    'device-model.md',
    'service-model.md',
    'simulator.md',
    'security.md',
  ]) {
    await put(root, `${doc}/${name}`, await readFile(join(repo, 'docs', name)), 0o644);
  }
  await put(root, `${doc}/README.md`, readme, 0o644);

  // Control area. md5sums lists every file but the conffiles (dpkg tracks those itself).
  const files = await filesUnder(root);
  let kib = 0;
  const sums = [];
  for (const file of files) {
    const path = relative(root, file);
    const bytes = await readFile(file);
    kib += Math.ceil(bytes.length / 1024);
    if (!CONFFILES.includes(`/${path}`)) sums.push(`${createHash('md5').update(bytes).digest('hex')}  ${path}`);
  }
  const control = (await readFile(join(repo, 'packaging/debian/control'), 'utf8'))
    .replace('@VERSION@', debVersion)
    .replace('@INSTALLED_SIZE@', String(kib));
  await put(root, 'DEBIAN/control', control, 0o644);
  await put(root, 'DEBIAN/conffiles', `${CONFFILES.join('\n')}\n`, 0o644);
  await put(root, 'DEBIAN/md5sums', `${sums.join('\n')}\n`, 0o644);
  for (const script of ['postinst', 'prerm', 'postrm'])
    await copyFile(join(repo, 'packaging/debian', script), join(root, 'DEBIAN', script));
  for (const script of ['postinst', 'prerm', 'postrm']) await chmod(join(root, 'DEBIAN', script), 0o755);
  // Folders made by mkdir follow the umask: make every one 0755, as dpkg-deb copies them.
  execFileSync('find', [root, '-type', 'd', '-exec', 'chmod', '0755', '{}', '+']);

  const deb = join(out, `mpprov_${debVersion}_all.deb`);
  await rm(deb, { force: true });
  execFileSync('dpkg-deb', ['--root-owner-group', '-Zxz', '--build', root, deb], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (!(await stat(deb)).isFile()) throw new Error(`dpkg-deb did not write ${deb}`);
  return deb;
}
