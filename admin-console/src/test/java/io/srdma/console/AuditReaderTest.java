package io.srdma.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Pages and exports of a large log in several rotated files, read in blocks of several sizes (one
 * smaller than a line, so lines span blocks): the newest entries, filtered, across file boundaries;
 * a line being written is left out, lines that are not JSON are kept.
 */
class AuditReaderTest {
  /** Lines per file: three rotated files, then the active one. */
  private static final int[] FILE_LINES = {7000, 6000, 5000, 4321};

  private static final int LINES = IntStream.of(FILE_LINES).sum();

  /** Of these sequence numbers, the line is not JSON. */
  private static final int NOT_JSON = 9001;

  private static final Instant T0 = Instant.parse("2026-11-01T00:00:00Z");

  private static final AuditReader.Filter ALL =
      new AuditReader.Filter(null, null, null, null, null, null);

  @TempDir Path dir;
  Path active;

  @BeforeEach
  void writeLog() throws IOException {
    active = dir.resolve("audit.log");
    int seq = 1;
    for (int f = 0; f < FILE_LINES.length; f++) {
      boolean last = f == FILE_LINES.length - 1;
      Path file = last ? active : dir.resolve("audit.log." + String.format("%012d", (long) seq));
      try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
        for (int i = 0; i < FILE_LINES[f]; i++, seq++) {
          w.write(line(seq));
          w.write('\n');
        }
        if (last) {
          w.write("{\"seq\":" + seq + ",\"action\":\"gra"); // being written: no newline yet
        }
      }
    }
    // not part of the log: another file's rotated name
    Files.writeString(dir.resolve("audit.log.old"), line(0) + "\n");
  }

  /** Line {@code seq}: every third a revoke, tenants in turn, one minute apart. */
  private static String line(int seq) {
    if (seq == NOT_JSON) {
      return "garbage " + seq;
    }
    return new JsonObject()
        .put("seq", seq)
        .put("time", T0.plusSeconds(60L * seq).toString())
        .put("action", seq % 3 == 0 ? "revoke" : "grant")
        .put("outcome", "success")
        .put("tenant", TENANTS.get(seq % TENANTS.size()))
        .put("actor", seq % 1000 == 0 ? "Alice-" + seq : "system")
        .encode();
  }

  private static final List<String> TENANTS = List.of("acme", "globex", "initech");

  /** The sequence numbers matching, newest first, from the offset-th on, at most limit. */
  private static List<Integer> expected(IntPredicate keep, int offset, int limit) {
    return IntStream.iterate(LINES, s -> s >= 1, s -> s - 1)
        .filter(keep)
        .skip(offset)
        .limit(limit)
        .boxed()
        .toList();
  }

  private static List<Integer> seqs(AuditReader.Page p) {
    List<Integer> out = new ArrayList<>();
    for (AuditReader.Entry e : p.items()) {
      Integer s = e.json().getInteger("seq");
      out.add(s == null ? NOT_JSON : s);
    }
    return out;
  }

  @ParameterizedTest
  @ValueSource(ints = {61, 100, 4096, AuditReader.BLOCK_BYTES})
  void shouldPageTheNewestEntriesAcrossRotatedFiles(int block) {
    AuditReader r = new AuditReader(active, block);
    assertEquals(4, r.files().size(), "three rotated files and the active one");

    AuditReader.Page newest = r.newest(ALL, 0, 50);
    assertEquals(LINES, newest.total(), "every complete line, not the one being written");
    assertEquals(expected(s -> true, 0, 50), seqs(newest));

    // a page across the active file's start and the last rotated file's end
    int activeLines = FILE_LINES[FILE_LINES.length - 1];
    AuditReader.Page across = r.newest(ALL, activeLines - 3, 10);
    assertEquals(expected(s -> true, activeLines - 3, 10), seqs(across));

    // the oldest page, and one past the end
    assertEquals(List.of(3, 2, 1), seqs(r.newest(ALL, LINES - 3, 500)));
    AuditReader.Page past = r.newest(ALL, LINES, 10);
    assertEquals(LINES, past.total());
    assertTrue(past.items().isEmpty());
  }

  @ParameterizedTest
  @ValueSource(ints = {100, AuditReader.BLOCK_BYTES})
  void shouldFilterWhileStreaming(int block) {
    AuditReader r = new AuditReader(active, block);
    AuditReader.Filter globex = new AuditReader.Filter(null, null, "globex", null, null, null);
    IntPredicate isGlobex = s -> s != NOT_JSON && s % 3 == 1;
    AuditReader.Page g = r.newest(globex, 17, 300);
    assertEquals(IntStream.rangeClosed(1, LINES).filter(isGlobex).count(), g.total());
    assertEquals(expected(isGlobex, 17, 300), seqs(g));
    // every revoke is acme's
    assertEquals(
        0,
        r.newest(new AuditReader.Filter(null, null, "globex", "revoke", null, null), 0, 9).total());

    AuditReader.Filter revokes = new AuditReader.Filter(null, null, null, "revoke", null, null);
    IntPredicate isRevoke = s -> s != NOT_JSON && s % 3 == 0;
    AuditReader.Page p = r.newest(revokes, 1234, 500);
    assertEquals(IntStream.rangeClosed(1, LINES).filter(isRevoke).count(), p.total());
    assertEquals(expected(isRevoke, 1234, 500), seqs(p));

    // from inclusive, to exclusive
    AuditReader.Filter window =
        new AuditReader.Filter(
            T0.plusSeconds(60L * 6990), T0.plusSeconds(60L * 7010), null, null, null, null);
    IntPredicate inWindow = s -> s >= 6990 && s < 7010;
    AuditReader.Page w = r.newest(window, 0, 500);
    assertEquals(20, w.total());
    assertEquals(expected(inWindow, 0, 500), seqs(w));

    AuditReader.Filter alice = new AuditReader.Filter(null, null, null, null, null, "alice");
    assertEquals(expected(s -> s % 1000 == 0, 0, 50), seqs(r.newest(alice, 0, 50)));
  }

  @Test
  void shouldKeepLinesThatAreNotJsonWithADetail() {
    AuditReader r = new AuditReader(active, 100);
    int offset = LINES - NOT_JSON;
    AuditReader.Entry e = r.newest(ALL, offset, 1).items().get(0);
    assertEquals("garbage " + NOT_JSON, e.raw());
    assertEquals("not an audit record: garbage " + NOT_JSON, e.json().getString("detail"));
  }

  @Test
  void shouldNoteALineOverTheLimitInsteadOfHoldingIt() throws IOException {
    Path file = dir.resolve("long").resolve("audit.log");
    Files.createDirectories(file.getParent());
    String huge = "x".repeat(AuditReader.MAX_LINE_BYTES + 1);
    Files.writeString(file, line(1) + "\n" + huge + "\n" + line(3) + "\n");
    AuditReader r = new AuditReader(file, 4096);
    AuditReader.Page p = r.newest(ALL, 0, 10);
    assertEquals(3, p.total());
    assertTrue(p.items().get(1).raw().contains("over the reader's limit"), p.items().get(1).raw());
    assertEquals(3, p.items().get(0).json().getInteger("seq"));
    assertEquals(1, p.items().get(2).json().getInteger("seq"));
  }

  @ParameterizedTest
  @ValueSource(ints = {61, AuditReader.BLOCK_BYTES})
  void shouldExportTheMatchingLinesOldestFirstInBatches(int block) {
    AuditReader r = new AuditReader(active, block);
    AuditReader.Filter revokes = new AuditReader.Filter(null, null, null, "revoke", null, null);
    StringBuilder want = new StringBuilder();
    for (int s = 1; s <= LINES; s++) {
      if (s != NOT_JSON && s % 3 == 0) {
        want.append(line(s)).append('\n');
      }
    }
    StringBuilder got = new StringBuilder();
    int batches = 0;
    try (AuditReader.Cursor c = r.cursor(revokes)) {
      for (String batch = c.next(10_000); batch != null; batch = c.next(10_000)) {
        assertTrue(batch.length() < 10_000 + 200, "a batch is about the size asked for");
        got.append(batch);
        batches++;
      }
    }
    assertEquals(want.toString(), got.toString());
    assertTrue(batches > 10, "read a batch at a time: " + batches);

    StringBuilder everything = new StringBuilder();
    try (AuditReader.Cursor c = r.cursor(ALL)) {
      for (String batch = c.next(1 << 20); batch != null; batch = c.next(1 << 20)) {
        everything.append(batch);
      }
    }
    assertEquals(LINES, everything.toString().lines().count());
    assertTrue(everything.toString().startsWith(line(1) + "\n"));
    assertTrue(everything.toString().endsWith(line(LINES) + "\n"));
  }
}
