// The backends compiled into this binary. Adding a backend adds its import and
// a line to the list here (docs/adr/0014-backend-descriptors.md); nothing else
// in generic code names one.
import { cloudHypervisorDescriptor } from './cloud-hypervisor/descriptor.js';
import { BackendCatalog, type BackendDescriptor } from './descriptor.js';
import { libvirtDescriptor } from './libvirt/descriptor.js';
import { proxmoxDescriptor } from './proxmox/descriptor.js';
import { vsphereDescriptor } from './vsphere/descriptor.js';

// Each descriptor is checked against its own spec type where it is written; here each is seen through the contract fields.
const descriptors: readonly BackendDescriptor[] = [vsphereDescriptor, proxmoxDescriptor, libvirtDescriptor, cloudHypervisorDescriptor];

export const BUILT_IN_BACKENDS = new BackendCatalog(descriptors);
