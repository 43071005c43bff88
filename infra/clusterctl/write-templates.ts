// `make clusterctl-components` helper: writes the cluster templates, one file
// per flavor, into the directory given as the first argument, after checking
// each against banlieue's API schema with its variables set.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FLAVORS, renderClusterTemplate, renderClusterWithValues } from './cluster-templates.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: write-templates.ts <directory>');
for (const flavor of FLAVORS) {
  renderClusterWithValues(flavor);
  const { fileName, yaml, clusterClass } = renderClusterTemplate(flavor);
  for (const asset of [{ fileName, yaml }, ...(clusterClass ? [clusterClass] : [])]) {
    writeFileSync(join(dir, asset.fileName), asset.yaml);
    process.stdout.write(`wrote ${join(dir, asset.fileName)}\n`);
  }
}
