package io.srdma.channel;

import io.srdma.channel.protocol.Capabilities;
import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.ErrorCode;
import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.HelloAckFlyweight;
import io.srdma.channel.protocol.MessageType;
import io.srdma.channel.protocol.ProtocolException;
import io.srdma.keys.AuthenticatedPeer;
import io.srdma.keys.KeySchedule;
import io.srdma.keys.MutualTls;
import io.srdma.keys.Role;
import io.srdma.keys.TlsBinding;
import io.srdma.keys.X25519KeyPair;
import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.QueuePair;
import java.io.IOException;
import java.security.SecureRandom;
import java.util.HexFormat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's side of the session handshake, inside the TLS connection: HELLO with the X25519 key
 * and the queue pair's connection information, HELLO_ACK, the key schedule bound to the TLS session
 * and both QP numbers, CREDIT_WORD when the host returns receive credits, KEY_CONFIRM both ways,
 * then the queue pair to RTS. Runs once on the connecting thread, which waits (bounded) for each of
 * the host's frames; not shared.
 */
final class ClientHandshake {
  // the client's logger: operators filter on it (and tests count its warnings)
  private static final Logger LOG = LoggerFactory.getLogger(SecureRdmaClient.class);
  static final int VERSION = 1;

  /** The host's frames during the handshake, each waited for at most the connect timeout. */
  interface Frames {
    /**
     * @throws java.net.SocketTimeoutException none came in time
     */
    Frame next() throws IOException;
  }

  /**
   * What the handshake established.
   *
   * @param hostReceives the receives the host keeps posted for the session, or 0 when the host did
   *     not say (one before {@link Capabilities#RECEIVE_DEPTH})
   * @param credits whether the host returns receive credits into the client's credit word ({@link
   *     Capabilities#RECEIVE_CREDITS})
   */
  record Established(
      KeySchedule schedule,
      String sessionId,
      TlsBinding.Kind bindingKind,
      int hostReceives,
      boolean credits,
      boolean recordRuns) {}

  private ClientHandshake() {}

  /**
   * The TLS client: pinned to the expected host, whose certificate is checked before this client
   * sends its own; or, with {@link ClientOptions#anyHostForDevelopment()}, any host of the
   * deployment, with a warning on every connect.
   */
  static MutualTls tls(ClientOptions options) {
    if (options.hostIdentity() != null) {
      return MutualTls.client(options.credential(), options.trust(), options.hostIdentity());
    }
    LOG.warn(
        "connecting to {} WITHOUT host pinning (ClientOptions.anyHostForDevelopment()): any host"
            + " of the deployment is accepted and could read this tenant's data; set"
            + " ClientOptions.hostIdentity(srdma://host/<name>) outside development",
        options.host());
    return MutualTls.client(options.credential(), options.trust());
  }

  /**
   * Runs the handshake on an authenticated connection; the queue pair is ready to send after it.
   * {@code frames} bounds each wait for the host; {@code responder} decides whether the queue pair
   * may connect to the responder address the host names (refused: {@code ProtocolException
   * BAD_VALUE} naming it, before any connection to it).
   */
  static Established run(
      AuthenticatedPeer peer,
      Frames frames,
      ControlProxy proxy,
      QueuePair qp,
      MemoryRegion creditWord,
      int requestId,
      HostResponderAddress responder)
      throws IOException {
    SecureRandom random = new SecureRandom();
    try (X25519KeyPair local = X25519KeyPair.generate(random)) {
      int announced = Capabilities.local();
      try {
        proxy.hello(requestId, VERSION, announced, local.publicKey(), qp.localInfo());
      } catch (IOException e) {
        throw refusalOr(e, frames);
      }
      Frame f = frames.next();
      if (f.type() == MessageType.ERROR) {
        throw refusal(f);
      }
      HelloAckFlyweight ack = f.expect(MessageType.HELLO_ACK).helloAck();
      if (ack.version() != VERSION) {
        throw new ProtocolException(
            ProtocolException.Reason.UNSUPPORTED_VERSION, "host chose version " + ack.version());
      }
      byte[] sessionIdBytes = ack.sessionId();
      ConnectionInfo hostInfo = ack.connectionInfo();
      String forged = responder.refusal(hostInfo);
      if (forged != null) {
        // refused from the bytes alone, before the queue pair connects anywhere (request forgery)
        throw new ProtocolException(ProtocolException.Reason.BAD_VALUE, forged);
      }
      int shared = Capabilities.checkAnswer(announced, ack.capabilities());
      TlsBinding.Kind kind = Capabilities.bindingKind(shared);
      int hostReceives = ack.receiveDepth(); // validated: 1.. when shared, else 0
      KeySchedule schedule;
      try (TlsBinding binding = peer.binding(Role.INITIATOR, kind)) {
        schedule =
            KeySchedule.builder()
                .role(Role.INITIATOR)
                .localKey(local)
                .peerPublicKey(ack.publicKey())
                .binding(binding)
                .sessionId(sessionIdBytes)
                .initiatorQpn(qp.qpn())
                .responderQpn(hostInfo.qpn())
                .establish();
      }
      boolean credits = (shared & Capabilities.RECEIVE_CREDITS) != 0;
      try {
        try {
          if (credits) {
            proxy.creditWord(creditWord.address(), creditWord.rkey());
          }
          proxy.keyConfirm(0, 0, schedule.current().confirmation());
        } catch (IOException e) {
          throw refusalOr(e, frames);
        }
        Frame confirm = frames.next();
        if (confirm.type() == MessageType.ERROR) {
          throw refusal(confirm);
        }
        schedule
            .current()
            .verifyPeerConfirmation(
                confirm.expect(MessageType.KEY_CONFIRM).keyConfirm().confirmation());
        qp.readyToReceive(hostInfo);
        qp.readyToSend();
      } catch (IOException | RuntimeException e) {
        schedule.close();
        throw e;
      }
      return new Established(
          schedule,
          HexFormat.of().formatHex(sessionIdBytes),
          kind,
          hostReceives,
          credits,
          (shared & Capabilities.RECORD_RUNS) != 0);
    }
  }

  /**
   * A write to the host failed: a host that refuses (quota, rate limit) sends its ERROR and closes
   * without reading what this client sent meanwhile, so the write may fail on the reset connection
   * while the host's reason already arrived. That reason is what the caller sees; else the write's
   * failure.
   */
  private static IOException refusalOr(IOException writeFailure, Frames frames) {
    Frame f;
    try {
      f = frames.next(); // bounded: the failed connection closes, or the frame is here
    } catch (IOException | RuntimeException e) {
      writeFailure.addSuppressed(e);
      return writeFailure;
    }
    if (f.type() == MessageType.ERROR) {
      throw refusal(f);
    }
    return writeFailure;
  }

  /** The host's ERROR frame as the exception a caller of connect sees. */
  static ChannelException refusal(Frame f) {
    ErrorCode code = f.error().code();
    ChannelException.Reason reason =
        switch (code) {
          case QUOTA_EXCEEDED, RATE_LIMITED -> ChannelException.Reason.QUOTA_EXCEEDED;
          case KEY_CONFIRMATION_FAILED -> ChannelException.Reason.AUTHENTICATION_FAILED;
          case TIMEOUT -> ChannelException.Reason.TIMEOUT;
          case SHUTTING_DOWN -> ChannelException.Reason.SESSION_CLOSED;
          default -> ChannelException.Reason.PROTOCOL;
        };
    return new ChannelException(reason, code.name(), "host refused: " + f.error().text(), null);
  }
}
