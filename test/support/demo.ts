// `make demo`: banlieue on a real local control plane (the steps are in
// demo-steps.ts). They run as a process group of their own, and whatever ends
// the demo (it finishes or crashes, Ctrl-C, SIGTERM, a closed stdout) stops
// every process of that group: etcd, kube-apiserver, kube-controller-manager,
// vcsim, the banlieue roles, a tools build in progress, and their children.
import { runAsProcessGroup } from './process-group.js';

process.exitCode = await runAsProcessGroup(process.execPath, ['--import', 'tsx', 'test/support/demo-steps.ts']);
