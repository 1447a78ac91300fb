#!/usr/bin/env bash
# Kernel-Binder run of binder-channel-v1 (issue 3 item 5, SPEC CH-05/08/42 on a real driver).
#
# On a Debian host (as root, or with sudo for apt): fetches a Debian 6.1 kernel that ships
# binder_linux.ko (the cloud flavour has no Binder), busybox-static and qemu-system-x86 with apt
# (refusing any install that would remove a package), builds an initramfs with the test
# binaries and their libraries, boots it under qemu with software emulation (TCG, no KVM), and
# reads the pass/fail lines the VM prints on its serial console. Exits non-zero on any failure.
#
# Environment: BINDER_VM_PROFILE=release|debug (build profile of the test binaries, default
# release), BINDER_VM_TIMEOUT (seconds for the whole boot + run, default 600),
# BINDER_VM_MESSAGES (messages each way, default 10000; at least 10000 is the requirement).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$repo/target}
work=$target/binder-vm
profile=${BINDER_VM_PROFILE:-release}
timeout_s=${BINDER_VM_TIMEOUT:-600}
messages=${BINDER_VM_MESSAGES:-10000}
kernel_series='6\.1\.[0-9]+-[0-9]+-amd64'
rsbinder_tools_version=0.12.0

log() { echo "binder-vm: $*"; }
die() { echo "binder-vm: FAIL $*" >&2; exit 1; }

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo > /dev/null || die "needs root (or sudo) for apt"
    sudo_cmd=(sudo)
fi

mkdir -p "$work"

# ---- host packages ----
apt_updated=0
apt_update() {
    if [ "$apt_updated" -eq 0 ]; then
        "${sudo_cmd[@]}" apt-get update -qq
        apt_updated=1
    fi
}

need=()
command -v qemu-system-x86_64 > /dev/null || need+=(qemu-system-x86)
case "$(/bin/busybox --list 2>/dev/null || true)" in
*insmod*) ;;
*) need+=(busybox-static) ;;
esac
if [ "${#need[@]}" -gt 0 ]; then
    apt_update
    log "checking that installing ${need[*]} removes nothing"
    removals=$(apt-get -s install --no-install-recommends "${need[@]}" | grep -c '^Remv' || true)
    [ "$removals" -eq 0 ] || die "installing ${need[*]} would remove $removals package(s); refusing"
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" > "$work/apt-install.log" 2>&1 ||
        { cat "$work/apt-install.log"; die "apt-get install ${need[*]}"; }
fi
case "$(ldd /bin/busybox 2>&1 || true)" in
*"not a dynamic"*) ;;
*) die "/bin/busybox is not static (busybox-static not installed?)" ;;
esac

# ---- kernel with binder_linux.ko ----
kdir=$work/kernel
if ! ls "$kdir"/boot/vmlinuz-* > /dev/null 2>&1 || ! [ -f "$kdir/binder_linux.ko" ]; then
    apt_update
    package=$(apt-cache search --names-only "^linux-image-${kernel_series}\$" | awk '{print $1}' | sort -V | tail -1)
    [ -n "$package" ] || die "no linux-image-6.1.*-amd64 package in the apt sources"
    log "downloading $package"
    rm -rf "$kdir" && mkdir -p "$kdir/deb"
    (cd "$kdir/deb" && apt-get download -qq "$package" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
    deb=$(ls "$kdir"/deb/*.deb 2>/dev/null | head -1)
    [ -n "$deb" ] || die "apt-get download $package produced no .deb"
    dpkg-deb -x "$deb" "$kdir"
    ko=$(find "$kdir/lib/modules" -name binder_linux.ko | head -1)
    [ -n "$ko" ] || die "$package ships no binder_linux.ko"
    cp "$ko" "$kdir/binder_linux.ko"
    rm -rf "$kdir/deb" "$kdir/lib" "$kdir/usr"
fi
vmlinuz=$(ls "$kdir"/boot/vmlinuz-* | head -1)
log "kernel $(basename "$vmlinuz")"

# ---- test binaries ----
cargo_profile=()
[ "$profile" = release ] && cargo_profile=(--release)
log "building binder_channel_peer ($profile)"
(cd "$repo" && cargo build --quiet "${cargo_profile[@]}" -p binder-channel --bin binder_channel_peer)
peer=$target/$profile/binder_channel_peer
[ -x "$peer" ] || die "no $peer"
log "building the sample ACI provider and the ACI VM client ($profile)"
(cd "$repo" && cargo build --quiet "${cargo_profile[@]}" -p aci-provider --bins)
aci_provider=$target/$profile/aci-provider
aci_client=$target/$profile/aci_vm_client
[ -x "$aci_provider" ] && [ -x "$aci_client" ] || die "no $aci_provider / $aci_client"

hub=$work/tools/bin/rsb_hub
if ! [ -x "$hub" ]; then
    log "building rsb_hub (rsbinder-tools $rsbinder_tools_version)"
    cargo install --quiet --locked --version "=$rsbinder_tools_version" rsbinder-tools \
        --bin rsb_hub --root "$work/tools" --target-dir "$work/tools-build"
fi
[ -x "$hub" ] || die "no $hub"

# ---- initramfs ----
root=$work/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,lib/modules,etc}
cp /bin/busybox "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list); do
    [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
cp "$peer" "$root/bin/binder_channel_peer"
cp "$hub" "$root/bin/rsb_hub"
cp "$aci_provider" "$root/bin/aci-provider"
cp "$aci_client" "$root/bin/aci_vm_client"
# ACI round: each side's registry maps the other side's UID (provider 1000, controller 2000).
digest=AB00000000000000000000000000000000000000000000000000000000000001
printf '{"version":1,"packages":[{"uid":2000,"package":"org.agentos.app","signingCertSha256":"%s","permissions":["ai.aci.permission.CALL"]}]}\n' "$digest" > "$root/etc/aci-provider-registry.json"
printf '{"version":1,"packages":[{"uid":1000,"package":"com.example.acidemo","signingCertSha256":"%s","versionCode":1,"exports":{"aci":{"actions":["ai.aci.core.ACTION_BIND"],"socket":"/unused-on-kernel-binder"}}}]}\n' "$digest" > "$root/etc/aci-controller-registry.json"
cp "$kdir/binder_linux.ko" "$root/lib/modules/"
# The binaries' shared libraries, at the paths the dynamic loader looks for them.
for lib in $(ldd "$peer" "$hub" "$aci_provider" "$aci_client" | awk '/=> \//{print $3} /^\t\/[^ ]+ \(/{print $1}' | sort -u); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
done
printf 'root:x:0:0:root:/:/bin/sh\nprovider:x:1000:1000::/:/bin/sh\nclient:x:2000:2000::/:/bin/sh\nintruder:x:3000:3000::/:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\nprovider:x:1000:\nclient:x:2000:\nintruder:x:3000:\n' > "$root/etc/group"
sed "s/^MESSAGES=.*/MESSAGES=$messages/" "$here/init.sh" > "$root/init"
chmod 0755 "$root/init"
(cd "$root" && find . | /bin/busybox cpio -o -H newc -R 0:0 2> /dev/null | gzip -1 > "$work/initramfs.gz")
log "initramfs $(du -h "$work/initramfs.gz" | cut -f1)"

# ---- boot ----
serial=$work/serial.log
log "booting under qemu (TCG software emulation, timeout ${timeout_s}s)"
start=$(date +%s)
set +e
timeout --foreground "$timeout_s" qemu-system-x86_64 \
    -accel tcg,thread=multi -cpu max -smp 2 -m 1024 \
    -nographic -no-reboot -nodefaults -serial stdio -display none \
    -kernel "$vmlinuz" -initrd "$work/initramfs.gz" \
    -append "console=ttyS0 panic=-1 quiet loglevel=3" < /dev/null > "$serial" 2>&1
qemu_status=$?
set -e
elapsed=$(($(date +%s) - start))

tr -d '\r' < "$serial" | grep -a -o 'BINDER-VM:.*' || true
summary=$(tr -d '\r' < "$serial" | grep '^BINDER-VM: RESULT' | tail -1 || true)
log "boot + run took ${elapsed}s (qemu exit $qemu_status)"
if [ -z "$summary" ]; then
    tail -40 "$serial" >&2
    die "no result from the VM (timeout or crash)"
fi
if ! echo "$summary" | grep -q ' 0 failed$'; then
    die "$summary"
fi
# The pass/fail counts, for test-runner summaries.
echo "${summary#BINDER-VM: RESULT }"
