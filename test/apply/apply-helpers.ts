import { applyStick, type ApplyEvent, type StickApplyOptions, type StickResult } from '../../src/apply/index.js';
import { validateStick } from '../../src/certs/index.js';
import type { AgentConfig } from '../../src/config/index.js';
import { testAgentConfig } from '../support/stick-workspace.js';

export interface Applied {
  result: StickResult;
  events: ApplyEvent[];
}

/** Runs the engine in-process on a stick file, collecting its events. */
export async function applyFile(
  file: string,
  options: Partial<StickApplyOptions> & { agent?: AgentConfig } = {},
): Promise<Applied> {
  const events: ApplyEvent[] = [];
  const agent = options.agent ?? testAgentConfig();
  const stick = await validateStick(file, { agent });
  const result = await applyStick(stick, {
    agent,
    concurrency: 8,
    dryRun: false,
    allowDisconnect: false,
    discardPending: false,
    rollback: true,
    restartTimeoutMs: 20_000,
    // The simulator hands out addresses the moment a port authorizes: a refused port is known
    // after this grace, which keeps the refused cases short.
    dot1xGraceMs: 2_000,
    onEvent: (e) => events.push(e),
    ...options,
  });
  return { result, events };
}
