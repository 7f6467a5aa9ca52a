// The dashboard reads the server's answers through the server's own presenter types
// (src/operations/json-types.ts), so `npm run typecheck` fails when the two drift apart. Those imports
// must stay type-only and lead nowhere else: the bundle holds no server code, and the dashboard's
// typecheck (DOM, no Node types) reads no server module but that one file.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import ts from 'typescript';

const root = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const dashboard = join(root, 'dashboard');
const JSON_TYPES = 'src/operations/json-types.ts';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

interface ModuleReference {
  readonly file: string;
  readonly specifier: string;
  readonly typeOnly: boolean;
}

/** Every `import ... from`, `export ... from` and `import(...)` of a file, and whether it is type-only. */
function references(file: string): ModuleReference[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: ModuleReference[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ file, specifier: node.moduleSpecifier.text, typeOnly: node.importClause?.isTypeOnly ?? false });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ file, specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ file, specifier: node.argument.literal.text, typeOnly: true });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      found.push({ file, specifier: node.arguments[0].text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** A relative specifier as a path from the repository root, `.js` read as the `.ts` it compiles from. */
const target = (ref: ModuleReference) => relative(root, resolve(dirname(ref.file), ref.specifier)).replace(/\.js$/, '.ts');

describe('the dashboard’s API types', () => {
  const outside = sourceFiles(join(dashboard, 'src'))
    .flatMap(references)
    .filter((ref) => ref.specifier.startsWith('.') && !target(ref).startsWith('dashboard/'));

  test('are the server’s presenter types, imported type-only from the one file that holds them', () => {
    const fromServer = outside.filter((ref) => target(ref) === JSON_TYPES);
    assert.ok(
      fromServer.some((ref) => relative(root, ref.file) === 'dashboard/src/types.ts'),
      `dashboard/src/types.ts takes its shapes from ${JSON_TYPES}`,
    );
    for (const ref of outside) {
      const where = `${relative(root, ref.file)} → ${ref.specifier}`;
      assert.equal(target(ref), JSON_TYPES, `${where}: the dashboard reaches into src/ only for the JSON types`);
      assert.ok(ref.typeOnly, `${where}: must be \`import type\` / \`export type\`, so no server code is bundled`);
    }
  });

  test('come from a file that imports nothing, so the dashboard’s typecheck reads no other server module', () => {
    assert.deepEqual(references(join(root, JSON_TYPES)).map((ref) => ref.specifier), []);
  });

  test('leave no server module in the bundle: everything esbuild bundles is the dashboard’s or a package’s', async () => {
    const result = await build({
      entryPoints: [join(dashboard, 'src', 'main.tsx')],
      absWorkingDir: root,
      bundle: true,
      write: false,
      metafile: true,
      format: 'esm',
      jsx: 'automatic',
      jsxImportSource: 'preact',
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    assert.ok(inputs.includes('dashboard/src/main.tsx'), `the bundle was read from the dashboard: ${inputs.join(', ')}`);
    assert.deepEqual(inputs.filter((i) => !i.startsWith('dashboard/') && !i.startsWith('node_modules/')), []);
  });
});
