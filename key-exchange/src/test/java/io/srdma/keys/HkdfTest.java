package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** RFC 5869 Appendix A, test cases 1-3 (SHA-256), through {@link Hkdf}. */
class HkdfTest {

  private static void check(byte[] ikm, byte[] salt, byte[] info, String prk, String okm) {
    byte[] p = Hkdf.extract(salt, ikm);
    assertEquals(prk, Hex.of(p));
    assertEquals(okm, Hex.of(Hkdf.expand(p, info, okm.length() / 2)));
  }

  @Test
  void shouldMatchRfc5869TestCase1() {
    byte[] ikm = new byte[22];
    Arrays.fill(ikm, (byte) 0x0b);
    check(
        ikm,
        Hex.range(0x00, 0x0d),
        Hex.range(0xf0, 0xfa),
        "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
  }

  @Test
  void shouldMatchRfc5869TestCase2() {
    check(
        Hex.range(0x00, 0x50),
        Hex.range(0x60, 0xb0),
        Hex.range(0xb0, 0x100),
        "06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244",
        "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c"
            + "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71"
            + "cc30c58179ec3e87c14c01d5c1f3434f1d87");
  }

  @Test
  void shouldMatchRfc5869TestCase3WithEmptySaltAndInfo() {
    byte[] ikm = new byte[22];
    Arrays.fill(ikm, (byte) 0x0b);
    check(
        ikm,
        new byte[0],
        new byte[0],
        "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
        "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8");
  }
}
