// Copies every .sql file under src/ (the frozen migrations, src/storage/*/migrations/) to the same place
// under dist/, beside the compiled modules that read them (tsc copies only what it compiles). Part of
// `npm run build`; the package ships dist/, so an installed gateway finds them where the code looks.
// Each target folder is emptied of .sql files first: a migration renamed or removed in src/ leaves no copy.
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
const dist = join(root, 'dist');

function* foldersWithSql(folder) {
  const entries = readdirSync(folder, { withFileTypes: true });
  if (entries.some((e) => e.isFile() && e.name.endsWith('.sql'))) yield folder;
  for (const e of entries) if (e.isDirectory()) yield* foldersWithSql(join(folder, e.name));
}

for (const folder of foldersWithSql(src)) {
  const target = join(dist, relative(src, folder));
  if (existsSync(target)) for (const name of readdirSync(target)) if (name.endsWith('.sql')) rmSync(join(target, name));
  mkdirSync(target, { recursive: true });
  for (const name of readdirSync(folder)) if (name.endsWith('.sql')) copyFileSync(join(folder, name), join(target, name));
}
