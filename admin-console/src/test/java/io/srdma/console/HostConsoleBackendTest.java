package io.srdma.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.host.HostOptions;
import io.srdma.host.RegionHost;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyLoader;
import io.srdma.verbs.doctor.DeviceCounter;
import io.srdma.verbs.doctor.DeviceCounters;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link HostConsoleBackend} over a real host on the soft provider. */
@Timeout(60)
class HostConsoleBackendTest {
  @TempDir Path dir;

  private static String sample() throws Exception {
    try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void thePolicyTextFollowsAReloadMadeWithoutTheConsole() throws Exception {
    String first = sample();
    String second = first + "\n# reloaded by the file watch\n";
    String third = first + "\n# a later reload\n";
    PolicyLoader loader = new PolicyLoader();
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    try (AuditLog log = AuditLog.open(dir.resolve("audit.log"));
        RegionHost host =
            RegionHost.start(
                new HostOptions()
                    .credential(
                        ca.issuePeer(
                            PeerIdentity.of(RegionHost.HOST_TENANT, "h"), Duration.ofDays(1)))
                    .trust(ca.trust())
                    .policy(loader.parse("policy.yaml", first))
                    .audit(new AuditTrail(log))
                    .provider("soft"))) {
      HostConsoleBackend backend = new HostConsoleBackend(host, first, log.file());
      assertEquals(first, backend.policyText());

      host.reloadPolicy(loader.parse("policy.yaml", second), AuditTrail.SYSTEM);
      assertEquals(first, backend.policyText(), "unchanged until told");
      assertTrue(backend.policyReloaded(second));
      assertEquals(second, backend.policyText());

      // a text that is not the policy in force (a stale read, a later reload won) is not taken
      Policy later = loader.parse("policy.yaml", third);
      host.reloadPolicy(later, AuditTrail.SYSTEM);
      assertFalse(backend.policyReloaded(second));
      assertEquals(second, backend.policyText());
      assertTrue(backend.policyReloaded(third));
      assertEquals(third, backend.policyText());
      assertEquals(later.sha256(), backend.policy().sha256());
    }
  }

  @Test
  void deviceCountersAreReadAtEachCallAndNoneWithoutAReader() throws Exception {
    Path counters = dir.resolve("sys/class/infiniband/rxe0/ports/1/hw_counters");
    Files.createDirectories(counters);
    Files.writeString(counters.resolve("rcvd_rnr_err"), "5\n");
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    try (AuditLog log = AuditLog.open(dir.resolve("audit.log"));
        RegionHost host =
            RegionHost.start(
                new HostOptions()
                    .credential(
                        ca.issuePeer(
                            PeerIdentity.of(RegionHost.HOST_TENANT, "h"), Duration.ofDays(1)))
                    .trust(ca.trust())
                    .policy(new PolicyLoader().parse("policy.yaml", sample()))
                    .audit(new AuditTrail(log))
                    .provider("soft"))) {
      assertEquals(List.of(), new HostConsoleBackend(host, sample(), log.file()).deviceCounters());
      HostConsoleBackend backend =
          new HostConsoleBackend(
              host, sample(), log.file(), new DeviceCounters(dir.resolve("sys"), "rxe0"));
      assertEquals(
          List.of(new DeviceCounter("rxe0", 1, DeviceCounter.Group.HW, "rcvd_rnr_err", 5)),
          backend.deviceCounters());
      Files.writeString(counters.resolve("rcvd_rnr_err"), "6\n");
      assertEquals(6, backend.deviceCounters().get(0).value(), "read again, not cached");
    }
  }
}
