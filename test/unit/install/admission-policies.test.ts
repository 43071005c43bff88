import { describe, expect, it } from 'vitest';
import { ALL_KINDS, INFRA_KINDS, INFRA_MACHINE_KINDS } from '../../../infra/api/kinds.js';
import { ProviderSpec } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { providerIDPolicy } from '../../../infra/install/admission-policies.js';
import { PROVIDER_TENANT_SPEC_FIELDS, providerOwnerSpecFields } from '../../../infra/install/provider-owner.js';
import { controllerSecretGuardPolicy } from '../../../infra/install/controller-secret-guard.js';
import { REFERENCE_POLICIES, toReferencePolicy } from '../../../infra/install/reference-policies.js';
import { renderInstall } from '../../../infra/install/render.js';
import { templateImmutabilityPolicy } from '../../../infra/install/template-immutability.js';

interface SchemaNode {
  type?: string;
  description?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
}

/** Paths (from spec) of every object in a schema whose `name` names a Secret or ConfigMap. */
function referencePaths(node: SchemaNode, path: string[]): { path: string; what: 'Secret' | 'ConfigMap' }[] {
  const here: { path: string; what: 'Secret' | 'ConfigMap' }[] = [];
  const nameDoc = node.properties?.name?.description ?? '';
  const what = /\bConfigMap\b/.test(nameDoc) ? 'ConfigMap' : /\bSecret\b/.test(nameDoc) ? 'Secret' : undefined;
  if (what) here.push({ path: path.join('.'), what });
  const children = Object.entries(node.properties ?? {}).flatMap(([key, child]) => referencePaths(child, [...path, key]));
  const items = node.items ? referencePaths(node.items, [...path, '[]']) : [];
  return [...here, ...children, ...items];
}

describe('admission policies', () => {
  const fields = ALL_KINDS.flatMap((kind) => referencePaths(kind.spec as SchemaNode, ['spec']).map((f) => ({ kind, ...f })));

  it('finds the Secret and ConfigMap references the API has (the walk below is not vacuous)', () => {
    expect(fields.map((f) => `${f.kind.kind} ${f.path}`)).toEqual(
      expect.arrayContaining([
        'Provider spec.connection.credentialsRef',
        'VirtualMachine spec.userData.configMapRef',
        'VSphereMachineTemplate spec.template.spec.userDataSecretRef',
      ]),
    );
  });

  it('checks every field of every kind that names a Secret or ConfigMap against what the requester may get', () => {
    const uncovered = fields.filter(
      (f) =>
        !REFERENCE_POLICIES.some(
          (p) =>
            p.apiGroup === f.kind.group &&
            p.resources.includes(f.kind.plural) &&
            p.references.some((r) => r.field === f.path && r.resource === (f.what === 'Secret' ? 'secrets' : 'configmaps')),
        ),
    );
    expect(uncovered.map((f) => `${f.kind.kind} ${f.path} (${f.what})`)).toEqual([]);
  });

  it.each(REFERENCE_POLICIES.map((p) => [p.name, p] as const))(
    '%s re-checks a reference on update only when it is not kept as admitted, or when its recheck says so',
    (_name, policy) => {
      const rendered = toReferencePolicy(policy);
      expect(rendered.operations).toEqual(policy.ownerGate ? ['CREATE', 'UPDATE', 'DELETE'] : ['CREATE', 'UPDATE']);
      for (const i of policy.references.keys()) {
        const checks = rendered.validations.filter((v) => v.expression.startsWith(`variables.ref${i} == '' || (variables.kept${i}`));
        expect(checks.map((v) => v.expression.includes(`.check('get').allowed()`))).toEqual([true]);
        const kept = rendered.variables?.find((v) => v.name === `kept${i}`)?.expression;
        expect(kept).toContain("request.operation == 'UPDATE'");
        expect(kept).toContain(`== variables.ref${i}`);
      }
      expect(rendered.variables?.some((v) => v.name === 'recheck')).toBe(policy.recheckWhen !== undefined);
    },
  );

  it("re-checks a Provider's credentials whenever its connection changes (a moved endpoint is a read of the credentials)", () => {
    expect(REFERENCE_POLICIES.find((p) => p.resources.includes('providers'))?.recheckWhen).toBe('object.spec.connection != oldObject.spec.connection');
  });

  describe("a CAPI object's bootstrap Secret", () => {
    const policy = REFERENCE_POLICIES.find((p) => p.resources.includes('machines'));
    const rendered = policy && toReferencePolicy(policy);
    const variable = (name: string): string => rendered?.variables?.find((v) => v.name === name)?.expression ?? '';

    it.each([
      ['spec.bootstrap.dataSecretName', 'spec.infrastructureRef'],
      ['spec.template.spec.bootstrap.dataSecretName', 'spec.template.spec.infrastructureRef'],
    ])('%s is read only while %s names banlieue, and is new again when that reference starts to, or names another object', (field, via) => {
      const i = policy?.references.findIndex((r) => r.field === field) ?? -1;
      expect(policy?.references[i]?.handedOverBy).toEqual(via.split('.'));
      const viaPath = via
        .split('.')
        .map((p) => `.?${p}`)
        .join('');
      expect(variable(`ref${i}`).startsWith(`(object${viaPath}.?apiGroup.orValue('') == 'infrastructure.banlieue.io' || `)).toBe(true);
      expect(variable(`ref${i}`).endsWith(" : ''")).toBe(true);
      for (const f of ['apiGroup', 'apiVersion', 'kind', 'name']) {
        expect(variable(`kept${i}`)).toContain(`object${viaPath}.?${f}.orValue('') == oldObject${viaPath}.?${f}.orValue('')`);
      }
      expect(variable(`kept${i}`)).toContain(`oldObject${viaPath}.?apiGroup.orValue('') == 'infrastructure.banlieue.io'`);
    });
  });

  it("refuses any Secret on a machine template CAPI's topology controller generates, whoever asks (its patches are CAPI's manager's writes)", () => {
    const policy = REFERENCE_POLICIES.find((p) => p.name === 'banlieue-inframachine-references');
    const refused = policy?.references.filter((r) => r.refusedWhen).map((r) => [r.field, r.refusedWhen?.expression]);
    expect(refused).toEqual([['spec.template.spec.userDataSecretRef', "object.metadata.?labels[?'topology.cluster.x-k8s.io/owned'].hasValue()"]]);
    const rendered = policy && toReferencePolicy(policy);
    const validation = rendered?.validations.find((v) => v.expression.includes('topology.cluster.x-k8s.io/owned'));
    expect(validation?.expression).not.toContain('authorizer');
    expect(validation?.message).toContain("is generated by CAPI's topology controller");
  });

  describe("a Provider's owner", () => {
    const policy = REFERENCE_POLICIES.find((p) => p.resources.includes('providers'));
    const rendered = policy && toReferencePolicy(policy);
    const variable = (name: string): string => rendered?.variables?.find((v) => v.name === name)?.expression ?? '';

    it('is checked on UPDATE and DELETE, after the references, except while the namespace is deleted', () => {
      expect(rendered?.operations).toContain('DELETE');
      expect(rendered?.validations.at(-1)?.expression).toBe('!variables.ownerChange || variables.ownerAllowed');
      expect(variable('ownerChange')).toMatch(/^request.operation == 'DELETE' \? !has\(namespaceObject.metadata.deletionTimestamp\)/);
      // The references do not read the object a DELETE has not.
      for (const i of policy?.references.keys() ?? []) expect(variable(`ref${i}`)).toMatch(/^request.operation == 'DELETE' \? '' : /);
    });

    it('must change nothing but metadata labels and annotations and spec.paused: every other spec field, owner references, a finalizer taken off', () => {
      expect(PROVIDER_TENANT_SPEC_FIELDS).toEqual(['paused']);
      expect(providerOwnerSpecFields().sort()).toEqual(
        Object.keys(ProviderSpec.properties)
          .filter((f) => f !== 'paused')
          .sort(),
      );
      for (const field of providerOwnerSpecFields()) expect(variable('ownerChange')).toContain(`has(object.spec.${field}) == has(oldObject.spec.${field})`);
      expect(variable('ownerChange')).not.toContain('object.spec.paused');
      expect(variable('ownerChange')).toContain('has(object.metadata.ownerReferences) == has(oldObject.metadata.ownerReferences)');
      expect(variable('ownerChange')).toContain('oldObject.metadata.finalizers.exists(f, ');
      expect(variable('ownerChange')).not.toMatch(/labels|annotations/);
    });

    it("is whoever may get its credentials Secret as it was; without one, whoever may update its status (its host's identity, admins)", () => {
      expect(variable('ownerCredentials')).toBe("request.operation == 'CREATE' ? '' : oldObject.?spec.?connection.?credentialsRef.?name.orValue('')");
      expect(variable('ownerAllowed')).toContain(
        "authorizer.group('').resource('secrets').namespace(request.namespace).name(variables.ownerCredentials).check('get')",
      );
      expect(variable('ownerAllowed')).toContain(
        "authorizer.group('banlieue.io').resource('providers').subresource('status').namespace(request.namespace).name(request.name).check('update')",
      );
    });
  });

  it('guards spec.providerID of every InfraMachine kind and nothing else', () => {
    expect(providerIDPolicy().resources).toEqual(INFRA_MACHINE_KINDS.map((k) => k.plural));
    expect(providerIDPolicy().validations[0]?.expression).toContain(".subresource('providerid')");
  });

  it('keeps the spec of every template kind immutable, except in the dry run of CAPI topology (dry-run request and annotation, both)', () => {
    const policy = templateImmutabilityPolicy();
    expect(policy.resources).toEqual(INFRA_KINDS.filter((k) => k.kind.endsWith('Template')).map((k) => k.plural));
    expect(policy.operations).toEqual(['UPDATE']);
    expect(policy.validations.map((v) => v.expression)).toEqual(['object.spec == oldObject.spec']);
    const [skip] = policy.matchConditions ?? [];
    expect(skip?.expression).toContain('request.dryRun');
    expect(skip?.expression).toContain("'topology.cluster.x-k8s.io/dry-run'");
  });

  it("binds the controller's Secret guard to the controller's ServiceAccount in the install namespace", () => {
    const guard = controllerSecretGuardPolicy({ namespace: 'virt', serviceAccount: 'banlieue-controller' });
    expect(guard.matchConditions).toEqual([
      { name: 'controller-identity', expression: "request.userInfo.username == 'system:serviceaccount:virt:banlieue-controller'" },
    ]);
    expect(guard.operations).toEqual(['CREATE', 'UPDATE', 'DELETE']);
    const rendered = renderInstall({ namespace: 'virt', admissionPolicies: false }).flatMap((c) => c.objects);
    const policy = rendered.find((o) => o.kind === 'ValidatingAdmissionPolicy' && o.metadata.name === 'banlieue-controller-secret-writes');
    expect(JSON.stringify(policy)).toContain('system:serviceaccount:virt:banlieue-controller');
  });
});
