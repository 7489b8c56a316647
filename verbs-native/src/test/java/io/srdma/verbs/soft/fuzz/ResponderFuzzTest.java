package io.srdma.verbs.soft.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import com.code_intelligence.jazzer.api.BugDetectors;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.api.SilentCloseable;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.WorkCompletion;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.slf4j.LoggerFactory;

/**
 * Coverage-guided fuzzing of the soft provider's responder, the software RNIC's request parser,
 * through its real entry point: bytes on a TCP connection to the device's responder port. Each
 * input is a fresh queue pair in RTR waiting for a fake peer, then a HELLO (valid, tweaked or raw)
 * and up to four requests (structured around a real registered region's address and rkey, or raw),
 * then more raw bytes, then the end of the stream. Invariants:
 *
 * <ul>
 *   <li>the responder ends the connection (drops it, or sees our end) within 10 s: no hang;
 *   <li>no responder thread dies of an exception (malformed input drops that connection only);
 *   <li>nothing outside the registered region changes (guard bytes on both sides of it);
 *   <li>the device keeps serving: the next input connects to the same responder.
 * </ul>
 *
 * <p>The request layout is the wire format in docs/verbs.md.
 */
class ResponderFuzzTest {
  private static final int PAGE = 4096;
  private static final byte GUARD = 0x5A;
  private static final long HELLO_MAGIC = 0x5352444D41534654L;
  private static final byte[] OPCODES = {1, 2, 3, 4, 5, 0x7F};
  private static final Queue<Throwable> UNCAUGHT = new ConcurrentLinkedQueue<>();

  private static DeviceContext ctx;
  private static ProtectionDomain pd;
  private static CompletionQueue cq;
  private static ByteBuffer backing;
  private static MemoryRegion region;
  private static MemoryRegion receiveBuffer;

  private static synchronized void init() {
    if (ctx != null) {
      return;
    }
    ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger("io.srdma.verbs.soft"))
        .setLevel(Level.ERROR);
    Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
    Thread.setDefaultUncaughtExceptionHandler(
        (t, e) -> {
          UNCAUGHT.add(new AssertionError("thread " + t.getName() + " died", e));
          if (previous != null) {
            previous.uncaughtException(t, e);
          }
        });
    ctx =
        RdmaProviders.firstDevice("soft")
            .open(
                new DeviceOptions()
                    .transportTimeout(Duration.ofMillis(500))
                    .rnrTimeout(Duration.ofMillis(10)));
    pd = ctx.allocateProtectionDomain();
    cq = ctx.createCompletionQueue(1024);
    backing = ByteBuffer.allocateDirect(3 * PAGE);
    for (int i = 0; i < backing.capacity(); i++) {
      backing.put(i, GUARD);
    }
    ByteBuffer middle = backing.duplicate().position(PAGE).limit(2 * PAGE).slice();
    region =
        pd.registerMemory(
            middle, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
    receiveBuffer = pd.registerMemory(ByteBuffer.allocateDirect(256), AccessFlags.LOCAL_WRITE);
  }

  @FuzzTest(maxDuration = "5m")
  void serveRequests(FuzzedDataProvider data) throws IOException {
    // the harness itself connects to the device's responder on loopback; without this, Jazzer's
    // SSRF detector (fuzzing mode) reports that connection. The responder only accepts.
    try (SilentCloseable allowed = BugDetectors.allowNetworkConnections()) {
      serve(data);
    }
  }

  private static void serve(FuzzedDataProvider data) throws IOException {
    init();
    assertNoUncaught();
    int peerQpn = data.consumeInt(1, 0xFFFFFF);
    int peerPsn = data.consumeInt(0, 0xFFFFFF);
    try (QueuePair qp = pd.createQueuePair(QueuePairAttributes.of(cq, 16, 1))) {
      qp.init(AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
      qp.readyToReceive(new ConnectionInfo(peerQpn, peerPsn, new byte[] {127, 0, 0, 1, 0, 1}));
      if (data.consumeBoolean()) {
        ReceiveWorkRequest recv = new ReceiveWorkRequest(1).wrId(1);
        recv.sgl().set(receiveBuffer, 0, data.consumeInt(0, 256));
        qp.postReceive(recv);
      }
      byte[] stream = input(data, qp, peerQpn, peerPsn);
      InetSocketAddress responder = responderOf(qp.localInfo());
      exchange(responder, stream);
    }
    drain();
    for (int i = 0; i < backing.capacity(); i++) {
      if (i == PAGE) {
        i = 2 * PAGE;
      }
      if (backing.get(i) != GUARD) {
        throw new AssertionError("byte " + i + " outside the registered region changed");
      }
    }
    assertNoUncaught();
  }

  /** HELLO, up to four requests, then raw bytes. */
  private static byte[] input(FuzzedDataProvider data, QueuePair qp, int peerQpn, int peerPsn) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteBuffer h = ByteBuffer.allocate(32);
    switch (data.consumeInt(0, 2)) {
      case 0 ->
          header(h, (byte) 1, (byte) 0x7F, (byte) 0, (byte) 0, peerPsn, 0, peerQpn)
              .putLong(HELLO_MAGIC)
              .putInt(qp.qpn())
              .putInt(0);
      case 1 ->
          header(
                  h,
                  data.consumeBoolean() ? 1 : data.consumeByte(),
                  (byte) 0x7F,
                  data.consumeBoolean() ? 0 : data.consumeByte(),
                  data.consumeBoolean() ? 0 : data.consumeByte(),
                  data.consumeBoolean() ? peerPsn : data.consumeInt(),
                  data.consumeInt(),
                  data.consumeBoolean() ? peerQpn : data.consumeInt())
              .putLong(data.consumeBoolean() ? HELLO_MAGIC : data.consumeLong())
              .putInt(data.consumeBoolean() ? qp.qpn() : data.consumeInt())
              .putInt(data.consumeBoolean() ? 0 : data.consumeInt());
      default -> h.put(data.consumeBytes(32));
    }
    out.write(h.array(), 0, h.position());
    int psn = peerPsn;
    for (int k = data.consumeInt(0, 4); k > 0; k--) {
      ByteBuffer r = ByteBuffer.allocate(32);
      if (data.consumeBoolean()) {
        r.put(data.consumeBytes(32));
        out.write(r.array(), 0, r.position());
        continue;
      }
      byte op = data.consumeBoolean() ? data.pickValue(OPCODES) : data.consumeByte();
      int length = data.consumeBoolean() ? data.consumeInt(0, 300) : data.consumeInt();
      long address =
          data.consumeBoolean()
              ? region.address() + data.consumeLong(-64, PAGE + 64)
              : data.consumeLong();
      header(
              r,
              data.consumeBoolean() ? 1 : data.consumeByte(),
              op,
              (byte) (data.consumeBoolean() ? data.consumeInt(0, 1) : data.consumeByte()),
              data.consumeBoolean() ? 0 : data.consumeByte(),
              data.consumeBoolean() ? psn : data.consumeInt(),
              length,
              data.consumeInt())
          .putLong(address)
          .putInt(data.consumeBoolean() ? region.rkey() : data.consumeInt())
          .putInt(data.consumeBoolean() ? 0 : data.consumeInt());
      out.write(r.array(), 0, 32);
      psn = (psn + 1) & 0xFFFFFF;
      if (op >= 1 && op <= 4 && length > 0) {
        byte[] payload = data.consumeBytes(Math.min(length, 300));
        out.write(payload, 0, payload.length);
      }
    }
    byte[] rest = data.consumeRemainingAsBytes();
    out.write(rest, 0, rest.length);
    return out.toByteArray();
  }

  private static ByteBuffer header(
      ByteBuffer b,
      byte version,
      byte opcode,
      byte flags,
      byte reserved,
      int psn,
      int length,
      int imm) {
    return b.put(version)
        .put(opcode)
        .put(flags)
        .put(reserved)
        .putInt(psn)
        .putInt(length)
        .putInt(imm);
  }

  /** Writes the stream, ends our side, and reads until the responder closes (at most 10 s). */
  private static void exchange(InetSocketAddress responder, byte[] stream) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(responder, 5_000);
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      InputStream in = s.getInputStream();
      Thread writer =
          new Thread(
              () -> {
                try {
                  out.write(stream);
                  s.shutdownOutput();
                } catch (IOException e) {
                  // the responder dropped us mid-stream: allowed
                }
              },
              "fuzz-writer");
      writer.start();
      byte[] sink = new byte[4096];
      try {
        while (in.read(sink) >= 0) {
          // responses: ACK, NAK, READ data, HELLO_ACK/NAK
        }
      } catch (SocketTimeoutException e) {
        throw new AssertionError("the responder neither dropped nor finished within 10 s", e);
      } catch (IOException e) {
        // reset by the responder: a drop
      }
      try {
        writer.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      assertTrue(!writer.isAlive(), "writer stuck: the responder stopped reading without closing");
    }
  }

  private static InetSocketAddress responderOf(ConnectionInfo info) throws IOException {
    byte[] a = info.address();
    assertEquals(6, a.length, "soft address of an IPv4 responder");
    return new InetSocketAddress(
        InetAddress.getByAddress(new byte[] {a[0], a[1], a[2], a[3]}),
        ((a[4] & 0xFF) << 8) | (a[5] & 0xFF));
  }

  private static void drain() {
    WorkCompletion[] wc = new WorkCompletion[16];
    for (int i = 0; i < wc.length; i++) {
      wc[i] = new WorkCompletion();
    }
    while (cq.poll(wc) > 0) {
      // flushed receives
    }
  }

  private static void assertNoUncaught() {
    Throwable t = UNCAUGHT.poll();
    if (t != null) {
      throw new AssertionError("a responder thread died", t);
    }
  }
}
