import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';

/**
 * Calling mpprov wrongly exits 64 (EX_USAGE), never 1, which means the configuration or a device
 * failed: a provisioning script can tell its own mistake from a failed Monitoring Point. Help and
 * --version exit 0.
 */
describe('usage errors exit 64', () => {
  const cases: [string, string[], string][] = [
    ['an unknown option', ['validate', '--bogus', 'mpprov.yaml'], "error: unknown option '--bogus'"],
    ['an unknown command', ['provision'], "error: unknown command 'provision'"],
    ['a missing argument', ['validate'], "error: missing required argument 'file'"],
    [
      'an option value its parser refuses',
      ['apply', 'mpprov.yaml', '--concurrency', '0'],
      "'0' is not a positive number",
    ],
    ['a subcommand left out', ['service'], 'Usage: mpprov service'],
  ];
  it.each(cases)("%s: commander's sentence on stderr, nothing on stdout, exit 64", async (_what, args, sentence) => {
    const result = await runCli(args);
    expect(result.stderr).toContain(sentence);
    expect(result.stdout).toBe('');
    expect(result.code).toBe(64);
  });

  it('help and --version exit 0', async () => {
    for (const args of [['--help'], ['validate', '--help'], ['help', 'apply'], ['--version']]) {
      const result = await runCli(args);
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: '' });
      expect(result.stdout).not.toBe('');
    }
  });
});
