#!/bin/busybox sh
# /init of the Soft-RoCE guest's initramfs (busybox). Mounts the host's root read-only over 9p
# with a tmpfs overlay on top, mounts the read-write results share, loads the modules and runs
# the guest script chrooted into the host userland; then powers off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo "srdma-guest: loading modules"
for m in $(cat /modules.order); do
  insmod "/modules/$m" || echo "srdma-guest: insmod $m failed"
done
mkdir -p /lower /upper /merged /out
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=524288,cache=loose hostroot /lower || echo "srdma-guest: 9p hostroot failed"
mount -t tmpfs -o size=2g tmpfs /upper
mkdir -p /upper/u /upper/w
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w /merged || echo "srdma-guest: overlay failed"
mkdir -p /merged/srdma-out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 out /merged/srdma-out
# modules of the guest kernel at the standard place, so that modprobe in the guest works (the host
# may have no /lib/modules: the bind needs its mount point)
mkdir -p /merged/lib/modules
mount --bind "/merged$(cat /modules.host)" /merged/lib/modules
mount -t proc proc /merged/proc
mount -t sysfs sys /merged/sys
mount -t devtmpfs dev /merged/dev
mkdir -p /merged/dev/pts /merged/dev/shm
mount -t devpts devpts /merged/dev/pts
mount -t tmpfs tmpfs /merged/dev/shm
# /tmp stays the overlay's (writable, tmpfs-backed): a tmpfs here would hide a checkout under /tmp
mount -t tmpfs tmpfs /merged/run
echo "srdma-guest: running guest script"
chroot /merged /bin/bash /srdma-out/guest.sh > /dev/console 2>&1
echo "srdma-guest: guest script exited $?"
sync
echo o > /proc/sysrq-trigger
sleep 30
