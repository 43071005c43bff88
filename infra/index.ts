// The banlieue npm package: cdk8s constructs to install banlieue and to author
// its objects (one class per kind, with its XxxProps), plus the API types and
// validator under `api`. cdk8s and constructs are peers: the app's own copies.
//
//   import { BanlieueInstall, Provider, VirtualMachine, api } from 'banlieue';
export { BanlieueInstall, addInstallCharts } from './install/banlieue-install.js';
export { CLUSTER_SIDE_BACKENDS, DEFAULT_NAMESPACE, DEFAULT_REGISTRY, resolveInstallProps, type BanlieueInstallProps } from './install/install-props.js';
export { renderInstall, renderInstallYaml } from './install/render.js';
export { ALLOW_INSECURE_TLS_LABEL } from './install/admission-policies.js';
export { ALLOW_INSECURE_TRANSPORT_LABEL } from './install/insecure-transport-policy.js';
export { toCustomResourceDefinition, BanlieueCustomResourceDefinitions } from './crds/custom-resource-definition.js';
export { VirtualMachine, type VirtualMachineProps } from './authoring/virtual-machine.js';
export { Provider, type ProviderProps, type ProviderReference } from './authoring/provider.js';
export { VMClass, type VMClassProps, type VMClassReference } from './authoring/vm-class.js';
export { VMImage, type VMImageProps, type VMImageReference } from './authoring/vm-image.js';
export * from './authoring/kinds.js';
export { type KindReference } from './authoring/kind-reference.js';
export { BanlieueApiObject, type BanlieueObjectProps, type BanlieueResourceProps } from './authoring/banlieue-api-object.js';
export * as api from './api/index.js';
export { PACKAGE_VERSION, RELEASE_TAG } from './version.js';
