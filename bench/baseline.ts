import { execFileSync } from 'node:child_process';
import { rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

/** An earlier commit checked out next to the current one. */
export interface BaselineCheckout {
  readonly dir: string;
  readonly commit: string;
  remove(): void;
}

function git(cwd: string, args: readonly string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** Checks `ref` out, detached, into `parentDir`/baseline as a worktree of the repository at `root`. */
export function checkOutBaseline(root: string, ref: string, parentDir: string): BaselineCheckout {
  const commit = git(root, ['rev-parse', '--short', `${ref}^{commit}`]);
  const dir = join(parentDir, 'baseline');
  git(root, ['worktree', 'add', '--detach', dir, commit]);
  // The current checkout's node_modules holds every package an earlier release needs, so the baseline
  // borrows it (a symlink) instead of installing its own.
  const modules = join(dir, 'node_modules');
  symlinkSync(join(root, 'node_modules'), modules, 'dir');
  let removed = false;
  return {
    dir,
    commit,
    remove() {
      if (removed) return;
      removed = true;
      // The link goes first, so that removing the worktree cannot reach into the current node_modules.
      rmSync(modules, { force: true });
      git(root, ['worktree', 'remove', '--force', dir]);
    },
  };
}
