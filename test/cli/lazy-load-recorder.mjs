// Preloaded with `node --import`: writes every module the process loaded, one URL a line, to the
// file named by MPPROV_MODULE_LOG when it exits. ESM through a resolve hook (run in the loader
// thread, which appends as it goes), CommonJS from the require cache at exit (require() of
// CommonJS from CommonJS never passes the ESM hooks: node-forge's and winston's insides).
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const log = process.env.MPPROV_MODULE_LOG;
if (log !== undefined && log !== '') {
  register(
    'data:text/javascript,' +
      encodeURIComponent(`
        import { appendFileSync } from 'node:fs';
        const log = ${JSON.stringify(log)};
        export async function resolve(specifier, context, next) {
          const resolved = await next(specifier, context);
          appendFileSync(log, resolved.url + '\\n');
          return resolved;
        }`),
  );
  const cache = createRequire(import.meta.url).cache;
  process.on('exit', () => {
    const files = Object.keys(cache).map((file) => pathToFileURL(file).href);
    if (files.length > 0) appendFileSync(log, `${files.join('\n')}\n`);
  });
}
