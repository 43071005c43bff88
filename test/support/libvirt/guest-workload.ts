// The workload cluster the guests of a TCG host (tcg-host.ts) join: a control
// plane of the test's own, started joinable for the guests' network gateway,
// its API server offered there (listen-in-namespace.ts), made joinable by
// kubeadm run inside the guests' namespaces (joinable-control-plane.ts).
import { GUEST_LIBVIRT_NETWORK, type QemuHost } from '../../peers/libvirt/qemu-host.js';
import type { KubeTools } from '../control-plane.js';
import { JoinableControlPlane, type JoinCommand } from '../joinable-control-plane.js';
import { listenInNamespace, type NamespaceListener } from '../listen-in-namespace.js';
import { PlaneClient } from '../plane-client.js';

/** Where guests dial the workload API server: kubeadm's port on the libvirt network's gateway. */
export const GUEST_API_PORT = 6443;

export interface GuestWorkload {
  readonly plane: JoinableControlPlane;
  readonly api: PlaneClient;
  readonly listener: NamespaceListener;
  /** The join `kubeadm token create --print-join-command` printed. */
  readonly join: JoinCommand;
}

export async function startGuestWorkload(tools: KubeTools, host: QemuHost, kubeadm: string): Promise<GuestWorkload> {
  const plane = await JoinableControlPlane.start(tools, { guestAddress: GUEST_LIBVIRT_NETWORK.gateway, guestPort: GUEST_API_PORT });
  const listener = await listenInNamespace(host, { address: GUEST_LIBVIRT_NETWORK.gateway, port: GUEST_API_PORT }, plane.port);
  const join = await plane.makeJoinable(kubeadm, (command, args, options) => host.spawn(command, args, options));
  return { plane, api: new PlaneClient(plane.kubeconfigPath), listener, join };
}
