#!/usr/bin/env bash
# Builds the Kubernetes node guest image: a Debian bookworm root filesystem
# with systemd, cloud-init (NoCloud only), containerd, runc, the CNI plugins,
# and kubelet + kubeadm at KUBE_VERSION (built by build.sh node), set up the
# way kubeadm expects a node; booted by Debian's cloud kernel, from the disk
# (extlinux, for a BIOS machine such as a libvirt provider's) or by direct
# kernel boot. Cached outside the repository, like the Go tools:
#
#   ${BANLIEUE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/banlieue-tools}/node-image-<key>/
#     disk.qcow2    ext4 over the whole disk (no partition table), label node-root,
#                   with extlinux in its boot sector (SeaBIOS boots the disk);
#                   usable as a libvirt backing file
#     vmlinuz       the cloud kernel the image's /lib/modules belongs to
#     initrd.img    its initramfs-tools initrd
#     cmdline       the kernel command line: root=LABEL=node-root ro console=ttyS0
#     packages.txt  the Debian packages in the image, "name version" a line
#
# <key> is KUBE_VERSION plus a hash of this script (package list, config files)
# and the kubelet/kubeadm binaries: a change to either gets a new directory.
# Debian packages are whatever the mirror serves at build time.
#
# The root filesystem is made by mmdebstrap (Debian's package, fetched with
# apt-get download and unpacked: nothing is installed on the host) in its root
# mode inside a private mount namespace, so its /proc, /sys and /dev mounts
# never show on the host; the disk by mke2fs -d and qemu-img. extlinux
# (Debian's, fetched and unpacked like mmdebstrap) installs only into a mounted
# filesystem: a loop mount in a private mount namespace, gone with it.
# Needs root (chroot, device nodes, file ownership, the loop mount), apt,
# mke2fs, qemu-img.
#
# stdout: one line, "<disk.qcow2> <vmlinuz> <initrd.img>" (absolute paths).
# stderr: progress.
set -euo pipefail

# Everything goes to stderr except the result line (fd 3).
exec 3>&1 1>&2

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
: "${KUBE_VERSION:?KUBE_VERSION missing in versions.env}"

log() { printf 'node-image.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap chroots into the new tree and sets file owners)"
for c in apt-get dpkg-deb mke2fs qemu-img unshare chroot flock sha256sum mount; do
	command -v "$c" >/dev/null || die "$c not found (packages: apt, dpkg, e2fsprogs, qemu-utils, util-linux, mount, coreutils)"
done

SUITE=bookworm
# Overridable for a local mirror; the image's sources.list names these too.
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
DEBIAN_SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
LABEL=node-root
DISK_SIZE=8G
CMDLINE="root=LABEL=$LABEL ro console=ttyS0"

# On top of mmdebstrap's minbase variant (no recommends, as mmdebstrap installs).
packages=(
	systemd-sysv udev dbus systemd-resolved # init; networkd (in systemd) + resolved for DNS
	linux-image-cloud-amd64 initramfs-tools # the kernel, its modules and initrd
	cloud-init sudo                         # NoCloud user-data (kubeadm join for CAPI)
	openssh-server                          # for a look inside a node (cloud-init's ssh_authorized_keys)
	containerd runc containernetworking-plugins
	apparmor # the kernel enables AppArmor: containerd loads its default profile with apparmor_parser
	# kubeadm preflight (losetup, mount, cp) and kubelet/kube-proxy needs
	util-linux mount iproute2 iptables kmod ethtool socat conntrack ebtables ca-certificates procps
)

# kubelet and kubeadm, built or cached by build.sh (its output: "<name> <version> <path>").
kubelet="" kubeadm=""
while read -r name _ path; do
	case "$name" in
	kubelet) kubelet="$path" ;;
	kubeadm) kubeadm="$path" ;;
	esac
done < <("$here/build.sh" node)
[ -x "$kubelet" ] && [ -x "$kubeadm" ] || die "build.sh node did not name kubelet and kubeadm"

cache="${BANLIEUE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/banlieue-tools}"
mkdir -p "$cache"
cache="$(cd "$cache" && pwd -P)"

key="$KUBE_VERSION-$(cat "${BASH_SOURCE[0]}" "$kubelet" "$kubeadm" | sha256sum | cut -c1-12)"
out="$cache/node-image-$key"
result() { printf '%s %s %s\n' "$out/disk.qcow2" "$out/vmlinuz" "$out/initrd.img" >&3; }
complete() { [ -f "$out/disk.qcow2" ] && [ -f "$out/vmlinuz" ] && [ -f "$out/initrd.img" ] && [ -f "$out/cmdline" ]; }
if complete; then
	log "node-image-$key: cached"
	result
	exit 0
fi

# One builder at a time per cache (not build.sh's lock: build.sh ran above).
exec 9>"$cache/.node-image.lock"
flock 9
if complete; then
	log "node-image-$key: built meanwhile"
	result
	exit 0
fi

start=$SECONDS
work="$(mktemp -d "$cache/.node-image.XXXXXX")"
trap 'rm -rf "$work"' EXIT
root="$work/root"

# A Debian package's files under $work/<name>, unpacked, not installed.
unpack() {
	(cd "$work" && apt-get download "$1" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
	local deb
	deb="$(find "$work" -maxdepth 1 -name "$1_*.deb" | head -n1)"
	[ -n "$deb" ] || die "apt-get download $1 left no package (run apt-get update?)"
	dpkg-deb -x "$deb" "$work/$1"
}

log "fetching mmdebstrap and extlinux (unpacked, not installed)"
unpack mmdebstrap
unpack extlinux

log "mmdebstrap $SUITE with ${#packages[@]} packages (downloads ~250 MB)"
# minbase + the packages, no docs beyond copyright files. The host's apt
# config is not read: the snapshot-style mirror needs Check-Valid-Until off,
# and apt's _apt user cannot enter a work dir under root's home.
# mmdebstrap runs its mmtarfilter from PATH.
PATH="$work/mmdebstrap/usr/bin:$PATH" unshare --mount --propagation private -- \
	mmdebstrap \
	--mode=root --variant=minbase --format=directory \
	--include="$(
		IFS=,
		echo "${packages[*]}"
	)" \
	--aptopt='Acquire::Check-Valid-Until "false"' --aptopt='APT::Sandbox::User "root"' \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
	"$SUITE" "$root" \
	"deb $DEBIAN_MIRROR $SUITE main" \
	"deb $DEBIAN_MIRROR $SUITE-updates main" \
	"deb $DEBIAN_SECURITY_MIRROR $SUITE-security main"

log "adding kubelet, kubeadm and the node configuration"
# Where the kubelet and kubeadm packages (pkgs.k8s.io) put them.
install -m 755 "$kubelet" "$root/usr/bin/kubelet"
install -m 755 "$kubeadm" "$root/usr/bin/kubeadm"
install -d "$root/etc/kubernetes/manifests" "$root/var/lib/kubelet" "$root/usr/lib/systemd/system/kubelet.service.d"

# The kubelet package's unit and /etc/default/kubelet ...
cat >"$root/usr/lib/systemd/system/kubelet.service" <<'EOF'
[Unit]
Description=kubelet: The Kubernetes Node Agent
Documentation=https://kubernetes.io/docs/
Wants=network-online.target
After=network-online.target

[Service]
ExecStart=/usr/bin/kubelet
Restart=always
StartLimitInterval=0
RestartSec=10

[Install]
WantedBy=multi-user.target
EOF
chmod 600 "$root/usr/lib/systemd/system/kubelet.service"
printf 'KUBELET_EXTRA_ARGS=\n' >"$root/etc/default/kubelet"
# ... and the kubeadm package's drop-in (its deb build points it at /etc/default).
cat >"$root/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf" <<'EOF'
# Note: This dropin only works with kubeadm and kubelet v1.11+
[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
# This is a file that "kubeadm init" and "kubeadm join" generates at runtime, populating the KUBELET_KUBEADM_ARGS variable dynamically
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
# This is a file that the user can use for overrides of the kubelet args as a last resort. Preferably, the user should use
# the .NodeRegistration.KubeletExtraArgs object in the configuration files instead. KUBELET_EXTRA_ARGS should be sourced from this file.
EnvironmentFile=-/etc/default/kubelet
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
EOF

# containerd: systemd cgroups (kubeadm's default cgroupDriver), the pause image
# kubeadm uses at this version, and Debian's CNI plugin directory.
pause="$("$kubeadm" config images list --kubernetes-version "$KUBE_VERSION" 2>/dev/null | grep '/pause:' || true)"
[ -n "$pause" ] || die "kubeadm config images list names no pause image"
mkdir -p "$root/etc/containerd"
cat >"$root/etc/containerd/config.toml" <<EOF
# containerd 1.6 (config version 2), set up for kubelet + kubeadm.
version = 2

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause"

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "/etc/cni/net.d"

  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
      SystemdCgroup = true
EOF
# Plugins also where kubeadm-era tooling looks for them.
mkdir -p "$root/opt/cni"
ln -sfn /usr/lib/cni "$root/opt/cni/bin"

# A bridge network for pods until a cluster installs its own CNI (which then
# sorts first). The pod range is the kubeadm podSubnet a test would choose.
mkdir -p "$root/etc/cni/net.d"
cat >"$root/etc/cni/net.d/10-bridge.conflist" <<'EOF'
{
  "cniVersion": "1.0.0",
  "name": "bridge",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "10.244.0.0/16" }]],
        "routes": [{ "dst": "0.0.0.0/0" }]
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } },
    { "type": "loopback" }
  ]
}
EOF

# Bridged pod traffic through iptables, and forwarding (kubeadm preflight checks both).
printf 'overlay\nbr_netfilter\n' >"$root/etc/modules-load.d/kubernetes.conf"
cat >"$root/etc/sysctl.d/99-kubernetes.conf" <<'EOF'
net.bridge.bridge-nf-call-iptables = 1
net.bridge.bridge-nf-call-ip6tables = 1
net.ipv4.ip_forward = 1
EOF

# No swap: the fstab names only the root filesystem, and swap.target is masked
# so no generator or package adds one (kubelet refuses to start with swap).
cat >"$root/etc/fstab" <<EOF
LABEL=$LABEL / ext4 defaults,errors=remount-ro 0 1
EOF

# cloud-init: NoCloud only (no probing of cloud metadata addresses), network
# through systemd-networkd (no ifupdown or netplan in the image), host keys of
# the fast kinds (RSA takes seconds under TCG).
cat >"$root/etc/cloud/cloud.cfg.d/90-banlieue-node.cfg" <<'EOF'
datasource_list: [NoCloud, None]
system_info:
  network:
    renderers: [networkd]
ssh_genkeytypes: [ed25519, ecdsa]
EOF
# The system locale is the built-in C.UTF-8, so cloud-init's locale module has
# nothing to generate (no locales package).
printf 'LANG=C.UTF-8\n' >"$root/etc/default/locale"
# openssh-server's postinst made host keys: every VM of the image would share
# them. cloud-init makes each VM's own.
rm -f "$root"/etc/ssh/ssh_host_*

# mmdebstrap copies the host's /etc/hostname; cloud-init sets the node's own.
printf 'localhost\n' >"$root/etc/hostname"
chmod 644 "$root/etc/hostname"

chroot "$root" systemctl enable kubelet.service systemd-networkd.service systemd-resolved.service
chroot "$root" systemctl mask swap.target
# A new machine-id on every first boot (each VM of a backing file is a new machine).
: >"$root/etc/machine-id"
rm -f "$root/var/lib/dbus/machine-id"

chroot "$root" dpkg-query -W -f '${Package} ${Version}\n' >"$work/packages.txt"
kver="$(basename "$(find "$root/boot" -maxdepth 1 -name 'vmlinuz-*' | sort -V | tail -n1)")"
kver="${kver#vmlinuz-}"
[ -n "$kver" ] && [ -f "$root/boot/initrd.img-$kver" ] || die "no kernel and initrd in $root/boot"
cp "$root/boot/vmlinuz-$kver" "$work/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$work/initrd.img"
chmod 644 "$work/vmlinuz" "$work/initrd.img"
printf '%s\n' "$CMDLINE" >"$work/cmdline"
# Booted from the disk: extlinux (installed below) loads the same kernel and initrd.
mkdir -p "$root/boot/extlinux"
cat >"$root/boot/extlinux/extlinux.conf" <<EOF
DEFAULT node
PROMPT 0
TIMEOUT 0
LABEL node
  KERNEL /boot/vmlinuz-$kver
  INITRD /boot/initrd.img-$kver
  APPEND $CMDLINE
EOF

log "making the disk ($DISK_SIZE ext4, label $LABEL; kernel $kver)"
truncate -s "$DISK_SIZE" "$work/disk.raw"
# Without 64bit (only needed past 16 TiB), which extlinux's ext4 reader may not know.
mke2fs -q -t ext4 -O ^64bit -L "$LABEL" -E root_owner=0:0 -d "$root" -F "$work/disk.raw"
# extlinux's boot sector is the filesystem's first sector, which ext4 leaves free:
# with no partition table, the disk's first sector, which SeaBIOS runs.
mkdir "$work/mnt"
unshare --mount --propagation private -- sh -c 'mount -o loop "$1" "$2" && "$3" --install "$2/boot/extlinux"; status=$?; umount "$2"; exit $status' \
	sh "$work/disk.raw" "$work/mnt" "$work/extlinux/usr/bin/extlinux" || die "extlinux --install failed"
qemu-img convert -f raw -O qcow2 "$work/disk.raw" "$work/disk.qcow2"
rm -f "$work/disk.raw"

# Files appear by rename, the directory last but complete.
mkdir -p "$work/out"
mv "$work/disk.qcow2" "$work/vmlinuz" "$work/initrd.img" "$work/cmdline" "$work/packages.txt" "$work/out/"
rm -rf "$out"
mv "$work/out" "$out"
log "built node-image-$key in $((SECONDS - start))s ($(du -sh "$out/disk.qcow2" | cut -f1) qcow2)"
result
