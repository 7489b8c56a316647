package io.srdma.channel.protocol;

import io.srdma.verbs.ConnectionInfo;
import java.io.IOException;

/**
 * Sends each control-plane message through a {@link FrameWriter}: one method per message, its
 * arguments in wire order. Thread-safe. Every method throws {@link ProtocolException} (nothing
 * written) for an argument the protocol does not allow, and {@link IOException} when the stream
 * fails.
 */
public final class ControlProxy {
  private final FrameWriter writer;
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

  /**
   * A proxy.
   *
   * @param writer the connection's writer
   */
  public ControlProxy(FrameWriter writer) {
    this.writer = writer;
  }

  /** Sends HELLO (client). See {@link HelloFlyweight#encode}. */
  public synchronized void hello(
      int requestId, int maxVersion, int capabilities, byte[] publicKey, ConnectionInfo info)
      throws IOException {
    writer.write(
        MessageType.HELLO,
        requestId,
        (b, o, c) -> hello.wrap(b, o, c).encode(maxVersion, capabilities, publicKey, info));
  }

  /** Sends HELLO_ACK (server). See {@link HelloAckFlyweight#encode}. */
  public synchronized void helloAck(
      int requestId,
      int version,
      int capabilities,
      int receiveDepth,
      byte[] publicKey,
      byte[] sessionId,
      ConnectionInfo info)
      throws IOException {
    writer.write(
        MessageType.HELLO_ACK,
        requestId,
        (b, o, c) ->
            helloAck
                .wrap(b, o, c)
                .encode(version, capabilities, receiveDepth, publicKey, sessionId, info));
  }

  /** Sends KEY_CONFIRM. See {@link KeyConfirmFlyweight#encode}. */
  public synchronized void keyConfirm(int requestId, int epoch, byte[] confirmation)
      throws IOException {
    writer.write(
        MessageType.KEY_CONFIRM,
        requestId,
        (b, o, c) -> keyConfirm.wrap(b, o, c).encode(epoch, confirmation));
  }

  /**
   * Sends CREDIT_WORD (client, request id 0): where the host writes receive credits. See {@link
   * CreditWordFlyweight#encode}.
   */
  public synchronized void creditWord(long address, int rkey) throws IOException {
    writer.write(
        MessageType.CREDIT_WORD, 0, (b, o, c) -> creditWord.wrap(b, o, c).encode(address, rkey));
  }

  /** Sends GRANT_REQUEST (client). See {@link GrantRequestFlyweight#encode}. */
  public synchronized void grantRequest(
      int requestId, String region, int operations, long offset, long length, long ttlMillis)
      throws IOException {
    writer.write(
        MessageType.GRANT_REQUEST,
        requestId,
        (b, o, c) ->
            grantRequest.wrap(b, o, c).encode(region, operations, offset, length, ttlMillis));
  }

  /** Sends GRANT (server). See {@link GrantFlyweight#encode}. */
  public synchronized void grant(
      int requestId,
      long grantId,
      String region,
      int operations,
      long offset,
      long length,
      long expiryEpochMillis,
      long remoteAddress,
      int rkey,
      byte[] regionKey)
      throws IOException {
    writer.write(
        MessageType.GRANT,
        requestId,
        (b, o, c) ->
            grant
                .wrap(b, o, c)
                .encode(
                    grantId,
                    region,
                    operations,
                    offset,
                    length,
                    expiryEpochMillis,
                    remoteAddress,
                    rkey,
                    regionKey));
  }

  /** Sends GRANT_DENIED (server). See {@link GrantDeniedFlyweight#encode}. */
  public synchronized void grantDenied(int requestId, DenyReason reason, String text)
      throws IOException {
    writer.write(
        MessageType.GRANT_DENIED,
        requestId,
        (b, o, c) -> grantDenied.wrap(b, o, c).encode(reason, text));
  }

  /** Sends REVOKE (server): request id 0 when pushed, the RELEASE's when answering it. */
  public synchronized void revoke(int requestId, long grantId, RevokeReason reason)
      throws IOException {
    writer.write(
        MessageType.REVOKE, requestId, (b, o, c) -> revoke.wrap(b, o, c).encode(grantId, reason));
  }

  /** Sends RELEASE (client). */
  public synchronized void release(int requestId, long grantId) throws IOException {
    writer.write(
        MessageType.RELEASE, requestId, (b, o, c) -> release.wrap(b, o, c).encode(grantId));
  }

  /** Sends REKEY. */
  public synchronized void rekey(int requestId, int epoch) throws IOException {
    writer.write(MessageType.REKEY, requestId, (b, o, c) -> rekey.wrap(b, o, c).encode(epoch));
  }

  /**
   * Sends REGION_KEY (server, pushed with request id 0). See {@link RegionKeyFlyweight#encode}; the
   * writer wipes its buffer after the frame.
   */
  public synchronized void regionKey(long grantId, int generation, byte[] material)
      throws IOException {
    writer.write(
        MessageType.REGION_KEY,
        0,
        (b, o, c) -> regionKey.wrap(b, o, c).encode(grantId, generation, material));
  }

  /** Sends PING. */
  public synchronized void ping(int requestId, long payload) throws IOException {
    writer.write(MessageType.PING, requestId, (b, o, c) -> ping.wrap(b, o, c).encode(payload));
  }

  /** Sends PONG, echoing the PING's request id and payload. */
  public synchronized void pong(int requestId, long payload) throws IOException {
    writer.write(MessageType.PONG, requestId, (b, o, c) -> ping.wrap(b, o, c).encode(payload));
  }

  /** Sends ERROR, the last frame before closing. See {@link ErrorFlyweight#encode}. */
  public synchronized void error(int requestId, ErrorCode code, String text) throws IOException {
    writer.write(MessageType.ERROR, requestId, (b, o, c) -> error.wrap(b, o, c).encode(code, text));
  }

  /** Sends ERROR for a frame {@link FrameReader} refused, naming the reason. */
  public void error(ProtocolException refused) throws IOException {
    ErrorCode code =
        refused.reason() == ProtocolException.Reason.UNEXPECTED_TYPE
            ? ErrorCode.UNEXPECTED_MESSAGE
            : ErrorCode.PROTOCOL_VIOLATION;
    error(0, code, refused.getMessage());
  }

  /** Sends CLOSE. */
  public void close(int requestId) throws IOException {
    writer.write(MessageType.CLOSE, requestId);
  }
}
