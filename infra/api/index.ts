// The banlieue API: schemas (TypeBox), wire types and kind definitions.
export * from './addressing.js';
export * from './machine-fields.js';
export * from './meta.js';
export * from './names.js';
export * from './conditions.js';
export * from './kind.js';
export * from './kinds.js';
export * from './validator.js';
export * from './well-known.js';
export * from './banlieue.io/v1alpha1/provider.js';
export * from './banlieue.io/v1alpha1/virtual-machine.js';
export * from './banlieue.io/v1alpha1/vm-class.js';
export * from './banlieue.io/v1alpha1/vm-image.js';
// Every backend's kinds, schemas and types, and the backend list.
export * from './backends.js';
export * from './infrastructure.banlieue.io/v1alpha1/infra-cluster.js';
