// The addressing of each class interface for one VM: static when the VM sets an
// address in spec.networkOverrides (gateway, nameservers and domain falling back
// to the class interface ipam), DHCP otherwise. A class interface in static mode
// without a per-VM address cannot work, nor can one in dhcp mode with one, nor
// can a name or domain that is no interface or DNS name. The schema refuses
// those, but an object stored before it did is reported here instead of
// reaching the guest.
import { BlockList, isIP } from 'node:net';
import { isDnsName, isInterfaceId } from '../../../infra/api/names.js';
import { type Ipam, type StaticAddress } from '../../../infra/api/addressing.js';
import type { VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { ClassInterface, VMClass } from '../../../infra/api/banlieue.io/v1alpha1/vm-class.js';

type NetworkOverride = NonNullable<VirtualMachine['spec']['networkOverrides']>[number];

export type NicAddressingResult =
  | { readonly ok: true; /** One per class interface, in class order; undefined is DHCP. */ readonly ipams: readonly (Ipam | undefined)[] }
  | { readonly ok: false; readonly message: string };

export function computeNicAddressing(vm: VirtualMachine, vmClass: VMClass): NicAddressingResult {
  const interfaces = vmClass.spec.network.interfaces;
  const overrides = vm.spec.networkOverrides ?? [];
  const stray = overrides.findIndex((o) => !interfaces.some((i) => i.name === o.name));
  if (stray >= 0) {
    return {
      ok: false,
      message: `spec.networkOverrides[${stray}].name "${overrides[stray]?.name ?? ''}" is not an interface of class "${vmClass.metadata.name ?? ''}"`,
    };
  }
  const unsafe = unsafeGuestName(overrides, vmClass);
  if (unsafe) return { ok: false, message: unsafe };
  const ipams: (Ipam | undefined)[] = [];
  for (const nic of interfaces) {
    const override = overrides.find((o) => o.name === nic.name);
    // The class says this interface takes its address from DHCP: a per-VM address would silently override it.
    if (override && nic.ipam?.mode === 'dhcp') {
      return { ok: false, message: `spec.networkOverrides sets a static address for interface "${nic.name}", whose class ipam mode is dhcp` };
    }
    if (override) {
      const address = effectiveStaticAddress(override, nic);
      const unreachable = gatewayOutsideSubnet(address);
      if (unreachable) return { ok: false, message: `interface "${nic.name}": ${unreachable}` };
      ipams.push({ static: address });
    } else if (nic.ipam?.mode === 'static') {
      return { ok: false, message: `spec.networkOverrides has no address for interface "${nic.name}", whose class ipam mode is static` };
    } else ipams.push(undefined);
  }
  return { ok: true, ipams };
}

/** A message for the first interface name or effective domain the guest must not be given, if any. */
function unsafeGuestName(overrides: readonly NetworkOverride[], vmClass: VMClass): string | undefined {
  const className = vmClass.metadata.name ?? '';
  const interfaces = vmClass.spec.network.interfaces;
  const badName = interfaces.findIndex((i) => !isInterfaceId(i.name));
  if (badName >= 0) {
    return `VMClass "${className}" spec.network.interfaces[${badName}].name ${JSON.stringify(interfaces[badName]?.name)} is not a Linux interface name`;
  }
  for (const [i, override] of overrides.entries()) {
    const nicIndex = interfaces.findIndex((nic) => nic.name === override.name);
    const field =
      override.static.domain !== undefined
        ? { at: `spec.networkOverrides[${i}].static.domain`, domain: override.static.domain }
        : { at: `VMClass "${className}" spec.network.interfaces[${nicIndex}].ipam.domain`, domain: interfaces[nicIndex]?.ipam?.domain };
    if (field.domain !== undefined && !isDnsName(field.domain)) return `${field.at} ${JSON.stringify(field.domain)} is not a DNS name`;
  }
  return undefined;
}

/** The override's address with gateway, nameservers and domain defaulted from the class interface. */
export function effectiveStaticAddress(override: NetworkOverride, nic: ClassInterface | undefined): StaticAddress {
  const gateway = override.static.gateway ?? nic?.ipam?.gateway;
  const nameservers = override.static.nameservers ?? nic?.ipam?.nameservers;
  const domain = override.static.domain ?? nic?.ipam?.domain;
  return {
    address: override.static.address,
    prefix: override.static.prefix,
    ...(gateway !== undefined ? { gateway } : {}),
    ...(nameservers !== undefined ? { nameservers: [...nameservers] } : {}),
    ...(domain !== undefined ? { domain } : {}),
  };
}

/**
 * Why the gateway of `address` cannot be reached from it, if it cannot: of the
 * other IP family, or outside address/prefix (an IPv6 link-local router is
 * fine). Checked here, not only in the schema: the gateway may come from the
 * class, and the CEL cost budget does not allow a subnet check.
 */
export function gatewayOutsideSubnet(address: StaticAddress): string | undefined {
  const gateway = address.gateway;
  const family = isIP(address.address);
  if (gateway === undefined || family === 0 || isIP(gateway) === 0) return undefined;
  if (isIP(gateway) !== family) return `gateway ${gateway} is not of the IP family of address ${address.address}`;
  const ipFamily = family === 4 ? 'ipv4' : 'ipv6';
  if (address.prefix > (family === 4 ? 32 : 128)) return undefined; // The schema refuses it.
  if (family === 6 && LINK_LOCAL_V6.check(gateway, 'ipv6')) return undefined;
  const subnet = new BlockList();
  subnet.addSubnet(address.address, address.prefix, ipFamily);
  return subnet.check(gateway, ipFamily) ? undefined : `gateway ${gateway} is outside the subnet ${address.address}/${address.prefix}`;
}

const LINK_LOCAL_V6 = new BlockList();
LINK_LOCAL_V6.addSubnet('fe80::', 10, 'ipv6');
