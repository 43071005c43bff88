import { describe, expect, it } from 'vitest';
import { ALL_KINDS, INFRA_KINDS, INFRA_MACHINE_KINDS } from '../../../infra/api/kinds.js';
import { providerIDPolicy } from '../../../infra/install/admission-policies.js';
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
    '%s re-checks a reference on update only when it changed, or when its recheck says so',
    (_name, policy) => {
      const rendered = toReferencePolicy(policy);
      expect(rendered.operations).toEqual(['CREATE', 'UPDATE']);
      for (const [i, validation] of rendered.validations.entries()) {
        expect(validation.expression).toContain(`variables.ref${i} == variables.old${i}`);
        expect(validation.expression).toContain(`.check('get').allowed()`);
      }
      expect(rendered.variables?.some((v) => v.name === 'recheck')).toBe(policy.recheckWhen !== undefined);
    },
  );

  it("re-checks a Provider's credentials whenever its connection changes (a moved endpoint is a read of the credentials)", () => {
    expect(REFERENCE_POLICIES.find((p) => p.resources.includes('providers'))?.recheckWhen).toBe('object.spec.connection != oldObject.spec.connection');
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
