package io.srdma.cli.faults;

import io.srdma.host.HostOptions;
import io.srdma.host.HostedRegion;
import io.srdma.host.RegionHost;
import io.srdma.host.SessionInfo;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentTrust;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.PolicyLoader;
import io.srdma.verbs.DeviceOptions;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;

/**
 * A region host for the fault tests, run in its own network namespace: the sample policy, {@code
 * acme/kvcache} and {@code globex/features} registered, every record opened checked against {@link
 * FaultPayload} and printed as {@code REC tag seq OK|BAD} (one line each, flushed), the sessions
 * per tenant printed when they change. Runs until killed.
 *
 * <p>Arguments: {@code DIR ADDRESS PORT INCARNATION}; {@code DIR} holds {@code ca/} and {@code
 * certs/host.crt|key}.
 */
public final class FaultHost {
  private FaultHost() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    String address = args[1];
    int port = Integer.parseInt(args[2]);
    String incarnation = args[3];
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    AuditLog auditLog = AuditLog.open(dir.resolve("audit-" + incarnation + ".log"));
    RegionHost host =
        RegionHost.start(
            new HostOptions()
                .credential(
                    Credential.load(
                        dir.resolve("certs/host.crt"), dir.resolve("certs/host.key"), null))
                .trust(DeploymentTrust.load(dir.resolve("ca/ca.crt"), dir.resolve("ca/crl.pem")))
                .policy(new PolicyLoader().loadSample())
                .audit(new AuditTrail(auditLog))
                .bind(new InetSocketAddress(address, port))
                .device(new DeviceOptions().bindAddress(address))
                .requestTimeout(FaultWriter.REQUEST_TIMEOUT)
                .idleTimeout(FaultWriter.scaled(Duration.ofSeconds(10))));
    for (String[] r : new String[][] {{"acme", "kvcache"}, {"globex", "features"}}) {
      HostedRegion region = host.registerRegion(r[0], r[1], 16 << 20);
      region.onRecord(
          rec -> {
            ByteBuffer p = rec.payload();
            byte[] b = new byte[p.remaining()];
            p.get(b);
            out.println("REC " + FaultPayload.describe(b));
          });
    }
    out.println("READY " + host.address());
    String last = "";
    while (true) {
      Map<String, Integer> perTenant = new TreeMap<>();
      for (SessionInfo s : host.sessions()) {
        perTenant.merge(s.tenant(), 1, Integer::sum);
      }
      String now = "SESSIONS " + perTenant;
      if (!now.equals(last)) {
        out.println(now);
        last = now;
      }
      Thread.sleep(200);
    }
  }
}
