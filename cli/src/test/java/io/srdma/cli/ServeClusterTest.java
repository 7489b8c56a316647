package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.ClientOptions;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.cluster.ClusterConfig;
import io.srdma.cluster.EtcdTestCluster;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.PolicyLoader;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code srdma serve} with a {@code cluster:} section against a real 3-member etcd, driven by the
 * cluster commands: a pushed policy revokes what it forbids on the host, a grant revoked with
 * {@code grant revoke --cluster} ends on the host, {@code cert revoke --cluster} ends the peer's
 * session, {@code policy status} and {@code audit verify --cluster} see the host.
 */
@Timeout(180)
class ServeClusterTest {
  private static final Pattern READY = Pattern.compile("srdma serve: listening on (\\S+):(\\d+) ");
  private static final String PREFIX = "/srdma/e2e";

  @TempDir Path dir;

  private static String yaml(ClusterConfig c, String host) {
    return "cluster:\n"
        + "  endpoints: ["
        + c.endpoints().stream().map(Object::toString).collect(Collectors.joining(", "))
        + "]\n"
        + "  ca-certificate: "
        + c.caCertificate()
        + "\n  certificate: "
        + c.certificate()
        + "\n  key: "
        + c.key()
        + "\n  prefix: "
        + PREFIX
        + "\n  server-name: localhost\n"
        + (host == null ? "" : "  host: " + host + "\n");
  }

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(what + " did not happen within 10 s");
      }
      Thread.sleep(50);
    }
  }

  @Test
  void shouldFollowPushesGrantRevocationsAndCertificateRevocationsFromTheCluster()
      throws Exception {
    try (EtcdTestCluster etcd = EtcdTestCluster.start(dir.resolve("etcd"))) {
      DeploymentCa ca = etcd.ca();
      Path certs = dir.resolve("certs");
      Files.createDirectories(certs);
      ca.issuePeer(PeerIdentity.of("host", "host-1"), Duration.ofDays(1))
          .writeTo(certs.resolve("host.crt"), certs.resolve("host.key"), null);
      Credential trainer = ca.issuePeer(PeerIdentity.of("acme", "trainer-1"), Duration.ofDays(1));
      Path crl = dir.resolve("host-crl.pem");
      Files.copy(ca.directory().resolve(DeploymentCa.CRL), crl);
      String sample;
      try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
        sample = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
      Files.writeString(dir.resolve("policy.yaml"), sample);
      Path serveYaml = dir.resolve("serve.yaml");
      Files.writeString(
          serveYaml,
          "version: 1\nlisten: 127.0.0.1:0\nprovider: soft\n"
              + "tls:\n  certificate: certs/host.crt\n  key: certs/host.key\n"
              + "  ca-certificate: "
              + ca.directory().resolve(DeploymentCa.CA_CERTIFICATE)
              + "\n  crl: host-crl.pem\n"
              + "policy:\n  file: policy.yaml\n"
              + "audit:\n  file: audit.log\n"
              + "limits:\n  shutdown-timeout: 15s\n"
              + "regions:\n  - tenant: acme\n    region: kvcache\n    size: 1MiB\n"
              + yaml(etcd.clientConfig(PREFIX, "host-1"), "host-1"));
      Path ops = dir.resolve("ops.yaml");
      Files.writeString(ops, yaml(etcd.clientConfig(PREFIX, null), null));
      Path caPass = dir.resolve("ca.pass");
      Files.writeString(caPass, new String(etcd.caPassphrase()) + "\n");

      ServeCommand command = new ServeCommand();
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      CommandLine cl = new CommandLine(command);
      cl.setOut(new PrintWriter(out, true));
      cl.setErr(new PrintWriter(err, true));
      CompletableFuture<Integer> exit = new CompletableFuture<>();
      Thread t =
          new Thread(
              () -> exit.complete(cl.execute("--config", serveYaml.toString())), "serve-test");
      t.setDaemon(true);
      t.start();
      await("serve ready", () -> READY.matcher(out.toString()).find() || exit.isDone());
      Matcher m = READY.matcher(out.toString());
      assertTrue(m.find(), out + "\n" + err);
      InetSocketAddress address =
          new InetSocketAddress(InetAddress.getByName(m.group(1)), Integer.parseInt(m.group(2)));

      ClientOptions options =
          new ClientOptions()
              .credential(trainer)
              .trust(
                  DeploymentTrust.load(
                      ca.directory().resolve(DeploymentCa.CA_CERTIFICATE),
                      ca.directory().resolve(DeploymentCa.CRL)))
              .host(address)
              .hostName("host-1");
      LinkedBlockingQueue<String> revoked = new LinkedBlockingQueue<>();
      try (SecureRdmaClient c = SecureRdmaClient.connect(options)) {
        c.onRevoked((g, why) -> revoked.add(g.id() + " " + why));
        RemoteGrant w =
            c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 64 * 1024, Duration.ofMinutes(1));
        // the grant is listed in the cluster
        await(
            "grant listed",
            () -> CliRun.of("grant", "list", "--cluster", ops.toString()).out().contains("host-1"));

        // a pushed policy that narrows the trainers to read-only: the write grant goes
        Path narrowed = dir.resolve("narrowed.yaml");
        Files.writeString(
            narrowed, sample.replace("- region:read,write:kvcache", "- region:read:kvcache"));
        CliRun push =
            CliRun.of(
                "policy",
                "push",
                narrowed.toString(),
                "--cluster",
                ops.toString(),
                "--ca",
                ca.directory().toString(),
                "--ca-passphrase-file",
                caPass.toString());
        assertEquals(0, push.exit(), push.err());
        assertEquals(
            w.id() + " POLICY_CHANGED", revoked.poll(10, TimeUnit.SECONDS), err.toString());
        CliRun status = CliRun.of("policy", "status", "--cluster", ops.toString());
        assertEquals(0, status.exit(), status.err());
        String sha = push.out().replaceAll("(?s).*sha256 ([0-9a-f]{12}).*", "$1");
        await(
            "host-1 reports the pushed policy",
            () ->
                CliRun.of("policy", "status", "--cluster", ops.toString())
                    .out()
                    .matches("(?s).*host-1\\s+" + sha + ".*"));
        // the pushed serial is kept beside the audit log (600) and the host refused nothing
        Path serialFile = dir.resolve(ServeCommand.POLICY_SERIAL_FILE);
        String serial = push.out().replaceAll("(?s).*signed serial ([0-9]+).*", "$1");
        assertTrue(
            Files.readString(serialFile).matches(serial + " " + sha + "[0-9a-f]{52}\n"),
            Files.readString(serialFile) + " vs " + push.out());
        assertEquals(
            "rw-------",
            java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(serialFile)));
        assertTrue(
            CliRun.of("policy", "status", "--cluster", ops.toString())
                .out()
                .matches("(?s).*REFUSED.*\nhost-1\\s+" + sha + "\\s+\\d+\\s+\\S+\\s+0\\s.*"),
            "a REFUSED column, 0 for host-1");

        // a grant revoked from the cluster ends on the host
        RemoteGrant r = c.grant("kvcache", EnumSet.of(Access.READ), 0, 4096, Duration.ofMinutes(1));
        await(
            "read grant listed",
            () ->
                CliRun.of("grant", "list", "--cluster", ops.toString())
                    .out()
                    .contains("host-1           " + r.id() + " "));
        CliRun gr =
            CliRun.of(
                "grant", "revoke", "--cluster", ops.toString(), "host-1", Long.toString(r.id()));
        assertEquals(0, gr.exit(), gr.err());
        assertEquals(r.id() + " REVOKED", revoked.poll(10, TimeUnit.SECONDS), err.toString());

        // the peer's certificate revoked in the cluster: the host ends its session (the client
        // sees the connection go; its next request fails)
        CliRun cr =
            CliRun.of(
                "cert",
                "revoke",
                "--ca",
                ca.directory().toString(),
                "--ca-passphrase-file",
                caPass.toString(),
                trainer.certificate().getSerialNumber().toString(16),
                "--cluster",
                ops.toString());
        assertEquals(0, cr.exit(), cr.err());
        await(
            "the revoked peer's session ended",
            () -> {
              try {
                c.grant("kvcache", EnumSet.of(Access.READ), 0, 4096, Duration.ofMinutes(1));
                return false;
              } catch (ChannelException e) {
                return true;
              }
            });
      }
      // the host's CRL file is rewritten just after the list is in force
      await(
          "the host's CRL file rewritten",
          () -> {
            try {
              return Files.readString(crl).contains("BEGIN X509 CRL");
            } catch (java.io.IOException e) {
              return false;
            }
          });

      command.stop();
      assertEquals(0, exit.get(30, TimeUnit.SECONDS), err.toString());
      CliRun verify =
          CliRun.of(
              "audit",
              "verify",
              "--key",
              dir.resolve("audit.key").toString(),
              "--cluster",
              ops.toString(),
              "--cluster-host",
              "host-1",
              dir.resolve("audit.log").toString());
      assertEquals(0, verify.exit(), verify.err() + verify.out());

      // a damaged policy-serial file stops the next start before anything runs (as the CRL's)
      Files.writeString(dir.resolve(ServeCommand.POLICY_SERIAL_FILE), "garbage\n");
      StringWriter err2 = new StringWriter();
      CommandLine again = new CommandLine(new ServeCommand());
      again.setOut(new PrintWriter(new StringWriter(), true));
      again.setErr(new PrintWriter(err2, true));
      assertEquals(2, again.execute("--config", serveYaml.toString()), err2.toString());
      assertTrue(err2.toString().contains("policy serial file"), err2.toString());
      assertTrue(err2.toString().contains("malformed"), err2.toString());
    }
  }
}
