package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.ClientOptions;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
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
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code srdma serve} in-process: a generated CA and certificates, a real client, a clean stop. */
@Timeout(120)
class ServeCommandTest {
  private static final Pattern READY = Pattern.compile("srdma serve: listening on (\\S+):(\\d+) ");

  @TempDir Path dir;
  private DeploymentCa ca;
  private Path policy;

  @BeforeEach
  void deployment() throws Exception {
    ca = DeploymentCa.init(dir.resolve("ca"), null);
    Path certs = dir.resolve("certs");
    Files.createDirectories(certs);
    ca.issuePeer(PeerIdentity.of("host", "host-1"), Duration.ofDays(1))
        .writeTo(certs.resolve("host.host-1.crt"), certs.resolve("host.host-1.key"), null);
    ca.issuePeer(PeerIdentity.of("acme", "trainer-1"), Duration.ofDays(1))
        .writeTo(certs.resolve("acme.trainer-1.crt"), certs.resolve("acme.trainer-1.key"), null);
    Files.createDirectories(dir.resolve("policy"));
    policy = dir.resolve("policy/policy.yaml");
    Files.writeString(policy, samplePolicy(), StandardCharsets.UTF_8);
  }

  private static String samplePolicy() throws Exception {
    try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private Path config(String listen, String extra) throws Exception {
    Path f = dir.resolve("serve.yaml");
    Files.writeString(
        f,
        "version: 1\n"
            + "listen: "
            + listen
            + "\n"
            + "provider: soft\n"
            + "tls:\n"
            + "  certificate: certs/host.host-1.crt\n"
            + "  key: certs/host.host-1.key\n"
            + "  ca-certificate: ca/ca.crt\n"
            + "  crl: ca/crl.pem\n"
            + "policy:\n"
            + "  file: policy/policy.yaml\n"
            + "  watch: true\n"
            + "audit:\n"
            + "  file: audit.log\n"
            + "limits:\n"
            + "  shutdown-timeout: 15s\n"
            + extra,
        StandardCharsets.UTF_8);
    return f;
  }

  private static final String REGIONS =
      "regions:\n  - tenant: acme\n    region: kvcache\n    size: 1MiB\n";

  /** A serve running on a thread of its own. */
  private static final class Serving {
    final ServeCommand command = new ServeCommand();
    final StringWriter out = new StringWriter();
    final StringWriter err = new StringWriter();
    final CompletableFuture<Integer> exit = new CompletableFuture<>();

    Serving(Path config) {
      CommandLine cl = new CommandLine(command);
      cl.setOut(new PrintWriter(out, true));
      cl.setErr(new PrintWriter(err, true));
      Thread t =
          new Thread(
              () -> {
                try {
                  exit.complete(cl.execute("--config", config.toString()));
                } catch (Throwable e) {
                  exit.completeExceptionally(e);
                }
              },
              "serve-under-test");
      t.setDaemon(true);
      t.start();
    }

    InetSocketAddress awaitReady() throws Exception {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (System.nanoTime() < deadline && !exit.isDone()) {
        Matcher m = READY.matcher(out.toString());
        if (m.find()) {
          return new InetSocketAddress(
              InetAddress.getByName(m.group(1)), Integer.parseInt(m.group(2)));
        }
        Thread.sleep(20);
      }
      throw new AssertionError("serve not ready; out:\n" + out + "\nerr:\n" + err);
    }
  }

  private ClientOptions client(InetSocketAddress host) {
    return new ClientOptions()
        .credential(
            Credential.load(
                dir.resolve("certs/acme.trainer-1.crt"),
                dir.resolve("certs/acme.trainer-1.key"),
                null))
        .trust(DeploymentTrust.load(dir.resolve("ca/ca.crt"), dir.resolve("ca/crl.pem")))
        .host(host);
  }

  @Test
  void servesAClientReloadsTheWatchedPolicyAndStopsCleanly() throws Exception {
    Serving s = new Serving(config("127.0.0.1:0", REGIONS));
    InetSocketAddress address = s.awaitReady();
    assertTrue(address.getPort() > 0);
    assertEquals(address, s.command.address());
    String ready = s.out.toString();
    assertTrue(ready.contains("host srdma://host/host-1"), ready);
    assertTrue(ready.contains("1 region,"), ready);

    LinkedBlockingQueue<String> revoked = new LinkedBlockingQueue<>();
    try (SecureRdmaClient c = SecureRdmaClient.connect(client(address))) {
      c.onRevoked((g, why) -> revoked.add(g.id() + " " + why));
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 64 * 1024, Duration.ofMinutes(1));
      g.writeBlocking(0, ByteBuffer.wrap("through srdma serve".getBytes(StandardCharsets.UTF_8)));

      // narrow the trainers to read-only; the watched file reloads and the write grant goes
      Path next = policy.resolveSibling("policy.yaml.tmp");
      Files.writeString(
          next,
          samplePolicy().replace("- region:read,write:kvcache", "- region:read:kvcache"),
          StandardCharsets.UTF_8);
      Files.move(next, policy, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      assertEquals(
          g.id() + " POLICY_CHANGED", revoked.poll(20, TimeUnit.SECONDS), s.err.toString());
      assertFalse(g.isValid());
    }

    s.command.stop();
    assertEquals(0, s.exit.get(30, TimeUnit.SECONDS), s.err.toString());
    assertTrue(s.out.toString().contains("srdma serve: stopped"), s.out.toString());
    String audit = Files.readString(dir.resolve("audit.log"), StandardCharsets.UTF_8);
    assertTrue(audit.contains("\"action\":\"grant\""), audit);
    assertTrue(audit.contains("\"action\":\"reload\""), audit);
    assertTrue(audit.contains("\"reason\":\"policy_changed\""), audit);
    try (ServerSocket again = new ServerSocket(address.getPort(), 1, address.getAddress())) {
      assertTrue(again.isBound(), "the port is free again after stop");
    }
  }

  @Test
  void badReferencedFilesExitTwoAndStartNothing() throws Exception {
    // a tenant certificate where the host's belongs, a key of another certificate,
    // a region the policy lacks and one larger than the policy allows
    Path f = dir.resolve("serve.yaml");
    Files.writeString(
        f,
        "version: 1\n"
            + "listen: 127.0.0.1:0\n"
            + "tls:\n"
            + "  certificate: certs/acme.trainer-1.crt\n"
            + "  key: certs/host.host-1.key\n"
            + "  ca-certificate: ca/ca.crt\n"
            + "  crl: ca/missing-crl.pem\n"
            + "policy: {file: policy/policy.yaml}\n"
            + "audit: {file: logs/audit.log}\n"
            + "regions:\n"
            + "  - {tenant: acme, region: nothere, size: 1MiB}\n"
            + "  - {tenant: globex, region: kvcache, size: 64MiB}\n",
        StandardCharsets.UTF_8);
    CliRun r = CliRun.of("serve", "--config", f.toString());
    assertEquals(2, r.exit(), r.err());
    String err = r.err();
    assertTrue(
        err.contains(f + ":4:3: tls.certificate: ")
            && err.contains("names srdma://acme/trainer-1; a host needs an identity srdma://host/"),
        err);
    assertTrue(err.contains(f + ":5:3: tls.key: ") && err.contains("is not the key of"), err);
    assertTrue(err.contains(f + ":7:3: tls.crl: ") && err.contains("does not exist"), err);
    assertTrue(
        err.contains(f + ":11:5: regions[0]: the policy's tenant 'acme' has no region 'nothere'"),
        err);
    assertTrue(
        err.contains(f + ":12:5: regions[1]: size 67108864 of globex/kvcache exceeds 33554432"),
        err);
    assertTrue(err.contains(f + ":9:9: audit.file: directory "), err);
    assertTrue(err.contains("errors in " + f + "; nothing was started"), err);
    assertFalse(Files.exists(dir.resolve("logs")), "nothing may be created");
    assertEquals("", r.out());
  }

  @Test
  void anInvalidPolicyIsListedWithItsOwnPositions() throws Exception {
    Files.writeString(policy, "version: 1\ntenants:\n  acme:\n    regionz: {}\n");
    CliRun r = CliRun.of("serve", "--config", config("127.0.0.1:0", "").toString());
    assertEquals(2, r.exit(), r.err());
    assertTrue(r.err().contains("policy.file: " + policy + " is not a valid policy"), r.err());
    assertTrue(r.err().contains(policy + ":4:5: unknown key 'regionz'"), r.err());
    assertFalse(Files.exists(dir.resolve("audit.log")), "nothing may be started");
  }

  @Test
  void aBrokenConfigFileExitsTwoWithEveryError() throws Exception {
    Path f = dir.resolve("serve.yaml");
    Files.writeString(f, "version: 1\nlisten: 127.0.0.1:99999\nprovider: rxe\n");
    CliRun r = CliRun.of("serve", "--config", f.toString());
    assertEquals(2, r.exit());
    assertTrue(r.err().contains(f + ":2:9: listen: port must be 0..65535"), r.err());
    assertTrue(r.err().contains(f + ":3:11: provider: must be one of soft, ibv, auto"), r.err());
    assertTrue(r.err().contains("missing required key 'tls'"), r.err());
    assertTrue(r.err().contains("5 errors in " + f + "; nothing was started"), r.err());
  }

  @Test
  void aPortInUseExitsOneAndUndoesTheStart() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CliRun r =
          CliRun.of(
              "serve", "--config", config("127.0.0.1:" + taken.getLocalPort(), REGIONS).toString());
      assertEquals(1, r.exit(), r.err());
      assertTrue(r.err().contains("srdma serve: could not start: "), r.err());
      assertTrue(r.err().contains("cannot listen on"), r.err());
    }
  }
}
