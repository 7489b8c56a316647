package io.srdma.cli;

import io.srdma.cluster.ClusterConfig;
import io.srdma.cluster.ClusterNode;
import io.srdma.console.HostConsoleBackend;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.RevocationList;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.PolicyWatcher;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code srdma serve} joining its deployment's cluster (the {@code cluster:} section,
 * docs/cluster.md): the pushed policy goes through the same reload listener as a watched file, the
 * deployment's revocation list into the same {@link RevocationList} the handshakes and the session
 * watchdog check (and over the host's CRL file).
 */
final class ServeCluster {
  private static final Logger LOG = LoggerFactory.getLogger(ServeCluster.class);

  private ServeCluster() {}

  static ClusterNode join(
      ClusterConfig config,
      String hostIdentity,
      GrantAuthority mirror,
      PolicyWatcher.Listener listener,
      HostConsoleBackend backend,
      RevocationList revocations,
      Path crlFile) {
    String host = config.host() != null ? config.host() : PeerIdentity.parse(hostIdentity).peer();
    ClusterNode node =
        ClusterNode.start(
            new ClusterNode.Options()
                .config(config)
                .host(host)
                .policy(mirror, listener)
                .appliedText(
                    backend == null
                        ? null
                        : text -> {
                          if (!backend.policyReloaded(text)) {
                            LOG.info("the console shows the pushed policy after the next push");
                          }
                        })
                .revocations(revocations, crlFile)
                .revocationApplied(
                    (number, count) ->
                        LOG.info(
                            "deployment revocation list number {} in force ({} revoked); revoked"
                                + " peers' sessions end at the next watchdog sweep",
                            number,
                            count)));
    LOG.info(
        "cluster: host {} of {} at {} ({})",
        host,
        config.prefix(),
        config.endpoints(),
        node.state());
    return node;
  }
}
