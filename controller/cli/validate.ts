// `banlieue validate FILE...`: check banlieue objects against the API schema
// without a cluster.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { BanlieueValidator } from '../../infra/api/validator.js';
import { CliError } from './cli-error.js';

export function validateFiles(files: readonly string[], print: (line: string) => void): void {
  const validator = new BanlieueValidator();
  let invalid = 0;
  let checked = 0;
  for (const file of files) {
    const docs = parseAllDocuments(readFileSync(file, 'utf8'));
    for (const doc of docs) {
      if (doc.errors.length > 0) throw new CliError(`${file}: not valid YAML: ${doc.errors[0]?.message ?? ''}`);
      const obj = doc.toJS() as { apiVersion?: string; kind?: string; metadata?: { name?: string } } | null;
      if (!obj || !obj.apiVersion || !obj.kind || !validator.handles(obj.apiVersion, obj.kind)) continue;
      checked += 1;
      const where = `${file}: ${obj.kind} ${obj.metadata?.name ?? '(unnamed)'}`;
      const issues = validator.validate(obj);
      for (const issue of issues) print(`${where}: ${issue.field}: ${issue.message}`);
      if (issues.length > 0) invalid += 1;
    }
  }
  if (invalid > 0) throw new CliError(`${invalid} of ${checked} objects are invalid`);
  print(`${checked} objects valid`);
}
