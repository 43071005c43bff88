// Filter 1: the Providers a VM may use — those its providerSelector matches,
// less the paused ones (a paused Provider reconciles no machines) and those
// being deleted (they take no new VM, docs/adr/0019).
import type { Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { VirtualMachine } from '../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { compareText } from './compare-text.js';
import { formatSelector, matchesSelector } from './label-selector.js';

export type ProviderSelection = { readonly ok: true; readonly providers: readonly Provider[] } | { readonly ok: false; readonly message: string };

/** The usable Providers among `providers` (the VM's namespace) by name, or why there are none. */
export function selectProviders(vm: VirtualMachine, providers: readonly Provider[]): ProviderSelection {
  const where = `namespace ${vm.metadata.namespace ?? ''}`;
  if (providers.length === 0) return { ok: false, message: `No Provider exists in ${where}` };
  const selector = vm.spec.placement?.providerSelector;
  const selected = providers
    .filter((p) => matchesSelector(p.metadata.labels, selector))
    .sort((a, b) => compareText(a.metadata.name ?? '', b.metadata.name ?? ''));
  if (selected.length === 0) {
    const count = providers.length === 1 ? 'the 1 Provider' : `the ${providers.length} Providers`;
    return { ok: false, message: `spec.placement.providerSelector ${formatSelector(selector)} matches none of ${count} in ${where}` };
  }
  const usable = selected.filter((p) => p.spec.paused !== true && !p.metadata.deletionTimestamp);
  if (usable.length === 0) {
    const names = selected.map((p) => p.metadata.name ?? '').join(', ');
    return { ok: false, message: `Every Provider matching spec.placement.providerSelector in ${where} is paused or being deleted: ${names}` };
  }
  return { ok: true, providers: usable };
}
