// PropertyCollector reads (RetrievePropertiesEx + ContinueRetrievePropertiesEx)
// and the container-view listing every inventory walk is built on.
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { XmlFields } from './soap-envelope.js';
import type { VimInvoker } from './session.js';
import type { ManagedObjectReference } from './vim-types.js';
import { localName, type XmlElement } from './xml-element.js';
import { moRefFields, toMoRef, typedFields } from './wire-values.js';

export interface PropertySpec {
  readonly type: string;
  /** Property paths, e.g. `name`, `runtime.powerState`. */
  readonly pathSet: readonly string[];
}

export interface TraversalSpec {
  readonly name?: string;
  readonly type: string;
  readonly path: string;
  /** Leave the traversed-to objects themselves out of the result. @default false */
  readonly skip?: boolean;
  readonly selectSet?: readonly TraversalSpec[];
}

export interface ObjectSpec {
  readonly obj: ManagedObjectReference;
  /** Leave `obj` itself out of the result (only what selectSet reaches). @default false */
  readonly skip?: boolean;
  readonly selectSet?: readonly TraversalSpec[];
}

export interface PropertyFilterSpec {
  readonly propSet: readonly PropertySpec[];
  readonly objectSet: readonly ObjectSpec[];
  /** An object of objectSet that does not exist is left out instead of faulting the call. @default false */
  readonly reportMissingObjectsInResults?: boolean;
}

/** One object's properties. A path the object has no value for is in neither map. */
export interface ObjectContent {
  readonly obj: ManagedObjectReference;
  /** `val` elements by path; decode with wire-values (their `xsiType` names the type). */
  readonly props: ReadonlyMap<string, XmlElement>;
  /** Paths the server could not read, with the fault type it gave. */
  readonly missing: ReadonlyMap<string, string>;
}

export interface RetrieveOptions {
  /** Page size the server may use; the collector follows every page. @default server's choice */
  readonly maxObjects?: number;
}

export interface ListOptions extends RetrieveOptions {
  /** Descend into child folders, datacenters, clusters… @default true */
  readonly recursive?: boolean;
}

export class PropertyCollector {
  constructor(private readonly vim: VimInvoker) {}

  /** RetrievePropertiesEx, then ContinueRetrievePropertiesEx until no token is left. */
  async retrieve(specSet: readonly PropertyFilterSpec[], options: RetrieveOptions = {}): Promise<ObjectContent[]> {
    const collector = this.vim.serviceContent.propertyCollector;
    const first = await this.vim.invoke('RetrievePropertiesEx', collector, {
      specSet: specSet.map(filterSpecFields),
      options: options.maxObjects === undefined ? {} : { maxObjects: options.maxObjects },
    });
    const objects: ObjectContent[] = [];
    let page = first.child('returnval');
    while (page !== undefined) {
      objects.push(...page.childrenNamed('objects').map(toObjectContent));
      const token = page.childText('token');
      if (token === undefined) break;
      page = (await this.vim.invoke('ContinueRetrievePropertiesEx', collector, { token })).child('returnval');
    }
    return objects;
  }

  /** The properties of one object; BackendError NotFound when it does not exist. */
  async retrieveOne(obj: ManagedObjectReference, pathSet: readonly string[]): Promise<ObjectContent> {
    const [content] = await this.retrieve([{ propSet: [{ type: obj.type, pathSet }], objectSet: [{ obj }] }]);
    if (content === undefined) throw new BackendError(BackendErrorKind.NotFound, `${obj.type} ${obj.value} not found`);
    return content;
  }

  /**
   * Every object of the propSet types under `root` (a folder, datacenter,
   * cluster…) with their paths, through a ContainerView destroyed afterwards.
   * One PropertySpec per type: a path a type lacks faults the whole call.
   */
  async listManagedObjects(root: ManagedObjectReference, propSet: readonly PropertySpec[], options: ListOptions = {}): Promise<ObjectContent[]> {
    const types = [...new Set(propSet.map((p) => p.type))];
    const view = await this.createContainerView(root, types, options.recursive ?? true);
    try {
      return await this.retrieve([{ propSet, objectSet: [{ obj: view, skip: true, selectSet: [{ type: 'ContainerView', path: 'view' }] }] }], options);
    } finally {
      await this.destroyView(view);
    }
  }

  /**
   * ViewManager.CreateContainerView. Types are matched exactly by vcsim but with
   * subtypes by vCenter (`Network` includes DistributedVirtualPortgroup there),
   * so callers name every concrete type they want.
   */
  async createContainerView(root: ManagedObjectReference, types: readonly string[], recursive: boolean): Promise<ManagedObjectReference> {
    const response = await this.vim.invoke('CreateContainerView', this.vim.serviceContent.viewManager, {
      container: moRefFields(root),
      type: [...types],
      recursive,
    });
    const ref = response.child('returnval');
    if (ref === undefined) throw new Error('CreateContainerView: no view in the response');
    return toMoRef(ref);
  }

  async destroyView(view: ManagedObjectReference): Promise<void> {
    try {
      await this.vim.invoke('DestroyView', view);
    } catch {
      // Not worth failing a read for: views belong to the session and the server
      // frees them at logout or expiry.
    }
  }
}

export function filterSpecFields(spec: PropertyFilterSpec): XmlFields {
  return {
    propSet: spec.propSet.map((p) => ({ type: p.type, pathSet: [...p.pathSet] })),
    objectSet: spec.objectSet.map((o) => ({
      obj: moRefFields(o.obj),
      skip: o.skip ?? false,
      selectSet: o.selectSet?.map(traversalFields),
    })),
    reportMissingObjectsInResults: spec.reportMissingObjectsInResults,
  };
}

function traversalFields(spec: TraversalSpec): XmlFields {
  return typedFields('TraversalSpec', {
    name: spec.name,
    type: spec.type,
    path: spec.path,
    skip: spec.skip ?? false,
    selectSet: spec.selectSet?.map(traversalFields),
  });
}

function toObjectContent(element: XmlElement): ObjectContent {
  const obj = element.child('obj');
  if (obj === undefined) throw new Error('ObjectContent without obj');
  const props = new Map<string, XmlElement>();
  for (const prop of element.childrenNamed('propSet')) {
    const name = prop.childText('name');
    const val = prop.child('val');
    if (name !== undefined && val !== undefined) props.set(name, val);
  }
  const missing = new Map<string, string>();
  for (const miss of element.childrenNamed('missingSet')) {
    const path = miss.childText('path');
    const faultType = miss.child('fault')?.child('fault')?.xsiType;
    if (path !== undefined) missing.set(path, faultType === undefined ? 'SystemError' : localName(faultType));
  }
  return { obj: toMoRef(obj), props, missing };
}
