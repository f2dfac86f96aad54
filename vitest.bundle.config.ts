import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The CLI tests a second time, against the bundle dist/mpprov.mjs (launcher and mpprov-app.cjs) that the .deb installs
 * as /usr/bin/mpprov (`npm test` runs this after the main run). Set here, before global setup
 * runs, so that setup bundles the CLI and test/support/run-cli.ts spawns the bundle.
 *
 * Which tests: every test of the CLI's commands (test/cli), and the files elsewhere that drive a
 * command end to end and exercise a dependency the bundle must carry: signing (ssh-keygen, FAT
 * images), the simulator (node-forge certificates, HTTPS), hostile input (yaml), 802.1X through
 * apply, and the agent itself (chokidar, findmnt, signals), as the service runs it. The other
 * daemon and engine tests run the same code paths as these and stay in the main run only.
 */
process.env.MPPROV_TEST_CLI = 'bundle';

// Spread, not mergeConfig: that would add these files to the main run's include instead of replacing it.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'test/cli/**/*.test.ts',
      'test/signature/sign-command.test.ts',
      'test/signature/validate-signature.test.ts',
      'test/signature/fat-stick-signing.test.ts',
      'test/simulator/simulate-command.test.ts',
      'test/simulator/simulate-service.test.ts',
      'test/config/hostile-yaml.test.ts',
      'test/ingest/hostile-files.test.ts',
      'test/apply/dot1x-cli.test.ts',
      'test/daemon/stick-job.test.ts',
      'test/daemon/profiles.test.ts',
      'test/daemon/agent-signals.test.ts',
      // The preflight as the laptop runs it: its usage, and its port given back after SIGTERM and SIGKILL.
      'test/preflight/preflight-command.test.ts',
      'test/preflight/port-kill.test.ts',
    ],
    // scripts/demo.mjs runs dist/cli/main.js itself: against the bundle it would test nothing new.
    exclude: [...(base.test?.exclude ?? configDefaults.exclude), 'test/cli/demo-cleanup.test.ts'],
    outputFile: { json: '.test-output/results-bundle.json' },
  },
});
