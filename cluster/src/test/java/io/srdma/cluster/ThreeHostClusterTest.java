package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyLoader;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three hosts, one deployment, a real 3-member etcd: a pushed policy is in force on every host
 * within 1 s; a revoked peer is refused by every host within 1 s; one etcd member down changes
 * nothing; all down, the hosts serve on with what they applied, and catch up when etcd is back.
 */
@Timeout(180)
class ThreeHostClusterTest {
  private static final Duration ONE_SECOND = Duration.ofSeconds(1);
  private static final String PREFIX = "/srdma/test";

  @TempDir Path dir;
  private EtcdTestCluster etcd;
  private final List<TestHost> hosts = new ArrayList<>();
  private EtcdLink console;
  private String sampleText;
  private Policy sample;

  @BeforeEach
  void start() throws IOException {
    etcd = EtcdTestCluster.start(dir.resolve("etcd"));
    try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      sampleText = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    sample = new PolicyLoader().parse("sample", sampleText);
    console = EtcdLink.open(etcd.clientConfig(PREFIX, null));
  }

  @AfterEach
  void stop() {
    for (TestHost h : hosts) {
      h.close();
    }
    if (console != null) {
      console.close();
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  private TestHost host(String name, ClusterConfig config) throws IOException {
    Path crl = dir.resolve(name + "-crl.pem");
    Files.writeString(crl, "");
    TestHost h = new TestHost(name, config, sample, etcd.ca(), crl);
    hosts.add(h);
    return h;
  }

  private void threeHosts() throws IOException {
    for (String n : List.of("h1", "h2", "h3")) {
      host(n, etcd.clientConfig(PREFIX, n));
    }
    for (TestHost h : hosts) {
      Await.until(
          Duration.ofSeconds(10),
          h.name + " connected",
          () -> h.node.state() == ClusterNode.State.CONNECTED);
    }
  }

  private PolicyPublisher.Pushed push(String text) {
    return PolicyPublisher.push(
        console,
        "pushed.yaml",
        text.getBytes(StandardCharsets.UTF_8),
        new PolicyLoader(),
        OptionalLong.empty(),
        etcd.ca());
  }

  private void pushAndExpectEverywhere(String text) {
    PolicyPublisher.Pushed p = push(text);
    assertTrue(p.changed());
    Await.until(
        ONE_SECOND,
        "policy " + p.sha256() + " in force on all three hosts",
        () -> hosts.stream().allMatch(h -> h.policyHash().equals(p.sha256())));
  }

  private X509Holder revokeAndExpectEverywhere(String peer) {
    DeploymentCa ca = etcd.ca();
    Credential c = ca.issuePeer(PeerIdentity.of("acme", peer), Duration.ofDays(1));
    for (TestHost h : hosts) {
      assertFalse(h.refuses(c.certificate()), h.name + " refuses a valid peer");
    }
    BigInteger serial = c.certificate().getSerialNumber();
    assertTrue(ca.revoke(serial));
    RevocationPublisher.Published r =
        RevocationPublisher.publish(console, ca.crl(), List.of(serial), ca.certificate());
    assertTrue(r.changed());
    Await.until(
        ONE_SECOND,
        "serial " + serial.toString(16) + " refused by all three hosts",
        () -> hosts.stream().allMatch(h -> h.refuses(c.certificate())));
    return new X509Holder(c);
  }

  private record X509Holder(Credential credential) {}

  private String variant(int n) {
    return sampleText + "\n# variant " + n + "\n";
  }

  @Test
  void shouldApplyPushesAndRevocationsEverywhereWithinOneSecondThroughMemberLossAndOutage()
      throws IOException {
    threeHosts();
    pushAndExpectEverywhere(variant(1));
    // the reload listener (audit, console) is told just after the policy is in force
    Await.until(
        Duration.ofSeconds(1),
        "every host's reload listener told once",
        () -> hosts.stream().allMatch(h -> h.reloads.size() == 1));
    // every host published the hash it runs, and the revision it came from
    Await.until(
        Duration.ofSeconds(5),
        "three hosts report the pushed policy",
        () -> {
          PolicyStatus.View v = PolicyStatus.read(console);
          return v.hosts().size() == 3
              && v.hosts().stream()
                  .allMatch(s -> s.sha256().equals(v.sha256()) && s.revision() == v.revision());
        });
    revokeAndExpectEverywhere("p1");

    // one member down: nothing changes
    etcd.stopMember(0);
    pushAndExpectEverywhere(variant(2));
    revokeAndExpectEverywhere("p2");
    for (TestHost h : hosts) {
      assertEquals(ClusterNode.State.CONNECTED, h.node.state(), h.name);
    }

    // all down: hosts go degraded and keep serving with what they applied
    String before = hosts.get(0).policyHash();
    etcd.stopAll();
    for (TestHost h : hosts) {
      Await.until(
          Duration.ofSeconds(15),
          h.name + " degraded",
          () -> h.node.state() == ClusterNode.State.DEGRADED);
      assertEquals(before, h.policyHash(), h.name + " kept its policy");
      assertEquals(ClusterNode.State.DEGRADED, h.node.status().state());
    }
    Credential stillGood = etcd.ca().issuePeer(PeerIdentity.of("acme", "p3"), Duration.ofDays(1));
    for (TestHost h : hosts) {
      assertFalse(h.refuses(stillGood.certificate()), h.name + " still serves valid peers");
    }

    // etcd back: hosts reconnect; revocations and pushes apply within 1 s again
    etcd.startAll();
    for (TestHost h : hosts) {
      Await.until(
          Duration.ofSeconds(15),
          h.name + " connected again",
          () -> h.node.state() == ClusterNode.State.CONNECTED);
    }
    revokeAndExpectEverywhere("p4");
    pushAndExpectEverywhere(variant(3));
  }

  @Test
  void shouldApplyRevocationsQueuedWhileAHostWasCutOffWhenItReconnects() throws IOException {
    // h1 and h2 reach every member; h3 reaches only member 2
    host("h1", etcd.clientConfig(PREFIX, "h1"));
    host("h2", etcd.clientConfig(PREFIX, "h2"));
    TestHost h3 = host("h3", etcd.clientConfig(PREFIX, "h3", List.of(etcd.endpoints().get(2))));
    for (TestHost h : hosts) {
      Await.until(
          Duration.ofSeconds(10),
          h.name + " connected",
          () -> h.node.state() == ClusterNode.State.CONNECTED);
    }
    etcd.stopMember(2);
    Await.until(
        Duration.ofSeconds(15), "h3 degraded", () -> h3.node.state() == ClusterNode.State.DEGRADED);

    DeploymentCa ca = etcd.ca();
    Credential c = ca.issuePeer(PeerIdentity.of("acme", "late"), Duration.ofDays(1));
    BigInteger serial = c.certificate().getSerialNumber();
    ca.revoke(serial);
    RevocationPublisher.publish(console, ca.crl(), List.of(serial), ca.certificate());
    PolicyPublisher.Pushed p = push(variant(9));
    Await.until(
        ONE_SECOND,
        "h1 and h2 refuse the revoked peer",
        () -> hosts.get(0).refuses(c.certificate()) && hosts.get(1).refuses(c.certificate()));
    assertFalse(h3.refuses(c.certificate()), "h3 cannot know yet");
    assertEquals(sample.sha256(), h3.policyHash());

    etcd.startMember(2);
    Await.until(
        Duration.ofSeconds(15),
        "h3 applies the queued revocation and policy on recovery",
        () -> h3.refuses(c.certificate()) && h3.policyHash().equals(p.sha256()));
    // its CRL file then holds the list (written just after the list is in force), for a restart
    // while etcd is away
    Await.until(
        Duration.ofSeconds(5),
        "h3's CRL file rewritten",
        () -> {
          try {
            return Files.readString(dir.resolve("h3-crl.pem")).contains("BEGIN X509 CRL");
          } catch (java.io.IOException e) {
            return false;
          }
        });
  }
}
