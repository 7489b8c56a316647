package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.policy.GrantAuthority;
import io.srdma.policy.PolicyLoader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Grants as leased keys: the deployment's live grants are one range read; deleting a key from any
 * console has the owning host revoke within 1 s; a grant that ends on its host leaves etcd; a host
 * cut off keeps its grants listed only until their own expiry.
 */
@Timeout(120)
class ClusterGrantsTest {
  private static final String PREFIX = "/srdma/grants";

  @TempDir Path dir;
  private EtcdTestCluster etcd;
  private EtcdLink console;
  private final List<ClusterNode> nodes = new ArrayList<>();

  @BeforeEach
  void start() throws Exception {
    etcd = EtcdTestCluster.start(dir.resolve("etcd"));
    console = EtcdLink.open(etcd.clientConfig(PREFIX, null));
  }

  @AfterEach
  void stop() {
    for (ClusterNode n : nodes) {
      n.close();
    }
    if (console != null) {
      console.close();
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  private ClusterNode node(String host, FakeGrants grants, ClusterConfig config) {
    ClusterNode n =
        ClusterNode.start(
            new ClusterNode.Options()
                .config(config)
                .host(host)
                .policy(
                    new GrantAuthority(new PolicyLoader().loadSample()),
                    new io.srdma.policy.PolicyWatcher.Listener() {
                      @Override
                      public void reloaded(io.srdma.policy.ReloadResult result) {}

                      @Override
                      public void rejected(io.srdma.policy.PolicyException error) {}
                    },
                    etcd.ca().certificate())
                .grants(grants));
    nodes.add(n);
    return n;
  }

  private boolean listed(String host, long id) {
    return GrantDirectory.list(console).stream()
        .anyMatch(g -> g.host().equals(host) && g.grantId() == id);
  }

  @Test
  void shouldListRevokeAndExpireGrantsAcrossHosts() {
    FakeGrants g1 = new FakeGrants("h1");
    FakeGrants g2 = new FakeGrants("h2");
    ClusterNode n1 = node("h1", g1, etcd.clientConfig(PREFIX, "h1"));
    node("h2", g2, etcd.clientConfig(PREFIX, "h2"));
    ClusterGrant a = g1.issue(1, Duration.ofMinutes(5));
    g1.issue(2, Duration.ofMinutes(5));
    g2.issue(7, Duration.ofMinutes(5));
    Await.until(
        Duration.ofSeconds(5),
        "three grants listed",
        () -> listed("h1", 1) && listed("h1", 2) && listed("h2", 7));
    ClusterGrant seen =
        GrantDirectory.list(console).stream().filter(g -> g.grantId() == 1).findFirst().get();
    assertEquals(a, seen);

    // revoked from a console: the owning host revokes within 1 s
    assertTrue(GrantDirectory.revoke(console, "h1", 1));
    Await.until(Duration.ofSeconds(1), "h1 revokes grant 1", () -> g1.revoked.containsKey(1L));
    assertEquals(ClusterGrantSync.ACTOR, g1.revoked.get(1L));
    assertFalse(g2.revoked.containsKey(7L));
    assertFalse(GrantDirectory.revoke(console, "h1", 1), "already gone");

    // a grant that ends on its host leaves etcd
    g2.live.remove(7L);
    Await.until(Duration.ofSeconds(5), "grant 7 unlisted", () -> !listed("h2", 7));

    // a host that stops withdraws its grants
    assertTrue(listed("h1", 2));
    n1.close();
    assertFalse(listed("h1", 2), "a stopped host's grants are withdrawn");
  }

  @Test
  void shouldKeepACutOffHostsGrantsListedOnlyUntilTheirExpiry() throws Exception {
    // h3 reaches only member 2; when that member goes, h3 can neither renew nor delete anything
    FakeGrants g3 = new FakeGrants("h3");
    ClusterNode n3 =
        node("h3", g3, etcd.clientConfig(PREFIX, "h3", List.of(etcd.endpoints().get(2))));
    g3.issue(3, Duration.ofSeconds(4));
    g3.issue(4, Duration.ofMinutes(5));
    Await.until(Duration.ofSeconds(5), "grants listed", () -> listed("h3", 3) && listed("h3", 4));
    etcd.stopMember(2);
    Await.until(
        Duration.ofSeconds(15), "h3 degraded", () -> n3.state() == ClusterNode.State.DEGRADED);
    Await.until(Duration.ofSeconds(10), "grant 3 expires from etcd", () -> !listed("h3", 3));
    assertTrue(listed("h3", 4), "a grant with a long life stays listed");
  }

  @Test
  void shouldRevokeOnRecoveryAGrantDeletedWhileTheHostWasCutOff() throws Exception {
    FakeGrants g3 = new FakeGrants("h3");
    ClusterNode n3 =
        node("h3", g3, etcd.clientConfig(PREFIX, "h3", List.of(etcd.endpoints().get(2))));
    g3.issue(5, Duration.ofMinutes(5));
    Await.until(Duration.ofSeconds(5), "grant 5 listed", () -> listed("h3", 5));
    etcd.stopMember(2);
    Await.until(
        Duration.ofSeconds(15), "h3 degraded", () -> n3.state() == ClusterNode.State.DEGRADED);
    assertTrue(GrantDirectory.revoke(console, "h3", 5));
    assertFalse(g3.revoked.containsKey(5L), "h3 cannot know yet");
    etcd.startMember(2);
    Await.until(
        Duration.ofSeconds(15), "h3 revokes grant 5 on recovery", () -> g3.revoked.containsKey(5L));
  }
}
