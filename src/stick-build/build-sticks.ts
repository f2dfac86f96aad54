import { readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeFolder } from '../core/make-folder.js';
import type { Problem } from '../core/problem.js';
import type { Secret } from '../core/secret.js';
import { formatPolicy, keyFingerprint, type NotAfter, POLICY_NAME, signStick } from '../signature/index.js';
import { buildSite, CONFIG_NAME } from './build-site.js';
import { checkTemplate } from './check-template.js';
import type { InventoryMp } from './inventory.js';
import { loadTemplate } from './load-template.js';
import { problemAt } from './place.js';
import { readInventory } from './read-inventory.js';
import { secretsDir } from './secrets-dir.js';
import { imageLabel, writeStickImage } from './stick-image.js';

export interface BuildOptions {
  inventory: string;
  template: string;
  out: string;
  secretsDir?: string;
  /** Where the files the template names are copied from; default the template's folder. */
  filesDir?: string;
  signKey?: string;
  validUntil?: NotAfter;
  image: boolean;
  /** Only these sites. */
  limit?: readonly string[];
}

/** One entry of sticks.json (docs/rolling-out.md, "The output"); paths relative to `--out`. */
interface StickEntry {
  site: string;
  stick: string;
  image?: string;
  monitoring_points: string[];
  sha256: string;
  signer?: string;
  not_after?: string;
}

export type BuildResult =
  /** The build ran: sticks built, problems of the sites that got none (and warnings). */
  | { ran: true; sticks: StickEntry[]; problems: Problem[]; failedSites: number; secrets: Secret[] }
  /** Nothing was built: the inventory, the template, `--out` or the key refused it as a whole. */
  | { ran: false; problems: Problem[]; secrets: Secret[]; usage: boolean };

export const STICKS_JSON = 'sticks.json';
const STAGING = '.building';
/** Sites built at once: validation is CPU, signing and images wait on child processes. */
const CONCURRENCY = 8;

/**
 * `mpprov stick build`: one stick folder per site of the inventory from the template, each
 * validated as `mpprov validate` does, signed with `--sign`, written as a FAT image with
 * `--image`, listed in sticks.json. A site with any problem gets nothing; the others are built.
 */
export async function buildSticks(options: BuildOptions): Promise<BuildResult> {
  const secrets = secretsDir(options.secretsDir);
  const whole = (problems: Problem[], usage = false): BuildResult => ({
    ran: false,
    problems,
    secrets: secrets.all(),
    usage,
  });
  const outProblem = await checkOut(options.out);
  if (outProblem !== undefined) return whole([outProblem], true);
  const inventory = await readInventory(options.inventory);
  const template = await loadTemplate(options.template, options.filesDir);
  const problems = [...inventory.problems, ...(template.ok ? checkTemplate(template.template) : template.problems)];
  if (inventory.refusedWhole || !template.ok || problems.some((p) => p.file === options.template))
    return whole(problems);
  let sites = [...inventory.sites.entries()];
  if (options.limit !== undefined) {
    const unknown = options.limit.filter((site) => !inventory.sites.has(site));
    if (unknown.length > 0)
      return whole(
        [
          problemAt(
            { file: options.inventory, line: 1, column: 1 },
            `--limit names sites the inventory does not have: ${unknown.join(', ')}`,
          ),
        ],
        true,
      );
    sites = sites.filter(([site]) => options.limit?.includes(site));
  }
  const refused = new Set(inventory.refusedSites);
  if (options.image) {
    const byLabel = new Map<string, string>();
    for (const [site, mps] of sites) {
      const other = byLabel.get(imageLabel(site));
      if (other === undefined) byLabel.set(imageLabel(site), site);
      else {
        problems.push(
          problemAt(
            (mps[0] as InventoryMp).vars.get('site')?.place ?? (mps[0] as InventoryMp).place,
            `sites ${other} and ${site} would both get the image label ${imageLabel(site)} (a label is cut to 11 characters); neither gets a stick`,
            'rename one of the sites so their first 11 characters differ',
          ),
        );
        refused.add(site).add(other);
      }
    }
  }
  let signer: string | undefined;
  if (options.signKey !== undefined) {
    const key = await keyFingerprint(options.signKey);
    if (!key.ok) return whole([problemAt({ file: options.signKey, line: 1, column: 1 }, key.message)], true);
    signer = key.signer;
  }

  const staging = join(options.out, STAGING);
  // Not Node's recursive mkdir, which never returns where the file system refuses a new folder
  // with ENOENT although its parent exists (--out under /proc or /sys held the build forever).
  const unmade = await makeFolder(staging, 0o777).then(
    () => undefined,
    (error: NodeJS.ErrnoException) => error.code ?? 'error',
  );
  if (unmade !== undefined)
    return whole(
      [problemAt({ file: options.out, line: 1, column: 1 }, `the --out folder cannot be made (${unmade})`)],
      true,
    );
  const built = new Map<string, StickEntry>();
  // Per site, so the problems come out in inventory order whatever order the workers finish in.
  const siteProblems = new Map<string, Problem[]>();
  const queue = sites.filter(([site]) => !refused.has(site));
  const work = async (): Promise<void> => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const [site, mps] = next;
      const entry = await buildOne(site, mps);
      if (entry !== undefined) built.set(site, entry);
    }
  };
  const buildOne = async (site: string, mps: readonly InventoryMp[]): Promise<StickEntry | undefined> => {
    const dir = join(staging, site);
    const result = await buildSite(
      { site, mps, template: template.template, secrets: secrets.get, lookupSecret: secrets.lookup },
      dir,
    );
    const said: Problem[] = [];
    siteProblems.set(site, said);
    if (!result.ok) {
      said.push(...result.problems);
      refused.add(site);
      return undefined;
    }
    said.push(...result.warnings);
    const entry: StickEntry = { site, stick: site, monitoring_points: mps.map((mp) => mp.name), sha256: result.sha256 };
    if (options.signKey !== undefined) {
      const extra: string[] = [];
      if (options.validUntil !== undefined) {
        await writeFile(join(dir, POLICY_NAME), formatPolicy(options.validUntil));
        extra.push(POLICY_NAME);
      }
      const signed = await signStick(dir, options.signKey, {
        configName: CONFIG_NAME,
        referencedPaths: result.referenced,
        extraPaths: extra,
      });
      if (!signed.ok) {
        said.push(...signed.problems);
        refused.add(site);
        await rm(dir, { recursive: true, force: true });
        return undefined;
      }
      if (signer !== undefined) entry.signer = signer;
      if (options.validUntil !== undefined) entry.not_after = options.validUntil.text;
    }
    const image = join(options.out, `${site}.img`);
    try {
      // The image first: a site whose image fails gets neither.
      if (options.image) await writeStickImage(dir, image, site);
      await rename(dir, join(options.out, site));
    } catch (error) {
      const { code, message } = error as NodeJS.ErrnoException & { stderr?: string };
      said.push(
        problemAt(
          { file: options.image ? image : join(options.out, site), line: 1, column: 1 },
          code === 'ENOENT' && options.image
            ? 'the image cannot be made: mkfs.vfat or mcopy is not installed'
            : `the stick cannot be written (${typeof code === 'string' ? code : message.split('\n')[0]})`,
          options.image ? 'install dosfstools and mtools' : undefined,
        ),
      );
      refused.add(site);
      await rm(dir, { recursive: true, force: true });
      await rm(image, { force: true });
      return undefined;
    }
    if (!options.image) return entry;
    // sticks.json's key order, as docs/rolling-out.md lists it.
    const { site: _site, stick, ...rest } = entry;
    return { site, stick, image: `${site}.img`, ...rest };
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, Math.max(queue.length, 1)) }, work));
  await rm(staging, { recursive: true, force: true });
  for (const [site] of sites) problems.push(...(siteProblems.get(site) ?? []));
  // In inventory order, whatever order the workers finished in.
  const sticks = sites.flatMap(([site]) => {
    const entry = built.get(site);
    return entry === undefined ? [] : [entry];
  });
  await writeFile(join(options.out, STICKS_JSON), `${JSON.stringify(sticks, null, 2)}\n`);
  const failedSites =
    sites.filter(([site]) => refused.has(site)).length +
    [...inventory.refusedSites].filter((s) => !inventory.sites.has(s)).length;
  return { ran: true, sticks, problems, failedSites, secrets: secrets.all() };
}

/** `--out` must not exist or be empty: a build never mixes with an older one. */
async function checkOut(out: string): Promise<Problem | undefined> {
  try {
    const names = await readdir(out);
    if (names.length > 0)
      return problemAt(
        { file: out, line: 1, column: 1 },
        'the --out folder is not empty: a build never mixes with an older one',
        'give a new folder',
      );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    return problemAt({ file: out, line: 1, column: 1 }, `the --out folder cannot be used (${code ?? 'error'})`);
  }
  return undefined;
}
