#!/usr/bin/env node
// Entry point of the banlieue binary; the CLI lives in controller/cli (compiled to lib/).
import { main } from '../lib/controller/cli/main.js';

process.exitCode = await main(process.argv);
