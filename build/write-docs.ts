// `make docs`: rewrites the generated tables of the docs (build/docs-tables.ts).
import { writeFileSync } from 'node:fs';
import { docsFiles } from './docs-tables.js';

for (const { file, current, wanted } of docsFiles()) {
  if (current === wanted) continue;
  writeFileSync(file, wanted);
  console.log(`wrote the generated tables of ${file}`);
}
