// The README and the example config are what a new operator reads first: what they cite must exist in
// the repository (the example config also ships alone, in the npm package), and their examples must do
// what they say.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const README = read('README.md');
const EXAMPLE = read('tollgate.example.yaml');

/** README's headings outside code blocks (a `# comment` in a sh block is not one). */
function headings(markdown: string): string[] {
  let fenced = false;
  const found: string[] = [];
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    else if (!fenced && /^#{1,6} /.test(line)) found.push(line.replace(/^#+ /, '').trim());
  }
  return found;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- ]/gu, '')
    .replace(/ /g, '-');

test('every Markdown file the example config cites is in the repository', () => {
  const cited = [...new Set(EXAMPLE.match(/[\w./-]+\.md\b/g) ?? [])];
  assert.ok(cited.length > 0, 'the example config points its reader somewhere');
  assert.deepEqual(
    cited.filter((file) => !existsSync(new URL(file, root))),
    [],
  );
});

test('every README section the example config names is a heading of README.md', () => {
  const named = [...EXAMPLE.matchAll(/README\.md, "([^"]+)"/g)].map((m) => m[1]!);
  assert.ok(named.length > 0);
  const all = headings(README);
  assert.deepEqual(
    named.filter((section) => !all.includes(section)),
    [],
  );
});

test("every relative link in README.md points to a file in the repository or one of the README's own headings", () => {
  const anchors = new Set(headings(README).map(anchor));
  const broken = [...README.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z]+:/.test(target))
    .filter((target) => (target.startsWith('#') ? !anchors.has(target.slice(1)) : !existsSync(new URL(target.split('#')[0]!, root))));
  assert.deepEqual(broken, []);
});

test("the README's refund examples credit the key (a positive adjustment)", () => {
  const refunds = README.split('\n').filter((line) => /adjust/.test(line) && /refund/i.test(line));
  assert.ok(refunds.length > 0, 'the README shows a refund');
  for (const line of refunds) {
    const amount = /"amount":\s*"?(-?[\d.]+)/.exec(line)?.[1] ?? /keys adjust \S+ (-?[\d.]+)/.exec(line)?.[1];
    assert.ok(amount !== undefined, `the refund example names an amount: ${line}`);
    assert.ok(Number(amount) > 0, `a refund credits the key, so its amount is positive: ${line}`);
  }
});
