package io.srdma.channel.protocol;

import static io.srdma.channel.protocol.FrameHeaderFlyweight.HEADER_LENGTH;

import io.srdma.channel.protocol.ProtocolException.Reason;
import java.util.Set;

/**
 * One validated frame, as returned by {@link FrameReader#read()}: its type, request id and a
 * flyweight over its body. Owned by the reader and valid until its next {@code read()}: copy what
 * must outlive that. The typed accessors check the type, so a caller cannot read a body as another
 * message.
 */
public final class Frame {
  private final byte[] buffer;
  private final HelloFlyweight hello = new HelloFlyweight();
  private final HelloAckFlyweight helloAck = new HelloAckFlyweight();
  private final KeyConfirmFlyweight keyConfirm = new KeyConfirmFlyweight();
  private final CreditWordFlyweight creditWord = new CreditWordFlyweight();
  private final GrantRequestFlyweight grantRequest = new GrantRequestFlyweight();
  private final GrantFlyweight grant = new GrantFlyweight();
  private final GrantDeniedFlyweight grantDenied = new GrantDeniedFlyweight();
  private final RevokeFlyweight revoke = new RevokeFlyweight();
  private final ReleaseFlyweight release = new ReleaseFlyweight();
  private final RekeyFlyweight rekey = new RekeyFlyweight();
  private final RegionKeyFlyweight regionKey = new RegionKeyFlyweight();
  private final PingFlyweight ping = new PingFlyweight();
  private final ErrorFlyweight error = new ErrorFlyweight();
  private MessageType type;
  private int requestId;
  private int bodyLength;

  Frame(byte[] buffer) {
    this.buffer = buffer;
  }

  /** Sets the header fields and validates the body (already in the buffer after the header). */
  Frame set(MessageType type, int requestId, int bodyLength) {
    this.type = type;
    this.requestId = requestId;
    this.bodyLength = bodyLength;
    switch (type) {
      case HELLO -> hello().validate();
      case HELLO_ACK -> helloAck().validate();
      case KEY_CONFIRM -> keyConfirm().validate();
      case CREDIT_WORD -> creditWord().validate();
      case GRANT_REQUEST -> grantRequest().validate();
      case GRANT -> grant().validate();
      case GRANT_DENIED -> grantDenied().validate();
      case REVOKE -> revoke().validate();
      case RELEASE -> release().validate();
      case REKEY -> rekey().validate();
      case REGION_KEY -> regionKey().validate();
      case PING, PONG -> ping().validate();
      case ERROR -> error().validate();
      case CLOSE -> Bytes.exactly(bodyLength, 0, "CLOSE");
    }
    return this;
  }

  /** The message type. */
  public MessageType type() {
    return type;
  }

  /** The request id: that of the request for answers, 0 for unsolicited frames. */
  public int requestId() {
    return requestId;
  }

  /** The body length. */
  public int bodyLength() {
    return bodyLength;
  }

  /**
   * Checks that this frame is of the type the caller's state machine expects next.
   *
   * @return this
   * @throws ProtocolException UNEXPECTED_TYPE otherwise
   */
  public Frame expect(MessageType expected) {
    if (type != expected) {
      throw unexpected(expected.toString());
    }
    return this;
  }

  /**
   * Checks that this frame is of one of the types the caller's state machine accepts now.
   *
   * @return this
   * @throws ProtocolException UNEXPECTED_TYPE otherwise
   */
  public Frame expect(Set<MessageType> expected) {
    if (!expected.contains(type)) {
      throw unexpected("one of " + expected);
    }
    return this;
  }

  private ProtocolException unexpected(String expected) {
    return new ProtocolException(
        Reason.UNEXPECTED_TYPE, "got " + type + " where " + expected + " was expected");
  }

  /** The HELLO body. */
  public HelloFlyweight hello() {
    return hello.wrap(body(MessageType.HELLO), HEADER_LENGTH, bodyLength);
  }

  /** The HELLO_ACK body. */
  public HelloAckFlyweight helloAck() {
    return helloAck.wrap(body(MessageType.HELLO_ACK), HEADER_LENGTH, bodyLength);
  }

  /** The KEY_CONFIRM body. */
  public KeyConfirmFlyweight keyConfirm() {
    return keyConfirm.wrap(body(MessageType.KEY_CONFIRM), HEADER_LENGTH, bodyLength);
  }

  /** The CREDIT_WORD body. */
  public CreditWordFlyweight creditWord() {
    return creditWord.wrap(body(MessageType.CREDIT_WORD), HEADER_LENGTH, bodyLength);
  }

  /** The GRANT_REQUEST body. */
  public GrantRequestFlyweight grantRequest() {
    return grantRequest.wrap(body(MessageType.GRANT_REQUEST), HEADER_LENGTH, bodyLength);
  }

  /** The GRANT body. */
  public GrantFlyweight grant() {
    return grant.wrap(body(MessageType.GRANT), HEADER_LENGTH, bodyLength);
  }

  /** The GRANT_DENIED body. */
  public GrantDeniedFlyweight grantDenied() {
    return grantDenied.wrap(body(MessageType.GRANT_DENIED), HEADER_LENGTH, bodyLength);
  }

  /** The REVOKE body. */
  public RevokeFlyweight revoke() {
    return revoke.wrap(body(MessageType.REVOKE), HEADER_LENGTH, bodyLength);
  }

  /** The RELEASE body. */
  public ReleaseFlyweight release() {
    return release.wrap(body(MessageType.RELEASE), HEADER_LENGTH, bodyLength);
  }

  /** The REKEY body. */
  public RekeyFlyweight rekey() {
    return rekey.wrap(body(MessageType.REKEY), HEADER_LENGTH, bodyLength);
  }

  /** The REGION_KEY body. */
  public RegionKeyFlyweight regionKey() {
    return regionKey.wrap(body(MessageType.REGION_KEY), HEADER_LENGTH, bodyLength);
  }

  /** The PING or PONG body. */
  public PingFlyweight ping() {
    if (type != MessageType.PONG) {
      body(MessageType.PING);
    }
    return ping.wrap(buffer, HEADER_LENGTH, bodyLength);
  }

  /** The ERROR body. */
  public ErrorFlyweight error() {
    return error.wrap(body(MessageType.ERROR), HEADER_LENGTH, bodyLength);
  }

  private byte[] body(MessageType expected) {
    expect(expected);
    return buffer;
  }

  @Override
  public String toString() {
    return type + "#" + Integer.toUnsignedString(requestId) + " (" + bodyLength + " bytes)";
  }
}
