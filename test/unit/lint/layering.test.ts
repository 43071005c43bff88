// The layering of STYLE §2, as eslint.config.js encodes it: each row lints one import line as
// if it were written in a file at `filePath` and checks which layering rule reports it.
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

const LAYERING = 'no-restricted-imports';
const TYPES_ONLY = '@typescript-eslint/no-restricted-imports';

// The snippets live at paths that need not exist, so they are outside the TypeScript project:
// type-aware rules are switched off and only the two import rules are run.
function layeringLinter(): ESLint {
  return new ESLint({
    cwd: repoRoot,
    overrideConfig: [{ files: ['**/*.ts'], ...tseslint.configs.disableTypeChecked }],
    ruleFilter: ({ ruleId }) => ruleId === LAYERING || ruleId === TYPES_ONLY,
  });
}

async function reportingRules(eslint: ESLint, filePath: string, code: string): Promise<(string | null)[]> {
  const [result] = await eslint.lintText(`${code}\n`, { filePath, warnIgnored: true });
  if (result === undefined) throw new Error(`ESLint returned no result for ${filePath}`);
  return result.messages.map((message) => message.ruleId);
}

describe('Layering lint (STYLE §2: cli → reconcilers → backends → runtime, scheduler → infra)', () => {
  let eslint: ESLint;
  beforeAll(() => {
    eslint = layeringLinter();
  });

  it.each([
    ['controller/reconcilers/example.ts', "import { VsphereBackend } from '../backends/vsphere/vsphere-backend.js';", LAYERING],
    ['controller/reconcilers/virtual-machine/example.ts', "import type { Mapping } from '../../backends/vsphere/mapping.js';", LAYERING],
    ['controller/reconcilers/example.ts', "import { BUILT_IN_BACKENDS } from '../backends/registry.js';", LAYERING],
    ['controller/reconcilers/example.ts', "import { run } from '../cli/run.js';", LAYERING],
    ['infra/api/example.ts', "import type { Logger } from '../../controller/runtime/log.js';", LAYERING],
    ['controller/runtime/example.ts', "import { isPaused } from '../reconcilers/paused.js';", LAYERING],
    ['controller/runtime/example.ts', "import type { Backend } from '../backends/backend.js';", LAYERING],
    ['controller/scheduler/example.ts', "import type { Plan } from '../reconcilers/virtual-machine/decide.js';", LAYERING],
    ['controller/backends/example.ts', "import { vsphereDescriptor } from './vsphere/descriptor.js';", LAYERING],
    ['controller/backends/vsphere/example.ts', "import { buildMachine } from '../libvirt/build-machine.js';", LAYERING],
    ['controller/backends/vsphere/machine/example.ts', "import { libvirtDescriptor } from '../../libvirt/descriptor.js';", LAYERING],
    ['controller/backends/vsphere/example.ts', "import { libvirtDescriptor } from '../../backends/libvirt/descriptor.js';", LAYERING],
    ['controller/backends/vsphere/example.ts', "import { BUILT_IN_BACKENDS } from '../registry.js';", LAYERING],
    ['controller/backends/cloud-init/example.ts', "import { LibvirtClient } from '../libvirt/client/libvirt-client.js';", LAYERING],
    ['controller/reconcilers/example.ts', "import { toNoCloudIso } from '../backends/cloud-init/nocloud-iso.js';", LAYERING],
    ['controller/backends/vsphere/example.ts', "import { run } from '../../cli/run.js';", LAYERING],
    ['controller/backends/vsphere/client/example.ts', "import type { Logger } from '../../../runtime/log.js';", LAYERING],
    ['controller/backends/vsphere/client/example.ts', "import { VsphereBackend } from '../vsphere-backend.js';", LAYERING],
    ['controller/backends/vsphere/client/example.ts', "import type { Condition } from '../../../../infra/api/meta.js';", LAYERING],
    ['controller/backends/vsphere/client/example.ts', "import { KubeConfig } from '@kubernetes/client-node';", LAYERING],
    ['controller/backends/vsphere/client/example.ts', "import { converge } from '../../kit/machine/converge.js';", LAYERING],
    ['controller/backends/kit/wire/example.ts', "import type { Logger } from '../../../runtime/log.js';", LAYERING],
    ['controller/backends/kit/wire/example.ts', "import { KubeConfig } from '@kubernetes/client-node';", LAYERING],
    ['controller/backends/kit/machine/example.ts', "import { vsphereMachines } from '../../vsphere/machine/vsphere-machines.js';", LAYERING],
    ['controller/scheduler/example.ts', "import { providerSchema } from '../../infra/api/banlieue.io/v1alpha1/provider.js';", TYPES_ONLY],
    ['controller/scheduler/example.ts', "import { readFileSync } from 'node:fs';", TYPES_ONLY],
    ['controller/backends/vsphere/mapping.ts', "import { toWireValue } from './client/wire-values.js';", TYPES_ONLY],
    ['controller/backends/vsphere/mapping.ts', "import { toBackendError } from '../backend-error.js';", TYPES_ONLY],
  ])('reports %s importing: %s', async (filePath, code, rule) => {
    expect(await reportingRules(eslint, filePath, code)).toEqual([rule]);
  });

  it.each([
    ['controller/reconcilers/example.ts', "import type { Backend } from '../backends/backend.js';"],
    ['controller/reconcilers/infra-machine/example.ts', "import { isConnectFailure } from '../../backends/backend-error.js';"],
    ['controller/reconcilers/example.ts', "import { Reason } from '../../infra/api/conditions.js';"],
    ['controller/reconcilers/example.ts', "import { TransientError } from '../runtime/errors.js';"],
    ['controller/backends/registry.ts', "import { vsphereDescriptor } from './vsphere/descriptor.js';"],
    ['controller/backends/vsphere/example.ts', "import type { Backend } from '../backend.js';"],
    ['controller/backends/vsphere/example.ts', "import { VsphereClient } from './client/vsphere-client.js';"],
    ['controller/backends/vsphere/machine/example.ts', "import { VsphereClient } from '../client/vsphere-client.js';"],
    ['controller/backends/vsphere/machine/example.ts', "import type { Logger } from '../../../runtime/log.js';"],
    ['controller/backends/libvirt/machine/example.ts', "import { toNoCloudIso } from '../../cloud-init/nocloud-iso.js';"],
    ['controller/backends/proxmox/example.ts', "import { toNoCloudIso } from '../cloud-init/nocloud-iso.js';"],
    ['controller/backends/vsphere/client/example.ts', "import { BackendError } from '../../backend-error.js';"],
    ['controller/backends/vsphere/client/example.ts', "import { request } from 'node:https';"],
    ['controller/backends/vsphere/client/example.ts', "import { parseHttpsEndpoint } from '../../kit/wire/https-endpoint.js';"],
    ['controller/backends/kit/wire/example.ts', "import { BackendError } from '../../backend-error.js';"],
    ['controller/backends/vsphere/machine/example.ts', "import { machineBackend } from '../../kit/machine/machine-backend.js';"],
    ['controller/backends/proxmox/example.ts', "import { SessionPool } from '../kit/session-pool.js';"],
    ['controller/backends/vsphere/client/example.ts', "import { XMLParser } from 'fast-xml-parser';"],
    ['controller/scheduler/example.ts', "import type { Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';"],
    ['controller/scheduler/example.ts', "import { Reason } from '../../infra/api/conditions.js';"],
    ['controller/scheduler/example.ts', "import { compareText } from './compare-text.js';"],
    ['controller/backends/vsphere/mapping.ts', "import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';"],
    ['controller/backends/vsphere/mapping.ts', "import { failureDomainLabel } from '../failure-domain-name.js';"],
    ['controller/cli/example.ts', "import { BUILT_IN_BACKENDS } from '../backends/registry.js';"],
    ['test/unit/example.test.ts', "import { VsphereBackend } from '../../controller/backends/vsphere/vsphere-backend.js';"],
  ])('allows %s importing: %s', async (filePath, code) => {
    expect(await reportingRules(eslint, filePath, code)).toEqual([]);
  });
});
