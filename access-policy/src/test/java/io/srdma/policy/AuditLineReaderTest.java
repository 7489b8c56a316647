package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.policy.AuditLineReader.Kind;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuditLineReaderTest {
  @TempDir Path dir;

  private Path file(byte[]... parts) throws Exception {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      b.write(p);
    }
    Path f = dir.resolve("f");
    Files.write(f, b.toByteArray());
    return f;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }

  private static byte[] repeat(char c, int n) {
    return bytes(String.valueOf(c).repeat(n));
  }

  @Test
  void shouldSplitOnNewlinesAcrossChunksKeepingOffsetsAndLineNumbers() throws Exception {
    // a line spanning two 64 KiB chunks, an empty line, an ISO-8859-1 byte, a partial last line
    Path f = file(bytes("a\n"), repeat('b', 100_000), bytes("\n\n\u00e9\ntail"));
    try (AuditLineReader r = AuditLineReader.open(f, 200_000)) {
      assertEquals(Kind.LINE, r.next());
      assertEquals("a", r.text());
      assertEquals(0, r.offset());
      assertEquals(Kind.LINE, r.next());
      assertEquals(100_000, r.length());
      assertEquals(2, r.offset());
      assertEquals(2, r.lineNo());
      assertEquals(Kind.LINE, r.next());
      assertEquals("", r.text());
      assertEquals(Kind.LINE, r.next());
      assertEquals("\u00e9", r.text());
      assertEquals(4, r.lineNo());
      assertEquals(Kind.PARTIAL, r.next());
      assertEquals("tail", r.text());
      assertEquals(5, r.lineNo());
      assertEquals(Kind.END, r.next());
      assertEquals(Files.size(f), r.position());
      assertEquals(Kind.END, r.next());
    }
  }

  @Test
  void shouldRefuseALineOverTheMaximumWithoutHoldingItAndGoOnAfterIt() throws Exception {
    Path f = file(repeat('x', 10), bytes("\n"), repeat('y', 11), bytes("\nnext\n"));
    try (AuditLineReader r = AuditLineReader.open(f, 10)) {
      assertEquals(Kind.LINE, r.next());
      assertEquals(10, r.length());
      assertEquals(Kind.TOO_LONG, r.next());
      assertEquals(2, r.lineNo());
      assertEquals(Kind.LINE, r.next());
      assertEquals("next", r.text());
      assertEquals(3, r.lineNo());
      assertEquals(23, r.offset());
      assertTrue(r.startsWith(bytes("ne")));
      assertEquals(Kind.END, r.next());
    }
    // no newline at all: one line too long, then the end
    Path g = file(repeat('z', 300_000));
    try (AuditLineReader r = AuditLineReader.open(g, 1000)) {
      assertEquals(Kind.TOO_LONG, r.next());
      assertEquals(Kind.END, r.next());
      assertTrue(r.bytes().length <= 8192, "kept " + r.bytes().length);
    }
  }

  @Test
  void shouldSayEndForAnEmptyFileAndCannotReadForAMissingOne() throws Exception {
    try (AuditLineReader r = AuditLineReader.open(file(), 10)) {
      assertEquals(Kind.END, r.next());
      assertEquals(0, r.position());
    }
    Path missing = dir.resolve("missing");
    AuditException e =
        assertThrows(AuditException.class, () -> AuditLineReader.open(missing, 10).close());
    assertTrue(e.getMessage().startsWith("cannot read " + missing + ": "), e.getMessage());
  }
}
