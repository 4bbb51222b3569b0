// Precompress the static export (out/) for `keiri-agent serve`: next to each text file of
// 1 KiB or more, a Brotli (.br, quality 11) and a gzip (.gz, level 9) copy. The server sends
// one of them to a browser that accepts it (src/keiri_agent/api/web.py), so a page's
// JavaScript travels at about a quarter of its size without compressing per request.
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

const ROOT = new URL("../out/", import.meta.url).pathname;
const TEXT = /\.(js|css|html|txt|json|svg|map)$/;
const MIN_BYTES = 1024;

async function* files(folder) {
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (TEXT.test(entry.name)) yield path;
  }
}

let count = 0;
let before = 0;
let after = 0;
for await (const path of files(ROOT)) {
  if ((await stat(path)).size < MIN_BYTES) continue;
  const data = await readFile(path);
  const br = brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } });
  await writeFile(`${path}.br`, br);
  await writeFile(`${path}.gz`, gzipSync(data, { level: 9 }));
  count += 1;
  before += data.length;
  after += br.length;
}
console.log(`compressed ${count} files: ${before} bytes → ${after} bytes (brotli)`);
