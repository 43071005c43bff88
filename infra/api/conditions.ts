// Condition types and reasons: the vocabulary users read in `kubectl describe`.
// Call sites use these members, never string literals (STYLE §2 Naming).

/** Condition types. */
export const ConditionType = {
  /** Summary: the object does what its spec asks. Every kind with status has it. */
  Ready: 'Ready',
  /** VirtualMachine: a (Provider, failure domain) was chosen. False says why nothing fits. */
  Scheduled: 'Scheduled',
  /** VirtualMachine: the current placement still matches the spec; False when it drifted. */
  PlacementValid: 'PlacementValid',
  /** VirtualMachine: copy of the infrastructure object's Ready condition. */
  InfrastructureReady: 'InfrastructureReady',
  /** Provider: the backend endpoint answered with the given credentials. */
  ProviderReachable: 'ProviderReachable',
  /** Provider: no older Provider names the same backend endpoint. False (EndpointShared) says which does. */
  EndpointExclusive: 'EndpointExclusive',
  /** VMImage: the image is usable on every Provider that reported a row. */
  ImageReady: 'ImageReady',
  /** Any kind honouring spec.paused or the cluster.x-k8s.io/paused annotation. */
  Paused: 'Paused',
} as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType];

/** Reasons. A reason says what is true, so users can act on it. */
export const Reason = {
  /** Everything converged. */
  Reconciled: 'Reconciled',
  /** Scheduled=True: a placement was chosen. */
  Scheduled: 'Scheduled',
  /** No Provider in the namespace matches spec.placement.providerSelector. Fix the selector or label a Provider. */
  NoProviderMatched: 'NoProviderMatched',
  /** Providers matched but none of their failure domains fits; the message lists why, per candidate. */
  NoFailureDomainMatched: 'NoFailureDomainMatched',
  /** The VMImage is not ready on any matching Provider yet. Wait, or check VMImage status.perProvider. */
  ImageNotReady: 'ImageNotReady',
  /** The class asks for efi-secure but no failure domain offers efiSecureBoot. */
  FirmwareUnsupported: 'FirmwareUnsupported',
  /** Every candidate is excluded by a required anti-affinity term. */
  AntiAffinityUnsatisfied: 'AntiAffinityUnsatisfied',
  /** No failure domain that fits otherwise has room (CPUs, memory or storage its Provider publishes); the message names each one's scarce resource. */
  InsufficientCapacity: 'InsufficientCapacity',
  /** spec.classRef names a VMClass that does not exist. Create it or fix the name. */
  ClassNotFound: 'ClassNotFound',
  /** spec.imageRef names a VMImage that does not exist. Create it or fix the name. */
  ImageNotFound: 'ImageNotFound',
  /** The user-data Secret or ConfigMap (or its key) does not exist. */
  UserDataNotFound: 'UserDataNotFound',
  /**
   * The provider's identity may not read the user-data Secret: a host reads only the Secrets
   * banlieue's controller lists for its namespace's machines still to be created. Tried again;
   * lasting, it means the controller does not run or may not update that Role.
   */
  UserDataNotReadable: 'UserDataNotReadable',
  /**
   * Scheduled=False: the Secret `<vm>-user-data` exists and is not this VirtualMachine's rendered
   * user-data (not of type banlieue.io/user-data, or not controlled by this VirtualMachine), or a field
   * the controller writes in it was changed by another writer. It is left untouched and no
   * infrastructure machine refers to it; the message says which. Delete or rename that Secret,
   * or give the VirtualMachine another name.
   */
  UserDataSecretConflict: 'UserDataSecretConflict',
  /**
   * Scheduled=False: an infrastructure machine of the VirtualMachine's name exists and is not
   * controlled by this VirtualMachine, or a field the controller writes in it was changed by
   * another writer. It is left untouched (never taken over or deleted); the message says which.
   */
  InfraMachineConflict: 'InfraMachineConflict',
  /**
   * VirtualMachine Scheduled=False: the API server refused to create its infrastructure machine or
   * its user-data Secret (a value that kind does not take); the message has the API server's words,
   * naming the field. Fix the VirtualMachine (or its VMClass/VMImage) accordingly. Tried again ever
   * less often, up to every 5 minutes, and at once when the VirtualMachine changes.
   */
  CreateRefused: 'CreateRefused',
  /** Providers matched but publish no failure domains yet. */
  NoFailureDomains: 'NoFailureDomains',
  /** The infrastructure object could not be built from class, image and failure domain; see the message. */
  InfraBuildFailed: 'InfraBuildFailed',
  /** Ready=False while scheduling has not succeeded. */
  Scheduling: 'Scheduling',
  /** Ready=False while PlacementValid is False. */
  PlacementInvalid: 'PlacementInvalid',
  /** Ready=False while the infrastructure object is not Ready. */
  InfrastructureNotReady: 'InfrastructureNotReady',
  /** The infrastructure object has no Ready condition yet. */
  Pending: 'Pending',
  /** spec.paused or the cluster.x-k8s.io/paused annotation is set; nothing is reconciled. */
  Paused: 'Paused',
  /** Paused=False: reconciliation is active. */
  NotPaused: 'NotPaused',
  /**
   * VirtualMachine Ready=False (observedGeneration not advanced): its infrastructure machine refused
   * the spec the VirtualMachine now maps to, because that field cannot change once the VM was created
   * (its class's firmware or interfaces, a folder, a smaller disk). The VM runs on as it was;
   * the message names the field. Set the VirtualMachine back, or delete and recreate it.
   */
  SpecNotApplied: 'SpecNotApplied',
  /** A static address in spec.networkOverrides is already held by another VirtualMachine. */
  DuplicateAddress: 'DuplicateAddress',
  /**
   * PlacementValid=False, with a Warning Event: the VirtualMachine controls infrastructure machines
   * of several kinds. banlieue makes one only, so someone else made the others; nothing is deleted.
   * The message names them: delete the one that is not wanted (its VM is deleted with it).
   */
  SeveralMachines: 'SeveralMachines',
  /**
   * PlacementValid=False: the Provider the VM runs on no longer exists or is being deleted, so the
   * VM cannot stay there. spec.migrationPolicy says what happens (manual: annotate
   * banlieue.io/migrate=true to recreate it elsewhere, which destroys its disks).
   */
  ProviderGone: 'ProviderGone',
  /**
   * PlacementValid=False: the failure domain the VM runs in is no longer published by its Provider
   * and its infrastructure machine reports the backend unreachable. spec.migrationPolicy says what
   * happens.
   */
  FailureDomainGone: 'FailureDomainGone',
  /**
   * PlacementValid=False: spec.placement (a selector or a required anti-affinity term) was changed
   * since the VM was placed and now excludes where it runs; the message names the field.
   * spec.migrationPolicy says what happens; set spec.placement back to keep it without a warning.
   */
  PlacementExcluded: 'PlacementExcluded',
  /**
   * PlacementValid=False, with a Warning Event: the VM is about to be recreated elsewhere (its
   * placement is impossible and spec.migrationPolicy allows moving it): its infrastructure machine,
   * the backend VM and its disks are deleted on the next pass, and a new one is cloned from its
   * image where the message says.
   */
  Recreating: 'Recreating',
  /**
   * PlacementValid=False: the VM would be recreated elsewhere, but as many VMs of its namespace as
   * the controller allows per minute (--max-recreates-per-minute) were recreated already; it is
   * tried again when the message says. Protects a namespace from a mass re-clone.
   */
  RecreateDeferred: 'RecreateDeferred',
  /**
   * PlacementValid=True: the VM runs in a failure domain its Provider no longer offers to new VMs
   * (withdrawn over a capacity threshold, or no longer discovered): it keeps running there, and
   * nothing new is placed there. The message says why, from the Provider's status.
   */
  FailureDomainWithdrawn: 'FailureDomainWithdrawn',
  /** PlacementValid=True: the placement matches the spec. */
  PlacementMatches: 'PlacementMatches',
  /**
   * Warning Event on a VirtualMachine: status.scheduled did not say where the VM runs (another
   * writer of the status subresource changed it, or it was never written). The controller
   * rewrote it from the infrastructure machine the VM controls, which is where the VM runs;
   * the VM was not moved. Find out who writes VirtualMachine status: only the controller should.
   */
  ScheduledRestored: 'ScheduledRestored',
  /**
   * Provider Ready=False, written by the controller: no provider role of the Provider's class is
   * running (its Lease is missing, released, or not renewed within its duration; for a class that
   * runs on its hosts, no host has served the Provider yet). The message names the role and how to
   * run it. The role's own Ready replaces it as soon as the role serves the Provider.
   */
  NoProviderRole: 'NoProviderRole',
  /** Provider: the credentials Secret does not exist. Create it in the Provider's namespace. */
  SecretMissing: 'SecretMissing',
  /** Provider: the credentials Secret lacks a required key or holds an invalid value. */
  SecretInvalid: 'SecretInvalid',
  /** Provider: the endpoint did not answer, refused the credentials, or failed TLS verification. */
  ConnectFailed: 'ConnectFailed',
  /** Provider: connected, but reading the inventory failed. */
  InventoryFailed: 'InventoryFailed',
  /** Provider: a declared storage or network class is usable in no failure domain. */
  CapabilitiesIncomplete: 'CapabilitiesIncomplete',
  /**
   * Provider Ready=False (ProviderReachable stays True): the backend is over a capacity threshold
   * its operator set (e.g. a Cloud Hypervisor host's memory or disk), so its failure domain is
   * withdrawn and no new VM is placed there; VMs already there run on. The message names the
   * threshold. Free capacity or raise the threshold; the next discovery publishes it again.
   */
  CapacityExceeded: 'CapacityExceeded',
  /**
   * Provider EndpointExclusive=False, with a Warning Event: an older Provider (the message names it)
   * names the same backend endpoint (compared with scheme and host lower-case, the default port
   * written out, no trailing slash), so both would manage one inventory and their sweeps and
   * adoptions could fight. Nothing is changed on either; delete one of them, or point it elsewhere.
   */
  EndpointShared: 'EndpointShared',
  /**
   * InfraMachine Ready=False before its VM is created: a MAC address its spec fixes is already held
   * by another machine on the same backend endpoint (one whose VM may exist, or an older one; the
   * message names it). No VM is created with it. Give this machine another MAC, or none.
   */
  MacAddressInUse: 'MacAddressInUse',
  /** InfraMachine: spec.providerRef names no Provider of this backend, or no Provider publishes the failure domain. */
  ProviderNotFound: 'ProviderNotFound',
  /** InfraMachine: no failure domain yet (spec, owning CAPI Machine) and the Provider offers more than one. */
  WaitingForFailureDomain: 'WaitingForFailureDomain',
  /** InfraMachine: the failure domain is not published by the Provider. */
  FailureDomainNotFound: 'FailureDomainNotFound',
  /**
   * InfraMachine Ready=False (observedGeneration not advanced): spec.providerRef, spec.failureDomain
   * or the owning CAPI Machine's failure domain names a place other than where the VM was created
   * (status.placement). The VM is not moved: it is converged, looked for and deleted where it was
   * created. Set the field back, or delete the machine to replace it elsewhere. Admission refuses
   * such a spec edit; this reports what it cannot see (a CAPI Machine's failure domain).
   */
  PlacementChanged: 'PlacementChanged',
  /**
   * Provider being deleted: machines still have VMs on it (the message names them), so its
   * finalizer stays until they are deleted; the Provider keeps serving them meanwhile.
   */
  ProviderInUse: 'ProviderInUse',
  /**
   * Normal Event on a Provider: a provider role shard (`--provider-selector`) whose selector matches
   * its labels took it over (ADR 33); the message names the shard. Its machines are that shard's now.
   * On a Namespace: a controller shard (`--namespace-selector`) took it, and its objects, over.
   */
  ShardClaimed: 'ShardClaimed',
  /**
   * Normal Event on a Provider: the shard serving it let it go, its selector no longer matching the
   * Provider's labels, once no pass of its own on the Provider or its machines was under way; the
   * shard whose selector matches takes it over. None matching: no shard serves it until one does.
   * On a Namespace: the same of a controller shard and the namespace's objects.
   */
  ShardReleased: 'ShardReleased',
  /**
   * Normal Event on an InfraMachine being deleted that never created anything on a backend (no
   * status.placement, no task, never provisioned), e.g. because its failure domain was never
   * published: its finalizer goes without a backend call.
   */
  NothingCreated: 'NothingCreated',
  /** InfraMachine: the owning CAPI Machine has no spec.bootstrap.dataSecretName yet. */
  WaitingForBootstrapData: 'WaitingForBootstrapData',
  /**
   * InfraMachine: the backend refused to create or configure the VM (a template, folder or port group
   * it does not have, a name it does not take; see the message). Tried again ever less often, up to
   * every few minutes, and at once when the machine's spec changes: fix the spec or the backend.
   */
  ProvisionFailed: 'ProvisionFailed',
  /**
   * InfraMachine Ready=False, nothing cloned: spec.template names no template the Provider lets
   * machines clone. There is none of that name or path, or it is a VM that is not a template,
   * which is cloned only where the Provider's admin sets spec.vsphere.allowCloneFromVirtualMachines
   * (the message does not say which, so it tells nobody what VMs exist). Fix spec.template, make
   * the VM a template, or have the admin opt in.
   */
  TemplateNotFound: 'TemplateNotFound',
  /**
   * InfraMachine: its spec names a backend object (datastore, bridge, node…) its Provider does not
   * publish (failure domain raw facts, capability class targets, spec.allowedTargets); nothing is created.
   */
  TargetNotPublished: 'TargetNotPublished',
  /** InfraMachine: spec.providerID is not the one the provider derives for this machine and no VM of this machine has it; only the provider writes spec.providerID. */
  ProviderIDNotDerived: 'ProviderIDNotDerived',
  /** InfraMachine: the VM with spec.providerID's UUID is not this machine's (no or another ownership mark); it is left alone. */
  VMNotOwned: 'VMNotOwned',
  /** InfraMachine: a backend task creating the VM (status.taskRef) is running; nothing to do but wait. */
  Provisioning: 'Provisioning',
  /**
   * InfraMachine Ready=False: the guest was asked to power off (status.taskRef says when) and has
   * until the backend's grace period to do so, after which the VM is stopped; nothing to do but wait.
   */
  Stopping: 'Stopping',
  /**
   * InfraMachine Ready=False while a restart asked for in spec.restartRequestedAt runs (status.restart
   * says whether the guest is shutting down or the VM powering on again), and the Normal Event when
   * one begins. Nothing to do but wait.
   */
  Restarting: 'Restarting',
  /** Normal Event on an InfraMachine: the restart asked for in spec.restartRequestedAt is done (status.restart Restarted). */
  Restarted: 'Restarted',
  /**
   * Normal Event on an InfraMachine: a restart asked for in spec.restartRequestedAt was not carried
   * out, as the VM was to be off (spec.desiredPowerState) or had not booted yet (status.restart Skipped).
   */
  RestartSkipped: 'RestartSkipped',
  /**
   * Warning Event on an InfraMachine: the VM stopped without banlieue stopping it (it crashed, was
   * killed or its process exited) and was started again as spec.desiredPowerState asks. The
   * backend's status says when (e.g. status.lastVmmExit); its logs say why.
   */
  VMRestarted: 'VMRestarted',
  /**
   * InfraMachine Ready=False before the VM is created: an interface takes its address from a CAPI
   * IPAM pool (addressesFromPools) and the IPAddressClaim has no bound IPAddress yet. The message
   * names the claim; check that an IPAM provider serves the pool and that it has free addresses.
   */
  WaitingForIPAddress: 'WaitingForIPAddress',
  /**
   * InfraMachine Ready=False: an IPAddressClaim could not be created or read (e.g. CAPI's IPAM CRDs
   * are not installed, or its bound IPAddress is not a usable address); see the message.
   */
  IPAddressClaimFailed: 'IPAddressClaimFailed',
  /** Normal Event on an InfraMachine being deleted: its VM is gone and its IPAddressClaims were deleted, releasing their addresses. */
  IPAddressesReleased: 'IPAddressesReleased',
  /** InfraMachine: the VM is on; no IP address reported by the guest yet. */
  WaitingForAddress: 'WaitingForAddress',
  /** InfraMachine: the provisioned VM no longer exists on the backend; it is not re-created. Delete the machine to replace it. */
  BackendMissing: 'BackendMissing',
  /**
   * InfraMachine Ready=False from the first pass of a deletion until the finalizer goes: the VM is
   * being removed from the backend (the message says what is awaited). Nothing to do but wait.
   */
  Deleting: 'Deleting',
  /**
   * Normal Event on an InfraMachine (and its VirtualMachine) deleted with spec.deletionPolicy
   * Retain: its VM was left on the backend as it was, without banlieue's ownership mark; the
   * message names it. banlieue no longer manages it: it is the backend operator's.
   */
  VMRetained: 'VMRetained',
  /** InfraMachine: being deleted; the VM could not be removed yet (see the message). */
  DeletionFailed: 'DeletionFailed',
  /**
   * Provider or InfraMachine Ready=False, with a Warning Event: the API server refused the status a
   * pass found (a value its schema does not take, e.g. more failure domains than a Provider status
   * holds); the message has its words, naming the field. The rest of the status stays as last
   * written. An inventory beyond banlieue's limits, or a bug of banlieue: report it.
   */
  StatusRefused: 'StatusRefused',
  /** VMImage row: the backend has no image of that reference (e.g. no vSphere template of that name). */
  ImageSourceNotFound: 'ImageSourceNotFound',
  /** VMImage row: the source kind is not one this backend can use (e.g. an ISO for vSphere). */
  UnsupportedSource: 'UnsupportedSource',
  /** VMImage row: the backend answered the lookup with an error; see the message. */
  LookupFailed: 'LookupFailed',
  /** VMImage row: a Url source is being downloaded to the backend; the row turns ready when it is complete and verified. */
  ImageDownloading: 'ImageDownloading',
  /** VMImage row: the downloaded Url image does not match spec.sources[].checksum; it was discarded. Fix the checksum or the URL. */
  ImageChecksumMismatch: 'ImageChecksumMismatch',
  /**
   * VMImage row: the host refuses this Url source without downloading anything: it is not https, or
   * it has no spec.sources[].checksum (the message says which). Use an https URL with a checksum; a
   * lab host may opt in to either in its host config (docs/cloud-hypervisor.md).
   */
  ImageUrlRefused: 'ImageUrlRefused',
  /** VMImage row: the server redirected the download to another origin (scheme, host, port), which was not followed; nothing was kept. Use the URL it redirects to. */
  ImageRedirectRefused: 'ImageRedirectRefused',
  /** VMImage row: the Url image is larger than the host's cap (urlImages.maxSizeMiB); the download was stopped and nothing was kept. */
  ImageTooLarge: 'ImageTooLarge',
  /**
   * VMImage row: the image's header names another file the VMM or qemu-img would open on the host
   * (a qcow2 backing or external data file, or a QED or VMDK image); nothing was kept. Publish a
   * self-contained raw or qcow2 image (`qemu-img convert -O qcow2`).
   */
  ImageHasBackingFile: 'ImageHasBackingFile',
  /** InfraCluster: no Provider matched providerRefs / providerSelector. */
  NoProviders: 'NoProviders',
  /** VMImage: no Provider has reported a row yet. */
  NoProviderRows: 'NoProviderRows',
  /** VMImage: at least one Provider row is not ready. */
  ImageNotReadyOnProvider: 'ImageNotReadyOnProvider',
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];
