package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.AuditAction;
import io.srdma.policy.AuditEvent;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditLogOptions;
import io.srdma.policy.AuditOutcome;
import io.srdma.policy.AuditSigner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuditCommandTest {
  @TempDir Path dir;
  private Path logs;
  private Path log;
  private Path key;
  private DeploymentCa ca;
  private Credential host;
  private String head;

  @BeforeEach
  void writeLog() {
    ca = DeploymentCa.init(dir.resolve("ca"), null);
    host = ca.issuePeer(PeerIdentity.of("host", "h1"), Duration.ofDays(1));
    logs = dir.resolve("logs");
    log = logs.resolve("audit.log");
    key = logs.resolve("audit.key");
    append(0, 30);
  }

  private void append(int from, int to) {
    try {
      Files.createDirectories(logs);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    try (AuditLog a =
        AuditLog.open(
            new AuditLogOptions(log)
                .rotateBytes(4096)
                .checkpointLines(5)
                .checkpointInterval(Duration.ZERO)
                .signer(AuditSigner.of(host.certificate(), host.privateKey())))) {
      for (int i = from; i < to; i++) {
        a.append(
            AuditEvent.builder(AuditAction.REVOKE, AuditOutcome.SUCCESS)
                .actor("admin")
                .tenant("acme")
                .reason("console")
                .grant("g-" + i)
                .build());
      }
      head = a.sequence() + ":" + a.head();
    }
  }

  private List<String> files() throws Exception {
    List<String> files = new ArrayList<>();
    try (var s = Files.list(logs)) {
      s.filter(p -> p.getFileName().toString().startsWith("audit.log"))
          .map(Path::toString)
          .sorted()
          .forEach(files::add);
    }
    return files;
  }

  private CliRun verify(String... options) throws Exception {
    List<String> args = new ArrayList<>(List.of("audit", "verify"));
    args.addAll(List.of(options));
    args.addAll(files());
    return CliRun.of(args.toArray(String[]::new));
  }

  private String[] full() {
    return new String[] {
      "--key",
      key.toString(),
      "--ca",
      dir.resolve("ca/ca.crt").toString(),
      "--crl",
      dir.resolve("ca/crl.pem").toString()
    };
  }

  @Test
  void shouldExitZeroForAnIntactChainAcrossRotatedFiles() throws Exception {
    List<String> o = new ArrayList<>(List.of(full()));
    o.addAll(List.of("--closed", "--head", head));
    CliRun r = verify(o.toArray(String[]::new));
    assertTrue(files().size() > 2, files().toString());
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().startsWith("OK "), r.out());
    assertTrue(r.out().contains("(from genesis), head "), r.out());
    assertTrue(r.out().contains("MACs checked with audit key"), r.out());
    assertTrue(r.out().contains("signed by [srdma://host/h1], valid under CA"), r.out());
  }

  @Test
  void shouldSayWhatWasNotCheckedWithoutKeyOrCa() throws Exception {
    CliRun r = verify();
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().contains("MACs not checked (no audit key)"), r.out());
    assertTrue(r.out().contains("signers not checked against a CA"), r.out());
  }

  @Test
  void shouldReportTheFirstBrokenLine() throws Exception {
    List<String> lines = new ArrayList<>(Files.readAllLines(log));
    lines.set(2, lines.get(2).replace("\"actor\":\"admin\"", "\"actor\":\"nobody\""));
    Files.write(log, lines);
    CliRun r = verify(full());
    assertEquals(1, r.exit());
    assertTrue(r.err().startsWith(log + ":3: edited: "), r.err());
  }

  @Test
  void shouldAcceptALogThatGrewBeyondTheRecordedHead() throws Exception {
    String old = head;
    append(30, 40);
    List<String> o = new ArrayList<>(List.of(full()));
    o.addAll(List.of("--closed", "--head", old));
    CliRun r = verify(o.toArray(String[]::new));
    assertEquals(0, r.exit(), r.err());
  }

  @Test
  void shouldReportACutTail() throws Exception {
    List<String> lines = new ArrayList<>(Files.readAllLines(log));
    Files.write(log, lines.subList(0, lines.size() - 2));
    CliRun closed = verify("--key", key.toString(), "--closed");
    assertEquals(1, closed.exit(), closed.out());
    assertTrue(closed.err().contains(": truncated: "), closed.err());
    CliRun withHead = verify("--key", key.toString(), "--head", head);
    assertEquals(1, withHead.exit(), withHead.out());
    assertTrue(withHead.err().contains("line(s) cut from the end"), withHead.err());
  }

  @Test
  void shouldRefuseAMalformedHeadAsAUsageError() throws Exception {
    for (String bad : new String[] {"xyz", "12:abc", "-3:" + "a".repeat(64)}) {
      CliRun r = verify("--head", bad);
      assertEquals(2, r.exit(), bad + ": " + r.err());
      assertTrue(r.err().contains("--head"), r.err());
      assertFalse(r.err().contains("tamper"), r.err());
    }
  }

  /**
   * A log of five events, then what someone who can write the files but holds no key does to it
   * against a recorded head: drops the events after the first, relinks {@code prev} through lines
   * of their own and ends with a line carrying the head's seq and a copy of its MAC.
   *
   * @return the recorded head, {@code SEQ:MAC}
   */
  private String forgedLog(Path f) throws Exception {
    Files.createDirectories(f.getParent());
    String mac;
    long seq;
    try (AuditLog a = AuditLog.open(f)) {
      for (int i = 0; i < 5; i++) {
        a.append(
            AuditEvent.builder(AuditAction.GRANT, AuditOutcome.ALLOWED)
                .actor("srdma://acme/p" + i)
                .tenant("acme")
                .reason("ALLOWED")
                .grant("g" + i)
                .build());
      }
      mac = a.head();
      seq = a.sequence();
    }
    List<String> lines = Files.readAllLines(f);
    List<String> out = new ArrayList<>(lines.subList(0, 2));
    String prev = lines.get(1).replaceAll(".*\"mac\":\"([0-9a-f]{64})\".*", "$1");
    for (long s = 3; s <= seq; s++) {
      String m = s == seq ? mac : String.format("%064x", s);
      out.add(
          "{\"seq\":"
              + s
              + ",\"prev\":\""
              + prev
              + "\",\"time\":\"2026-01-01T00:00:00Z\",\"action\":\"decide\","
              + "\"outcome\":\"denied\",\"actor\":null,\"tenant\":null,\"reason\":null,"
              + "\"mac\":\""
              + m
              + "\"}");
      prev = m;
    }
    Files.write(f, out);
    return seq + ":" + mac;
  }

  @Test
  void shouldRefuseAHeadWithoutTheKeyAsAUsageErrorAndFindTheForgeryWithIt() throws Exception {
    Path f = dir.resolve("forged/audit.log");
    String recorded = forgedLog(f);
    String ca = dir.resolve("ca/ca.crt").toString();
    // without the key the copied MAC would match: refused, saying what is missing
    CliRun plain = CliRun.of("audit", "verify", "--head", recorded, f.toString());
    assertEquals(2, plain.exit(), plain.out() + plain.err());
    assertTrue(plain.err().contains("--head needs --key"), plain.err());
    assertFalse(plain.out().contains("OK"), plain.out());
    // with --ca but no checkpoint covering the head's line: refused as well
    CliRun withCa = CliRun.of("audit", "verify", "--ca", ca, "--head", recorded, f.toString());
    assertEquals(2, withCa.exit(), withCa.out() + withCa.err());
    assertTrue(withCa.err().contains("--head needs --key"), withCa.err());
    assertTrue(withCa.err().contains("none covers"), withCa.err());
    // with the key: the forged line is found
    CliRun keyed =
        CliRun.of(
            "audit",
            "verify",
            "--key",
            f.resolveSibling("audit.key").toString(),
            "--head",
            recorded,
            f.toString());
    assertEquals(1, keyed.exit(), keyed.out() + keyed.err());
    assertTrue(keyed.err().startsWith(f + ":3: edited: "), keyed.err());
    // --cluster without --key is refused before etcd is asked (the config need not exist)
    CliRun cluster =
        CliRun.of(
            "audit",
            "verify",
            "--cluster",
            dir.resolve("none.yaml").toString(),
            "--cluster-host",
            "h1",
            f.toString());
    assertEquals(2, cluster.exit(), cluster.out() + cluster.err());
    assertTrue(cluster.err().contains("--cluster needs --key"), cluster.err());
  }

  @Test
  void shouldCheckAHeadWithTheCaAloneWhereSignedCheckpointsCoverIt() throws Exception {
    // every rotated file ends with its rotate checkpoint, the active one with its close
    // checkpoint, which covers the recorded head
    CliRun r = verify("--ca", dir.resolve("ca/ca.crt").toString(), "--closed", "--head", head);
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().contains("MACs not checked (no audit key)"), r.out());
    // the close checkpoint cut off: the head's line is no longer covered
    List<String> lines = new ArrayList<>(Files.readAllLines(log));
    Files.write(log, lines.subList(0, lines.size() - 1));
    CliRun cut = verify("--ca", dir.resolve("ca/ca.crt").toString(), "--head", head);
    assertEquals(2, cut.exit(), cut.out() + cut.err());
    assertTrue(cut.err().contains("--head needs --key"), cut.err());
  }

  @Test
  void shouldSayEmptyForAnEmptiedFile() throws Exception {
    Files.write(log, new byte[0]);
    CliRun r = CliRun.of("audit", "verify", log.toString());
    assertEquals(1, r.exit());
    assertTrue(r.err().startsWith(log + ": empty: "), r.err());
    assertFalse(r.err().contains("null"), r.err());
  }

  @Test
  void shouldExitThreeWhenSomethingCannotBeRead() {
    CliRun r = CliRun.of("audit", "verify", dir.resolve("missing.log").toString());
    assertEquals(3, r.exit());
    assertTrue(r.err().contains("cannot read"), r.err());
    CliRun k =
        CliRun.of("audit", "verify", "--key", dir.resolve("none.key").toString(), log.toString());
    assertEquals(3, k.exit());
    assertTrue(k.err().contains("does not exist"), k.err());
  }

  @Test
  void shouldEscapeAFileNameItCannotReadInsteadOfPrintingItsControlCharacters() {
    String name = "missing\u001b[2K\rOK 14 lines\u202e.log";
    CliRun r = CliRun.of("audit", "verify", dir.resolve(name).toString());
    assertEquals(3, r.exit());
    assertTrue(r.err().contains("cannot read"), r.err());
    assertTrue(
        r.err().chars().noneMatch(c -> c == 0x1b || c == '\r' || c == 0x202e),
        "a control character printed raw: " + r.err());
  }
}
