package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The persisted high-water mark behind the CRL-number and policy-serial files: a missing file is no
 * mark, a kept one survives a "restart" (a new read), and a corrupt or loosely permitted file is
 * refused instead of forgotten.
 */
class HighWaterMarkTest {
  @TempDir Path dir;

  private static byte[] digest(String s) {
    return HighWaterMark.sha256(s.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void shouldStartWithoutAMarkWhenTheFileIsMissingAndKeepItAcrossARestart() throws Exception {
    Path f = dir.resolve("srdma-policy-serial");
    HighWaterMark m = HighWaterMark.read(f, "policy serial");
    assertNull(m.number());
    assertFalse(m.isRollback(BigInteger.ONE, digest("a")));
    assertFalse(Files.exists(f), "reading creates nothing");

    m.advance(BigInteger.valueOf(7), digest("seven"));
    assertEquals(
        "rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)), "600");
    assertTrue(Files.readString(f, StandardCharsets.US_ASCII).startsWith("7 "));
    m.advance(BigInteger.valueOf(5), digest("five")); // not above: nothing changes
    assertEquals(BigInteger.valueOf(7), m.number());

    HighWaterMark restarted = HighWaterMark.read(f, "policy serial");
    assertEquals(BigInteger.valueOf(7), restarted.number());
    assertArrayEquals(digest("seven"), restarted.digest());
    assertTrue(restarted.isRollback(BigInteger.valueOf(6), digest("six")), "below");
    assertTrue(restarted.isRollback(BigInteger.valueOf(7), digest("other")), "same, other text");
    assertFalse(restarted.isRollback(BigInteger.valueOf(7), digest("seven")), "the same one");
    assertFalse(restarted.isRollback(BigInteger.valueOf(8), digest("eight")), "newer");
    // no temporary file is left beside it
    try (var s = Files.list(dir)) {
      assertEquals(List.of(f), s.toList());
    }
  }

  @Test
  void shouldRefuseACorruptFileInsteadOfForgettingTheMark() throws Exception {
    Path f = dir.resolve("mark");
    for (String bad :
        List.of(
            "",
            "12",
            "not-a-number " + "0".repeat(64),
            "-3 " + "0".repeat(64),
            "12 " + "zz".repeat(32),
            "12 " + "0".repeat(63),
            "12 " + "0".repeat(64) + " extra")) {
      Files.writeString(f, bad + "\n", StandardCharsets.US_ASCII);
      Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
      KeyExchangeException e =
          assertThrows(KeyExchangeException.class, () -> HighWaterMark.read(f, "policy serial"));
      assertEquals(KeyExchangeException.Reason.IO_ERROR, e.reason(), bad);
      assertTrue(e.getMessage().contains("malformed"), e.getMessage());
      assertTrue(e.getMessage().contains("policy serial file " + f), e.getMessage());
    }
  }

  @Test
  void shouldRefuseAFileOthersCouldWriteAndOneThatIsNotAFile() throws Exception {
    Path f = dir.resolve("mark");
    HighWaterMark.read(f, "CRL number").advance(BigInteger.TEN, digest("ten"));
    for (String loose : List.of("rw-rw----", "rw-r--rw-")) {
      Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(loose));
      KeyExchangeException e =
          assertThrows(KeyExchangeException.class, () -> HighWaterMark.read(f, "CRL number"));
      assertTrue(e.getMessage().contains("writable by group or others"), e.getMessage());
    }
    // read-only for others is fine
    Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
    assertEquals(BigInteger.TEN, HighWaterMark.read(f, "CRL number").number());

    Path d = dir.resolve("a-directory");
    Files.createDirectory(d);
    Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwx------"));
    KeyExchangeException e =
        assertThrows(KeyExchangeException.class, () -> HighWaterMark.read(d, "CRL number"));
    assertEquals(KeyExchangeException.Reason.IO_ERROR, e.reason());
  }

  @Test
  void shouldKeepTheMarkWhenTheFileCannotBeWritten() throws Exception {
    Path f = dir.resolve("missing-dir").resolve("mark");
    HighWaterMark m = HighWaterMark.read(f, "policy serial");
    assertThrows(KeyExchangeException.class, () -> m.advance(BigInteger.TWO, digest("two")));
    assertNull(
        m.number(), "not raised in memory either: the caller refuses what it could not keep");
  }
}
