package io.srdma.keys;

import org.bouncycastle.crypto.digests.SHA256Digest;
import org.bouncycastle.crypto.generators.HKDFBytesGenerator;
import org.bouncycastle.crypto.params.HKDFParameters;

/** HKDF-SHA256 (RFC 5869), Bouncy Castle's implementation, split into its two steps. */
final class Hkdf {
  /** Output length of SHA-256, the length of every secret in the schedule. */
  static final int HASH_LENGTH = 32;

  private Hkdf() {}

  /** HKDF-Extract(salt, ikm) = HMAC-SHA256(salt, ikm). */
  static byte[] extract(byte[] salt, byte[] ikm) {
    return new HKDFBytesGenerator(new SHA256Digest()).extractPRK(salt, ikm);
  }

  /** HKDF-Expand(prk, info, length). */
  static byte[] expand(byte[] prk, byte[] info, int length) {
    HKDFBytesGenerator g = new HKDFBytesGenerator(new SHA256Digest());
    g.init(HKDFParameters.skipExtractParameters(prk, info));
    byte[] out = new byte[length];
    g.generateBytes(out, 0, length);
    return out;
  }
}
