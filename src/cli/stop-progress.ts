import { stepRange, type ApplyEvent, type DeviceResult } from '../apply/index.js';

type DeviceState =
  | { at: 'not-contacted' }
  | { at: 'reading' }
  | { at: 'planned' }
  | { at: 'step'; index: number; total: number; description: string; restartRequested: boolean }
  | { at: 'done'; result: DeviceResult };

/**
 * Follows the engine's events for `plan`/`apply`, so that a SIGTERM or Ctrl-C can say in one
 * sentence where each device stopped and what was and was not sent: from the device's result when
 * it has one (the engine's own words), else from the last event seen (the last-resort exit).
 */
export interface StopProgress {
  onEvent(event: ApplyEvent): void;
  /** The part after "stopped by SIGTERM: ". */
  where(): string;
}

export function createStopProgress(
  file: string,
  dryRun: boolean,
): StopProgress & { engineStarted(devices: readonly string[]): void } {
  let devices: Map<string, DeviceState> | undefined;
  const sentence = (name: string, state: DeviceState): string => {
    switch (state.at) {
      case 'not-contacted':
        return `${name} was not contacted, nothing was sent to it`;
      case 'reading':
        return `${name} while reading the device's configuration, nothing was changed on it`;
      case 'planned':
        return `${name} was planned, nothing was changed on it`;
      case 'step':
        return (
          `${name} during step ${state.index + 1}/${state.total} "${state.description}"` +
          (state.index > 0 ? `, ${stepRange(1, state.index)} ${state.index === 1 ? 'was' : 'were'} sent` : '') +
          (state.restartRequested
            ? ', the networking restart was requested (the device may be restarting)'
            : ', that request may or may not have reached the device') +
          (state.index + 1 < state.total
            ? `, ${stepRange(state.index + 2, state.total)} ${state.index + 2 === state.total ? 'was' : 'were'} not sent`
            : '')
        );
      case 'done': {
        const { result } = state;
        // The engine's own account of a cut run: "stopped by SIGTERM during step ..." minus its head.
        if (result.stoppedBy !== undefined)
          return `${name} ${result.message.slice(`stopped by ${result.stoppedBy} `.length)}`;
        return `${name} had finished (${result.outcome}${dryRun ? ', planned only' : ''})`;
      }
    }
  };
  return {
    engineStarted(names) {
      devices = new Map(names.map((n) => [n, { at: 'not-contacted' }]));
    },
    onEvent(event) {
      if (devices === undefined) return;
      switch (event.type) {
        case 'device-start':
          devices.set(event.device, { at: 'reading' });
          break;
        case 'plan':
          devices.set(event.device, { at: 'planned' });
          break;
        case 'step-start':
          devices.set(event.device, {
            at: 'step',
            index: event.index,
            total: event.total,
            description: event.description,
            restartRequested: false,
          });
          break;
        case 'waiting': {
          // A wait within a restart step comes after the device accepted the restart.
          const state = devices.get(event.device);
          if (state?.at === 'step' && /^restart networking/.test(state.description)) state.restartRequested = true;
          break;
        }
        case 'device-result':
          devices.set(event.result.device, { at: 'done', result: event.result });
          break;
        default:
      }
    },
    where() {
      if (devices === undefined) return `while reading ${file}; nothing was sent to any device`;
      const parts = [...devices].map(([name, state]) => sentence(name, state));
      const tail = dryRun ? '; plan only reads devices: nothing was changed on any' : '';
      return `${parts.join('; ')}${tail}`;
    },
  };
}
