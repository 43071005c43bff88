# banlieue — `make help` lists the targets.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VERSION := $(shell node -p "require('./package.json').version")
CLUSTERCTL_RELEASE_TAG ?= v$(VERSION)
RELEASE_DIR := target/clusterctl/release
NPM_STAMP := node_modules/.install-stamp

.PHONY: help
help: ## Show the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-22s %s\n", $$1, $$2}'

# A tree whose node_modules links to another checkout's install (a git worktree)
# leaves installing to that checkout: npm ci through the link would empty it.
$(NPM_STAMP): package.json package-lock.json
	@if [ -L node_modules ]; then echo "node_modules links to another tree's install; not running npm ci here"; else npm ci --no-audit --no-fund && touch $@; fi

.PHONY: deps
deps: $(NPM_STAMP) ## Install npm dependencies (npm ci) when the lockfile changed

.PHONY: build
build: deps ## Compile TypeScript to lib/
	npx tsc -p tsconfig.build.json

.PHONY: typecheck
typecheck: deps ## Type-check sources and tests
	npx tsc -p tsconfig.json --noEmit

.PHONY: lint
lint: deps ## Lint sources and tests: the layering of STYLE §2, type-aware rules and size limits (eslint.config.js); the formatting (prettier --check)
	@# Cached by content under target/: a run after a small change reads only what changed.
	npx eslint --cache --cache-strategy content --cache-location target/lint/eslint-cache .
	npx prettier --check --cache --cache-strategy content --cache-location target/lint/prettier-cache --log-level warn .

.PHONY: format
format: deps ## Format every source, test and config file with prettier (.prettierrc.json)
	npx prettier --write --log-level warn .

.PHONY: tools
tools: ## Install the Debian test peers (libvirtd, QEMU, sshd) and build kube-apiserver, etcd, kube-controller-manager, kubectl, the CAPI manager, clusterctl and vcsim (cached outside the repo)
	test/tools/debian-packages.sh
	test/tools/build.sh

.PHONY: node-image
node-image: ## Build (or find cached) the Kubernetes node guest image: Debian bookworm, containerd, kubelet, kubeadm, the cloud kernel (root; cached outside the repo)
	test/tools/node-image.sh

.PHONY: synth
synth: deps ## cdk8s synth the default install into dist/ (one file per chart)
	rm -f dist/*.k8s.yaml
	@# --no-check-upgrade: the upgrade check asks the npm registry over plain http.
	npx cdk8s synth --no-check-upgrade

.PHONY: imports
imports: deps ## cdk8s import CAPI's v1beta2 Cluster, Machine, MachineDeployment into imports/ from the pinned module's CRDs
	test/tools/import-capi.sh

.PHONY: docs
docs: deps ## Write the docs tables that list backends (README.md kinds, docs/cluster-api.md flavors and variables) from the backend list
	npx tsx build/write-docs.ts

.PHONY: docs-site
docs-site: deps ## Build the static docs site from README.md, CHANGELOG.md and docs/ into target/docs-site (VitePress; fails on a dead link)
	npx tsx build/docs-site.ts

.PHONY: scaffold-backend
scaffold-backend: deps ## Start a backend: make scaffold-backend NAME=<name> writes its folder, API kind file, test stubs and registration lines, then regenerates dist/ and the docs tables
	@test -n "$(NAME)" || { echo "usage: make scaffold-backend NAME=<name> (lower case, e.g. hyperv)" >&2; exit 1; }
	npx tsx build/scaffold-backend.ts $(NAME)
	$(MAKE) synth docs

.PHONY: verify-gen
verify-gen: synth imports docs ## Fail when generated files (dist/, imports/, the docs tables) differ from a fresh generation
	@git diff --exit-code -- dist/ || { echo "dist/ is stale: run 'make synth' and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- dist/)" || { git status --porcelain -- dist/ >&2; echo "dist/ has untracked or deleted files: run 'make synth' and commit" >&2; exit 1; }
	@git diff --exit-code -- imports/ || { echo "imports/ is stale: run 'make imports' and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- imports/)" || { git status --porcelain -- imports/ >&2; echo "imports/ has untracked or deleted files: run 'make imports' and commit" >&2; exit 1; }
	@git diff --exit-code -- README.md docs/cluster-api.md || { echo "the generated docs tables are stale: run 'make docs' and commit" >&2; exit 1; }

.PHONY: clusterctl-components
clusterctl-components: build ## Write clusterctl release assets to target/clusterctl/release
	mkdir -p $(RELEASE_DIR)
	node bin/banlieue.js bootstrap operator --version $(CLUSTERCTL_RELEASE_TAG) --dry-run > $(RELEASE_DIR)/dry-run.yaml
	# clusterctl runs components through envsubst: every literal $$ must be doubled.
	sed 's/\$$/$$$$/g' $(RELEASE_DIR)/dry-run.yaml > $(RELEASE_DIR)/infrastructure-components.yaml
	sed 's/\$$\$$/$$/g' $(RELEASE_DIR)/infrastructure-components.yaml | cmp - $(RELEASE_DIR)/dry-run.yaml
	test "$$(grep -c '^kind: Namespace$$' $(RELEASE_DIR)/infrastructure-components.yaml)" = 1
	npx tsx infra/clusterctl/write-metadata.ts > $(RELEASE_DIR)/metadata.yaml
	npx tsx infra/clusterctl/write-templates.ts $(RELEASE_DIR)
	rm $(RELEASE_DIR)/dry-run.yaml
	@echo "wrote $(RELEASE_DIR)/infrastructure-components.yaml, metadata.yaml and cluster-template*.yaml ($(CLUSTERCTL_RELEASE_TAG))"

# Release build (build/README.md): the single executable, the image archive and
# the release assets. Each step is remade only when its inputs changed; the
# pinned Node, Debian packages and crane are cached outside the repository.
BUILD_DIR ?= target
BUILD_INFO := $(BUILD_DIR)/build-info.env
BUNDLE := $(BUILD_DIR)/bundle/banlieue.cjs
BINARY := $(BUILD_DIR)/bin/banlieue
IMAGE_ARCHIVE := $(BUILD_DIR)/image/banlieue-$(VERSION).oci.tar
RELEASE_ASSETS := $(BUILD_DIR)/release
APP_SOURCES := $(shell find controller infra -name '*.ts') package.json package-lock.json build/bundle.ts build/bundle-options.ts build/build-info.ts
GRAFANA_DASHBOARD := $(BUILD_DIR)/grafana/banlieue-grafana-dashboard.json

.PHONY: FORCE
FORCE:

# Rewritten only when version, commit or SOURCE_DATE_EPOCH changed.
$(BUILD_INFO): FORCE
	@build/build-info.sh $@

$(BUNDLE): $(NPM_STAMP) $(BUILD_INFO) $(APP_SOURCES)
	npx tsx build/bundle.ts $(BUILD_INFO) $@

$(BINARY): $(BUNDLE) build/binary.sh build/node.sh build/versions.env
	build/binary.sh $(BUNDLE) $@

.PHONY: binary
binary: $(BINARY) ## Single executable target/bin/banlieue (Node SEA) for hosts that run a provider role outside Kubernetes
	@$(BINARY) --version

$(IMAGE_ARCHIVE): $(BINARY) build/image.sh build/oci-layout.ts build/image-config.ts build/build-info.ts build/versions.env LICENSE
	build/image.sh $(BUILD_INFO) $(BINARY) $@

.PHONY: image
image: $(IMAGE_ARCHIVE) ## OCI image archive target/image/banlieue-<version>.oci.tar: no Docker, no base image, reproducible
	@tar -xOf $(IMAGE_ARCHIVE) index.json | sed -n 's/.*"digest":"\(sha256:[0-9a-f]*\)".*/$(notdir $(IMAGE_ARCHIVE)) manifest \1/p'

.PHONY: image-push
image-push: $(IMAGE_ARCHIVE) ## Push the image with crane: make image-push IMAGE=<registry>/banlieue:v<version>
	@test -n "$(IMAGE)" || { echo "usage: make image-push IMAGE=<registry>/banlieue:v$(VERSION)" >&2; exit 1; }
	build/push.sh $(IMAGE_ARCHIVE) $(IMAGE)

# The metric names come from infra/metrics/definitions.ts, as the roles register them.
$(GRAFANA_DASHBOARD): $(NPM_STAMP) $(shell find infra/metrics -name '*.ts') infra/version.ts package.json
	mkdir -p $(dir $@)
	npx tsx infra/metrics/write-dashboard.ts > $@.tmp && mv $@.tmp $@

.PHONY: grafana-dashboard
grafana-dashboard: $(GRAFANA_DASHBOARD) ## Grafana dashboard of the roles' metrics (queues, reconciles, backend calls, VMs by phase) in target/grafana/
	@echo "wrote $(GRAFANA_DASHBOARD)"

.PHONY: release
release: clusterctl-components $(IMAGE_ARCHIVE) $(BINARY) $(GRAFANA_DASHBOARD) ## Every release asset in target/release/ with SHA256SUMS: clusterctl's, the image archive, the binary, the npm package, the Grafana dashboard
	rm -rf $(RELEASE_ASSETS) && mkdir -p $(RELEASE_ASSETS)
	@# The clusterctl assets: components, metadata, the cluster templates (one flavor per backend, and the
	@# clusterclass flavor) and the ClusterClass that flavor names (clusterctl fetches it as clusterclass-<name>.yaml).
	cp $(RELEASE_DIR)/infrastructure-components.yaml $(RELEASE_DIR)/metadata.yaml $(RELEASE_DIR)/cluster-template*.yaml $(RELEASE_DIR)/clusterclass-*.yaml $(RELEASE_ASSETS)/
	cp $(IMAGE_ARCHIVE) $(RELEASE_ASSETS)/
	cp $(BINARY) $(RELEASE_ASSETS)/banlieue-linux-amd64
	cp $(GRAFANA_DASHBOARD) $(RELEASE_ASSETS)/
	@# The npm package (the CLI and the cdk8s constructs) until it is published: npm install ./banlieue-<version>.tgz.
	npm pack --silent --pack-destination $(RELEASE_ASSETS) >/dev/null
	cd $(RELEASE_ASSETS) && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs sha256sum > SHA256SUMS
	@cat $(RELEASE_ASSETS)/SHA256SUMS

.PHONY: test-unit
test-unit: deps ## Fast inner loop: pure unit tests, no servers
	npx vitest run --project unit

.PHONY: test-integration
test-integration: deps tools build ## Tests against a real kube-apiserver + etcd
	npx vitest run --project integration

.PHONY: test-package
test-package: deps build ## npm pack, install into a throwaway cdk8s app, synth and validate
	npx vitest run --project package

.PHONY: e2e-capi
e2e-capi: deps tools clusterctl-components ## CAPI v1beta2 contract e2e: the real CAPI manager and clusterctl, no Docker
	npx vitest run --project contract

.PHONY: e2e-nodes
e2e-nodes: deps tools node-image clusterctl-components ## Real nodes (root; not part of make test): libvirt guests booted from the node image (QEMU TCG) join a control plane with kubeadm join; a Cluster API cluster's workers, bootstrapped by the real CABPK, join, scale 2→3→1, are remediated by a MachineHealthCheck and shown by clusterctl describe
	npx vitest run --project e2e

.PHONY: kind-e2e-capi
kind-e2e-capi: deps tools clusterctl-components ## The same contract e2e on a kind cluster (needs Docker and kind)
	test/contract/kind-e2e.sh

.PHONY: test
test: deps tools typecheck lint verify-gen clusterctl-components ## Everything CI runs (unit, integration, contract e2e, package, release, faults with the default seed), in two lanes
	test/lanes.sh

.PHONY: clean
clean: ## Remove build output
	rm -rf lib target

.PHONY: demo-tools
demo-tools: ## Build (or find cached) only what make demo runs: etcd, kube-apiserver, kube-controller-manager, kubectl, vcsim
	@start=$$SECONDS; test/tools/build.sh etcd kube govmomi >/dev/null; echo "demo tools ready in $$((SECONDS - start)) s"

.PHONY: demo
demo: deps demo-tools ## Run banlieue end to end: a real local control plane, the controller and the vSphere provider on vcsim
	node --import tsx test/support/demo.ts

.PHONY: dev-cluster
dev-cluster: deps tools synth ## Start a local control plane with banlieue's CRDs; prints export KUBECONFIG=...
	npx tsx test/support/dev-cluster.ts

.PHONY: bench
bench: deps tools ## Benchmarks: N VirtualMachines end to end on vcsim (BENCH_VMS, default 50); prints times, API writes per VM, RSS
	npx tsx test/bench/run.ts

.PHONY: bench-capv
bench-capv: deps tools ## CAPV v1.16.1 (built from the Go module proxy, cached) and banlieue side by side: one MachineDeployment of N on vcsim through the real CAPI manager (BENCH_CAPV_MACHINES, default 50,200), each side BENCH_CAPV_RUNS times (default 3); prints the median time, provider writes and vCenter calls per Machine, CPU and RSS, and the ratios
	npx tsx test/bench/run.ts capv

.PHONY: test-faults
test-faults: deps tools ## Fault injection on vcsim, the PVE simulator, libvirtd's test driver and simulated Cloud Hypervisor VMMs (FAULT_BACKEND=vsphere|proxmox|libvirt|cloud-hypervisor for one): kill -9 of both roles' replicas, API server and backend outages, seeded (FAULT_SEED); prints per backend kills, outages, VMs, duplicates, orphans, VMs re-created unasked, stuck finalizers (each must be 0)
	npx tsx test/faults/run.ts
