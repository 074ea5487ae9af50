// Bundles the chat page into web/dist with esbuild: index.html, assets/app.js (our modules
// plus markdown-it, highlight.js and KaTeX), assets/app.css and KaTeX's fonts. CMake embeds
// web/dist into the binary (cmake/embed_web_assets.cmake). Run by scripts/setup after npm ci;
// a file is rewritten only when its bytes change, so an unchanged page rebuilds nothing.
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const web = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(web, 'dist');

const result = await esbuild.build({
  entryPoints: { app: path.join(web, 'src/main.js') },
  bundle: true,
  format: 'esm',
  target: ['es2020'],
  minify: true,
  write: false,
  outdir: path.join(dist, 'assets'),
  entryNames: '[name]',
  assetNames: 'fonts/[name]',
  // woff2 only: every browser that runs this page reads it; the older formats KaTeX lists as
  // fallbacks would triple the fonts' weight in the binary.
  loader: { '.woff2': 'file', '.woff': 'empty', '.ttf': 'empty' },
  legalComments: 'eof',
  logLevel: 'warning',
});

const files = new Map(result.outputFiles.map((f) => [f.path, f.contents]));
// The 'empty' loader leaves url() behind for the dropped formats; drop those entries too.
for (const [file, bytes] of files) {
  if (!file.endsWith('.css')) continue;
  const css = Buffer.from(bytes).toString('utf8').replace(/,url\(\) format\("(woff|truetype)"\)/g, '');
  files.set(file, Buffer.from(css));
}
for (const name of ['index.html', 'favicon.svg']) {
  const to = name === 'index.html' ? path.join(dist, name) : path.join(dist, 'assets', name);
  files.set(to, fs.readFileSync(path.join(web, name)));
}

// Write what changed; remove what the bundle no longer has.
let written = 0;
for (const [file, bytes] of files) {
  const old = fs.existsSync(file) ? fs.readFileSync(file) : null;
  if (old && Buffer.compare(old, Buffer.from(bytes)) === 0) continue;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, bytes);
  written++;
}
const walk = (dir) => fs.readdirSync(dir, { withFileTypes: true })
  .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
for (const file of walk(dist)) if (!files.has(file)) fs.rmSync(file);
const total = [...files.values()].reduce((n, b) => n + b.length, 0);
console.log(`web: ${files.size} files, ${(total / 1024).toFixed(0)} KiB in web/dist (${written} rewritten)`);
