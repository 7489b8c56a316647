package io.srdma.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A page and an export of a log larger than the heap of the JVM that reads it: a reader that loads
 * whole files (the defect) runs out of memory here, a streaming one does not.
 */
class AuditReaderHeapTest {
  /** The reading JVM's heap; the log is 48 MiB, each of its files 16 MiB. */
  private static final String HEAP = "-Xmx16m";

  private static final int LINES_PER_FILE = 16 * 1024;
  private static final int FILES = 3;
  private static final String PAD = "p".repeat(960); // about 1 KiB a line

  @TempDir Path dir;

  @Test
  void shouldPageAndExportALogLargerThanTheHeap() throws Exception {
    Path active = dir.resolve("audit.log");
    int seq = 1;
    for (int f = 0; f < FILES; f++) {
      Path file =
          f == FILES - 1 ? active : dir.resolve("audit.log." + String.format("%012d", (long) seq));
      try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
        for (int i = 0; i < LINES_PER_FILE; i++, seq++) {
          w.write(
              new JsonObject()
                  .put("seq", seq)
                  .put("action", seq % 2 == 0 ? "revoke" : "grant")
                  .put("detail", PAD)
                  .encode());
          w.write('\n');
        }
      }
    }
    int lines = seq - 1;
    Path out = dir.resolve("probe.out");
    Path result = dir.resolve("probe.result");
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                HEAP,
                "-cp",
                System.getProperty("java.class.path"),
                Probe.class.getName(),
                active.toString(),
                result.toString())
            .redirectErrorStream(true)
            .redirectOutput(out.toFile())
            .start();
    try {
      assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the probe did not finish in 120 s");
    } finally {
      p.destroyForcibly();
    }
    assertEquals(0, p.exitValue(), Files.readString(out));
    assertEquals(
        List.of(
            "page " + lines + " " + lines + ".." + (lines - 49),
            "revokes " + lines / 2 + " " + (lines - 20) + ".." + (lines - 2 * 69),
            "export " + lines / 2),
        Files.readAllLines(result));
  }

  /** Reads the log given in a small heap; writes what it read to the file given. */
  static final class Probe {
    private Probe() {}

    public static void main(String[] args) throws IOException {
      AuditReader r = new AuditReader(Path.of(args[0]));
      AuditReader.Page all =
          r.newest(new AuditReader.Filter(null, null, null, null, null, null), 0, 50);
      List<String> said = new ArrayList<>();
      said.add("page " + all.total() + " " + range(all));
      AuditReader.Filter revokes = new AuditReader.Filter(null, null, null, "revoke", null, null);
      AuditReader.Page some = r.newest(revokes, 10, 60);
      said.add("revokes " + some.total() + " " + range(some));
      long exported = 0;
      try (AuditReader.Cursor c = r.cursor(revokes)) {
        for (String batch = c.next(AuditExport.CHUNK_CHARS);
            batch != null;
            batch = c.next(AuditExport.CHUNK_CHARS)) {
          exported += batch.lines().count();
        }
      }
      said.add("export " + exported);
      Files.write(Path.of(args[1]), said);
    }

    private static String range(AuditReader.Page p) {
      List<AuditReader.Entry> items = p.items();
      return items.get(0).json().getLong("seq")
          + ".."
          + items.get(items.size() - 1).json().getLong("seq");
    }
  }
}
