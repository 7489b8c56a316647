package io.srdma.cluster;

import io.srdma.policy.GrantAuthority;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyException;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.PolicyWatcher;
import io.srdma.policy.ReloadResult;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
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
 * the deployment CA the host trusts, for this deployment's prefix, with a serial above the one in
 * force. Anything else (unsigned, badly signed, another deployment's, another CA's, an older
 * serial) is refused and the policy in force stays; refusals are reported (audited through the
 * listener and logged at WARN) at most once per {@link #REPORT_INTERVAL}, the others counted and
 * logged at DEBUG, so a writer replaying values cannot flood the audit log.
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
  private final java.util.concurrent.atomic.AtomicLong refusals =
      new java.util.concurrent.atomic.AtomicLong();
  private volatile HostPolicyState state;
  // guarded by this
  private long serialInForce;
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
      java.security.cert.X509Certificate ca) {
    this.link = link;
    this.host = host;
    this.authority = authority;
    this.listener = listener;
    this.loader = loader;
    this.appliedText = appliedText;
    this.clock = clock;
    this.ca = java.util.Objects.requireNonNull(ca, "the deployment CA certificate");
    this.state = new HostPolicyState(host, authority.policy().sha256(), 0, clock.instant(), false);
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

  private synchronized void apply(byte[] value, long revision) {
    String label = "etcd:" + link.keys().prefix() + "/policy@" + revision;
    SignedPolicy signed;
    try {
      signed = SignedPolicy.verify(value, link.keys().prefix(), ca);
    } catch (ClusterException e) {
      refuse(label, e.getMessage());
      return;
    }
    byte[] text = signed.policy();
    if (signed.serial() < serialInForce) {
      refuse(
          label,
          "its serial "
              + signed.serial()
              + " is below the one in force ("
              + serialInForce
              + "): an older policy replayed");
      return;
    }
    if (signed.serial() == serialInForce
        && !PolicyStatus.sha256(text).equals(authority.policy().sha256())) {
      refuse(label, "its serial " + signed.serial() + " is the one in force, with another text");
      return;
    }
    Policy next;
    try {
      next = loader.parse(label, text);
    } catch (PolicyException e) {
      listener.rejected(e);
      LOG.warn("pushed policy {} refused, the policy in force stays: {}", label, e.getMessage());
      return;
    }
    if (!next.sha256().equals(authority.policy().sha256())) {
      ReloadResult r = authority.reload(next);
      listener.reloaded(r);
      if (!authority.policy().sha256().equals(next.sha256())) {
        // the listener could not put it in force and put the old policy back: report that one
        LOG.error("pushed policy {} was not put in force", label);
        publish(new HostPolicyState(host, authority.policy().sha256(), 0, clock.instant(), false));
        return;
      }
      LOG.info(
          "pushed policy {} (serial {}) in force (sha256 {})",
          label,
          signed.serial(),
          next.sha256());
    }
    serialInForce = signed.serial();
    if (appliedText != null) {
      appliedText.accept(new String(text, StandardCharsets.UTF_8));
    }
    publish(new HostPolicyState(host, next.sha256(), revision, clock.instant(), false));
  }

  private void refuse(String label, String why) {
    refusals.incrementAndGet();
    java.time.Instant now = clock.instant();
    if (lastReport != null && now.isBefore(lastReport.plus(REPORT_INTERVAL))) {
      unreported++;
      LOG.debug("pushed policy {} refused, the policy in force stays: {}", label, why);
      return;
    }
    String message =
        "pushed policy "
            + label
            + " refused, the policy in force stays: "
            + why
            + (unreported == 0 ? "" : " (" + unreported + " more refused since the last report)");
    lastReport = now;
    unreported = 0;
    LOG.warn(message);
    listener.rejected(new PolicyException(PolicyException.Category.INVALID_POLICY, message));
  }

  /** Re-publishes the state (after a recovery, with the degraded flag as given). */
  void republish(boolean degraded) {
    HostPolicyState s = state;
    publish(new HostPolicyState(host, s.sha256(), s.revision(), s.applied(), degraded));
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
