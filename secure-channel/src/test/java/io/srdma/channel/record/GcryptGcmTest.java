package io.srdma.channel.record;

/**
 * {@link NativeGcmTest}'s tests on libgcrypt: the same bytes as the JDK's GCM from and to every
 * kind of buffer, a wrong tag leaving nothing behind, every bad call refused before a byte is
 * written, the key wiped. Needs {@code libgcrypt.so.20} (Debian's {@code libgcrypt20}, which CI
 * installs); skipped, saying so, where it is missing.
 */
class GcryptGcmTest extends NativeGcmTest {
  @Override
  AeadProvider provider() {
    return AeadProvider.gcrypt();
  }

  @Override
  String missing() {
    return "libgcrypt (libgcrypt.so.20, 1.8 or newer)";
  }
}
