package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcd.jetcd.ByteSequence;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.RevocationList;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyException;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.PolicyWatcher;
import io.srdma.policy.ReloadResult;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * etcd RBAC on the real 3-member etcd ({@link ClusterRbac}, auth enabled, users by certificate CN):
 * the operator pushes and revokes; hosts follow, publish their grants, state and audit anchors; a
 * host's credentials cannot delete another host's grant, write the policy, the CRL or another
 * host's state ({@code DENIED}); a host's console revokes another host's grant through a request
 * that host acts on.
 */
@Timeout(150)
class ClusterRbacTest {
  private static final String PREFIX = "/srdma/rbac";
  private static final Duration ONE_SECOND = Duration.ofSeconds(1);

  @TempDir Path dir;
  private EtcdTestCluster etcd;
  private EtcdLink root;
  private EtcdLink operator;
  private final List<AutoCloseable> closing = new ArrayList<>();
  private String sampleText;
  private Policy sample;

  @BeforeEach
  void start() throws Exception {
    etcd = EtcdTestCluster.start(dir.resolve("etcd"));
    root = EtcdLink.open(etcd.clientConfigAs(EtcdTestCluster.ROOT, PREFIX, null));
    ClusterRbac.Result r =
        ClusterRbac.apply(
            root,
            "operator",
            List.of(new ClusterRbac.HostUser("h1", "h1"), new ClusterRbac.HostUser("h2", "h2")),
            true);
    assertTrue(r.changes().contains("role " + ClusterRbac.hostRole(PREFIX, "h1") + " created"));
    operator = EtcdLink.open(etcd.clientConfigAs("operator", PREFIX, null));
    try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      sampleText = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    sample = new PolicyLoader().parse("sample", sampleText);
  }

  @AfterEach
  void stop() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
    for (EtcdLink l : new EtcdLink[] {operator, root}) {
      if (l != null) {
        l.close();
      }
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  /** A host as srdma serve runs it, on its own certificate (CN = its etcd user). */
  private final class Host {
    final String name;
    final GrantAuthority authority = new GrantAuthority(sample);
    final RevocationList revocations;
    final FakeGrants grants;
    final AuditLog audit;
    final ClusterNode node;

    Host(String name) throws Exception {
      this.name = name;
      DeploymentCa ca = etcd.ca();
      revocations = RevocationList.of(ca.crl(), ca.certificate());
      grants = new FakeGrants(name);
      audit = AuditLog.open(dir.resolve(name + "-audit.log"));
      closing.add(audit);
      new AuditTrail(audit).peerAuthenticated("srdma://acme/p", "acme", true, null);
      Path crl = dir.resolve(name + "-crl.pem");
      Files.writeString(crl, "");
      node =
          ClusterNode.start(
              new ClusterNode.Options()
                  .config(etcd.clientConfigAs(name, PREFIX, name))
                  .host(name)
                  .policy(
                      authority,
                      new PolicyWatcher.Listener() {
                        @Override
                        public void reloaded(ReloadResult result) {}

                        @Override
                        public void rejected(PolicyException error) {}
                      },
                      ca.certificate())
                  .revocations(revocations, crl)
                  .grants(grants)
                  .auditHead(AuditAnchor.headOf(audit), AuditAnchor.chainOf(audit))
                  .sessions(() -> 2));
      closing.add(node);
      Await.until(
          Duration.ofSeconds(10),
          name + " connected",
          () -> node.state() == ClusterNode.State.CONNECTED);
    }

    EtcdLink link() {
      return node.link();
    }
  }

  private boolean listed(String host, long id) {
    return GrantDirectory.list(operator).stream()
        .anyMatch(g -> g.host().equals(host) && g.grantId() == id);
  }

  private static ClusterException denied(Supplier<?> op) {
    ClusterException e = assertThrows(ClusterException.class, op::get);
    assertEquals(ClusterException.Reason.DENIED, e.reason(), e.getMessage());
    return e;
  }

  private static boolean revoked(RevocationList list, java.security.cert.X509Certificate cert) {
    try {
      list.check(cert, java.time.Instant.now());
      return false;
    } catch (io.srdma.keys.KeyExchangeException e) {
      return e.reason() == io.srdma.keys.KeyExchangeException.Reason.CERTIFICATE_REVOKED;
    }
  }

  private static ByteSequence text(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  @Test
  void shouldApplyTheRolesIdempotently() {
    ClusterRbac.Result again =
        ClusterRbac.apply(
            root,
            "operator",
            List.of(new ClusterRbac.HostUser("h1", "h1"), new ClusterRbac.HostUser("h2", "h2")),
            true);
    assertEquals(List.of(), again.changes());
    // a host's role widened by hand is put back to exactly its permissions
    root.await(
        root.client()
            .getAuthClient()
            .roleGrantPermission(
                text(ClusterRbac.hostRole(PREFIX, "h1")),
                text(PREFIX + "/policy"),
                ByteSequence.EMPTY,
                io.etcd.jetcd.auth.Permission.Type.READWRITE),
        "widening");
    ClusterRbac.Result fixed =
        ClusterRbac.apply(root, "operator", List.of(new ClusterRbac.HostUser("h1", "h1")), false);
    assertEquals(1, fixed.changes().size(), fixed.changes().toString());
    assertTrue(fixed.changes().get(0).endsWith("revoked"), fixed.changes().toString());
    // a host may not manage users and roles
    try (EtcdLink h1 = EtcdLink.open(etcd.clientConfigAs("h1", PREFIX, "h1"))) {
      denied(
          () ->
              ClusterRbac.apply(h1, "h1x", List.of(new ClusterRbac.HostUser("h1", "h1y")), false));
    }
  }

  @Test
  void shouldLetTheOperatorRunTheDeploymentAndKeepEachHostToItsOwnKeys() throws Exception {
    Host h1 = new Host("h1");
    Host h2 = new Host("h2");

    // the operator pushes a policy: both hosts follow the key and report what they run
    String pushed = sampleText + "\n# rbac\n";
    PolicyPublisher.Pushed p =
        PolicyPublisher.push(
            operator,
            "pushed.yaml",
            pushed.getBytes(StandardCharsets.UTF_8),
            new PolicyLoader(),
            OptionalLong.empty(),
            etcd.ca());
    assertTrue(p.changed());
    Await.until(
        ONE_SECOND,
        "the pushed policy in force on both hosts",
        () ->
            h1.authority.policy().sha256().equals(p.sha256())
                && h2.authority.policy().sha256().equals(p.sha256()));
    Await.until(
        Duration.ofSeconds(5),
        "both hosts report the pushed hash",
        () ->
            PolicyStatus.read(operator).hosts().stream()
                    .filter(h -> h.sha256().equals(p.sha256()))
                    .count()
                == 2);

    // the operator revokes a certificate: both hosts put the CA-signed list in force
    DeploymentCa ca = etcd.ca();
    Credential peer = ca.issuePeer(PeerIdentity.of("acme", "trainer-9"), Duration.ofDays(1));
    ca.revoke(peer.certificate().getSerialNumber());
    assertTrue(
        RevocationPublisher.publish(
                operator, ca.crl(), List.of(peer.certificate().getSerialNumber()), ca.certificate())
            .changed());
    Await.until(
        ONE_SECOND,
        "the revocation in force on both hosts",
        () ->
            revoked(h1.revocations, peer.certificate())
                && revoked(h2.revocations, peer.certificate()));

    // grants as leased keys and audit anchors, each host under its own keys
    h1.grants.issue(1, Duration.ofMinutes(5));
    h2.grants.issue(7, Duration.ofMinutes(5));
    h2.grants.issue(8, Duration.ofMinutes(5));
    Await.until(
        Duration.ofSeconds(5),
        "the grants of both hosts listed",
        () -> listed("h1", 1) && listed("h2", 7) && listed("h2", 8));
    Await.until(
        Duration.ofSeconds(5),
        "both audit heads anchored",
        () -> AuditAnchor.read(operator, "h1") != null && AuditAnchor.read(operator, "h2") != null);

    // h1's credentials: not another host's grant, not the policy, not the CRL, not h2's state
    ClusterException e = denied(() -> GrantDirectory.revoke(h1.link(), "h2", 7));
    assertTrue(e.getMessage().contains("permission denied for etcd user 'h1'"), e.getMessage());
    EtcdLink l1 = h1.link();
    denied(() -> l1.await(l1.client().getKVClient().put(l1.keys().policy(), text("x")), "policy"));
    denied(() -> l1.await(l1.client().getKVClient().delete(l1.keys().policy()), "policy"));
    denied(() -> l1.await(l1.client().getKVClient().put(l1.keys().crl(), text("x")), "crl"));
    denied(
        () ->
            l1.await(
                l1.client().getKVClient().put(l1.keys().revoked("ab"), text("{}")), "revoked"));
    denied(
        () ->
            l1.await(
                l1.client().getKVClient().put(l1.keys().hostPolicy("h2"), text("{}")), "state"));
    denied(
        () ->
            l1.await(
                l1.client().getKVClient().put(l1.keys().revokeRequest("h2", "h1", 1), text("{}")),
                "request"));
    denied(
        () ->
            PolicyPublisher.push(
                l1,
                "pushed.yaml",
                (pushed + "# by h1\n").getBytes(StandardCharsets.UTF_8),
                new PolicyLoader(),
                OptionalLong.empty(),
                etcd.ca()));
    assertTrue(listed("h2", 7), "h2's grant is still there");
    assertTrue(h1.authority.policy().sha256().equals(p.sha256()));

    // h1's console revokes h2's grant: a request h2 acts on
    assertTrue(GrantDirectory.requestRevoke(h1.link(), "h1", "h2", 7, Duration.ofSeconds(5)));
    assertEquals(ClusterGrantSync.ACTOR, h2.grants.revoked.get(7L));
    assertFalse(listed("h2", 7));
    assertTrue(listed("h2", 8), "only the asked grant");
    assertFalse(GrantDirectory.requestRevoke(h1.link(), "h1", "h2", 7, Duration.ofSeconds(1)));
    // its own grant directly
    assertTrue(GrantDirectory.requestRevoke(h1.link(), "h1", "h1", 1, Duration.ofSeconds(5)));
    Await.until(ONE_SECOND, "h1 revokes its own grant", () -> h1.grants.revoked.containsKey(1L));
    // a request that does not name h2's grant exactly (same id, another expiry: an old grant of
    // that id, or a made-up one) is not acted on
    ClusterGrant g8 = h2.grants.live.get(8L);
    ClusterGrant other =
        new ClusterGrant(
            "h2",
            8,
            g8.tenant(),
            g8.peer(),
            g8.region(),
            g8.offset(),
            g8.length(),
            g8.ops(),
            g8.expiresAt().plusSeconds(60));
    l1.await(
        l1.client()
            .getKVClient()
            .put(l1.keys().revokeRequest("h1", "h2", 8), ByteSequence.from(other.toJson())),
        "request");
    Thread.sleep(500);
    assertTrue(h2.grants.live.containsKey(8L), "a mismatched request revoked nothing");
    // the operator revokes any host's grant directly
    assertTrue(GrantDirectory.revoke(operator, "h2", 8));
    Await.until(ONE_SECOND, "h2 revokes grant 8", () -> h2.grants.revoked.containsKey(8L));

    // both hosts stayed connected throughout: nothing they do by themselves is refused
    assertEquals(ClusterNode.State.CONNECTED, h1.node.state());
    assertEquals(ClusterNode.State.CONNECTED, h2.node.state());
  }
}
