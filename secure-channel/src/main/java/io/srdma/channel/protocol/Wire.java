package io.srdma.channel.protocol;

import java.util.Arrays;

/** Sizes shared by several messages. */
final class Wire {
  /** An X25519 public key. */
  static final int KEY_LENGTH = 32;

  /** A key confirmation value. */
  static final int CONFIRMATION_LENGTH = 32;

  /** A session id, chosen by the server. */
  static final int SESSION_ID_LENGTH = 16;

  /** Longest region key material in a GRANT or REGION_KEY. */
  static final int MAX_REGION_KEY_LENGTH = 128;

  private Wire() {}

  static byte[] copy(byte[] b, int i, int n) {
    return Arrays.copyOfRange(b, i, i + n);
  }
}
