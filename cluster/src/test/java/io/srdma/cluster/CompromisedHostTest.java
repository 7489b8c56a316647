package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcd.jetcd.ByteSequence;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.PolicyException;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.PolicyWatcher;
import io.srdma.policy.ReloadResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A host with only its own etcd rights (RBAC) writes more than gRPC's 4 MiB message limit under its
 * own {@code requests/h2/} and {@code hosts/h2/}: every other host still follows, publishes and
 * revokes its grants, and anchors its audit head (security review: an unpaged read of {@code
 * requests/} failed with RESOURCE_EXHAUSTED and stalled the whole fleet's grant sync).
 */
@Timeout(180)
class CompromisedHostTest {
  private static final String PREFIX = "/srdma/compromised";

  @TempDir Path dir;
  private RbacFleet fleet;
  private EtcdTestCluster etcd;
  private EtcdLink operator;
  private EtcdLink h2;
  private ClusterNode n1;

  @BeforeEach
  void start() throws Exception {
    fleet = RbacFleet.start(dir.resolve("etcd"), PREFIX, "h1", "h2");
    etcd = fleet.etcd();
    operator = fleet.operator();
    h2 = fleet.link("h2");
  }

  @AfterEach
  void stop() {
    if (n1 != null) {
      n1.close();
    }
    if (fleet != null) {
      fleet.close();
    }
  }

  private boolean listed(long id) {
    return GrantDirectory.list(operator).stream()
        .anyMatch(g -> g.host().equals("h1") && g.grantId() == id);
  }

  private void junk(String key) {
    byte[] value = new byte[1_400_000]; // under etcd's 1.5 MiB request limit
    Arrays.fill(value, (byte) 'x');
    h2.await(
        h2.client()
            .getKVClient()
            .put(ByteSequence.from(PREFIX + key, StandardCharsets.UTF_8), ByteSequence.from(value)),
        "junk " + key);
  }

  private ClusterNode node(FakeGrants grants, AtomicLong auditSeq) {
    return ClusterNode.start(
        new ClusterNode.Options()
            .config(fleet.config("h1"))
            .host("h1")
            .policy(
                new GrantAuthority(new PolicyLoader().loadSample()),
                new PolicyWatcher.Listener() {
                  @Override
                  public void reloaded(ReloadResult result) {}

                  @Override
                  public void rejected(PolicyException error) {}
                },
                etcd.ca().certificate())
            .grants(grants)
            .auditHead(
                () -> new AuditAnchor.Head(auditSeq.get(), "ab".repeat(32)),
                // a fake chain: every line up to the head has this MAC
                (seq, mac) ->
                    seq <= auditSeq.get() && mac.equals("ab".repeat(32)) ? null : "not in chain"));
  }

  private void awaitAnchored(AtomicLong seq) {
    long want = seq.incrementAndGet();
    Await.until(
        Duration.ofSeconds(10),
        "audit head " + want + " anchored",
        () -> {
          AuditAnchor a = AuditAnchor.read(operator, "h1");
          return a != null && a.seq() == want;
        });
  }

  @Test
  void shouldKeepFollowingWhenAnotherHostFloodsItsOwnRequestPrefix() throws Exception {
    FakeGrants g1 = new FakeGrants("h1");
    AtomicLong seq = new AtomicLong(1);
    n1 = node(g1, seq);
    Await.until(
        Duration.ofSeconds(10), "h1 connected", () -> n1.state() == ClusterNode.State.CONNECTED);
    g1.issue(1, Duration.ofMinutes(5));
    Await.until(Duration.ofSeconds(5), "grant 1 listed", () -> listed(1));

    // h2 writes ~5.6 MB under its own prefixes, which its RBAC role allows: 3 values under
    // requests/h2/ (one addressed to h1, as a revoke request would be) and one under hosts/h2/
    for (int i = 0; i < 3; i++) {
      junk("/requests/h2/junk/" + i);
    }
    junk("/requests/h2/h1/999");
    junk("/hosts/h2/policy");
    // counted when h1's request watch delivers it: a blip that cut the watch before would lose the
    // event, and the re-read at recovery reads no value of a request for a grant h1 does not hold
    Await.until(
        Duration.ofSeconds(10),
        "the oversized request to h1 counted",
        () -> n1.skippedRevokeRequests() >= 1);

    // an etcd blip: h1 re-reads everything at recovery
    etcd.stopAll();
    Await.until(
        Duration.ofSeconds(15), "h1 degraded", () -> n1.state() == ClusterNode.State.DEGRADED);
    etcd.startAll();
    etcd.awaitHealthy(Duration.ofSeconds(30));
    Await.until(
        Duration.ofSeconds(20),
        "h1 connected again despite h2's junk",
        () -> n1.state() == ClusterNode.State.CONNECTED);
    assertTrue(n1.skippedRevokeRequests() >= 1, "the oversized request to h1 was counted");

    // a grant issued now is published, and revocable from h2's console and by the operator
    g1.issue(2, Duration.ofMinutes(5));
    Await.until(Duration.ofSeconds(5), "grant 2 listed", () -> listed(2));
    assertTrue(GrantDirectory.requestRevoke(h2, "h2", "h1", 2, Duration.ofSeconds(5)));
    assertEquals(ClusterGrantSync.ACTOR, g1.revoked.get(2L));
    assertTrue(GrantDirectory.revoke(operator, "h1", 1));
    Await.until(Duration.ofSeconds(5), "grant 1 revoked", () -> g1.revoked.containsKey(1L));
    awaitAnchored(seq);
    // the fleet view skips h2's junk and still lists h1's report
    PolicyStatus.View view = PolicyStatus.read(operator);
    assertNotNull(view);
    assertTrue(view.hosts().stream().anyMatch(h -> h.host().equals("h1")), view.toString());

    // h1 restarts while the junk is there
    n1.close();
    FakeGrants g1b = new FakeGrants("h1");
    n1 = node(g1b, seq);
    Await.until(
        Duration.ofSeconds(10), "h1 connected", () -> n1.state() == ClusterNode.State.CONNECTED);
    g1b.issue(4, Duration.ofMinutes(5));
    Await.until(Duration.ofSeconds(5), "grant 4 listed", () -> listed(4));
    awaitAnchored(seq);
    assertTrue(GrantDirectory.requestRevoke(h2, "h2", "h1", 4, Duration.ofSeconds(5)));
    assertEquals(ClusterGrantSync.ACTOR, g1b.revoked.get(4L));
  }
}
