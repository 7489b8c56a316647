package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.SecureRandom;
import org.junit.jupiter.api.Test;

/** RFC 7748 §5.2 and §6.1 vectors through {@link X25519KeyPair}. */
class X25519KeyPairTest {

  private static byte[] scalarMult(byte[] k, byte[] u) {
    try (X25519KeyPair pair = X25519KeyPair.fromPrivateKey(k)) {
      return pair.agree(u);
    }
  }

  @Test
  void shouldMatchRfc7748ScalarMultVectors() {
    assertEquals(
        "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552",
        Hex.of(
            scalarMult(
                Hex.of("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4"),
                Hex.of("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c"))));
    assertEquals(
        "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957",
        Hex.of(
            scalarMult(
                Hex.of("4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d"),
                Hex.of("e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493"))));
  }

  @Test
  void shouldMatchRfc7748IteratedVector() {
    byte[] k = Hex.of("0900000000000000000000000000000000000000000000000000000000000000");
    byte[] u = k.clone();
    for (int i = 1; i <= 1000; i++) {
      byte[] r = scalarMult(k, u);
      u = k;
      k = r;
      if (i == 1) {
        assertEquals("422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079", Hex.of(k));
      }
    }
    assertEquals("684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51", Hex.of(k));
  }

  @Test
  void shouldMatchRfc7748DiffieHellmanVector() {
    byte[] alicePriv = Hex.of("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
    byte[] bobPriv = Hex.of("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
    try (X25519KeyPair alice = X25519KeyPair.fromPrivateKey(alicePriv);
        X25519KeyPair bob = X25519KeyPair.fromPrivateKey(bobPriv)) {
      assertEquals(
          "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a",
          Hex.of(alice.publicKey()));
      assertEquals(
          "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f",
          Hex.of(bob.publicKey()));
      String shared = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742";
      assertEquals(shared, Hex.of(alice.agree(bob.publicKey())));
      assertEquals(shared, Hex.of(bob.agree(alice.publicKey())));
    }
  }

  @Test
  void shouldRefuseLowOrderAndMalformedPublicKeys() {
    try (X25519KeyPair pair = X25519KeyPair.generate(new SecureRandom())) {
      KeyExchangeException zero =
          assertThrows(KeyExchangeException.class, () -> pair.agree(new byte[32]));
      assertEquals(KeyExchangeException.Reason.BAD_PUBLIC_KEY, zero.reason());
      byte[] one = new byte[32];
      one[0] = 1;
      assertEquals(
          KeyExchangeException.Reason.BAD_PUBLIC_KEY,
          assertThrows(KeyExchangeException.class, () -> pair.agree(one)).reason());
      assertEquals(
          KeyExchangeException.Reason.BAD_PUBLIC_KEY,
          assertThrows(KeyExchangeException.class, () -> pair.agree(new byte[31])).reason());
    }
  }

  @Test
  void shouldWipePrivateKeyOnClose() {
    X25519KeyPair pair = X25519KeyPair.generate(new SecureRandom());
    byte[] inside = pair.privateKeyArrayForTest();
    assertFalse(Bytes.isZero(inside));
    pair.close();
    assertTrue(Bytes.isZero(inside));
    assertTrue(pair.isClosed());
    assertEquals(
        KeyExchangeException.Reason.CLOSED,
        assertThrows(KeyExchangeException.class, pair::publicKey).reason());
    assertArrayEquals(new byte[32], inside);
  }
}
