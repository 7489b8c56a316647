package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.policy.AuditVerification.Finding;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The log as an attacker who can write its files leaves it. Layout of the log written here: genesis
 * (seq 1), events e1..e3 (2..4), checkpoint (5), e4..e7 (6..9), checkpoint (10), e8..e10 (11..13),
 * close checkpoint (14).
 */
class AuditVerifierTest {
  @TempDir Path dir;
  private AuditFixture fx;
  private Path log;
  private String head;
  private List<String> lines;

  @BeforeEach
  void writeTenEvents() throws Exception {
    fx = new AuditFixture(dir);
    log = dir.resolve("audit.log");
    head = fx.write(log, 4, 10);
    lines = AuditFixture.read(log);
    assertEquals(14, lines.size());
    assertTrue(lines.get(4).contains("\"action\":\"checkpoint\""), lines.get(4));
    assertTrue(lines.get(13).contains("\"reason\":\"close\""), lines.get(13));
  }

  private AuditVerification check(AuditVerifier v, boolean closed) throws Exception {
    AuditFixture.write(log, lines);
    return v.verify(List.of(log), null, closed);
  }

  private static void assertBroken(AuditVerification v, Finding f, long line) {
    assertFalse(v.intact(), v.summary());
    assertEquals(f, v.finding(), v.summary());
    assertEquals(line, v.brokenLine(), v.summary());
    assertTrue(v.problem().startsWith(f.label() + ": "), v.problem());
  }

  @Test
  void shouldVerifyAnIntactLogWithKeyCheckpointsAndHead() {
    AuditVerification v =
        fx.verifier().verify(List.of(log), AuditVerifier.Head.parse("13:" + head), true);
    assertTrue(v.intact(), v.summary());
    assertEquals(14, v.lines());
    assertTrue(
        v.summary().startsWith("OK 14 lines, seq 1..14 (from genesis), head 14:"), v.summary());
    assertTrue(v.notes().contains("MACs checked with audit key " + fx.key.id()), v.notes());
    assertTrue(v.notes().contains("3 checkpoint(s) signed by [srdma://host/h1]"), v.notes());
    assertTrue(v.notes().contains("valid under CA"), v.notes());
  }

  @Test
  void shouldDetectAnEditWhoseUnkeyedHashesWereRecomputed() throws Exception {
    lines.set(2, lines.get(2).replace("trainer-2", "trainer-9"));
    lines = AuditFixture.rechain(lines, 2, null);
    assertBroken(check(fx.verifier(), true), Finding.EDITED, 3);
    // without the key, the checkpoint covering the line shows it
    AuditVerification v = check(new AuditVerifier(null, fx.trust()), true);
    assertBroken(v, Finding.EDITED, 5);
    assertTrue(v.problem().contains("do not match checkpoint seq 5"), v.problem());
    // with neither, the digests are still checked against the checkpoints, but anyone can
    // recompute them and sign with a key of their own (see the foreign CA test)
    assertBroken(check(new AuditVerifier(null, null), false), Finding.EDITED, 5);
  }

  @Test
  void shouldDetectAnEditedLineWithoutRecomputing() throws Exception {
    lines.set(6, lines.get(6).replace("trainer-5", "trainer-6"));
    assertBroken(check(fx.verifier(), true), Finding.EDITED, 7);
    assertBroken(check(new AuditVerifier(null, fx.trust()), true), Finding.EDITED, 10);
  }

  @Test
  void shouldDetectAChainFabricatedWithoutTheKey() throws Exception {
    Path fake = dir.resolve("fake.log");
    try (AuditKey other = AuditKey.random();
        AuditLog f = AuditLog.open(new AuditLogOptions(fake).key(other))) {
      for (int i = 1; i <= 10; i++) {
        f.append(AuditLogTest.event(i));
      }
    }
    AuditVerification v = fx.verifier().verify(List.of(fake), null, false);
    assertBroken(v, Finding.WRONG_KEY, 1);
    // the forger copies the real key id into the genesis: the MAC still fails
    List<String> forged = AuditFixture.read(fake);
    forged.set(
        0,
        forged
            .get(0)
            .replaceFirst("\"key_id\":\"[0-9a-f]{16}\"", "\"key_id\":\"" + fx.key.id() + "\""));
    forged = AuditFixture.rechain(forged, 0, new byte[32]);
    AuditFixture.write(fake, forged);
    assertBroken(fx.verifier().verify(List.of(fake), null, false), Finding.EDITED, 1);
  }

  @Test
  void shouldReportDeletedOldestLinesAsHeadRemoved() throws Exception {
    lines.subList(0, 3).clear();
    AuditVerification v = check(fx.verifier(), true);
    assertBroken(v, Finding.HEAD_REMOVED, 1);
    assertTrue(v.problem().contains("first line is seq 4"), v.problem());
    // even keyless
    assertBroken(check(new AuditVerifier(null, null), false), Finding.HEAD_REMOVED, 1);
  }

  @Test
  void shouldReportSwappedLinesAsReorderedAtTheFirstLineOutOfPlace() throws Exception {
    Collections.swap(lines, 6, 7);
    AuditVerification v = check(fx.verifier(), true);
    assertBroken(v, Finding.REORDERED, 7);
    assertTrue(v.problem().contains("seq 8 where seq 7 was expected"), v.problem());
    assertTrue(v.problem().contains(log + ":8"), v.problem());
    assertBroken(check(new AuditVerifier(null, null), false), Finding.REORDERED, 7);
  }

  @Test
  void shouldReportALineMovedBackAsReordered() throws Exception {
    String moved = lines.remove(2);
    lines.add(8, moved);
    assertBroken(check(fx.verifier(), true), Finding.REORDERED, 3);
  }

  @Test
  void shouldReportADeletedLine() throws Exception {
    lines.remove(6);
    AuditVerification v = check(fx.verifier(), true);
    assertBroken(v, Finding.DELETED, 7);
    assertTrue(v.problem().contains("1 line(s) deleted"), v.problem());
  }

  @Test
  void shouldReportATailCutAgainstTheCloseCheckpointAndTheHead() throws Exception {
    lines.subList(11, 14).clear();
    AuditVerification v = check(fx.verifier(), true);
    assertBroken(v, Finding.TRUNCATED, 11);
    assertTrue(v.problem().contains("1 line(s) after its last checkpoint (seq 10)"), v.problem());
    // a running log looks the same: without --closed it is intact, with its unsigned tail noted
    AuditVerification running = check(fx.verifier(), false);
    assertTrue(running.intact(), running.summary());
    assertTrue(running.notes().contains("1 line(s) after the last checkpoint"), running.notes());
    // a head recorded elsewhere shows the cut either way
    AuditVerification h = fx.verifier().verify(List.of(log), AuditVerifier.Head.parse(head), false);
    assertBroken(h, Finding.TRUNCATED, 11);
    AuditVerification hs =
        fx.verifier().verify(List.of(log), AuditVerifier.Head.parse("13:" + head), false);
    assertBroken(hs, Finding.TRUNCATED, 11);
    assertTrue(hs.problem().contains("2 line(s) cut from the end"), hs.problem());
  }

  @Test
  void shouldReportAPartialLastLine() throws Exception {
    String all = String.join("\n", lines) + "\n";
    Files.writeString(log, all.substring(0, all.length() - 20));
    AuditVerification v = fx.verifier().verify(List.of(log), null, false);
    assertBroken(v, Finding.TRUNCATED, 14);
  }

  @Test
  void shouldDetectAnEditedLastLine() throws Exception {
    lines.set(13, lines.get(13).replace("\"reason\":\"close\"", "\"reason\":\"interval\""));
    assertBroken(check(fx.verifier(), false), Finding.EDITED, 14);
    AuditVerification keyless = check(new AuditVerifier(null, fx.trust()), false);
    assertBroken(keyless, Finding.BAD_CHECKPOINT, 14);
    // the last event of a log still being written
    lines = AuditFixture.read(dir.resolve("audit.log"));
    lines.remove(13);
    lines.set(12, lines.get(12).replace("g-10", "g-11"));
    assertBroken(check(fx.verifier(), false), Finding.EDITED, 13);
  }

  /**
   * What someone who can write the files but holds neither key does against a recorded head (the
   * anchor in etcd, a ticket): keeps the genesis and the first event, drops the rest, relinks
   * {@code prev} through lines of their own and ends with a line carrying the recorded seq and a
   * copy of its MAC (readable from the original file, or from etcd).
   */
  static List<String> forgeUpTo(List<String> original, long seq, String mac) {
    List<String> out = new ArrayList<>(original.subList(0, 2));
    String prev = AuditFixture.macOf(original.get(1));
    for (long s = 3; s <= seq; s++) {
      String m = s == seq ? mac : String.format("%064x", s);
      out.add(
          "{\"seq\":"
              + s
              + ",\"prev\":\""
              + prev
              + "\",\"time\":\"2026-01-01T00:00:00Z\",\"action\":\"decide\",\"outcome\":\"denied\","
              + "\"actor\":null,\"tenant\":null,\"reason\":null,\"mac\":\""
              + m
              + "\"}");
      prev = m;
    }
    return out;
  }

  @Test
  void shouldRefuseAHeadWithoutTheKeyThatACopiedMacWouldSatisfy() throws Exception {
    // a keyed log without checkpoints: genesis and five events, head seq 6
    Path f = dir.resolve("plain.log");
    String h;
    long seq;
    try (AuditLog a =
        AuditLog.open(
            new AuditLogOptions(f).key(fx.key).checkpointInterval(java.time.Duration.ZERO))) {
      for (int i = 1; i <= 5; i++) {
        a.append(AuditLogTest.event(i));
      }
      h = a.head();
      seq = a.sequence();
    }
    AuditVerifier.Head recorded = AuditVerifier.Head.parse(seq + ":" + h);
    List<String> forged = forgeUpTo(AuditFixture.read(f), seq, h);
    AuditFixture.write(f, forged);
    // the structure is fine and the recorded head is "in the chain": without the key that is no
    // evidence, so it is refused rather than called intact (by seq and MAC, or by MAC alone)
    for (AuditVerifier.Head head : List.of(recorded, AuditVerifier.Head.parse(h))) {
      AuditVerifier.UnprovenHead none =
          assertThrows(
              AuditVerifier.UnprovenHead.class,
              () -> new AuditVerifier(null, null).verify(List.of(f), head, false));
      assertEquals(PolicyException.Category.ILLEGAL_ARGUMENT, none.category());
      assertTrue(none.getMessage().contains("without the audit key"), none.getMessage());
      AuditVerifier.UnprovenHead ca =
          assertThrows(
              AuditVerifier.UnprovenHead.class,
              () -> new AuditVerifier(null, fx.trust()).verify(List.of(f), head, false));
      assertEquals(0, ca.signedThrough(), ca.getMessage());
      assertTrue(ca.getMessage().contains("none covers"), ca.getMessage());
    }
    assertThrows(AuditVerifier.UnprovenHead.class, () -> AuditVerifier.verify(List.of(f), h));
    // the key shows the forgery at its first line
    AuditVerification keyed = new AuditVerifier(fx.key, null).verify(List.of(f), recorded, false);
    assertBroken(keyed, Finding.EDITED, 3);
    // a head that is not there is still a finding without the key (evidence either way)
    AuditVerification cut =
        new AuditVerifier(null, fx.trust())
            .verify(List.of(f), AuditVerifier.Head.parse((seq + 2) + ":" + h), false);
    assertEquals(Finding.TRUNCATED, cut.finding(), cut.summary());
  }

  @Test
  void shouldCheckAHeadWithTheCaAloneOnlyWhereSignedCheckpointsCoverIt() throws Exception {
    // head 13:MAC, covered by the close checkpoint (14) and its chain back to the genesis
    AuditVerifier keyless = new AuditVerifier(null, fx.trust());
    AuditVerification v =
        keyless.verify(List.of(log), AuditVerifier.Head.parse("13:" + head), true);
    assertTrue(v.intact(), v.summary());
    assertTrue(keyless.verify(List.of(log), AuditVerifier.Head.parse(head), false).intact());
    // a head that is itself a checkpoint: its signature covers all of it but its MAC
    String cp = "10:" + AuditFixture.macOf(lines.get(9));
    assertTrue(keyless.verify(List.of(log), AuditVerifier.Head.parse(cp), false).intact());
    // checkpoints not checked against the CA cover nothing
    assertThrows(
        AuditVerifier.UnprovenHead.class,
        () ->
            new AuditVerifier(null, null)
                .verify(List.of(log), AuditVerifier.Head.parse(cp), false));

    // the close checkpoint cut off: seq 11..13 are covered by no checkpoint any more
    List<String> open = new ArrayList<>(lines.subList(0, 13));
    AuditFixture.write(log, open);
    AuditVerifier.UnprovenHead e =
        assertThrows(
            AuditVerifier.UnprovenHead.class,
            () -> keyless.verify(List.of(log), AuditVerifier.Head.parse("13:" + head), false));
    assertEquals(10, e.signedThrough());
    assertTrue(e.getMessage().contains("they cover only seq 1..10"), e.getMessage());
    // and what that allows: seq 11..13 replaced, ending with a copy of the recorded MAC
    List<String> forged = new ArrayList<>(open.subList(0, 10));
    String prev = AuditFixture.macOf(open.get(9));
    for (int s = 11; s <= 13; s++) {
      String m = s == 13 ? head : String.format("%064x", s);
      forged.add(
          open.get(s - 1)
              .replaceFirst("\"prev\":\"[0-9a-f]{64}\"", "\"prev\":\"" + prev + "\"")
              .replace("trainer-", "nobody-")
              .replaceFirst("\"mac\":\"[0-9a-f]{64}\"", "\"mac\":\"" + m + "\""));
      prev = m;
    }
    AuditFixture.write(log, forged);
    assertThrows(
        AuditVerifier.UnprovenHead.class,
        () -> keyless.verify(List.of(log), AuditVerifier.Head.parse("13:" + head), false));
    assertBroken(
        fx.verifier().verify(List.of(log), AuditVerifier.Head.parse("13:" + head), false),
        Finding.EDITED,
        11);
  }

  @Test
  void shouldNotCountCheckpointsPastRotatedFilesThatNoCheckpointCovers() throws Exception {
    // rotated files written without a signer (no checkpoints), then the log continued signed
    Path r = dir.resolve("rot.log");
    try (AuditLog a =
        AuditLog.open(
            new AuditLogOptions(r)
                .key(fx.key)
                .rotateBytes(4096)
                .checkpointInterval(java.time.Duration.ZERO))) {
      for (int i = 1; i <= 30; i++) {
        a.append(AuditLogTest.event(i));
      }
    }
    String h;
    try (AuditLog a = AuditLog.open(fx.options(r, 4).rotateBytes(1 << 20))) {
      for (int i = 31; i <= 40; i++) {
        a.append(AuditLogTest.event(i));
      }
      h = a.head();
    }
    List<Path> files = rotFiles();
    assertTrue(files.size() >= 2, files.toString());
    assertTrue(fx.verifier().verify(files, AuditVerifier.Head.parse(h), true).intact());
    // the newest file alone is signed throughout, but the rotated files before it are not: a
    // writer of the files could have rebuilt them, so the head proves nothing without the key
    AuditVerifier.UnprovenHead e =
        assertThrows(
            AuditVerifier.UnprovenHead.class,
            () ->
                new AuditVerifier(null, fx.trust())
                    .verify(files, AuditVerifier.Head.parse(h), true));
    assertEquals(0, e.signedThrough(), e.getMessage());
    // given alone (earlier files not given), the newest file's head is covered
    assertTrue(
        new AuditVerifier(null, fx.trust())
            .verify(List.of(r), AuditVerifier.Head.parse(h), true)
            .intact());
  }

  @Test
  void shouldRefuseAMalformedHead() {
    for (String bad : new String[] {"", "xyz", "12:", "0:" + "a".repeat(64), "a".repeat(63)}) {
      PolicyException e = assertThrows(PolicyException.class, () -> AuditVerifier.Head.parse(bad));
      assertEquals(PolicyException.Category.ILLEGAL_ARGUMENT, e.category());
    }
    assertEquals(7, AuditVerifier.Head.parse("7:" + "A".repeat(64)).seq());
    assertEquals("a".repeat(64), AuditVerifier.Head.parse("A".repeat(64)).mac());
    assertThrows(PolicyException.class, () -> AuditVerifier.verify(List.of(log), "nothex"));
  }

  @Test
  void shouldSayEmptyForAnEmptiedFile() throws Exception {
    Files.write(log, new byte[0]);
    AuditVerification v = fx.verifier().verify(List.of(log), null, false);
    assertBroken(v, Finding.EMPTY, 0);
    assertTrue(v.summary().startsWith(log + ": empty: "), v.summary());
    assertFalse(v.summary().contains("null"), v.summary());
  }

  @Test
  void shouldAcceptALogThatGrewBeyondTheRecordedHead() throws Exception {
    try (AuditLog a = AuditLog.open(fx.options(log, 4))) {
      for (int i = 11; i <= 15; i++) {
        a.append(AuditLogTest.event(i));
      }
    }
    AuditVerifier v = fx.verifier();
    assertTrue(v.verify(List.of(log), AuditVerifier.Head.parse(head), true).intact());
    assertTrue(v.verify(List.of(log), AuditVerifier.Head.parse("13:" + head), true).intact());
    AuditVerification wrongSeq =
        v.verify(List.of(log), AuditVerifier.Head.parse("12:" + head), true);
    assertEquals(Finding.EDITED, wrongSeq.finding(), wrongSeq.summary());
  }

  @Test
  void shouldLinkRotatedFilesThroughTheirGenesisLines() throws Exception {
    Path r = dir.resolve("rot.log");
    String h;
    try (AuditLog a = AuditLog.open(fx.options(r, 4).rotateBytes(4096))) {
      for (int i = 1; i <= 40; i++) {
        a.append(AuditLogTest.event(i));
      }
      h = a.head();
    }
    List<Path> files = rotFiles();
    assertTrue(files.size() >= 4, files.toString());
    for (int i = 1; i < files.size(); i++) {
      List<String> before = AuditFixture.read(files.get(i - 1));
      String last = before.get(before.size() - 1);
      assertTrue(last.contains("\"reason\":\"rotate\""), last);
      String genesis = AuditFixture.read(files.get(i)).get(0);
      assertTrue(genesis.contains("\"action\":\"genesis\""), genesis);
      assertTrue(genesis.contains("\"reason\":\"rotated\""), genesis);
      assertTrue(genesis.contains("\"prev\":\"" + AuditFixture.macOf(last) + "\""), genesis);
    }
    List<Path> shuffled = new ArrayList<>(files);
    Collections.shuffle(shuffled, new Random(7));
    AuditVerification v = fx.verifier().verify(shuffled, AuditVerifier.Head.parse(h), true);
    assertTrue(v.intact(), v.summary());
    // every file ends with its rotate checkpoint: the CA alone covers the head across them
    AuditVerification ca =
        new AuditVerifier(null, fx.trust()).verify(shuffled, AuditVerifier.Head.parse(h), true);
    assertTrue(ca.intact(), ca.summary());
    // the newest file alone verifies, saying that earlier files were not given
    AuditVerification tail = fx.verifier().verify(List.of(r), null, true);
    assertTrue(tail.summary().contains("(earlier files not given)"), tail.summary());
    // a rotated file removed from the middle
    List<Path> gap = new ArrayList<>(files);
    Path removed = gap.remove(2);
    AuditVerification g = fx.verifier().verify(gap, null, true);
    assertBroken(g, Finding.DELETED, 1);
    assertEquals(files.get(3), g.brokenFile(), "removed " + removed);
  }

  @Test
  void shouldReportALineOverTheMaximumAsNotARecordWithoutReadingItWhole() throws Exception {
    // a hostile file: 2 MiB without a newline (a gigabyte reads the same, in bounded memory)
    Path junk = dir.resolve("junk.log");
    Files.write(junk, "A".repeat(2 << 20).getBytes(StandardCharsets.US_ASCII));
    AuditVerification v = fx.verifier().verify(List.of(junk), null, false);
    assertBroken(v, Finding.NOT_A_RECORD, 1);
    assertEquals(junk, v.brokenFile());
    assertTrue(v.problem().contains("longer than " + AuditLine.MAX_BYTES + " bytes"), v.problem());
    // a record-shaped line of 2 MiB inside a log (the log itself writes lines under 64 KiB)
    String last = lines.get(12);
    lines.set(12, last.replace("\"region\":\"", "\"region\":\"" + "x".repeat(2 << 20)));
    assertTrue(lines.get(12).length() > AuditLine.MAX_BYTES);
    AuditVerification keyless = check(new AuditVerifier(null, null), false);
    assertBroken(keyless, Finding.NOT_A_RECORD, 13);
    assertTrue(keyless.summary().startsWith(log + ":13: not a record: "), keyless.summary());
    assertTrue(keyless.problem().contains(String.valueOf(AuditLine.MAX_BYTES)), keyless.problem());
    // the longest line allowed is still read
    assertEquals(1 << 20, AuditLine.MAX_BYTES);
  }

  @Test
  void shouldVerifyALongChainAcrossManyRotatedFilesAndFindWhereALineWent() throws Exception {
    Path r = dir.resolve("rot.log");
    String h;
    long seq;
    try (AuditLog a = AuditLog.open(fx.options(r, 50).rotateBytes(4096))) {
      for (int i = 1; i <= 600; i++) {
        a.append(AuditLogTest.event(i));
      }
      h = a.head();
      seq = a.sequence();
    }
    List<Path> files = rotFiles();
    assertTrue(files.size() >= 30, files.size() + " files");
    List<Path> shuffled = new ArrayList<>(files);
    Collections.shuffle(shuffled, new Random(11));
    AuditVerifier v = fx.verifier();
    AuditVerification byMac = v.verify(shuffled, AuditVerifier.Head.parse(h), true);
    assertTrue(byMac.intact(), byMac.summary());
    assertTrue(byMac.lines() > 600 + files.size(), byMac.summary());
    AuditVerification bySeq = v.verify(shuffled, AuditVerifier.Head.parse(seq + ":" + h), true);
    assertTrue(bySeq.intact(), bySeq.summary());
    assertEquals(byMac, bySeq);
    // a head from the middle of the chain, of the third file
    String mid = AuditFixture.read(files.get(2)).get(3);
    long midSeq = Long.parseLong(mid.substring(7, mid.indexOf(',')));
    String midHead = midSeq + ":" + AuditFixture.macOf(mid);
    assertTrue(v.verify(shuffled, AuditVerifier.Head.parse(midHead), true).intact());
    AuditVerification wrong =
        v.verify(
            shuffled, AuditVerifier.Head.parse((midSeq + 1) + ":" + AuditFixture.macOf(mid)), true);
    assertEquals(Finding.EDITED, wrong.finding(), wrong.summary());
    AuditVerification notIn = v.verify(shuffled, AuditVerifier.Head.parse("f".repeat(64)), true);
    assertEquals(Finding.TRUNCATED, notIn.finding(), notIn.summary());

    // a middle file removed
    List<Path> gap = new ArrayList<>(files);
    gap.remove(10);
    AuditVerification g = v.verify(gap, null, true);
    assertBroken(g, Finding.DELETED, 1);
    assertEquals(files.get(11), g.brokenFile());
    assertTrue(
        g.problem().contains("(the end of the previous file, or a whole file)"), g.problem());

    // a line moved from the fourth file into the sixth: named where it went, file and line
    List<String> from = AuditFixture.read(files.get(3));
    List<String> to = AuditFixture.read(files.get(5));
    String moved = from.remove(2);
    to.add(4, moved);
    AuditFixture.write(files.get(3), from);
    AuditFixture.write(files.get(5), to);
    long movedSeq = Long.parseLong(moved.substring(7, moved.indexOf(',')));
    AuditVerification m = v.verify(shuffled, null, true);
    assertBroken(m, Finding.REORDERED, 3);
    assertEquals(files.get(3), m.brokenFile());
    assertTrue(
        m.problem()
            .endsWith(
                "where seq "
                    + movedSeq
                    + " was expected; seq "
                    + movedSeq
                    + " is at "
                    + files.get(5)
                    + ":5"),
        m.problem());
    // the same line deleted instead: no other file has it
    to.remove(4);
    AuditFixture.write(files.get(5), to);
    AuditVerification d = v.verify(shuffled, null, true);
    assertBroken(d, Finding.DELETED, 3);
    assertTrue(d.problem().contains("1 line(s) deleted before this one"), d.problem());
  }

  @Test
  void shouldContinueACrashedLogSoThatItsNextCheckpointCoversTheUnsignedLines() throws Exception {
    // the close checkpoint lost: e8..e10 (seq 11..13) wait after the checkpoint at seq 10
    lines.remove(13);
    AuditFixture.write(log, lines);
    try (AuditLog a = AuditLog.open(fx.options(log, 4))) {
      assertEquals(13, a.sequence());
      a.append(AuditLogTest.event(11)); // the fourth pending line: checkpoint seq 15 from seq 10
    }
    List<String> after = AuditFixture.read(log);
    assertEquals(16, after.size());
    assertTrue(after.get(14).contains("\"from\":10,"), after.get(14));
    AuditVerification v = fx.verifier().verify(List.of(log), null, true);
    assertTrue(v.intact(), v.summary());
    assertTrue(v.notes().contains("4 checkpoint(s)"), v.notes());
  }

  @Test
  void shouldVerifyALogWhileItIsWrittenWithoutFailing() throws Exception {
    Path live = dir.resolve("live.log");
    try (AuditLog a = AuditLog.open(fx.options(live, 20))) {
      java.util.concurrent.atomic.AtomicReference<Throwable> failed =
          new java.util.concurrent.atomic.AtomicReference<>();
      Thread writer =
          new Thread(
              () -> {
                try {
                  for (int i = 1; i <= 1000; i++) {
                    a.append(AuditLogTest.event(i));
                  }
                } catch (Throwable t) {
                  failed.set(t);
                }
              });
      writer.start();
      try {
        AuditVerifier v = fx.verifier();
        for (int i = 0; i < 20 && writer.isAlive(); i++) {
          AuditVerification r = v.verify(List.of(live), null, false);
          assertTrue(
              r.intact() || r.finding() == Finding.TRUNCATED && r.brokenLine() == r.lines() + 1,
              r.summary());
        }
      } finally {
        writer.join(30_000);
      }
      assertFalse(writer.isAlive());
      assertEquals(null, failed.get());
    }
    assertTrue(fx.verifier().verify(List.of(live), null, true).intact());
  }

  @Test
  void shouldKeepNoPerLineStateInTheWalk() {
    // what the walk keeps must not grow with the lines: no collections, no arrays
    for (java.lang.reflect.Field f : AuditWalk.class.getDeclaredFields()) {
      Class<?> t = f.getType();
      assertFalse(
          t.isArray()
              || java.util.Collection.class.isAssignableFrom(t)
              || java.util.Map.class.isAssignableFrom(t),
          f.toString());
    }
  }

  private List<Path> rotFiles() throws Exception {
    List<Path> files = new ArrayList<>();
    try (var s = Files.list(dir)) {
      s.filter(p -> p.getFileName().toString().startsWith("rot.log.")).sorted().forEach(files::add);
    }
    files.add(dir.resolve("rot.log"));
    return files;
  }

  @Test
  void shouldDetectAForgedCheckpointSignature() throws Exception {
    String cp = lines.get(4);
    int at = cp.indexOf("\"sig\":\"") + 10;
    char c = cp.charAt(at);
    lines.set(4, cp.substring(0, at) + (c == 'A' ? 'B' : 'A') + cp.substring(at + 1));
    // an insider holding the audit key but not the host key recomputes the MACs
    lines = AuditFixture.rechain(lines, 4, fx.keyBytes);
    AuditVerification v = check(fx.verifier(), true);
    assertBroken(v, Finding.BAD_CHECKPOINT, 5);
    assertTrue(v.problem().contains("signature does not verify"), v.problem());
  }

  @Test
  void shouldDetectACheckpointSignedUnderAForeignCaOrByATenant() throws Exception {
    // the forger keeps the log up to the second checkpoint (seq 10) and signs that one again
    lines.subList(10, lines.size()).clear();
    lines.set(9, AuditFixture.resign(lines.get(9), fx.foreignHost));
    lines = AuditFixture.rechain(lines, 9, fx.keyBytes);
    AuditVerification v = check(fx.verifier(), false);
    assertBroken(v, Finding.BAD_CHECKPOINT, 10);
    assertTrue(v.problem().contains("not trusted"), v.problem());
    // without a CA, a self-consistent foreign signature passes: this is what --ca is for
    AuditVerification noCa = check(new AuditVerifier(fx.key, null), false);
    assertTrue(noCa.intact(), noCa.summary());
    assertTrue(noCa.notes().contains("signers not checked against a CA"), noCa.notes());

    lines.set(9, AuditFixture.resign(lines.get(9), fx.tenant));
    lines = AuditFixture.rechain(lines, 9, fx.keyBytes);
    AuditVerification t = check(fx.verifier(), false);
    assertBroken(t, Finding.BAD_CHECKPOINT, 10);
    assertTrue(t.problem().contains("is not a host's"), t.problem());
  }

  @Test
  void shouldRefuseCheckpointsOfARevokedHostCertificate() throws Exception {
    fx.ca.revoke(fx.host.certificate());
    AuditVerification v = check(fx.verifier(), true);
    assertBroken(v, Finding.BAD_CHECKPOINT, 5);
    assertTrue(v.problem().contains("revoked"), v.problem());
  }

  @Test
  void shouldReportACheckpointDatedBeyondAnyCertificateCheckAsBadCheckpoint() throws Exception {
    // an insider with the audit key but not the host key: a checkpoint of their own, dated in the
    // year 999,999,999 (a valid Instant, but past what a PKIX check can be asked about)
    lines.subList(10, lines.size()).clear();
    String cp =
        lines.get(9).replaceFirst("\"time\":\"[^\"]*\"", "\"time\":\"+999999999-01-01T00:00:00Z\"");
    lines.set(9, AuditFixture.resign(cp, fx.foreignHost));
    lines = AuditFixture.rechain(lines, 9, fx.keyBytes);
    AuditVerification v = check(fx.verifier(), false);
    assertBroken(v, Finding.BAD_CHECKPOINT, 10);
    assertTrue(v.problem().contains("+999999999-01-01T00:00:00Z"), v.problem());
  }

  @Test
  void shouldReportACheckpointCertifiedForAnUnsupportedKeyTypeAsBadCheckpoint() throws Exception {
    java.security.KeyPairGenerator g = java.security.KeyPairGenerator.getInstance("DSA");
    g.initialize(2048);
    java.security.KeyPair kp = g.generateKeyPair();
    lines.subList(10, lines.size()).clear();
    lines.set(
        9,
        AuditFixture.resign(
            lines.get(9),
            AuditFixture.selfSigned(kp, "dsa", "SHA256withDSA"),
            kp.getPrivate(),
            "SHA256withDSA"));
    lines = AuditFixture.rechain(lines, 9, fx.keyBytes);
    for (AuditVerifier verifier : List.of(fx.verifier(), new AuditVerifier(fx.key, null))) {
      AuditVerification v = check(verifier, false);
      assertBroken(v, Finding.BAD_CHECKPOINT, 10);
      assertTrue(v.problem().contains("DSA"), v.problem());
    }
  }

  @Test
  void shouldEscapeTheSignerNameAForgerChoseInWhatVerifyPrints() throws Exception {
    // the name of a forger's own certificate reaches the report: it must not move the cursor,
    // clear the line, start a new one or turn the text around on the auditor's terminal
    String name = "x\u001b[2K\rOK 14 lines\nforged\u202e\u2028";
    java.security.KeyPairGenerator g = java.security.KeyPairGenerator.getInstance("EC");
    g.initialize(256);
    java.security.KeyPair kp = g.generateKeyPair();
    lines.subList(10, lines.size()).clear();
    lines.set(
        9,
        AuditFixture.resign(
            lines.get(9),
            AuditFixture.selfSigned(kp, name, "SHA256withECDSA"),
            kp.getPrivate(),
            "SHA256withECDSA"));
    lines = AuditFixture.rechain(lines, 9, fx.keyBytes);
    AuditVerification noCa = check(new AuditVerifier(fx.key, null), false);
    assertTrue(noCa.intact(), noCa.summary());
    AuditVerification withCa = check(fx.verifier(), false);
    assertBroken(withCa, Finding.BAD_CHECKPOINT, 10);
    for (String printed : List.of(noCa.summary(), withCa.summary())) {
      assertTrue(printed.contains("\\u001B[2K\\u000DOK 14 lines\\u000Aforged"), printed);
      assertTrue(
          printed.chars().allMatch(c -> c >= 0x20 && c < 0x7f), "not printable ASCII: " + printed);
    }
  }
}
