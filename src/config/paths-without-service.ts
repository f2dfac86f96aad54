import { type Problem, Severity, type UnplacedProblem } from '../core/problem.js';
import type { StickFile } from './schema.js';

/** The sentence a run and `validate` give paths that no service block lets mpprov check. */
export const PATHS_NOT_CHECKED = 'not checked (no service configured)';

/**
 * A stick that names paths, read with an agent.yaml without a `service` block: mpprov can neither
 * create nor confirm them. A warning per monitoring point, at its `paths` key: the file is valid,
 * the laptop is what lacks something.
 */
export function pathsWithoutService(model: StickFile, place: (problem: UnplacedProblem) => Problem): Problem[] {
  return model.monitoring_points.flatMap((mp, index) =>
    (mp.paths?.length ?? 0) === 0
      ? []
      : [
          place({
            severity: Severity.Warning,
            path: ['monitoring_points', index, 'paths'],
            message: 'paths cannot be checked: no service configured',
            hint: 'add a service block to agent.yaml (url, token_file), or name it with --agent-config',
            atKey: true,
          }),
        ],
  );
}
