#!/usr/bin/env bash
# Real RDMA verbs for CI: boots a Debian kernel under qemu (TCG), creates Soft-RoCE (rxe0 on lo)
# and runs, inside the guest, the verbs contract suite on provider ibv (on the host's JDK and again
# on Temurin 25, where the ibv calls are FFM downcalls), the secure channel's tests
# on ibv, the netns fault tests with tc netem (provider soft; the guest kernel has sch_netem),
# ibv_rc_pingpong interop in both roles, and perftest ib_write_lat/ib_write_bw next to the Java
# WRITE benchmark.
#
#   scripts/softroce/ci.sh            # from the repository root; root installs what is missing
#   SOFTROCE_GUEST_STEPS=faults scripts/softroce/ci.sh    # only some guest steps (default: all)
#   SOFTROCE_JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java scripts/softroce/ci.sh  # guest JVM
#   SOFTROCE_JAVA25=/opt/jdk-25/bin/java scripts/softroce/ci.sh   # the contract-java25 step's JVM
#
# Exits non-zero when a guest test fails; exits 0 with a "SOFTROCE SKIP" line when qemu or the
# kernel cannot be had. See docs/softroce.md.
# The body is one block, read whole before it runs: editing this file during a run is safe.
{
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
HERE=$REPO/scripts/softroce
# under the checkout: the guest sees the host root over 9p, but not /root (mode 700) here
CACHE=${SOFTROCE_CACHE:-$REPO/target/softroce-cache}
WORK=${SOFTROCE_WORK:-$REPO/target/softroce}
GUEST_TIMEOUT_S=${SOFTROCE_GUEST_TIMEOUT_S:-2700}
# the JVM of every guest step (the guest sees the host's /usr/lib/jvm); default: the host's java
GUEST_JAVA=${SOFTROCE_JAVA:-$(command -v java)}
GUEST_JAVA=$(readlink -f "$GUEST_JAVA" || echo "$GUEST_JAVA")
[ -x "$GUEST_JAVA" ] || { echo "softroce: SOFTROCE_JAVA '$GUEST_JAVA' is no executable java"; exit 2; }
# the contract-java25 step's JVM (the contract suite again, the ibv calls as FFM downcalls): Java
# 22+; where the default is missing the step reports SKIP naming it, a wrong SOFTROCE_JAVA25 is refused
JAVA25=${SOFTROCE_JAVA25:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
JAVA25=$(readlink -f "$JAVA25" || echo "$JAVA25")
JAVA25_FEATURE=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$(dirname "$(dirname "$JAVA25")")/release" 2>/dev/null || true)
JAVA25_MISSING=""
if [ ! -x "$JAVA25" ]; then
  JAVA25_MISSING="no executable $JAVA25 (install Temurin 25, or set SOFTROCE_JAVA25 to a Java 22+)"
elif [ "${JAVA25_FEATURE:-0}" -lt 22 ]; then
  JAVA25_MISSING="$JAVA25 is Java ${JAVA25_FEATURE:-of unknown version (no release file)}, not 22+"
fi
if [ -n "$JAVA25_MISSING" ]; then
  [ -z "${SOFTROCE_JAVA25:-}" ] || { echo "softroce: SOFTROCE_JAVA25: $JAVA25_MISSING"; exit 2; }
  JAVA25=""
fi
START=$(date +%s)

skip() { echo "SOFTROCE SKIP: $*"; echo "SOFTROCE SKIP: real-verbs tests did not run"; exit 0; }
say() { echo "softroce: $*"; }

# guest steps to run (rxe0 set-up always runs) and the results each one reports
STEPS=${SOFTROCE_GUEST_STEPS:-all}
EXPECTED=1
WANT_JAVA25=0
for s in ${STEPS//,/ }; do
  case $s in
    all) EXPECTED=$((EXPECTED + 8)); WANT_JAVA25=1 ;;
    doctor | contract | channel | faults) EXPECTED=$((EXPECTED + 1)) ;;
    contract-java25) WANT_JAVA25=1 ;;
    interop | perf) EXPECTED=$((EXPECTED + 2)) ;;
    *) echo "softroce: unknown step '$s' in SOFTROCE_GUEST_STEPS (all doctor contract contract-java25 channel faults interop perf)"; exit 2 ;;
  esac
done
# contract-java25 is expected only where there is a Java 25; elsewhere it is reported as SKIP
[ "$WANT_JAVA25" = 1 ] && [ -n "$JAVA25" ] && EXPECTED=$((EXPECTED + 1))
[ "$WANT_JAVA25" = 1 ] && [ -n "$JAVA25_MISSING" ] && say "contract-java25 will be skipped: $JAVA25_MISSING"

PACKAGES="qemu-system-x86 qemu-system-data rdma-core ibverbs-utils ibverbs-providers libibverbs-dev perftest busybox-static cpio kmod xz-utils zstd iproute2 gcc"
missing=""
for tool in qemu-system-x86_64 ibv_rc_pingpong ib_write_lat busybox cpio depmod xz rdma gcc; do
  command -v "$tool" > /dev/null 2>&1 || missing="$missing $tool"
done
[ -f /usr/include/infiniband/verbs.h ] || missing="$missing libibverbs-dev"
# the initramfs needs the static busybox; Debian's plain busybox is dynamically linked
dpkg -s busybox-static > /dev/null 2>&1 || missing="$missing busybox-static"
mkdir -p "$CACHE"
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    say "installing $PACKAGES (missing:$missing)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q > /dev/null || true
    apt-get install -y -q --no-install-recommends $PACKAGES > "$CACHE.apt.log" 2>&1 \
      || { mkdir -p "$(dirname "$CACHE")"; skip "apt-get install failed (see $CACHE.apt.log):$missing"; }
  else
    skip "missing$missing; install: apt-get install $PACKAGES"
  fi
fi
QBOOT=$(ls /usr/share/qemu/qboot.rom /usr/share/seabios/qboot.rom 2>/dev/null | head -1 || true)

# --- kernel: Debian's current linux-image, unpacked, uncompressed -------------------------------
mkdir -p "$CACHE" "$WORK"
kernel_package() {
  apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'
}
KPKG=$(kernel_package)
if [ -z "$KPKG" ] && [ "$(id -u)" = 0 ]; then
  apt-get update -q > /dev/null 2>&1 || true
  KPKG=$(kernel_package)
fi
[ -n "$KPKG" ] || skip "apt-cache does not know linux-image-amd64 (run apt-get update)"
KROOT=$CACHE/$KPKG
if [ ! -f "$KROOT/.done" ]; then
  say "downloading $KPKG"
  rm -rf "$KROOT" && mkdir -p "$KROOT"
  (cd "$CACHE" && apt-get download "$KPKG" > /dev/null 2>&1) || skip "apt-get download $KPKG failed"
  dpkg-deb -x "$CACHE/${KPKG}"_*.deb "$KROOT"
  rm -f "$CACHE/${KPKG}"_*.deb
  touch "$KROOT/.done"
fi
KVER=$(ls "$KROOT/lib/modules" | head -1)
depmod -b "$KROOT" "$KVER"
VMLINUX=$CACHE/vmlinux-$KVER
if [ ! -s "$VMLINUX" ]; then
  # the same steps as the kernel's scripts/extract-vmlinux: find the payload's magic, decompress
  for pair in "FD377A585A00:xz -dc" "28B52FFD:zstd -dc" "1F8B08:gzip -dc"; do
    magic=${pair%%:*}; tool=${pair#*:}
    for off in $(od -An -v -tx1 -w1 "$KROOT/boot/vmlinuz-$KVER" | tr -d ' \n' \
                 | grep -ob "$(echo "$magic" | tr 'A-F' 'a-f')" | cut -d: -f1); do
      tail -c +$((off / 2 + 1)) "$KROOT/boot/vmlinuz-$KVER" | $tool > "$VMLINUX.tmp" 2>/dev/null || true
      if head -c 4 "$VMLINUX.tmp" | od -An -tx1 | grep -q '7f 45 4c 46'; then
        mv "$VMLINUX.tmp" "$VMLINUX"; break 2
      fi
    done
  done
  rm -f "$VMLINUX.tmp"
fi
KERNEL=$VMLINUX
BIOS=(-bios "$QBOOT")
if [ ! -s "$VMLINUX" ] || [ -z "$QBOOT" ]; then
  say "no uncompressed kernel or qboot.rom: booting bzImage with SeaBIOS (slower)"
  KERNEL=$KROOT/boot/vmlinuz-$KVER
  BIOS=()
fi

# --- initramfs: static busybox + the modules, see init.sh ---------------------------------------
IRD=$WORK/initramfs
rm -rf "$IRD" && mkdir -p "$IRD"/{bin,modules,proc,sys,dev}
cp /bin/busybox "$IRD/bin/busybox"
: > "$IRD/modules.order"
# veth and sch_netem: the netns fault tests (NetnsFaultTest with tc netem)
for m in virtio_pci 9pnet_virtio 9p overlay crc32_generic rdma_rxe ib_uverbs rdma_ucm veth sch_netem; do
  modprobe -d "$KROOT" -S "$KVER" --show-depends "$m" | awk '$1=="insmod"{print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
  cp "$ko" "$IRD/modules/"
  basename "$ko" >> "$IRD/modules.order"
done
echo "$KROOT/lib/modules" > "$IRD/modules.host"
cp "$HERE/init.sh" "$IRD/init"
chmod +x "$IRD/init"
(cd "$IRD" && find . | cpio -o -H newc --quiet) > "$WORK/initramfs.cpio"

# --- Java: test classes and a classpath the guest sees at the same paths -------------------------
say "building verbs-native, secure-host (host and client) and cli test classes"
# one reactor run: modules resolve to each other's target/classes; every module writes its own
# test class path to target/srdma-cp.txt
./mvnw -B -q -pl verbs-native,secure-host,cli -am -DskipTests -Dspotless.check.skip=true \
  test-compile dependency:build-classpath -Dmdep.includeScope=test \
  -Dmdep.outputFile=target/srdma-cp.txt > /dev/null
./mvnw -B -q dependency:copy -Dartifact=org.junit.platform:junit-platform-console-standalone:1.14.1 \
  -DoutputDirectory="$WORK" -Dmdep.stripVersion=true > /dev/null
# a snapshot of the classes: the guest must not see a rebuild that happens while it runs
rm -rf "$WORK/classes" "$WORK/test-classes" "$WORK/modules"
cp -r verbs-native/target/classes "$WORK/classes"
cp -r verbs-native/target/test-classes "$WORK/test-classes"
CP="$WORK/test-classes:$WORK/classes:$(cat verbs-native/target/srdma-cp.txt)"
SNAP_CP=""
for m in verbs-native key-exchange access-policy secure-channel secure-host admin-console cli; do
  mkdir -p "$WORK/modules/$m"
  cp -r "$m/target/classes" "$WORK/modules/$m/classes"
  SNAP_CP="$SNAP_CP -e s#$REPO/$m/target/classes#$WORK/modules/$m/classes#g"
done
# the channel tests (host and clients in one JVM) are secure-host's: it holds the host and
# depends on secure-channel, the tenant SDK
cp -r secure-host/target/test-classes "$WORK/modules/secure-host/test-classes"
# shellcheck disable=SC2086
CP_CHANNEL="$WORK/modules/secure-host/test-classes:$WORK/modules/secure-host/classes:$(sed $SNAP_CP secure-host/target/srdma-cp.txt)"
cp -r cli/target/test-classes "$WORK/modules/cli/test-classes"
# shellcheck disable=SC2086
CP_CLI="$WORK/modules/cli/test-classes:$WORK/modules/cli/classes:$(sed $SNAP_CP cli/target/srdma-cp.txt)"

OUT=$WORK/out
rm -rf "$OUT" && mkdir -p "$OUT"
cp "$HERE/guest.sh" "$OUT/guest.sh"
cat > "$OUT/guest.env" <<ENV
REPO=$REPO
JAVA=$GUEST_JAVA
JAVA25=$JAVA25
CP=$CP
CP_CHANNEL=$CP_CHANNEL
CP_CLI=$CP_CLI
STEPS="$STEPS"
FAULTS_TESTS=${SOFTROCE_FAULTS_TESTS:-lossyAndSlowLink}
FAULTS_TIME_SCALE=${SOFTROCE_FAULTS_TIME_SCALE:-10}
FAULTS_BUDGET_S=${SOFTROCE_FAULTS_BUDGET_S:-600}
CONSOLE_JAR=$WORK/junit-platform-console-standalone.jar
CHANNEL_BUDGET_S=${SOFTROCE_CHANNEL_BUDGET_S:-1200}
SUITE_BUDGET_S=${SOFTROCE_SUITE_BUDGET_S:-1500}
PINGPONG_ITERS=${SOFTROCE_PINGPONG_ITERS:-200}
LAT_SIZE=64
LAT_ITERS=${SOFTROCE_LAT_ITERS:-500}
BW_SIZE=65536
BW_ITERS=${SOFTROCE_BW_ITERS:-1000}
PERF_ROUNDS=${SOFTROCE_PERF_ROUNDS:-3}
ENV

# --- boot ---------------------------------------------------------------------------------------
say "booting $KVER under qemu TCG (log: $OUT/console.log)"
BOOT=$(date +%s)
set +e
timeout "$GUEST_TIMEOUT_S" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -m 4096 -smp 2 \
  "${BIOS[@]}" -kernel "$KERNEL" -initrd "$WORK/initramfs.cpio" \
  -append "console=ttyS0 rdinit=/init panic=-1 quiet loglevel=4 mitigations=off" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs local,path="$OUT",mount_tag=out,security_model=none \
  -nographic -serial file:"$OUT/console.log" -monitor none -no-reboot -nic none
QRC=$?
set -e
END=$(date +%s)
echo "----- guest console -----"
cat "$OUT/console.log" || true
echo "----- end of guest console -----"
if [ $QRC = 124 ]; then
  echo "SOFTROCE FAIL: the guest ran past ${GUEST_TIMEOUT_S}s"
fi
# "class#method PASSED|FAILED|SKIPPED" per test case of JUnit XML reports
per_test() {
  awk -v RS='<testcase ' 'FNR > 1 {
      match($0, /^name="[^"]*"/); n = substr($0, RSTART + 6, RLENGTH - 7)
      match($0, /classname="[^"]*"/); c = substr($0, RSTART + 11, RLENGTH - 12)
      st = "PASSED"
      if ($0 ~ /<failure|<error/) st = "FAILED"; else if ($0 ~ /<skipped/) st = "SKIPPED"
      print c "#" n " " st }' "$@"
}
# "class#method: message" per failed test case (the assertion's message, cut to 500 characters),
# printed near the end of the output so that a CI log's tail says why
failure_reasons() {
  awk -v RS='<testcase ' 'FNR > 1 && /<failure|<error/ {
      match($0, /^name="[^"]*"/); n = substr($0, RSTART + 6, RLENGTH - 7)
      match($0, /classname="[^"]*"/); c = substr($0, RSTART + 11, RLENGTH - 12)
      m = "(no message)"
      if (match($0, /<(failure|error)[^>]* message="[^"]*"/)) {
        m = substr($0, RSTART, RLENGTH); sub(/^.* message="/, "", m); sub(/"$/, "", m)
      } else if (match($0, /<(failure|error)[^>]*>[^<]*/)) {
        m = substr($0, RSTART, RLENGTH); sub(/^<[^>]*>/, "", m)
      }
      gsub(/&quot;/, "\"", m); gsub(/&lt;/, "<", m); gsub(/&gt;/, ">", m); gsub(/&#10;/, " ", m)
      gsub(/&amp;/, "\\&", m); gsub(/[\r\n]+/, " ", m)
      print "REASON " c "#" n ": " substr(m, 1, 500) }' "$@"
}
# the suite, per test; failures listed in known-differences.txt are reported, not failed
KNOWN=$HERE/known-differences.txt
# the IbvProviderTest case that asserts the opened rxe0's per-message calls take the path its Java
# allows: on Java 25 it must have passed (not skipped) for contract-suite-ibv-java25 to pass
BINDING_TEST="io.srdma.verbs.ibv.IbvProviderTest#theDevicesPerMessageCallsTakeThePathThisJavaAllows"
suite_verdict() { # reports folder, title, result name, test that must pass (or "")
  local dir=$1 title=$2 name=$3 required=$4 failed=0 passed=0 required_ran=0 test status reason
  ls "$dir"/*.xml > /dev/null 2>&1 || return 0
  echo "----- $title, per test -----"
  while read -r test status; do
    [ -n "$test" ] || continue
    if [ "$status" = FAILED ]; then
      reason=$(grep -F "$test |" "$KNOWN" | sed 's/^[^|]*| //' || true)
      if [ -n "$reason" ]; then
        echo "KNOWN-DIFFERENCE $test -- $reason"
        continue
      fi
      failed=$((failed + 1))
    elif [ "$status" = PASSED ]; then
      passed=$((passed + 1))
      [ "${test%()}" = "$required" ] && required_ran=1
    fi
    echo "$status $test"
  done <<< "$(per_test "$dir"/*.xml)"
  echo "$title: $passed passed, $failed failed (known differences above)"
  if [ -n "$required" ] && [ $required_ran = 0 ]; then
    echo "REASON $title: $required did not pass (it must run and pass here)"
    failed=$((failed + 1))
  fi
  if [ -f "$OUT/results.txt" ] && grep -q "^RAN $name(" "$OUT/results.txt"; then
    if [ "$failed" = 0 ] && [ "$passed" -gt 0 ]; then
      sed -i "s/^RAN $name(.*/PASS $name/" "$OUT/results.txt"
    else
      sed -i "s/^RAN \($name(.*\)/FAIL \1/" "$OUT/results.txt"
    fi
  fi
}
suite_verdict "$OUT/junit" "verbs contract suite on provider ibv" contract-suite-ibv ""
# on Java 25 the calls must be the downcalls: the binding test passed, and no JVM of the suite
# logged the provider's fallback to jffi (OpsTable logs it once at info on Java 22+)
if [ -f "$OUT/results.txt" ] && grep -m1 "libibverbs' per-message calls: jffi" "$OUT/suite-java25.log" 2>/dev/null; then
  echo "REASON contract-suite-ibv-java25: a JVM of the suite fell back to jffi (the line above)"
  sed -i 's/^RAN contract-suite-ibv-java25(/FAIL contract-suite-ibv-java25(jffi fallback,/' "$OUT/results.txt"
fi
suite_verdict "$OUT/junit-java25" "verbs contract suite on provider ibv on Java 25 (FFM downcalls)" \
  contract-suite-ibv-java25 "$BINDING_TEST"
CHANNEL_FAILED=0
CHANNEL_PASSED=0
if ls "$OUT"/junit-channel/*.xml > /dev/null 2>&1; then
  echo "----- channel end-to-end and threat tests (secure-host) on provider ibv, per test -----"
  while read -r test status; do
    [ -n "$test" ] || continue
    case $status in
      FAILED) CHANNEL_FAILED=$((CHANNEL_FAILED + 1)) ;;
      PASSED) CHANNEL_PASSED=$((CHANNEL_PASSED + 1)) ;;
    esac
    echo "$status $test"
  done <<< "$(per_test "$OUT"/junit-channel/*.xml)"
  echo "channel tests on ibv: $CHANNEL_PASSED passed, $CHANNEL_FAILED failed"
fi
if [ -f "$OUT/results.txt" ] && grep -q '^RAN channel-ibv' "$OUT/results.txt"; then
  if [ "$CHANNEL_FAILED" = 0 ] && [ "$CHANNEL_PASSED" -gt 0 ]; then
    sed -i 's/^RAN channel-ibv.*/PASS channel-ibv/' "$OUT/results.txt"
  else
    sed -i 's/^RAN \(channel-ibv.*\)/FAIL \1/' "$OUT/results.txt"
  fi
fi
# the fault tests pass when none failed or skipped and the netem case passed
FAULTS_FAILED=0
FAULTS_PASSED=0
NETEM_RAN=0
if ls "$OUT"/junit-faults/*.xml > /dev/null 2>&1; then
  echo "----- netns fault tests (tc netem) on provider soft, per test -----"
  while read -r test status; do
    [ -n "$test" ] || continue
    case $status in
      PASSED) FAULTS_PASSED=$((FAULTS_PASSED + 1)) ;;
      *) FAULTS_FAILED=$((FAULTS_FAILED + 1)) ;;
    esac
    [ "${test%()} $status" = "io.srdma.cli.faults.NetnsFaultTest#lossyAndSlowLink PASSED" ] && NETEM_RAN=1
    echo "$status $test"
  done <<< "$(per_test "$OUT"/junit-faults/*.xml)"
  grep -E '^(netem: |writer: )' "$OUT/faults.log" 2>/dev/null | cut -c1-400 || true
  echo "fault tests: $FAULTS_PASSED passed, $FAULTS_FAILED failed or skipped, netem case ran: $NETEM_RAN"
fi
if [ -f "$OUT/results.txt" ] && grep -q '^RAN faults-netem' "$OUT/results.txt"; then
  if [ "$FAULTS_FAILED" = 0 ] && [ "$NETEM_RAN" = 1 ]; then
    sed -i 's/^RAN faults-netem.*/PASS faults-netem/' "$OUT/results.txt"
  else
    sed -i 's/^RAN \(faults-netem.*\)/FAIL \1/' "$OUT/results.txt"
  fi
fi
[ -s "$OUT/perf.txt" ] && echo "----- perf (rxe0 under TCG: only ratios mean anything) -----"
cat "$OUT/perf.txt" 2>/dev/null || true
# per round: Java / C (latency: lower is better; bandwidth: higher is better)
awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[$1, kv[1]] = kv[2] } r = v[$1, "round"]
       if ($1 == "C_WRITE_LAT") { cl[r] = v[$1, "t_typical_us"]; ca[r] = v[$1, "t_avg_us"] }
       if ($1 == "JAVA_WRITE_LAT") { jl[r] = v[$1, "t_typical_us"]; ja[r] = v[$1, "t_avg_us"] }
       if ($1 == "C_WRITE_BW") cb[r] = v[$1, "MiB_per_s"]
       if ($1 == "JAVA_WRITE_BW") jb[r] = v[$1, "MiB_per_s"]
       if (r > n) n = r }
     END { for (r = 1; r <= n; r++) if (cl[r] > 0 && ca[r] > 0 && cb[r] > 0)
       printf "round %d: latency Java/C typical %.2f, average %.2f; bandwidth Java/C %.2f\n",
              r, jl[r] / cl[r], ja[r] / ca[r], jb[r] / cb[r] }' "$OUT/perf.txt" 2>/dev/null || true
for d in junit junit-java25 junit-channel junit-faults; do
  ls "$OUT/$d"/*.xml > /dev/null 2>&1 && failure_reasons "$OUT/$d"/*.xml
done
if [ "$WANT_JAVA25" = 1 ] && [ -n "$JAVA25_MISSING" ]; then
  echo "SKIP contract-suite-ibv-java25: $JAVA25_MISSING" >> "$OUT/results.txt"
fi
echo "----- results -----"
cat "$OUT/results.txt" 2>/dev/null || true
PASSED=$(grep -c '^PASS' "$OUT/results.txt" 2>/dev/null || true)
FAILED=$(grep -c '^FAIL' "$OUT/results.txt" 2>/dev/null || true)
if [ "$((PASSED + FAILED))" -lt "$EXPECTED" ]; then
  FAILED=$((FAILED + EXPECTED - PASSED - FAILED))
fi
echo "softroce: guest run took $((END - BOOT)) s (all: $((END - START)) s)"
echo "softroce: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
exit $?
}
