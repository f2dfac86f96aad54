import type { DeviceInterface } from '../admin-api/index.js';
import type { AdminApi } from '../client/index.js';
import { VerificationError } from '../core/errors.js';
import type { ExpectedStanza, Step } from '../plan/index.js';
import { awaitAuthorization, Dot1xNotAuthorizedError, dot1xWatches, isAuthorized } from './dot1x-authorization.js';
import type { ProvisionOptions } from './provision-options.js';
import { restartAndWait, RestartSkippedError } from './restart-and-wait.js';
import { verifyView } from './verify-view.js';

/** What a step that succeeded has to say beyond "done". */
export interface StepNotes {
  /** Stanzas whose 802.1X was applied but whose authorization the Admin API cannot show ("eth1 inet"). */
  dot1xNotVisible: string[];
  /** A restart's: the active view the device answered with once back, for the verify-active step after it. */
  activeAfterRestart?: DeviceInterface[];
}

const NOTHING: StepNotes = { dot1xNotVisible: [] };

/** How long a port may take to authorize 802.1X and hand out an address, unless told otherwise. */
const DEFAULT_DOT1X_GRACE_MS = 20_000;

/**
 * Runs one plan step against the device: one request, or a restart with its wait, or a check of a
 * view. Throws the client's device errors as they come, VerificationError when the device answers
 * with another configuration, Dot1xNotAuthorizedError when a port did not authorize the 802.1X
 * applied, and the restart errors of restart-and-wait.ts.
 */
export async function runStep(
  step: Step,
  api: AdminApi,
  options: Pick<ProvisionOptions, 'restartTimeoutMs' | 'signal' | 'dot1xGraceMs'> & {
    onRestartRequested?: () => void;
    /** The active view the restart step before ended on (StepNotes.activeAfterRestart): verify-active checks it. */
    activeAfterRestart?: DeviceInterface[];
  },
  onWait: (reason: string, elapsedMs: number) => void,
): Promise<StepNotes> {
  switch (step.kind) {
    case 'upload-files':
      await api.uploadFiles(step.files.map((f) => ({ slot: f.slot, filename: f.filename, bytes: f.bytes })));
      return NOTHING;
    case 'delete-stanza':
      await api.deleteStanza(step.name, step.family);
      return NOTHING;
    case 'restore-stanza':
      await api.postStanza({ ...step.fields, name: step.name, family: step.family });
      return NOTHING;
    case 'post-stanza':
      // Write-only values stay Secrets here; the client reveals them into the body bytes only.
      await api.postStanza({
        ...step.stanza.fields,
        ...step.stanza.secrets,
        name: step.stanza.name,
        family: step.stanza.family,
      });
      return NOTHING;
    case 'verify-pending': {
      const problems = verifyView(await api.listInterfaces('pending'), step.expected);
      if (problems.length > 0) throw new VerificationError('pending', problems);
      return NOTHING;
    }
    case 'restart-networking':
      if (options.signal?.aborted === true) throw new RestartSkippedError();
      return {
        ...NOTHING,
        activeAfterRestart: await restartAndWait(
          api,
          options.restartTimeoutMs,
          onWait,
          options.signal,
          (view) => verifyView(view, step.expected).length === 0,
          options.onRestartRequested,
        ),
      };
    case 'verify-active':
      return verifyActive(
        api,
        step.expected,
        options.dot1xGraceMs ?? DEFAULT_DOT1X_GRACE_MS,
        onWait,
        options.signal,
        options.activeAfterRestart,
      );
    case 'add-acl-rule':
      await api.addAcl(step.rule);
      return NOTHING;
    case 'remove-acl-rule':
      await api.deleteAcl(step.rule);
      return NOTHING;
  }
}

/**
 * The settings first: not active while still pending means the restart did not take; active but
 * different is a wrong result. Then 802.1X, by the addresses its interfaces get (dot1x-authorization.ts).
 */
async function verifyActive(
  api: AdminApi,
  expected: readonly ExpectedStanza[],
  graceMs: number,
  onWait: (reason: string, elapsedMs: number) => void,
  signal: AbortSignal | undefined,
  /** The view the restart's wait ended on: the device's answer of moments ago, as a new GET would return it. */
  answered: DeviceInterface[] | undefined,
): Promise<StepNotes> {
  const started = Date.now();
  const active = answered ?? (await api.listInterfaces('active'));
  const problems = verifyView(active, expected);
  if (problems.length > 0) {
    const stillPending = verifyView(await api.listInterfaces('pending'), expected).length === 0;
    throw new VerificationError(stillPending ? 'never-active' : 'active', problems);
  }
  const { watches, notVisible } = dot1xWatches(expected);
  const unseen = watches.filter((w) => !isAuthorized(active, w));
  if (unseen.length > 0) {
    const names = unseen.map((w) => w.name).join(', ');
    onWait(
      `802.1X on ${names}: up to ${Math.round(graceMs / 100) / 10} s for the port to authorize it (an address from the network)`,
      0,
    );
  }
  const refused = await awaitAuthorization(api, active, watches, graceMs, started, signal);
  if (refused.length > 0) throw new Dot1xNotAuthorizedError(refused, graceMs);
  return { dot1xNotVisible: notVisible };
}
