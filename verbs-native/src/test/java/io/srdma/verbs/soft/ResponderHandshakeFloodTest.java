package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.VerbsTestRig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * MAX_PENDING_HANDSHAKES idle sockets from anyone (no HELLO, re-opened every transport timeout)
 * make the acceptor close every new connection unheard, so no real peer's requester can connect:
 * all new sessions of a host fail at modify_qp(RTS). Now the oldest pending connection is dropped
 * for a new one instead (found by an audit).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ResponderHandshakeFloodTest {
  @Test
  void shouldStillConnectARealPeerWhileStrangersHoldIdleConnections() throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      InetSocketAddress responder = ((SoftDeviceContext) rig.ctxB).responderAddress();
      List<SocketChannel> flood = new ArrayList<>();
      try {
        for (int i = 0; i < SoftDeviceContext.MAX_PENDING_HANDSHAKES; i++) {
          flood.add(SocketChannel.open(responder)); // never says HELLO
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
        CompletionQueue cqX = rig.track(rig.ctxA.createCompletionQueue(16));
        CompletionQueue cqV = rig.track(rig.ctxB.createCompletionQueue(16));
        QueuePair x = rig.track(rig.pdA.createQueuePair(QueuePairAttributes.of(cqX, 4, 1)));
        QueuePair v = rig.track(rig.pdB.createQueuePair(QueuePairAttributes.of(cqV, 4, 1)));
        assertDoesNotThrow(
            () -> VerbsTestRig.connect(v, AccessFlags.REMOTE_WRITE, x, AccessFlags.REMOTE_WRITE),
            "idle sockets from anyone lock every real peer out of the responder");
      } finally {
        for (SocketChannel ch : flood) {
          ch.close();
        }
      }
    }
  }
}
