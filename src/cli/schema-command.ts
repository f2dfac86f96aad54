import type { Command } from 'commander';
import { stickJsonSchema } from '../config/index.js';

export function registerSchemaCommand(program: Command): void {
  program
    .command('schema')
    .description('print the JSON Schema of mpprov.yaml (for editors: yaml-language-server)')
    .action(() => {
      process.stdout.write(`${JSON.stringify(stickJsonSchema(), null, 2)}\n`);
    });
}
