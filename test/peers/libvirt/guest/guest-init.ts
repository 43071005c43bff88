// What the test guest runs, and how a test reads what it reports.
//
// The guest is Debian's cloud kernel + busybox in an initramfs; /init (busybox
// sh) does, in order:
//   1. loads the virtio, SCSI/ATA CD-ROM, isofs and ACPI button modules
//      (insmod, dependencies first: see kernel-modules.ts);
//   2. finds the block device labelled `cidata` (or `CIDATA`): the NoCloud seed,
//      attached as a virtio disk or a CD-ROM (IDE or virtio-scsi), mounts it and
//      reads `user-data` and `meta-data`;
//   3. takes a DHCP lease on eth0 with udhcpc, sending `local-hostname` from
//      meta-data as its hostname, and keeps renewing it;
//   4. powers off on the ACPI power button (busybox acpid), so libvirt's
//      `shutdown` (ACPI) works; then idles.
// Each step writes one line `banlieue-guest: <key>=<value>` to the serial
// console ttyS0, so a test reads it from QEMU's serial file or libvirt's
// console log.
//
// Marker convention: user-data carries the line `#banlieue-marker: <value>`
// (a YAML/shell comment, so the same user-data stays valid for real
// cloud-init); the guest reports `banlieue-guest: marker=<value>`, proving the
// user-data reached it.

/** Kernel command line for direct kernel boot: console on the first serial port; reboot at once on panic. */
export const GUEST_KERNEL_CMDLINE = 'console=ttyS0 panic=-1';

/** The line of user-data whose value the guest echoes as `marker=`. */
export const GUEST_MARKER_LINE = '#banlieue-marker:';

/** Modules /init loads (plus their dependencies). */
export const GUEST_MODULES = ['virtio_pci', 'virtio_blk', 'virtio_net', 'virtio_scsi', 'ata_piix', 'sr_mod', 'isofs', 'button', 'evdev'] as const;

/** The console prefix of the guest's report lines. */
const PREFIX = 'banlieue-guest: ';

/**
 * What the guest reported so far: the last value of each key in `console`
 * (e.g. `marker`, `address`, `seed`, `instance-id`, `state`).
 */
export function readGuestReport(console: string): Map<string, string> {
  const report = new Map<string, string>();
  for (const line of console.split(/\r?\n/)) {
    const at = line.indexOf(PREFIX);
    if (at < 0) continue;
    const pair = line.slice(at + PREFIX.length).trim();
    const eq = pair.indexOf('=');
    if (eq > 0) report.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return report;
}

/** Where /init reads the module names to insmod, one a line, dependencies first. */
export const GUEST_MODULE_ORDER_FILE = '/lib/modules/order';

/** The scripts of the initramfs (besides busybox and the modules), keyed by path. */
export function guestScripts(): Readonly<Record<string, string>> {
  return {
    '/init': INIT_SCRIPT,
    '/etc/udhcpc.script': UDHCPC_SCRIPT,
    // busybox acpid maps KEY_POWER to the event "PWRF" and runs <conf dir>/PWRF/00000080.
    '/etc/acpi/PWRF/00000080': POWER_BUTTON_SCRIPT,
  };
}

const INIT_SCRIPT = `#!/bin/busybox sh
# banlieue test guest: see test/peers/libvirt/guest/guest-init.ts
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp /run /mnt/seed
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# Only emergencies from the kernel from now on, so that its messages do not
# split the report lines on the shared console.
dmesg -n 1
say() { echo "${PREFIX}$*" > /dev/ttyS0; }
say "state=init"

for m in $(cat ${GUEST_MODULE_ORDER_FILE}); do
  insmod "/lib/modules/$m.ko" || say "module-failed=$m"
done
say "state=modules-loaded"

# The seed's device node appears once its driver has probed (CD-ROMs on ATA are
# scanned asynchronously): look for it for a while.
seed=
tries=0
while [ -z "$seed" ] && [ "$tries" -lt 120 ]; do
  seed=$(findfs LABEL=cidata 2>/dev/null || findfs LABEL=CIDATA 2>/dev/null)
  [ -n "$seed" ] || { sleep 1; tries=$((tries + 1)); }
done
if [ -n "$seed" ] && mount -t iso9660 -o ro "$seed" /mnt/seed; then
  say "seed=$seed"
  say "seed-files=$(ls /mnt/seed | tr '\\n' ' ')"
  say "marker=$(sed -n 's/^${GUEST_MARKER_LINE} *//p' /mnt/seed/user-data | head -n 1)"
  say "instance-id=$(sed -n 's/^instance-id: *//p' /mnt/seed/meta-data | head -n 1)"
  hostname=$(sed -n 's/^local-hostname: *//p' /mnt/seed/meta-data | head -n 1)
else
  say "seed=none"
fi
[ -n "$hostname" ] && hostname "$hostname"

# acpid's default log and pid files live in /var, which this guest has not.
acpid -c /etc/acpi -l /run/acpid.log -p /run/acpid.pid

ip link set lo up
ip link set eth0 up && say "mac=$(cat /sys/class/net/eth0/address)"
# Blocks until the first lease (retrying for ever), then renews in the background.
udhcpc -i eth0 -s /etc/udhcpc.script -t 5 -T 3 -A 5 \${hostname:+-x hostname:$hostname}

say "state=ready"
while :; do sleep 3600; done
`;

const UDHCPC_SCRIPT = `#!/bin/sh
# udhcpc events: configure eth0 from the lease and report the address.
case "$1" in
  deconfig)
    ip -4 addr flush dev "$interface"
    rm -f /run/udhcpc.ip
    ;;
  bound|renew)
    if [ "$(cat /run/udhcpc.ip 2>/dev/null)" != "$ip" ]; then
      ip -4 addr flush dev "$interface"
      ip addr add "$ip/$mask" dev "$interface"
      for r in $router; do ip route add default via "$r" dev "$interface"; break; done
      echo "$ip" > /run/udhcpc.ip
      echo "${PREFIX}address=$ip" > /dev/ttyS0
    fi
    ;;
esac
exit 0
`;

// The console stays open (init holds it), so closing it after the echo does not wait for the
// UART to send the line: the pause lets it drain before the power goes.
const POWER_BUTTON_SCRIPT = `#!/bin/sh
echo "${PREFIX}state=power-button" > /dev/ttyS0
sync
sleep 2
poweroff -f
`;
