// What a TypeScript file imports, read with the compiler's own parser (so comments, strings and template
// literals that merely look like imports are not imports): static imports, `export … from`, and dynamic
// `import()` with a literal specifier. The architecture and test-layout tests build their graphs from it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

export interface ImportEdge {
  /** As written: './x.js', 'pg', 'node:fs'. */
  readonly specifier: string;
  /** For a relative specifier, the repository-relative path of the .ts file it names (x.js → x.ts); else undefined. */
  readonly file: string | undefined;
  /**
   * `import type` / `export type … from`: erased at compile time. (With verbatimModuleSyntax, which this
   * project sets, `import { type A }` still loads the module, so it is not type-only.)
   */
  readonly typeOnly: boolean;
  /** 1-based line of the statement, for messages. */
  readonly line: number;
}

export const REPO = resolve(import.meta.dirname, '../..');

/** Every `.ts` file under `dir` (repository-relative, '/'-separated), sorted. */
export function tsFilesUnder(dir: string): string[] {
  const walk = (abs: string): string[] =>
    readdirSync(abs).flatMap((name) => {
      const path = join(abs, name);
      if (statSync(path).isDirectory()) return walk(path);
      return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
    });
  return walk(join(REPO, dir))
    .map((abs) => relative(REPO, abs).split(sep).join('/'))
    .sort();
}

const parsed = new Map<string, readonly ImportEdge[]>();

/** The imports of one repository-relative `.ts` file (each file is parsed once per process). */
export function importsOf(file: string): readonly ImportEdge[] {
  let edges = parsed.get(file);
  if (!edges) parsed.set(file, (edges = parse(file)));
  return edges;
}

function parse(file: string): ImportEdge[] {
  const text = readFileSync(join(REPO, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const edges: ImportEdge[] = [];
  const add = (literal: ts.StringLiteralLike, typeOnly: boolean) => {
    const specifier = literal.text;
    const line = source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1;
    edges.push({ specifier, file: resolveRelative(file, specifier), typeOnly, line });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteralLike(node.moduleSpecifier)) {
      add(node.moduleSpecifier, node.importClause?.isTypeOnly === true);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteralLike(node.moduleSpecifier)) {
      add(node.moduleSpecifier, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteralLike(argument)) add(argument, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteralLike(node.argument.literal)) {
      // `typeof import('./x.js')` in a type position.
      add(node.argument.literal, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

function resolveRelative(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = join(dirname(from), specifier).split(sep).join('/');
  return target.endsWith('.js') ? `${target.slice(0, -'.js'.length)}.ts` : target;
}
