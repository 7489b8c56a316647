package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * intel-ipsec-mb's per-record calls as foreign-function downcalls ({@link IpsecMbDowncalls}: the
 * streaming calls) against its jnr-ffi calls (the one-call API): where the JVM offers downcalls the
 * provider's description names them, and both bindings seal the same bytes and open each other's
 * records, in each variant this CPU has; where it does not, the description says why. Also: the
 * variant follows the CPU features. Runs on JDK 17 without downcalls in the default run, and with
 * them in the {@code java17-downcalls} and {@code java25-downcalls} profiles.
 */
class IpsecMbDowncallsTest {
  @Test
  void theDowncallsOpenTheLibraryByLibIpsecMbsNamesInItsOrder() {
    assertArrayEquals(LibIpsecMb.NAMES, IpsecMbDowncalls.NAMES);
  }

  @Test
  void theVariantFollowsTheCpuFeatures() {
    long gen4 = LibIpsecMb.AESNI | LibIpsecMb.PCLMULQDQ | LibIpsecMb.AVX2;
    assertEquals(LibIpsecMb.AVX_GEN4, LibIpsecMb.variant(gen4));
    assertEquals(LibIpsecMb.AVX_GEN4, LibIpsecMb.variant(gen4 | LibIpsecMb.VAES));
    assertEquals(
        LibIpsecMb.VAES_AVX2, LibIpsecMb.variant(gen4 | LibIpsecMb.VAES | LibIpsecMb.VPCLMULQDQ));
    AeadException e =
        assertThrows(
            AeadException.class,
            () -> LibIpsecMb.variant(LibIpsecMb.AESNI | LibIpsecMb.PCLMULQDQ | LibIpsecMb.VAES));
    assertTrue(e.getMessage().contains("lacks AES-NI, PCLMULQDQ or AVX2"), e.getMessage());
  }

  @Test
  void aNullAddressOrNegativeLengthIsRefusedBeforeTheLibrarySeesIt() {
    ipsecMbOrSkip();
    GcmLibrary lib = LibIpsecMb.gcm();
    long ctx = lib.newContext();
    long buf = LibCrypto.MEMORY.allocateMemory(256, true);
    try {
      long k = buf;
      long nonce = buf + 32;
      long aad = buf + 48;
      long data = buf + 64;
      long word = buf + 240;
      assertTrue(lib.setKey(ctx, k, true));
      assertTrue(lib.seal(ctx, nonce, aad, 16, data, null, data, 64, word));
      for (long[] bad :
          new long[][] {
            {0, nonce, aad, data, data, 64},
            {ctx, 0, aad, data, data, 64},
            {ctx, nonce, 0, data, data, 64},
            {ctx, nonce, aad, 0, data, 64},
            {ctx, nonce, aad, data, 0, 64},
            {ctx, nonce, aad, data, data, -1}
          }) {
        assertThrows(
            AeadException.class,
            () -> lib.seal(bad[0], bad[1], bad[2], 16, bad[3], null, bad[4], (int) bad[5], word));
        assertThrows(
            AeadException.class,
            () -> lib.open(bad[0], bad[1], bad[2], 16, bad[3], bad[4], null, (int) bad[5], word));
      }
    } finally {
      LibCrypto.MEMORY.freeMemory(buf);
      lib.freeContext(ctx);
    }
  }

  @Test
  void theBindingInUseIsNamedAndIsTheDowncallsWhereTheJvmOffersThem() {
    AeadProvider p = ipsecMbOrSkip();
    if (ForeignBinder.possibleHere()
        && !"jnr".equals(System.getProperty(IpsecMbDowncalls.PROPERTY))) {
      assertNull(LibIpsecMb.notDowncalls());
      String kind =
          Runtime.version().feature() == 17 ? "FFM downcalls (Java 17 incubator)" : "FFM downcalls";
      assertTrue(p.description().contains("through " + kind + ")"), p.description());
    } else {
      assertTrue(
          p.description().contains("through jnr-ffi"), p.description()); // never silent: see below
      if (ForeignBinder.possibleHere()) {
        assertEquals("-D" + IpsecMbDowncalls.PROPERTY + "=jnr", LibIpsecMb.notDowncalls());
        assertTrue(
            p.description().contains("not downcalls: " + LibIpsecMb.notDowncalls()),
            p.description());
      }
    }
  }

  @Test
  void downcallsAndJnrSealAndOpenTheSameRecordsInEveryVariantThisCpuHas() {
    ipsecMbOrSkip();
    Assumptions.assumeTrue(
        LibIpsecMb.notDowncalls() == null,
        () -> "needs the downcalls: " + LibIpsecMb.notDowncalls());
    for (String variant : new String[] {LibIpsecMb.VAES_AVX2, LibIpsecMb.AVX_GEN4}) {
      if (!LibIpsecMb.cpuHas(variant)) {
        continue;
      }
      GcmLibrary downcalls = LibIpsecMb.gcmForTest(variant);
      GcmLibrary jnr = downcalls.jnr();
      assertTrue(jnr != null && jnr != downcalls, variant);
      int max = 2 * NativeGcm.PIN_FROM;
      try (NativeGcm a = new NativeGcm(downcalls, max);
          NativeGcm b = new NativeGcm(jnr, max)) {
        for (int size :
            new int[] {0, 1, 15, 64, 4096, NativeGcm.PIN_FROM - 1, NativeGcm.PIN_FROM, max}) {
          for (boolean heap : new boolean[] {false, true}) {
            BindingRoundTrip.check(a, b, size, heap);
            BindingRoundTrip.check(b, a, size, heap);
          }
        }
      }
    }
  }

  private static AeadProvider ipsecMbOrSkip() {
    try {
      return AeadProvider.ipsecMb();
    } catch (AeadException e) {
      Assumptions.abort(
          "intel-ipsec-mb (libIPSec_MB.so.2, 2.0 or newer, on an AVX2 CPU) is not loadable here: "
              + e.getMessage());
      return null;
    }
  }
}
