// Builds the dashboard (dashboard/) into dist/dashboard/: one minified ES module bundle (Preact and uPlot
// included), its stylesheet and the page. What this writes is all the gateway serves — no build server
// at run time. Part of `npm run build`. Each file is also written brotli- and gzip-compressed, so the
// gateway sends the smaller form to browsers that accept it without compressing anything per request.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'dist', 'dashboard');
mkdirSync(out, { recursive: true });

await build({
  entryPoints: [join(root, 'dashboard', 'src', 'main.tsx')],
  outfile: join(out, 'app.js'),
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'linked',
  logLevel: 'warning',
});

// The page's stylesheet: uPlot's own rules first, then ours.
const require = createRequire(import.meta.url);
const uplotCss = readFileSync(join(dirname(require.resolve('uplot')), 'uPlot.min.css'), 'utf8');
writeFileSync(join(out, 'app.css'), `${uplotCss}\n${readFileSync(join(root, 'dashboard', 'styles.css'), 'utf8')}`);
copyFileSync(join(root, 'dashboard', 'index.html'), join(out, 'index.html'));

for (const name of ['app.js', 'app.css', 'index.html']) {
  const file = join(out, name);
  const body = readFileSync(file);
  writeFileSync(`${file}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY } }));
  writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
}
