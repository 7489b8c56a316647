package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.QpState;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Only its READ RESPONSE, of exactly the requested length, completes an RDMA READ: a responder
 * (here a fake one, scripted by the test) that answers a READ with a plain ACK, with an ACK or NAK
 * for a later request, with the data of another READ or of the wrong length, fails the QP with
 * BAD_RESP_ERR, and no byte lands in the READ's buffer.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostileReadResponseTest {
  private static final int SIZE = 64;
  private static final byte STALE = 0x55;
  private static final byte DATA = 0x77;

  /** A fresh QP on the rig's device A connected to a fake responder, and a READ target. */
  static final class Victim implements AutoCloseable {
    final VerbsTestRig rig = VerbsTestRig.open();
    final CompletionQueue cq = rig.track(rig.ctxA.createCompletionQueue(64));
    final SoftQueuePair qp =
        (SoftQueuePair) rig.track(rig.pdA.createQueuePair(QueuePairAttributes.of(cq, 16, 4)));
    final MemoryRegion dst = rig.register(rig.pdA, SIZE, AccessFlags.LOCAL_WRITE);
    final MemoryRegion src = rig.register(rig.pdA, SIZE, 0);
    final FakeResponder fake;

    Victim() throws Exception {
      ByteBuffer b = dst.buffer();
      for (int i = 0; i < SIZE; i++) {
        b.put(i, STALE);
      }
      fake = FakeResponder.connect(qp);
    }

    void read(long wrId, int offset, int length) {
      rig.read(qp, wrId, dst, offset, length, 0x1000, 0x1234);
    }

    void write(long wrId) {
      rig.write(qp, wrId, src, 0, SIZE, 0x1000, 0x1234);
    }

    /** The READ target still holds only what it held before the READ. */
    void assertUntouched() {
      VerbsTestRig.assertAll(dst, 0, SIZE, STALE);
    }

    @Override
    public void close() throws Exception {
      try {
        fake.close();
      } finally {
        rig.close();
      }
    }
  }

  @Test
  void shouldFailAReadThatAPlainAckAnswers() throws Exception {
    try (Victim v = new Victim()) {
      v.read(1, 0, SIZE);
      v.fake.ack(v.fake.next().psn());
      v.rig.expect(v.cq, WcStatus.BAD_RESP_ERR, 1);
      VerbsTestRig.awaitState(v.qp, QpState.ERROR);
      v.assertUntouched();
    }
  }

  @Test
  void shouldFailAReadThatAnAckForALaterRequestPasses() throws Exception {
    try (Victim v = new Victim()) {
      v.read(1, 0, SIZE);
      v.write(2);
      v.fake.next();
      v.fake.ack(v.fake.next().psn());
      v.rig.expect(v.cq, WcStatus.BAD_RESP_ERR, 1);
      v.rig.expect(v.cq, WcStatus.WR_FLUSH_ERR, 2);
      v.assertUntouched();
    }
  }

  @Test
  void shouldFailAReadThatANakForALaterRequestPasses() throws Exception {
    try (Victim v = new Victim()) {
      v.read(1, 0, SIZE);
      v.write(2);
      v.fake.next();
      v.fake.nak(v.fake.next().psn(), WcStatus.REM_ACCESS_ERR.code());
      v.rig.expect(v.cq, WcStatus.BAD_RESP_ERR, 1);
      v.rig.expect(v.cq, WcStatus.WR_FLUSH_ERR, 2);
      v.assertUntouched();
    }
  }

  @Test
  void shouldFailAReadThatANakWithTheSuccessSyndromeAnswers() throws Exception {
    try (Victim v = new Victim()) {
      v.read(1, 0, SIZE);
      v.fake.nak(v.fake.next().psn(), WcStatus.SUCCESS.code());
      v.rig.expect(v.cq, WcStatus.BAD_RESP_ERR, 1);
      v.assertUntouched();
    }
  }

  @Test
  void shouldRefuseTheDataOfALaterReadWhileAnEarlierOneWaits() throws Exception {
    try (Victim v = new Victim()) {
      v.read(1, 0, SIZE / 2);
      v.read(2, SIZE / 2, SIZE / 2);
      v.fake.next();
      v.fake.readResponse(v.fake.next().psn(), SIZE / 2, DATA);
      v.rig.expect(v.cq, WcStatus.BAD_RESP_ERR, 1);
      v.rig.expect(v.cq, WcStatus.WR_FLUSH_ERR, 2);
      v.assertUntouched();
    }
  }

  @Test
  void shouldRefuseReadDataForAWrite() throws Exception {
    try (Victim v = new Victim()) {
      v.write(1);
      v.fake.readResponse(v.fake.next().psn(), SIZE, DATA);
      v.rig.expect(v.cq, WcStatus.BAD_RESP_ERR, 1);
    }
  }

  @Test
  void shouldRefuseMoreReadDataThanRequested() throws Exception {
    try (Victim v = new Victim()) {
      v.read(1, SIZE / 4, SIZE / 2);
      v.fake.readResponse(v.fake.next().psn(), SIZE, DATA);
      v.rig.expect(v.cq, WcStatus.BAD_RESP_ERR, 1);
      v.assertUntouched();
    }
  }

  @Test
  void shouldRefuseLessReadDataThanRequested() throws Exception {
    try (Victim v = new Victim()) {
      v.read(1, 0, SIZE);
      v.fake.readResponse(v.fake.next().psn(), SIZE / 2, DATA);
      v.rig.expect(v.cq, WcStatus.BAD_RESP_ERR, 1);
      v.assertUntouched();
    }
  }

  @Test
  void shouldRefuseReadDataForNoOutstandingRead() throws Exception {
    try (Victim v = new Victim()) {
      v.read(1, 0, SIZE);
      int psn = v.fake.next().psn();
      v.fake.readResponse((psn + 1) & 0xFFFFFF, SIZE, DATA);
      v.rig.expect(v.cq, WcStatus.BAD_RESP_ERR, 1);
      v.assertUntouched();
    }
  }

  @Test
  void shouldPlaceNothingThatArrivesAfterTheQueuePairFailed() throws Exception {
    try (Victim v = new Victim()) {
      v.read(1, 0, SIZE);
      int psn = v.fake.next().psn();
      v.qp.toError();
      v.rig.expect(v.cq, WcStatus.WR_FLUSH_ERR, 1);
      try {
        v.fake.readResponse(psn, SIZE, DATA);
      } catch (IOException reset) {
        // the requester closed the connection already
      }
      assertTrue(v.fake.closedByRequester());
      v.assertUntouched();
    }
  }

  @Test
  void shouldPlaceNoReadDataInARegionClosedWhileTheReadWaits() throws Exception {
    try (Victim v = new Victim()) {
      v.write(1);
      v.read(2, 0, SIZE);
      v.write(3);
      v.fake.next();
      int psn = v.fake.next().psn();
      v.dst.close(); // deregistered: its memory is the application's again
      v.fake.readResponse(psn, SIZE, DATA);
      // as rxe does: the lkey no longer resolves when the data arrives
      v.rig.expect(v.cq, WcStatus.SUCCESS, 1);
      v.rig.expect(v.cq, WcStatus.LOC_PROT_ERR, 2);
      v.rig.expect(v.cq, WcStatus.WR_FLUSH_ERR, 3);
      VerbsTestRig.awaitState(v.qp, QpState.ERROR);
      v.assertUntouched();
    }
  }

  @Test
  void shouldReportNoReadWhoseDataIsStillBeingPlacedWhenTheQueuePairFails() throws Exception {
    try (Victim v = new Victim()) {
      v.read(1, 0, SIZE);
      int psn = v.fake.next().psn();
      SoftMemoryRegion dst = (SoftMemoryRegion) v.dst;
      Thread failer = new Thread(v.qp::toError, "toError");
      WorkCompletion[] early = {new WorkCompletion()};
      int seen;
      synchronized (dst.accessLock()) {
        // The thread reading the response (the device's timer) stops right before placing it.
        v.fake.readResponse(psn, SIZE, DATA);
        awaitBlockedOn(dst.accessLock());
        failer.start();
        while (failer.getState() == Thread.State.NEW
            || failer.getState() == Thread.State.RUNNABLE) {
          LockSupport.parkNanos(1_000_000);
        }
        seen = v.cq.poll(early);
      }
      assertEquals(0, seen, () -> "completed while its data was still being placed: " + early[0]);
      failer.join();
      v.rig.expectAny(v.cq, 1, WcStatus.WR_FLUSH_ERR, WcStatus.SUCCESS);
    }
  }

  /** Waits until some thread is blocked entering {@code lock}'s monitor. */
  private static void awaitBlockedOn(Object lock) {
    int id = System.identityHashCode(lock);
    long deadline = System.nanoTime() + VerbsTestRig.COMPLETION_WAIT.toNanos();
    while (true) {
      for (ThreadInfo t : ManagementFactory.getThreadMXBean().dumpAllThreads(false, false)) {
        if (t.getThreadState() == Thread.State.BLOCKED
            && t.getLockInfo() != null
            && t.getLockInfo().getIdentityHashCode() == id) {
          return;
        }
      }
      assertTrue(System.nanoTime() < deadline, "nobody came to place the READ's data");
      LockSupport.parkNanos(1_000_000);
    }
  }

  @Test
  void shouldCompleteAReadByItsResponseAndTheRequestsBeforeIt() throws Exception {
    try (Victim v = new Victim()) {
      v.write(1);
      v.read(2, 0, SIZE / 2);
      v.write(3);
      v.read(4, SIZE / 2, SIZE / 2);
      v.fake.ack(v.fake.next().psn());
      int firstRead = v.fake.next().psn();
      v.fake.next();
      int secondRead = v.fake.next().psn();
      v.fake.readResponse(firstRead, SIZE / 2, DATA);
      // the second READ's response acknowledges the WRITE before it too
      v.fake.readResponse(secondRead, SIZE / 2, (byte) (DATA + 1));
      for (long wrId = 1; wrId <= 4; wrId++) {
        v.rig.expect(v.cq, WcStatus.SUCCESS, wrId);
      }
      VerbsTestRig.assertAll(v.dst, 0, SIZE / 2, DATA);
      VerbsTestRig.assertAll(v.dst, SIZE / 2, SIZE, (byte) (DATA + 1));
      assertEquals(QpState.RTS, v.qp.state());
    }
  }

  @Test
  void shouldFailOnAResponseHeaderWithReservedBitsOrAnAckWithASyndrome() throws Exception {
    int[] offsets = {
      ResponseFlyweight.RESERVED1_OFFSET,
      ResponseFlyweight.RESERVED2_OFFSET + 3,
      ResponseFlyweight.SYNDROME_OFFSET
    };
    for (int at : offsets) {
      try (Victim v = new Victim()) {
        v.write(1);
        v.fake.ackWithHeaderByte(v.fake.next().psn(), at, (byte) 1);
        v.rig.expect(v.cq, WcStatus.BAD_RESP_ERR, 1);
        VerbsTestRig.awaitState(v.qp, QpState.ERROR);
      }
    }
  }
}
