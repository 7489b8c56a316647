package io.srdma.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.host.RegionHost;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyLoader;
import io.srdma.testsupport.DevHost;
import io.srdma.verbs.doctor.DeviceCounter;
import io.srdma.verbs.doctor.DeviceCounters;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link HostConsoleBackend} over a real host on the soft provider. */
@Timeout(60)
class HostConsoleBackendTest {
  @TempDir Path dir;

  private static String sample() {
    return DevHost.samplePolicyText();
  }

  @Test
  void thePolicyTextFollowsAReloadMadeWithoutTheConsole() throws Exception {
    String first = sample();
    String second = first + "\n# reloaded by the file watch\n";
    String third = first + "\n# a later reload\n";
    PolicyLoader loader = new PolicyLoader();
    Policy initial = loader.parse("policy.yaml", first);
    try (DevHost rig = DevHost.start(dir, o -> o.policy(initial))) {
      RegionHost host = rig.host();
      HostConsoleBackend backend = new HostConsoleBackend(host, first, rig.auditLog().file());
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
    try (DevHost rig = DevHost.start(dir)) {
      RegionHost host = rig.host();
      Path log = rig.auditLog().file();
      assertEquals(List.of(), new HostConsoleBackend(host, sample(), log).deviceCounters());
      HostConsoleBackend backend =
          new HostConsoleBackend(
              host, sample(), log, new DeviceCounters(dir.resolve("sys"), "rxe0"));
      assertEquals(
          List.of(new DeviceCounter("rxe0", 1, DeviceCounter.Group.HW, "rcvd_rnr_err", 5)),
          backend.deviceCounters());
      Files.writeString(counters.resolve("rcvd_rnr_err"), "6\n");
      assertEquals(6, backend.deviceCounters().get(0).value(), "read again, not cached");
    }
  }
}
