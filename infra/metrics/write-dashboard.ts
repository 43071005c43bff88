// `make grafana-dashboard` helper: prints the Grafana dashboard of this version as JSON.
import { RELEASE_TAG } from '../version.js';
import { grafanaDashboard } from './grafana-dashboard.js';

process.stdout.write(`${JSON.stringify(grafanaDashboard(RELEASE_TAG), null, 2)}\n`);
