// The shape of src/, read from its imports (test/support/imports.ts: the TypeScript parser; `import type`
// included, since a type-only arrow still ties one room to another's shapes). The rules:
//   1. No import cycle, type-only or not: every file can be read knowing only what it imports.
//   2. src/pipeline/** imports nothing from src/api/**: the pipeline owns the client-API port, the APIs
//      implement it (issue 23 item 1).
//   3. src/providers/** imports nothing from src/config/**, src/pipeline/** or src/api/**, type-only imports
//      included: a provider sees the request it translates and its target, not the gateway's config. A type
//      import of ProviderConfig is what carries credentials, retries and timeouts into every translator
//      (review-2026-11 §1.1 back-arrow 1, §3c), so it is not exempt.
//   4. src/config/** imports from src/providers/** only src/providers/kinds.ts: loading config must not load
//      every adapter and the tokenizer (review §3e).
// What breaks a rule today is listed in KNOWN, each with why; the fix that removes it deletes its line. A
// listed exception that no longer occurs fails the test too, so the list cannot go stale.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { importsOf, tsFilesUnder } from '../support/imports.js';

interface Edge {
  readonly from: string;
  readonly to: string;
  readonly typeOnly: boolean;
  readonly line: number;
}

interface Rule {
  readonly name: string;
  readonly from: string;
  readonly to: readonly string[];
  readonly allowed?: readonly string[];
}

const RULES: readonly Rule[] = [
  { name: 'the pipeline does not import the client APIs', from: 'src/pipeline/', to: ['src/api/'] },
  { name: 'providers do not import config, the pipeline or the client APIs', from: 'src/providers/', to: ['src/config/', 'src/pipeline/', 'src/api/'] },
  { name: 'config imports only the kinds table of providers', from: 'src/config/', to: ['src/providers/'], allowed: ['src/providers/kinds.ts'] },
];

/** Today's violations: `cycle: <its files, sorted>` or `<from> -> <to>[ (type)]`, and why each is there. */
const KNOWN: Readonly<Record<string, string>> = {};

/** Every import between two files under `root`. */
function graphOf(root: string): Edge[] {
  const files = new Set(tsFilesUnder(root));
  return [...files].flatMap((from) =>
    importsOf(from)
      .filter((edge) => edge.file !== undefined && files.has(edge.file))
      .map((edge) => ({ from, to: edge.file!, typeOnly: edge.typeOnly, line: edge.line })),
  );
}

/** The strongly connected components with more than one file (Tarjan), each sorted; and one cycle through each, for the message. */
function cyclesOf(edges: readonly Edge[]): { files: string[]; path: string[] }[] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) {
    if (!next.has(from)) next.set(from, []);
    if (!next.has(to)) next.set(to, []);
    next.get(from)!.push(to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const to of next.get(node)!) {
      if (!index.has(to)) {
        connect(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      const selfLoop = next.get(node)!.includes(node);
      if (component.length > 1 || selfLoop) components.push(component.sort());
    }
  };
  for (const node of [...next.keys()].sort()) if (!index.has(node)) connect(node);
  return components.map((files) => ({ files, path: cycleThrough(files, next) }));
}

/** A shortest way from the component's first file back to itself, staying inside the component. */
function cycleThrough(files: readonly string[], next: ReadonlyMap<string, readonly string[]>): string[] {
  const inside = new Set(files);
  const start = files[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const to of next.get(node)!) {
      if (!inside.has(to)) continue;
      if (to === start) {
        const path = [start];
        for (let at = node; at !== start; at = previous.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start];
}

/** Every violation of the rules, as KNOWN names it, with a line that says where. */
function violationsOf(edges: readonly Edge[], rules: readonly Rule[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const { files, path } of cyclesOf(edges)) found.set(`cycle: ${files.join(' ')}`, `import cycle ${path.join(' → ')}`);
  for (const edge of edges) {
    for (const rule of rules) {
      if (!edge.from.startsWith(rule.from) || !rule.to.some((to) => edge.to.startsWith(to)) || rule.allowed?.includes(edge.to)) continue;
      const key = `${edge.from} -> ${edge.to}${edge.typeOnly ? ' (type)' : ''}`;
      found.set(key, `${rule.name}: ${edge.from}:${edge.line} imports ${edge.typeOnly ? 'type-only ' : ''}${edge.to}`);
    }
  }
  return found;
}

/** What the check reports: violations not in `known`, and known ones that no longer occur. */
function judge(found: ReadonlyMap<string, string>, known: Readonly<Record<string, string>>): { unexpected: string[]; stale: string[] } {
  return {
    unexpected: [...found].filter(([key]) => !(key in known)).map(([, where]) => where),
    stale: Object.keys(known).filter((key) => !found.has(key)),
  };
}

describe('the import graph of src/', () => {
  const edges = graphOf('src');

  test('has no import cycle and no import across a seam, except the known ones', () => {
    const { unexpected, stale } = judge(violationsOf(edges, RULES), KNOWN);
    assert.deepEqual(unexpected, [], `new violations (fix them; see the rules at the top of this file):\n${unexpected.join('\n')}`);
    assert.deepEqual(stale, [], `known exceptions that no longer occur (delete their lines from KNOWN):\n${stale.join('\n')}`);
  });

  test('is read from every file under src/ (the parser found the imports)', () => {
    assert.ok(new Set(edges.map((e) => e.from)).size > 150, 'imports were read from most of src/');
    assert.ok(edges.some((e) => e.from === 'src/main.ts' && e.to === 'src/http/server.ts' && !e.typeOnly));
    assert.ok(edges.some((e) => e.from === 'src/api/route.ts' && e.to === 'src/http/deps.ts' && e.typeOnly));
    // A dynamic import is an import too.
    assert.ok(edges.some((e) => e.from === 'src/main.ts' && e.to === 'src/routing/shared-cooldowns.ts'));
  });
});

describe('the architecture check itself', () => {
  const edge = (from: string, to: string, typeOnly = false): Edge => ({ from, to, typeOnly, line: 1 });

  test('reports a cycle with its files, type-only arrows included', () => {
    const found = violationsOf([edge('src/a.ts', 'src/b.ts'), edge('src/b.ts', 'src/c.ts', true), edge('src/c.ts', 'src/a.ts'), edge('src/c.ts', 'src/d.ts')], RULES);
    assert.deepEqual([...found], [['cycle: src/a.ts src/b.ts src/c.ts', 'import cycle src/a.ts → src/b.ts → src/c.ts → src/a.ts']]);
  });

  test('reports an import across a seam, and allows config to import the kinds table', () => {
    const found = violationsOf(
      [edge('src/pipeline/run.ts', 'src/api/openai-chat/index.ts', true), edge('src/config/load.ts', 'src/providers/kinds.ts'), edge('src/providers/openai/request.ts', 'src/pipeline/deps.ts')],
      RULES,
    );
    assert.deepEqual([...found.keys()], ['src/pipeline/run.ts -> src/api/openai-chat/index.ts (type)', 'src/providers/openai/request.ts -> src/pipeline/deps.ts']);
  });

  test('reports a known exception that no longer occurs, so the list cannot go stale', () => {
    const { unexpected, stale } = judge(new Map(), { 'src/config/load.ts -> src/providers/registry.ts': 'gone' });
    assert.deepEqual(unexpected, []);
    assert.deepEqual(stale, ['src/config/load.ts -> src/providers/registry.ts']);
  });
});
