package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.DeploymentCa;
import io.srdma.server.Addresses;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every {@code srdma} command with bad arguments: the documented exit status (2 usage, 1 failure;
 * audit verify's 3 for an unreadable file), a short message for people, no Java class name or stack
 * trace on stdout or stderr, and nothing created.
 */
@Timeout(120)
class CliErrorsTest {
  /** What must never reach a person: Java class names, exception names, stack frames. */
  private static final Pattern JAVA =
      Pattern.compile(
          "java\\.|javax\\.|io\\.srdma\\.|picocli\\.|Exception|\\tat |\\n\\s+at \\S+\\(");

  @TempDir Path dir;

  @BeforeEach
  void deployment() {
    DeploymentCa.init(dir.resolve("ca"), null);
  }

  private Path path(String name) {
    return dir.resolve(name);
  }

  /** Runs {@code args}, checks exit status and that no Java leaked; returns the run. */
  private static CliRun expect(int exit, String... args) {
    CliRun r = CliRun.of(args);
    String all = r.out() + r.err();
    String shown = String.join(" ", args) + " ->\nout:\n" + r.out() + "\nerr:\n" + r.err();
    assertEquals(exit, r.exit(), shown);
    assertFalse(JAVA.matcher(all).find(), "Java details reached the terminal: " + shown);
    assertFalse(r.err().isBlank() && r.out().isBlank(), "said nothing: " + shown);
    if (exit == ErrorReport.EXIT_USAGE) {
      // a usage error is a line or two and a hint, not the whole usage message
      assertTrue(r.err().lines().count() <= 4, "usage error too long: " + shown);
      assertFalse(r.err().contains("Usage:"), shown);
    }
    return r;
  }

  @Test
  void everyCommandReportsUsageErrorsShortlyWithExit2() {
    Path ca = path("ca");
    String[][] usage = {
      {},
      {"--bogus"},
      {"polcy"},
      {"help", "nonexistent"},
      {"policy"},
      {"policy", "check"},
      {"policy", "hash-password", "--bogus"},
      {
        "policy",
        "explain",
        "p.yaml",
        "--peer",
        "srdma://a/b",
        "--region",
        "r",
        "--op",
        "read",
        "--bytes",
        "12q"
      },
      {
        "policy",
        "explain",
        "p.yaml",
        "--peer",
        "srdma://a/b",
        "--region",
        "r",
        "--op",
        "read",
        "--offset",
        "abc"
      },
      {"audit"},
      {"audit", "verify"},
      {"audit", "verify", "x.jsonl", "--head", "zz"},
      {"verbs-example", "--size", "abc"},
      {"verbs-example", "--provider", "foo"},
      {"demo", "--console-port", "abc"},
      {"demo", "--console-port", "70000"},
      {"attack-suite"},
      {
        "attack-suite",
        "--target",
        "nohost",
        "--ca",
        ca.resolve("ca.crt").toString(),
        "--attacker",
        "a,b",
        "--region",
        "r",
        "--victim",
        "a,b",
        "--victim-region",
        "v"
      },
      {"bench", "--sizes", "12q"},
      {"bench", "--nope"},
      {"doctor", "--bogus"},
      {"ca"},
      {"ca", "init"},
      {"ca", "crl"},
      {"cert"},
      {"cert", "issue"},
      {"cert", "revoke"},
      {"cert", "revoke", "--ca", ca.toString(), "0a"},
      {"cert", "show"},
      {"serve"},
      {"serve", "--config", path("nonexist.yaml").toString()},
      {"cert", "issue", "--ca", ca.toString(), "--out", dir.toString(), "--host", "a b"},
    };
    for (String[] args : usage) {
      expect(ErrorReport.EXIT_USAGE, args);
    }
  }

  @Test
  void anUnknownValueGetsAHint() {
    CliRun r =
        expect(
            2,
            "policy",
            "explain",
            "p.yaml",
            "--peer",
            "srdma://a/b",
            "--region",
            "r",
            "--op",
            "rw");
    assertTrue(r.err().contains("--op: unknown value 'rw'"), r.err());
    assertTrue(r.err().contains("did you mean read,write?"), r.err());
    assertTrue(expect(2, "polcy").err().contains("did you mean policy?"));
  }

  @Test
  void anOptionGivenTwiceIsNamedNotShownInPicocliSyntax() {
    CliRun r = expect(2, "serve", "--config", "a.yaml", "--config", "b.yaml");
    assertTrue(r.err().contains("--config given more than once"), r.err());
    assertFalse(r.err().contains("=<"), r.err());
  }

  @Test
  void failuresSayTheCauseInPlainWordsWithExit1() throws Exception {
    assertTrue(
        expect(1, "policy", "check", path("nonexist.yaml").toString())
            .err()
            .contains("no such file"));
    assertTrue(
        expect(3, "audit", "verify", path("nonexist.jsonl").toString())
            .err()
            .contains("no such file"));
    // a directory that cannot be created: the OS's reason, not the path twice
    CliRun ca = expect(1, "ca", "init", "--dir", "/proc/srdma-nope/ca");
    assertFalse(ca.err().contains("/proc/srdma-nope/ca: /proc"), ca.err());
    expect(1, "ca", "init", "--dir", path("ca2").toString(), "--passphrase-file", "nonexist");
    assertFalse(Files.exists(path("ca2")), "ca init created its directory before failing");
    expect(1, "ca", "crl", "--dir", path("nonexist").toString());
    expect(1, "cert", "show", path("nonexist.pem").toString());
    expect(1, "cert", "revoke", "--ca", path("nonexist").toString(), "0a");
    expect(
        1,
        "cert",
        "issue",
        "--ca",
        path("nonexist").toString(),
        "--tenant",
        "acme",
        "--peer",
        "p",
        "--out",
        dir.toString());
  }

  @Test
  void demoChecksItsArgumentsBeforeCreatingAnything() {
    Path state = path("demo-state");
    CliRun r = expect(2, "demo", "--provider", "foo", "--once", "--state-dir", state.toString());
    assertTrue(r.err().contains("--provider"), r.err());
    assertFalse(Files.exists(state), "demo created " + state + " before failing");
    expect(2, "demo", "--console-port", "-7", "--once", "--state-dir", state.toString());
    assertFalse(Files.exists(state));
  }

  @Test
  void demoRefusesAStateDirThatIsAFile() throws Exception {
    Path file = Files.writeString(path("afile"), "x");
    expect(2, "demo", "--once", "--state-dir", file.toString());
  }

  @Test
  void servePortInUseSaysAddressAlreadyInUse() throws Exception {
    Path certs = Files.createDirectories(path("certs"));
    DeploymentCa ca = DeploymentCa.open(path("ca"), null);
    ca.issuePeer(io.srdma.keys.PeerIdentity.of("host", "host-1"), java.time.Duration.ofDays(1))
        .writeTo(certs.resolve("host.crt"), certs.resolve("host.key"), null);
    Path policy = path("policy.yaml");
    try (var in =
        io.srdma.policy.PolicyLoader.class.getResourceAsStream(
            io.srdma.policy.PolicyLoader.SAMPLE_RESOURCE)) {
      Files.write(policy, in.readAllBytes());
    }
    try (ServerSocket busy = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Path config = path("serve.yaml");
      Files.writeString(
          config,
          String.join(
              "\n",
              "version: 1",
              "listen: 127.0.0.1:" + busy.getLocalPort(),
              "provider: soft",
              "tls:",
              "  certificate: certs/host.crt",
              "  key: certs/host.key",
              "  ca-certificate: ca/ca.crt",
              "  crl: ca/crl.pem",
              "policy:",
              "  file: policy.yaml",
              "audit:",
              "  file: audit.log",
              "regions:",
              "  - tenant: acme",
              "    region: kvcache",
              "    size: 1MiB",
              ""),
          StandardCharsets.UTF_8);
      CliRun r = expect(1, "serve", "--config", config.toString());
      assertTrue(r.err().contains("address already in use"), r.err());
      assertTrue(r.err().contains("127.0.0.1:" + busy.getLocalPort()), r.err());
      assertFalse(r.err().contains("/127.0.0.1"), r.err());
    }
  }

  @Test
  void aFailureIsOneLineAndDebugShowsItsJavaDetails() {
    for (boolean debug : new boolean[] {false, true}) {
      picocli.CommandLine root = SrdmaCommand.newCommandLine();
      java.io.StringWriter err = new java.io.StringWriter();
      root.setErr(new java.io.PrintWriter(err, true));
      picocli.CommandLine.ParseResult parsed =
          debug ? root.parseArgs("doctor", "--debug") : root.parseArgs("doctor");
      int exit =
          new ErrorReport()
              .handleExecutionException(
                  new IllegalStateException(
                      "cannot open x", new java.nio.file.NoSuchFileException("x")),
                  root.getSubcommands().get("doctor"),
                  parsed);
      assertEquals(ErrorReport.EXIT_FAILED, exit);
      assertTrue(
          err.toString().startsWith("srdma doctor: cannot open x: no such file or directory"),
          err.toString());
      assertEquals(debug, err.toString().contains("IllegalStateException"), err.toString());
    }
  }

  @Test
  void messagesLoseClassNamesAndKeepTheCause() {
    assertEquals(
        "cannot read policy file x.yaml: no such file or directory",
        Addresses.explain(
            new io.srdma.policy.PolicyException(
                io.srdma.policy.PolicyException.Category.IO,
                "cannot read policy file x.yaml: java.nio.file.NoSuchFileException: x.yaml",
                new java.nio.file.NoSuchFileException("x.yaml"))));
    assertEquals(
        "cannot listen on 127.0.0.1:5: address already in use",
        Addresses.explain(
            new RuntimeException(
                "IO_ERROR: cannot listen on /127.0.0.1:5",
                new java.net.BindException("Address already in use"))));
    assertEquals("[::1]:7", Addresses.format(new java.net.InetSocketAddress("::1", 7)));
    assertEquals("[fe80::1:0:0:2]:7", "[" + Addresses.compressed("fe80:0:0:0:1:0:0:2") + "]:7");
  }
}
