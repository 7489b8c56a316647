package io.srdma.channel.record;

/**
 * {@link NativeGcmTest}'s tests on intel-ipsec-mb in the variant this CPU's features pick ({@code
 * vaes_avx2} where VAES and VPCLMULQDQ are there): the same bytes as the JDK's GCM from and to
 * every kind of buffer, a wrong tag leaving nothing behind, every bad call refused before a byte is
 * written, the key wiped. Needs {@code libIPSec_MB.so.2} (Debian's {@code libipsec-mb2}, which CI
 * installs) and an AVX2 CPU; skipped, saying so, where either is missing.
 */
class IpsecMbGcmTest extends NativeGcmTest {
  @Override
  AeadProvider provider() {
    return AeadProvider.ipsecMb();
  }

  @Override
  String missing() {
    return "intel-ipsec-mb (libIPSec_MB.so.2, 2.0 or newer, on an AVX2 CPU)";
  }
}
