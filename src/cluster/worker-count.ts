// `tollgate serve --workers N|auto`: how many worker processes to run.
import { availableParallelism } from 'node:os';

/** The worker count `--workers` asks for (`auto`: one per core), or undefined when the text is not one. */
export function parseWorkerCount(text: string): number | undefined {
  if (text === 'auto') return availableParallelism();
  if (!/^[0-9]+$/.test(text)) return undefined;
  const count = Number(text);
  return count >= 1 && count <= 256 ? count : undefined;
}
