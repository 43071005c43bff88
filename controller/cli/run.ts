// Runs the CLI from the TypeScript sources (`npx tsx controller/cli/run.ts ...`);
// bin/banlieue.js runs the compiled lib/ instead.
import { main } from './main.js';

process.exitCode = await main(process.argv);
