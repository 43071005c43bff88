#!/usr/bin/env bash
# Installs the Debian packages the test peers run (libvirtd with the test and
# QEMU drivers, QEMU for TCG guests, dnsmasq for guest DHCP inside a test's own
# network namespace, sshd for the libvirt SSH transport). Run by `make tools`.
#
# As root, missing packages are installed with apt-get (no recommends); as any
# other user the script only names what is missing and exits non-zero, so a
# test run never starts half-equipped.
set -euo pipefail

packages=(
  libvirt-daemon               # libvirtd, virtlogd, virt-ssh-helper
  libvirt-daemon-driver-qemu
  qemu-system-x86
  qemu-utils                   # qemu-img: qcow2 overlays
  dnsmasq-base                 # DHCP for guests on a test's private bridge
  openssh-server               # the qemu+ssh:// transport, on 127.0.0.1
  openssh-client
  iproute2                     # ip netns / link / addr for private networks
  util-linux                   # unshare, nsenter
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "debian-packages.sh: missing Debian packages: ${missing[*]}" >&2
  echo "debian-packages.sh: install them (as root: apt-get install --no-install-recommends ${missing[*]}) or run make tools as root" >&2
  exit 1
fi

echo "debian-packages.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have no package lists yet.
apt-get install -y --no-install-recommends "${missing[@]}" >&2 || {
  apt-get update >&2
  apt-get install -y --no-install-recommends "${missing[@]}" >&2
}
# Installing libvirt-daemon/openssh-server on a machine with an init system may
# start host daemons; the tests never talk to them (each run starts its own).
