package io.srdma.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.CpuSet;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host's pre-authentication and session limits and the NAT setting for responder addresses are
 * settable in the serve config, with the host's defaults and typed errors.
 */
class ServeHostLimitsConfigTest {
  private static final String HEAD =
      "version: 1\nlisten: 127.0.0.1:7471\n"
          + "tls: {certificate: h.crt, key: h.key, ca-certificate: ca.crt, crl: crl.pem}\n"
          + "policy: {file: policy.yaml}\naudit: {file: audit.log}\n";

  @TempDir Path dir;

  private Path write(String name, String text) throws Exception {
    Path f = dir.resolve(name);
    Files.writeString(f, text);
    return f;
  }

  private ServeConfig.ConfigException refused(String name, String text) throws Exception {
    Path f = write(name, HEAD + text);
    return assertThrows(ServeConfig.ConfigException.class, () -> ServeConfig.read(f));
  }

  @Test
  void shouldDefaultToTheHostsLimits() throws Exception {
    ServeConfig c = ServeConfig.read(write("none.yaml", HEAD));
    assertEquals(4, c.maxPendingHandshakesPerAddress);
    assertEquals(Duration.ofSeconds(2), c.firstRecordTimeout);
    assertEquals(64, c.maxRejectedRecords);
    assertEquals(Duration.ofMinutes(10), c.regionKeyRotation);
    assertTrue(c.allowedResponderAddresses.isEmpty());
    assertFalse(c.trustHelloAddress);
  }

  @Test
  void shouldReadEveryLimitAndTheNatAddresses() throws Exception {
    ServeConfig c =
        ServeConfig.read(
            write(
                "set.yaml",
                HEAD
                    + "limits:\n  max-pending-handshakes-per-address: 16\n"
                    + "  first-record-timeout: 500ms\n  max-rejected-records: 8\n"
                    + "  region-key-rotation: 2m\n"
                    + "device:\n  allowed-responder-addresses: [10.0.0.7]\n"
                    + "  trust-hello-address: false\n"));
    assertEquals(16, c.maxPendingHandshakesPerAddress);
    assertEquals(Duration.ofMillis(500), c.firstRecordTimeout);
    assertEquals(8, c.maxRejectedRecords);
    assertEquals(Duration.ofMinutes(2), c.regionKeyRotation);
  }

  @Test
  void shouldReadPlainIpv6AndIpv4Addresses() throws Exception {
    ServeConfig c =
        ServeConfig.read(
            write(
                "nat.yaml",
                HEAD + "device:\n  allowed-responder-addresses:\n    - 10.0.0.7\n    - fd00::7\n"));
    assertEquals(
        Set.of(InetAddress.getByName("10.0.0.7"), InetAddress.getByName("fd00::7")),
        c.allowedResponderAddresses);
  }

  @Test
  void shouldRefuseHostNamesAndQuotedAddressesWithTheirPosition() throws Exception {
    ServeConfig.ConfigException e =
        refused("names.yaml", "device:\n  allowed-responder-addresses: [localhost]\n");
    assertTrue(
        e.errors().get(0).contains("device.allowed-responder-addresses: each entry must be an IP"),
        e.errors().toString());
    assertTrue(e.errors().get(0).contains("names.yaml:7:33:"), e.errors().toString());
    e = refused("quoted.yaml", "device:\n  allowed-responder-addresses: ['10.0.0.7']\n");
    assertTrue(e.errors().get(0).contains("each entry must be an IP"), e.errors().toString());
    e = refused("scalar.yaml", "device:\n  allowed-responder-addresses: 10.0.0.7\n");
    assertTrue(e.errors().get(0).contains("must be a list of IP addresses"), e.errors().toString());
  }

  @Test
  void shouldRefuseAFirstRecordTimeoutPastTheHandshakeTimeout() throws Exception {
    ServeConfig.ConfigException e =
        refused("slow.yaml", "limits:\n  handshake-timeout: 1s\n  first-record-timeout: 3s\n");
    assertTrue(
        e.errors().get(0).contains("limits.first-record-timeout: must not exceed"),
        e.errors().toString());
  }

  @Test
  void shouldRefuseARotationUnderOneSecondAndQuotedNumbers() throws Exception {
    ServeConfig.ConfigException e = refused("fast.yaml", "limits:\n  region-key-rotation: 10ms\n");
    assertTrue(e.errors().get(0).contains("at least 1s"), e.errors().toString());
    e = refused("quoted.yaml", "limits:\n  max-rejected-records: \"8\"\n");
    assertTrue(e.errors().get(0).contains("without quotes"), e.errors().toString());
  }

  @Test
  void shouldReadTheHostsThreadCountsOrLeaveTheHostsDefaults() throws Exception {
    ServeConfig none = ServeConfig.read(write("threads-none.yaml", HEAD));
    assertEquals(null, none.controlThreads);
    assertEquals(null, none.workerThreads);
    assertEquals(null, none.openerThreads);
    ServeConfig c =
        ServeConfig.read(
            write(
                "threads.yaml",
                HEAD
                    + "limits:\n  control-threads: 3\n  worker-threads: 12\n  opener-threads: 4\n"));
    assertEquals(3, c.controlThreads);
    assertEquals(12, c.workerThreads);
    assertEquals(4, c.openerThreads);
    ServeConfig.ConfigException e =
        refused("threads-bad.yaml", "limits:\n  worker-threads: 0\n  control-threads: 65\n");
    assertTrue(e.getMessage().contains("limits.worker-threads"), e.getMessage());
    assertTrue(e.getMessage().contains("limits.control-threads"), e.getMessage());
  }

  @Test
  void shouldReadTheCpusOfTheOpenersAndResponders() throws Exception {
    ServeConfig none = ServeConfig.read(write("cpus-none.yaml", HEAD));
    assertEquals(null, none.openerCpus);
    assertEquals(null, none.responderCpus);
    assertEquals(null, ServeChecks.deviceOptions(none).responderCpus());
    ServeConfig c =
        ServeConfig.read(
            write(
                "cpus.yaml",
                HEAD + "limits:\n  opener-cpus: \"2-3,6\"\ndevice:\n  responder-cpus: 1\n"));
    assertEquals(CpuSet.parse("2-3,6"), c.openerCpus);
    assertEquals(CpuSet.of(1), c.responderCpus);
    assertEquals(CpuSet.of(1), ServeChecks.deviceOptions(c).responderCpus());
    ServeConfig.ConfigException e =
        refused(
            "cpus-bad.yaml", "limits:\n  opener-cpus: 3-1\ndevice:\n  responder-cpus: [1, 2]\n");
    assertTrue(e.getMessage().contains("limits.opener-cpus"), e.getMessage());
    assertTrue(e.getMessage().contains("runs backwards"), e.getMessage());
    assertTrue(e.getMessage().contains("device.responder-cpus"), e.getMessage());
  }

  @Test
  void shouldReadWhoPlacesTheSessionsRequests() throws Exception {
    assertEquals("poller", ServeConfig.read(write("progress-none.yaml", HEAD)).openerProgress);
    assertEquals(
        "device",
        ServeConfig.read(write("progress.yaml", HEAD + "limits:\n  opener-progress: Device\n"))
            .openerProgress);
    ServeConfig.ConfigException e =
        refused("progress-bad.yaml", "limits:\n  opener-progress: nic\n");
    assertTrue(e.getMessage().contains("limits.opener-progress"), e.getMessage());
    assertTrue(e.getMessage().contains("poller, device"), e.getMessage());
  }
}
