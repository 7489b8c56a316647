package io.srdma.channel.protocol;

import io.srdma.channel.protocol.ProtocolException.Reason;

/**
 * The control-plane messages: wire code, who may send each, whether it needs a request id, and the
 * bounds of its body. Codes are grouped: 0x0_ handshake, 0x1_ grants, 0x2_ keys, 0x3_ session.
 */
public enum MessageType {
  /** Client hello: version, capabilities, X25519 public key, QP info. A request. */
  HELLO(0x01, true, false, true, HelloFlyweight.MIN_LENGTH, HelloFlyweight.MAX_LENGTH),
  /** Server answer to HELLO: version, capabilities, public key, session id, QP info. */
  HELLO_ACK(0x02, false, true, true, HelloAckFlyweight.MIN_LENGTH, HelloAckFlyweight.MAX_LENGTH),
  /** Key confirmation value for an epoch, each way. */
  KEY_CONFIRM(0x03, true, true, false, KeyConfirmFlyweight.LENGTH, KeyConfirmFlyweight.LENGTH),
  /**
   * Where the host writes receive credits: sent by the client once, between HELLO_ACK and its
   * KEY_CONFIRM, iff {@link Capabilities#RECEIVE_CREDITS} was chosen.
   */
  CREDIT_WORD(0x04, true, false, false, CreditWordFlyweight.LENGTH, CreditWordFlyweight.LENGTH),
  /** Ask for a grant. A request. */
  GRANT_REQUEST(
      0x10, true, false, true, GrantRequestFlyweight.MIN_LENGTH, GrantRequestFlyweight.MAX_LENGTH),
  /** A grant: the answer to GRANT_REQUEST. */
  GRANT(0x11, false, true, true, GrantFlyweight.MIN_LENGTH, GrantFlyweight.MAX_LENGTH),
  /** A denial: the answer to GRANT_REQUEST. */
  GRANT_DENIED(
      0x12, false, true, true, GrantDeniedFlyweight.MIN_LENGTH, GrantDeniedFlyweight.MAX_LENGTH),
  /** A grant ended (pushed, or the answer to RELEASE). */
  REVOKE(0x13, false, true, false, RevokeFlyweight.LENGTH, RevokeFlyweight.LENGTH),
  /** The client gives a grant back. A request, answered by REVOKE. */
  RELEASE(0x14, true, false, true, ReleaseFlyweight.LENGTH, ReleaseFlyweight.LENGTH),
  /** The sender seals with a new epoch from now on. */
  REKEY(0x20, true, true, false, RekeyFlyweight.LENGTH, RekeyFlyweight.LENGTH),
  /** The region key of a READ grant was rotated: its new generation and key material. Pushed. */
  REGION_KEY(
      0x21, false, true, false, RegionKeyFlyweight.MIN_LENGTH, RegionKeyFlyweight.MAX_LENGTH),
  /** Liveness check. A request, answered by PONG. */
  PING(0x30, true, true, true, PingFlyweight.LENGTH, PingFlyweight.LENGTH),
  /** The answer to PING. */
  PONG(0x31, true, true, true, PingFlyweight.LENGTH, PingFlyweight.LENGTH),
  /** The sender ends the session because of an error; its last frame. */
  ERROR(0x3E, true, true, false, ErrorFlyweight.MIN_LENGTH, ErrorFlyweight.MAX_LENGTH),
  /** Orderly end: the receiver answers CLOSE and both close the TLS connection. Empty body. */
  CLOSE(0x3F, true, true, false, 0, 0);

  private static final MessageType[] BY_CODE = new MessageType[256];
  private static final int LARGEST_BODY_LENGTH;

  static {
    int largest = 0;
    for (MessageType t : values()) {
      BY_CODE[t.code] = t;
      largest = Math.max(largest, t.maxBodyLength);
    }
    LARGEST_BODY_LENGTH = largest;
  }

  private final int code;
  private final boolean fromClient;
  private final boolean fromServer;
  private final boolean needsRequestId;
  private final int minBodyLength;
  private final int maxBodyLength;

  MessageType(
      int code,
      boolean fromClient,
      boolean fromServer,
      boolean needsRequestId,
      int minBodyLength,
      int maxBodyLength) {
    this.code = code;
    this.fromClient = fromClient;
    this.fromServer = fromServer;
    this.needsRequestId = needsRequestId;
    this.minBodyLength = minBodyLength;
    this.maxBodyLength = maxBodyLength;
  }

  /** The wire code (u8). */
  public int code() {
    return code;
  }

  /** Whether {@code side} may send this message. */
  public boolean sentBy(Side side) {
    return side == Side.CLIENT ? fromClient : fromServer;
  }

  /** Whether the frame's request id must be non-zero (requests, and answers that echo it). */
  public boolean needsRequestId() {
    return needsRequestId;
  }

  /** The shortest valid body. */
  public int minBodyLength() {
    return minBodyLength;
  }

  /** The longest valid body. */
  public int maxBodyLength() {
    return maxBodyLength;
  }

  /** The longest body of any message of this version: the most a reader ever buffers. */
  public static int largestBodyLength() {
    return LARGEST_BODY_LENGTH;
  }

  /**
   * The message with this wire code.
   *
   * @throws ProtocolException UNKNOWN_TYPE when none has it
   */
  public static MessageType fromCode(int code) {
    MessageType t = code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    if (t == null) {
      throw new ProtocolException(Reason.UNKNOWN_TYPE, "type 0x" + Integer.toHexString(code));
    }
    return t;
  }
}
