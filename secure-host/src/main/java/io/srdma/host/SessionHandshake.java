package io.srdma.host;

import io.srdma.channel.protocol.Capabilities;
import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.CreditWordFlyweight;
import io.srdma.channel.protocol.ErrorCode;
import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.FrameWriter;
import io.srdma.channel.protocol.HelloFlyweight;
import io.srdma.channel.protocol.MessageType;
import io.srdma.channel.protocol.ProtocolException;
import io.srdma.channel.record.RecordOpener;
import io.srdma.keys.AuthenticatedPeer;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.KeySchedule;
import io.srdma.keys.Role;
import io.srdma.keys.TlsBinding;
import io.srdma.keys.X25519KeyPair;
import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.ReceiveWorkRequest;
import java.io.IOException;
import java.time.Instant;
import java.util.HexFormat;
import javax.net.ssl.SSLEngine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session's way in, on its strand: the verified TLS 1.3 peer and the session quota ({@link
 * #authenticate}), then HELLO ({@link #hello}: the X25519 key schedule bound to the TLS session and
 * the queue pair connected to the session's opener thread) and KEY_CONFIRM ({@link #confirm}, then
 * {@link #established} once the queue pair connected off the workers). The first-record and
 * handshake deadlines are the watchdog's ({@link HostSession#deadlineNanos}). What it makes is
 * stored in the {@link HostSession}, which frees it at its end.
 */
final class SessionHandshake {
  private static final Logger LOG = LoggerFactory.getLogger(SessionHandshake.class);
  static final int VERSION = 1;

  private final HostSession s;
  private final HostContext ctx;
  private ConnectionInfo clientInfo; // from HELLO, for KEY_CONFIRM
  private boolean creditsChosen; // RECEIVE_CREDITS shared in HELLO_ACK
  private boolean runsChosen; // RECORD_RUNS shared in HELLO_ACK
  private boolean creditWordSeen; // the client's CREDIT_WORD came: its address and rkey
  private long creditAddress;
  private int creditRkey;

  SessionHandshake(HostSession session) {
    this.s = session;
    this.ctx = session.ctx;
  }

  /**
   * Verifies the peer of a finished TLS handshake and takes a place in its tenant's session quota.
   *
   * @return false when the connection was refused (audited and counted)
   */
  boolean authenticate(SSLEngine engine) throws IOException {
    AuthenticatedPeer peer;
    try {
      peer = ctx.tls().authenticated(engine);
    } catch (KeyExchangeException e) {
      ctx.counters().authFailures.increment();
      ctx.limiter().failed(s.remote);
      s.audit.peerAuthenticated(
          null, null, false, e.reason() + " from " + s.remote.getHostAddress());
      return false;
    }
    s.authenticated(peer.certificate());
    s.identity = peer.identity().toUri();
    s.tenant = peer.identity().tenant();
    s.proxy = new ControlProxy(new FrameWriter(watched()));
    if (!ctx.tables().reserveSession(s.tenant)) {
      ctx.counters().quotaRefusals.increment();
      s.audit.accessViolation(s.identity, s.tenant, null, 0, 0, "session quota exceeded");
      s.sendError(ErrorCode.QUOTA_EXCEEDED, "session quota of tenant " + s.tenant + " reached");
      return false;
    }
    s.quotaHeld = true;
    s.peer = peer;
    return true;
  }

  private WatchedOutputStream watched() {
    WatchedOutputStream w = new WatchedOutputStream(s.connection().output());
    s.output = w;
    return w;
  }

  /** HELLO: keys and queue pair; answers HELLO_ACK. */
  void hello(Frame helloFrame) throws IOException {
    helloFrame.expect(MessageType.HELLO);
    HelloFlyweight hello = helloFrame.hello();
    if (hello.maxVersion() < VERSION) {
      throw new ProtocolException(
          ProtocolException.Reason.UNSUPPORTED_VERSION,
          "client's highest version " + hello.maxVersion() + " is below " + VERSION);
    }
    clientInfo = hello.connectionInfo();
    String forged = ctx.responderAddresses().refusal(clientInfo, s.remote);
    if (forged != null) {
      // refused from the bytes alone, before any connection attempt: the same frame and timing
      // whatever listens at the named address
      ctx.counters().responderRefusals.increment();
      s.refusalDetail = forged;
      throw new ProtocolException(ProtocolException.Reason.BAD_VALUE, forged);
    }
    byte[] clientKey = hello.publicKey();
    int shared = Capabilities.shared(hello.capabilities());
    s.domain = ctx.tables().domain(s.tenant);
    creditsChosen = (shared & Capabilities.RECEIVE_CREDITS) != 0;
    runsChosen = (shared & Capabilities.RECORD_RUNS) != 0;
    s.sendCq = ctx.device().createCompletionQueue(16);
    // one session, one opener: every receive of this queue pair completes on its queue
    s.opener = ctx.openers().assign();
    int depth = ctx.receiveDepth();
    QueuePair qp =
        s.domain.pd.createQueuePair(
            new QueuePairAttributes(s.sendCq, s.opener.queue(), 16, depth, 1, 1));
    s.qp = qp;
    s.sendQueue = new SessionSendQueue(s.sendCq);
    qp.init(AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
    ReceiveWorkRequest receive = new ReceiveWorkRequest(1);
    for (int i = 0; i < depth; i++) {
      qp.postReceive(receive.wrId(i));
    }
    byte[] sessionId = new byte[16];
    ctx.random().nextBytes(sessionId);
    s.hexId = HexFormat.of().formatHex(sessionId);
    KeySchedule schedule;
    try (X25519KeyPair local = X25519KeyPair.generate(ctx.random());
        TlsBinding binding = s.peer.binding(Role.RESPONDER, Capabilities.bindingKind(shared))) {
      byte[] publicKey = local.publicKey();
      schedule =
          KeySchedule.builder()
              .role(Role.RESPONDER)
              .localKey(local)
              .peerPublicKey(clientKey)
              .binding(binding)
              .sessionId(sessionId)
              .initiatorQpn(clientInfo.qpn())
              .responderQpn(qp.qpn())
              .establish();
      s.schedule = schedule;
      s.proxy.helloAck(
          helloFrame.requestId(),
          VERSION,
          shared,
          (shared & Capabilities.RECEIVE_DEPTH) != 0 ? depth : 0,
          publicKey,
          sessionId,
          qp.localInfo());
    }
  }

  /**
   * CREDIT_WORD, between HELLO_ACK and the client's KEY_CONFIRM when receive credits were chosen:
   * where the host writes them.
   *
   * @return false when {@code f} is another frame (for {@link #confirm})
   * @throws ProtocolException a CREDIT_WORD the host did not ask for, or a second one
   */
  boolean creditWord(Frame f) {
    if (f.type() != MessageType.CREDIT_WORD) {
      return false;
    }
    if (!creditsChosen || creditWordSeen) {
      throw new ProtocolException(
          ProtocolException.Reason.UNEXPECTED_TYPE,
          creditsChosen
              ? "a second CREDIT_WORD"
              : "CREDIT_WORD without RECEIVE_CREDITS chosen in HELLO_ACK");
    }
    CreditWordFlyweight word = f.creditWord(); // validated: 4-byte aligned
    creditAddress = word.address();
    creditRkey = word.rkey();
    creditWordSeen = true;
    return true;
  }

  /**
   * KEY_CONFIRM: checks the peer's confirmation and readies the queue pair to receive; the session
   * then connects it ({@link QueuePair#readyToSend}, on the host's {@link QueuePairConnector}: on
   * the soft provider a TCP connect to the responder the peer named) and calls {@link
   * #established}.
   */
  void confirm(Frame confirm) throws IOException {
    confirm.expect(MessageType.KEY_CONFIRM);
    if (creditsChosen && !creditWordSeen) {
      throw new ProtocolException(
          ProtocolException.Reason.UNEXPECTED_TYPE,
          "KEY_CONFIRM before CREDIT_WORD (RECEIVE_CREDITS was chosen in HELLO_ACK)");
    }
    KeySchedule schedule = s.schedule;
    QueuePair qp = s.qp;
    if (confirm.keyConfirm().epoch() != 0) {
      throw new ProtocolException(
          ProtocolException.Reason.BAD_VALUE, "first key confirmation must be for epoch 0");
    }
    schedule.current().verifyPeerConfirmation(confirm.keyConfirm().confirmation());
    if (creditWordSeen) {
      s.credits =
          new ReceiveCredits(
              s.domain.pd,
              qp,
              s.sendQueue,
              creditAddress,
              creditRkey,
              ctx.receiveDepth(),
              ctx.counters().receiveCreditWrites);
    }
    RecordReceiver receiver =
        new RecordReceiver(
            s,
            RecordOpener.forSchedule(
                schedule, ctx.options().maxRecordPayload(), s.opener.workspace()),
            schedule,
            qp,
            s.credits,
            runsChosen);
    s.receiver = receiver;
    s.opener.attach(qp.qpn(), receiver);
    qp.readyToReceive(clientInfo);
  }

  /** The queue pair is ready to send: confirms in turn; the session is established. */
  void established() throws IOException {
    KeySchedule schedule = s.schedule;
    QueuePair qp = s.qp;
    s.proxy.keyConfirm(0, 0, schedule.current().confirmation());
    s.since = Instant.now();
    s.establishedNanos = System.nanoTime();
    s.established();
    ctx.counters().sessionsOpened.increment();
    s.audit.peerAuthenticated(s.identity, s.tenant, true, "session " + s.hexId);
    LOG.info(
        "session {} established: {} (QP 0x{})", s.hexId, s.identity, Integer.toHexString(qp.qpn()));
  }
}
