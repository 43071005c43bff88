// `make clusterctl-components` helper: prints metadata.yaml for this version.
import { stringify } from 'yaml';
import { PACKAGE_VERSION } from '../version.js';
import { clusterctlMetadata } from './metadata.js';

process.stdout.write(stringify(clusterctlMetadata(PACKAGE_VERSION)));
