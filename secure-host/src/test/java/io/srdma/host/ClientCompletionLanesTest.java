package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.WriteResult;
import io.srdma.verbs.WcStatus;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The clients of a process share a few completion lanes (one completion queue and one poller thread
 * {@code srdma-client-cq-<k>} each): every client still gets exactly its own completions, nothing
 * is lost when one client leaves while others write, and the lane threads stop with the last
 * client.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ClientCompletionLanesTest {
  /** Each client writes in its own 64 KiB of the region, each record at its own offset. */
  private static final int SHARE = 64 * 1024;

  private static final int STRIDE = 256;
  private static final int PAYLOAD = 64;

  @TempDir Path dir;

  static List<String> laneThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(n -> n.startsWith("srdma-client-cq-"))
        .sorted()
        .toList();
  }

  /** What one client's write completion handler was told. */
  static final class Completions {
    final ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
    volatile long last;
    volatile int calls;

    void install(SecureRdmaClient c, String name) {
      c.onWritesCompleted(
          (position, status) -> {
            calls++;
            if (status != WcStatus.SUCCESS) {
              problems.add(name + ": status " + status + " at " + position);
            }
            if (position <= last) {
              problems.add(name + ": position " + position + " after " + last);
            }
            if (position > c.postedPosition()) {
              problems.add(name + ": position " + position + " past posted " + c.postedPosition());
            }
            last = position;
          });
    }
  }

  /** Writes {@code records} records of client {@code index} (its index in every payload byte 0). */
  private static long writeAll(
      SecureRdmaClient c, RemoteGrant g, int index, int records, boolean poll, AtomicBoolean stop) {
    ByteBuffer data = ChannelRig.bytes(PAYLOAD, index);
    data.put(0, (byte) index);
    long last = 0;
    for (int i = 0; i < records && !stop.get(); i++) {
      long p = g.tryWrite((long) i * STRIDE, data, 0, PAYLOAD);
      while (p == WriteResult.BACK_PRESSURED) {
        if (poll) {
          c.pollCompletions(); // may handle the other clients' completions of the lane too
        } else {
          Thread.onSpinWait();
        }
        p = g.tryWrite((long) i * STRIDE, data, 0, PAYLOAD);
      }
      if (p < 0) {
        return p;
      }
      last = p;
    }
    return last;
  }

  private static long recordsOf(ChannelRig rig, int index) {
    return rig.acmeRecords.stream().filter(b -> b[0] == (byte) index).count();
  }

  @Test
  void clientsWritingAtOnceOnSharedLanesEachGetExactlyTheirOwnCompletions() throws Exception {
    int clients = 6;
    int records = 200;
    try (ChannelRig rig = new ChannelRig(dir)) {
      List<SecureRdmaClient> cs = new ArrayList<>();
      List<RemoteGrant> grants = new ArrayList<>();
      List<Completions> seen = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        SecureRdmaClient c =
            rig.track(
                SecureRdmaClient.connect(rig.options("acme", "trainer-lane-" + i).stagingSlots(8)));
        cs.add(c);
        grants.add(
            c.grant(
                "kvcache",
                EnumSet.of(Access.WRITE),
                (long) i * SHARE,
                SHARE,
                Duration.ofMinutes(1)));
        Completions s = new Completions();
        s.install(c, "client " + i);
        seen.add(s);
      }
      List<String> lanes = laneThreads();
      assertTrue(lanes.size() >= 1 && lanes.size() <= 2, "lane threads: " + lanes);
      AtomicBoolean stop = new AtomicBoolean();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      long[] lastPosted = new long[clients];
      List<Thread> writers = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        int k = i;
        Thread t =
            new Thread(
                () -> {
                  try {
                    lastPosted[k] =
                        writeAll(cs.get(k), grants.get(k), k, records, k % 2 == 0, stop);
                  } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                  }
                },
                "lane-writer-" + i);
        writers.add(t);
        t.start();
      }
      for (Thread t : writers) {
        t.join(60_000);
      }
      if (failure.get() != null) {
        throw new AssertionError(failure.get());
      }
      for (int i = 0; i < clients; i++) {
        SecureRdmaClient c = cs.get(i);
        Completions s = seen.get(i);
        long posted = lastPosted[i];
        assertTrue(posted > 0, "client " + i + ": " + WriteResult.name(posted));
        assertEquals(posted, c.postedPosition(), "client " + i);
        ChannelRig.await(() -> s.last == posted, "client " + i + "'s handler told of " + posted);
        assertEquals(posted, c.completedPosition(), "client " + i);
        assertTrue(s.problems.isEmpty(), s.problems.toString());
        assertNull(c.dataPathFailure(), "client " + i);
      }
      ChannelRig.await(
          () -> rig.acmeRecords.size() == clients * records,
          clients * records + " records opened, " + rig.host.stats());
      for (int i = 0; i < clients; i++) {
        assertEquals(records, recordsOf(rig, i), "records of client " + i);
      }
      assertTrue(laneThreads().size() <= 2, "lane threads: " + laneThreads());
    }
  }

  @Test
  void closingOneClientWhileOthersWriteLosesNothingForTheOthers() throws Exception {
    int clients = 4;
    int records = 240;
    try (ChannelRig rig = new ChannelRig(dir)) {
      List<SecureRdmaClient> cs = new ArrayList<>();
      List<RemoteGrant> grants = new ArrayList<>();
      List<Completions> seen = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        SecureRdmaClient c =
            rig.track(
                SecureRdmaClient.connect(rig.options("acme", "trainer-lane-" + i).stagingSlots(8)));
        cs.add(c);
        // client 0 writes until it is closed: the last 10 shares are its own
        long offset = i == 0 ? 6L * SHARE : (long) i * SHARE;
        long length = i == 0 ? 10L * SHARE : SHARE;
        grants.add(
            c.grant("kvcache", EnumSet.of(Access.WRITE), offset, length, Duration.ofMinutes(1)));
        Completions s = new Completions();
        s.install(c, "client " + i);
        seen.add(s);
      }
      AtomicBoolean stop = new AtomicBoolean();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      long[] lastPosted = new long[clients];
      List<Thread> writers = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        int k = i;
        Thread t =
            new Thread(
                () -> {
                  try {
                    // client 0 writes until it is closed under it
                    int n = k == 0 ? 10 * SHARE / STRIDE : records;
                    lastPosted[k] = writeAll(cs.get(k), grants.get(k), k, n, k == 1, stop);
                  } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                  }
                },
                "lane-writer-" + i);
        writers.add(t);
        t.start();
      }
      // close the first client while the others are in the middle of their writes
      ChannelRig.await(() -> cs.get(1).completedPosition() > 40, "the others write");
      cs.get(0).close();
      for (Thread t : writers) {
        t.join(60_000);
      }
      if (failure.get() != null) {
        throw new AssertionError(failure.get());
      }
      assertEquals(
          WriteResult.SESSION_CLOSED, lastPosted[0], "the closed client's writes end with it");
      for (int i = 1; i < clients; i++) {
        SecureRdmaClient c = cs.get(i);
        Completions s = seen.get(i);
        long posted = lastPosted[i];
        assertTrue(posted > 0, "client " + i + ": " + WriteResult.name(posted));
        ChannelRig.await(() -> s.last == posted, "client " + i + "'s handler told of " + posted);
        assertEquals(posted, c.completedPosition(), "client " + i);
        assertTrue(s.problems.isEmpty(), s.problems.toString());
        assertNull(c.dataPathFailure(), "client " + i);
      }
      ChannelRig.await(
          () -> recordsOf(rig, 1) + recordsOf(rig, 2) + recordsOf(rig, 3) == 3L * records,
          "the others' records opened, " + rig.host.stats());
      for (int i = 1; i < clients; i++) {
        assertEquals(records, recordsOf(rig, i), "records of client " + i);
      }
      // a client joining now shares the lanes and writes as well
      SecureRdmaClient late = rig.client("acme", "trainer-lane-late");
      RemoteGrant g =
          late.grant("kvcache", EnumSet.of(Access.WRITE), 5L * SHARE, SHARE, Duration.ofMinutes(1));
      g.writeBlocking(0, ChannelRig.bytes(PAYLOAD, 9));
      assertNull(late.dataPathFailure());
      assertTrue(laneThreads().size() <= 2, "lane threads: " + laneThreads());
    }
  }

  @Test
  void laneThreadsStopWithTheLastClient() throws Exception {
    Assumptions.assumeTrue(
        laneThreads().isEmpty(),
        "another test's client is still open in this JVM, holding the lanes: " + laneThreads());
    try (ChannelRig rig = new ChannelRig(dir)) {
      List<SecureRdmaClient> cs = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        cs.add(rig.client("acme", "trainer-lane-" + i));
      }
      List<String> running = laneThreads();
      assertTrue(!running.isEmpty() && running.size() <= 2, "lane threads: " + running);
      cs.get(0).close();
      cs.get(1).close();
      assertEquals(running, laneThreads(), "the lanes stay while a client is open");
      cs.get(2).close();
      // the last client's close joined them (bounded)
      ChannelRig.await(() -> laneThreads().isEmpty(), "lane threads stopped: " + laneThreads());
    }
  }
}
