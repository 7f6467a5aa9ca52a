// A dialect's numbered migrations, read from its folder of frozen .sql files (NNNN-name.sql): each file
// is exactly the text that runs, with no derivation at load time, so what the database runs is what the
// file says. Never edit a migration that has shipped; add the next number (docs/adr/0036-frozen-migrations.md).
// `npm run build` copies the folders beside the compiled modules (scripts/build-migrations.mjs).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface Migration {
  readonly version: number;
  /** Recorded in schema_migrations beside the version. */
  readonly name: string;
  readonly sql: string;
}

const FILE_NAME = /^(\d{4})-([a-z0-9]+(?:-[a-z0-9]+)*)\.sql$/;

/**
 * The migrations in `folder`, numbered 1..N without a gap: the runners apply every migration above the
 * highest applied version, so a gap or a repeated number (two branches that picked the same one) would
 * skip a migration on an existing database. Throws, naming the folder, when they are not.
 */
export function readMigrations(folder: URL): Migration[] {
  const path = fileURLToPath(folder);
  let files: string[];
  try {
    files = readdirSync(folder).filter((file) => file.endsWith('.sql')).sort();
  } catch (error) {
    throw new Error(`the migrations folder ${path} cannot be read (is the package built? npm run build copies it): ${(error as Error).message}`);
  }
  return files.map((file, i) => {
    const match = FILE_NAME.exec(file);
    if (!match) throw new Error(`migration file ${path}${file}: expected NNNN-name.sql (lower-case words joined by -)`);
    const version = Number(match[1]);
    if (version !== i + 1) throw new Error(`migration file ${path}${file}: expected version ${i + 1} here (migrations are numbered 1..N, once each)`);
    return { version, name: match[2]!, sql: readFileSync(new URL(file, folder), 'utf8') };
  });
}
