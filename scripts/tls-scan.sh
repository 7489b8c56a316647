#!/usr/bin/env bash
# External TLS check (docs/tls-scan.md): runs testssl.sh (Debian package testssl.sh) against
#   (a) the control plane of `srdma serve` (dev CA, host certificate and configuration made in a
#       temporary directory), and
#   (b) the HTTPS admin console of `srdma demo --console-port 0`,
# and exits non-zero when anything but TLS 1.3 is offered, when any cipher other than the TLS 1.3
# AEAD suites is offered, or when the control plane accepts a handshake without a client certificate.
#
# Exit: 0 all as expected; 1 a finding; 2 could not run (servers did not start, testssl timed out);
# 77 testssl.sh is not installed (apt-get install testssl.sh).
# Environment: SRDMA_CMD (default: ./srdma at the repository root; the JUnit test passes a java
# command line), TLS_SCAN_TIMEOUT (seconds per testssl run, default 100), TLS_SCAN_KEEP=1 keeps the
# work directory (printed) with testssl's full output.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
read -r -a srdma <<<"${SRDMA_CMD:-$root/srdma}"
limit="${TLS_SCAN_TIMEOUT:-100}"

if ! command -v testssl >/dev/null 2>&1; then
  echo "TLS-SCAN SKIP: testssl is not installed (Debian package testssl.sh: apt-get install testssl.sh)"
  exit 77
fi

work="$(mktemp -d /tmp/srdma-tls-scan.XXXXXX)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    wait "$p" 2>/dev/null || true
  done
  if [ "${TLS_SCAN_KEEP:-0}" = 1 ]; then
    echo "tls-scan: work directory kept: $work"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

# waits for a line matching $2 in file $1 (at most $3 seconds) and prints it
await_line() {
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    if grep -m1 -E "$2" "$1" 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  echo "tls-scan: no '$2' in $1 after $3 s:" >&2
  cat "$1" "$1.err" >&2 2>/dev/null || true
  return 1
}

# --- (a) srdma serve
"${srdma[@]}" ca init --dir "$work/ca" >/dev/null
"${srdma[@]}" cert issue --ca "$work/ca" --tenant host --peer host-1 --out "$work/certs" >/dev/null
cat >"$work/policy.yaml" <<'YAML'
version: 1
tenants:
  acme:
    regions:
      kvcache:
        size: 1MiB
    roles:
      trainer:
        permissions:
          - region:read,write:kvcache
        operations: [read, write]
        max-bytes-per-grant: 1MiB
        max-ttl: 10m
        max-live-grants: 8
    peers:
      - identity: srdma://acme/trainer-*
        roles: [trainer]
YAML
cat >"$work/serve.yaml" <<'YAML'
version: 1
listen: 127.0.0.1:0
provider: soft
tls:
  certificate: certs/host.host-1.crt
  key: certs/host.host-1.key
  ca-certificate: ca/ca.crt
  crl: ca/crl.pem
policy:
  file: policy.yaml
  watch: false
audit:
  file: audit.log
regions:
  - tenant: acme
    region: kvcache
    size: 1MiB
limits:
  # testssl opens hundreds of connections without a client certificate; with the default (20 per
  # address and minute) the host refuses 127.0.0.1 after the first 20 and the scan sees only that.
  auth-failures-per-minute: 1000000
  max-pending-handshakes: 1000
YAML
"${srdma[@]}" serve --config "$work/serve.yaml" >"$work/serve.out" 2>"$work/serve.out.err" &
pids+=($!)
# --- (b) the admin console of srdma demo
mkdir -p "$work/demo"
"${srdma[@]}" demo --console-port 0 --state-dir "$work/demo" >"$work/demo.out" 2>"$work/demo.out.err" &
pids+=($!)

serve_line="$(await_line "$work/serve.out" 'listening on' 90)" || exit 2
serve_port="$(sed -E 's/.*listening on [^ ]*:([0-9]+) .*/\1/' <<<"$serve_line")"
console_line="$(await_line "$work/demo.out" '^console: https://' 90)" || exit 2
console_port="$(sed -E 's#^console: https://[^ ]*:([0-9]+)/?.*#\1#' <<<"$console_line")"
echo "tls-scan: srdma serve control plane on 127.0.0.1:$serve_port, console on 127.0.0.1:$console_port"
echo "tls-scan: $(testssl --version 2>/dev/null | grep -m1 -oE 'testssl +[0-9][^ ]*' || echo testssl), $(openssl version)"

failures=0
fail() {
  echo "TLS-SCAN FAIL: $*"
  failures=$((failures + 1))
}

# One testssl run per target, both at once: protocols (-p) and every cipher offered per protocol
# (-E); no HTTP or vulnerability checks, bounded in time.
run_testssl() {
  timeout "$limit" testssl --quiet --color 0 --warnings off --connect-timeout 5 \
    --openssl-timeout 5 -p -E --jsonfile "$work/$1.json" "127.0.0.1:$2" >"$work/$1.txt" 2>&1
}
run_testssl control-plane "$serve_port" &
scan_cp=$!
run_testssl console "$console_port" &
scan_console=$!
for s in "control-plane:$scan_cp" "console:$scan_console"; do
  rc=0
  wait "${s#*:}" || rc=$?
  if [ "$rc" -eq 124 ]; then
    echo "tls-scan: testssl on ${s%%:*} timed out after $limit s" >&2
    cat "$work/${s%%:*}.txt" >&2
    exit 2
  fi
done

check() {
  local name="$1" port="$2" out="$work/$1.txt" line p
  echo "--- $name (127.0.0.1:$port): testssl -p -E"
  grep -E '^ (SSLv2|SSLv3|TLS 1|TLS 1\.1|TLS 1\.2|TLS 1\.3)  ' "$out" || true
  grep -E '^ x[0-9a-f]+ ' "$out" || true
  for p in 'SSLv2' 'SSLv3' 'TLS 1' 'TLS 1\.1' 'TLS 1\.2'; do
    line="$(grep -E "^ $p  +" "$out" || true)"
    if [ -z "$line" ]; then
      fail "$name: testssl did not report $p"
    elif ! grep -q 'not offered' <<<"$line"; then
      fail "$name: $line"
    fi
  done
  grep -qE '^ TLS 1\.3  +offered' "$out" || fail "$name: TLS 1.3 not offered"
  # -E lists each cipher offered as ' xHEX  NAME ...'; only the TLS 1.3 AEAD suites may appear
  grep -qE '^ x[0-9a-f]+ ' "$out" || fail "$name: testssl listed no cipher (-E)"
  while read -r line; do
    [ -n "$line" ] && fail "$name: cipher other than a TLS 1.3 AEAD suite offered: $line"
  done < <(grep -E '^ x[0-9a-f]+ ' "$out" \
    | grep -vE 'TLS_AES_128_GCM_SHA256|TLS_AES_256_GCM_SHA384|TLS_CHACHA20_POLY1305_SHA256' || true)
}
check control-plane "$serve_port"
check console "$console_port"

# Client certificate on the control plane: the server asks for one and a TLS 1.3 handshake without
# one is refused with a fatal alert (the JDK sends bad_certificate; certificate_required also
# passes).
echo "--- control-plane: handshake without a client certificate (openssl s_client)"
cc="$( (printf 'x'; sleep 2) | timeout 20 openssl s_client -connect "127.0.0.1:$serve_port" \
  -tls1_3 -CAfile "$work/ca/ca.crt" 2>&1 || true)"
grep -E 'Protocol *:|Acceptable client certificate CA names|alert' <<<"$cc" | head -5 || true
grep -q 'Acceptable client certificate CA names' <<<"$cc" \
  || fail "control-plane: the server did not ask for a client certificate"
grep -qiE 'alert (bad certificate|certificate required)' <<<"$cc" \
  || fail "control-plane: a handshake without a client certificate was not refused with an alert"

if [ "$failures" -gt 0 ]; then
  echo "TLS-SCAN: $failures finding(s)"
  exit 1
fi
echo "TLS-SCAN OK: TLS 1.3 only, TLS 1.3 AEAD suites only, client certificate required on the control plane"
