// npm runs `prepare` after `npm install` / `npm ci` in this directory: it builds dist/ (`npm run build`).
// The build tools (TypeScript, esbuild) are dev dependencies, so `npm ci --omit=dev` cannot build: on a
// copy whose dist/ was built before, that install keeps dist/ as it is instead of failing on "tsc: not
// found"; without a dist/ it fails, saying how to build one (docs/adr/0031-install-and-node-versions.md).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const root = new URL('../', import.meta.url);
// This project's own node_modules, not a parent directory's: that is where npm puts dev dependencies.
const tools = ['typescript', 'esbuild'].filter((name) => !existsSync(new URL(`node_modules/${name}/package.json`, root)));

if (tools.length === 0) {
  // One build definition: package.json's "build" script, run by the npm that runs this one.
  const npm = process.env.npm_execpath;
  const result = npm ? spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: 'inherit' }) : spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}

const missing = `${tools.join(' and ')} ${tools.length === 1 ? '(a dev dependency) is' : '(dev dependencies) are'} not installed`;
if (existsSync(new URL('dist/cli/main.js', root)) && existsSync(new URL('dist/dashboard/index.html', root))) {
  console.warn(`tollgate: ${missing}, so dist/ is not rebuilt: the gateway runs the dist/ built before`);
  process.exit(0);
}
console.error(
  `tollgate: dist/ is not built and cannot be: ${missing}.\n` +
    'Install with the dev dependencies, which builds dist/, then drop them: npm ci && npm prune --omit=dev (README: Production install).',
);
process.exit(1);
