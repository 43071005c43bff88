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

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

.PHONY: deps
deps: $(NPM_STAMP) ## Install npm dependencies (npm ci) when the lockfile changed

.PHONY: build
build: deps ## Compile TypeScript to lib/
	npx tsc -p tsconfig.build.json

.PHONY: typecheck
typecheck: deps ## Type-check sources and tests
	npx tsc -p tsconfig.json --noEmit

.PHONY: lint
lint: deps ## Lint sources and tests: the layering of STYLE §2 and type-aware rules (eslint.config.js)
	npx eslint .

.PHONY: tools
tools: ## Install the Debian test peers (libvirtd, QEMU, sshd) and build kube-apiserver, etcd, kube-controller-manager, kubectl, the CAPI manager, clusterctl and vcsim (cached outside the repo)
	test/tools/debian-packages.sh
	test/tools/build.sh

.PHONY: synth
synth: deps ## cdk8s synth the default install into dist/ (one file per chart)
	rm -f dist/*.k8s.yaml
	@# --no-check-upgrade: the upgrade check asks the npm registry over plain http.
	npx cdk8s synth --no-check-upgrade

.PHONY: imports
imports: deps ## cdk8s import CAPI's v1beta2 Cluster, Machine, MachineDeployment into imports/ from the pinned module's CRDs
	test/tools/import-capi.sh

.PHONY: verify-gen
verify-gen: synth imports ## Fail when generated files (dist/, imports/) differ from a fresh generation
	@git diff --exit-code -- dist/ || { echo "dist/ is stale: run 'make synth' and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- dist/)" || { git status --porcelain -- dist/ >&2; echo "dist/ has untracked or deleted files: run 'make synth' and commit" >&2; exit 1; }
	@git diff --exit-code -- imports/ || { echo "imports/ is stale: run 'make imports' and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- imports/)" || { git status --porcelain -- imports/ >&2; echo "imports/ has untracked or deleted files: run 'make imports' and commit" >&2; exit 1; }

.PHONY: clusterctl-components
clusterctl-components: build ## Write clusterctl release assets to target/clusterctl/release
	mkdir -p $(RELEASE_DIR)
	node bin/banlieue.js bootstrap operator --version $(CLUSTERCTL_RELEASE_TAG) --dry-run > $(RELEASE_DIR)/dry-run.yaml
	# clusterctl runs components through envsubst: every literal $$ must be doubled.
	sed 's/\$$/$$$$/g' $(RELEASE_DIR)/dry-run.yaml > $(RELEASE_DIR)/infrastructure-components.yaml
	sed 's/\$$\$$/$$/g' $(RELEASE_DIR)/infrastructure-components.yaml | cmp - $(RELEASE_DIR)/dry-run.yaml
	test "$$(grep -c '^kind: Namespace$$' $(RELEASE_DIR)/infrastructure-components.yaml)" = 1
	npx tsx infra/clusterctl/write-metadata.ts > $(RELEASE_DIR)/metadata.yaml
	rm $(RELEASE_DIR)/dry-run.yaml
	@echo "wrote $(RELEASE_DIR)/infrastructure-components.yaml and $(RELEASE_DIR)/metadata.yaml ($(CLUSTERCTL_RELEASE_TAG))"

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

.PHONY: kind-e2e-capi
kind-e2e-capi: deps tools clusterctl-components ## The same contract e2e on a kind cluster (needs Docker and kind)
	test/contract/kind-e2e.sh

.PHONY: test
test: deps tools typecheck lint verify-gen clusterctl-components ## Everything CI runs (unit, integration, contract e2e, package)
	npx vitest run

.PHONY: clean
clean: ## Remove build output
	rm -rf lib target

.PHONY: demo
demo: deps tools synth ## Run banlieue end to end: a real local control plane, the controller and the vSphere provider on vcsim
	npx tsx test/support/demo.ts

.PHONY: dev-cluster
dev-cluster: deps tools synth ## Start a local control plane with banlieue's CRDs; prints export KUBECONFIG=...
	npx tsx test/support/dev-cluster.ts

.PHONY: bench
bench: deps tools ## Benchmarks: N VirtualMachines end to end on vcsim (BENCH_VMS, default 50); prints times, API writes per VM, RSS
	npx tsx test/bench/run.ts
