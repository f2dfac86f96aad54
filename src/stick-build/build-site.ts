import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { stringify } from 'yaml';
import { validateStick } from '../certs/index.js';
import { MAX_REFERENCED_BYTES, readInside } from '../ingest/index.js';
import { type Problem, Severity } from '../core/problem.js';
import type { Secret } from '../core/secret.js';
import { visibleText } from '../core/visible-text.js';
import type { InventoryMp } from './inventory.js';
import type { Template } from './load-template.js';
import { problemAt } from './place.js';
import { type Origin, renderMp, SECRETS_FOLDER, type SecretLookup } from './render-template.js';

export const CONFIG_NAME = 'mpprov.yaml';

export interface SiteInput {
  site: string;
  mps: readonly InventoryMp[];
  template: Template;
  /** The secrets read from `--secrets-dir`, by name; a name missing here is a problem. */
  secrets: (name: string) => Secret | undefined;
  lookupSecret: SecretLookup;
}

export type SiteBuild =
  | { ok: true; sha256: string; referenced: string[]; warnings: Problem[]; secrets: Secret[] }
  | { ok: false; problems: Problem[]; secrets: Secret[] };

/**
 * One site's stick in `dir` (which must not exist): its `mpprov.yaml`, its secret files and the
 * files it names, then the laptop's own validation of the folder. Every problem is located at the
 * inventory row (or YAML line) and column, names the template line and the stick's key path. On
 * any error the folder is removed: a site with a problem gets nothing.
 */
export async function buildSite(input: SiteInput, dir: string): Promise<SiteBuild> {
  const { template, mps } = input;
  const rendered = mps.map((mp, index) => renderMp(template, mp, index, input.lookupSecret));
  const problems = rendered.flatMap((r) => r.problems);
  const secretNames = new Set(rendered.flatMap((r) => [...r.secrets]));
  const secrets = [...secretNames].map((name) => input.secrets(name)).filter((s) => s !== undefined);
  const copies = new Map<string, FileOrigin>();
  // Every file the stick gets, secrets included, by its name on FAT: case-insensitive.
  const onFat = new Map<string, string>();
  rendered.forEach((r, index) => {
    for (const file of r.files) {
      const from: FileOrigin = {
        mp: mps[index] as InventoryMp,
        index,
        keyPath: file.keyPath,
        origin: r.origins.get(file.keyPath),
      };
      const same = onFat.get(file.path.toUpperCase());
      if (same === undefined) onFat.set(file.path.toUpperCase(), file.path);
      else if (same !== file.path)
        problems.push(
          located(
            from,
            template,
            `the files '${visibleText(same)}' and '${visibleText(file.path)}' differ only in case: on the stick's FAT filesystem they are one file`,
            'name the files apart by more than upper and lower case',
          ),
        );
      if (file.path.startsWith(`${SECRETS_FOLDER}/`) && secretNames.has(file.path.slice(SECRETS_FOLDER.length + 1)))
        continue;
      if (!copies.has(file.path)) copies.set(file.path, from);
    }
  });
  const filesRoot = resolve(template.filesDir);
  for (const [path, from] of copies) {
    const source = resolve(filesRoot, path);
    if (
      path.startsWith('/') ||
      path.includes('\\') ||
      path.split('/').includes('..') ||
      !source.startsWith(filesRoot + sep)
    ) {
      problems.push(
        located(
          from,
          template,
          `the file '${visibleText(path)}' is not a path inside the template's folder`,
          'name files relative to the template, without ..',
        ),
      );
      copies.delete(path);
    }
  }
  if (problems.length > 0) return { ok: false, problems, secrets };

  const config = stringify(
    { version: 1, monitoring_points: rendered.map((r) => r.value) },
    { lineWidth: 0, aliasDuplicateObjects: false },
  );
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, CONFIG_NAME), config);
    for (const name of secretNames) {
      const secret = input.secrets(name);
      if (secret === undefined) continue;
      const file = join(dir, SECRETS_FOLDER, name);
      await mkdir(dirname(file), { recursive: true });
      // The one way a secret leaves the builder: into the stick file the template names for it.
      await writeFile(file, secret.reveal(), { mode: 0o600 });
      await chmod(file, 0o600);
    }
    for (const [path, from] of copies) {
      const target = join(dir, ...path.split('/'));
      await mkdir(dirname(target), { recursive: true });
      // Read as the agent reads a stick: a link out of the folder (to /etc/shadow), a FIFO or a
      // device (/dev/zero) is refused unopened, so the builder neither hangs nor copies what
      // lies outside the template's folder onto a stick.
      const read = await readInside(filesRoot, path, {
        what: `the file '${visibleText(path)}'`,
        limit: MAX_REFERENCED_BYTES,
        limitText: '1 MiB',
        missingHint: 'put the file beside the template, or give --files DIR',
        outside: {
          message: `the file '${visibleText(path)}' is a link that leads outside the template's folder`,
          hint: 'copy the file itself into the folder',
        },
      });
      // Owner-only, like the secret files: a private key or a PFX is copied too, and whatever mode
      // it had beside the template, the build folder must not hand it to every local user.
      if (read.ok) await writeFile(target, read.bytes, { mode: 0o600 });
      else problems.push(located(from, template, `${read.message} (in ${filesRoot})`, read.hint));
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    return {
      ok: false,
      problems: [problemAt({ file: dir, line: 1, column: 1 }, `the stick folder cannot be written (${code})`)],
      secrets,
    };
  }
  if (problems.length > 0) {
    await rm(dir, { recursive: true, force: true });
    return { ok: false, problems, secrets };
  }
  const validated = await validateStick(join(dir, CONFIG_NAME));
  const all = [...secrets, ...validated.secrets];
  const mapped = validated.problems.map((problem) =>
    backToInventory(
      problem,
      mps,
      rendered.map((r) => r.origins),
      template,
    ),
  );
  if (mapped.some((p) => p.severity === Severity.Error) || validated.model === undefined) {
    await rm(dir, { recursive: true, force: true });
    return { ok: false, problems: mapped, secrets: all };
  }
  const referenced = [...new Set([...copies.keys(), ...[...secretNames].map((n) => `${SECRETS_FOLDER}/${n}`)])].sort();
  return { ok: true, sha256: validated.sha256, referenced, warnings: mapped, secrets: all };
}

/** Where a file of the stick comes from: the MP, its index, the key naming the file, the template's place. */
interface FileOrigin {
  mp: InventoryMp;
  index: number;
  keyPath: string;
  origin: Origin | undefined;
}

function located(from: FileOrigin, template: Template, message: string, hint?: string): Problem {
  const where =
    from.origin === undefined ? '' : ` (template ${template.file}:${from.origin.line}:${from.origin.column})`;
  return problemAt(
    from.origin?.variable?.place ?? from.mp.place,
    `${visibleText(from.mp.name)}: ${message}${where}`,
    hint,
    `monitoring_points[${from.index}].${from.keyPath}`,
  );
}

const MP_PATH = /^monitoring_points\[(\d+)\]\.?(.*)$/;

/**
 * A problem the validator found in the built mpprov.yaml, said where the network team can fix
 * it: the inventory cell the value came from (else the MP's row), the template line, the key path.
 */
function backToInventory(
  problem: Problem,
  mps: readonly InventoryMp[],
  origins: readonly Map<string, Origin>[],
  template: Template,
): Problem {
  const match = MP_PATH.exec(problem.path);
  const index = match === null ? 0 : Number(match[1]);
  const mp = mps[index] ?? mps[0];
  if (mp === undefined) return problem;
  const inside = match?.[2] ?? '';
  const table = origins[index] ?? new Map<string, Origin>();
  let origin: Origin | undefined;
  for (let key = inside; ;) {
    origin = table.get(key);
    if (origin !== undefined || key === '') break;
    const cut = Math.max(key.lastIndexOf('.'), key.lastIndexOf('['));
    key = cut <= 0 ? '' : key.slice(0, cut);
  }
  const where = origin === undefined ? '' : `template ${template.file}:${origin.line}:${origin.column}; `;
  return {
    ...problem,
    file: (origin?.variable?.place ?? mp.place).file,
    line: (origin?.variable?.place ?? mp.place).line,
    column: (origin?.variable?.place ?? mp.place).column,
    message: `${visibleText(mp.name)}: ${problem.message} (${where}${CONFIG_NAME}:${problem.line}:${problem.column})`,
  };
}
