package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.WrOpcode;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * With {@link SoftDeviceContext#POLLER_DRIVES_PROP_NAME} set, the thread polling a QP's receive CQ
 * executes that QP's incoming requests itself (no hand-off from the responder thread); when nobody
 * polls, the responder loop alone still serves the QP. Without it, only the loop executes them.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PollerDrivesResponderTest {
  private static final int ROUNDS = 200;
  private static final int RW = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE;

  /** A rig whose device contexts opened with the switch {@code on} or off. */
  private static VerbsTestRig open(boolean on) {
    String before = System.getProperty(SoftDeviceContext.POLLER_DRIVES_PROP_NAME);
    System.setProperty(SoftDeviceContext.POLLER_DRIVES_PROP_NAME, String.valueOf(on));
    try {
      return VerbsTestRig.open();
    } finally {
      if (before == null) {
        System.clearProperty(SoftDeviceContext.POLLER_DRIVES_PROP_NAME);
      } else {
        System.setProperty(SoftDeviceContext.POLLER_DRIVES_PROP_NAME, before);
      }
    }
  }

  /** Runs ROUNDS WRITE_WITH_IMMs, awaiting each receive; how many the awaiting thread pushed. */
  private static int roundsPushedByPoller(VerbsTestRig rig) {
    SoftCompletionQueue cqB = softCq(rig);
    MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
    MemoryRegion dst = rig.register(rig.pdB, 64, RW);
    int byPoller = 0;
    for (int i = 0; i < ROUNDS; i++) {
      rig.qpB.postReceive(new ReceiveWorkRequest(1).wrId(i));
      writeImm(rig, src, dst, i);
      WorkCompletion recv = rig.expect(rig.cqB, WcStatus.SUCCESS, i);
      assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, recv.opcode());
      assertEquals(i, recv.immData());
      if (cqB.lastPusher() == Thread.currentThread()) {
        byPoller++;
      }
      rig.expect(rig.cqA, WcStatus.SUCCESS, i);
    }
    return byPoller;
  }

  private static SoftCompletionQueue softCq(VerbsTestRig rig) {
    assumeTrue(
        rig.cqB instanceof SoftCompletionQueue,
        "needs the soft provider (srdma.test.provider=soft)");
    return (SoftCompletionQueue) rig.cqB;
  }

  private static void writeImm(VerbsTestRig rig, MemoryRegion src, MemoryRegion dst, long wrId) {
    SendWorkRequest wr =
        new SendWorkRequest(1)
            .wrId(wrId)
            .opcode(WrOpcode.RDMA_WRITE_WITH_IMM)
            .remote(dst.address(), dst.rkey())
            .immData((int) wrId);
    wr.sgl().set(src, 0, 64);
    rig.qpA.postSend(wr);
  }

  @Test
  void shouldPushReceiveCompletionOnThePollingThreadWhenOnePolls() {
    try (VerbsTestRig rig = open(true)) {
      // Both the loop and the poller watch the connection; the poller must win some of the time
      // (172-174 of 200 on the loaded 2-CPU development VM).
      int byPoller = roundsPushedByPoller(rig);
      assertTrue(
          byPoller > 0,
          () -> "no receive completion of " + ROUNDS + " was pushed by the thread awaiting it");
    }
  }

  @Test
  void shouldLeaveExecutionToTheResponderThreadsWhenSwitchedOff() {
    try (VerbsTestRig rig = open(false)) {
      assertEquals(0, roundsPushedByPoller(rig), "receive completions pushed by the poller");
    }
  }

  @Test
  void shouldServeAQueuePairWhoseReceiveQueueNobodyPolls() {
    try (VerbsTestRig rig = open(true)) {
      SoftCompletionQueue cqB = softCq(rig);
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 64, RW);
      for (int i = 0; i < 20; i++) {
        rig.qpB.postReceive(new ReceiveWorkRequest(1).wrId(i));
        writeImm(rig, src, dst, i);
        // The ACK follows the execution: once the send completes, the receive completion is in.
        rig.expect(rig.cqA, WcStatus.SUCCESS, i);
        Thread pusher = cqB.lastPusher();
        assertTrue(
            pusher != null && pusher.getName().startsWith("srdma-soft-resp-"),
            () -> "receive completion pushed by " + pusher + ", not a responder loop");
        rig.expect(rig.cqB, WcStatus.SUCCESS, i);
      }
    }
  }

  @Test
  void shouldSurviveQueuePairCloseWhileAnotherThreadPolls() throws Exception {
    VerbsTestRig rig = open(true);
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread poller =
        new Thread(
            () -> {
              WorkCompletion[] out = {new WorkCompletion(), new WorkCompletion()};
              try {
                while (!stop.get()) {
                  rig.cqB.await(out, Duration.ofMillis(5));
                }
              } catch (Throwable t) {
                failure.set(t);
              }
            },
            "test-poller");
    try {
      softCq(rig);
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 64, RW);
      for (int i = 0; i < 64; i++) {
        rig.qpB.postReceive(new ReceiveWorkRequest(1).wrId(i));
      }
      poller.start();
      for (int i = 0; i < 32; i++) {
        writeImm(rig, src, dst, i);
      }
      // Close the receiving QP mid-stream while the poller may be executing its requests.
      rig.qpB.close();
      for (int i = 0; i < 32; i++) {
        rig.awaitOne(rig.cqA); // success before the close, flushed or failed after: no hang
      }
    } finally {
      stop.set(true);
      poller.join(TimeUnit.SECONDS.toMillis(10));
      rig.close();
    }
    assertNull(failure.get(), () -> "poller failed: " + failure.get());
  }
}
