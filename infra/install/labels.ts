import { APP_NAME, Label } from '../api/well-known.js';

/** Labels on every object of a component (controller, provider-vsphere, crds, ...). */
export function componentLabels(component: string): Record<string, string> {
  return { [Label.name]: APP_NAME, [Label.component]: component, [Label.partOf]: APP_NAME };
}

/** The subset that selects a component's pods; stable across upgrades. */
export function selectorLabels(component: string): Record<string, string> {
  return { [Label.name]: APP_NAME, [Label.component]: component };
}
