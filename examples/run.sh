#!/usr/bin/env bash
# Installs the secure-rdma artifacts into a PRIVATE local repository, builds the example tenant
# application (examples/kv-cache) against them the way a user's project does (its own pom, no
# parent, the BOM), and runs it against a real `srdma serve` on a throw-away dev deployment (CA,
# certificates, policy, audit log in a temporary directory). README "Example".
#
#   bash examples/run.sh            # CI (.ci/run, README's test command)
#   bash examples/run.sh -o         # offline: everything already in ~/.m2/repository
#
# Arguments go to both Maven runs. The private repository ($WORK/m2) is the local repository of
# both runs; ~/.m2/repository (or $EXAMPLE_MAVEN_TAIL) is read behind it as a read-only tail
# (Maven 3.9 maven.repo.local.tail), so third-party jars and plugins come from there and nothing of
# ours is ever installed into it. Every wait is bounded (EXAMPLE_WAIT_S, default 60 s each); serve
# is stopped and the temporary directory removed however the script ends. Exit 0 when the example
# and the host's audit log show what they must, non-zero with a line saying what went wrong.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
WAIT_S=${EXAMPLE_WAIT_S:-60}
START=$(date +%s)

fail() {
  echo "examples: FAILED: $*" >&2
  exit 1
}
say() { echo "examples: $*"; }

# the release to build against: the checkout's own version (root pom.xml, after its artifactId)
VERSION=$(awk '/<artifactId>secure-rdma<\/artifactId>/ { f = 1; next }
  f && /<version>/ { gsub(/.*<version>|<\/version>.*/, ""); print; exit }' pom.xml)
[ -n "$VERSION" ] || fail "cannot read the project version from pom.xml"

command -v java >/dev/null || fail "no java on PATH"
TAIL=${EXAMPLE_MAVEN_TAIL:-$HOME/.m2/repository}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/srdma-example.XXXXXX")
SERVE_PID=
cleanup() {
  local rc=$?
  if [ -n "$SERVE_PID" ] && kill -0 "$SERVE_PID" 2>/dev/null; then
    kill -TERM "$SERVE_PID" 2>/dev/null || true
    for _ in $(seq 1 $((WAIT_S * 10))); do
      kill -0 "$SERVE_PID" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$SERVE_PID" 2>/dev/null; then
      echo "examples: serve did not stop within ${WAIT_S}s of SIGTERM; killing it" >&2
      kill -KILL "$SERVE_PID" 2>/dev/null || true
    fi
  fi
  if [ "$rc" -ne 0 ] && [ -f "$WORK/serve.err" ]; then
    echo "examples: --- serve's standard error (last 40 lines) ---" >&2
    tail -n 40 "$WORK/serve.err" >&2 || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

srdma() { timeout "$WAIT_S" java -jar "$SRDMA_JAR" "$@"; }

# 1. The artifacts a user's project would take from a repository (the BOM, the SDK and what it
#    needs), and the srdma command, installed into the private repository only. Tests are not run
#    again here: README's test command ran them in `./mvnw -B verify` just before.
REPO=$WORK/m2
MVN_REPO=(-Dmaven.repo.local="$REPO" -Dmaven.repo.local.tail="$TAIL")
say "installing io.srdma $VERSION into a private repository ($REPO, tail $TAIL)"
timeout $((WAIT_S * 15)) ./mvnw -B -q install -pl bom,secure-channel,cli -am -DskipTests \
  "${MVN_REPO[@]}" "$@" >"$WORK/install.log" 2>&1 || {
  tail -n 40 "$WORK/install.log" >&2
  fail "installing the artifacts into $REPO failed"
}
[ -f "$REPO/io/srdma/secure-rdma-bom/$VERSION/secure-rdma-bom-$VERSION.pom" ] ||
  fail "the BOM was not installed into $REPO"
SRDMA_JAR=$ROOT/cli/target/srdma.jar
[ -f "$SRDMA_JAR" ] || fail "$SRDMA_JAR was not built"

# 2. The example, built like a user's project: its own pom, the BOM, the installed artifacts.
say "building examples/kv-cache against the installed io.srdma $VERSION"
timeout $((WAIT_S * 5)) ./mvnw -B -q -f examples/kv-cache/pom.xml clean package \
  -Dsrdma.version="$VERSION" "${MVN_REPO[@]}" "$@" >"$WORK/example.log" 2>&1 || {
  tail -n 40 "$WORK/example.log" >&2
  fail "the example did not build against the installed artifacts"
}
APP_JAR=$ROOT/examples/kv-cache/target/kv-cache.jar
[ -f "$APP_JAR" ] || fail "$APP_JAR was not built"

# 3. A dev deployment: CA, the host's and the trainer's certificates, the example's policy.
srdma ca init --dir "$WORK/ca" >/dev/null
srdma cert issue --ca "$WORK/ca" --tenant host --peer host-1 --out "$WORK/certs" >/dev/null
srdma cert issue --ca "$WORK/ca" --tenant acme --peer trainer-1 --out "$WORK/certs" >/dev/null
cp examples/kv-cache/policy.yaml "$WORK/policy.yaml"
srdma policy check "$WORK/policy.yaml" >/dev/null || fail "examples/kv-cache/policy.yaml is not valid"
cat >"$WORK/serve.yaml" <<'EOF'
version: 1
listen: 127.0.0.1:0
provider: soft
device:
  bind-address: 127.0.0.1
tls:
  certificate: certs/host.host-1.crt
  key: certs/host.host-1.key
  ca-certificate: ca/ca.crt
  crl: ca/crl.pem
policy:
  file: policy.yaml
audit:
  file: audit.log
regions:
  - tenant: acme
    region: kvcache
    size: 16MiB
limits:
  shutdown-timeout: 15s
EOF

# 4. srdma serve, in the background; wait for its ready line (the port is only shown there).
java -jar "$SRDMA_JAR" serve --config "$WORK/serve.yaml" >"$WORK/serve.out" 2>"$WORK/serve.err" &
SERVE_PID=$!
ADDRESS=
for _ in $(seq 1 $((WAIT_S * 10))); do
  ADDRESS=$(sed -n 's/^srdma serve: listening on \([^ ]*:[0-9]*\) .*/\1/p' "$WORK/serve.out")
  [ -n "$ADDRESS" ] && break
  kill -0 "$SERVE_PID" 2>/dev/null || fail "srdma serve exited before it was ready"
  sleep 0.1
done
[ -n "$ADDRESS" ] || fail "srdma serve printed no 'listening on' line within ${WAIT_S}s"
say "srdma serve ready on $ADDRESS"

# 5. The tenant application.
timeout "$WAIT_S" java -jar "$APP_JAR" \
  --host "$ADDRESS" --host-name host-1 \
  --cert "$WORK/certs/acme.trainer-1.crt" --key "$WORK/certs/acme.trainer-1.key" \
  --ca-cert "$WORK/ca/ca.crt" --crl "$WORK/ca/crl.pem" ||
  fail "the kv-cache example failed (exit $?)"

# 6. Stop serve (SIGTERM: a clean stop, exit 143) and check what the host wrote down.
kill -TERM "$SERVE_PID"
rc=0
for _ in $(seq 1 $((WAIT_S * 10))); do
  kill -0 "$SERVE_PID" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$SERVE_PID" 2>/dev/null && fail "srdma serve did not stop within ${WAIT_S}s of SIGTERM"
wait "$SERVE_PID" || rc=$?
SERVE_PID=
[ "$rc" -eq 143 ] || fail "srdma serve ended with exit $rc after SIGTERM (expected 143)"
srdma audit verify "$WORK/audit.log" >/dev/null || fail "the host's audit log does not verify"
# one JSON line per event (docs/audit.md): the trainer's WRITE and READ grants, and no record the
# host could not open
grants=$(grep -c '"action":"grant",.*"actor":"srdma://acme/trainer-1"' "$WORK/audit.log" || true)
[ "$grants" -eq 2 ] || fail "the audit log shows $grants grants to srdma://acme/trainer-1, expected 2"
if grep -q '"action":"access_violation"' "$WORK/audit.log"; then
  fail "the host audited an access violation: $(grep -m1 '"action":"access_violation"' "$WORK/audit.log")"
fi
say "kv-cache OK against srdma serve in $(($(date +%s) - START)) s"
