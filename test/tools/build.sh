#!/usr/bin/env bash
# Builds the real Kubernetes test binaries (etcd, kube-apiserver,
# kube-controller-manager, kubectl), the Cluster API core manager
# (capi-manager) and clusterctl, and vcsim (the govmomi vSphere simulator)
# from the Go module proxy, pinned by versions.env, into a cache directory
# outside the repository:
#
#   ${BANLIEUE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/banlieue-tools}/<name>-<version>/<name>
#
# A binary that already exists is not rebuilt (a new pinned version gets a new
# directory). Also writes <cache>/tools.env (KUBE_APISERVER=/abs/path, ...).
#
# stdout: exactly one line per tool, "<name> <version> <absolute path>", plus
# "capi-module <version> <dir>": the extracted sigs.k8s.io/cluster-api module in
# the Go module cache (read-only), where core/config/{crd/bases,rbac,webhook}
# hold CAPI's CRDs, RBAC and webhook manifests.
# stderr: progress and go's output.
#
# Every go command runs under "nice -n 19" (builds take minutes on 2 cores).
#
# Usage:
#   test/tools/build.sh                  build what is missing, print the paths
#   test/tools/build.sh WHICH...         only these wrapper modules (kube etcd
#                                        capi govmomi), e.g. "govmomi" for vcsim;
#                                        tools.env is not rewritten
#   test/tools/build.sh node             kubelet and kubeadm (from kube/) for
#                                        node-image.sh; never built by default
#   test/tools/build.sh cabpk            the kubeadm bootstrap provider (capi/:
#                                        sigs.k8s.io/cluster-api/bootstrap/kubeadm,
#                                        same version as capi-manager) and the
#                                        "capi-module" line; never built by default
#   test/tools/build.sh capv             CAPV's manager (capv-manager, for make
#                                        bench-capv), built from its module zip as
#                                        the main module so that its replace
#                                        directives apply, and the "capv-module
#                                        <version> <dir>" line (its CRDs are in
#                                        config/default/crd/bases); never built by
#                                        default
#   test/tools/build.sh --update [WHICH] regenerate kube/, etcd/, capi/ and govmomi/
#                                        go.mod (+go.sum) from versions.env, or only
#                                        the named ones (kube etcd capi govmomi);
#                                        needs the proxy
set -euo pipefail

# Everything goes to stderr except the final result lines (fd 3).
exec 3>&1 1>&2

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
: "${KUBE_VERSION:?KUBE_VERSION missing in versions.env}"
: "${ETCD_VERSION:?ETCD_VERSION missing in versions.env}"
: "${CAPI_VERSION:?CAPI_VERSION missing in versions.env}"
: "${GOVMOMI_VERSION:?GOVMOMI_VERSION missing in versions.env}"
: "${CAPV_VERSION:?CAPV_VERSION missing in versions.env}"

log() { printf 'build.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v go >/dev/null || die "go not found in PATH (Go >= 1.24 needed for the tool directive)"

# The wrapper modules must be built on their own, whatever the caller's setup.
export GOWORK=off
export GOFLAGS=-mod=readonly
export CGO_ENABLED=0

# Lowest CPU priority for every go command: the builds are long and the machine
# is usually busy with other things (tests). Runs the go binary from PATH.
gonice() { nice -n 19 go "$@"; }

# major/minor of a vX.Y.Z version
major() { local x="${1#v}"; printf '%s' "${x%%.*}"; }
minor() { local x="${1#v}"; x="${x#*.}"; printf '%s' "${x%%.*}"; }
kube_minor() { minor "$KUBE_VERSION"; }
kube_major() { major "$KUBE_VERSION"; }

# Version in the module's go.mod require list ("" when absent).
pinned() { # <dir> <module path>
	awk -v m="$2" '($1 == m || ($1 == "require" && $2 == m)) { v = ($1 == m) ? $2 : $3 } END { print v }' "$1/go.mod"
}

update_kube() {
	local dir="$here/kube" gomod m staging=()
	log "regenerating kube/ for k8s.io/kubernetes $KUBE_VERSION"
	gomod="$(cd "$dir" && gonice mod download -json "k8s.io/kubernetes@$KUBE_VERSION" |
		sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
	[ -f "$gomod" ] || die "could not download k8s.io/kubernetes@$KUBE_VERSION"
	# k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them
	# with ./staging/src/...; a dependency's replaces are ignored, so point each
	# one at its published tag v0.X.Y instead.
	mapfile -t staging < <(sed -n 's#^[[:space:]]*\(k8s.io/[A-Za-z0-9._-]*\) => \./staging/.*#\1#p' "$gomod")
	[ "${#staging[@]}" -gt 0 ] || die "no staging replaces found in $gomod"
	{
		printf '// Wrapper module: builds kube-apiserver, kube-controller-manager and kubectl,\n'
		printf '// and kubelet and kubeadm for the node image (../node-image.sh), from\n'
		printf '// k8s.io/kubernetes. Generated by ../build.sh --update from ../versions.env.\n'
		printf 'module banlieue.local/test/tools/kube\n\ngo 1.24\n\n'
		printf '// k8s.io/kubernetes replaces these with ./staging/src/...; use the published tags.\nreplace (\n'
		for m in "${staging[@]}"; do
			printf '\t%s => %s v0.%s.%s\n' "$m" "$m" "$(kube_minor)" "${KUBE_VERSION##*.}"
		done
		printf ')\n'
	} >"$dir/go.mod"
	rm -f "$dir/go.sum"
	# tidy completes go.sum for every platform, so -mod=readonly builds work anywhere.
	(cd "$dir" && GOFLAGS=-mod=mod gonice get -tool \
		"k8s.io/kubernetes/cmd/kube-apiserver@$KUBE_VERSION" \
		"k8s.io/kubernetes/cmd/kube-controller-manager@$KUBE_VERSION" \
		"k8s.io/kubernetes/cmd/kubectl@$KUBE_VERSION" \
		"k8s.io/kubernetes/cmd/kubelet@$KUBE_VERSION" \
		"k8s.io/kubernetes/cmd/kubeadm@$KUBE_VERSION" && gonice mod tidy)
}

update_etcd() {
	local dir="$here/etcd"
	log "regenerating etcd/ for go.etcd.io/etcd/server/v3 $ETCD_VERSION"
	# server/v3's own replaces (=> ../api etc.) are ignored here; its requires
	# name the matching published api/client/pkg versions, so no replace needed.
	{
		printf '// Wrapper module: builds etcd from go.etcd.io/etcd/server/v3.\n'
		printf '// Generated by ../build.sh --update from ../versions.env.\n'
		printf 'module banlieue.local/test/tools/etcd\n\ngo 1.24\n'
	} >"$dir/go.mod"
	rm -f "$dir/go.sum"
	(cd "$dir" && GOFLAGS=-mod=mod gonice get -tool "go.etcd.io/etcd/server/v3@$ETCD_VERSION" && gonice mod tidy)
}

update_capi() {
	local dir="$here/capi" gomod local_repl=() other_repl=() m
	log "regenerating capi/ for sigs.k8s.io/cluster-api $CAPI_VERSION"
	mkdir -p "$dir"
	gomod="$(cd "$dir" && gonice mod download -json "sigs.k8s.io/cluster-api@$CAPI_VERSION" |
		sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
	[ -f "$gomod" ] || die "could not download sigs.k8s.io/cluster-api@$CAPI_VERSION"
	# Since v1.14 the root module requires its nested modules (at least
	# sigs.k8s.io/cluster-api/api) at v0.0.0-... and replaces them with ./api;
	# a dependency's replaces are ignored, so point each one at the published
	# tag, which has the same version (tag api/vX.Y.Z). Any other replace is
	# copied as is, so the build matches upstream's.
	mapfile -t local_repl < <(sed -n 's#^[[:space:]]*\(replace[[:space:]]\{1,\}\)\{0,1\}\(sigs\.k8s\.io/cluster-api/[A-Za-z0-9._/-]*\) => \..*#\2#p' "$gomod")
	mapfile -t other_repl < <(sed -n 's#^[[:space:]]*\(replace[[:space:]]\{1,\}\)\{0,1\}\([^[:space:](/][^[:space:]]*\( [^[:space:]]\{1,\}\)\{0,1\} => [^.].*\)#\2#p' "$gomod")
	m="$(sed -n 's#^[[:space:]]*\(replace[[:space:]]\{1,\}\)\{0,1\}\([^[:space:](/][^[:space:]]*\)\( [^[:space:]]\{1,\}\)\{0,1\} => \..*#\2#p' "$gomod" |
		grep -v '^sigs\.k8s\.io/cluster-api/' || true)"
	[ -z "$m" ] || die "$gomod replaces $m with a local directory; teach update_capi which version to use"
	{
		printf '// Wrapper module: builds the Cluster API core manager (sigs.k8s.io/cluster-api/core),\n'
		printf '// clusterctl and the kubeadm bootstrap provider (sigs.k8s.io/cluster-api/bootstrap/kubeadm).\n'
		printf '// Generated by ../build.sh --update from ../versions.env.\n'
		printf 'module banlieue.local/test/tools/capi\n\ngo 1.24\n'
		if [ "$((${#local_repl[@]} + ${#other_repl[@]}))" -gt 0 ]; then
			printf '\n// sigs.k8s.io/cluster-api replaces its nested modules with local directories; use the published tags.\nreplace (\n'
			for m in "${local_repl[@]}"; do
				printf '\t%s => %s %s\n' "$m" "$m" "$CAPI_VERSION"
			done
			for m in "${other_repl[@]}"; do
				printf '\t%s\n' "$m"
			done
			printf ')\n'
		fi
	} >"$dir/go.mod"
	rm -f "$dir/go.sum"
	(cd "$dir" && GOFLAGS=-mod=mod gonice get -tool \
		"sigs.k8s.io/cluster-api/core@$CAPI_VERSION" \
		"sigs.k8s.io/cluster-api/cmd/clusterctl@$CAPI_VERSION" \
		"sigs.k8s.io/cluster-api/bootstrap/kubeadm@$CAPI_VERSION" && gonice mod tidy)
}

update_govmomi() {
	local dir="$here/govmomi"
	log "regenerating govmomi/ for github.com/vmware/govmomi $GOVMOMI_VERSION"
	[ -f "$dir/vcsim/main.go" ] || die "$dir/vcsim/main.go missing (our vcsim main, kept in git)"
	# Upstream's vcsim/ is its own untagged module with a local replace, so the
	# proxy cannot build it; our vcsim/main.go imports the root module's
	# simulator package instead, which needs only a plain require.
	{
		printf '// Wrapper module: builds vcsim (./vcsim, our main over github.com/vmware/govmomi/simulator).\n'
		printf '// Generated by ../build.sh --update from ../versions.env.\n'
		printf 'module banlieue.local/test/tools/govmomi\n\ngo 1.24\n'
	} >"$dir/go.mod"
	rm -f "$dir/go.sum"
	(cd "$dir" && GOFLAGS=-mod=mod gonice get "github.com/vmware/govmomi@$GOVMOMI_VERSION" && gonice mod tidy)
}

if [ "${1:-}" = "--update" ]; then
	shift
	[ $# -gt 0 ] || set -- kube etcd capi govmomi
	for w in "$@"; do
		case "$w" in
		kube | etcd | capi | govmomi) "update_$w" ;;
		*) die "unknown wrapper module: $w (kube, etcd, capi or govmomi)" ;;
		esac
	done
	log "done; review and commit go.mod and go.sum in: $*"
	exit 0
fi

# Optional arguments name the wrapper modules to build (default: all). With a
# subset, only their lines are printed and tools.env (which lists every tool) is
# left as it is: test/peers/vsphere needs only "build.sh govmomi", not kube.
selected=("$@")
for w in "${selected[@]}"; do
	case "$w" in
	kube | etcd | capi | govmomi | node | cabpk | capv) ;;
	*) die "unknown argument: $w (usage: build.sh [kube|etcd|capi|govmomi|node|cabpk|capv]... | --update [kube|etcd|capi|govmomi]...)" ;;
	esac
done
# "node" (kubelet, kubeadm: only the node image needs them), "cabpk" (only
# the e2e workers test needs it) and "capv" (only make bench-capv) are built
# only when named.
want() {
	local w
	[ "${#selected[@]}" -gt 0 ] || { [ "$1" != node ] && [ "$1" != cabpk ] && [ "$1" != capv ]; return; }
	for w in "${selected[@]}"; do [ "$w" = "$1" ] && return 0; done
	return 1
}

# The go.mod files must match versions.env (they are the real pin for go build).
if want kube || want node; then
	[ "$(pinned "$here/kube" k8s.io/kubernetes)" = "$KUBE_VERSION" ] ||
		die "kube/go.mod pins k8s.io/kubernetes $(pinned "$here/kube" k8s.io/kubernetes), versions.env says $KUBE_VERSION; run build.sh --update"
fi
if want etcd; then
	[ "$(pinned "$here/etcd" go.etcd.io/etcd/server/v3)" = "$ETCD_VERSION" ] ||
		die "etcd/go.mod pins go.etcd.io/etcd/server/v3 $(pinned "$here/etcd" go.etcd.io/etcd/server/v3), versions.env says $ETCD_VERSION; run build.sh --update"
fi
if want capi || want cabpk; then
	[ -f "$here/capi/go.mod" ] || die "capi/go.mod missing; run build.sh --update capi"
	[ "$(pinned "$here/capi" sigs.k8s.io/cluster-api)" = "$CAPI_VERSION" ] ||
		die "capi/go.mod pins sigs.k8s.io/cluster-api $(pinned "$here/capi" sigs.k8s.io/cluster-api), versions.env says $CAPI_VERSION; run build.sh --update capi"
	grep -Eq "^[[:space:]]*(replace[[:space:]]+)?sigs\.k8s\.io/cluster-api/api => sigs\.k8s\.io/cluster-api/api $CAPI_VERSION\$" "$here/capi/go.mod" ||
		die "capi/go.mod does not replace sigs.k8s.io/cluster-api/api with $CAPI_VERSION; run build.sh --update capi"
fi
if want govmomi; then
	[ -f "$here/govmomi/go.mod" ] || die "govmomi/go.mod missing; run build.sh --update govmomi"
	[ "$(pinned "$here/govmomi" github.com/vmware/govmomi)" = "$GOVMOMI_VERSION" ] ||
		die "govmomi/go.mod pins github.com/vmware/govmomi $(pinned "$here/govmomi" github.com/vmware/govmomi), versions.env says $GOVMOMI_VERSION; run build.sh --update govmomi"
fi

cache="${BANLIEUE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/banlieue-tools}"
mkdir -p "$cache"
cache="$(cd "$cache" && pwd -P)"
case "$cache" in
*[[:space:]\'\"\\\$\`]*) die "cache path must not contain spaces or quotes (tools.env is KEY=value): $cache" ;;
esac

# Serialise concurrent runs sharing a cache (flock is optional).
if command -v flock >/dev/null; then
	exec 9>"$cache/.lock"
	flock 9
fi

bin() { printf '%s/%s-%s/%s' "$cache" "$1" "$2" "$1"; }

# build <module dir> <version> <ldflags> <name=package>...
# Builds every missing binary of the group with a single go build, so the
# packages they share are compiled once.
tmp_dir=""
ticker=""
trap 'rm -rf "$tmp_dir"; [ -z "$ticker" ] || kill "$ticker" 2>/dev/null || true' EXIT
build() {
	local dir="$1" version="$2" ldflags="$3" spec name pkg out start missing=() pkgs=()
	shift 3
	for spec in "$@"; do
		name="${spec%%=*}" pkg="${spec#*=}"
		if [ -x "$(bin "$name" "$version")" ]; then
			log "$name $version: cached"
		else
			missing+=("$name") pkgs+=("$pkg")
		fi
	done
	[ "${#missing[@]}" -gt 0 ] || return 0
	log "building ${missing[*]} $version (a cold build downloads modules and takes minutes)"
	tmp_dir="$(mktemp -d "$cache/.build.XXXXXX")"
	# One package: name the output file (go would call .../server/v3 "server").
	# Several: go names each binary after its package's last path element.
	out="$tmp_dir/"
	[ "${#pkgs[@]}" -gt 1 ] || out="$tmp_dir/${missing[0]}"
	start=$SECONDS
	# go build is silent for minutes when cold: say every minute that it is
	# still going (and stop saying so if this script is gone). Killed, the
	# ticker takes its sleep with it: nothing of this script outlives it.
	(
		trap 'kill "$nap" 2>/dev/null; exit 0' TERM
		while :; do
			sleep 60 &
			nap=$!
			wait "$nap"
			kill -0 $$ 2>/dev/null || exit 0
			log "still building ${missing[*]} $version: $(((SECONDS - start) / 60)) min so far"
		done
	) &
	ticker=$!
	(cd "$dir" && gonice build -buildvcs=false -trimpath -ldflags="$ldflags" -o "$out" "${pkgs[@]}")
	kill "$ticker" 2>/dev/null || true
	ticker=""
	local i
	for i in "${!missing[@]}"; do
		name="${missing[$i]}" pkg="${pkgs[$i]}"
		# Several packages: rename ".../core" to the wanted name (capi-manager).
		if [ "${#pkgs[@]}" -gt 1 ] && [ "${pkg##*/}" != "$name" ]; then
			mv -f "$tmp_dir/${pkg##*/}" "$tmp_dir/$name" || die "go build did not produce ${pkg##*/} for $name"
		fi
		[ -x "$tmp_dir/$name" ] || die "go build did not produce $name"
		mkdir -p "$cache/$name-$version"
		mv -f "$tmp_dir/$name" "$(bin "$name" "$version")" # atomic: same filesystem
	done
	rm -rf "$tmp_dir"
	log "built ${missing[*]} $version in $((SECONDS - start))s"
}

# Plain go build leaves the version at v0.0.0-master; stamp it as the release
# build does (hack/lib/version.sh) so --version, /version and kubectl's skew
# check see the real version. gitCommit is unknown here: empty instead of the
# unexpanded "$Format:%H$".
kube_ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	kube_ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=$(kube_major) -X $p.gitMinor=$(kube_minor) -X $p.gitTreeState=clean -X $p.gitCommit="
done

# Same for Cluster API (hack/scripts/release/version.sh): clusterctl version and
# the manager's "Version: ..." log line read sigs.k8s.io/cluster-api/version.
# gitCommit and buildDate stay empty (unknown here; keeps the build reproducible).
capi_ldflags="-s -w"
p=sigs.k8s.io/cluster-api/version
capi_ldflags+=" -X $p.gitVersion=$CAPI_VERSION -X $p.gitMajor=$(major "$CAPI_VERSION") -X $p.gitMinor=$(minor "$CAPI_VERSION") -X $p.gitTreeState=clean"

! want etcd || build "$here/etcd" "$ETCD_VERSION" "-s -w" \
	etcd=go.etcd.io/etcd/server/v3
! want kube || build "$here/kube" "$KUBE_VERSION" "$kube_ldflags" \
	kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver \
	kube-controller-manager=k8s.io/kubernetes/cmd/kube-controller-manager \
	kubectl=k8s.io/kubernetes/cmd/kubectl
# kubelet and kubeadm: same module, same version stamp (kubeadm compares its
# version with the control plane's and the kubelet's).
! want node || build "$here/kube" "$KUBE_VERSION" "$kube_ldflags" \
	kubelet=k8s.io/kubernetes/cmd/kubelet \
	kubeadm=k8s.io/kubernetes/cmd/kubeadm
! want capi || build "$here/capi" "$CAPI_VERSION" "$capi_ldflags" \
	capi-manager=sigs.k8s.io/cluster-api/core \
	clusterctl=sigs.k8s.io/cluster-api/cmd/clusterctl
# The kubeadm bootstrap provider: same module, version and version stamp as the
# core manager; its CRDs and RBAC are in the module's bootstrap/kubeadm/config.
! want cabpk || build "$here/capi" "$CAPI_VERSION" "$capi_ldflags" \
	cabpk=sigs.k8s.io/cluster-api/bootstrap/kubeadm
# "vcsim version" prints the govmomi version it was built from. Its main is ours,
# so its cache key also names the source: an edited main.go is rebuilt.
vcsim_key="$GOVMOMI_VERSION-$(cat "$here/govmomi/go.mod" "$here/govmomi/go.sum" "$here/govmomi/vcsim/main.go" | sha256sum | cut -c1-8)"
! want govmomi || build "$here/govmomi" "$vcsim_key" "-s -w -X main.version=$GOVMOMI_VERSION" \
	vcsim=banlieue.local/test/tools/govmomi/vcsim

# CAPV from its own module as the main module: its go.mod replaces (cluster-api
# at the version it was released against) apply only there. The module cache is
# read-only, which go build does not mind. Stamped as its release build does
# (hack/version.sh), so its "Version:" log line names the release.
capv_dir=""
if want capv; then
	capv_dir="$(cd / && GOFLAGS=-mod=mod gonice mod download -json "sigs.k8s.io/cluster-api-provider-vsphere@$CAPV_VERSION" |
		sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
	[ -d "$capv_dir/config/default/crd/bases" ] ||
		die "sigs.k8s.io/cluster-api-provider-vsphere $CAPV_VERSION: no config/default/crd/bases in module dir '$capv_dir'"
	p=sigs.k8s.io/cluster-api-provider-vsphere/pkg/version
	build "$capv_dir" "$CAPV_VERSION" "-s -w -X $p.gitVersion=$CAPV_VERSION -X $p.gitMajor=$(major "$CAPV_VERSION") -X $p.gitMinor=$(minor "$CAPV_VERSION") -X $p.gitTreeState=clean" \
		capv-manager=sigs.k8s.io/cluster-api-provider-vsphere
fi

# The CAPI module's source tree (CRDs, RBAC, webhook manifests) in the module
# cache. "go mod download" re-extracts it if the module cache was cleaned since
# the binaries were built; with a warm cache it does not touch the network.
capi_dir=""
if want capi || want cabpk; then
	capi_dir="$(cd "$here/capi" && gonice mod download -json sigs.k8s.io/cluster-api |
		sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
	[ -d "$capi_dir/core/config/crd/bases" ] ||
		die "sigs.k8s.io/cluster-api $CAPI_VERSION: no core/config/crd/bases in module dir '$capi_dir'"
	case "$capi_dir" in
	*[[:space:]\'\"\\\$\`]*) die "module cache path must not contain spaces or quotes (tools.env is KEY=value): $capi_dir" ;;
	esac
fi

# "<module> <name> <version> <tools.env variable>"
all_tools=(
	"etcd etcd $ETCD_VERSION ETCD"
	"kube kube-apiserver $KUBE_VERSION KUBE_APISERVER"
	"kube kube-controller-manager $KUBE_VERSION KUBE_CONTROLLER_MANAGER"
	"kube kubectl $KUBE_VERSION KUBECTL"
	"capi capi-manager $CAPI_VERSION CAPI_MANAGER"
	"capi clusterctl $CAPI_VERSION CLUSTERCTL"
	"govmomi vcsim $vcsim_key VCSIM"
	"node kubelet $KUBE_VERSION KUBELET"
	"node kubeadm $KUBE_VERSION KUBEADM"
	"cabpk cabpk $CAPI_VERSION CABPK"
	"capv capv-manager $CAPV_VERSION CAPV_MANAGER"
)
tools=()
for t in "${all_tools[@]}"; do
	! want "${t%% *}" || tools+=("${t#* }")
done

if [ "${#selected[@]}" -eq 0 ]; then
	envfile="$(mktemp "$cache/.tools.env.XXXXXX")"
	chmod 644 "$envfile"
	{
		printf '# Generated by test/tools/build.sh; source it or parse KEY=value.\n'
		printf 'KUBE_VERSION=%s\nETCD_VERSION=%s\nCAPI_VERSION=%s\nGOVMOMI_VERSION=%s\n' "$KUBE_VERSION" "$ETCD_VERSION" "$CAPI_VERSION" "$GOVMOMI_VERSION"
		for t in "${tools[@]}"; do
			read -r name version var <<<"$t"
			printf '%s=%s\n' "$var" "$(bin "$name" "$version")"
		done
		printf 'CAPI_MODULE_DIR=%s\n' "$capi_dir"
	} >"$envfile"
	mv -f "$envfile" "$cache/tools.env"
	log "wrote $cache/tools.env"
fi

for t in "${tools[@]}"; do
	read -r name version var <<<"$t"
	printf '%s %s %s\n' "$name" "$version" "$(bin "$name" "$version")" >&3
done
! { want capi || want cabpk; } || printf 'capi-module %s %s\n' "$CAPI_VERSION" "$capi_dir" >&3
! want capv || printf 'capv-module %s %s\n' "$CAPV_VERSION" "$capv_dir" >&3
