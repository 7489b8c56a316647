package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.ClientOptions;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.Pem;
import io.srdma.policy.ConsoleUsers;
import io.srdma.policy.PolicyLoader;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.CookieManager;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyStore;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
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
        String text = out.toString();
        Matcher m = READY.matcher(text);
        // the whole line, not a part of it still being written
        if (m.find() && text.indexOf('\n', m.end()) >= 0) {
          return new InetSocketAddress(
              InetAddress.getByName(m.group(1)), Integer.parseInt(m.group(2)));
        }
        Thread.sleep(20);
      }
      throw new AssertionError("serve not ready; out:\n" + out + "\nerr:\n" + err);
    }

    /** The console's ready line, printed after the host's: waited for, not assumed. */
    Matcher awaitConsole() throws Exception {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (System.nanoTime() < deadline && !exit.isDone()) {
        String text = out.toString();
        Matcher m = CONSOLE.matcher(text);
        if (m.find() && text.indexOf('\n', m.end()) >= 0) {
          return m;
        }
        Thread.sleep(20);
      }
      throw new AssertionError("console not ready; out:\n" + out + "\nerr:\n" + err);
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
        .host(host)
        .hostName("host-1");
  }

  @Test
  void anOlderCrlPutBackWhileTheHostWasDownIsRefusedAtTheNextStart() throws Exception {
    Path saved = dir.resolve("old-crl.pem");
    Files.copy(dir.resolve("ca/crl.pem"), saved);
    ca.revoke(ca.issuePeer(PeerIdentity.of("acme", "gone"), Duration.ofDays(1)).certificate());
    Serving s = new Serving(config("127.0.0.1:0", REGIONS));
    s.awaitReady();
    s.command.stop();
    assertEquals(0, s.exit.get(30, TimeUnit.SECONDS), s.err.toString());
    assertTrue(Files.exists(dir.resolve(ServeCommand.CRL_NUMBER_FILE)), "highest number kept");

    Files.copy(saved, dir.resolve("ca/crl.pem"), StandardCopyOption.REPLACE_EXISTING);
    CliRun r = CliRun.of("serve", "--config", dir.resolve("serve.yaml").toString());
    assertEquals(2, r.exit(), r.out() + r.err());
    assertTrue(r.err().contains("tls.crl: "), r.err());
    assertTrue(r.err().contains("is older than number"), r.err());
    assertFalse(r.err().contains("Exception"), r.err());
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

  private static final Pattern CONSOLE = Pattern.compile("srdma serve: console on (https://\\S+) ");
  private static final Pattern CSRF = Pattern.compile("\"csrf\":\"([^\"]+)\"");

  /** Writes the console's certificate chain (server certificate, then the CA) and key. */
  private void consoleCertificate() throws Exception {
    Path d = dir.resolve("console");
    Files.createDirectories(d);
    Credential server = ca.issueServer(List.of("localhost", "127.0.0.1"), Duration.ofDays(1));
    server.writeTo(d.resolve("console.crt"), d.resolve("console.key"), null);
    Files.writeString(
        d.resolve("chain.pem"),
        Files.readString(d.resolve("console.crt"), StandardCharsets.UTF_8)
            + Pem.toPem(ca.certificate()),
        StandardCharsets.UTF_8);
  }

  private HttpClient https() throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("srdma-dev-ca", ca.certificate());
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(null, tmf.getTrustManagers(), null);
    return HttpClient.newBuilder()
        .sslContext(tls)
        .cookieHandler(new CookieManager())
        .connectTimeout(Duration.ofSeconds(10))
        .build();
  }

  private static HttpResponse<String> send(HttpClient http, HttpRequest.Builder request)
      throws Exception {
    return http.send(
        request.timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void runsTheConsoleWhoseAdminRevokesALiveGrantAndWhoseTextFollowsReloads() throws Exception {
    consoleCertificate();
    char[] password = "correct horse battery staple 42".toCharArray();
    String hash = ConsoleUsers.hashPassword(password.clone(), true);
    String policyText =
        samplePolicy()
            .replaceFirst(
                "(?m)(^\\s+admin:\\s*\\n\\s+password-hash: )\"[^\"]*\"",
                "$1\"" + Matcher.quoteReplacement(hash) + "\"");
    assertTrue(policyText.contains(hash), "admin's hash replaced");
    Files.writeString(policy, policyText, StandardCharsets.UTF_8);
    String token = "0123456789abcdef0123456789abcdef-metrics";
    Files.writeString(dir.resolve("console/metrics.token"), token + "\n", StandardCharsets.UTF_8);
    Serving s =
        new Serving(
            config(
                "127.0.0.1:0",
                REGIONS
                    + "console:\n"
                    + "  listen: 127.0.0.1:0\n"
                    + "  certificate-chain: console/chain.pem\n"
                    + "  key: console/console.key\n"
                    + "  metrics-token-file: console/metrics.token\n"
                    + "  session-timeout: 10m\n"
                    + "  login-attempts: 3\n"
                    + "  login-window: 1m\n"));
    InetSocketAddress address = s.awaitReady();
    Matcher m = s.awaitConsole();
    URI console = URI.create(m.group(1));
    assertEquals("127.0.0.1", console.getHost());
    assertTrue(s.out.toString().contains("2 console users of the policy"), s.out.toString());
    HttpClient http = https();

    LinkedBlockingQueue<String> revoked = new LinkedBlockingQueue<>();
    try (SecureRdmaClient c = SecureRdmaClient.connect(client(address))) {
      c.onRevoked((g, why) -> revoked.add(g.id() + " " + why));
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 64 * 1024, Duration.ofMinutes(1));
      g.writeBlocking(0, ByteBuffer.wrap("before".getBytes(StandardCharsets.UTF_8)));

      // nothing without a login; the scraper's token opens /metrics only
      assertEquals(
          401, send(http, HttpRequest.newBuilder(console.resolve("/api/grants"))).statusCode());
      HttpResponse<String> metrics =
          send(
              http,
              HttpRequest.newBuilder(console.resolve("/metrics"))
                  .header("Authorization", "Bearer " + token));
      assertEquals(200, metrics.statusCode(), metrics.body());

      HttpResponse<String> login =
          send(
              http,
              HttpRequest.newBuilder(console.resolve("/api/login"))
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"user\":\"admin\",\"password\":\"" + new String(password) + "\"}")));
      assertEquals(200, login.statusCode(), login.body());
      Matcher csrf = CSRF.matcher(login.body());
      assertTrue(csrf.find(), login.body());

      HttpResponse<String> grants =
          send(http, HttpRequest.newBuilder(console.resolve("/api/grants?tenant=acme")));
      assertEquals(200, grants.statusCode(), grants.body());
      assertTrue(grants.body().contains("\"" + g.id() + "\""), grants.body());
      assertTrue(grants.body().contains("srdma://acme/trainer-1"), grants.body());

      // a state change needs the CSRF token
      assertEquals(
          403,
          send(http, HttpRequest.newBuilder(console.resolve("/api/grants/" + g.id())).DELETE())
              .statusCode());
      assertTrue(g.isValid());
      HttpResponse<String> revoke =
          send(
              http,
              HttpRequest.newBuilder(console.resolve("/api/grants/" + g.id()))
                  .header("X-CSRF-Token", csrf.group(1))
                  .DELETE());
      assertEquals(200, revoke.statusCode(), revoke.body());
      assertTrue(revoke.body().contains("\"revoked\":true"), revoke.body());
      assertEquals(g.id() + " REVOKED", revoked.poll(20, TimeUnit.SECONDS), s.err.toString());
      ChannelException e =
          assertThrows(
              ChannelException.class, () -> g.writeBlocking(0, ByteBuffer.wrap(new byte[] {1})));
      assertEquals(ChannelException.Reason.REVOKED, e.reason());

      // the console shows the text of the policy the watch put in force
      Path next = policy.resolveSibling("policy.yaml.tmp");
      Files.writeString(next, policyText + "\n# changed by the operator\n", StandardCharsets.UTF_8);
      Files.move(next, policy, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      String shown = "";
      while (System.nanoTime() < deadline && !shown.contains("changed by the operator")) {
        Thread.sleep(100);
        shown = send(http, HttpRequest.newBuilder(console.resolve("/api/policy"))).body();
      }
      assertTrue(shown.contains("changed by the operator"), shown + "\n" + s.err);
    }

    s.command.stop();
    assertEquals(0, s.exit.get(30, TimeUnit.SECONDS), s.err.toString());
    String audit = Files.readString(dir.resolve("audit.log"), StandardCharsets.UTF_8);
    assertTrue(audit.contains("\"action\":\"authenticate\""), audit);
    assertTrue(audit.contains("\"action\":\"revoke\""), audit);
    assertTrue(audit.contains("admin"), audit);
    try (ServerSocket again =
        new ServerSocket(console.getPort(), 1, InetAddress.getLoopbackAddress())) {
      assertTrue(again.isBound(), "the console's port is free again after stop");
    }
  }

  @Test
  void aBrokenConsoleSectionExitsTwoAndStartsNothing() throws Exception {
    consoleCertificate();
    Files.writeString(dir.resolve("console/short.token"), "too-short\n", StandardCharsets.UTF_8);
    // the host's own certificate with the console server's key; a token under 32 characters
    Path f =
        config(
            "127.0.0.1:7999",
            "console:\n"
                + "  listen: 127.0.0.1:7999\n"
                + "  certificate-chain: certs/host.host-1.crt\n"
                + "  key: console/console.key\n"
                + "  key-passphrase-file: console/missing.pass\n"
                + "  metrics-token-file: console/short.token\n");
    CliRun r = CliRun.of("serve", "--config", f.toString());
    assertEquals(2, r.exit(), r.err());
    String err = r.err();
    assertTrue(err.contains(f + ":17:3: console.listen: must differ from listen"), err);
    assertTrue(err.contains(f + ":19:3: console.key: ") && err.contains("is not the key of"), err);
    assertTrue(err.contains(f + ":20:3: console.key-passphrase-file: "), err);
    assertTrue(
        err.contains(f + ":21:3: console.metrics-token-file: the token")
            && err.contains("must be at least 32 characters, got 9"),
        err);
    assertTrue(err.contains("4 errors in " + f + "; nothing was started"), err);
    assertFalse(Files.exists(dir.resolve("audit.log")), "nothing may be started");
    assertEquals("", r.out());
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
