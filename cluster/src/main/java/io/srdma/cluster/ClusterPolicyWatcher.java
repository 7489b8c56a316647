package io.srdma.cluster;

import io.srdma.keys.HighWaterMark;
import io.srdma.keys.KeyExchangeException;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyException;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.PolicyWatcher;
import io.srdma.policy.ReloadResult;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A host's follower of the deployment's policy in etcd. Each pushed text is validated and put in
 * force exactly as a policy file reload is ({@link PolicyWatcher#reload()}): parsed by the same
 * {@link PolicyLoader}, installed into the same {@link GrantAuthority} with {@link
 * GrantAuthority#reload}, and handed to the same {@link PolicyWatcher.Listener} (which, in {@code
 * srdma serve}, puts it in force on the host, revokes what it forbids and audits the reload; a
 * refused text is audited as a refused reload and the policy in force stays). Then the host
 * publishes the hash it runs under {@code PREFIX/hosts/HOST/policy}.
 *
 * <p>Before any of that, the value must be a {@link SignedPolicy} whose signature verifies against
 * the deployment CA the host trusts, for this deployment's prefix, with a serial not below the
 * highest the host applied (equal only with the same text). That serial and its text's hash are
 * kept in a {@link HighWaterMark} file across restarts, so an older signed policy put back while
 * the host was down is refused at its next start too. Anything else (unsigned, badly signed,
 * another deployment's, another CA's, an older serial) is refused and the policy in force stays;
 * every refusal is counted by {@link PolicyRefusal.Reason} and published with the host's report;
 * refusals are reported (audited through the listener and logged at WARN) at most once per {@link
 * #REPORT_INTERVAL}, the others logged at DEBUG, so a writer replaying values cannot flood the
 * audit log.
 *
 * <p>A text that could not be put in force for a passing reason (its serial could not be kept: disk
 * full, read-only; the listener failed or kept the old policy) is no refusal: the {@link KeyWatch}
 * hands it over again at later probes (backing off from 250 ms to 30 s) until it is in force, and
 * it passes the same checks again (its serial is then the floor with the same text).
 */
final class ClusterPolicyWatcher {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterPolicyWatcher.class);

  /** At most one refusal per interval is audited and logged at WARN. */
  static final java.time.Duration REPORT_INTERVAL = java.time.Duration.ofMinutes(1);

  private final EtcdLink link;
  private final String host;
  private final GrantAuthority authority;
  private final PolicyWatcher.Listener listener;
  private final PolicyLoader loader;
  private final Consumer<String> appliedText;
  private final Clock clock;
  private final java.security.cert.X509Certificate ca;
  private final AtomicLong refusals = new AtomicLong();
  private final Map<PolicyRefusal.Reason, AtomicLong> byReason =
      new EnumMap<>(PolicyRefusal.Reason.class);
  private volatile PolicyRefusal lastRefusal;
  private volatile HostPolicyState state;
  // where the highest serial applied survives restarts (null: memory only)
  private final HighWaterMark serials;
  // guarded by this: the highest serial applied (kept, or since start), and its text's hash
  private long floor;
  private String floorSha;
  private java.time.Instant lastReport;
  private long unreported;

  ClusterPolicyWatcher(
      EtcdLink link,
      String host,
      GrantAuthority authority,
      PolicyWatcher.Listener listener,
      PolicyLoader loader,
      Consumer<String> appliedText,
      Clock clock,
      java.security.cert.X509Certificate ca,
      HighWaterMark serials) {
    this.link = link;
    this.host = host;
    this.authority = authority;
    this.listener = listener;
    this.loader = loader;
    this.appliedText = appliedText;
    this.clock = clock;
    this.ca = java.util.Objects.requireNonNull(ca, "the deployment CA certificate");
    this.serials = serials;
    for (PolicyRefusal.Reason r : PolicyRefusal.Reason.values()) {
      byReason.put(r, new AtomicLong());
    }
    if (serials != null && serials.number() != null) {
      // serials are at most 2^63-1; a larger kept one refuses every push (fails closed)
      floor =
          serials.number().bitLength() > 63 ? Long.MAX_VALUE : serials.number().longValueExact();
      floorSha = HexFormat.of().formatHex(serials.digest());
    }
    this.state = report(authority.policy().sha256(), 0, clock.instant(), false);
  }

  KeyWatch follower(java.util.concurrent.Executor apply) {
    return new KeyWatch(link, link.keys().policy(), "the deployment policy", this::apply, apply);
  }

  /** What this host runs now. */
  HostPolicyState state() {
    return state;
  }

  /** How many pushed values this host refused (bad or missing signature, rollback). */
  long refusals() {
    return refusals.get();
  }

  private synchronized KeyWatch.Outcome apply(byte[] value, long revision) {
    String label = "etcd:" + link.keys().prefix() + "/policy@" + revision;
    SignedPolicy signed;
    try {
      signed = SignedPolicy.verify(value, link.keys().prefix(), ca);
    } catch (ClusterException e) {
      refuseUnverified(label, value, e.getMessage());
      return KeyWatch.Outcome.REFUSED;
    }
    byte[] text = signed.policy();
    String sha = PolicyStatus.sha256(text);
    if (signed.serial() < floor) {
      refuse(
          label,
          PolicyRefusal.Reason.ROLLBACK,
          signed.serial(),
          "its serial "
              + signed.serial()
              + " is below the highest this host applied ("
              + floor
              + "): an older policy replayed");
      return KeyWatch.Outcome.REFUSED;
    }
    if (signed.serial() == floor && floorSha != null && !sha.equals(floorSha)) {
      refuse(
          label,
          PolicyRefusal.Reason.ROLLBACK,
          signed.serial(),
          "its serial " + signed.serial() + " is the highest applied, with another text");
      return KeyWatch.Outcome.REFUSED;
    }
    Policy next;
    try {
      next = loader.parse(label, text);
    } catch (PolicyException e) {
      counted(PolicyRefusal.Reason.INVALID, signed.serial());
      listener.rejected(e);
      LOG.warn("pushed policy {} refused, the policy in force stays: {}", label, e.getMessage());
      return KeyWatch.Outcome.REFUSED;
    }
    if (signed.serial() > floor && serials != null) {
      // kept before the policy is put in force: a crash in between keeps the higher floor
      try {
        serials.advance(BigInteger.valueOf(signed.serial()), HexFormat.of().parseHex(sha));
      } catch (KeyExchangeException e) {
        // not the value's fault (disk full, read-only): not a refusal, and retried; the floor
        // stays, so the retry passes the same checks
        throw new KeyWatch.RetryLater(
            "pushed policy "
                + label
                + " is not in force: its serial could not be kept ("
                + e.getMessage()
                + ")",
            e);
      }
    }
    if (signed.serial() > floor) {
      floor = signed.serial();
      floorSha = sha;
    }
    // from here on the serial is the floor with this text, so a retry of the same value passes
    if (!next.sha256().equals(authority.policy().sha256())) {
      ReloadResult r = authority.reload(next);
      try {
        listener.reloaded(r);
      } catch (RuntimeException e) {
        if (authority.policy() == next) {
          // not known to be in force on the host: the retry reloads it and tells the listener again
          authority.reload(r.previous());
        }
        publish(report(authority.policy().sha256(), 0, clock.instant(), false));
        throw new KeyWatch.RetryLater("pushed policy " + label + " was not put in force: " + e, e);
      }
      if (!authority.policy().sha256().equals(next.sha256())) {
        // the listener could not put it in force and put the old policy back: report that one
        publish(report(authority.policy().sha256(), 0, clock.instant(), false));
        throw new KeyWatch.RetryLater(
            "pushed policy " + label + " was not put in force (the listener kept the old one)",
            null);
      }
      LOG.info(
          "pushed policy {} (serial {}) in force (sha256 {})",
          label,
          signed.serial(),
          next.sha256());
    }
    if (appliedText != null) {
      appliedText.accept(new String(text, StandardCharsets.UTF_8));
    }
    publish(report(next.sha256(), revision, clock.instant(), false));
    return KeyWatch.Outcome.APPLIED;
  }

  /** Refuses a value whose signature does not verify for this deployment, saying why. */
  private void refuseUnverified(String label, byte[] value, String why) {
    SignedPolicy p;
    try {
      p = SignedPolicy.parse(value);
    } catch (ClusterException e) {
      refuse(label, PolicyRefusal.Reason.UNSIGNED, 0, why);
      return;
    }
    String declared = p.declaredPrefix();
    if (declared != null && !declared.equals(link.keys().prefix()) && p.signedBy(ca, declared)) {
      refuse(
          label,
          PolicyRefusal.Reason.FOREIGN_DEPLOYMENT,
          p.serial(),
          "it is signed by the deployment CA for another deployment (prefix " + declared + ")");
      return;
    }
    refuse(label, PolicyRefusal.Reason.OTHER_CA, p.serial(), why);
  }

  private void counted(PolicyRefusal.Reason reason, long serial) {
    byReason.get(reason).incrementAndGet();
    lastRefusal = new PolicyRefusal(reason, serial, clock.instant());
    refusals.incrementAndGet();
  }

  private void refuse(String label, PolicyRefusal.Reason reason, long serial, String why) {
    counted(reason, serial);
    java.time.Instant now = clock.instant();
    if (lastReport != null && now.isBefore(lastReport.plus(REPORT_INTERVAL))) {
      unreported++;
      LOG.debug(
          "pushed policy {} refused ({}), the policy in force stays: {}",
          label,
          reason.label(),
          why);
      return;
    }
    String message =
        "pushed policy "
            + label
            + " refused ("
            + reason.label()
            + "), the policy in force stays: "
            + why
            + (unreported == 0 ? "" : " (" + unreported + " more refused since the last report)");
    lastReport = now;
    unreported = 0;
    LOG.warn(message);
    listener.rejected(new PolicyException(PolicyException.Category.INVALID_POLICY, message));
  }

  private HostPolicyState report(
      String sha256, long revision, java.time.Instant applied, boolean degraded) {
    return new HostPolicyState(
        host, sha256, revision, applied, degraded, refusals.get(), lastRefusal);
  }

  /** Refusals by reason since start. */
  Map<PolicyRefusal.Reason, Long> refusalsByReason() {
    Map<PolicyRefusal.Reason, Long> out = new EnumMap<>(PolicyRefusal.Reason.class);
    byReason.forEach((r, n) -> out.put(r, n.get()));
    return out;
  }

  /** The last refusal, or null. */
  PolicyRefusal lastRefusal() {
    return lastRefusal;
  }

  /** Publishes the state again if a refusal happened since it was last published. */
  void publishRefusals() {
    HostPolicyState s = state;
    if (s.refusals() != refusals.get()) {
      republish(s.degraded());
    }
  }

  /** Re-publishes the state (after a recovery, with the degraded flag as given). */
  void republish(boolean degraded) {
    HostPolicyState s = state;
    publish(report(s.sha256(), s.revision(), s.applied(), degraded));
  }

  private void publish(HostPolicyState s) {
    state = s;
    // not awaited: the next recovery republishes it if this one is lost
    link.client()
        .getKVClient()
        .put(link.keys().hostPolicy(host), io.etcd.jetcd.ByteSequence.from(s.toJson()))
        .whenComplete(
            (r, e) -> {
              if (e != null) {
                LOG.warn("could not publish this host's policy hash: {}", e.toString());
              }
            });
  }
}
