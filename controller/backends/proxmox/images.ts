// A VMImage's proxmox source on one Provider: `kind: Template`, `ref` a VMID
// that must be a template somewhere in the cluster (one /cluster/resources
// listing). Its row says on which nodes it can be cloned from without a
// cross-node clone: its own, and those holding a template of the same name.
import type { ImageSource } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { Reason } from '../../../infra/api/conditions.js';
import type { ImageResolution } from '../backend.js';
import type { ClusterResource } from './client/wire-types.js';

/** Pure: the row for `source` given the cluster's VMs and templates. */
export function resolveTemplate(source: ImageSource, vms: readonly ClusterResource[]): ImageResolution {
  if (source.kind !== 'Template') {
    return { ready: false, reason: Reason.UnsupportedSource, message: `Proxmox images must be kind Template (a template VMID), not ${source.kind}` };
  }
  if (!/^[1-9][0-9]{2,8}$/.test(source.ref)) return { ready: false, reason: Reason.ImageSourceNotFound, message: `ref "${source.ref}" is not a VMID` };
  const vmid = Number(source.ref);
  const template = vms.find((r) => r.type === 'qemu' && r.vmid === vmid);
  if (!template) return { ready: false, reason: Reason.ImageSourceNotFound, message: `no VM ${vmid} in the cluster` };
  if (template.template !== true) return { ready: false, reason: Reason.ImageSourceNotFound, message: `VM ${vmid} (${template.name ?? ''}) is not a template` };
  const nodes = new Set([template.node ?? '']);
  for (const other of vms) if (other.template === true && other.name !== undefined && other.name === template.name && other.node) nodes.add(other.node);
  return {
    ready: true,
    resolvedRef: String(vmid),
    message: `template ${template.name ?? vmid} on ${template.node ?? '?'}; clonable without a cross-node clone on ${[...nodes].sort().join(', ')}`,
  };
}
