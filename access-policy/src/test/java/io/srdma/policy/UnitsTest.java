package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class UnitsTest {

  @ParameterizedTest(name = "{0} = {1}")
  @CsvSource({
    "0, 0",
    "4096, 4096",
    "3B, 3",
    "3 B, 3",
    "' 64KiB ', 65536",
    "1kB, 1000",
    "2MB, 2000000",
    "10GB, 10000000000",
    "1TB, 1000000000000",
    "1PB, 1000000000000000",
    "9EB, 9000000000000000000",
    "1KiB, 1024",
    "64MiB, 67108864",
    "1GiB, 1073741824",
    "1TiB, 1099511627776",
    "1PiB, 1125899906842624",
    "7EiB, 8070450532247928832",
    "9223372036854775807, 9223372036854775807",
    "0064KiB, 65536"
  })
  void shouldReadPowersOf1000AndOf1024(String text, long bytes) {
    assertEquals(bytes, Units.size(text));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = ';',
      value = {
        "4k; '4k' has an ambiguous or misspelt unit 'k': write 4kB (powers of 1000) or 4KiB",
        "4K; write 4kB (powers of 1000) or 4KiB (powers of 1024)",
        "4KB; write 4kB (powers of 1000) or 4KiB (powers of 1024)",
        "1m; write 1MB (powers of 1000) or 1MiB (powers of 1024)",
        "1mib; write 1MB (powers of 1000) or 1MiB (powers of 1024)",
        "2g; write 2GB (powers of 1000) or 2GiB (powers of 1024)",
        "64 bytes; unknown unit 'bytes'",
        "64 Kibibytes; unknown unit 'Kibibytes'",
        "20EiB; '20EiB' is too large: sizes go up to 9223372036854775807 bytes",
        "8EiB; '8EiB' is too large",
        "10EB; '10EB' is too large",
        "99999999999999999999; is too large",
        "-1; '-1' is not a size",
        "+1; '+1' is not a size",
        "1.5GiB; '1.5GiB' is not a size",
        "1,000; '1,000' is not a size",
        "1_000; '1_000' is not a size",
        "64  MiB; '64  MiB' is not a size",
        "MiB; 'MiB' is not a size",
        "0x10; '0x10' is not a size"
      })
  void shouldRefuseWithOneLineNamingTheProblem(String text, String expected) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Units.size(text));
    assertTrue(e.getMessage().contains(expected), e.getMessage());
    assertTrue(!e.getMessage().contains("\n"), e.getMessage());
  }

  @Test
  void shouldNameTheAcceptedUnitsForAnUnknownOne() {
    String m = assertThrows(IllegalArgumentException.class, () -> Units.size("3 q")).getMessage();
    assertTrue(m.contains(Units.SIZE_UNITS), m);
    assertTrue(
        assertThrows(IllegalArgumentException.class, () -> Units.size(""))
            .getMessage()
            .contains("empty size"));
  }

  @Test
  void shouldKeepHostileTextOutOfTheMessage() {
    String hostile = "1\u001b[31mred" + "x".repeat(500);
    String m = assertThrows(IllegalArgumentException.class, () -> Units.size(hostile)).getMessage();
    assertTrue(m.length() < 300, m);
    assertTrue(!m.contains("\u001b"), m);
  }

  @Test
  void shouldKeepParseSizePositiveAndSayWhy() {
    assertTrue(Units.parseSize("0").isEmpty());
    assertTrue(Units.parseSize("4k").isEmpty());
    assertEquals(1000, Units.parseSize("1kB").getAsLong());
    assertEquals("a size must be more than 0 bytes", Units.sizeProblem("0"));
    assertNull(Units.sizeProblem("1KiB"));
    assertTrue(Units.sizeProblem("1KB").contains("ambiguous"));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
    "0, 0 B",
    "5, 5 B",
    "64, 64 B",
    "1000, 1 kB",
    "1024, 1 KiB",
    "65536, 64 KiB",
    "10000, 10 kB",
    "1048576, 1 MiB",
    "1000000, 1 MB",
    "1536, 1536 B",
    "4096000, 4000 KiB",
    "10000000000, 10 GB",
    "9223372036854775807, 9223372036854775807 B"
  })
  void shouldFormatInTheSameGrammarAndReadItBack(long bytes, String text) {
    assertEquals(text, Units.formatSize(bytes));
    assertEquals(bytes, Units.size(text));
  }
}
