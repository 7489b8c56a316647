package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.etcd.jetcd.ByteSequence;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.PolicyException;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.PolicyWatcher;
import io.srdma.policy.ReloadResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A compromised host (h2, etcd RBAC on: it writes only its own keys) writes, under its own {@code
 * grants/h2/} and {@code hosts/h2/}, values that name another host: a grant "of h1" that h1 never
 * issued (one with the id of h1's real grant, to another peer) and a policy report "of h1". The
 * fleet view ({@code grant list}, {@code policy status}, the console's Fleet page) must attribute
 * an entry to the host its key belongs to, so neither appears as h1's: before, the value's {@code
 * host} field was believed, the console listed h1's grant 1 twice (an admin revoking the forged one
 * revoked the real one, to another peer) and h1 had two policy lines.
 */
@Timeout(180)
class ForgedFleetEntryTest {
  private static final String PREFIX = "/srdma/forged";

  @TempDir Path dir;

  @Test
  void shouldNotAttributeAnotherHostsEntriesToTheHostTheyName() throws Exception {
    try (RbacFleet fleet = RbacFleet.start(dir.resolve("etcd"), PREFIX, "h1", "h2")) {
      FakeGrants g1 = new FakeGrants("h1");
      EtcdLink operator = fleet.operator();
      EtcdLink h2 = fleet.link("h2");
      try (ClusterNode n1 =
          ClusterNode.start(
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
                      fleet.etcd().ca().certificate())
                  .grants(g1))) {
        ClusterGrant real = g1.issue(1, Duration.ofMinutes(5));
        Await.until(
            Duration.ofSeconds(10),
            "h1's grant 1 and its policy report published",
            () ->
                GrantDirectory.list(operator).size() == 1
                    && PolicyStatus.read(operator).hosts().size() == 1);

        Instant expiry = Instant.now().plus(Duration.ofMinutes(5));
        ClusterGrant sameId =
            new ClusterGrant(
                "h1", 1, "acme", "srdma://acme/intruder", "kvcache", 0, 1 << 20, "read", expiry);
        ClusterGrant never =
            new ClusterGrant(
                "h1", 77, "acme", "srdma://acme/intruder", "kvcache", 0, 1 << 20, "read", expiry);
        put(h2, "/grants/h2/1", sameId.toJson());
        put(h2, "/grants/h2/77", never.toJson());
        HostPolicyState h1Report = PolicyStatus.read(operator).hosts().get(0);
        put(
            h2,
            "/hosts/h2/policy",
            new HostPolicyState("h1", "00".repeat(32), 999, Instant.now(), false).toJson());
        // h2's own (honest-looking) report under another key of its own: not a policy report
        put(
            h2,
            "/hosts/h2/x/policy",
            new HostPolicyState("h2", "00".repeat(32), 1, Instant.now(), false).toJson());

        List<ClusterGrant> listed = GrantDirectory.list(operator);
        assertEquals(List.of(real), listed, "only h1's own grant is listed as h1's");
        List<HostPolicyState> hosts = PolicyStatus.read(operator).hosts();
        assertEquals(List.of(h1Report), hosts, "only h1's own report is h1's");
      }
    }
  }

  private static void put(EtcdLink link, String key, byte[] value) {
    link.await(
        link.client()
            .getKVClient()
            .put(ByteSequence.from(PREFIX + key, StandardCharsets.UTF_8), ByteSequence.from(value)),
        "put " + key);
  }
}
