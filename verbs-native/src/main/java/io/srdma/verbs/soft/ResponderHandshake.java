package io.srdma.verbs.soft;

import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.QpState;
import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A {@link Responder}'s first two phases: reading the peer's HELLO and waiting for the QP it names
 * to reach RTR, then checking the HELLO against the peer that QP was given before taking the QP's
 * one responder slot. Until then the connection counts as a pending handshake (bounded by the
 * context) and cannot fail the QP. One per responder; {@link #hello} and {@link #awaitRtr} run on
 * its driver's thread, {@link #evict} on the acceptor's, {@link #finished} on either.
 */
final class ResponderHandshake {
  private final Responder r;
  private final SoftDeviceContext ctx;
  private final SocketChannel channel;
  private final ReadAhead readAhead;
  private final RequestFlyweight request;
  private final ResponderTx tx;

  /** The QP a HELLO named, until the HELLO is checked against its peer and it is attached. */
  private SoftQueuePair candidate;

  /** The HELLO was answered before the QP reached RTR (so before it was checked). */
  private boolean helloAcked;

  // What the HELLO says of its sender: its starting PSN and its QPN.
  private int peerPsn;
  private int peerQpn;

  /**
   * Still owes its handshake (counted in the context's pending handshakes); cleared once, by this
   * responder or by the acceptor evicting it ({@link #evict}).
   */
  private final AtomicBoolean handshakeOpen = new AtomicBoolean(true);

  ResponderHandshake(
      Responder r,
      SoftDeviceContext ctx,
      SocketChannel channel,
      ReadAhead readAhead,
      RequestFlyweight request,
      ResponderTx tx) {
    this.r = r;
    this.ctx = ctx;
    this.channel = channel;
    this.readAhead = readAhead;
    this.request = request;
    this.tx = tx;
  }

  boolean hello() throws IOException {
    if (readAhead.remaining() < RequestFlyweight.LENGTH) {
      if (readAhead.read(channel) > 0) {
        return true;
      }
      if (Responder.passed(r.deadline)) {
        Responder.LOG.debug(
            "soft responder {}: no HELLO in time from {}", ctx.device().name(), r.remoteName());
        r.terminate();
        return false;
      }
      return r.waitFor(SelectionKey.OP_READ, r.deadline);
    }
    request.wrap(readAhead.buffer(), readAhead.buffer().position());
    if (request.version() != RequestFlyweight.VERSION
        || request.opcode() != RequestFlyweight.OP_HELLO
        || request.address() != RequestFlyweight.HELLO_MAGIC
        || !request.reservedZero()) {
      throw new Responder.MalformedException("not a HELLO frame");
    }
    int dst = request.rkey();
    peerQpn = request.imm();
    peerPsn = request.psn();
    readAhead.consume(RequestFlyweight.LENGTH);
    SoftQueuePair found = ctx.qps().get(dst);
    if (found == null) {
      return refuseHello(ResponseFlyweight.HELLO_NAK_NO_QP);
    }
    // Not attached yet: anyone on the port may name a QPN, so the QP's one responder slot is
    // taken only once the HELLO matches the peer the QP was given at RTR. Until then this
    // connection still counts as a pending handshake (bounded) and cannot fail the QP. A QP not
    // in RTR yet is answered at once (its peer's RTS must not wait for our RTR: the sealed
    // channel's client reaches RTR only after the host's RTS); a stranger's connection is then
    // dropped at RTR, unattached.
    candidate = found;
    QpState s = found.state();
    if (s == QpState.RESET || s == QpState.INIT) {
      tx.stage(ResponseFlyweight.TYPE_HELLO_ACK, (byte) 0, 0, 0);
      helloAcked = true;
    }
    r.phase = Responder.AWAIT_RTR;
    return true;
  }

  /**
   * Refuses a HELLO that cannot attach: a NAK when it was not answered yet, else (answered before
   * the QP's RTR) the connection is just dropped.
   */
  private boolean rejectHello(byte syndrome) {
    if (helloAcked) {
      r.terminate();
      return false;
    }
    return refuseHello(syndrome);
  }

  /** Answers a HELLO with a NAK and drops the connection; the named QP is left as it is. */
  private boolean refuseHello(byte syndrome) {
    finished();
    tx.stage(ResponseFlyweight.TYPE_HELLO_NAK, syndrome, 0, 0);
    return r.closeAfterTx(false);
  }

  /** Ends this connection's pending handshake; false if it had ended already (or was evicted). */
  boolean finished() {
    if (handshakeOpen.compareAndSet(true, false)) {
      ctx.handshakeDone(r);
      return true;
    }
    return false;
  }

  /**
   * Drops this connection if it still owes its handshake (acceptor thread, when too many do): it is
   * then no longer counted, and it never attaches to a queue pair.
   *
   * @return false when its handshake had ended (it is left alone)
   */
  boolean evict() {
    if (!handshakeOpen.compareAndSet(true, false)) {
      return false;
    }
    ctx.handshakeDone(r);
    r.close();
    return true;
  }

  boolean awaitRtr() throws IOException {
    SoftQueuePair q = candidate;
    QpState s = q.state();
    if (s == QpState.RESET || s == QpState.INIT) {
      if (Responder.passed(r.deadline)) {
        Responder.LOG.debug(
            "soft responder {}: QP 0x{} did not reach RTR in time for the HELLO from {}",
            ctx.device().name(),
            Integer.toHexString(q.qpn()),
            r.remoteName());
        r.terminate();
        return false;
      }
      return r.park(r.deadline);
    }
    if (s != QpState.RTR && s != QpState.RTS) {
      return rejectHello(ResponseFlyweight.HELLO_NAK_BUSY);
    }
    ConnectionInfo remote = q.remote();
    if (remote.qpn() != peerQpn || remote.psn() != peerPsn) {
      // Not the QP's peer: refused as if the QP did not exist (no oracle), and the QP is left
      // alone (a stranger who knows a QPN must not fail it).
      if (ctx.malformedConnection()) {
        Responder.LOG.warn(
            "soft responder {}: refusing a HELLO from {} that names a QP whose peer it is not"
                + " ({} such connections so far)",
            ctx.device().name(),
            r.remoteName(),
            ctx.malformedConnections());
      }
      return rejectHello(ResponseFlyweight.HELLO_NAK_NO_QP);
    }
    if (!finished()) {
      r.terminate(); // evicted by the acceptor meanwhile (flood guard)
      return false;
    }
    if (!q.attachResponder(r)) {
      return rejectHello(ResponseFlyweight.HELLO_NAK_BUSY);
    }
    candidate = null;
    if (!helloAcked) {
      tx.stage(ResponseFlyweight.TYPE_HELLO_ACK, (byte) 0, 0, 0);
    }
    return r.attached(q, peerPsn);
  }
}
