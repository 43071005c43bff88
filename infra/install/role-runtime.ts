// How Node runs a role, told by its environment (the image is one executable,
// which takes Node's options from NODE_OPTIONS only). The Deployments carry it,
// and the tests and `make bench` start their roles with it, so that what they
// measure is what an install runs. Measured on the vSphere bench (50 VMs): the
// live heap of a role is ~20 MiB; what made a role's RSS 120–140 MiB was slack:
// V8's young generation (up to 3 × 16 MiB semi-spaces by default, refilled
// between scavenges) and glibc's per-thread malloc arenas (one per GC and
// libuv thread, each kept once touched).

/** The memory a role's container requests and may use. */
export const ROLE_MEMORY = { requestMiB: 128, limitMiB: 512 } as const;

/** Share of the container's limit the V8 old generation may take: the rest is code, buffers and the young generation. */
const HEAP_SHARE = 0.75;

/** The environment variables, with their values, that a role of a container limited to `limitMiB` runs with. */
export function roleRuntimeEnv(limitMiB: number = ROLE_MEMORY.limitMiB): Record<string, string> {
  return {
    // A 1 MiB semi-space scavenges more often, each scavenge as cheap (a role's young objects are short-lived
    // JSON); the old-generation cap sits under the container limit, so V8 collects hard before the kernel kills.
    NODE_OPTIONS: `--max-semi-space-size=1 --max-old-space-size=${Math.floor(limitMiB * HEAP_SHARE)}`,
    // Two malloc arenas, not eight per core: the role's threads rarely allocate at once.
    MALLOC_ARENA_MAX: '2',
  };
}
