import type { AdminApi } from '../client/index.js';
import { VerificationError } from '../core/errors.js';
import type { Step } from '../plan/index.js';
import type { ProvisionOptions } from './provision-options.js';
import { restartAndWait, RestartSkippedError } from './restart-and-wait.js';
import { verifyView } from './verify-view.js';

/**
 * Runs one plan step against the device: one request, or a restart with its wait, or a check of a
 * view. Throws the client's device errors as they come, VerificationError when the device answers
 * with another configuration, and the restart errors of restart-and-wait.ts.
 */
export async function runStep(
  step: Step,
  api: AdminApi,
  options: Pick<ProvisionOptions, 'restartTimeoutMs' | 'signal'>,
  onWait: (reason: string, elapsedMs: number) => void,
): Promise<void> {
  switch (step.kind) {
    case 'upload-files':
      await api.uploadFiles(step.files.map((f) => ({ slot: f.slot, filename: f.filename, bytes: f.bytes })));
      return;
    case 'delete-stanza':
      await api.deleteStanza(step.name, step.family);
      return;
    case 'restore-stanza':
      await api.postStanza({ ...step.fields, name: step.name, family: step.family });
      return;
    case 'post-stanza':
      // Write-only values stay Secrets here; the client reveals them into the body bytes only.
      await api.postStanza({ ...step.stanza.fields, ...step.stanza.secrets, name: step.stanza.name, family: step.stanza.family });
      return;
    case 'verify-pending': {
      const problems = verifyView(await api.listInterfaces('pending'), step.expected, { dot1x: false });
      if (problems.length > 0) throw new VerificationError('pending', problems);
      return;
    }
    case 'restart-networking':
      if (options.signal?.aborted === true) throw new RestartSkippedError();
      await restartAndWait(api, options.restartTimeoutMs, onWait, options.signal, (view) => verifyView(view, step.expected, { dot1x: false }).length === 0);
      return;
    case 'verify-active': {
      const active = await api.listInterfaces('active');
      const problems = verifyView(active, step.expected, { dot1x: true });
      if (problems.length === 0) return;
      // Settings not active while still pending: the restart did not take. Settings active but
      // 802.1X refused by the switch port: a wrong result, which is rolled back.
      const settingsActive = verifyView(active, step.expected, { dot1x: false }).length === 0;
      const stillPending = !settingsActive && verifyView(await api.listInterfaces('pending'), step.expected, { dot1x: false }).length === 0;
      throw new VerificationError(stillPending ? 'never-active' : 'active', problems);
    }
    case 'add-acl-rule':
      await api.addAcl(step.rule);
      return;
    case 'remove-acl-rule':
      await api.deleteAcl(step.rule);
      return;
  }
}
