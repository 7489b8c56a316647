package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * libcrypto's per-record EVP calls as foreign-function downcalls ({@link OpensslDowncalls}): where
 * the JVM offers them (Java 22+, Java 17 with the incubator's options) they are what the data path
 * uses, said in the provider's description, and they produce and accept exactly what the jnr-ffi
 * binding does, at every record size on both sides of the pinned path (so every C {@code int}
 * argument reaches libcrypto intact); elsewhere the description says jnr-ffi and why. {@link
 * NativeGcmTest} checks the bytes against the JDK's GCM through whichever binding is in use. CI
 * runs this class on Java 17 without and with the incubator's options (secure-channel's {@code
 * java17-downcalls} profile) and on Temurin 25 ({@code java25-downcalls}).
 */
class OpensslDowncallsTest {
  @Test
  void theDowncallsOpenTheLibraryByLibCryptosNamesInItsOrder() {
    assertArrayEquals(LibCrypto.NAMES, OpensslDowncalls.NAMES);
  }

  @Test
  void theBindingInUseIsNamedAndIsTheDowncallsWhereTheJvmOffersThem() {
    AeadProvider openssl = opensslOrSkip();
    if (ForeignBinder.possibleHere()
        && !"jnr".equals(System.getProperty(OpensslDowncalls.PROPERTY))) {
      assertNull(OpensslDowncalls.unavailable());
      String kind =
          Runtime.version().feature() == 17 ? "FFM downcalls (Java 17 incubator)" : "FFM downcalls";
      assertEquals(kind, LibCrypto.binding());
      assertTrue(openssl.description().contains("through " + kind + ")"), openssl.description());
    } else {
      assertTrue(LibCrypto.binding().startsWith("jnr-ffi ("), LibCrypto.binding());
      // never silent: the description says why the downcalls are not in use
      assertTrue(
          openssl
              .description()
              .contains("through jnr-ffi, not downcalls: " + OpensslDowncalls.unavailable()),
          openssl.description());
      if (ForeignBinder.possibleHere()) {
        assertEquals("-D" + OpensslDowncalls.PROPERTY + "=jnr", OpensslDowncalls.unavailable());
      } else {
        assertEquals(
            io.srdma.verbs.internal.CriticalDowncalls.unlessTurnedOff("srdma.test.none")
                .unavailable(),
            OpensslDowncalls.unavailable());
      }
    }
  }

  @Test
  void downcallsAndJnrSealAndOpenTheSameRecords() {
    opensslOrSkip();
    Assumptions.assumeTrue(
        OpensslDowncalls.unavailable() == null,
        () -> "needs the downcalls: " + OpensslDowncalls.unavailable());
    GcmLibrary downcalls = LibCrypto.gcm();
    GcmLibrary jnr = LibCrypto.jnrForTest();
    assertFalse(downcalls == jnr);
    int max = 2 * NativeGcm.PIN_FROM;
    try (NativeGcm a = new NativeGcm(downcalls, max);
        NativeGcm b = new NativeGcm(jnr, max)) {
      for (int size : new int[] {0, 1, 64, 4096, NativeGcm.PIN_FROM - 1, NativeGcm.PIN_FROM, max}) {
        for (boolean heap : new boolean[] {false, true}) {
          BindingRoundTrip.check(a, b, size, heap);
          BindingRoundTrip.check(b, a, size, heap);
        }
      }
    }
  }

  private static AeadProvider opensslOrSkip() {
    try {
      return AeadProvider.openssl();
    } catch (AeadException e) {
      Assumptions.abort("libcrypto (OpenSSL 3.x or 1.1) is not loadable here: " + e);
      return null;
    }
  }
}
