package io.srdma.server;

import io.srdma.cluster.AuditAnchor;
import io.srdma.cluster.ClusterConfig;
import io.srdma.cluster.ClusterGrant;
import io.srdma.cluster.ClusterNode;
import io.srdma.cluster.GrantDirectory;
import io.srdma.cluster.HostGrants;
import io.srdma.cluster.HostPolicyState;
import io.srdma.cluster.PolicyStatus;
import io.srdma.console.ClusterView;
import io.srdma.console.HostConsoleBackend;
import io.srdma.host.GrantInfo;
import io.srdma.host.RegionHost;
import io.srdma.keys.HighWaterMark;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.RevocationList;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.PolicyWatcher;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code srdma serve} joining its deployment's cluster (the {@code cluster:} section,
 * docs/cluster.md): the pushed policy goes through the same reload listener as a watched file, the
 * deployment's revocation list into the same {@link RevocationList} the handshakes and the session
 * watchdog check (and over the host's CRL file); the host's live grants are published as leased
 * keys (and revoked when their key is deleted); the audit log's head is anchored.
 */
final class ServeCluster {
  private static final Logger LOG = LoggerFactory.getLogger(ServeCluster.class);

  private ServeCluster() {}

  /** The console's fleet view: this host's link, the hosts' reports, the fleet's grants. */
  static ClusterView view(ClusterNode node) {
    return new ClusterView() {
      @Override
      public Link link() {
        ClusterNode.Status s = node.status();
        return new Link(
            node.host(),
            node.link().keys().prefix(),
            s.state() == ClusterNode.State.CONNECTED,
            s.since(),
            s.lastError(),
            s.degradedEpisodes());
      }

      @Override
      public Map<String, Long> policyRefusals() {
        Map<String, Long> out = new TreeMap<>();
        node.policyRefusalsByReason().forEach((r, n) -> out.put(r.label(), n));
        return out;
      }

      @Override
      public long silentWatches() {
        return node.silentWatches();
      }

      @Override
      public String deploymentPolicySha256() {
        return PolicyStatus.read(node.link()).sha256();
      }

      @Override
      public List<FleetHost> hosts() {
        List<FleetHost> out = new ArrayList<>();
        PolicyStatus.View v = PolicyStatus.read(node.link());
        for (HostPolicyState h : v.hosts()) {
          out.add(
              new FleetHost(
                  h.host(),
                  h.sha256(),
                  h.revision(),
                  h.applied(),
                  h.degraded(),
                  v.sessions().getOrDefault(h.host(), -1),
                  h.refusals(),
                  h.lastRefusal() == null
                      ? null
                      : new ClusterView.PolicyRefusal(
                          h.lastRefusal().reason().label(),
                          h.lastRefusal().serial(),
                          h.lastRefusal().at())));
        }
        return out;
      }

      @Override
      public List<FleetGrant> grants() {
        List<FleetGrant> out = new ArrayList<>();
        for (ClusterGrant g : GrantDirectory.list(node.link())) {
          out.add(
              new FleetGrant(
                  g.host(),
                  g.grantId(),
                  g.tenant(),
                  g.peer(),
                  g.region(),
                  g.offset(),
                  g.length(),
                  g.ops(),
                  g.expiresAt()));
        }
        return out;
      }

      @Override
      public boolean revoke(String host, long grantId) {
        // under etcd RBAC this host may not delete another host's key: it asks that host
        return GrantDirectory.requestRevoke(
            node.link(), node.host(), host, grantId, java.time.Duration.ofSeconds(5));
      }
    };
  }

  /** The host's live grants as the cluster publishes them; revoked through the host. */
  static HostGrants grants(String host, RegionHost regionHost) {
    return new HostGrants() {
      @Override
      public List<ClusterGrant> live() {
        List<ClusterGrant> out = new ArrayList<>();
        for (GrantInfo g : regionHost.grants()) {
          try {
            out.add(
                new ClusterGrant(
                    host,
                    g.grantId(),
                    g.tenant(),
                    g.identity(),
                    g.region(),
                    g.offset(),
                    g.length(),
                    g.access().stream()
                        .map(a -> a.name().toLowerCase(Locale.ROOT))
                        .sorted()
                        .collect(Collectors.joining(",")),
                    g.expiresAt()));
          } catch (IllegalArgumentException e) {
            LOG.warn(
                "grant {} cannot be published to the cluster: {}", g.grantId(), e.getMessage());
          }
        }
        return out;
      }

      @Override
      public boolean revoke(long grantId, String actor) {
        return regionHost.revoke(grantId, actor);
      }
    };
  }

  /** Records in the host's own audit log that its anchor was kept, or dropped by an operator. */
  static AuditAnchor.Listener anchorAudit(AuditTrail trail) {
    return new AuditAnchor.Listener() {
      @Override
      public void mismatch(AuditAnchor kept, String problem) {
        trail.anchorMismatch(kept.seq(), kept.mac(), problem);
      }

      @Override
      public void reset(AuditAnchor dropped, String record) {
        trail.anchorReset(
            dropped == null ? 0 : dropped.seq(),
            dropped == null ? null : dropped.mac(),
            "reset record in etcd: "
                + (record == null
                    ? "none"
                    : record.length() > 600 ? record.substring(0, 600) : record));
      }
    };
  }

  static ClusterNode join(
      ClusterConfig config,
      String hostIdentity,
      GrantAuthority mirror,
      PolicyWatcher.Listener listener,
      HostConsoleBackend backend,
      RevocationList revocations,
      Path crlFile,
      RegionHost regionHost,
      AuditLog auditLog,
      java.security.cert.X509Certificate caCertificate,
      HighWaterMark policySerials) {
    String host = config.host() != null ? config.host() : PeerIdentity.parse(hostIdentity).peer();
    ClusterNode node =
        ClusterNode.start(
            new ClusterNode.Options()
                .config(config)
                .host(host)
                .policy(mirror, listener, caCertificate)
                .policySerials(policySerials)
                .appliedText(
                    backend == null
                        ? null
                        : text -> {
                          if (!backend.policyReloaded(text)) {
                            LOG.info("the console shows the pushed policy after the next push");
                          }
                        })
                .revocations(revocations, crlFile)
                .grants(grants(host, regionHost))
                .auditHead(AuditAnchor.headOf(auditLog), AuditAnchor.chainOf(auditLog))
                .anchorListener(anchorAudit(new AuditTrail(auditLog)))
                .sessions(() -> regionHost.sessions().size())
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
