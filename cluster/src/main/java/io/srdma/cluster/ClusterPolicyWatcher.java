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
 */
final class ClusterPolicyWatcher {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterPolicyWatcher.class);

  private final EtcdLink link;
  private final String host;
  private final GrantAuthority authority;
  private final PolicyWatcher.Listener listener;
  private final PolicyLoader loader;
  private final Consumer<String> appliedText;
  private final Clock clock;
  private volatile HostPolicyState state;

  ClusterPolicyWatcher(
      EtcdLink link,
      String host,
      GrantAuthority authority,
      PolicyWatcher.Listener listener,
      PolicyLoader loader,
      Consumer<String> appliedText,
      Clock clock) {
    this.link = link;
    this.host = host;
    this.authority = authority;
    this.listener = listener;
    this.loader = loader;
    this.appliedText = appliedText;
    this.clock = clock;
    this.state = new HostPolicyState(host, authority.policy().sha256(), 0, clock.instant(), false);
  }

  KeyWatch follower(java.util.concurrent.Executor apply) {
    return new KeyWatch(link, link.keys().policy(), "the deployment policy", this::apply, apply);
  }

  /** What this host runs now. */
  HostPolicyState state() {
    return state;
  }

  private void apply(byte[] text, long revision) {
    String label = "etcd:" + link.keys().prefix() + "/policy@" + revision;
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
      LOG.info("pushed policy {} in force (sha256 {})", label, next.sha256());
    }
    if (appliedText != null) {
      appliedText.accept(new String(text, StandardCharsets.UTF_8));
    }
    publish(new HostPolicyState(host, next.sha256(), revision, clock.instant(), false));
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
