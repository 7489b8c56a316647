package io.srdma.keys;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;

/** Byte helpers for the key schedule: big-endian encodings, concatenation, wiping. */
final class Bytes {
  private Bytes() {}

  static void wipe(byte[] b) {
    if (b != null) {
      Arrays.fill(b, (byte) 0);
    }
  }

  static boolean isZero(byte[] b) {
    int acc = 0;
    for (byte x : b) {
      acc |= x;
    }
    return acc == 0;
  }

  static byte[] u32(long v) {
    return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
  }

  /** {@code label ‖ 0x00 ‖ context}: the HKDF info of every derivation here. */
  static byte[] info(String label, byte[]... context) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(label.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    out.write(0);
    for (byte[] c : context) {
      out.writeBytes(c);
    }
    return out.toByteArray();
  }
}
