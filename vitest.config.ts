import { defineConfig } from 'vitest/config';

// Tiers (STYLE §2 Tests): unit (pure, seconds), integration (real kube-apiserver
// started by the global setup), peers (backend clients against real peers),
// contract (real CAPI manager and clusterctl), package (npm pack + consumer app),
// release (make image, binary, release, image-push), e2e (real guests that become
// Kubernetes nodes; `make e2e-nodes`, not part of `make test`).
export default defineConfig({
  test: {
    projects: [
      {
        // No servers; the timeout is only a ceiling for a machine busy with other lanes (the lint
        // tests run ESLint with type information, seconds of CPU each).
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 60_000 },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // Suites share one control plane; each uses its own namespace.
          fileParallelism: false,
          // One module graph for all suites, one after another: each file re-importing the shared modules
          // and rebuilding the CLI bundle (test/support/bundles.ts) cost minutes of CPU per run. The
          // suites keep their state in their own files and mock no module.
          isolate: false,
        },
      },
      {
        // One folder per backend, each file starting its own peer (loopback ports or
        // unix sockets): vsphere/ on vcsim, libvirt/ on real libvirtd (test and QEMU
        // drivers), proxmox/ on test/sims/proxmox, cloud-hypervisor/ on
        // test/sims/cloud-hypervisor and, with CLOUD_HYPERVISOR_BIN, the real VMM.
        test: { name: 'peers', include: ['test/peers/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 600_000 },
      },
      {
        // The CAPI contract e2e builds its own control plane (or uses a kind cluster).
        test: { name: 'contract', include: ['test/contract/**/*.test.ts'], testTimeout: 180_000, hookTimeout: 600_000, fileParallelism: false },
      },
      {
        test: { name: 'package', include: ['test/package/**/*.test.ts'], testTimeout: 300_000, hookTimeout: 300_000 },
      },
      {
        // The release build through make (build/README.md): image, binary, release assets, push.
        // Builds share target/ and a lock; one file at a time.
        test: { name: 'release', include: ['test/release/**/*.test.ts'], testTimeout: 600_000, hookTimeout: 1_800_000, fileParallelism: false },
      },
      {
        // Guests booted from the node image (test/tools/node-image.sh) under TCG join a control plane
        // of the test's own; banlieue's objects live on the global setup's. Minutes per guest.
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 3_600_000,
          hookTimeout: 1_800_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
