#!/bin/bash
# Runs inside the Soft-RoCE guest (chrooted into the host's userland, see init.sh).
# ci.sh writes guest.env next to this file (REPO, JAVA, JAVA25, CP, CONSOLE_JAR, budgets, STEPS).
set -u -o pipefail
OUT=/srdma-out
. "$OUT/guest.env"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
cd "$REPO" || exit 1
RESULTS=$OUT/results.txt
: > "$RESULTS"
result() { echo "$1 $2" | tee -a "$RESULTS"; }
step() { echo; echo "=== $* ($(date +%T), $(cut -d' ' -f1 /proc/uptime)s up)"; }
# STEPS (SOFTROCE_GUEST_STEPS): "all" or some of doctor contract contract-java25 channel faults
# interop perf
want() { case " ${STEPS//,/ } " in *" all "* | *" $1 "*) return 0 ;; esac; return 1; }

step "rxe0 on lo"
ip link set lo up
if ! rdma link add rxe0 type rxe netdev lo; then
  result FAIL rxe-setup
  exit 1
fi
ibv_devices
ibv_devinfo -d rxe0 | grep -E 'state|active_mtu|link_layer|hca_id'
MTU=$(ibv_devinfo -d rxe0 | awk '/active_mtu/{print $2; exit}')
echo "GID table: $(cat /sys/class/infiniband/rxe0/ports/1/gids/1)"
ulimit -l unlimited
# every JVM here, including ones that tests start, logs to stderr (see logback-guest.xml)
export JAVA_TOOL_OPTIONS="-Dlogback.configurationFile=$REPO/scripts/softroce/logback-guest.xml"
# Java 22+ (SOFTROCE_JAVA): native access allowed, and on 24+ jffi's Unsafe memory access, as the
# srdma launcher does; from 22 the ibv provider's per-message calls are FFM downcalls (docs/verbs.md)
java_feature() { sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$(dirname "$(dirname "$1")")/release" 2>/dev/null; }
native_flags() { # feature
  [ "${1:-0}" -ge 22 ] && printf '%s' "--enable-native-access=ALL-UNNAMED"
  [ "${1:-0}" -ge 24 ] && printf '%s' " --sun-misc-unsafe-memory-access=allow"
  return 0
}
JFEATURE=$(java_feature "$JAVA")
JNATIVE=$(native_flags "$JFEATURE")
echo "guest JVM: $JAVA (Java ${JFEATURE:-unknown}) $JNATIVE"
result PASS rxe-setup

if want doctor; then
step "srdma doctor"
# the doctor's engine (srdma doctor prints the same report): it must see rxe0 with a RoCE v2 GID
# and the window-bounds self-test must find rxe not enforcing window bounds (docs/rdma-setup.md)
# shellcheck disable=SC2086
timeout 300 "$JAVA" $JNATIVE -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$CP" io.srdma.verbs.doctor.DoctorMain > "$OUT/doctor.log" 2>&1
DRC=$?
cat "$OUT/doctor.log"
# on Java 22+ the per-message verbs calls must be the downcalls, on 17-21 jffi
CALLS='^verbs calls jffi, not downcalls: Java '
[ "${JFEATURE:-0}" -ge 22 ] && CALLS='^verbs calls FFM downcalls '
if [ $DRC = 0 ] && grep -q '^device rxe0 ' "$OUT/doctor.log" \
    && grep -q 'RoCE v2 GIDs: [0-9]' "$OUT/doctor.log" \
    && grep -q "$CALLS" "$OUT/doctor.log" \
    && grep -q 'windowBoundsEnforced=false' "$OUT/doctor.log"; then
  result PASS doctor
else
  result FAIL "doctor(rc=$DRC)"
fi
fi

JBASE="-Xss1m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dsrdma.test.provider=ibv"
JOPTS="$JNATIVE $JBASE"

# the verbs contract suite on provider ibv: java, its options, reports folder, log
contract_suite() {
  # the console launcher on the class path itself, so that java.class.path is complete for the
  # tests that start a second JVM (PeerProcessContractTest)
  # shellcheck disable=SC2086
  timeout "$SUITE_BUDGET_S" "$1" $2 -cp "$CONSOLE_JAR:$CP" \
    org.junit.platform.console.ConsoleLauncher execute \
    --select-package io.srdma.verbs \
    --include-classname '^io\.srdma\.verbs\.([A-Za-z]+ContractTest|ProviderSelectionTest|ibv\.[A-Za-z]+Test|doctor\.DeviceCountersRxeTest)$' \
    --details=tree --disable-banner --reports-dir "$3" 2>&1 | tee "$4"
  return "${PIPESTATUS[0]}"
}

if want contract; then
step "verbs contract suite on provider ibv"
contract_suite "$JAVA" "$JOPTS" "$OUT/junit" "$OUT/suite.log"
SUITE_RC=$?
# ci.sh judges the suite from the JUnit XML against known-differences.txt
result RAN "contract-suite-ibv(rc=$SUITE_RC)"
fi

# The same suite once more on Java 25 (JAVA25, ci.sh's SOFTROCE_JAVA25; empty when the host has
# none, and ci.sh then reports SKIP): there the ibv provider's per-message calls (post_send,
# post_recv, post_srq_recv, poll_cq) are FFM downcalls on rxe's real ops. ci.sh also requires
# IbvProviderTest's binding test to have passed, not skipped: it asserts the opened device's
# calls are the downcalls, so a fallback to jffi fails this step.
if want contract-java25; then
step "verbs contract suite on provider ibv, on Java 25 (FFM downcalls)"
if [ -n "$JAVA25" ]; then
  J25NATIVE=$(native_flags "$(java_feature "$JAVA25")")
  echo "Java 25 JVM: $JAVA25 $J25NATIVE"
  contract_suite "$JAVA25" "$J25NATIVE $JBASE" "$OUT/junit-java25" "$OUT/suite-java25.log"
  SUITE25_RC=$?
  result RAN "contract-suite-ibv-java25(rc=$SUITE25_RC)"
else
  echo "no Java 25 (ci.sh reports the SKIP and why)"
fi
fi

if want channel; then
step "channel end-to-end and threat tests of secure-host (revocation, live enforcement, pinning, region keys, receive credits, record runs and their bounds and SGE fallback) on provider ibv"
# host and clients in one JVM, each on its own rxe0 context; deadlines x10 for emulation
timeout "$CHANNEL_BUDGET_S" "$JAVA" $JOPTS -Dsrdma.test.timeScale=10 -cp "$CONSOLE_JAR:$CP_CHANNEL" \
  org.junit.platform.console.ConsoleLauncher execute \
  --select-class io.srdma.host.ChannelEndToEndTest --select-class io.srdma.host.ChannelThreatTest \
  --select-class io.srdma.host.HostLiveEnforcementTest --select-class io.srdma.host.HostPinningThreatTest \
  --select-class io.srdma.host.RegionKeyThreatTest --select-class io.srdma.host.HostEndingGrantRaceTest \
  --select-class io.srdma.host.HostReceiveCreditsTest \
  --select-class io.srdma.host.RecordRunThreatTest --select-class io.srdma.host.RecordRunDeliveryTest \
  --select-class io.srdma.host.RecordRunLengthTest --select-class io.srdma.host.RecordRunFallbackTest \
  --details=tree --disable-banner --reports-dir "$OUT/junit-channel" 2>&1 | tee "$OUT/channel.log"
CHANNEL_RC=${PIPESTATUS[0]}
# ci.sh judges it from the JUnit XML, per test
result RAN "channel-ibv(rc=$CHANNEL_RC)"
fi

if want faults; then
step "netns fault tests (tc netem) on provider soft"
# NetnsFaultTest (docs/faults.md): host and writers as separate JVMs in two network namespaces
# joined by veth; here the kernel has sch_netem, so lossyAndSlowLink must run, not skip
# (-Dsrdma.test.requireNetem=true). FAULTS_TESTS: "all" or test methods (default lossyAndSlowLink:
# each case takes 3-5 min under TCG, mostly JVM start-up and TLS), deadlines x FAULTS_TIME_SCALE.
# veth and sch_netem are in the initramfs (loaded at boot): module autoload would call
# /sbin/modprobe of the initramfs, which has none.
modprobe -a veth sch_netem
lsmod | grep -E '^(veth|sch_netem) '
tc -V
SELECT=(--select-class io.srdma.cli.faults.NetnsFaultTest)
if [ "$FAULTS_TESTS" != all ]; then
  SELECT=()
  for t in ${FAULTS_TESTS//,/ }; do SELECT+=(--select-method "io.srdma.cli.faults.NetnsFaultTest#$t"); done
fi
# The soft provider is pure Java, so a JVM of these tests dying with a fatal error (SIGSEGV or
# SIGILL in JIT-compiled JDK code) is an emulation fault of TCG ("JVMs dying under TCG" in
# docs/softroce.md): the step then runs once more, printing RETRY and the dead JVM's problematic
# frame; the first try's reports are kept in junit-faults-try1 and not judged. Any other failure,
# or a JVM dying again, fails the step.
for try in 1 2; do
  timeout "$FAULTS_BUDGET_S" "$JAVA" -Xss1m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Dsrdma.test.timeScale="$FAULTS_TIME_SCALE" -Dsrdma.test.requireNetem=true -cp "$CONSOLE_JAR:$CP_CLI" \
    org.junit.platform.console.ConsoleLauncher execute "${SELECT[@]}" \
    --config junit.jupiter.tempdir.cleanup.mode.default=NEVER \
    --details=tree --disable-banner --reports-dir "$OUT/junit-faults" 2>&1 | tee "$OUT/faults.log"
  FAULTS_RC=${PIPESTATUS[0]}
  [ "$FAULTS_RC" != 0 ] && [ $try = 1 ] \
    && grep -q 'A fatal error has been detected by the Java Runtime Environment' "$OUT/faults.log" || break
  echo "RETRY faults: a JVM died (emulation fault under TCG, docs/softroce.md): $(grep -o -m1 -E \
    '(SIGSEGV|SIGILL|SIGBUS) \(0x[0-9a-f]+\)|Problematic frame:[^]]{0,160}' "$OUT/faults.log" | tr '\n' ' ')"
  rm -rf "$OUT/junit-faults-try1" && mv "$OUT/junit-faults" "$OUT/junit-faults-try1"
  mv "$OUT/faults.log" "$OUT/faults-try1.log"
done
# what the host and writer JVMs printed, per test directory (kept: cleanup mode NEVER)
for d in /tmp/junit-*; do
  [ -d "$d" ] && mkdir -p "$OUT/faults-out/${d#/tmp/}" && cp "$d"/*.out* "$OUT/faults-out/${d#/tmp/}/" 2>/dev/null
done
# ci.sh judges it from the JUnit XML: no failure, no skip, lossyAndSlowLink passed
result RAN "faults-netem(rc=$FAULTS_RC)"
fi

PINGPONG="ibv_rc_pingpong -d rxe0 -g 1 -i 1 -m $MTU -s 4096 -n $PINGPONG_ITERS"
JAVA_BIN="$JAVA $JNATIVE -XX:+UseSerialGC -XX:ErrorFile=$OUT/hs_err_%p.log -cp $CP"
JAVA_QUICK="$JAVA_BIN -XX:TieredStopAtLevel=1"
# latency: the default JIT (C2); WriteBench warms up long enough for compiles to finish (C1
# alone measured ten times slower here). Bandwidth: C1 compiled in the foreground (-Xbatch) so
# that no compiler thread competes with rxe for the guest's two vCPUs (3x better than C2 here).
JAVA_LAT="$JAVA_BIN"
JAVA_BW="$JAVA_BIN -XX:TieredStopAtLevel=1 -Xbatch"

if want interop; then
step "interop: Java server + C ibv_rc_pingpong client"
timeout 300 $JAVA_QUICK io.srdma.verbs.ibv.RcPingpong server 18515 "$PINGPONG_ITERS" 4096 > "$OUT/pp-java-server.log" 2>&1 &
JPID=$!
for i in $(seq 1 120); do grep -q "PINGPONG listening" "$OUT/pp-java-server.log" && break; sleep 1; done
timeout 300 $PINGPONG 127.0.0.1 > "$OUT/pp-c-client.log" 2>&1
CRC=$?
wait $JPID
JRC=$?
cat "$OUT/pp-java-server.log" "$OUT/pp-c-client.log"
[ $CRC = 0 ] && [ $JRC = 0 ] && result PASS interop-java-server-c-client || result FAIL "interop-java-server-c-client(c=$CRC,java=$JRC)"

step "interop: C ibv_rc_pingpong server + Java client"
timeout 400 $PINGPONG > "$OUT/pp-c-server.log" 2>&1 &
CPID=$!
sleep 1
JRC=1
for attempt in 1 2 3 4 5; do
  timeout 300 $JAVA_QUICK io.srdma.verbs.ibv.RcPingpong client 127.0.0.1 18515 "$PINGPONG_ITERS" 4096 > "$OUT/pp-java-client.log" 2>&1
  JRC=$?
  grep -q "Connection refused" "$OUT/pp-java-client.log" || break
  sleep 2
done
wait $CPID
CRC=$?
cat "$OUT/pp-c-server.log" "$OUT/pp-java-client.log"
[ $CRC = 0 ] && [ $JRC = 0 ] && result PASS interop-c-server-java-client || result FAIL "interop-c-server-java-client(c=$CRC,java=$JRC)"
fi

PERF=$OUT/perf.txt
: > "$PERF"
perftest_pair() { # tool args... : server in background, client to 127.0.0.1
  local tool=$1; shift
  timeout 300 "$tool" -d rxe0 -x 1 -F "$@" > "$OUT/$tool-server.log" 2>&1 &
  local spid=$!
  sleep 2
  timeout 300 "$tool" -d rxe0 -x 1 -F "$@" 127.0.0.1 > "$OUT/$tool-client.log" 2>&1
  local rc=$?
  wait $spid
  cat "$OUT/$tool-client.log"
  return $rc
}

# One WriteBench run; a JVM that dies of SIGSEGV in JDK code under TCG (3 of 12 latency JVMs,
# in C1 code of java.io while starting up: an emulation fault, hs_err kept in out/) is run
# once more, and the retry is printed.
java_bench() { # mode round java-command size iters
  local mode=$1 round=$2 java=$3 size=$4 iters=$5 attempt tag
  tag=$(echo "$mode" | tr a-z A-Z)
  # a JVM under TCG sometimes dies of SIGILL inside JDK code before any RDMA call (emulation,
  # docs/softroce.md): retry, and judge the step on the rounds that ran
  for attempt in 1 2 3 4; do
    if timeout 600 $java io.srdma.verbs.ibv.WriteBench "$mode" "$size" "$iters" > "$OUT/java-$mode-$round.log" 2>&1 \
        && grep -q "^JAVA_WRITE_$tag " "$OUT/java-$mode-$round.log"; then
      grep "^JAVA_WRITE_$tag " "$OUT/java-$mode-$round.log" | sed "s/^JAVA_WRITE_$tag /JAVA_WRITE_$tag round=$round /" | tee -a "$PERF"
      return 0
    fi
    echo "RETRY java $mode round $round after attempt $attempt failed:"
    head -12 "$OUT/java-$mode-$round.log"
  done
  return 1
}

# C and Java alternate, ROUNDS times, so that load changes on the host hit both alike
LAT_OK=1
BW_OK=1
LAT_JAVA_ROUNDS=0
BW_JAVA_ROUNDS=0
want perf || PERF_ROUNDS=0
for round in $(seq 1 "$PERF_ROUNDS"); do
  step "round $round: C ib_write_lat"
  if perftest_pair ib_write_lat -s "$LAT_SIZE" -n "$LAT_ITERS"; then
    awk -v s="$LAT_SIZE" -v r="$round" '$1==s && NF>=7 {print "C_WRITE_LAT round=" r " bytes=" $1 " iters=" $2 " t_typical_us=" $5 " t_avg_us=" $6}' "$OUT/ib_write_lat-client.log" | tee -a "$PERF"
  else
    LAT_OK=0
  fi
  step "round $round: Java WRITE latency"
  java_bench lat "$round" "$JAVA_LAT" "$LAT_SIZE" "$LAT_ITERS" && LAT_JAVA_ROUNDS=$((LAT_JAVA_ROUNDS + 1)) || echo "PERF-ROUND-MISSING java lat round $round (JVM crashed 4 times under TCG)"
  step "round $round: C ib_write_bw"
  if perftest_pair ib_write_bw -s "$BW_SIZE" -n "$BW_ITERS"; then
    awk -v s="$BW_SIZE" -v r="$round" '$1==s && NF>=4 {print "C_WRITE_BW round=" r " bytes=" $1 " iters=" $2 " MiB_per_s=" $4}' "$OUT/ib_write_bw-client.log" | tee -a "$PERF"
  else
    BW_OK=0
  fi
  step "round $round: Java WRITE bandwidth"
  java_bench bw "$round" "$JAVA_BW" "$BW_SIZE" "$BW_ITERS" && BW_JAVA_ROUNDS=$((BW_JAVA_ROUNDS + 1)) || echo "PERF-ROUND-MISSING java bw round $round (JVM crashed 4 times under TCG)"
done
if want perf; then
[ $LAT_OK = 1 ] && [ $LAT_JAVA_ROUNDS -gt 0 ] && result PASS perf-write-latency-c-and-java || result FAIL perf-write-latency-c-and-java
[ $BW_OK = 1 ] && [ $BW_JAVA_ROUNDS -gt 0 ] && result PASS perf-write-bandwidth-c-and-java || result FAIL perf-write-bandwidth-c-and-java
fi
step "done"
