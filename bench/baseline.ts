import { execFileSync } from 'node:child_process';
import { rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** Checks `ref` out, detached, into `parentDir`/baseline-<commit> as a worktree of the repository at `root`. */
export function checkOutBaseline(root: string, ref: string, parentDir: string) {
  const commit = git(root, 'rev-parse', '--short', `${ref}^{commit}`);
  const dir = join(parentDir, `baseline-${commit}`);
  git(root, 'worktree', 'add', '--detach', dir, commit);
  // The current checkout's node_modules holds every package an earlier release needs, so the baseline
  // borrows it (a symlink) instead of installing its own.
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const remove = (): void => {
    // The link goes first, so that removing the worktree cannot reach into the current node_modules.
    rmSync(join(dir, 'node_modules'), { force: true });
    git(root, 'worktree', 'remove', '--force', dir);
  };
  return { dir, commit, remove };
}
