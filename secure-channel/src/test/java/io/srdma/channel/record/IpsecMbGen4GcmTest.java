package io.srdma.channel.record;

/**
 * {@link NativeGcmTest}'s tests on intel-ipsec-mb's {@code avx_gen4} variant (AES-NI, PCLMULQDQ,
 * AVX2), the one {@link LibIpsecMb} picks on a CPU without VAES: run here whatever the CPU's
 * default, so both variants' calls are checked where the CPU has them. Skipped, saying so, without
 * the library or those instructions.
 */
class IpsecMbGen4GcmTest extends NativeGcmTest {
  @Override
  AeadProvider provider() {
    return new AeadProvider(LibIpsecMb.gcmForTest(LibIpsecMb.AVX_GEN4));
  }

  @Override
  String missing() {
    return "intel-ipsec-mb's avx_gen4 variant (libIPSec_MB.so.2 on an AVX2 CPU)";
  }
}
