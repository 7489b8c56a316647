package io.srdma.channel.protocol;

import io.srdma.channel.protocol.ProtocolException.Reason;
import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** Big-endian field access and the checks every message shares. */
final class Bytes {
  /** Longest region name, as the access policy allows: {@code [a-z0-9][a-z0-9_-]{0,62}}. */
  static final int MAX_NAME_LENGTH = 63;

  /** Longest human-readable text (GRANT_DENIED, ERROR), in UTF-8 bytes. */
  static final int MAX_TEXT_LENGTH = 1024;

  private Bytes() {}

  static int getU8(byte[] b, int i) {
    return b[i] & 0xFF;
  }

  static int getU16(byte[] b, int i) {
    return ((b[i] & 0xFF) << 8) | (b[i + 1] & 0xFF);
  }

  static int getInt(byte[] b, int i) {
    return ((b[i] & 0xFF) << 24)
        | ((b[i + 1] & 0xFF) << 16)
        | ((b[i + 2] & 0xFF) << 8)
        | (b[i + 3] & 0xFF);
  }

  static long getLong(byte[] b, int i) {
    return ((long) getInt(b, i) << 32) | (getInt(b, i + 4) & 0xFFFF_FFFFL);
  }

  static void putU8(byte[] b, int i, int v) {
    b[i] = (byte) v;
  }

  static void putU16(byte[] b, int i, int v) {
    b[i] = (byte) (v >>> 8);
    b[i + 1] = (byte) v;
  }

  static void putInt(byte[] b, int i, int v) {
    b[i] = (byte) (v >>> 24);
    b[i + 1] = (byte) (v >>> 16);
    b[i + 2] = (byte) (v >>> 8);
    b[i + 3] = (byte) v;
  }

  static void putLong(byte[] b, int i, long v) {
    putInt(b, i, (int) (v >>> 32));
    putInt(b, i + 4, (int) v);
  }

  static void zero(byte[] b, int i, int n, String field) {
    for (int k = 0; k < n; k++) {
      if (b[i + k] != 0) {
        throw new ProtocolException(Reason.RESERVED_NOT_ZERO, field);
      }
    }
  }

  /** Checks that a body of {@code length} bytes holds at least {@code need}. */
  static void atLeast(int length, int need, String what) {
    if (length < need) {
      throw new ProtocolException(
          Reason.BODY_TOO_SHORT, what + " needs " + need + " bytes, body has " + length);
    }
  }

  /** Checks that the last field ended exactly at the end of the body. */
  static void exactly(int length, int end, String what) {
    atLeast(length, end, what);
    if (length != end) {
      throw new ProtocolException(
          Reason.TRAILING_BYTES, what + " ends at " + end + ", body has " + length);
    }
  }

  static long nonNegative(long v, String field) {
    if (v < 0) {
      throw new ProtocolException(Reason.BAD_VALUE, field + " is negative: " + v);
    }
    return v;
  }

  static long positive(long v, String field) {
    if (v <= 0) {
      throw new ProtocolException(Reason.BAD_VALUE, field + " must be positive: " + v);
    }
    return v;
  }

  /** Checks offset ≥ 0, length > 0 and that offset + length does not overflow. */
  static void range(long offset, long length) {
    nonNegative(offset, "offset");
    positive(length, "length");
    if (offset > Long.MAX_VALUE - length) {
      throw new ProtocolException(Reason.BAD_VALUE, "offset + length overflows");
    }
  }

  static void fixed(byte[] value, int length, String field) {
    if (value.length != length) {
      throw new ProtocolException(
          Reason.BAD_VALUE, field + " must be " + length + " bytes, not " + value.length);
    }
  }

  /** Checks a region name's length ({@code 1..63}) and characters; ASCII, so safe in logs. */
  static void checkName(byte[] b, int i, int n) {
    checkNameLength(n);
    for (int k = 0; k < n; k++) {
      int c = b[i + k];
      boolean ok =
          (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (k > 0 && (c == '-' || c == '_'));
      if (!ok) {
        throw new ProtocolException(
            Reason.BAD_STRING, "region name is not [a-z0-9][a-z0-9_-]*: byte " + k);
      }
    }
  }

  /** Checks a region name's length alone, before the body is known to hold it. */
  static int checkNameLength(int n) {
    if (n == 0 || n > MAX_NAME_LENGTH) {
      throw new ProtocolException(
          Reason.STRING_TOO_LONG, "region name of " + n + " bytes, allowed 1.." + MAX_NAME_LENGTH);
    }
    return n;
  }

  /** Encodes a region name at {@code i}; returns its length. */
  static int putName(byte[] b, int i, String name) {
    byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
    if (bytes.length > MAX_NAME_LENGTH || i + bytes.length > b.length) {
      throw new ProtocolException(
          Reason.STRING_TOO_LONG, "region name of " + bytes.length + " bytes");
    }
    System.arraycopy(bytes, 0, b, i, bytes.length);
    checkName(b, i, bytes.length);
    return bytes.length;
  }

  static String name(byte[] b, int i, int n) {
    return new String(b, i, n, StandardCharsets.US_ASCII);
  }

  /** Decodes human-readable text, refusing bad UTF-8 and control characters (one log line). */
  static String text(byte[] b, int i, int n) {
    if (n > MAX_TEXT_LENGTH) {
      throw new ProtocolException(
          Reason.STRING_TOO_LONG, "text of " + n + " bytes, allowed " + MAX_TEXT_LENGTH);
    }
    CharsetDecoder decoder =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    CharBuffer chars;
    try {
      chars = decoder.decode(ByteBuffer.wrap(b, i, n));
    } catch (CharacterCodingException e) {
      throw new ProtocolException(Reason.BAD_STRING, "text is not valid UTF-8");
    }
    for (int k = 0; k < chars.length(); ) {
      int cp = Character.codePointAt(chars, k);
      k += Character.charCount(cp);
      if (breaksALogLine(cp)) {
        throw new ProtocolException(Reason.BAD_STRING, "text holds a control character");
      }
    }
    return chars.toString();
  }

  /**
   * Whether a character may not appear in text that goes into one log line: C0 and C1 controls (CR,
   * LF, ESC, NEL, …), the Unicode line and paragraph separators (U+2028, U+2029), and the invisible
   * format characters (bidi embeddings, overrides and isolates such as U+202E and U+2066,
   * zero-width characters), which disguise or reorder what a log line shows.
   */
  static boolean breaksALogLine(int cp) {
    if (Character.isISOControl(cp)) {
      return true;
    }
    int type = Character.getType(cp);
    return type == Character.LINE_SEPARATOR
        || type == Character.PARAGRAPH_SEPARATOR
        || type == Character.FORMAT;
  }

  /**
   * Encodes text for the wire: control characters (and the others {@link #breaksALogLine} names)
   * become spaces and the text is cut to {@link #MAX_TEXT_LENGTH} bytes at a character boundary, so
   * composing an error never fails.
   */
  static byte[] sanitizedText(String text) {
    StringBuilder sb = new StringBuilder(Math.min(text.length(), MAX_TEXT_LENGTH));
    int bytes = 0;
    for (int k = 0; k < text.length(); ) {
      int cp = text.codePointAt(k);
      k += Character.charCount(cp);
      if (breaksALogLine(cp)) {
        cp = ' ';
      } else if (cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE) {
        cp = '?'; // a lone surrogate has no UTF-8 form
      }
      int size = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      if (bytes + size > MAX_TEXT_LENGTH) {
        break;
      }
      bytes += size;
      sb.appendCodePoint(cp);
    }
    return sb.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** Shortest and longest {@link ConnectionInfo#encode()} form. */
  static final int MIN_CONNECTION_INFO = 10;

  static final int MAX_CONNECTION_INFO = MIN_CONNECTION_INFO + ConnectionInfo.MAX_ADDRESS_LENGTH;

  /** Decodes connection info, its length already known to be inside the body. */
  static ConnectionInfo connectionInfo(byte[] b, int i, int n) {
    if (n < MIN_CONNECTION_INFO || n > MAX_CONNECTION_INFO) {
      throw new ProtocolException(
          Reason.BAD_VALUE,
          "connection info of "
              + n
              + " bytes, allowed "
              + MIN_CONNECTION_INFO
              + ".."
              + MAX_CONNECTION_INFO);
    }
    try {
      return ConnectionInfo.decode(Arrays.copyOfRange(b, i, i + n));
    } catch (VerbsException e) {
      throw new ProtocolException(Reason.BAD_VALUE, "connection info: " + e.getMessage());
    }
  }

  static void capacity(int capacity, int need, String what) {
    if (capacity < need) {
      throw new ProtocolException(
          Reason.FRAME_TOO_LARGE, what + " needs " + need + " bytes, capacity " + capacity);
    }
  }
}
