import { StickOutcome } from '../apply/index.js';
import type { ValidatedStick } from '../certs/index.js';
import { hasErrors } from '../config/index.js';

interface GateOutput {
  json: boolean;
  print: (text: string) => void;
  emitJson: (value: unknown) => void;
  /** Progress lines (stderr), through the command's redactor. */
  say: (line: string) => void;
  file: string;
}

/**
 * `plan`/`apply --preflight IFACE`: the stick's 802.1X tried on the laptop's port before the
 * engine starts. False: the switch refused, the sentence and the reports are printed, and the
 * command ends with nothing sent to any device. An invalid stick is left to the engine to report.
 */
export async function preflightGate(
  stick: ValidatedStick,
  port: string,
  limit: readonly string[] | undefined,
  out: GateOutput,
): Promise<boolean> {
  if (stick.model === undefined || hasErrors(stick.problems)) return true;
  // Loaded only for a run that asks for a preflight: its network namespace, supplicant and DHCP
  // helpers are a start-up cost every other plan and apply would pay for nothing.
  const { preflightStick } = await import('../preflight/index.js');
  const said = await preflightStick({ model: stick.model, files: stick.files }, port, {
    say: (line) => out.say(`preflight: ${line}`),
    ...(limit === undefined ? {} : { limit }),
  });
  if (out.json)
    out.emitJson({ type: 'preflight', passed: said.passed, sentence: said.sentence, reports: said.reports });
  else out.print(said.sentence);
  if (said.passed) return true;
  if (out.json)
    out.emitJson({
      type: 'result',
      file: out.file,
      outcome: StickOutcome.Failed,
      devices: [],
      sentence: said.sentence,
    });
  return false;
}
