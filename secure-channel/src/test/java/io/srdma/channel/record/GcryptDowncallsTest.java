package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * libgcrypt's per-record calls as foreign-function downcalls ({@link GcryptDowncalls}): where the
 * JVM offers them (Java 22+, Java 17 with the incubator's options) they are what the data path
 * uses, said in the provider's description, and they produce and accept exactly what the jnr-ffi
 * binding does, at every record size on both sides of the pinned path; elsewhere the description
 * says jnr-ffi and why. {@link GcryptGcmTest} checks the bytes against the JDK's GCM through
 * whichever binding is in use. CI runs this class on Java 17 without and with the incubator's
 * options (secure-channel's {@code java17-downcalls} profile) and on Temurin 25 ({@code
 * java25-downcalls}).
 */
class GcryptDowncallsTest {
  @Test
  void theDowncallsOpenTheLibraryByLibGcryptsNamesInItsOrder() {
    assertArrayEquals(LibGcrypt.NAMES, GcryptDowncalls.NAMES);
  }

  @Test
  void theBindingInUseIsNamedAndIsTheDowncallsWhereTheJvmOffersThem() {
    AeadProvider gcrypt = gcryptOrSkip();
    if (ForeignBinder.possibleHere()
        && !"jnr".equals(System.getProperty(GcryptDowncalls.PROPERTY))) {
      assertNull(GcryptDowncalls.unavailable());
      String kind =
          Runtime.version().feature() == 17 ? "FFM downcalls (Java 17 incubator)" : "FFM downcalls";
      assertEquals(kind, LibGcrypt.binding());
      assertTrue(gcrypt.description().contains("through " + kind + ")"), gcrypt.description());
    } else {
      assertTrue(LibGcrypt.binding().startsWith("jnr-ffi ("), LibGcrypt.binding());
      // never silent: the description says why the downcalls are not in use
      assertTrue(
          gcrypt
              .description()
              .contains("through jnr-ffi, not downcalls: " + GcryptDowncalls.unavailable()),
          gcrypt.description());
      if (ForeignBinder.possibleHere()) {
        assertEquals("-D" + GcryptDowncalls.PROPERTY + "=jnr", GcryptDowncalls.unavailable());
      } else {
        assertEquals(
            io.srdma.verbs.internal.CriticalDowncalls.unlessTurnedOff("srdma.test.none")
                .unavailable(),
            GcryptDowncalls.unavailable());
      }
    }
  }

  @Test
  void downcallsAndJnrSealAndOpenTheSameRecords() {
    gcryptOrSkip();
    Assumptions.assumeTrue(
        GcryptDowncalls.unavailable() == null,
        () -> "needs the downcalls: " + GcryptDowncalls.unavailable());
    GcmLibrary downcalls = LibGcrypt.gcm();
    GcmLibrary jnr = LibGcrypt.jnrForTest();
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

  private static AeadProvider gcryptOrSkip() {
    try {
      return AeadProvider.gcrypt();
    } catch (AeadException e) {
      Assumptions.abort("libgcrypt (libgcrypt.so.20, 1.8 or newer) is not loadable here: " + e);
      return null;
    }
  }
}
