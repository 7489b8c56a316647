package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcd.jetcd.ByteSequence;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.HighWaterMark;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyLoader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 19: a pushed policy is signed by the deployment CA and every host verifies it. Whoever can
 * write the deployment's etcd prefix (here: a host's own etcd client certificate) cannot make the
 * hosts apply a policy of their own, one from another deployment or another CA, or an older one.
 */
@Timeout(180)
class SignedPolicyClusterTest {
  private static final String PREFIX = "/srdma/signed";
  private static final Duration LIMIT = Duration.ofSeconds(5);

  @TempDir Path dir;
  private EtcdTestCluster etcd;
  private EtcdLink console;
  private EtcdLink intruder;
  private String sample;
  private Policy initial;
  private final List<TestHost> hosts = new ArrayList<>();

  @BeforeEach
  void start() throws IOException {
    etcd = EtcdTestCluster.start(dir.resolve("etcd"));
    try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      sample = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    console = EtcdLink.open(etcd.clientConfig(PREFIX, null));
    // the attacker holds h1's etcd credentials: it can write the whole prefix
    intruder = EtcdLink.open(etcd.clientConfig(PREFIX, "h1"));
    initial = new PolicyLoader().parse("initial.yaml", bytes(sample));
    for (String n : List.of("h1", "h2", "h3")) {
      Path crl = dir.resolve(n + "-crl.pem");
      Files.writeString(crl, "");
      hosts.add(new TestHost(n, etcd.clientConfig(PREFIX, n), initial, etcd.ca(), crl));
    }
    for (TestHost h : hosts) {
      Await.until(
          LIMIT, h.name + " connected", () -> h.node.state() == ClusterNode.State.CONNECTED);
    }
  }

  @AfterEach
  void stop() {
    for (TestHost h : hosts) {
      h.close();
    }
    for (AutoCloseable c : new AutoCloseable[] {intruder, console, etcd}) {
      try {
        if (c != null) {
          c.close();
        }
      } catch (Exception e) {
        // closing the rest matters more
      }
    }
  }

  @Test
  void shouldApplyAnHonestSignedPushOnEveryHost() {
    PolicyPublisher.Pushed p = push(variant("honest"));
    assertTrue(p.changed());
    expectEverywhere(p.sha256());
    PolicyPublisher.Pushed q = push(variant("honest 2"));
    assertTrue(q.serial() > p.serial(), "serial increases");
    expectEverywhere(q.sha256());
    assertEquals(q.sha256(), PolicyStatus.read(console).sha256());
    for (TestHost h : hosts) {
      assertEquals(0, h.node.policyRefusals(), h.name + " refused an honest push");
    }
  }

  @Test
  void shouldRefuseAForgedPolicyWrittenWithAHostsCredentials() throws Exception {
    PolicyPublisher.Pushed honest = push(variant("in force"));
    expectEverywhere(honest.sha256());
    String forged = variant("forged");

    // unsigned text, as before issue 19
    writeDirectly(bytes(forged));
    expectRefusedEverywhere(1, honest.sha256());
    // audited once, as a refused reload
    for (TestHost h : hosts) {
      assertEquals(1, h.refused.size(), h.name + " audited the refusal");
    }
    // an envelope with a made-up signature and a huge serial
    writeDirectly(
        bytes(
            "srdma-signed-policy/1\nserial: 999999999999999\nsignature: "
                + "MEUCIQDx0000000000000000000000000000000000000000000000000000AiBgAAAAAAAAAAAAAAAA"
                + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\n\n"
                + forged));
    expectRefusedEverywhere(2, honest.sha256());
    // signed by the right CA, but for another deployment's prefix
    writeDirectly(SignedPolicy.sign(etcd.ca(), "/srdma/other", Long.MAX_VALUE - 1, bytes(forged)));
    expectRefusedEverywhere(3, honest.sha256());
    // a storm of refusals is audited once (bounded), only counted
    for (TestHost h : hosts) {
      assertEquals(1, h.refused.size(), h.name + " audited each refusal of the storm");
    }
    for (TestHost h : hosts) {
      assertEquals(1, reasons(h).get(PolicyRefusal.Reason.UNSIGNED), h.name + " unsigned");
      assertEquals(1, reasons(h).get(PolicyRefusal.Reason.OTHER_CA), h.name + " bad signature");
      assertEquals(
          1, reasons(h).get(PolicyRefusal.Reason.FOREIGN_DEPLOYMENT), h.name + " other prefix");
      assertEquals(PolicyRefusal.Reason.FOREIGN_DEPLOYMENT, h.node.lastPolicyRefusal().reason());
      assertEquals(Long.MAX_VALUE - 1, h.node.lastPolicyRefusal().serial());
    }
    // and every host publishes its count and last refusal for the fleet view
    Await.until(
        LIMIT,
        "every host reports its refusals",
        () ->
            PolicyStatus.read(console).hosts().stream()
                .allMatch(
                    s ->
                        s.refusals() == 3
                            && s.lastRefusal() != null
                            && s.lastRefusal().reason()
                                == PolicyRefusal.Reason.FOREIGN_DEPLOYMENT));
    // the next honest push still goes through (its serial is above anything forged could hide)
    PolicyPublisher.Pushed next = push(variant("after the forgery"));
    expectEverywhere(next.sha256());
  }

  @Test
  void shouldRefuseAReplayOfAnOlderSignedPolicy() throws Exception {
    PolicyPublisher.Pushed older = push(variant("older"));
    expectEverywhere(older.sha256());
    byte[] olderValue =
        console
            .client()
            .getKVClient()
            .get(console.keys().policy())
            .get(10, TimeUnit.SECONDS)
            .getKvs()
            .get(0)
            .getValue()
            .getBytes();
    PolicyPublisher.Pushed newer = push(variant("newer"));
    expectEverywhere(newer.sha256());

    writeDirectly(olderValue);
    expectRefusedEverywhere(1, newer.sha256());
    assertTrue(
        hosts.get(0).refused.get(0).getMessage().contains("below the highest this host applied"),
        hosts.get(0).refused.get(0).getMessage());
    for (TestHost h : hosts) {
      assertEquals(1, reasons(h).get(PolicyRefusal.Reason.ROLLBACK), h.name + " rollback");
      assertEquals(older.serial(), h.node.lastPolicyRefusal().serial());
    }
  }

  /**
   * The attacker waits for a restart: h1 applies serial N, stops, the attacker puts the signed
   * serial N-1 back, h1 starts again on its local policy file. With its policy-serial file it
   * refuses N-1 (and says so fleet-wide); h2, restarted without one, shows what the file prevents.
   */
  @Test
  void shouldRefuseAnOlderSignedPolicyPutBackWhileTheHostWasDown() throws Exception {
    Path serialFile = dir.resolve("h1-state").resolve("srdma-policy-serial");
    Files.createDirectories(serialFile.getParent());
    restart(0, HighWaterMark.read(serialFile, "policy serial"));
    PolicyPublisher.Pushed older = push(variant("older"));
    expectEverywhere(older.sha256());
    byte[] olderValue = currentValue();
    PolicyPublisher.Pushed newer = push(variant("newer"));
    expectEverywhere(newer.sha256());
    assertTrue(
        Files.readString(serialFile, StandardCharsets.US_ASCII)
            .equals(newer.serial() + " " + newer.sha256() + "\n"),
        "h1 keeps serial and hash of what it applied");

    hosts.get(0).close();
    hosts.get(1).close();
    writeDirectly(olderValue);
    TestHost h1 = restart(0, HighWaterMark.read(serialFile, "policy serial"));
    TestHost h2 = restart(1, null);

    Await.until(LIMIT, "h1 refused the replay", () -> h1.node.policyRefusals() == 1);
    assertEquals(initial.sha256(), h1.policyHash(), "h1 serves its local policy, not the replay");
    assertEquals(PolicyRefusal.Reason.ROLLBACK, h1.node.lastPolicyRefusal().reason());
    assertEquals(older.serial(), h1.node.lastPolicyRefusal().serial());
    assertEquals(1, h1.refused.size(), "audited");
    assertTrue(h1.refused.get(0).getMessage().contains("below the highest"));
    Await.until(
        LIMIT,
        "h1 reports the refusal fleet-wide",
        () ->
            PolicyStatus.read(console).hosts().stream()
                .anyMatch(
                    s ->
                        s.host().equals("h1")
                            && s.refusals() == 1
                            && s.lastRefusal() != null
                            && s.lastRefusal().reason() == PolicyRefusal.Reason.ROLLBACK
                            && s.lastRefusal().serial() == older.serial()));
    // without the file, the restarted host takes the replay: the gap the file closes
    Await.until(LIMIT, "h2 applied the replay", () -> h2.policyHash().equals(older.sha256()));
    assertEquals(0, h2.node.policyRefusals());

    // the next honest push is applied by both, and raises h1's kept serial
    PolicyPublisher.Pushed next = push(variant("after the restart"));
    expectEverywhere(next.sha256());
    assertTrue(
        Files.readString(serialFile, StandardCharsets.US_ASCII).startsWith(next.serial() + " "));
  }

  private TestHost restart(int index, HighWaterMark serials) {
    String name = hosts.get(index).name;
    hosts.get(index).close();
    TestHost h =
        new TestHost(
            name,
            etcd.clientConfig(PREFIX, name),
            initial,
            etcd.ca(),
            dir.resolve(name + "-crl.pem"),
            serials);
    hosts.set(index, h);
    Await.until(LIMIT, name + " connected", () -> h.node.state() == ClusterNode.State.CONNECTED);
    return h;
  }

  private byte[] currentValue() throws Exception {
    return console
        .client()
        .getKVClient()
        .get(console.keys().policy())
        .get(10, TimeUnit.SECONDS)
        .getKvs()
        .get(0)
        .getValue()
        .getBytes();
  }

  private static java.util.Map<PolicyRefusal.Reason, Long> reasons(TestHost h) {
    return h.node.policyRefusalsByReason();
  }

  @Test
  void shouldRefuseAPolicySignedByAnotherCa() throws Exception {
    PolicyPublisher.Pushed honest = push(variant("in force"));
    expectEverywhere(honest.sha256());
    DeploymentCa other = DeploymentCa.init(dir.resolve("other-ca"), null);
    writeDirectly(SignedPolicy.sign(other, PREFIX, Long.MAX_VALUE - 1, bytes(variant("theirs"))));
    expectRefusedEverywhere(1, honest.sha256());
    // and the publisher, holding the other CA, cannot push with it either: hosts refuse it
    PolicyPublisher.push(
        console,
        "theirs.yaml",
        bytes(variant("theirs 2")),
        new PolicyLoader(),
        OptionalLong.empty(),
        other);
    expectRefusedEverywhere(2, honest.sha256());
    for (TestHost h : hosts) {
      assertEquals(2, reasons(h).get(PolicyRefusal.Reason.OTHER_CA), h.name + " other CA");
    }
  }

  private PolicyPublisher.Pushed push(String text) {
    return PolicyPublisher.push(
        console, "pushed.yaml", bytes(text), new PolicyLoader(), OptionalLong.empty(), etcd.ca());
  }

  private void writeDirectly(byte[] value) throws Exception {
    intruder
        .client()
        .getKVClient()
        .put(intruder.keys().policy(), ByteSequence.from(value))
        .get(10, TimeUnit.SECONDS);
  }

  private void expectEverywhere(String sha256) {
    Await.until(
        LIMIT,
        "policy " + sha256 + " in force on every host",
        () -> hosts.stream().allMatch(h -> h.policyHash().equals(sha256)));
    Await.until(
        LIMIT,
        "every host reports " + sha256,
        () ->
            PolicyStatus.read(console).hosts().stream()
                    .filter(s -> s.sha256().equals(sha256))
                    .count()
                == hosts.size());
  }

  private void expectRefusedEverywhere(long refusals, String stillInForce) {
    Await.until(
        LIMIT,
        "every host refused " + refusals + " pushed value(s)",
        () -> hosts.stream().allMatch(h -> h.node.policyRefusals() >= refusals));
    for (TestHost h : hosts) {
      assertEquals(refusals, h.node.policyRefusals(), h.name + " refusals");
      assertEquals(stillInForce, h.policyHash(), h.name + " changed its policy");
    }
    // and each still reports the old hash
    List<HostPolicyState> states = PolicyStatus.read(console).hosts();
    assertEquals(hosts.size(), states.size());
    for (HostPolicyState s : states) {
      assertEquals(stillInForce, s.sha256(), s.host() + " reports another hash");
    }
  }

  private String variant(String tag) {
    return sample + "\n# " + tag + "\n";
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
