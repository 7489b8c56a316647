package io.srdma.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.host.HostOptions;
import io.srdma.host.HostOptionsProbe;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code limits.connect-threads} and {@code limits.max-connects-per-tenant}: the host's queue-pair
 * connectors, read with the host's defaults and ranges, refused as a whole when wrong, and handed
 * to {@link HostOptions}.
 */
class ServeConnectLimitsConfigTest {
  private static final String HEAD =
      "version: 1\nlisten: 127.0.0.1:7471\n"
          + "tls: {certificate: h.crt, key: h.key, ca-certificate: ca.crt, crl: crl.pem}\n"
          + "policy: {file: policy.yaml}\naudit: {file: audit.log}\n";

  @TempDir Path dir;

  private ServeConfig read(String text) throws Exception {
    Path f = dir.resolve("serve.yaml");
    Files.writeString(f, HEAD + text);
    return ServeConfig.read(f);
  }

  private List<String> refused(String text) throws Exception {
    Path f = dir.resolve("refused.yaml");
    Files.writeString(f, HEAD + text);
    return assertThrows(ServeConfig.ConfigException.class, () -> ServeConfig.read(f)).errors();
  }

  @Test
  void shouldHandTheHostsDefaultsWhenLeftOut() throws Exception {
    HostOptions o = SecureRdmaServer.limits(read(""), new HostOptions());
    assertEquals(HostOptions.DEFAULT_CONNECT_THREADS, HostOptionsProbe.connectThreads(o));
    assertEquals(
        HostOptions.DEFAULT_MAX_CONNECTS_PER_TENANT, HostOptionsProbe.maxConnectsPerTenant(o));
    assertEquals(8, HostOptionsProbe.connectThreads(new HostOptions()), "the host's own default");
    assertEquals(2, HostOptionsProbe.maxConnectsPerTenant(new HostOptions()));
  }

  @Test
  void shouldHandTheConfiguredConnectLimitsToTheHost() throws Exception {
    ServeConfig c =
        read(
            "limits:\n  connect-threads: 12\n  max-connects-per-tenant: 3\n"
                + "  auth-failures-per-minute: 7\n  worker-threads: 5\n");
    assertEquals(12, c.connectThreads);
    assertEquals(3, c.maxConnectsPerTenant);
    HostOptions o = SecureRdmaServer.limits(c, new HostOptions());
    assertEquals(12, HostOptionsProbe.connectThreads(o));
    assertEquals(3, HostOptionsProbe.maxConnectsPerTenant(o));
    assertEquals(7, HostOptionsProbe.authFailuresPerMinute(o), "the other limits still reach it");
    assertEquals(5, HostOptionsProbe.workerThreads(o));
  }

  @Test
  void shouldAcceptTheBoundsOfTheRange() throws Exception {
    ServeConfig low = read("limits:\n  connect-threads: 1\n  max-connects-per-tenant: 1\n");
    assertEquals(1, low.connectThreads);
    assertEquals(1, low.maxConnectsPerTenant);
    ServeConfig high = read("limits:\n  connect-threads: 64\n  max-connects-per-tenant: 64\n");
    assertEquals(64, high.connectThreads);
    assertEquals(64, high.maxConnectsPerTenant);
    ServeConfig share = read("limits:\n  max-connects-per-tenant: 5\n");
    assertEquals(8, share.connectThreads, "up to the default threads");
    assertEquals(5, share.maxConnectsPerTenant);
  }

  @Test
  void shouldRefuseValuesOutOfRangeNamingTheKeyAndTheRange() throws Exception {
    List<String> e = refused("limits:\n  connect-threads: 0\n  max-connects-per-tenant: 65\n");
    assertEquals(2, e.size(), e.toString());
    assertTrue(
        e.get(0).endsWith(":7:20: limits.connect-threads: must be a whole number 1..64, got '0'"),
        e.toString());
    assertTrue(
        e.get(1)
            .endsWith(
                ":8:28: limits.max-connects-per-tenant: must be a whole number 1..64, got '65'"),
        e.toString());
    e = refused("limits:\n  connect-threads: 65\n");
    assertEquals(1, e.size(), e.toString());
    assertTrue(e.get(0).contains("limits.connect-threads: must be a whole number 1..64"), e.get(0));
    e = refused("limits:\n  max-connects-per-tenant: \"2\"\n");
    assertTrue(e.get(0).contains("limits.max-connects-per-tenant: must be"), e.get(0));
  }

  @Test
  void shouldRefuseMoreConnectsPerTenantThanThreadsNamingBoth() throws Exception {
    List<String> e = refused("limits:\n  connect-threads: 4\n  max-connects-per-tenant: 5\n");
    assertEquals(
        List.of(
            dir.resolve("refused.yaml")
                + ":8:28: limits.max-connects-per-tenant: must not exceed limits.connect-threads"
                + " (4), got 5"),
        e);
    e = refused("limits:\n  max-connects-per-tenant: 9\n");
    assertEquals(1, e.size(), e.toString());
    assertTrue(
        e.get(0)
            .endsWith(
                "limits.max-connects-per-tenant: must not exceed limits.connect-threads"
                    + " (8, the default), got 9"),
        e.get(0));
    // fewer threads than the default per-tenant share: both keys named, at connect-threads
    e = refused("limits:\n  connect-threads: 1\n");
    assertEquals(1, e.size(), e.toString());
    assertTrue(
        e.get(0)
            .endsWith(
                ":7:20: limits.connect-threads: must be at least limits.max-connects-per-tenant"
                    + " (2, the default; lower it too), got 1"),
        e.get(0));
  }

  @Test
  void shouldRefuseTheWholeFileSoNothingIsHalfApplied() throws Exception {
    // every other value is good: the file is still refused, no ServeConfig comes back to start
    List<String> e =
        refused(
            "limits:\n  max-sessions: 10\n  connect-threads: 4\n  max-connects-per-tenant: 5\n");
    assertEquals(1, e.size(), e.toString());
    assertTrue(e.get(0).contains("limits.max-connects-per-tenant"), e.get(0));
    assertTrue(e.get(0).contains("limits.connect-threads (4)"), e.get(0));
  }
}
