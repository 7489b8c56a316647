package io.srdma.channel;

/** Tests that look for secrets left in buffers: whether one byte sequence occurs in another. */
public final class ByteSearch {
  private ByteSearch() {}

  /** Whether {@code needle} occurs anywhere in {@code haystack}. */
  public static boolean contains(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      for (int k = 0; k < needle.length; k++) {
        if (haystack[i + k] != needle[k]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
  }
}
