import type { AgentConfig } from '../config/index.js';
import { isUnderMediaRoot, type MountEntry } from '../ingest/index.js';
import { type MountWatcher, watchMounts } from '../ingest/mount-watcher.js';
// Not in ingest's index, which the CLI loads: chokidar is the agent's alone.
import { type ProfilesWatcher, type SettledFile, watchProfiles } from '../ingest/profiles-watcher.js';

/**
 * Where jobs come from: the mounts under agent.yaml's media roots and the files in its profiles
 * folders, each watched, and watched anew when a reload changes its list.
 */

export interface SourceHandlers {
  mount: (entry: MountEntry) => void;
  unmount: (entry: MountEntry) => void;
  profile: (file: string, settled?: SettledFile) => void;
  notice: (message: string) => void;
}

export interface AgentSources {
  /** 'findmnt' or 'polling': how mounts are watched. */
  mode(): string;
  /** Hands every mount already in to the mount handler: a stick in before the agent started is a stick too. */
  announceCurrent(): void;
  /** After a reload: each watcher whose list changed starts anew. */
  retarget(before: Pick<AgentConfig, 'mediaRoots' | 'profilesDirs'>, after: AgentConfig): Promise<void>;
  close(): Promise<unknown>[];
}

export async function startSources(
  config: Pick<AgentConfig, 'mediaRoots' | 'profilesDirs'>,
  handlers: SourceHandlers,
  env: NodeJS.ProcessEnv,
): Promise<AgentSources> {
  // MPPROV_FINDMNT names another findmnt (a missing one forces the /proc/self/mountinfo fallback).
  const startMounts = (roots: readonly string[]): Promise<MountWatcher> =>
    watchMounts({
      mediaRoots: roots,
      onMount: handlers.mount,
      onUnmount: handlers.unmount,
      onNotice: handlers.notice,
      ...(env.MPPROV_FINDMNT === undefined ? {} : { findmntCommand: env.MPPROV_FINDMNT }),
    });
  const startProfiles = (dirs: readonly string[]): Promise<ProfilesWatcher> =>
    watchProfiles({ dirs, onProfile: handlers.profile, onNotice: handlers.notice });

  let mounts = await startMounts(config.mediaRoots);
  let profiles = await startProfiles(config.profilesDirs);
  return {
    mode: () => mounts.mode(),
    announceCurrent: () => {
      for (const entry of mounts.current()) handlers.mount(entry);
    },
    retarget: async (before, after) => {
      if (!sameList(after.mediaRoots, before.mediaRoots)) {
        await mounts.close();
        mounts = await startMounts(after.mediaRoots);
        // A stick already in under a root that is new is a stick too, as at start-up.
        for (const entry of mounts.current())
          if (!isUnderMediaRoot(entry.target, before.mediaRoots)) handlers.mount(entry);
      }
      if (!sameList(after.profilesDirs, before.profilesDirs)) {
        await profiles.close();
        profiles = await startProfiles(after.profilesDirs);
      }
    },
    close: () => [mounts.close(), profiles.close()],
  };
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
