import { applyStick, type ApplyEvent, type StickApplyOptions, type StickResult } from '../../src/apply/index.js';
import type { AgentConfig } from '../../src/config/index.js';
import { testAgentConfig } from '../support/stick-workspace.js';

export interface Applied {
  result: StickResult;
  events: ApplyEvent[];
}

/** Runs the engine in-process on a stick file, collecting its events. */
export async function applyFile(file: string, options: Partial<StickApplyOptions> & { agent?: AgentConfig } = {}): Promise<Applied> {
  const events: ApplyEvent[] = [];
  const result = await applyStick(file, {
    agent: options.agent ?? testAgentConfig(),
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
