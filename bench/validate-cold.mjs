// Cold `mpprov validate`, the whole process from spawn to exit (Node start, module load, YAML,
// schema, rules, every file read and every certificate and key checked), for the PEAP profile
// and the PFX profile. Runs alternate between profiles and builds; one untimed
// run of each first, so the page cache holds the files as it does on a laptop in use.
import { join } from 'node:path';
import { profilesDir } from '../soak/stick.mjs';
import { judged, summarize } from './lib/stats.mjs';
import { timeProcess } from './lib/timed-process.mjs';

const PROFILES = { 'peap-mschapv2': ['peap-mschapv2.yaml', 120], 'eap-tls-pfx': ['eap-tls-pfx.yaml', 400] };

/** `entries`: build name -> CLI file (package.json's bin, the bundle; tsc's dist/cli/main.js for comparison). */
export async function validateCold({ runs, entries, log }) {
  const times = {};
  const once = async (build, entry, name) => {
    const run = await timeProcess(process.execPath, [entry, 'validate', join(profilesDir, PROFILES[name][0])]);
    if (run.status !== 0)
      throw new Error(`validate ${name} (${build}) exited ${run.status}: ${run.stdout.slice(-300)}`);
    return run.wallMs;
  };
  for (const [build, entry] of Object.entries(entries))
    for (const name of Object.keys(PROFILES)) await once(build, entry, name);
  for (let i = 0; i < runs; i++) {
    for (const [build, entry] of Object.entries(entries)) {
      for (const name of Object.keys(PROFILES)) {
        const ms = await once(build, entry, name);
        ((times[build] ??= {})[name] ??= []).push(ms);
        log(`validate r${i + 1} ${build} ${name}: ${ms.toFixed(0)} ms`);
      }
    }
  }
  const result = { what: 'wall time of the whole `mpprov validate PROFILE` process' };
  // The targets are the bundle's, the command package.json's bin names; tsc's output is shown beside
  // it for comparison only (development runs it, no user does).
  for (const [build, byProfile] of Object.entries(times)) {
    result[build] = Object.fromEntries(
      Object.entries(byProfile).map(([name, list]) => {
        const figure = summarize(list, 'ms');
        return [name, build === 'bundle' ? judged(figure, '<', PROFILES[name][1]) : figure];
      }),
    );
  }
  return result;
}
