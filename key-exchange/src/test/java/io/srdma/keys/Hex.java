package io.srdma.keys;

import java.util.HexFormat;

final class Hex {
  private Hex() {}

  static byte[] of(String hex) {
    return HexFormat.of().parseHex(hex);
  }

  static String of(byte[] bytes) {
    return HexFormat.of().formatHex(bytes);
  }

  static byte[] range(int fromInclusive, int toExclusive) {
    byte[] b = new byte[toExclusive - fromInclusive];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) (fromInclusive + i);
    }
    return b;
  }
}
