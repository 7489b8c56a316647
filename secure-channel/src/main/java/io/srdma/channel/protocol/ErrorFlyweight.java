package io.srdma.channel.protocol;

/**
 * ERROR, either direction: why the sender ends the session, as an {@link ErrorCode}, and a short
 * text. It is the sender's last frame; the request id is the offending request's, or 0. Big-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-------------------------------+-------------------------------+
 *  |          error code           |          text length          |
 *  +-------------------------------+-------------------------------+
 *  |  text (UTF-8, 0..1024 bytes, no control characters)          ...
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class ErrorFlyweight {
  /** Offset of the {@link ErrorCode} code (u16). */
  public static final int CODE_OFFSET = 0;

  /** Offset of the text's length (u16). */
  public static final int TEXT_LENGTH_OFFSET = CODE_OFFSET + 2;

  /** Offset of the text. */
  public static final int TEXT_OFFSET = TEXT_LENGTH_OFFSET + 2;

  /** Longest text, in UTF-8 bytes. */
  public static final int MAX_TEXT_LENGTH = Bytes.MAX_TEXT_LENGTH;

  /** Shortest body. */
  public static final int MIN_LENGTH = TEXT_OFFSET;

  /** Longest body. */
  public static final int MAX_LENGTH = TEXT_OFFSET + MAX_TEXT_LENGTH;

  private byte[] buffer;
  private int offset;
  private int length;

  /**
   * Wraps a body: {@code length} is the body length when reading, the capacity when encoding.
   *
   * @return this
   */
  public ErrorFlyweight wrap(byte[] buffer, int offset, int length) {
    this.buffer = buffer;
    this.offset = offset;
    this.length = length;
    return this;
  }

  /**
   * Encodes the body. Control characters in {@code text} become spaces and it is cut to {@link
   * #MAX_TEXT_LENGTH} bytes at a character boundary, so composing this message never fails on the
   * text. Put no secret in it: the peer logs it.
   *
   * @return the body length
   */
  public int encode(ErrorCode code, String text) {
    byte[] t = Bytes.sanitizedText(text);
    Bytes.capacity(length, TEXT_OFFSET + t.length, "ERROR");
    Bytes.putU16(buffer, offset + CODE_OFFSET, code.code());
    Bytes.putU16(buffer, offset + TEXT_LENGTH_OFFSET, t.length);
    System.arraycopy(t, 0, buffer, offset + TEXT_OFFSET, t.length);
    return TEXT_OFFSET + t.length;
  }

  /**
   * Checks the wrapped body field by field.
   *
   * @return this
   * @throws ProtocolException what is wrong
   */
  public ErrorFlyweight validate() {
    Bytes.atLeast(length, MIN_LENGTH, "ERROR");
    code();
    int n = Bytes.getU16(buffer, offset + TEXT_LENGTH_OFFSET);
    if (n > MAX_TEXT_LENGTH) {
      throw new ProtocolException(
          ProtocolException.Reason.STRING_TOO_LONG,
          "ERROR text of " + n + " bytes, allowed " + MAX_TEXT_LENGTH);
    }
    Bytes.exactly(length, TEXT_OFFSET + n, "ERROR");
    text();
    return this;
  }

  /** The code. */
  public ErrorCode code() {
    return ErrorCode.fromCode(Bytes.getU16(buffer, offset + CODE_OFFSET));
  }

  /** The text, for logs and people. */
  public String text() {
    return Bytes.text(
        buffer, offset + TEXT_OFFSET, Bytes.getU16(buffer, offset + TEXT_LENGTH_OFFSET));
  }
}
